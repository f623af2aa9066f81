"""Anchoring: how much of a detector's draft the annotators who started from it kept.

An annotator who starts from a detector's output (see :mod:`db.repositories.preannotation`) tends to
keep it: their agreement with that detector on those items is then high for the wrong reason, and the
detector's scores against their labels are inflated. This puts the numbers side by side, per annotator
and detector, on the pre-annotated items only:

- **spans**: the annotator's spans now against the detector's, in tokens, matched one to one by the
  metrics' engine (:func:`metrics.matching.match_spans`, IoU ≥ 0.5, MHALO eq. 4-6): mean F1_IoU per
  item, the mean IoU of the matched pairs, and the detector's spans **kept** (same characters and
  type), **changed** (matched but moved or retyped) and **removed** (unmatched), plus the spans the
  annotator **added**;
- **sentences**: on the sentences the draft labeled, the labels kept and changed, the sentences the
  annotator has no label on, and the share kept (agreement).

A high share kept is not wrong by itself (the detector may be right); compared with the annotators who
did not start from a detector, or with gold, it shows how far the starting point pulled the labels.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import pandas as pd
from sqlalchemy import Engine

from analysis.reports.base import Report, Table
from analysis.reports.provenance import Provenance, fingerprint
from db.repositories.preannotation import AnchoringUnit, anchoring_units
from db.repositories.report_inputs import dataset_name
from metrics.matching import match_spans, tokens_of_char_span

KEY, TITLE = "anchoring", "Anchoring on detector drafts"
THRESHOLD = 0.5  # IoU for two spans to match, as F1_IoU counts (MHALO)
SPAN_COLUMNS = [
    "annotator",
    "detector",
    "items",
    "detector spans",
    "kept",
    "changed",
    "removed",
    "added",
    "F1_IoU",
    "mean IoU",
]
SENTENCE_COLUMNS = [
    "annotator",
    "detector",
    "items",
    "draft labels",
    "kept",
    "changed",
    "unlabeled",
    "kept (%)",
]


def build_for(engine: Engine, dataset_id: int) -> Report:
    """:func:`build` on the dataset's pre-annotated items as stored now."""
    return build(anchoring_units(engine, dataset_id), dataset_name(engine, dataset_id))


def _tokens(
    response: str, spans: Sequence[tuple[int, int, str | None]]
) -> list[tuple[tuple[int, int], tuple[int, int, str | None]]]:
    """Each span in tokens, with the span itself; a span over no token (whitespace) takes no part."""
    out = []
    for span in spans:
        found = tokens_of_char_span(response, span[0], span[1])
        if found is not None:
            out.append(((int(found[0]), int(found[1])), span))
    return out


def _span_row(annotator: str, detector: str, units: list[AnchoringUnit]) -> dict[str, object]:
    counts = {"kept": 0, "changed": 0, "removed": 0, "added": 0, "detector spans": 0}
    f1s: list[float] = []
    ious: list[float] = []
    for unit in units:
        theirs = _tokens(unit.response, unit.detector_spans)
        mine = _tokens(unit.response, unit.annotator_spans)
        matching = match_spans([t for t, _ in mine], [t for t, _ in theirs], THRESHOLD)
        f1s.append(matching.f1)
        for pair in matching.pairs:
            ious.append(pair.iou)
            same = mine[pair.pred][1] == theirs[pair.gold][1]
            counts["kept" if same else "changed"] += 1
        counts["removed"] += len(theirs) - matching.n_matched
        counts["added"] += len(mine) - matching.n_matched
        counts["detector spans"] += len(theirs)
    return {
        "annotator": annotator,
        "detector": detector,
        "items": len(units),
        **counts,
        "F1_IoU": 100 * sum(f1s) / len(f1s),
        "mean IoU": 100 * sum(ious) / len(ious) if ious else float("nan"),
    }


def _sentence_row(annotator: str, detector: str, units: list[AnchoringUnit]) -> dict[str, object]:
    kept = changed = unlabeled = total = 0
    for unit in units:
        draft, now = unit.detector_labels or {}, unit.annotator_labels or {}
        for index, label in draft.items():
            total += 1
            if index not in now:
                unlabeled += 1
            elif now[index] == label:
                kept += 1
            else:
                changed += 1
    compared = kept + changed
    return {
        "annotator": annotator,
        "detector": detector,
        "items": len(units),
        "draft labels": total,
        "kept": kept,
        "changed": changed,
        "unlabeled": unlabeled,
        "kept (%)": 100 * kept / compared if compared else float("nan"),
    }


def build(units: Sequence[AnchoringUnit], dataset: str) -> Report:
    """One row per annotator and detector they started from, for spans and for sentence labels."""
    groups: dict[tuple[str, str, str], list[AnchoringUnit]] = defaultdict(list)
    for unit in units:
        groups[(unit.task, unit.annotator, unit.detector)].append(unit)
    spans = [_span_row(a, d, found) for (task, a, d), found in sorted(groups.items()) if task == "spans"]
    sentences = [
        _sentence_row(a, d, found) for (task, a, d), found in sorted(groups.items()) if task == "sentences"
    ]
    names = sorted({u.annotator for u in units} | {f"Detector · {u.detector}" for u in units})
    provenance = Provenance(
        dataset=dataset,
        label_sets=tuple(names),
        n_items=len({u.item for u in units}),
        digest=fingerprint([repr(u) for u in units]),
    )
    tables = {}
    if spans:
        tables["spans"] = Table(
            "spans",
            "Spans kept from the detector's draft",
            pd.DataFrame(spans, columns=SPAN_COLUMNS),
            caption="On the items each annotator started from the detector: their spans now against the "
            "detector's, in tokens, matched one to one at IoU ≥ 0.5 (F1_IoU per item, mean IoU of the "
            "matched pairs, in %). Kept: same characters and type; changed: matched but moved or "
            "retyped; removed: the detector's spans left unmatched; added: the annotator's own.",
        )
    if sentences:
        tables["sentences"] = Table(
            "sentences",
            "Sentence labels kept from the detector's draft",
            pd.DataFrame(sentences, columns=SENTENCE_COLUMNS),
            caption="On the sentences the draft labeled: labels the annotator kept, changed, or has none "
            "on now; kept (%) is the share kept of those they labeled.",
        )
    notes = () if tables else ("No annotator has started an item from a detector on this dataset.",)
    return Report(KEY, TITLE, provenance, tables=tables, notes=notes)
