"""A CSV file read in batches makes its captions from whole columns, and checks a caption row by row only
where a whole-column check finds a cell that may be bad: these tests hold the batches to what a plain
row-by-row reading gives, on rows of every kind (sound, unsorted, a sentence given twice, a bad label,
a blank caption, a number cell that does not convert, error words found or not), cut into small blocks
and batches."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import formats.alignbench as alignbench
from formats.base import ReadOptions, ReadResult
from formats.records import (
    Annotations,
    Bundle,
    ItemRecord,
    SentenceLabelRecord,
    SentenceRecord,
    SpanRecord,
)

SENTENCES = ("The dog sits.", "A red car, a blue sky.", "Café 🙂 naïve dog.", "Two\nlines here.", "x")
WORDS = (None, '["dog"]', '["DOG", "cat"]', "['sky']", "red car", "[bad", '["red, sky"]', "[]")
NUMBERS = ("0", "3", "", " 2", "2.0", "x", "-1")
RATIOS = ("0.5", "", "nan", "1e-3", "abc")


@st.composite
def caption_rows(draw: st.DrawFn, image: int) -> list[dict[str, str]]:
    """The rows of one caption, sound unless the draw makes one bad."""
    n = draw(st.integers(1, 6))
    order = draw(st.permutations(range(n))) if draw(st.integers(0, 4)) == 0 else list(range(n))
    if n > 1 and draw(st.integers(0, 9)) == 0:
        order[-1] = order[0]  # a sentence given twice
    bad = draw(st.integers(0, 3)) == 0
    rows = []
    for index in order:

        def cell(sound: str, hostile: tuple[str, ...]) -> str:
            return draw(st.sampled_from(hostile)) if bad and draw(st.booleans()) else sound

        rows.append(
            {
                "model": draw(st.sampled_from(("m", "gpt"))),
                "image_name": f"img{image}.jpg",
                "image_type": draw(st.sampled_from(("street", ""))),
                "sentence_index": str(index),
                "caption": cell(draw(st.sampled_from(SENTENCES)), ("", " ", "\u2003")),
                "annotation": cell(draw(st.sampled_from(alignbench.LABELS)), ("", "maybe", "Correct")),
                "error_type": draw(st.sampled_from(("", "Object", " "))),
                "error_words": draw(st.sampled_from(WORDS)) or "",
                "agreement_ratio": cell(draw(st.sampled_from(("0.5", "1", ""))), RATIOS),
                "n_correct": cell(draw(st.sampled_from(("0", "1", ""))), NUMBERS),
                "image_url": draw(st.sampled_from(("https://example.org/i.jpg", ""))),
            }
        )
    model = rows[0]["model"]
    return [{**row, "model": model} for row in rows]


def _csv(rows: list[dict[str, str]]) -> bytes:
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def _everything(read: ReadResult) -> tuple[list[ItemRecord], list[Annotations], list[Any]]:
    bundles: list[Bundle] = [read.bundle] if read.bundle is not None else []
    bundles += list(read.more or ())
    items = [item for bundle in bundles for item in bundle.items]
    annotations = [a for bundle in bundles for a in bundle.label_sets[0].annotations]
    return items, annotations, [repr(problem) for problem in read.problems]


def reference(rows: list[dict[str, str]]) -> tuple[list[ItemRecord], list[Annotations]]:
    """The captions of sound rows, each sentence read on its own, as the reader did before it read
    columns."""
    items: list[ItemRecord] = []
    annotations: list[Annotations] = []
    captions: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        captions.setdefault(f"{row['model']}/{row['image_name']}", []).append(row)
    for ext, members in captions.items():
        members.sort(key=lambda row: int(row["sentence_index"]))
        sentences, labels, spans, at = [], [], [], 0
        for k, row in enumerate(members):
            caption = row["caption"]
            meta: dict[str, Any] = {}
            if row["error_words"]:
                meta["error_words"] = row["error_words"]
            if row["agreement_ratio"]:
                meta["agreement_ratio"] = float(row["agreement_ratio"])
            if row["n_correct"]:
                meta["n_correct"] = int(float(row["n_correct"]))
            error_type = row["error_type"] or None
            sentences.append(SentenceRecord(at, at + len(caption)))
            labels.append(SentenceLabelRecord(k, row["annotation"], error_type, False, meta))
            if row["error_words"]:
                found, _ = alignbench.error_spans(row["error_words"], caption)
                spans += [SpanRecord(at + s, at + e, error_type) for s, e in found]
            at += len(caption) + 1
        first = members[0]
        item_meta: dict[str, Any] = {c: first[c] for c in ("image_type", "image_url") if first[c]}
        item_meta["sentence_index"] = [int(row["sentence_index"]) for row in members]
        items.append(
            ItemRecord(
                external_id=ext,
                response=" ".join(row["caption"] for row in members),
                subset=first["image_type"] or None,
                source_model=first["model"],
                image_ref=first["image_name"],
                meta=item_meta,
                sentences=sentences,
            )
        )
        annotations.append(Annotations(item=ext, spans=spans, sentence_labels=labels))
    return items, annotations


@settings(max_examples=80, deadline=None)
@given(
    captions=st.lists(st.integers(0, 10**6), min_size=1, max_size=12, unique=True).flatmap(
        lambda images: st.tuples(*(caption_rows(image) for image in images))
    ),
    block=st.sampled_from((64, 200, 1 << 19)),
    batch_rows=st.sampled_from((1, 4, 5000)),
)
def test_batches_read_what_rows_read_one_by_one(
    captions: tuple[list[dict[str, str]], ...], block: int, batch_rows: int
) -> None:
    rows = [row for caption in captions for row in caption]
    data = _csv(rows)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(alignbench, "BLOCK_BYTES", block)
        patch.setattr(alignbench, "BATCH_ROWS", batch_rows)
        batched = alignbench.FORMAT.read_batches(data, source="rows.csv", options=ReadOptions())
    whole = alignbench.FORMAT.read(data, source="rows.csv", options=ReadOptions())
    items, annotations, problems = _everything(batched)
    assert (items, annotations, problems) == _everything(whole)
    if not whole.errors:  # every caption sound: the records are those of a plain reading
        assert (items, annotations) == reference(rows)
