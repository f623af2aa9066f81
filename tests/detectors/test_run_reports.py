"""What a run says about the answers it got, beyond their text: answers cut at the token limit, and
calls whose tokens the endpoint did not count.

An answer cut at max tokens (``finish_reason: "length"``) was read as any other, and a tagged text
cut before its tags reads as "no hallucination": nothing said so. Now the run counts such answers
(in its ledger, summed over the label set's runs) and names their items (in its result and its line
on the label set), also when they are replayed from the response cache. An answer with no ``usage``
counted as 0 tokens at no cost; now it is counted as a call without usage, and the cost says so.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from analysis.reports.base import Report
from analysis.reports.detector_runs import with_runs
from analysis.reports.provenance import Provenance
from db import models as m
from db.access import OPERATOR
from db.detector_runs import run_provenance
from db.engine import read_session
from db.export_files import export_file, export_to
from db.transfer import import_file
from detectors.ledger import cost_text
from formats.base import ReadOptions
from tests.detectors.chat_server import ChatServer, answer
from tests.detectors.live_data import (
    DATASET,
    N_ITEMS,
    item_number,
    make_dataset,
    span_words,
    stored,
    stored_in,
    tagged,
)
from tests.detectors.test_live_runs import live_meta, run, spec

CUT = (3, 7)


@pytest.fixture
def data(engine, tmp_path, monkeypatch):
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    make_dataset(engine, tmp_path / "images")
    return engine


def cutting(text: str, attempt: int):
    k = item_number(text)
    if k in CUT:  # the model ran out of tokens before it tagged anything: it reads as nothing wrong
        return answer(tagged(k), finish_reason="length")
    return answer(tagged(k, "red cube"))


def test_answers_cut_at_max_tokens_are_counted_and_their_items_named(data):
    with ChatServer(cutting) as server:
        result = run(data, spec(server, max_tokens=64))
        copy = run(data, spec(server, max_tokens=64, detector="judge-copy"))  # every answer from the cache
    assert result.ok and result.complete  # a cut answer is kept, as it came
    assert span_words(stored(data, "judge"))[3] == []
    assert result.truncated == {"item-3": ["item"], "item-7": ["item"]}
    assert result.ledger["truncated_answers"] == 2 and result.to_dict()["truncated"] == result.truncated
    meta = live_meta(data)
    assert meta["runs"][0]["items_cut"] == ["item-3", "item-7"] and meta["ledger"]["truncated_answers"] == 2
    assert copy.ledger["cached_calls"] == N_ITEMS and copy.truncated == result.truncated
    assert copy.ledger["truncated_answers"] == 2


def test_a_cut_answer_is_marked_on_its_stored_output_and_keeps_the_mark_through_the_canonical_format(data):
    """The run named the items whose answer was cut, but their stored outputs carried no mark: the item,
    Compare and an export showed a cut answer as a whole one. The mark is on the output now, also for an
    answer replayed from the cache, and a canonical export carries it into another store."""
    with ChatServer(cutting) as server:
        run(data, spec(server, max_tokens=64))
        run(data, spec(server, max_tokens=64, detector="judge-copy"))  # every answer from the cache
    for detector in ("judge", "judge-copy"):
        outputs = stored(data, detector)
        assert {ext for ext, a in outputs.items() if a.raw_output and a.raw_output.cut} == {
            "item-3",
            "item-7",
        }
        assert outputs["item-3"].raw_output is not None and outputs["item-3"].raw_output.text == tagged(3)
        assert outputs["item-3"].raw_output.follows_format  # read as it came: what it tagged still counts

    exported = export_file(data, DATASET, "canonical", actor=OPERATOR)
    raw = {
        row["item"]: row["raw_output"]
        for row in map(json.loads, exported.decode().splitlines())
        if row["record"] == "annotations" and row["label_set"]["name"] == "judge"
    }
    assert raw["item-3"]["cut"] is True
    assert "cut" not in raw["item-0"]  # a whole answer's line reads in an earlier Spanlight too
    outcome = import_file(
        data, exported, source="copy.jsonl", options=ReadOptions(dataset="copy"), actor=OPERATOR
    )
    assert outcome.ok, outcome
    copied = stored_in(data, "copy", "judge")
    assert {ext for ext, a in copied.items() if a.raw_output and a.raw_output.cut} == {"item-3", "item-7"}


def test_the_metrics_footers_say_how_many_of_a_runs_stored_answers_were_cut(data):
    """A cut answer is scored as it stands: one cut before it tagged anything reads as a detector that
    found nothing there, and the tables said nothing of it. The footer's line for the run now says how
    many of its stored answers were cut (its outputs' marks, not the answers counted as they came: the
    copy's were all replayed from the cache)."""
    with ChatServer(cutting) as server:
        run(data, spec(server, max_tokens=64))
        run(data, spec(server, max_tokens=64, detector="judge-copy"))
        run(data, spec(server, max_tokens=64, detector="whole", items=("item-0", "item-1")))
    with read_session(data) as session:
        dataset_id = session.scalar(select(m.Dataset.id).where(m.Dataset.name == DATASET))
    names = ("judge", "judge-copy", "whole")
    table = Report("mhalo", "Table 3", Provenance(DATASET, ("gold", *names), N_ITEMS, "abc"))
    footer = with_runs(table, *run_provenance(data, dataset_id)).provenance
    lines = dict(zip(names, footer.runs, strict=True))
    cut = " · 2 answers cut at the token limit, scored as they stand"
    assert lines["judge"].endswith(cut) and lines["judge-copy"].endswith(cut)
    assert lines["whole"].endswith(" · incomplete")


def test_an_export_that_cannot_keep_the_cut_mark_says_so(data, tmp_path):
    """A file of MHALO-style outputs has no place for the mark: read back, a cut answer is scored as a
    whole one. The export wrote it so without a word; its report now counts those outputs."""
    with ChatServer(cutting) as server:
        run(data, spec(server, max_tokens=64))
    notes: list[str] = []
    export_to(
        data,
        DATASET,
        "mhalo-outputs",
        tmp_path / "out.jsonl",
        actor=OPERATOR,
        label_sets=["judge"],
        left_out=notes,
    )
    assert notes == [
        "detector:judge: 2 outputs cut at the token limit are written without that mark "
        "(MHALO-style detector outputs (<Tagged_Text>) has no place for it; canonical keeps it)"
    ]
    canonical: list[str] = []
    export_to(data, DATASET, "canonical", tmp_path / "all.jsonl", actor=OPERATOR, left_out=canonical)
    assert canonical == []


def test_calls_whose_usage_was_not_reported_are_counted_and_the_cost_is_not_shown_as_zero(data):
    """An endpoint that sends no ``usage`` counted 0 tokens and a cost of 0.0000, as if it were free."""

    def some_unmetered(text: str, attempt: int):
        k = item_number(text)
        return answer(tagged(k, "red cube"), usage=k >= 4)

    with ChatServer(some_unmetered) as server:
        result = run(data, spec(server))
    assert result.ok and result.ledger["calls_without_usage"] == 4
    assert result.ledger["prompt_tokens"] == 100 * 6  # the counts that were reported, and only those
    assert (
        cost_text(result.ledger)
        == f"{result.ledger['cost']:.4f} + unknown (usage not reported for 4 of 10 call(s))"
    )
    assert live_meta(data)["ledger"]["calls_without_usage"] == 4

    with ChatServer(lambda text, n: answer(tagged(item_number(text)), usage=False)) as server:
        unmetered = run(data, spec(server, detector="unmetered"))
    assert cost_text(unmetered.ledger) == "unknown (usage not reported for 10 of 10 call(s))"


def test_a_token_budget_the_endpoint_gives_no_counts_for_stops_the_run(data):
    """With no usage reported, the budget counted nothing and the run went on to the end."""
    with ChatServer(lambda text, n: answer(tagged(item_number(text)), usage=False)) as server:
        result = run(data, spec(server, concurrency=1, budget_tokens=1000))
    assert result.status == "stopped" and len(server.requests) == 1 and result.saved == 1
    assert result.stop_reason == (
        "the token budget cannot be kept: the endpoint reports no token usage, so the tokens spent are "
        "not known"
    )
