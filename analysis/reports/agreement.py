"""Inter-annotator agreement per label kind: spans, sentence labels, claim labels and ratings.

Each kind is cut into units every rater labels alike: whitespace tokens of the response (spans, a
token taking its span's type, or "hallucinated", or "—" outside every span), sentences, claims, and
rated segments. Only label sets holding labels of the kind measured are its raters (spans, or an item
marked done on the spans page; sentence labels; claim labels; ratings): someone who only rated detector
outputs is no span annotator, and counting them as one who found nothing would pull every kappa down.
:func:`left_out` names the people not counted and why, for the page to say. A rater has rated an
item's units when their label set holds any span, sentence or claim label on that item (or marks it
done on one of those pages), so an annotator who found nothing still agrees with one who found nothing.

Reported per kind: Cohen's kappa of every pair on the units both rated (MHALO appendix A.5) and, for
spans, the mean F1_IoU of every pair through the metrics' matching engine (whole spans matched one to
one, as detectors are scored against gold), Fleiss' kappa with the observed agreement P̄ on the units every chosen rater rated (AlignBench appendix D.3),
Krippendorff's alpha on every unit with two or more ratings (interval for rating scores, as Tri-HE's
0.66), each rater's label distribution, and the items with the most disagreement.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from analysis.reports import claims as claim_report
from analysis.reports.base import Report, Table
from analysis.reports.claims import ClaimInputs
from analysis.reports.data import UNTYPED, ReportFilter, item_mask
from analysis.reports.provenance import Provenance, fingerprint
from analysis.reports.sentences import LABEL_NAMES, NO_LABEL, SentenceInputs, load_sentence_inputs
from analysis.reports.spans import SpanInputs, load_span_inputs, typed_token_spans
from db.repositories.label_sets import LabelSetView
from db.repositories.report_inputs import done_items, ratings
from metrics import (
    cohen_table,
    f1_iou_per_item,
    fleiss_kappa,
    krippendorff_alpha,
    observed_agreement,
    spans_to_unit_labels,
)

KEY, TITLE = "agreement", "Agreement between annotators"
KINDS = {
    "spans": "Spans (per token)",
    "sentences": "Sentence labels",
    "claims": "Claim labels",
    "ratings": "Ratings",
}
OUTSIDE, INSIDE = "—", "hallucinated"
# Marks a pair of raters whose shared units all carry one and the same category: Cohen's kappa is 1.0
# there by convention (metrics contract), and F1_IoU of two empty span lists 1.0, though nothing was
# compared; such a pair is not marked best, and its note says why.
SINGLE = "‡"
NOTE = "note"
TOP_DISAGREEMENTS = 15
# What a rater of each kind holds, as the page names it.
_HOLDINGS = {
    "spans": "spans",
    "sentences": "sentence labels",
    "claims": "claim labels",
    "ratings": "ratings",
}
# The item-status pages whose "done" counts as having looked at an item's units (not rating tasks').
_LABEL_PAGES = ("spans", "sentences", "claims")


@dataclass(frozen=True)
class AgreementInputs:
    spans: SpanInputs
    sentences: SentenceInputs
    claims: ClaimInputs
    ratings: pd.DataFrame
    done: dict[str, dict[int, set[int]]]  # page (task) → label set id → items marked done there

    @property
    def dataset(self) -> str:
        return self.spans.dataset

    @property
    def label_sets(self) -> tuple[LabelSetView, ...]:
        return self.sentences.label_sets


def load(engine: Engine, dataset_id: int) -> AgreementInputs:
    return AgreementInputs(
        load_span_inputs(engine, dataset_id),
        load_sentence_inputs(engine, dataset_id, offsets=False),
        claim_report.load(engine, dataset_id),
        pd.DataFrame(ratings(engine, dataset_id)),
        done_items(engine, dataset_id),
    )


@dataclass(frozen=True)
class Units:
    """Long table of ratings: one row per (unit, rater) with the unit's item."""

    frame: pd.DataFrame  # unit, item_id, rater, label
    level: str  # "nominal" or "interval"
    # Spans: the items whose tokens are labelled "inside" rather than with a type, because a rater's span
    # there has none (a detector's tags) or gives a token two types.
    untyped_items: int = 0


