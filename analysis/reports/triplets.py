"""Tri-HE (triplet-level hallucination): HalluI / HalluQ overall, for objects and for relations.

Tri-HE's Table 2 compares the answering models (rows) as judged by each judge (column groups). Here
the answering model is the item's source model, or for a run read from a Tri-HE file (whose items are
the benchmark's questions) the ``<model>`` whose answers it holds. Every label set that judged triplets
is a judge (gold, annotators, detector runs). Each item is one answer (a question); items sharing an image are
averaged together for HalluI. A triplet is hallucinated when its verdict is "no"; it is an object
hallucination when the wrong part is an object, a relation one when it is the relation. Triplets the
judge could not decide (no verdict) are left out of the counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd
from sqlalchemy import Engine

from analysis.reports.base import Report, Table
from analysis.reports.data import NO_VALUE, ReportFilter, item_mask, items_frame
from analysis.reports.provenance import Provenance, fingerprint
from db.repositories.label_sets import LabelSetView, list_label_sets
from db.repositories.report_inputs import answering_models, dataset_name, triplet_judgments
from metrics import cohen_kappa, hallu_rates

KEY, TITLE = "trihe", "Tri-HE · triplet-level hallucination"
ALL_MODELS = "All models"
RATES = (
    ("Overall", None),
    ("Object", ("object1", "object2")),
    ("Relation", ("relation",)),
)
COLUMNS = [f"{group} · {rate}" for group, _ in RATES for rate in ("HalluI", "HalluQ")]


@dataclass(frozen=True)
class TripletInputs:
    dataset: str
    items: pd.DataFrame
    label_sets: tuple[LabelSetView, ...]
    judgments: pd.DataFrame  # label_set_id, item_id, index, subject, relation, object, verdict, wrong_part
    # label set id -> whose answers it judged, where the run says so (a Tri-HE file's ``<model>``)
    answering_models: dict[int, str] = field(default_factory=dict)


def load(engine: Engine, dataset_id: int) -> TripletInputs:
    return TripletInputs(
        dataset_name(engine, dataset_id),
        items_frame(engine, dataset_id),
        tuple(list_label_sets(engine, dataset_id)),
        pd.DataFrame(triplet_judgments(engine, dataset_id)),
        answering_models(engine, dataset_id),
    )


def available(inputs: TripletInputs) -> bool:
    return not inputs.judgments.empty and bool(inputs.judgments["verdict"].notna().any())


def judges(inputs: TripletInputs, flt: ReportFilter) -> list[LabelSetView]:
    owners = set(inputs.judgments["label_set_id"]) if not inputs.judgments.empty else set()
    return [
        v
        for v in inputs.label_sets
        if v.id in owners and (v.kind != "detector" or flt.keeps_detector(v.name))
    ]


def build(inputs: TripletInputs, flt: ReportFilter) -> Report:
    if not available(inputs):
        raise ValueError("the dataset has no triplet judgments")
    # The source-model filter chooses answers: an item's own model, or, for the benchmark's questions,
    # the model whose answers the run judged (the items do not say it).
    kept = inputs.items[item_mask(inputs.items, replace(flt, source_models=()))]
    info = kept.set_index("item_id")
    decided = inputs.judgments[
        inputs.judgments["verdict"].notna() & inputs.judgments["item_id"].isin(info.index)
    ]
    decided = decided.assign(source_model=_answer_models(decided, info, inputs.answering_models))
    if flt.source_models:
        decided = decided[decided["source_model"].isin(flt.source_models)]
    chosen = judges(inputs, flt)
    provenance = Provenance(
        dataset=inputs.dataset,
        # the judges whose judgments the filters keep (a model filter can leave one with none)
        label_sets=tuple(j.name for j in chosen if j.id in set(decided["label_set_id"])),
        n_items=int(decided["item_id"].nunique()),
        digest=fingerprint(
            decided.sort_values(["label_set_id", "item_id", "index"])[
                ["label_set_id", "item_id", "index", "verdict", "wrong_part"]
            ].astype(str)
        ),
        filters=flt.describe(),
    )
    rows = []
    for judge in chosen:
        mine = decided[decided["label_set_id"] == judge.id]
        if mine.empty:
            continue
        per_answer = _answer_counts(mine, info)
        models = sorted(per_answer["source_model"].unique())
        for model in [*models, ALL_MODELS]:
            answers = per_answer if model == ALL_MODELS else per_answer[per_answer["source_model"] == model]
            row: dict[str, object] = {
                "judge": judge.name if judge.kind != "gold" else "gold",
                "judge_kind": judge.kind,
                "model": model,
                "answers": len(answers),
                "triplets": int(answers["total"].sum()),
            }
            for group, _ in RATES:
                rates = hallu_rates(
                    {
                        "image_id": a.image,
                        "question_id": a.item_id,
                        "hallucinated": getattr(a, group.lower()),
                        "total": a.total,
                    }
                    for a in answers.itertuples()
                )
                row[f"{group} · HalluI"] = rates["hallu_i"]
                row[f"{group} · HalluQ"] = rates["hallu_q"]
            rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return Report(KEY, TITLE, provenance, notes=("No triplet judgment matches the filters.",))
    tables = {
        "table2": Table(
            "table2",
            "Table 2 · hallucination rates per answering model and judge (%, lower is better)",
            frame,
            caption=(
                "HalluQ averages the share of hallucinated triplets over answers, HalluI first within each image. "
                "Object: a wrong object; Relation: right objects, wrong relation. Undecided triplets are left out."
            ),
        )
    }
    agreement = _judge_agreement(decided, chosen)
    if not agreement.empty:
        tables["judges"] = Table(
            "judges",
            "Judges against gold: verdict agreement on the same triplets",
            agreement,
            caption="Triplets matched by item, subject, relation and object; accuracy and Cohen's kappa of the yes/no verdicts.",
            mark_columns=("accuracy", "kappa"),
        )
    return Report(KEY, TITLE, provenance, tables=tables)


def _judge_agreement(decided: pd.DataFrame, chosen: list[LabelSetView]) -> pd.DataFrame:
    gold = next((j for j in chosen if j.kind == "gold"), None)
    if gold is None:
        return pd.DataFrame()
    key = ["item_id", "subject", "relation", "object"]
    reference = decided[decided["label_set_id"] == gold.id][[*key, "verdict"]]
    rows = []
    for judge in chosen:
        if judge.id == gold.id:
            continue
        both = reference.merge(decided[decided["label_set_id"] == judge.id][[*key, "verdict"]], on=key)
        if both.empty:
            continue
        truth, said = both["verdict_x"].tolist(), both["verdict_y"].tolist()
        rows.append(
            {
                "judge": judge.name,
                "triplets": len(both),
                "accuracy": 100 * sum(a == b for a, b in zip(truth, said, strict=True)) / len(both),
                "kappa": cohen_kappa(truth, said),
                "said no / gold no": f"{said.count('no')} / {truth.count('no')}",
            }
        )
    return pd.DataFrame(rows)


def _answer_counts(judged: pd.DataFrame, info: pd.DataFrame) -> pd.DataFrame:
    wrong = judged["verdict"] == "no"
    counts = pd.DataFrame(
        {
            "item_id": judged["item_id"],
            "total": 1,
            "overall": wrong.astype(int),
            "object": (wrong & judged["wrong_part"].isin(RATES[1][1])).astype(int),
            "relation": (wrong & judged["wrong_part"].isin(RATES[2][1])).astype(int),
        }
    )
    per_answer = counts.groupby("item_id", sort=True).sum().reset_index()
    per_answer["image"] = info.loc[per_answer["item_id"], "image"].to_numpy()
    per_answer["source_model"] = (
        judged.drop_duplicates("item_id")
        .set_index("item_id")
        .loc[per_answer["item_id"], "source_model"]
        .to_numpy()
    )
    return per_answer


def _answer_models(judged: pd.DataFrame, info: pd.DataFrame, answering: dict[int, str]) -> pd.Series:
    """The model of each judged answer: its item's source model, or where the item names none (the
    benchmark's questions), the model whose answers the judging run says it judged."""
    own = judged["item_id"].map(info["source_model"])
    named = judged["label_set_id"].map(answering)
    return own.where((own != NO_VALUE) | named.isna(), named)
