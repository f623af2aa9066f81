"""The default sentence splitter, used when an imported item brings no sentence rows of its own.

AlignBench labels captions sentence by sentence; most other benchmarks give only the response. A split
must be deterministic and keep offsets into the exact stored text, so this is a small rule-based
splitter rather than a language model: a sentence ends at ``.``, ``!``, ``?`` or ``。`` (plus closing
quotes/brackets) followed by whitespace, or at a blank line, except after common abbreviations.
Leading and trailing whitespace is never part of a sentence.
"""

from __future__ import annotations

import re

_ABBREVIATIONS = frozenset(
    {"e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "ms.", "dr.", "st.", "no.", "fig.", "approx.", "u.s."}
)
# An end mark (with closing quotes/brackets) followed by whitespace, or a run of 2+ newlines.
_BOUNDARY = re.compile(r"(?<=[.!?。！？])[\"'”’)\]]*(?=\s)|\n\s*\n")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Return ``(start, end)`` code-point offsets of each sentence of ``text``, in order.

    >>> t = "A red cube. Two balls!  The sign says 3.5 m."
    >>> [t[s:e] for s, e in split_sentences(t)]
    ['A red cube.', 'Two balls!', 'The sign says 3.5 m.']
    """
    cuts: list[int] = []
    for match in _BOUNDARY.finditer(text):
        cut = match.end() if match.group(0).strip() or not match.group(0) else match.start()
        word_start = text.rfind(" ", 0, cut) + 1
        if text[word_start:cut].lower().rstrip("\"'”’)]") in _ABBREVIATIONS:
            continue
        cuts.append(cut)
    sentences: list[tuple[int, int]] = []
    start = 0
    for cut in [*cuts, len(text)]:
        piece = text[start:cut]
        stripped_left = len(piece) - len(piece.lstrip())
        stripped_right = len(piece) - len(piece.rstrip())
        s, e = start + stripped_left, cut - stripped_right
        if e > s:
            sentences.append((s, e))
        start = cut
    return sentences
