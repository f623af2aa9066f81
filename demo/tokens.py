"""Whitespace tokens, the unit in which the demo's detector behaviours are defined.

Same convention as the metrics contract: a token is a maximal run of non-whitespace characters, and a
character span covers every token it overlaps. Defining boundary errors in tokens (not characters)
keeps the documented IoU bands true whatever the word lengths are.
"""

from __future__ import annotations

from metrics.tagged_text import token_offsets

Range = tuple[int, int]


def tokenize(text: str) -> list[Range]:
    """Character ranges of the whitespace tokens of ``text``, in order (the metrics' tokenizer)."""
    return token_offsets(text)


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
