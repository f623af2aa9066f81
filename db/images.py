"""Finding an item's image on disk, safely.

Benchmarks reference images by relative names (``COCO_val2014_….jpg``, ``geoqa_plus/10129.png``); the
files live under a per-dataset image root. A reference must never escape that root (``../../etc``).
"""

from __future__ import annotations

from pathlib import Path


def resolve_image(image_root: str | None, image_ref: str | None) -> Path | None:
    """The existing image file for ``image_ref`` under ``image_root``, or None.

    None when either is missing, when the reference points outside the root, or when no file is there.
    """
    if not image_root or not image_ref:
        return None
    root = Path(image_root).expanduser().resolve()
    candidate = (root / image_ref).resolve()
    if not candidate.is_relative_to(root) or not candidate.is_file():
        return None
    return candidate
