"""All formats by name, a guess at a file's format from its first bytes and its name, and a reader run
that reports instead of crashing."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from importlib import import_module
from pathlib import Path

from formats.base import Format, Kind, ReadOptions, ReadResult
from formats.problems import Problem
from formats.text import data_parts, sniff_head

# Every format's name and the module that defines it (as its FORMAT, or among its FORMATS when one module
# holds closely related ones), in the order formats are offered. A module is imported when one of its
# formats is first asked for: an import or export that names its format loads that module alone (loading
# every module, and the numerical libraries some of them use, took a tenth of a second of each command).
_MODULE_OF = {
    "canonical": "canonical",
    "mhalo": "mhalo",
    "mhaldetect": "mhaldetect",
    "alignbench": "alignbench",
    "mhalubench": "mhalubench",
    "trihe": "trihe",
    "halloc": "halloc",
    "mmhal": "mmhal",
    "typed-tags": "typed_tags",
    "label-studio": "label_studio",
    "faithscore": "faithscore",
    "ragtruth": "ragtruth",
    "mhalo-outputs": "mhalo_outputs",
    "word-index": "word_index",
    "alignbench-scores": "alignbench_scores",
    "alignbench-localization": "alignbench_scores",
    "mhalubench-predictions": "mhalubench_predictions",
    "trihe-judgments": "trihe_judgments",
    "halloc-probs": "halloc_probs",
    "mmhal-ratings": "mmhal_ratings",
}


def module_formats(module_name: str) -> dict[str, Format]:
    """The formats the module ``formats.<module_name>`` defines, by name."""
    module = import_module(f"formats.{module_name}")
    return {fmt.name: fmt for fmt in getattr(module, "FORMATS", None) or (module.FORMAT,)}


class _Registry(Mapping[str, Format]):
    """Every format by name (see :data:`_MODULE_OF`), its module imported on first use."""

    def __init__(self) -> None:
        self._loaded: dict[str, Format] = {}

    def __getitem__(self, name: str) -> Format:
        if name not in self._loaded:
            module_name = _MODULE_OF[name]  # KeyError: no such format
            self._loaded.update(module_formats(module_name))
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULE_OF)

    def __len__(self) -> int:
        return len(_MODULE_OF)


FORMATS: Mapping[str, Format] = _Registry()


class UnknownFormat(LookupError):
    pass


def get_format(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise UnknownFormat(f"unknown format {name!r}; known: {', '.join(sorted(FORMATS))}") from None


def formats(kind: Kind | None = None, *, writable: bool | None = None) -> list[Format]:
    """Formats of one kind (all when None), optionally only those that can write, in registry order."""
    return [
        f
        for f in FORMATS.values()
        if (kind is None or f.kind == kind) and (writable is None or f.writable == writable)
    ]


def detect(data: bytes, filename: str = "", kind: Kind | None = None) -> list[tuple[Format, float]]:
    """Formats that recognise ``data``, most confident first (an empty list: none does).

    A format's own guess is nudged up when the file name ends with one of its extensions, so a CSV of
    AlignBench rows beats a format that merely finds nothing wrong in the first bytes. A JSON file is
    sniffed in :func:`~formats.text.sniff_view`, so a long first record hides no keys.
    """
    lower = filename.lower()
    scored = []
    seen = sniff_head(data, data_parts(data))
    for fmt in formats(kind):
        try:
            score = float(fmt.sniff(seen, filename))
        except Exception:  # noqa: BLE001 - a sniffer must never break detection for the others
            score = 0.0
        if score <= 0:
            continue
        if lower and any(lower.endswith(ext) for ext in fmt.extensions):
            score += 0.01
        scored.append((fmt, score))
    return sorted(scored, key=lambda pair: -pair[1])


def best_guess(data: bytes, filename: str = "", kind: Kind | None = None) -> Format | None:
    found = detect(data, filename, kind)
    return found[0][0] if found else None


def choose_format(data: bytes, source: str, format_name: str | None, kind: Kind) -> Format:
    """The named format, or the best guess for ``data``; raises UnknownFormat with a helpful message."""
    if format_name:
        fmt = get_format(format_name)
        if fmt.kind != kind:
            raise UnknownFormat(f"{fmt.name} is a {fmt.kind} format, not a {kind} format")
        return fmt
    guess = best_guess(data, source, kind)
    if guess is None:
        raise UnknownFormat(not_recognised(data, source, kind, choose="name it with --format"))
    return guess


def not_recognised(data: bytes, source: str, kind: Kind, *, choose: str) -> str:
    """What to say of a file no ``kind`` format recognises, on the command line and on the Import page
    alike (``choose``: how the format is named there): where it belongs instead (:func:`other_kind_hint`),
    or else what each format looked for. Without the list the page pre-picked the first format and showed
    its complaint ("canonical files are JSON Lines…"), which blamed the file for not being a format
    nobody had chosen."""
    said = f"the format of {source} was not recognised"
    hint = other_kind_hint(data, source, kind)
    if hint is not None:
        return f"{said}; {hint}"
    looked_for = "".join(f"\n  - {fmt.title}: {fmt.description}" for fmt in formats(kind))
    return f"{said}; {choose}. What each {kind} format looks for:{looked_for}"


# What to do with a file that is of the other kind, by that kind: the command and the Import page's
# choice that take it ({name}: the format it looks like).
_TAKEN_AS: dict[Kind, str] = {
    "predictions": "this looks like detector outputs (format {name!r}): import them as a detector run with "
    "import-predictions / the 'Detector outputs' import",
    "benchmark": "this looks like a benchmark (format {name!r}): import it as a dataset with import / the "
    "'Benchmark file' import",
}


# How sure a format of the other kind must be of a file to send it there: a loose guess (any JSON with
# "start", "end" and "spans" may be word-index outputs) would send a broken file of this kind the wrong way.
OTHER_KIND_SURE = 0.6


def other_kind_hint(data: bytes, source: str, kind: Kind) -> str | None:
    """What to do instead when no ``kind`` format recognises ``data`` but one of the other kind is sure
    of it, or None: detector outputs sent to a benchmark import (or the reverse) are the likely
    mistake, and "not recognised" alone sent people looking for a format that does not exist."""
    other: Kind = "predictions" if kind == "benchmark" else "benchmark"
    found = next((f for f, score in detect(data, source, other) if score >= OTHER_KIND_SURE), None)
    return None if found is None else _TAKEN_AS[other].format(name=found.name)


def read_file(
    fmt: Format, data: bytes, source: str, options: ReadOptions, *, batches: bool = False
) -> ReadResult:
    """``fmt.read`` that turns an unexpected reader failure into a reported problem, never a crash.

    When the file cannot be read as ``fmt`` at all and another format of the same kind recognises it,
    the first error says which, so a wrongly chosen format is one message, not a page of them.
    ``batches``: the file may come in batches (``ReadResult.more``), as an import takes them.
    """
    read = fmt.read_batches if batches else fmt.read
    result = _reported(fmt, source, lambda: read(data, source=source, options=options))
    assert result is not None
    return _with_hint(result, fmt, data, source)


def read_file_from_disk(
    fmt: Format, path: Path, head: bytes, source: str, options: ReadOptions, *, seen: bytes | None = None
) -> ReadResult | None:
    """:func:`read_file` (in batches) of a file on disk whose bytes the format reads as it goes
    (``head``: the file's first bytes, enough to sniff it; ``seen``: what the format was recognised
    from, when more than ``head``, which the hint of a file the format cannot read looks at too); None
    when the format reads bytes, so the caller reads the file."""
    result = _reported(fmt, source, lambda: fmt.read_file_batches(path, head, source=source, options=options))
    return None if result is None else _with_hint(result, fmt, head if seen is None else seen, source)


def _reported(fmt: Format, source: str, read: Callable[[], ReadResult | None]) -> ReadResult | None:
    try:
        return read()
    except Exception as error:  # noqa: BLE001 - a reader bug must still end as a clear report
        return ReadResult(
            None, [Problem(source, "-", "-", f"internal error while reading as {fmt.name}: {error!r}")]
        )


def _with_hint(result: ReadResult, fmt: Format, data: bytes, source: str) -> ReadResult:
    """``result`` with its first error saying which format the unreadable file looks like: another of
    the same kind, or, when ``fmt`` does not recognise it at all, one of the other kind
    (:func:`other_kind_hint`)."""
    if result.bundle is None and result.errors:
        found = [f for f, _ in detect(data, source, fmt.kind)]
        other = next((f for f in found if f is not fmt), None)
        hint = None
        if other is not None:
            hint = f"it looks like {other.title}: choose the format {other.name!r}"
        elif fmt not in found:
            hint = other_kind_hint(data, source, fmt.kind)
        if hint is not None:
            first = result.errors[0]
            result.problems[result.problems.index(first)] = replace(first, reason=f"{first.reason}; {hint}")
    return result
