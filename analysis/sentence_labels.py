"""The label a sentence shows: given by a person or a file, or implied by complete spans.

MHALO-style gold marks hallucinated spans and nothing else; a response without any tag has no
hallucination. Once a label set's spans on an item are complete (see
``db.repositories.annotations.ItemAnnotations.spans_complete``), a sentence it gave no label is
"incorrect" when one of its spans overlaps the sentence and "correct" otherwise — never "not labelled".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def shown_sentence_labels(
    sentences: Sequence[tuple[int, int]],
    given: Mapping[int, str],
    spans: Sequence[tuple[int, int]],
    spans_complete: bool,
) -> list[str | None]:
    """One label per sentence (``(start, end)`` offsets, in order): ``given[index]`` where the label
    set gave one; else, with ``spans_complete``, implied by the ``spans`` that overlap the sentence;
    else ``None`` (not labelled). A label set that labels sentences itself is taken at its word: its
    unlabelled sentences stay unlabelled."""
    if given or not spans_complete:
        return [given.get(index) for index in range(len(sentences))]
    return [
        "incorrect" if any(s < end and e > start for s, e in spans) else "correct" for start, end in sentences
    ]