def raters_for(inputs: AgreementInputs, kind: str) -> list[str]:
    """Names of the raters who labelled anything of ``kind`` (label set names; rater names for ratings)."""
    if kind == "ratings":
        return sorted(inputs.ratings["rater"].unique()) if not inputs.ratings.empty else []
    return [view.name for view in inputs.label_sets if _holds(inputs, view, kind)]


def _holds(inputs: AgreementInputs, view: LabelSetView, kind: str) -> bool:
    """Whether the label set holds labels of ``kind`` (for spans: a span, or an item marked done on the
    spans page — an annotator who found nothing anywhere)."""
    if kind == "spans":
        return inputs.spans.spans.has_spans(view.id) or bool(inputs.done.get("spans", {}).get(view.id))
    if kind == "sentences":
        return view.id in inputs.sentences.labels
    if kind == "claims":
        labels = inputs.claims.labels
        return not labels.empty and bool((labels["label_set_id"] == view.id).any())
    return False


@dataclass(frozen=True)
class LeftOut:
    """A person with labels on the dataset who is not a rater of the kind shown, and why."""

    name: str
    reason: str


def left_out(inputs: AgreementInputs, kind: str) -> list[LeftOut]:
    """The annotators and raters not counted for ``kind`` because they hold none of its labels, each
    with what they do hold (so "dave: no spans, only ratings" explains an absence instead of a 0.00)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    counted = set(raters_for(inputs, kind))
    rated = set(inputs.ratings["rater"]) if not inputs.ratings.empty else set()
    people = [v for v in inputs.label_sets if v.kind == "human"]
    own_sets = {v.annotator or v.name for v in people}
    out = []
    for view in people:
        if view.name in counted or (kind == "ratings" and (view.annotator or view.name) in counted):
            continue
        held = [
            _HOLDINGS[k]
            for k in KINDS
            if k != kind
            and (_holds(inputs, view, k) if k != "ratings" else (view.annotator or view.name) in rated)
        ]
        out.append(LeftOut(view.name, _reason(kind, held)))
    if kind != "ratings":
        out.extend(LeftOut(name, _reason(kind, ["ratings"])) for name in sorted(rated - own_sets))
    return sorted(out, key=lambda x: x.name.lower())


def _reason(kind: str, held: list[str]) -> str:
    given = f"only {', '.join(held)}" if held else "nothing labelled yet"
    return f"no {_HOLDINGS[kind]} ({given})"


def default_raters(inputs: AgreementInputs, kind: str) -> list[str]:
    """Human annotators by default (every rater when fewer than two annotators labelled this kind)."""
    everyone = raters_for(inputs, kind)
    if kind == "ratings":
        return everyone
    humans = {v.name for v in inputs.label_sets if v.kind == "human"}
    chosen = [name for name in everyone if name in humans]
    return chosen if len(chosen) >= 2 else everyone


def kinds_available(inputs: AgreementInputs) -> list[str]:
    return [kind for kind in KINDS if len(raters_for(inputs, kind)) >= 2]


def build(
    inputs: AgreementInputs, flt: ReportFilter, kind: str, raters: tuple[str, ...] | None = None
) -> Report:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    chosen = list(raters) if raters else default_raters(inputs, kind)
    kept_items = set(inputs.spans.items["item_id"].to_numpy()[item_mask(inputs.spans.items, flt)].tolist())
    units = _units(inputs, kind, chosen, kept_items)
    frame = units.frame
    provenance = Provenance(
        dataset=inputs.dataset,
        label_sets=tuple(chosen),
        n_items=int(frame["item_id"].nunique()) if not frame.empty else 0,
        digest=fingerprint(frame.astype(str)),
        filters=flt.describe(),
    )
    title = f"{TITLE} · {KINDS[kind]}"
    if len(chosen) < 2 or frame.empty:
        return Report(
            f"{KEY}.{kind}",
            title,
            provenance,
            notes=("Agreement needs two raters with labels on the same items.",),
        )
    wide = frame.pivot_table(index="unit", columns="rater", values="label", aggfunc="first")
    wide = wide.reindex(columns=[r for r in chosen if r in wide.columns])
    columns = {r: [None if _missing(v) else v for v in wide[r].tolist()] for r in wide.columns}
    disagreements = _disagreements(frame, inputs.spans.items)
    pairs, single = _pairs(columns)
    matching, unmatched = _span_matching(inputs, chosen, kept_items) if kind == "spans" else (None, ())
    tables = {
        "pairs": Table(
            "pairs",
            "Cohen's kappa per pair of raters",
            pairs,
            caption="On the units both raters labelled; agreement is the share of those units labelled alike."
            + (
                f" {SINGLE}: the two raters used one and the same category on every unit they share, so "
                "kappa is 1 by convention though it measures no agreement on what to flag; not marked best."
                if single
                else ""
            ),
            mark_columns=("kappa",),
            unranked=single,
        ),
        "summary": Table("summary", "Agreement of all chosen raters", _summary(wide, units.level)),
        **(
            {
                "span_matching": Table(
                    "span_matching",
                    "Span matching per pair of raters (F1_IoU)",
                    matching,
                    caption="Mean F1_IoU (token IoU ≥ 0.5, MHALO eq. 5-6) between the two raters' spans on the "
                    "items both rated: whole spans matched one to one, where kappa compares token by token."
                    + (
                        f" {SINGLE}: neither rater marked a span on those items, so F1_IoU is 100 by "
                        "convention; not marked best."
                        if unmatched
                        else ""
                    ),
                    mark_columns=("F1_IoU",),
                    unranked=unmatched,
                )
            }
            if matching is not None
            else {}
        ),
        "distribution": Table(
            "distribution",
            "Label distribution per rater",
            _distribution(frame),
            caption="Share of each rater's units that got each label.",
        ),
        "disagreements": Table(
            "disagreements",
            _disagreement_title(len(disagreements)),
            disagreements,
            caption="Share of the item's units (with two or more ratings) on which the raters do not all agree.",
        ),
    }
    notes = (
        (
            f"On {units.untyped_items} item(s) a rater's spans carry no type (or give a word two types): "
            "there the raters are compared on where their spans are, not on their types.",
        )
        if units.untyped_items
        else ()
    )
    return Report(f"{KEY}.{kind}", title, provenance, tables=tables, notes=notes)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _items_of(inputs: AgreementInputs, label_set_id: int) -> set[int]:
    """Items the label set said anything about (a span, sentence or claim label, or a "done" status on
    one of those pages)."""
    found = {item for page in _LABEL_PAGES for item in inputs.done.get(page, {}).get(label_set_id, ())}
    ev = inputs.spans.spans
    found.update(
        i for i, spans in zip(ev.items.ids, ev.char_spans.get(label_set_id, []), strict=True) if spans
    )
    s = inputs.sentences
    if label_set_id in s.labels:
        rows = s.labels[label_set_id] != NO_LABEL
        found.update(s.items["item_id"].to_numpy()[np.unique(s.item_pos[rows])].tolist())
    labels = inputs.claims.labels
    if not labels.empty:
        found.update(labels.loc[labels["label_set_id"] == label_set_id, "item_id"].tolist())
    return found


def _units(inputs: AgreementInputs, kind: str, raters: list[str], kept_items: set[int]) -> Units:
    by_name = {v.name: v for v in inputs.label_sets}
    records: list[tuple[object, int, str, object]] = []
    if kind == "spans":
        ev = inputs.spans.spans
        typed = {name: typed_token_spans(ev, by_name[name].id) for name in raters if name in by_name}
        untyped_items = 0
        covered = {name: _items_of(inputs, by_name[name].id) & kept_items for name in typed}
        for k, (item_id, text) in enumerate(zip(ev.items.ids, ev.items.responses, strict=True)):
            who = [name for name in typed if item_id in covered[name]]
            n_tokens = len(text.split())
            if len(who) < 1 or n_tokens == 0:
                continue
            given = {n: typed[n][k] for n in who}
            per_unit = None
            if all(t != UNTYPED for spans in given.values() for _, _, t in spans):
                try:
                    per_unit = spans_to_unit_labels({n: typed[n][k] for n in who}, n_tokens, outside=OUTSIDE)
                except ValueError:  # one rater gave a token two types
                    per_unit = None
            if per_unit is None:  # compare where the spans are on this item, not their types
                if len(who) > 1:  # (an item one rater labelled is compared with no one)
                    untyped_items += 1
                per_unit = spans_to_unit_labels(
                    {n: [(s, e) for s, e, _ in spans] for n, spans in given.items()},
                    n_tokens,
                    outside=OUTSIDE,
                )
            for unit, unit_labels in enumerate(per_unit):
                for name, label in zip(who, unit_labels, strict=True):
                    records.append(((item_id, unit), item_id, name, INSIDE if label == 1 else label))
        frame = pd.DataFrame(records, columns=["unit", "item_id", "rater", "label"])
        return Units(frame, "nominal", untyped_items)
    if kind == "sentences":
        s = inputs.sentences
        item_ids = s.items["item_id"].to_numpy()[s.item_pos]
        keep = np.isin(item_ids, list(kept_items))
        for name in raters:
            codes = s.labels.get(by_name[name].id) if name in by_name else None
            if codes is None:
                continue
            rows = np.flatnonzero((codes != NO_LABEL) & keep)
            records.extend(
                (int(s.sentence_id[r]), int(item_ids[r]), name, LABEL_NAMES[int(codes[r])])
                for r in rows.tolist()
            )
        return Units(pd.DataFrame(records, columns=["unit", "item_id", "rater", "label"]), "nominal")
    if kind == "claims":
        labels = inputs.claims.labels
        ids = {by_name[n].id: n for n in raters if n in by_name}
        if not labels.empty:
            mine = labels[labels["label_set_id"].isin(list(ids)) & labels["item_id"].isin(list(kept_items))]
            records.extend(
                (claim, item, ids[ls], label)
                for ls, claim, item, label in zip(
                    mine["label_set_id"], mine["claim_id"], mine["item_id"], mine["label"], strict=True
                )
            )
        return Units(pd.DataFrame(records, columns=["unit", "item_id", "rater", "label"]), "nominal")
    rated = inputs.ratings
    if not rated.empty:
        mine = rated[
            rated["rater"].isin(raters) & rated["score"].notna() & rated["item_id"].isin(list(kept_items))
        ]
        records.extend(
            ((task, item, s, e), item, rater, float(score))
            for task, item, s, e, rater, score in zip(
                mine["task_id"],
                mine["item_id"],
                mine["segment_start"],
                mine["segment_end"],
                mine["rater"],
                mine["score"],
                strict=True,
            )
        )
    return Units(pd.DataFrame(records, columns=["unit", "item_id", "rater", "label"]), "interval")


def _pairs(columns: Mapping[str, Sequence[Hashable | None]]) -> tuple[pd.DataFrame, tuple[int, ...]]:
    """Cohen's kappa of every pair, and the positions of the pairs that used a single category (with a
    note column saying which, when there is any such pair: the numbers stay the contract's)."""
    kappas = cohen_table(dict(columns.items()))
    rows = []
    single: list[Hashable | None] = []  # the one category a pair used on all its shared units
    for a, b in combinations(columns, 2):
        shared = [
            (x, y) for x, y in zip(columns[a], columns[b], strict=True) if x is not None and y is not None
        ]
        used = {x for x, _ in shared} | {y for _, y in shared}
        single.append(next(iter(used)) if len(used) == 1 else None)
        rows.append(
            {
                "rater A": a,
                "rater B": b,
                "units": len(shared),
                "kappa": kappas[a][b],
                "agreement": 100 * sum(x == y for x, y in shared) / len(shared) if shared else math.nan,
            }
        )
    frame = pd.DataFrame(rows)
    if any(label is not None for label in single):
        frame[NOTE] = ["" if label is None else _single_note(label) for label in single]
    return frame, tuple(k for k, label in enumerate(single) if label is not None)


