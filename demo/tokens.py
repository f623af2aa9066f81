"""Whitespace tokens, the unit in which the demo's detector behaviours are defined.

Same convention as the metrics contract: a token is a maximal run of non-whitespace characters, and a
character span covers every token it overlaps. Defining boundary errors in tokens (not characters)
keeps the documented IoU bands true whatever the word lengths are.
"""

from __future__ import annotations

import re

Range = tuple[int, int]

_TOKEN = re.compile(r"\S+")


def tokenize(text: str) -> list[Range]:
    """Character ranges of the whitespace tokens of ``text``, in order."""
    return [(m.start(), m.end()) for m in _TOKEN.finditer(text)]


def token_interval(tokens: list[Range], span: Range) -> Range:
    """``[first, last + 1)`` of the tokens a character span overlaps."""
    hit = [k for k, (s, e) in enumerate(tokens) if s < span[1] and span[0] < e]
    if not hit:
        raise ValueError(f"span {span} overlaps no token")
    return hit[0], hit[-1] + 1


def char_range(tokens: list[Range], interval: Range) -> Range:
    """The characters from the first to the last token of a token interval."""
    return tokens[interval[0]][0], tokens[interval[1] - 1][1]


def overlaps(a: Range, b: Range) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def iou(a: Range, b: Range) -> float:
    inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    return inter / ((a[1] - a[0]) + (b[1] - b[0]) - inter)
