"""What is wrong with an input, said precisely enough to fix it: file, record, field, reason.

Readers and the importer collect :class:`Problem` objects instead of raising at the first flaw, so a user
sees every bad record of a file at once. ``error`` problems reject their record (and, unless the user
allowed skipping, the whole file); ``warning`` problems are imported but worth knowing (a missing image).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    file: str
    record: str  # "#12" (0-based index), optionally "#12 (id=mhal_340)"
    field: str
    reason: str
    severity: str = "error"  # "error" or "warning"

    def __str__(self) -> str:
        # "-" names no record or field: a problem of the whole file ("record -: field '-'" read as a
        # record named "-"), or of a whole record.
        where = "" if self.record == "-" else f"record {self.record}: "
        if self.field != "-":
            where += f"field '{self.field}': "
        return f"{self.file}: {where}{self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def whole_file_first(problems: Iterable[Problem]) -> list[Problem]:
    """The problems in the order a report lists them: those of a whole file (no record named) first, its
    errors before its warnings, then the others as found. A file refused whole (not this format, a run
    over another dataset) says why at the top of its report, above the records' lines that follow from
    it or matter less, instead of after them (at the end of a long list, past where a reader stops)."""
    return sorted(problems, key=lambda p: 2 if p.record != "-" else 0 if p.severity == "error" else 1)


def outside(start: object, end: object, what: str, length: int) -> str:
    """The reason offsets are refused: named apart, as "-5-3" read like a range from 5 to 3."""
    return f"offsets (start {start}, end {end}) are not a span of {what}, which is {length} characters long"


def quoted(text: str) -> str:
    """``text`` between quotes, for a message that names a value from a file, a link or a person.

    Quoted as ``repr`` quotes (single quotes; double quotes when the text holds a single quote and no
    double quote), but a backslash or a quote inside stays as it is: ``repr`` doubles the backslash of a
    dataset named with one, which then reads as a name nobody wrote. A character that would not show as
    itself (a line break, a tab, a control or invisible character: not ``str.isprintable``) is written
    as its escape, as ``repr`` writes it, so two names that differ only there still read apart."""
    quote = '"' if "'" in text and '"' not in text else "'"
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return f"{quote}{shown}{quote}"


def shown_id(record_id: object) -> str:
    """A record id as the record column shows it: as written, unless it holds a character that would
    not show as itself (a line break, a tab, a control character), then quoted with those escaped, as
    the reason column quotes it, so "t2\n" reads 't2\n' instead of breaking the line."""
    text = str(record_id)
    return text if text.isprintable() else repr(text)


def record_label(index: int, record_id: str | None = None) -> str:
    """How a record is named in messages: its 0-based index, and its id when it has one."""
    return f"#{index}" if record_id is None else f"#{index} (id={shown_id(record_id)})"


class ImportRejected(Exception):
    """Nothing was written: the input has errors and skipping bad records was not allowed."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        errors = [p for p in whole_file_first(problems) if p.severity == "error"]
        shown = "\n".join(f"  - {p}" for p in errors[:20])
        more = f"\n  … and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"{len(errors)} error(s); nothing was imported:\n{shown}{more}")