def _single_note(label: Hashable) -> str:
    """What a pair that used only ``label`` did, in words (no spans at all reads "flagged nothing")."""
    if label == OUTSIDE:
        return f"{SINGLE} single category: neither rater flagged anything"
    return f"{SINGLE} single category: both raters gave every unit {label}"


def _span_matching(
    inputs: AgreementInputs, raters: list[str], kept_items: set[int]
) -> tuple[pd.DataFrame, tuple[int, ...]]:
    """Per pair of raters: the mean F1_IoU between their spans over the items both rated, and the
    positions of the pairs that marked no span at all there (100 by convention, with a note)."""
    dataset_spans = inputs.spans.spans
    by_name = {v.name: v for v in inputs.label_sets}
    named = [name for name in raters if name in by_name]
    covered = {name: _items_of(inputs, by_name[name].id) & kept_items for name in named}
    rows = []
    empty: list[bool] = []
    for a, b in combinations(named, 2):
        both = [
            k for k, item in enumerate(dataset_spans.items.ids) if item in covered[a] and item in covered[b]
        ]
        if not both:
            continue
        first = [dataset_spans.token_spans[by_name[a].id][k] for k in both]
        second = [dataset_spans.token_spans[by_name[b].id][k] for k in both]
        scores = f1_iou_per_item(first, second)
        rows.append({"rater A": a, "rater B": b, "items": len(both), "F1_IoU": 100 * float(scores.mean())})
        empty.append(not any(first) and not any(second))
    frame = pd.DataFrame(rows, columns=["rater A", "rater B", "items", "F1_IoU"])
    if any(empty):
        frame[NOTE] = [f"{SINGLE} neither rater marked a span" if e else "" for e in empty]
    return frame, tuple(k for k, e in enumerate(empty) if e)


