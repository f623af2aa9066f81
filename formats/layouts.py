"""An item's source layout belongs to the format it was read from.

A benchmark reader keeps the record's own field names and order in ``meta["layout"]`` (MHALO's
``test_solution``, M-HalDetect's ``annotations`` …), so that a writer of the same format gives the file
back as it came. A writer of another format must not follow it: it would write the first format's
field names, with nothing in them (a MHALO dataset as typed tags read ``"test_solution": null``, and a
M-HalDetect dataset as MHALO was ``[{"id": …}]``). Writers then use their own default layout.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

from formats.base import Format
from formats.records import Bundle

LAYOUT = "layout"


def own_layouts(fmt: Format, batches: Iterable[Bundle]) -> Iterator[Bundle]:
    """``batches`` as ``fmt`` should write them: the items' layouts only when the dataset was read from
    ``fmt`` itself (or ``fmt`` keeps everything, as the canonical JSONL does)."""
    for batch in batches:
        if (
            fmt.lossless
            or batch.dataset.source_format == fmt.name
            or not any(LAYOUT in i.meta for i in batch.items)
        ):
            yield batch
            continue
        items = [
            dataclasses.replace(item, meta={k: v for k, v in item.meta.items() if k != LAYOUT})
            if LAYOUT in item.meta
            else item
            for item in batch.items
        ]
        yield dataclasses.replace(batch, items=items)
