"""JSON and JSON-lines documents: parsing untrusted bytes with every syntax error reported (line and
column), and writing them back as UTF-8."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from formats.fields import type_name
from formats.problems import Problem
from formats.text import decode_text, looks_like_json

# Builds a JSON object from its ``(key, value)`` pairs in file order (``json.loads``'s
# ``object_pairs_hook``): for a format that must see a key the object repeats, which a dict would drop.
PairsHook = Callable[[list[tuple[str, Any]]], Any]


def decoder(text: str, pairs_hook: PairsHook | None = None) -> json.JSONDecoder:
    """A JSON decoder for ``text`` that reports a whole number too long for Python to read (more digits
    than ``sys.get_int_max_str_digits()``) as a syntax error at its place, as it does any other flaw of
    the file, rather than failing with a ValueError no caller expects."""
    limit = sys.get_int_max_str_digits()

    def whole_number(digits: str) -> int:
        length = len(digits.lstrip("-"))
        if limit and length > limit:
            raise json.JSONDecodeError(
                f"a whole number of {length:,} digits (at most {limit:,} can be read)",
                text,
                max(text.find(digits), 0),
            )
        return int(digits)

    return json.JSONDecoder(object_pairs_hook=pairs_hook, parse_int=whole_number)


def loads(data: str | bytes, pairs_hook: PairsHook | None = None) -> Any:
    """``json.loads`` of untrusted text: every flaw, an overlong number too, is a ``JSONDecodeError``.

    The plain ``json.loads`` reads it first: the :func:`decoder` that places an overlong number calls
    back into Python for every whole number, which made reading a file of offsets half as slow again.
    Only text that ``json.loads`` refuses with a ValueError of its own is read again by it, to say where.
    """
    try:
        return json.loads(data, object_pairs_hook=pairs_hook)
    except json.JSONDecodeError:
        raise
    except ValueError:  # a whole number longer than Python reads
        pass
    text = data if isinstance(data, str) else data.decode(json.detect_encoding(data), "surrogatepass")
    return decoder(text, pairs_hook).decode(text)


def load_json(data: bytes, source: str, pairs_hook: PairsHook | None = None) -> tuple[Any, list[Problem]]:
    """The parsed JSON document, or None and a problem with line and column of the syntax error."""
    text, problems = decode_text(data, source)
    if text is None:
        return None, problems
    try:
        document = loads(text, pairs_hook)
    except json.JSONDecodeError as error:
        return None, [
            Problem(
                source,
                "-",
                "-",
                f"not valid JSON: {_said(error)} at line {error.lineno} column {error.colno}",
            )
        ]
    except RecursionError:
        return None, [Problem(source, "-", "-", "not readable JSON: nested too deeply")]
    if document is None:
        return None, [Problem(source, "-", "-", "the file holds only JSON null, no records")]
    return document, []


def load_document(data: bytes, source: str, kind: type, expected: str) -> tuple[Any, list[Problem]]:
    """The parsed JSON document when it is a ``kind`` (dict or list), else None and a problem saying what
    was ``expected``: the formats whose file is one document of a fixed shape reject any other alike."""
    document, problems = load_json(data, source)
    if document is None:
        return None, problems
    if not isinstance(document, kind):
        problems.append(Problem(source, "-", "-", f"expected {expected}, got {type_name(document)}"))
        return None, problems
    return document, problems


def iter_jsonl(
    text: str, source: str, problems: list[Problem], pairs_hook: PairsHook | None = None
) -> Iterator[tuple[int, Any]]:
    """``(line index, value)`` of each non-blank line; a line that is not JSON becomes a problem."""
    for index, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        try:
            yield index, loads(line, pairs_hook)
        except json.JSONDecodeError as error:
            problems.append(
                Problem(
                    source,
                    f"line {index + 1}",
                    "-",
                    f"not valid JSON: {_said(error)} at column {error.colno}",
                )
            )
        except RecursionError:
            problems.append(Problem(source, f"line {index + 1}", "-", "not readable JSON: nested too deeply"))


def load_records(
    data: bytes, source: str, pairs_hook: PairsHook | None = None
) -> tuple[list[tuple[int, Any]] | None, list[Problem]]:
    """``(index, record)`` pairs of a JSON array or a JSON-lines file (index = position or line number - 1)."""
    opener = looks_like_json(data)
    if opener == "[":
        document, problems = load_json(data, source, pairs_hook)
        if document is None:
            return None, problems
        return list(enumerate(document)), problems
    text, problems = decode_text(data, source)
    if text is None:
        return None, problems
    if opener is None:
        return None, [Problem(source, "-", "-", "not JSON: expected a JSON list or one JSON object per line")]
    records = list(iter_jsonl(text, source, problems, pairs_hook))
    if problems:
        # Perhaps one pretty-printed object rather than JSON lines.
        try:
            whole = loads(text, pairs_hook)
        except (json.JSONDecodeError, RecursionError):
            return records, problems
        return [(0, whole)], []
    return records, problems


def dump_json(value: Any, *, indent: int | None = 2) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=indent) + "\n").encode("utf-8")


def dump_jsonl(rows: Sequence[Any]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def _said(error: json.JSONDecodeError) -> str:
    """The parser's message without its own trailing "at" ("Unterminated string starting at"), which the
    place given after it would double."""
    return error.msg.removesuffix(" at")