def _summary(wide: pd.DataFrame, level: str) -> pd.DataFrame:
    complete = wide.dropna()
    rows = []
    if len(complete) and complete.shape[1] >= 2:
        ratings_all = complete.to_numpy().tolist()
        rows.append({"measure": "Fleiss' kappa", "value": fleiss_kappa(ratings_all), "units": len(complete)})
        rows.append(
            {
                "measure": "Observed agreement P̄",
                "value": observed_agreement(ratings_all),
                "units": len(complete),
            }
        )
    pairable = [[v for v in row if not _missing(v)] for row in wide.to_numpy().tolist()]
    pairable = [row for row in pairable if len(row) >= 2]
    if pairable:
        rows.append(
            {
                "measure": f"Krippendorff's alpha ({level})",
                "value": krippendorff_alpha(pairable, level),
                "units": len(pairable),
            }
        )
    return pd.DataFrame(rows)


def _distribution(frame: pd.DataFrame) -> pd.DataFrame:
    """Every rater's units per label, a label the rater never gave counted 0: a rater who never flags
    anything (all their tokens outside every span) keeps a row of zeros, where the figure, which leaves
    the tokens outside every span out, drew no bar and so no rater at all."""
    every = pd.MultiIndex.from_product(
        [sorted(frame["rater"].unique()), sorted(frame["label"].unique())], names=["rater", "label"]
    )
    given = frame.groupby(["rater", "label"], sort=True).size()
    counts = given.reindex(every, fill_value=0).rename("units").reset_index()
    counts["share"] = 100 * counts["units"] / counts.groupby("rater")["units"].transform("sum")
    # A rating is a number: 4, not "4.0", as the rating pages show it.
    counts["label"] = [f"{v:g}" if isinstance(v, float) else str(v) for v in counts["label"]]
    return counts


