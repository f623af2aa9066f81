"""Where a number came from: dataset, label sets, item count and a short hash of the exact inputs.

Every table and figure carries this as a footer, so a figure pasted into slides can be traced back and
recomputed: the same store content and filters give the same digest, any changed label changes it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

DIGEST_LENGTH = 12
PRODUCT = "Spanlight"  # named in every footer, so a pasted figure says where it was made


@dataclass(frozen=True)
class Provenance:
    dataset: str
    label_sets: tuple[str, ...]
    n_items: int
    digest: str
    filters: str = ""
    # One line per detector label set made by a live run: model, strategy and prompt hash, settings.
    runs: tuple[str, ...] = ()
    # ``(detector, note)`` for each detector that judges items of its own model family (AlignBench Fig. 8).
    judge_bias: tuple[tuple[str, str], ...] = ()
    # ``(detector, "148 of 149 items")`` for each run scored on only some of the items counted above
    # (given only some, or stopped half way): a figure comparing it with complete runs names it so.
    partial: tuple[tuple[str, str], ...] = ()

    @property
    def biased(self) -> frozenset[str]:
        """The detectors marked for judge bias."""
        return frozenset(name for name, _ in self.judge_bias)

    def run_name(self, name: str) -> str:
        """A detector's name as a figure draws it: with what it was scored on when that is only some of
        the items, so a run missing outputs does not pass for the complete run beside it."""
        scored = dict(self.partial).get(name)
        return name if scored is None else f"{name} ({scored})"

    def details(self) -> list[str]:
        """Lines under the footer: how each live detector run was made, and the judge-bias notes."""
        return [f"Detector run {line}" for line in self.runs] + [
            f"† {name}: {note}" for name, note in self.judge_bias
        ]

    def text(self) -> str:
        """One line for a caption, a figure footer or a CSV header."""
        parts = [
            self.dataset,
            f"label sets: {', '.join(self.label_sets) or '—'}",
            f"{self.n_items:,} items",
        ]
        if self.filters:
            parts.append(self.filters)
        parts.append(f"data sha256 {self.digest}")
        parts.append(PRODUCT)
        return " · ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "label_sets": list(self.label_sets),
            "n_items": self.n_items,
            "filters": self.filters,
            "sha256": self.digest,
            "detector_runs": list(self.runs),
            "judge_bias": [{"detector": name, "note": note} for name, note in self.judge_bias],
        }


def fingerprint(*parts: Any) -> str:
    """Short sha256 over the exact values of ``parts`` (arrays, frames, lists, strings, numbers).

    Numeric arrays are hashed by their bytes (with dtype and shape), everything else by a canonical
    ``repr``, so equal inputs give equal digests across processes.
    """
    digest = hashlib.sha256()
    for part in parts:
        _update(digest, part)
    return digest.hexdigest()[:DIGEST_LENGTH]


def _update(digest: Any, part: Any) -> None:
    if isinstance(part, pd.DataFrame):
        digest.update(repr(list(part.columns)).encode())
        for column in part.columns:
            _update(digest, part[column].to_numpy())
    elif isinstance(part, pd.Series):
        _update(digest, part.to_numpy())
    elif isinstance(part, np.ndarray) and part.dtype.kind in "biuf":
        digest.update(f"{part.dtype.str}{part.shape}".encode())
        digest.update(np.ascontiguousarray(part).tobytes())
    elif isinstance(part, np.ndarray):
        digest.update(repr(part.tolist()).encode())
    elif isinstance(part, dict):
        for key in sorted(part, key=repr):
            digest.update(repr(key).encode())
            _update(digest, part[key])
    elif isinstance(part, list | tuple) and not _flat(part):
        digest.update(b"[")
        for value in part:
            _update(digest, value)
        digest.update(b"]")
    else:
        digest.update(repr(part).encode())
    digest.update(b"|")


def _flat(values: Iterable[Any]) -> bool:
    # By the values' types, each looked at once: a report digests lists of tens of thousands of texts.
    return not any(issubclass(kind, list | tuple | dict | np.ndarray) for kind in set(map(type, values)))
