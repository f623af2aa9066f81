"""Reading detector output written as inline tags, and moving spans from characters to tokens.

MHALO asks detectors to copy the response and wrap each hallucinated part in ``<hallucination>`` tags,
inside a ``<Tagged_Text>`` block (appendix D, "Vanilla" and "Analyze-then-Judge" templates). A detector
follows the format (its "IF" in MHALO Table 3) when removing the tags gives back the response it was
shown; MHALO scores items that fail this 0 (section 4.1).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from functools import lru_cache

from metrics._validation import Span, as_span_list

WRAPPER_OPEN = "<Tagged_Text>"
WRAPPER_CLOSE = "</Tagged_Text>"

# Python's ``\S`` is exactly ``not str.isspace()`` for str patterns, so tokens match the contract.
_TOKEN = re.compile(r"\S+")


@lru_cache(maxsize=64)
def _marker_pattern(tag: str) -> re.Pattern[str]:
    return re.compile(f"{re.escape(f'<{tag}>')}|{re.escape(f'</{tag}>')}")


def parse_tagged(output: str, tag: str = "hallucination") -> tuple[str, list[Span]]:
    """Split a tagged detector output into plain text and the character spans the tags enclosed.

    If ``output`` contains ``<Tagged_Text>``, only the part between the first ``<Tagged_Text>`` and the
    next ``</Tagged_Text>`` is read, stripped of leading and trailing whitespace *before* the markers are
    removed (so a marker's position never shifts the strip). Without the wrapper nothing is stripped.
    Every ``<tag>`` / ``</tag>`` marker is removed; spans are half-open character offsets into the
    returned text, in order of appearance. Empty pairs (``<tag></tag>``) enclose nothing and are dropped.

    Raises ``ValueError`` for nested markers, an unclosed marker, a closing marker without an opening
    one, and a ``<Tagged_Text>`` that is never closed. Follows MHALO appendix D (output format).

    >>> parse_tagged("<h>A toothbrush</h> is being washed.", tag="h")
    ('A toothbrush is being washed.', [(0, 12)])
    """
    if not isinstance(output, str):
        raise ValueError(f"output must be a string, got {type(output).__name__}")
    if not isinstance(tag, str):
        raise ValueError(f"tag must be a string, got {type(tag).__name__}")
    body = output
    wrapper_at = output.find(WRAPPER_OPEN)
    if wrapper_at != -1:
        inner_start = wrapper_at + len(WRAPPER_OPEN)
        inner_end = output.find(WRAPPER_CLOSE, inner_start)
        if inner_end == -1:
            raise ValueError(f"{WRAPPER_OPEN} is opened but never closed")
        body = output[inner_start:inner_end].strip()

    opening = f"<{tag}>"
    pieces: list[str] = []
    spans: list[Span] = []
    consumed = 0  # position in body up to which text has been copied
    plain_len = 0  # length of the plain text produced so far
    open_at: int | None = None
    for marker in _marker_pattern(tag).finditer(body):
        chunk = body[consumed : marker.start()]
        pieces.append(chunk)
        plain_len += len(chunk)
        consumed = marker.end()
        if marker.group() == opening:
            if open_at is not None:
                raise ValueError(f"nested {opening} at character {marker.start()}")
            open_at = plain_len
        else:
            if open_at is None:
                raise ValueError(f"closing </{tag}> without an opening one at character {marker.start()}")
            if plain_len > open_at:
                spans.append((open_at, plain_len))
            open_at = None
    if open_at is not None:
        raise ValueError(f"{opening} is never closed")
    pieces.append(body[consumed:])
    return "".join(pieces), spans


def _norm(text: str) -> str:
    return " ".join(text.split())


def follows_format(output: str, original: str, tag: str = "hallucination") -> bool:
    """Whether a detector output is a well-formed tagging of ``original`` (MHALO's IF, section 4.1).

    True when :func:`parse_tagged` succeeds and the plain text equals ``original`` up to whitespace:
    ``norm(text) == norm(original)`` with ``norm(s) = " ".join(s.split())``. A non-string output (a
    missing answer) does not follow the format. The IF rate of a detector is the mean over items.
    """
    if not isinstance(original, str):
        raise ValueError(f"original must be a string, got {type(original).__name__}")
    if not isinstance(output, str):
        return False
    try:
        text, _ = parse_tagged(output, tag)
    except ValueError:
        return False
    return _norm(text) == _norm(original)


def token_offsets(text: str) -> list[Span]:
    """Character ranges ``(start, end)`` of the tokens of ``text``, in order: the one tokenizer.

    A token is a maximal run of non-whitespace characters, as MHALO counts them (section 2.3).

    >>> token_offsets("A  toothbrush")
    [(0, 1), (3, 13)]
    """
    return [(match.start(), match.end()) for match in _TOKEN.finditer(text)]


def token_spans(text: str, char_spans: Sequence[Span]) -> list[Span]:
    """Map character spans of ``text`` to token spans; MHALO scores spans in tokens (section 2.3).

    Tokens are the maximal runs of non-whitespace characters (``not str.isspace()``), numbered from 0.
    A character span becomes ``[first token it overlaps, last token it overlaps + 1)``; a span that
    overlaps no token (only whitespace, or past the end) is dropped. Output order follows the input.

    >>> token_spans("A toothbrush is being washed", [(2, 12), (22, 28)])
    [(1, 2), (4, 5)]
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    spans = as_span_list(char_spans, "char_spans")
    return TokenBounds(text).token_spans(spans)


class TokenBounds:
    """The tokens of one text, found once, to map the spans of many label sets on it.

    :func:`token_spans` tokenizes the text on every call; a dataset view maps a dozen label sets' spans
    on every response, so it keeps one of these per response instead.
    """

    __slots__ = ("starts", "ends")

    def __init__(self, text: str) -> None:
        tokens = token_offsets(text)
        self.starts = [start for start, _ in tokens]
        self.ends = [end for _, end in tokens]

    def token_spans(self, spans: Sequence[Span]) -> list[Span]:
        """:func:`token_spans` of already validated ``(start, end)`` character spans on this text."""
        return _token_spans(self.starts, self.ends, spans)


def _token_spans(token_starts: list[int], token_ends: list[int], spans: Sequence[Span]) -> list[Span]:
    result: list[Span] = []
    for start, end in spans:
        first = bisect_right(token_ends, start)  # first token ending after the span starts
        last = bisect_left(token_starts, end) - 1  # last token starting before the span ends
        if first <= last:
            result.append((first, last + 1))
    return result
