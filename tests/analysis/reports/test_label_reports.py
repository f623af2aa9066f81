"""AlignBench, MHaluBench and Tri-HE reports on the demo, checked against the metrics on raw reads."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from analysis.reports import alignbench, claims, triplets
from analysis.reports.data import UNKNOWN_AS_CORRECT, ReportFilter
from db.repositories import report_inputs as ev
from db.repositories.label_sets import list_label_sets
from metrics import auroc_by_group, claim_scores
from render import figures


@pytest.fixture(scope="module")
def sentences(demo_engine, demo_id):
    return alignbench.load(demo_engine, demo_id)


@pytest.fixture(scope="module")
def report(sentences):
    return alignbench.build(sentences, ReportFilter(), n_resamples=200)


def _raw_sentences(engine, dataset_id) -> pd.DataFrame:
    """Gold label, captioner and every detector's score per sentence, from the ordinary bulk reads."""
    sets = {v.id: v for v in list_label_sets(engine, dataset_id)}
    labels = pd.DataFrame(ev.sentence_labels(engine, dataset_id))
    gold = labels[labels["label_set_id"].map(lambda i: sets[i].kind) == "gold"].set_index("sentence_id")
    scores = pd.DataFrame(ev.sentence_scores(engine, dataset_id))
    wide = scores.assign(detector=scores["label_set_id"].map(lambda i: sets[i].name)).pivot(
        index="sentence_id", columns="detector", values="score"
    )
    index = ev.item_index(engine, dataset_id)
    model = dict(zip(index.ids, index.source_models, strict=True))
    return wide.join(gold[["label", "item_id"]], how="inner").assign(
        captioner=lambda f: f["item_id"].map(model)
    )


def test_table3_equals_the_metric_on_raw_reads(report, demo_engine, demo_id) -> None:
    raw = _raw_sentences(demo_engine, demo_id)
    raw = raw[raw["label"] != "unknown"]
    table = report.tables["table3"].frame.set_index("detector")
    for detector in ("cautious", "eager", "sloppy"):
        expected = auroc_by_group(
            (raw["label"] == "incorrect").astype(int), 100 - raw[detector], raw["captioner"]
        )
        for captioner, value in expected.items():
            assert table.at[detector, captioner] == pytest.approx(100 * value)
        assert table.at[detector, alignbench.AVG] == pytest.approx(100 * np.mean(list(expected.values())))


def test_table3_orders_detectors_as_documented(report) -> None:
    avg = report.tables["table3"].frame.set_index("detector")[alignbench.AVG]
    assert avg["cautious"] > 85 and avg["eager"] > 85
    assert 70 < avg["sloppy"] < 88
    cells = report.tables["table3_ci"].frame
    assert ((cells["low"] <= cells["auroc"] + 1e-9) & (cells["auroc"] <= cells["high"] + 1e-9)).all()
    marks = report.tables["table3"].marks().set_index(report.tables["table3"].frame["detector"])
    assert marks.at["sloppy", alignbench.AVG] == ""


def test_unknown_sentences_both_ways(report, sentences, demo_engine, demo_id) -> None:
    raw = _raw_sentences(demo_engine, demo_id)
    comparison = report.tables["unknown"].frame.set_index("detector")
    assert (comparison["n_unknown"] == int((raw["label"] == "unknown").sum())).all()
    as_correct = alignbench.build(sentences, ReportFilter(unknown=UNKNOWN_AS_CORRECT), n_resamples=0)
    table = as_correct.tables["table3"].frame.set_index("detector")
    assert table[alignbench.AVG].to_dict() == pytest.approx(comparison["Avg · unknown as correct"].to_dict())
    assert as_correct.provenance.digest != report.provenance.digest


def test_positional_bias_and_error_types(report) -> None:
    positional = report.tables["positional"].frame
    cautious = positional[(positional["detector"] == "cautious") & (positional["n"] >= 5)].pivot(
        index="position", columns="label", values="mean_score"
    )
    # cautious never flags a correct sentence (its spans are gold spans): correct scores higher wherever
    # a position holds enough sentences of both kinds to compare.
    both = cautious.dropna()
    assert len(both) >= 4
    assert (both["correct"] > both["incorrect"]).all()
    types = report.tables["error_types"].frame
    assert (types["mean_score"].between(0, 100)).all()
    assert types.groupby("detector")["n"].sum().nunique() == 1  # the same incorrect sentences for each


def test_self_preference_rows_average_one(report) -> None:
    normalized = report.tables["self_preference"].frame
    assert normalized.groupby("detector")["normalized"].mean().to_numpy() == pytest.approx(1.0)
    assert not normalized["self"].any()  # no demo detector shares a name with a captioner


