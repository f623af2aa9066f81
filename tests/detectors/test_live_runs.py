"""Live detector runs against a real local chat-completions server, stored in the real databases.

The server scripts good tagged answers, broken tags, JSON word indices, answers slower than the
timeout, 429 with Retry-After, 500s, bodies cut short, bodies that are not JSON and connection resets.
Each test checks what the store holds afterwards: one output per item with exactly the scripted spans,
bounded retries, no second request for an answer already had (resume and cache), and the key nowhere.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import select

from db import models as m
from db.access import OPERATOR
from db.detector_runs import DetectorRunStore, cache_path, run_live, run_provenance
from db.engine import read_session, store_revision
from db.importer import import_bundle
from detectors.client import RetryPolicy
from detectors.ledger import Prices
from detectors.runner import Progress, RunRefused, RunSpec
from detectors.strategies import get_strategy
from formats.records import Annotations, Bundle, DatasetRecord, LabelSetRecord, RawOutputRecord
from tests.detectors.chat_server import ChatServer, answer, status
from tests.detectors.live_data import (
    DATASET,
    N_ITEMS,
    REQUESTS,
    RICH,
    SPANS,
    item_number,
    json_index_script,
    make_dataset,
    make_rich_dataset,
    mhalo_script,
    span_words,
    stored,
    stored_in,
    tagged,
)

KEY = "sk-live-7d1e0b-SECRET"
FAST = RetryPolicy(attempts=4, base_delay_s=0.01, max_delay_s=0.05)


@pytest.fixture
def data(engine, tmp_path, monkeypatch):
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    make_dataset(engine, tmp_path / "images")
    return engine


def spec(server: ChatServer, **changes: Any) -> RunSpec:
    values: dict[str, Any] = {
        "dataset": DATASET,
        "detector": "judge",
        "strategy": "mhalo-vanilla",
        "base_url": server.base_url,
        "model": "gpt-4o-mini",
        "concurrency": 4,
        "timeout_s": 1.0,
        "retry": FAST,
        "batch_items": 3,
        "prices": Prices(0.5, 1.5),
    }
    return RunSpec(**(values | changes))


def run(engine, run_spec: RunSpec, **options: Any):
    return run_live(engine, run_spec, OPERATOR, api_key=KEY, **options)


def live_meta(engine, detector: str = "judge") -> dict[str, Any]:
    with read_session(engine) as session:
        meta = session.scalar(select(m.LabelSet.meta).where(m.LabelSet.name == detector))
    return meta["live_run"]


def test_a_run_stores_one_output_per_item_with_the_scripted_spans_and_bounded_retries(data, caplog):
    seen: list[Progress] = []
    with ChatServer(mhalo_script) as server, caplog.at_level(logging.DEBUG):
        result = run(data, spec(server), progress=seen.append)
    assert result.ok and result.status == "finished" and result.complete
    assert result.saved == result.in_scope == N_ITEMS

    outputs = stored(data, "judge")
    assert sorted(outputs) == [f"item-{k}" for k in range(N_ITEMS)]
    assert span_words(outputs) == SPANS
    assert [k for k in range(N_ITEMS) if not outputs[f"item-{k}"].raw_output.follows_format] == [1]
    assert "tags do not parse" in outputs["item-1"].raw_output.parse_error
    assert outputs["item-0"].raw_output.text == tagged(0, "red cube")

    assert {k: server.count(f"Item {k}: the red cube") for k in range(N_ITEMS)} == REQUESTS
    assert result.ledger["retries"] == sum(REQUESTS.values()) - N_ITEMS
    assert result.ledger["calls"] == N_ITEMS and result.ledger["failed_calls"] == 0
    first, second = [r for r in server.requests if item_number(r.user_text) == 2]
    assert second.at - first.at >= 0.95  # Retry-After: 1
    assert all(
        r.has_image and r.body["model"] == "gpt-4o-mini" and r.body["temperature"] == 0
        for r in server.requests
    )
    assert all(
        r.body["messages"][0]["content"].startswith("You are a hallucination detector")
        for r in server.requests
    )

    assert (
        result.ledger["prompt_tokens"] == 100 * N_ITEMS and result.ledger["completion_tokens"] == 20 * N_ITEMS
    )
    assert result.ledger["cost"] == pytest.approx(1.0 * 0.5 + 0.2 * 1.5)
    assert result.judge_bias and result.judge_bias.startswith("2 of 10 items")

    meta = live_meta(data)
    assert meta["complete"] is True and meta["status"] == "finished"
    assert meta["settings"] == {
        "endpoint": server.base_url,
        "model": "gpt-4o-mini",
        "strategy": "mhalo-vanilla",
        "prompt_hash": get_strategy("mhalo-vanilla").prompt_hash,
        "temperature": 0.0,
        "max_tokens": 1024,
        "samples": 1,
        "aggregation": None,
        "images": "inline",
    }
    assert meta["ledger"]["calls"] == N_ITEMS and len(meta["runs"]) == 1
    with read_session(data) as session:
        label_set = session.scalar(select(m.LabelSet).where(m.LabelSet.name == "judge"))
        assert (label_set.detector_version, label_set.prompt_strategy) == (
            "gpt-4o-mini",
            f"mhalo-vanilla #{get_strategy('mhalo-vanilla').prompt_hash}",
        )
        logged = session.scalars(select(m.EditLog.after).where(m.EditLog.action == "import")).all()
        raw_texts = session.scalars(select(m.RawOutput.text)).all()
    batches = [entry for entry in logged if entry["source"] != "fixture"]
    assert len(batches) >= 2 and all(entry["source"] == "live run judge" for entry in batches)

    last = seen[-1]
    assert last.finished == last.total == N_ITEMS and last.eta_s == 0.0 and last.rate > 0
    assert any(p.saved < N_ITEMS for p in seen)  # progress came while the run went on

    everything = json.dumps([meta, logged, raw_texts, result.to_dict()]) + caplog.text
    everything += cache_path(data).read_text()
    assert KEY not in everything
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in server.requests)


def test_a_second_run_makes_no_request_resumed_or_from_the_cache(data):
    with ChatServer(mhalo_script) as server:
        run(data, spec(server))
        server.forget()
        again = run(data, spec(server))
        assert server.requests == [] and again.already_done == N_ITEMS and again.saved == 0 and again.ok
        revision = store_revision(data)
        copy = run(data, spec(server, detector="judge-copy"))
    assert server.requests == [] and copy.saved == N_ITEMS
    assert copy.ledger["calls"] == 0 and copy.ledger["cached_calls"] == N_ITEMS and copy.ledger["cost"] == 0
    assert span_words(stored(data, "judge-copy")) == SPANS
    assert store_revision(data) > revision


def test_a_limited_run_then_a_full_run_makes_only_the_missing_calls(data, tmp_path, monkeypatch):
    healthy = lambda text, n: answer(tagged(item_number(text), "red cube"))  # noqa: E731
    with ChatServer(healthy) as server:
        first = run(data, spec(server, limit=4))
        assert first.saved == 4 and not first.complete and live_meta(data)["complete"] is False
        assert sorted(item_number(r.user_text) for r in server.requests) == [0, 1, 2, 3]
        server.forget()
        monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "no-cache"))  # resume alone, no cache
        rest = run(data, spec(server))
    assert sorted(item_number(r.user_text) for r in server.requests) == list(range(4, N_ITEMS))
    assert rest.already_done == 4 and rest.saved == 6 and rest.complete
    meta = live_meta(data)
    assert meta["complete"] and len(meta["runs"]) == 2 and meta["ledger"]["calls"] == N_ITEMS


def test_json_word_index_answers_become_spans(data):
    with ChatServer(json_index_script) as server:
        result = run(data, spec(server, strategy="mhalo-json-index", detector="indices"))
    assert result.ok
    outputs = stored(data, "indices")
    assert span_words(outputs) == {k: ["red cube"] if k % 2 == 0 else [] for k in range(N_ITEMS)} | {3: []}
    assert not outputs["item-3"].raw_output.follows_format
    assert "is not words 1-3" in outputs["item-3"].raw_output.parse_error
    assert all(outputs[f"item-{k}"].raw_output.follows_format for k in range(N_ITEMS) if k != 3)


def test_an_item_whose_call_keeps_failing_is_left_for_the_next_run(data):
    broken = {"on": True}

    def script(text: str, attempt: int):
        k = item_number(text)
        return status(502) if k == 5 and broken["on"] else answer(tagged(k, "red cube"))

    with ChatServer(script) as server:
        result = run(data, spec(server))
        assert not result.ok and result.status == "finished" and not result.complete
        assert result.failed == {"item-5": "item: HTTP 502: scripted failure (gave up after 4 attempts)"}
        assert server.count("Item 5:") == 4 and "item-5" not in stored(data, "judge")
        assert live_meta(data)["complete"] is False
        broken["on"] = False
        server.forget()
        again = run(data, spec(server))
    assert again.ok and again.complete and again.saved == 1 and len(server.requests) == 1


def test_a_reply_no_store_can_keep_is_written_with_those_characters_replaced(data):
    """A model's reply holding a NUL or broken Unicode (JSON can carry both) is untrusted text like any
    other. The whole run failed (broken Unicode could not be cached), then such an item was refused, and
    on every later run too, its cached answer replayed: now each such character is stored as U+FFFD,
    one for one, so the spans the reply tags stay where they are."""

    def script(text: str, attempt: int):
        k = item_number(text)
        if k == 2:
            return answer(tagged(k, "red cube") + "\x00 trailing")
        return answer(tagged(k, "red cube") + ("\ud800" if k == 6 else ""))

    with ChatServer(script) as server:
        result = run(data, spec(server))
    assert result.ok and result.complete and not result.failed, result.failed
    outputs = stored(data, "judge")
    assert set(outputs) == {f"item-{k}" for k in range(N_ITEMS)}
    assert outputs["item-2"].raw_output.text.endswith("\ufffd trailing")
    assert outputs["item-6"].raw_output.text.endswith("\ufffd")
    assert span_words(outputs)[2] == ["red cube"]


@pytest.mark.parametrize("bad", ["judge\x00x", "judge\ud800"])
def test_a_run_named_with_text_no_store_can_keep_is_refused_before_anything_is_asked_or_written(data, bad):
    """The detector run's and the model's names are typed on the page and written to the store (the
    run's label set) before any reply is imported: PostgreSQL refused a NUL mid-write, SQLite kept it,
    and broken Unicode failed on both. Now the run is refused as a usage error, naming the field."""
    with ChatServer(mhalo_script) as server:
        with pytest.raises(RunRefused, match="detector run's name contains"):
            run(data, spec(server, detector=bad))
        with pytest.raises(RunRefused, match="model's name contains"):
            run(data, spec(server, model=bad.replace("judge", "gpt")))
    assert server.requests == []
    with read_session(data) as session:
        assert session.scalars(select(m.LabelSet.name).where(m.LabelSet.kind == "detector")).all() == []


def test_a_run_named_longer_than_the_store_keeps_is_refused_before_anything_is_asked(data):
    """The run's name and the model's become its label set's name and version (200 characters at most):
    a longer one was asked for every item and then refused whole by the import on SQLite, or failed the
    store on PostgreSQL, with a message saying the run broke off."""
    with ChatServer(mhalo_script) as server:
        with pytest.raises(RunRefused, match="^the detector run's name is 201 characters long; at most 200"):
            run(data, spec(server, detector="d" * 201))
        with pytest.raises(RunRefused, match="^the model's name is 201 characters long; at most 200"):
            run(data, spec(server, model="m" * 201))
    assert server.requests == []
    with read_session(data) as session:
        assert session.scalars(select(m.LabelSet.name).where(m.LabelSet.kind == "detector")).all() == []


def test_cancel_stops_new_calls_and_a_resume_asks_only_what_was_never_answered(data):
    cancel = threading.Event()
    slow = lambda text, n: answer(tagged(item_number(text), "red cube"), delay_s=0.15)  # noqa: E731

    def stop_after_first_batch(progress: Progress) -> None:
        if progress.saved >= 1:
            cancel.set()

    with ChatServer(slow) as server:
        result = run(
            data, spec(server, concurrency=2, batch_items=1), cancel=cancel, progress=stop_after_first_batch
        )
        assert result.status == "cancelled" and not result.complete and 1 <= result.saved < N_ITEMS
        asked = {item_number(r.user_text) for r in server.requests}
        assert len(asked) < N_ITEMS
        assert live_meta(data)["status"] == "cancelled"
        server.forget()
        rest = run(data, spec(server))
    assert (
        rest.complete and {item_number(r.user_text) for r in server.requests} == set(range(N_ITEMS)) - asked
    )


def test_a_crash_mid_run_loses_no_answer_that_arrived(data):
    class Crashing(DetectorRunStore):
        saves = 0

        def save_outputs(self, outputs, run_record):
            Crashing.saves += 1
            if Crashing.saves == 2:
                raise RuntimeError("the process died")
            return super().save_outputs(outputs, run_record)

    from db.detector_runs import ResponseCache, cache_path, run_detector

    healthy = lambda text, n: answer(tagged(item_number(text), "red cube"))  # noqa: E731
    # The calls are not the subject here: a call slower than the 1 s of the timeout tests on a busy
    # machine would be retried, and a retry is a second request of an item without any answer lost.
    patient = {"timeout_s": 60.0}
    with ChatServer(healthy) as server:
        cache = ResponseCache(cache_path(data))
        with pytest.raises(RuntimeError, match="died"):
            run_detector(
                spec(server, batch_items=2, **patient),
                Crashing(data, DATASET, "judge", OPERATOR),
                api_key=KEY,
                cache=cache,
            )
        cache.close()
        written = len(stored(data, "judge"))
        assert live_meta(data)["complete"] is False and 0 < written < N_ITEMS
        answered = len(server.requests)
        resumed = run(data, spec(server, **patient))
    asked = Counter(item_number(r.user_text) for r in server.requests)
    assert resumed.complete and len(server.requests) == N_ITEMS, asked  # each item asked once over both runs
    # Those written before the crash are skipped; every other answer that arrived comes from the cache.
    assert resumed.already_done == written and resumed.ledger["cached_calls"] == answered - written


def test_the_token_budget_stops_the_run(data):
    with ChatServer(
        lambda text, n: answer(tagged(item_number(text)), prompt_tokens=100, completion_tokens=20)
    ) as server:
        result = run(data, spec(server, concurrency=1, budget_tokens=250))
    assert result.status == "budget" and not result.ok and result.saved == 3 and len(server.requests) == 3
    assert result.ledger["prompt_tokens"] + result.ledger["completion_tokens"] == 360


def test_an_item_without_its_image_is_refused_and_a_text_only_run_sends_none(engine, tmp_path, monkeypatch):
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    make_dataset(engine, tmp_path / "images", missing_image=4)
    healthy = lambda text, n: answer(tagged(item_number(text), "red cube"))  # noqa: E731
    with ChatServer(healthy) as server:
        result = run(engine, spec(server))
        assert result.failed == {
            "item-4": "no image: image '4.png' is not found under the dataset's image folder"
        }
        assert server.count("Item 4:") == 0 and not result.complete
        server.forget()
        text_only = run(engine, spec(server, detector="blind", images=False))
    assert text_only.ok and text_only.complete and not any(r.has_image for r in server.requests)
    assert live_meta(engine, "blind")["settings"]["images"] == "none"


def test_a_label_set_made_otherwise_is_not_run_into(data):
    imported = LabelSetRecord(
        "detector", "from-file", annotations=[Annotations("item-0", raw_output=RawOutputRecord("x", False))]
    )
    import_bundle(
        data,
        Bundle(DatasetRecord(DATASET, "canonical"), label_sets=[imported]),
        source="file",
        actor=OPERATOR,
    )
    with ChatServer(mhalo_script) as server:
        with pytest.raises(RunRefused, match="not made by a live run"):
            run(data, spec(server, detector="from-file"))
        run(data, spec(server, limit=1))
        with pytest.raises(RunRefused, match=r"model 'gpt-4o-mini' → 'other'"):
            run(data, spec(server, model="other"))
        with pytest.raises(RunRefused, match="no item 'nope'"):
            run(data, spec(server, items=("item-1", "nope")))
        with pytest.raises(RunRefused, match="no dataset"):
            run(data, spec(server, dataset="missing"))
        with pytest.raises(RunRefused, match="concurrency"):
            run(data, spec(server, concurrency=0))
    assert len(server.requests) == 1


def test_the_runs_are_named_for_the_report_footers(data):
    with ChatServer(mhalo_script) as server:
        run(data, spec(server, items=("item-0", "item-9")))
    with read_session(data) as session:
        dataset_id = session.scalar(select(m.Dataset.id).where(m.Dataset.name == DATASET))
    runs, sources = run_provenance(data, dataset_id)
    assert list(runs) == ["judge"] and runs["judge"]["settings"]["model"] == "gpt-4o-mini"
    assert sources == {"captioner-a": 8, "gpt-4o": 2}


def test_a_self_ensemble_asks_each_sentence_k_times_and_averages_the_scores(data):
    make_rich_dataset(data)
    with ChatServer(lambda text, n: answer(f'{{"score": {50 + 10 * n}}}')) as server:
        result = run(
            data,
            spec(
                server,
                dataset=RICH,
                strategy="alignbench-cot-score",
                samples=3,
                temperature=1.0,
                images=False,
            ),
        )
    assert result.ok and result.complete and len(server.requests) == 3 * 2 * 3  # items × sentences × samples
    assert {r.body["temperature"] for r in server.requests} == {1.0}
    outputs = stored_in(data, RICH, "judge")
    assert {ext: [(s.score, s.parsed) for s in a.sentence_scores] for ext, a in outputs.items()} == {
        f"scene-{k}": [(70.0, True), (70.0, True)] for k in range(3)
    }
    assert len(json.loads(outputs["scene-0"].raw_output.text)["samples"]) == 3
    assert live_meta(data)["settings"]["aggregation"] == "mean"


def test_tri_he_extracts_once_then_judges_each_triplet(data):
    make_rich_dataset(data)

    def script(text: str, attempt: int):
        if text.startswith("Given a description of the image"):
            return answer('("man", "rides", "horse")\n("horse", "stands on", "grass")\n<Done>')
        if text.endswith('("horse", "stands on", "grass")'):
            return answer(
                'Grass is not in the reference. My answer is "no". The error is related to "object2".'
            )
        return answer('My answer is "yes".')

    with ChatServer(script) as server:
        result = run(data, spec(server, dataset=RICH, strategy="trihe-triplets", detector="tri"))
    assert (
        result.ok
        and result.complete
        and result.not_judged == {"scene-2": "the item has no reference scene graph to judge against"}
    )
    assert len(server.requests) == 2 * 3 and not any(r.has_image for r in server.requests)
    outputs = stored_in(data, RICH, "tri")
    assert sorted(outputs) == ["scene-0", "scene-1"]
    assert [
        (t.subject, t.relation, t.object, t.verdict, t.wrong_part) for t in outputs["scene-0"].triplets
    ] == [
        ("man", "rides", "horse", "yes", None),
        ("horse", "stands on", "grass", "no", "object2"),
    ]


def test_claims_are_verified_with_their_reasons(data):
    make_rich_dataset(data)
    verdicts = '["claim1": "non-hallucination", "reason": "He rides.", "claim2": "hallucination", "reason": "Grass."]'
    with ChatServer(lambda text, n: answer(verdicts)) as server:
        result = run(
            data, spec(server, dataset=RICH, strategy="mhalubench-claims", detector="claims", images=False)
        )
    assert result.ok and result.complete and len(server.requests) == 2
    shown = [r.user_text for r in server.requests]
    assert any("claim1: Scene 0 shows a man riding.\nclaim2: The horse is on sand." in t for t in shown)
    labels = stored_in(data, RICH, "claims")["scene-1"].claim_labels
    assert [(c.index, c.label, c.reason) for c in labels] == [
        (0, "non-hallucination", "He rides."),
        (1, "hallucination", "Grass."),
    ]


def test_only_a_user_who_may_manage_data_starts_a_run(data, monkeypatch):
    from db.access import Actor, Forbidden
    from db.engine import write_session

    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    with write_session(data) as session:
        viewer = m.Annotator(name="viewer", role="viewer")
        session.add(viewer)
        session.flush()
        viewer_id = viewer.id
    refused = pytest.raises(Forbidden, match="cannot import, delete or change datasets")
    with ChatServer(mhalo_script) as server, refused:
        run_live(data, spec(server), Actor(viewer_id, "viewer", "viewer"), api_key=KEY)
    assert server.requests == [] and "judge" not in stored_names(data)


def stored_names(engine) -> list[str]:
    with read_session(engine) as session:
        return list(session.scalars(select(m.LabelSet.name)))


def test_the_ledger_counts_every_run_past_the_listed_ones(data, monkeypatch):
    """The label set's totals summed only the runs still listed: past the 50th run, each new run's cost
    pushed the oldest one's out of the total."""
    import db.detector_runs as runs_module

    monkeypatch.setattr(runs_module, "MAX_RUNS_KEPT", 3)
    store = DetectorRunStore(data, DATASET, "ledgered", OPERATOR)
    store.open_run({"model": "m", "strategy": "mhalo-vanilla", "prompt_hash": "h"}, "run-0")
    for k in range(5):
        with runs_module.write_session(data) as session:
            store._record(
                session,
                {"id": f"run-{k}", "updated": f"2026-01-0{k + 1}", "ledger": {"calls": 1, "cost": 2.0}},
            )
    live = live_meta(data, "ledgered")
    assert [r["id"] for r in live["runs"]] == ["run-2", "run-3", "run-4"]
    assert live["ledger"]["calls"] == 5 and live["ledger"]["cost"] == 10.0
