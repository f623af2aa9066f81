"""Tri-HE model runs through the store: a run keeps the name of the model whose answers it judged, so
its export gives the file's own ``<model>_…`` keys back whatever the run was named, the benchmark
format writes every chosen run in those keys (choosing a run and exporting as Tri-HE never silently
leaves it out), and Table 2's rows name that model."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from analysis.reports import triplets
from analysis.reports.data import ReportFilter
from db import models as m
from db.access import OPERATOR
from db.export_files import export_file
from db.repositories.datasets import get_dataset
from db.transfer import import_file, import_predictions
from formats.base import FormatError, ReadOptions
from formats.export_check import export_refusal
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RawOutputRecord,
    SpanRecord,
    TripletRecord,
)
from formats.registry import get_format
from formats.trihe import FORMAT as TRIHE

BENCH: dict[str, Any] = {
    "42": {
        "instance": [
            {"question": "Why bright?", "answer": "A lamp is on.", "triplet": ["(lamp, is, on)"]},
            {"question": "What is there?", "answer": "A desk.", "triplet": []},
        ],
        "triplets": ["(lamp, is, on)", "(laptop, on, desk)"],
        "all_object": ["lamp", "laptop", "desk"],
        "object": ["lamp"],
    },
    "7": {
        "instance": [{"question": "Who sits?", "answer": "A man.", "triplet": ["(man, sits on, bench)"]}],
        "triplets": ["(man, sits on, bench)"],
        "all_object": ["man", "bench"],
        "object": ["man"],
    },
}


def _run(model: str, verdicts: tuple[str, str, str]) -> dict[str, Any]:
    """The benchmark with ``model``'s answers, extracted triplets and the judge's verdicts added."""
    document = json.loads(json.dumps(BENCH))
    first, second = document["42"]["instance"]
    first.update(
        {
            f"{model}_answer": "The lamp is on and a cat sleeps.",
            f"{model}_triplets": ["(lamp, is, on)", "(cat, sleeps on, desk)"],
            f"{model}_triplets_judgements": list(verdicts[:2]),
        }
    )
    second.update({f"{model}_triplets": ["(desk, is, brown)"], f"{model}_triplets_judgements": [verdicts[2]]})
    return document


def _store(engine: Engine, **runs: dict[str, Any]) -> None:
    """The benchmark as dataset ``d``, then each run as the detector of that name."""
    base = import_file(
        engine,
        json.dumps(BENCH).encode(),
        source="tri-he.json",
        format_name="trihe",
        actor=OPERATOR,
        options=ReadOptions(dataset="d"),
    )
    assert base.ok, [str(p) for p in base.problems]
    for detector, document in runs.items():
        outcome = import_predictions(
            engine,
            json.dumps(document).encode(),
            source=f"{detector}.json",
            dataset="d",
            detector=detector,
            format_name="trihe-judgments",
            actor=OPERATOR,
        )
        assert outcome.ok, [str(p) for p in outcome.problems]


def _exported(engine: Engine, fmt: str, label_sets: list[str] | None = None) -> Any:
    return json.loads(export_file(engine, "d", fmt, actor=OPERATOR, label_sets=label_sets))


def test_a_run_exports_under_the_model_it_judged_not_the_name_it_was_given(engine: Engine) -> None:
    llava = _run("llava", ("yes", "no", "yes"))
    _store(engine, gpt4_judge=llava)
    assert _exported(engine, "trihe-judgments", ["detector:gpt4_judge"]) == llava
    # The benchmark format holds the run too: chosen alone, or among all label sets.
    assert _exported(engine, "trihe", ["detector:gpt4_judge"]) == llava
    assert _exported(engine, "trihe") == llava


def test_the_benchmark_format_writes_every_chosen_run_and_each_reads_back(engine: Engine) -> None:
    llava, minigpt = _run("llava", ("yes", "no", "yes")), _run("minigpt4", ("no", "no", "yes"))
    _store(engine, judge_a=llava, judge_b=minigpt)
    both = _exported(engine, "trihe")
    instance = both["42"]["instance"][0]
    assert instance["llava_triplets_judgements"] == ["yes", "no"]
    assert instance["minigpt4_triplets_judgements"] == ["no", "no"]
    assert both["7"] == BENCH["7"]  # an instance no run answered is as the benchmark gives it
    # Such a file is read back run by run, each picked by its model's name.
    again = import_predictions(
        engine,
        json.dumps(both).encode(),
        source="both.json",
        dataset="d",
        detector="minigpt4",
        format_name="trihe-judgments",
        actor=OPERATOR,
    )
    assert again.ok, [str(p) for p in again.problems]
    assert _exported(engine, "trihe-judgments", ["detector:minigpt4"]) == minigpt


def test_two_runs_of_one_model_are_refused_by_name_not_merged(engine: Engine) -> None:
    _store(engine, judge_a=_run("llava", ("yes", "no", "yes")), judge_b=_run("llava", ("no", "no", "no")))
    with pytest.raises(FormatError, match=r"'llava' \(detector:judge_a, detector:judge_b\)"):
        export_file(engine, "d", "trihe", actor=OPERATOR)
    assert _exported(engine, "trihe", ["detector:judge_b"])["42"]["instance"][1][
        "llava_triplets_judgements"
    ] == ["no"]


def test_table_2_names_the_answering_model_of_a_run_read_from_a_file(engine: Engine) -> None:
    _store(engine, gpt4_judge=_run("llava", ("yes", "no", "yes")))
    dataset = get_dataset(engine, "d")
    assert dataset is not None
    table = triplets.build(triplets.load(engine, dataset.id), ReportFilter()).tables["table2"].frame
    assert table[["judge", "model", "answers", "triplets"]].values.tolist() == [
        ["gpt4_judge", "llava", 2, 3],
        ["gpt4_judge", triplets.ALL_MODELS, 2, 3],
    ]
    assert table["Overall · HalluQ"].tolist() == [25.0, 25.0]  # (1/2 + 0/1) / 2


def test_the_source_model_filter_chooses_the_answering_model_a_run_names(engine: Engine) -> None:
    # The items are the benchmark's questions (no source model): the model is the one each run judged.
    _store(engine, judge_a=_run("llava", ("yes", "no", "yes")), judge_b=_run("gpt4v", ("no", "no", "no")))
    dataset = get_dataset(engine, "d")
    assert dataset is not None
    inputs = triplets.load(engine, dataset.id)
    report = triplets.build(inputs, ReportFilter(source_models=("gpt4v",)))
    table = report.tables["table2"].frame
    assert table[["judge", "model", "answers", "triplets"]].values.tolist() == [
        ["judge_b", "gpt4v", 2, 3],
        ["judge_b", triplets.ALL_MODELS, 2, 3],
    ]
    assert table["Overall · HalluQ"].tolist() == [100.0, 100.0]
    assert report.provenance.label_sets == ("judge_b",)  # judge_a judged no gpt4v answer
    assert report.provenance.n_items == 2
    # A model nobody answered with leaves nothing, with the note, not every run.
    none = triplets.build(inputs, ReportFilter(source_models=("qwen",)))
    assert "table2" not in none.tables


# ------------------------------------------------------------------ the writer on bundles a store could hold


def _bundle(*label_sets: LabelSetRecord, ids: tuple[str, ...] = ("42/0", "42/1", "7/0")) -> Bundle:
    items = [
        ItemRecord(external_id=i, response="r", prompt="q", meta={"image_id": i.split("/")[0]}) for i in ids
    ]
    return Bundle(
        dataset=DatasetRecord(name="d", source_format="trihe"), items=items, label_sets=list(label_sets)
    )


def _triplets(name: str, kind: str = "detector") -> LabelSetRecord:
    return LabelSetRecord(
        kind, name, annotations=[Annotations("42/0", triplets=[TripletRecord("a", "b", "c", "yes")])]
    )


def test_a_label_set_of_spans_alone_is_refused_not_written_as_a_bare_benchmark() -> None:
    spans = LabelSetRecord("human", "alice", annotations=[Annotations("42/0", spans=[SpanRecord(0, 1)])])
    assert "human:alice has none: it has 1 spans" in (export_refusal(TRIHE, _bundle(spans)) or "")
    # beside a run, the run is written and the spans are what the format cannot keep
    assert export_refusal(TRIHE, _bundle(spans, _triplets("llava"))) is None


def test_raw_outputs_not_in_a_runs_shape_are_no_run_and_no_crash() -> None:
    odd = LabelSetRecord(
        "detector",
        "spotter",
        annotations=[Annotations("42/0", raw_output=RawOutputRecord('["A"]', True))],
    )
    written = json.loads(TRIHE.write(_bundle(odd, _triplets("llava"))))
    assert sorted(k for k in written["42"]["instance"][0] if k.startswith(("spotter", "llava"))) == [
        "llava_triplets",
        "llava_triplets_judgements",
    ]


def test_a_run_whose_name_starts_another_keeps_both() -> None:
    written = json.loads(TRIHE.write(_bundle(_triplets("gpt_4v"), _triplets("gpt"))))
    first = written["42"]["instance"][0]
    assert first["gpt_4v_triplets"] == first["gpt_triplets"] == [["a", "b", "c"]]


def test_a_run_named_after_a_question_field_is_refused() -> None:
    with pytest.raises(FormatError, match="overwrite the questions' own 'answer' field"):
        TRIHE.write(_bundle(_triplets("answer")))


def test_a_dataset_lacking_a_question_keeps_its_ids_not_renumbered() -> None:
    """Numbered by position, its file would read back 42/1 as 42/0 and put its verdicts on another item."""
    written = TRIHE.write(_bundle(ids=("42/1", "42/2", "7/0")))
    assert [i.get("spanlight_id") for i in json.loads(written)["42"]["instance"]] == ["42/1", "42/2"]
    again = TRIHE.read(written, source="d.json").bundle
    assert again is not None
    assert [item.external_id for item in again.items] == ["42/1", "42/2", "7/0"]


def test_a_dataset_of_another_format_keeps_its_item_ids_in_and_out_of_trihe(engine: Engine) -> None:
    """Its items were written as ``q1/0``, ``q2/0``: read back, a re-import made new items of them, and a
    run exported as Tri-HE judgments named no item of the dataset."""
    triplets = [TripletRecord("cube", "left of", "ball", "no", "relation")]
    bundle = Bundle(
        dataset=DatasetRecord(name="d", source_format="canonical", label_kinds=["triplet"]),
        items=[
            ItemRecord(
                external_id=ext,
                response="A cube sits left of a ball.",
                prompt="Where is the cube?",
                reference_triplets=[TripletRecord("cube", "right of", "ball")],
            )
            for ext in ("q1", "scene/12")
        ],
        label_sets=[
            LabelSetRecord(
                "detector",
                "extractor",
                annotations=[Annotations(ext, triplets=triplets) for ext in ("q1", "scene/12")],
            )
        ],
    )
    base = import_file(
        engine,
        get_format("canonical").write(bundle),
        source="d.jsonl",
        actor=OPERATOR,
        options=ReadOptions(dataset="d"),
    )
    assert base.ok, [str(p) for p in base.problems]
    benchmark = export_file(engine, "d", "trihe", actor=OPERATOR)
    again = import_file(
        engine,
        benchmark,
        source="d.json",
        format_name="trihe",
        actor=OPERATOR,
        options=ReadOptions(dataset="d"),
    )
    assert again.ok, [str(p) for p in again.problems]
    with Session(engine) as session:  # the same two items, none added
        assert session.scalars(select(m.Item.external_id).order_by(m.Item.id)).all() == ["q1", "scene/12"]
    judgments = export_file(engine, "d", "trihe-judgments", actor=OPERATOR, label_sets=["detector:extractor"])
    run = import_predictions(
        engine,
        judgments,
        source="run.json",
        dataset="d",
        detector="copy",
        format_name="trihe-judgments",
        actor=OPERATOR,
    )
    assert run.ok, [str(p) for p in run.problems]
    assert _exported(engine, "trihe-judgments", ["detector:copy"]) == json.loads(judgments)


def test_another_models_run_under_a_stored_runs_name_is_refused(engine: Engine) -> None:
    """Read as that run, gpt's verdicts would be exported under llava's keys and counted as llava's."""
    _store(engine, judge=_run("llava", ("yes", "no", "yes")))
    again = import_predictions(
        engine,
        json.dumps(_run("gpt", ("no", "no", "no"))).encode(),
        source="gpt.json",
        dataset="d",
        detector="judge",
        format_name="trihe-judgments",
        actor=OPERATOR,
        allow_skip=True,
        replace_existing=True,
    )
    assert not again.ok
    assert [(p.field, p.reason) for p in again.errors] == [
        (
            "answering_model",
            "detector:judge holds a run of 'llava' and this file's is 'gpt': import it under another detector name",
        )
    ]
    assert _exported(engine, "trihe-judgments", ["detector:judge"]) == _run("llava", ("yes", "no", "yes"))