def test_localization_of_exact_copies_is_perfect(report) -> None:
    table = report.tables["localization"].frame.set_index("detector")
    assert table.at["cautious", f"{alignbench.AVG} · AP"] == pytest.approx(100)
    assert table.at["cautious", f"{alignbench.AVG} · AP"] > table.at["sloppy", f"{alignbench.AVG} · AP"]


def test_type_filter_keeps_correct_sentences(sentences, report) -> None:
    typed = alignbench.build(sentences, ReportFilter(types=("OCR",)), n_resamples=0)
    assert set(typed.tables["error_types"].frame["type"]) == {"OCR"}
    n_types = report.tables["error_types"].frame.query("detector == 'cautious'").set_index("type")["n"]
    cells = typed.tables["table3_ci"].frame.query("detector == 'cautious'")
    assert cells["n_incorrect"].sum() == n_types["OCR"]


def test_mhalubench_table2(demo_engine, demo_id) -> None:
    inputs = claims.load(demo_engine, demo_id)
    table = claims.build(inputs, ReportFilter()).tables["table2"].frame
    assert set(table["task"]) == {"image-to-text", "text-to-image"}
    assert set(table["level"]) == {"Claim", "Segment"}
    cautious = table[table["detector"] == "cautious"]
    assert (cautious["Hallucinatory · P"] == 100).all()  # cautious only flags real hallucinations
    labels = inputs.labels
    gold = labels[labels["label_set_id"] == 1].set_index("claim_id")["label"]
    sets = {v.name: v.id for v in inputs.label_sets}
    eager = labels[labels["label_set_id"] == sets["eager"]].set_index("claim_id")["label"]
    tasks = inputs.claims.set_index("claim_id")["task_type"]
    mine = eager.index[tasks.loc[eager.index] == "image-to-text"]
    expected = claim_scores(gold.loc[mine].tolist(), eager.loc[mine].tolist())
    row = table[
        (table["detector"] == "eager") & (table["task"] == "image-to-text") & (table["level"] == "Claim")
    ]
    assert row["Macro F1"].iloc[0] == pytest.approx(100 * expected["macro_f1"])
    assert row["n"].iloc[0] == len(mine)


def test_trihe_rates(demo_engine, demo_id) -> None:
    inputs = triplets.load(demo_engine, demo_id)
    report = triplets.build(inputs, ReportFilter())
    table = report.tables["table2"].frame
    overall = table[(table["judge"] == "gold") & (table["model"] == triplets.ALL_MODELS)].iloc[0]
    judged = inputs.judgments[(inputs.judgments["label_set_id"] == 1) & inputs.judgments["verdict"].notna()]
    per_answer = judged.groupby("item_id")["verdict"].apply(lambda v: (v == "no").mean())
    assert overall["Overall · HalluQ"] == pytest.approx(100 * per_answer.mean())
    assert overall["Object · HalluQ"] + overall["Relation · HalluQ"] <= overall["Overall · HalluQ"] + 1e-9
    assert set(table["judge"]) == {"gold", "cautious", "eager"}
    judges = report.tables["judges"].frame.set_index("judge")
    assert judges["triplets"].eq(len(judged)).all()
    assert (judges["kappa"] > 0.5).all()


def test_mhalubench_names_a_run_that_labelled_only_some_claims(demo_engine, demo_id) -> None:
    """Its scores count only the claims it labelled: the figure's bars say how many, beside full runs."""
    inputs = claims.load(demo_engine, demo_id)
    eager = next(v.id for v in inputs.label_sets if v.name == "eager")
    labels = inputs.labels
    theirs = labels.index[labels["label_set_id"] == eager]
    given = replace(inputs, labels=labels.drop(theirs[: len(theirs) // 2]))
    report = claims.build(given, ReportFilter())
    total = int(given.claims["claim_id"].isin(_gold_claims(given)).sum())
    kept = len(theirs) - len(theirs) // 2
    assert dict(report.provenance.partial) == {"eager": f"{kept:,} of {total:,} claims"}
    bars = {x for trace in figures.mhalubench_macro_f1(report).data for x in trace.x}
    assert f"eager ({kept:,} of {total:,} claims)" in bars
    assert "cautious" in bars  # a run that labelled every claim keeps its plain name
    assert claims.build(inputs, ReportFilter()).provenance.partial == ()


def _gold_claims(inputs: claims.ClaimInputs) -> pd.Series:
    gold = next(v.id for v in inputs.label_sets if v.kind == "gold")
    return inputs.labels.loc[inputs.labels["label_set_id"] == gold, "claim_id"]
