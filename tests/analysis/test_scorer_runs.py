"""A run of sentence scores is no span detector, even when it kept its texts as raw outputs: it stood in
MHALO's Table 3 and the failure finder with F1 0 and an IF of its texts' parse rate."""

from __future__ import annotations

from sqlalchemy import Engine

from analysis.dataset_spans import load_dataset_spans
from db.access import OPERATOR
from db.repositories.datasets import get_dataset
from db.transfer import import_file, import_predictions
from formats.base import ReadOptions
from tests.formats.test_alignbench import ROWS, jsonl


def test_a_scorer_with_output_texts_is_left_out_of_the_span_detectors(engine: Engine) -> None:
    _benchmark(engine)
    rows = [
        {
            "model": r["model"],
            "image_name": r["image_name"],
            "sentence_index": r["sentence_index"],
            "output": text,
        }
        for r, text in zip(ROWS, ["Score: 20.", "I cannot tell.", "Score: 90."], strict=False)
    ]
    scored = import_predictions(
        engine,
        jsonl(rows),
        source="s.jsonl",
        dataset="d",
        detector="scorer",
        format_name="alignbench-scores",
        actor=OPERATOR,
    )
    assert scored.ok, scored.summary()
    located = import_predictions(
        engine,
        jsonl([{**rows[0], "output": "Two **[red]** cars are parked."}]),
        source="l.jsonl",
        dataset="d",
        detector="locator",
        format_name="alignbench-localization",
        actor=OPERATOR,
    )
    assert located.ok, located.summary()
    dataset = get_dataset(engine, "d")
    assert dataset is not None
    spans = load_dataset_spans(engine, dataset.id)
    assert sorted(d.name for d in spans.detectors) == ["locator", "scorer"]
    assert [d.name for d in spans.span_detectors] == ["locator"]


def test_a_localization_run_of_its_own_gets_table_5(engine: Engine) -> None:
    """Table 5 / H scores the runs that locate spans. A localization run is a label set of its own,
    which holds no sentence score: the table only looked at the scorers, and never appeared."""
    from analysis.reports import alignbench
    from analysis.reports.data import ReportFilter

    test_a_scorer_with_output_texts_is_left_out_of_the_span_detectors(engine)
    row = {k: ROWS[0][k] for k in ("model", "image_name", "sentence_index")}
    located = import_predictions(
        engine,
        jsonl([{**row, "output": "[red] Two red cars are parked."}]),
        source="m.jsonl",
        dataset="d",
        detector="marker",
        format_name="alignbench-localization",
        actor=OPERATOR,
    )
    assert located.ok, located.summary()
    dataset = get_dataset(engine, "d")
    assert dataset is not None
    report = alignbench.build(alignbench.load(engine, dataset.id), ReportFilter(), n_resamples=0)
    assert report.tables["localization"].frame["detector"].tolist() == ["marker"]
    assert report.provenance.label_sets[-1] == "marker"  # named where its numbers come from


def test_a_scorer_given_some_sentences_marks_no_best_value(engine: Engine) -> None:
    """AlignBench Table 3 measures each run on the sentences it scored; with a run over some of them
    beside one over all, it still marked best and second best as if both were scored alike."""
    from analysis.reports import alignbench
    from analysis.reports.data import ReportFilter

    _benchmark(engine)
    keys = [{k: r[k] for k in ("model", "image_name", "sentence_index")} for r in ROWS]
    for name, scored in (("all", keys), ("some", [keys[0], keys[2]])):  # 2 is unknown: left out
        outcome = import_predictions(
            engine,
            jsonl([{**key, "score": 30 + 20 * k} for k, key in enumerate(scored)]),
            source=f"{name}.jsonl",
            dataset="d",
            detector=name,
            format_name="alignbench-scores",
            actor=OPERATOR,
        )
        assert outcome.ok, outcome.summary()
    dataset = get_dataset(engine, "d")
    assert dataset is not None
    table = alignbench.build(alignbench.load(engine, dataset.id), ReportFilter(), n_resamples=0).tables[
        "table3"
    ]
    assert table.mark_columns == ()
    assert "(sentences): some 1; so no best value is marked." in table.caption
    assert "all " not in table.caption.split("(sentences):")[1]


def test_figure_7_says_how_many_points_it_leaves_out(engine: Engine) -> None:
    """Positions scored on fewer than 3 sentences are not drawn; the figure said nothing of them."""
    from analysis.reports import alignbench
    from analysis.reports.data import ReportFilter
    from render import figures

    test_a_scorer_given_some_sentences_marks_no_best_value(engine)
    dataset = get_dataset(engine, "d")
    assert dataset is not None
    report = alignbench.build(alignbench.load(engine, dataset.id), ReportFilter(), n_resamples=0)
    spec = next(s for s in figures.figures_for(report) if s.key == "alignbench-positional")
    shown = report.tables["positional"].frame
    hidden = int((shown["n"] < 3).sum())
    figure = spec.make(report)
    if hidden == len(shown):  # nothing left to draw: the figure says so in words
        said = " ".join(a.text for a in figure.layout.annotations)
        assert f"Every point averages fewer than 3 sentences ({hidden} not drawn)" in said
    else:
        assert f"{hidden} point(s) of fewer than 3 sentences not drawn" in figure.layout.xaxis.title.text


def _benchmark(engine: Engine) -> None:
    """The AlignBench rows as dataset ``d``."""
    assert import_file(
        engine,
        jsonl(ROWS),
        source="a.jsonl",
        format_name="alignbench",
        options=ReadOptions(dataset="d"),
        actor=OPERATOR,
    ).ok
