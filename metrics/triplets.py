"""Triplet-level hallucination rates (Tri-HE, section 3.2, equations 1-2).

Tri-HE extracts (subject, relation, object) triplets from each answer and judges each one. Counting
hallucinated triplets over all triplets would favour models that say more, so the paper averages the
per-answer rate over questions (HalluQ) and, one level up, over images (HalluI).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any

from metrics._validation import as_int


def hallu_rates(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Question- and image-level hallucination rates in percent (Tri-HE eq. 1 and 2).

    Each record is one answer: ``{image_id, question_id, hallucinated, total}`` with triplet counts.
    ``HalluQ = 100 · mean over answers of hallucinated / total``;
    ``HalluI = 100 · mean over images of (mean over that image's answers of hallucinated / total)``.
    Answers with ``total == 0`` have no rate and are skipped, and an image left without answers is
    skipped too. Raises ``ValueError`` if no answer has ``total > 0``. Lower is better.
    """
    rates: list[float] = []
    by_image: dict[Hashable, list[float]] = {}
    for i, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise ValueError(f"records[{i}] must be a mapping, got {type(record).__name__}")
        missing = [k for k in ("image_id", "hallucinated", "total") if k not in record]
        if missing:
            raise ValueError(f"records[{i}] lacks {', '.join(missing)}")
        hallucinated = as_int(record["hallucinated"], f"records[{i}]['hallucinated']")
        total = as_int(record["total"], f"records[{i}]['total']")
        if hallucinated < 0 or total < 0:
            raise ValueError(f"records[{i}] has a negative count")
        if hallucinated > total:
            raise ValueError(
                f"records[{i}] has more hallucinated triplets ({hallucinated}) than triplets ({total})"
            )
        if total == 0:
            continue
        rate = hallucinated / total
        rates.append(rate)
        try:
            by_image.setdefault(record["image_id"], []).append(rate)
        except TypeError:
            raise ValueError(f"records[{i}]['image_id'] must be hashable") from None
    if not rates:
        raise ValueError("no answer has any triplet: HalluQ and HalluI are undefined")
    hallu_q = 100 * (sum(rates) / len(rates))
    hallu_i = 100 * (sum(sum(r) / len(r) for r in by_image.values()) / len(by_image))
    return {"hallu_q": hallu_q, "hallu_i": hallu_i}