def _disagreements(frame: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    per_unit = frame.groupby("unit", sort=False).agg(
        item_id=("item_id", "first"), ratings=("label", "size"), distinct=("label", "nunique")
    )
    per_unit = per_unit[per_unit["ratings"] >= 2]
    if per_unit.empty:
        return pd.DataFrame(columns=["item", "units", "disagreeing units", "disagreement"])
    per_item = (
        per_unit.assign(disagree=per_unit["distinct"] > 1)
        .groupby("item_id")
        .agg(units=("disagree", "size"), disagreeing=("disagree", "sum"))
    )
    per_item = per_item[per_item["disagreeing"] > 0]
    per_item["disagreement"] = 100 * per_item["disagreeing"] / per_item["units"]
    names = items.set_index("item_id")["external_id"]
    out = per_item.sort_values(["disagreement", "disagreeing"], ascending=False).head(TOP_DISAGREEMENTS)
    return pd.DataFrame(
        {
            "item": names.loc[out.index].to_numpy(),
            "units": out["units"].to_numpy(),
            "disagreeing units": out["disagreeing"].astype(int).to_numpy(),
            "disagreement": out["disagreement"].to_numpy(),
        }
    )


def _disagreement_title(shown: int) -> str:
    """The list's title counts the items it shows (it said 15 over a list of 4)."""
    if shown == 0:
        return "No item with disagreement"
    if shown == 1:
        return "The one item with disagreement"
    return f"The {shown} items with the most disagreement"
