"""An item's source layout belongs to the format it was read from.

A benchmark reader keeps the record's own field names and order in ``meta["layout"]`` (MHALO's
``test_solution``, M-HalDetect's ``annotations`` …), so that a writer of the same format gives the file
back as it came. A writer of another format must not follow it: it would write the first format's
field names, with nothing in them (a MHALO dataset as typed tags read ``"test_solution": null``, and a
M-HalDetect dataset as MHALO was ``[{"id": …}]``). Writers then use their own default layout.

The import marks each item's layout with the format it was read as (:func:`with_format`): one dataset
may hold items of files of several formats. A layout stored before that mark is taken to be of the
dataset's own source format.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from formats.base import Format
from formats.records import Bundle, ItemRecord

LAYOUT = "layout"
FORMAT = "format"


def with_format(meta: Mapping[str, Any], source_format: str | None) -> Mapping[str, Any]:
    """``meta`` with its layout marked as ``source_format``'s (as it is when there is none to mark)."""
    layout = meta.get(LAYOUT)
    if not source_format or not isinstance(layout, dict) or FORMAT in layout:
        return meta
    return {**meta, LAYOUT: {**layout, FORMAT: source_format}}


def _layout_format(item: ItemRecord, dataset_format: str) -> Any:
    layout = item.meta.get(LAYOUT)
    return layout.get(FORMAT, dataset_format) if isinstance(layout, dict) else dataset_format


def own_layouts(fmt: Format, batches: Iterable[Bundle]) -> Iterator[Bundle]:
    """``batches`` as ``fmt`` should write them: each item's layout only when the item was read from
    ``fmt`` itself (or ``fmt`` keeps everything, as the canonical JSONL does)."""
    for batch in batches:
        foreign = (
            []
            if fmt.lossless
            else [
                k
                for k, item in enumerate(batch.items)
                if LAYOUT in item.meta and _layout_format(item, batch.dataset.source_format) != fmt.name
            ]
        )
        if not foreign:
            yield batch
            continue
        items = list(batch.items)
        for k in foreign:
            items[k] = dataclasses.replace(
                items[k], meta={x: v for x, v in items[k].meta.items() if x != LAYOUT}
            )
        yield dataclasses.replace(batch, items=items)