def test_a_run_of_text_outputs_alone_is_refused_not_dropped() -> None:
    text = LabelSetRecord(
        "detector", "captioner", annotations=[Annotations("42/0", raw_output=RawOutputRecord("A cat.", True))]
    )
    with pytest.raises(FormatError, match="detector:captioner's raw outputs are not Tri-HE runs"):
        TRIHE.write(_bundle(text))


def test_a_benchmark_import_of_a_file_with_runs_says_it_leaves_them_to_import_predictions(
    engine: Engine,
) -> None:
    """A Tri-HE file holding model runs imported as a benchmark: its items are imported and the runs are
    not, and the import says so, naming the file, each model and its keys (it used to say nothing, as if
    the answers and judgments had been read); imported as a detector run, the model's run is read."""
    document = _run("llava", ("yes", "no", "yes"))
    document["7"]["instance"][0]["gpt4v_triplets"] = ["(man, is, tall)"]
    outcome = import_file(
        engine,
        json.dumps(document).encode(),
        source="trihe_with_runs.json",
        actor=OPERATOR,
        options=ReadOptions(dataset="th3"),
    )
    assert outcome.ok and outcome.format == "trihe", outcome.problems
    assert [str(p) for p in outcome.warnings] == [
        "trihe_with_runs.json: the file also holds runs of model 'llava' (llava_triplets, "
        "llava_triplets_judgements) and of model 'gpt4v' (gpt4v_triplets): a benchmark import keeps them "
        "only as the questions' fields and scores none of them; import each as a detector run "
        "(import-predictions, or Detector outputs on the Import page, format trihe-judgments; the detector "
        "name picks the model)"
    ]
    assert outcome.result is not None and outcome.result.label_sets == []
    run = import_predictions(
        engine,
        json.dumps(document).encode(),
        source="trihe_with_runs.json",
        dataset="th3",
        detector="llava",
        actor=OPERATOR,
    )
    assert run.ok and run.result is not None and run.result.rows["triplets"] == 3, run.problems


def test_a_benchmark_file_without_runs_imports_without_a_note(engine: Engine) -> None:
    outcome = import_file(
        engine,
        json.dumps(BENCH).encode(),
        source="tri-he.json",
        actor=OPERATOR,
        options=ReadOptions(dataset="t"),
    )
    assert outcome.ok and outcome.problems == []
