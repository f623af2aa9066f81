"""`python cli.py promote`: agreed items into gold by a rule, as the operator, with a dry run first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cli
from analysis.adjudication import RULE_NAMES
from cli import main
from db.engine import make_engine
from db.repositories.label_sets import gold_label_set
from db.repositories.report_inputs import annotation_counts
from tests.analysis.reports.demo_store import DEMO, load_demo_store


@pytest.fixture
def demo_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    return load_demo_store(tmp_path, monkeypatch)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["promote", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _gold_sentence_labels(url: str) -> int:
    engine = make_engine(url)
    try:
        return annotation_counts(engine, 1)["sentence_labels"].get("gold", 0)
    finally:
        engine.dispose()


def test_dry_run_then_promote_then_nothing_left(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    common = ("--db", demo_url, "--dataset", DEMO, "--task", "sentences", "--rule", "majority", "--json")
    gold_before = _gold_sentence_labels(demo_url)
    code, out, err = _run(capsys, *common, "--dry-run")
    assert (code, err) == (0, "")
    preview = json.loads(out)
    assert preview["dry_run"] and preview["dataset"] == DEMO and preview["rule"] == "majority"
    assert preview["promoted"] > 0 and preview["review"] and preview["unchanged"] == 0
    assert {"item", "reason"} == set(preview["review"][0])
    assert _gold_sentence_labels(demo_url) == gold_before  # a dry run writes nothing

    code, out, _ = _run(capsys, *common)
    done = json.loads(out)
    assert code == 0 and not done["dry_run"]
    assert (done["promoted"], done["review"]) == (preview["promoted"], preview["review"])

    code, out, _ = _run(capsys, *common)
    again = json.loads(out)
    assert (again["promoted"], again["unchanged"]) == (0, done["promoted"])


def test_text_output_names_what_needs_review(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys, "--db", demo_url, "--dataset", DEMO, "--task", "spans", "--rule", "alignbench", "--dry-run"
    )
    assert code == 0
    head, *lines = out.strip().splitlines()
    assert head.startswith(f"alignbench on spans of {DEMO!r}: would promote ")
    reviews = [line for line in lines if not line.startswith("  replaces ")]  # the gold it replaces
    assert reviews and all(line.startswith("  review demo-") for line in reviews)
    engine = make_engine(demo_url)
    assert gold_label_set(engine, 1) is not None
    engine.dispose()


def test_refusals_and_usage_errors(demo_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(
        capsys, "--db", demo_url, "--dataset", "nope", "--task", "spans", "--rule", "majority"
    )
    assert code == 1 and "no dataset named 'nope'" in err
    code, _, err = _run(
        capsys,
        "--db",
        demo_url,
        "--dataset",
        DEMO,
        "--task",
        "spans",
        "--rule",
        "majority",
        "--threshold",
        "1.5",
    )
    assert code == 2 and "--threshold" in err
    with pytest.raises(SystemExit) as usage:
        main(["promote", "--db", demo_url, "--dataset", DEMO, "--task", "spans", "--rule", "plurality"])
    assert usage.value.code == 2
    with pytest.raises(SystemExit):
        main(["promote", "--db", demo_url, "--dataset", DEMO, "--task", "boxes", "--rule", "majority"])


def test_the_command_offers_exactly_the_rules_of_the_analysis() -> None:
    assert cli.PROMOTION_RULES == RULE_NAMES


def _gold_spans(url: str) -> int:
    engine = make_engine(url)
    try:
        return annotation_counts(engine, 1)["spans"].get("gold", 0)
    finally:
        engine.dispose()


def test_gold_imported_with_the_dataset_is_replaced_only_with_replace(
    demo_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo's gold came with its import: the rule that would change it names what and where, and
    writes nothing without --replace (it replaced it without a word)."""
    common = ("--db", demo_url, "--dataset", DEMO, "--task", "spans", "--rule", "majority")
    code, out, _ = _run(capsys, *common, "--dry-run", "--json")
    imported = json.loads(out)["replaced_imported_gold"]
    assert code == 0 and imported["labels"] == 1 and [i["item"] for i in imported["items"]] == ["demo-005"]
    before = _gold_spans(demo_url)
    code, out, err = _run(capsys, *common)
    assert code == 1 and out == ""
    assert (
        "1 gold label on 1 item (demo-005) that no promotion wrote as it is now" in err and "--replace" in err
    )
    assert _gold_spans(demo_url) == before
    code, out, err = _run(capsys, *common, "--replace")
    assert (code, err) == (0, "")
    assert "; 1 gold label on 1 item (demo-005) that no promotion wrote as it is now among them)" in out


def test_the_text_output_lists_the_gold_labels_it_replaces(
    demo_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusal says "--dry-run lists them": the dry run's text lists them, item by item (it gave a
    count and the first ten item ids; only --json listed the labels), the first items only and a count
    of the rest."""
    common = ("--db", demo_url, "--dataset", DEMO, "--task", "spans", "--rule", "majority")
    code, out, _ = _run(capsys, *common, "--dry-run")
    assert code == 0
    assert "  replaces demo-005: span “left” (Spatial Relation)" in out.splitlines()
    monkeypatch.setattr(cli, "LISTED_ITEMS", 0)
    code, out, _ = _run(capsys, *common, "--dry-run")
    assert out.splitlines()[-1] == "  … and 1 more label on 1 more item (--json lists them all)"
    code, out, _ = _run(capsys, *common, "--replace")
    assert code == 0 and out.splitlines()[-1] == "  … and 1 more label on 1 more item (--json lists them all)"
    monkeypatch.setattr(cli, "LISTED_ITEMS", 50)
    code, out, _ = _run(capsys, *common, "--dry-run")
    assert code == 0 and "replaces" not in out  # replaced: it is the rule's own gold now
