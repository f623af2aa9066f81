"""The bundles readers hand back (a benchmark's gold label set, a detector run), and what a writer
takes out of a bundle: the label set it writes and the detector's raw output."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from formats.base import ReadOptions
from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, pick_label_set
from formats.text import file_stem


def annotations_by_item(bundle: Bundle, kind: str = "gold") -> dict[str, Annotations]:
    """The annotations a single-label-set writer exports (see :func:`pick_label_set`), by item id."""
    label_set = pick_label_set(bundle, kind)
    return {a.item: a for a in label_set.annotations} if label_set else {}


def spans_by_item(bundle: Bundle, kind: str = "gold") -> dict[str, list[tuple[int, int]]]:
    return {ext: [(s.start, s.end) for s in a.spans] for ext, a in annotations_by_item(bundle, kind).items()}


def gold_bundle(
    options: ReadOptions,
    source: str,
    source_format: str,
    items: list[ItemRecord],
    annotations: list[Annotations],
    label_kinds: list[str],
    taxonomy: Sequence[str] = (),
) -> Bundle:
    """What a benchmark reader returns: its items and one gold label set, in a dataset named by the user
    or else after the file (as every benchmark format names it)."""
    return Bundle(
        dataset=DatasetRecord(
            name=options.dataset or file_stem(source),
            source_format=source_format,
            taxonomy=list(taxonomy),
            label_kinds=label_kinds,
        ),
        items=items,
        label_sets=[LabelSetRecord(kind="gold", name="gold", annotations=annotations)],
    )


def detector_bundle(options: ReadOptions, annotations: list[Annotations], source_format: str) -> Bundle:
    """What a predictions reader returns: no items, one detector label set named by the user."""
    return Bundle(
        dataset=DatasetRecord(name=options.dataset or "", source_format=source_format),
        label_sets=[
            LabelSetRecord(
                kind="detector",
                name=options.detector or "detector",
                detector_version=options.detector_version,
                prompt_strategy=options.prompt_strategy,
                annotations=annotations,
            )
        ],
    )


def detector_outputs(bundle: Bundle) -> Iterator[tuple[ItemRecord, Annotations]]:
    """Each item with the exported detector label set's annotations of it, in item order: what every
    predictions writer writes a row for (items the detector has no output for are left out)."""
    by_item = annotations_by_item(bundle, "detector")
    for item in bundle.items:
        annotations = by_item.get(item.external_id)
        if annotations is not None:
            yield item, annotations


def raw_output_json(annotations: Annotations | None, default: Any = None) -> Any:
    """The detector's raw output parsed as JSON, else ``default`` (no raw output, or not JSON).

    Predictions readers keep a JSON output verbatim as the raw output, so writers give it back from here
    and an export repeats exactly what was imported.
    """
    if annotations is None or annotations.raw_output is None:
        return default
    try:
        return json.loads(annotations.raw_output.text)
    except json.JSONDecodeError:
        return default
