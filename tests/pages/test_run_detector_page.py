"""The Run detector page (AppTest) against a real local chat-completions server: a run started from
the form goes on in the server's thread, shows its progress and ledger, can be cancelled, and its
label set shows up with its provenance on Metrics and Compare — with the API key on no page."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from components.run_registry import run_registry
from db.access import OPERATOR
from db.detector_runs import DetectorRunStore
from db.engine import make_engine, write_session
from detectors import background
from detectors.background import LiveRun
from detectors.runner import RunSpec
from detectors.strategies import STRATEGIES, get_strategy
from render.literal_text import WORD_JOINER
from tests.detectors.chat_server import ChatServer, answer, status

APP = str(Path(__file__).resolve().parents[2] / "app.py")
KEY = "sk-page-51c0de-SECRET"
TIMEOUT = 60
NUMBER = re.compile(r"A red cube number (\d+)\.")


def tagging(text: str, attempt: int, delay_s: float = 0.0):
    found = NUMBER.search(text)
    if found is None:  # the item whose text is hostile Markdown: nothing tagged
        return answer("<Tagged_Text>" + text.rsplit("model's response: ", 1)[-1] + "</Tagged_Text>")
    k = found.group(1)
    return answer(
        f"Here is the response with hallucinated content tagged:\n<Tagged_Text>A <hallucination>red cube"
        f"</hallucination> number {k}. The ball is blue.</Tagged_Text>",
        delay_s=delay_s,
    )


@pytest.fixture
def page_store(app_db: str, tmp_path, monkeypatch) -> str:
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SPANLIGHT_TEST_PAGE_KEY", KEY)
    return app_db


def open_page(path: str, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"dataset": "pages-test"})
    at.run()
    at.switch_page(path)
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def fill_form(at: AppTest, server: ChatServer, name: str, **extra: Any) -> None:
    values = {
        "run_detector_name": name,
        "run_detector_base_url": server.base_url,
        "run_detector_model": "captioner-x",
        "run_detector_key_env": "SPANLIGHT_TEST_PAGE_KEY",
    }
    for key, value in (values | extra).items():
        if key == "run_detector_text_only":
            at.checkbox(key=key).set_value(value)
        elif key in ("run_detector_concurrency", "run_detector_limit", "run_detector_timeout"):
            at.number_input(key=key).set_value(value)
        else:
            at.text_input(key=key).input(value)
    at.checkbox(key="run_detector_text_only").check()  # the fixture's images are missing
    next(b for b in at.button if b.label == "Start run").click()
    at.run()
    assert not at.exception, at.exception


def the_run(name: str) -> LiveRun:
    return next(run for run in run_registry().runs() if run.spec.detector == name)


def wait_for(condition, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the run did not get there in time"
        time.sleep(0.05)


def page_text(at: AppTest) -> str:
    """Everything the page sends to the browser, element by element (also widget values and tables)."""
    found: list[str] = []

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            found.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(found)


def test_a_run_started_on_the_page_is_written_and_shown_with_its_provenance(page_store):
    with ChatServer(tagging) as server:
        at = open_page("app_pages/run_detector.py")
        fill_form(at, server, "page-judge")
        assert any("Started" in s.value for s in at.success), [e.value for e in at.error]
        run = the_run("page-judge")
        wait_for(lambda: not run.running)
        at.run()
    assert run.result is not None and run.result.ok and run.result.complete, run.error
    assert run.result.saved == 31 and len(server.requests) == 31
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in server.requests)
    shown = page_text(at)
    assert "31 of 31 items" in shown and "items/s" in shown
    ledger = at.dataframe[0].value
    assert ledger.loc[0, "calls"] == 31 and ledger.loc[0, "tokens in"] == 3100
    assert any("Judge bias" in w.value for w in at.warning)
    assert any("complete" in c.value for c in at.caption)
    assert KEY not in shown

    metrics = open_page("app_pages/paper_metrics.py")
    footers = [c.value for c in metrics.caption if "Computed from" in c.value]
    assert any("Detector run page-judge: captioner-x · mhalo-vanilla #" in f for f in footers)
    assert any("† page-judge: captioner-x judges 30 of the dataset's 31 items" in f for f in footers)
    assert KEY not in page_text(metrics)

    compare = open_page("app_pages/compare.py", item="item-3", detectors="page-judge")
    heads = [m.value for m in compare.markdown if m.value.startswith("**page-judge**")]
    assert heads and "† judges its own model family's text" in heads[0]
    assert KEY not in page_text(compare)


def cancel_a_slow_run(at: Any, name: str) -> Any:
    """Start a run of ``name`` on a slow endpoint from the page ``at``, cancel it from the page once it
    saved an item, and wait until it has stopped; the run."""
    slow = lambda text, attempt: tagging(text, attempt, delay_s=0.2)  # noqa: E731
    with ChatServer(slow) as server:
        fill_form(at, server, name, run_detector_concurrency=1)
        run = the_run(name)
        wait_for(lambda: run.progress is not None and run.progress.saved >= 1)
        at.run()
        at.button(key=f"run_detector_cancel_{run.id}").click()
        at.run()
        wait_for(lambda: not run.running)
    return run


def test_a_running_run_can_be_cancelled_from_the_page(page_store):
    at = open_page("app_pages/run_detector.py")
    run = cancel_a_slow_run(at, "slow-judge")
    assert run.result is not None and run.result.status == "cancelled" and 1 <= run.result.saved < 31
    at.run()
    assert "cancelled" in page_text(at)
    # It said only "N items written, 0 already held; … the label set is incomplete".
    saved = run.result.saved
    warnings = [w.value for w in at.warning]
    assert (
        f"Cancelled; what arrived is kept: {saved} of 31 items written (0 already held), any other answer in "
        f"the response cache; {31 - saved} item(s) left, which running it again under the same name asks for "
        "(nothing else)."
    ) in " ".join(warnings), warnings


def test_a_run_the_store_refuses_is_said_to_be_refused_not_started(page_store):
    """'eager' holds a detector's outputs imported from a file: a live run into it is refused by the
    store, in the run's thread. The page said 'Started' above a run marked failed, 'Not run: …'."""
    with ChatServer(tagging) as server:
        at = open_page("app_pages/run_detector.py")
        fill_form(at, server, "eager")
    assert not at.success, [s.value for s in at.success]
    errors = " ".join(e.value for e in at.error)
    assert (
        "Not started, nothing was called or written: the detector 'eager' already holds outputs that were "
        "not made by a live run (an import?); choose another name."
    ) in errors
    assert server.requests == [] and not [r for r in run_registry().runs() if r.spec.detector == "eager"]


def test_a_run_refused_after_the_wait_for_its_checks_is_never_said_to_have_started(page_store, monkeypatch):
    """Another process's run holds the label set, and a long write holds the store, so the page's run
    is still at its checks when the page's wait for them runs out. The page said "Started", and then
    the run was refused; now it says the run is still starting, and then that it was refused."""
    monkeypatch.setattr(background, "SETTLE_S", 0.5)  # the page's wait, shortened: the store is held longer
    engine = make_engine(page_store)
    try:
        with ChatServer(tagging) as server:
            strategy = next(iter(STRATEGIES))
            settings = RunSpec(
                "pages-test", "held-judge", strategy, server.base_url, "captioner-x", images=False
            ).settings(get_strategy(strategy))
            DetectorRunStore(engine, "pages-test", "held-judge", OPERATOR).open_run(settings, "other-run")
            at = open_page("app_pages/run_detector.py")
            with write_session(engine):  # a long write of another process: the run waits for its turn
                fill_form(at, server, "held-judge")
                run = the_run("held-judge")
                assert not at.success, [s.value for s in at.success]
                assert any("the run is still at its checks" in i.value for i in at.info), at.info
                assert run.state == "starting" and "**starting**" in page_text(at)
            wait_for(lambda: not run.running)
            at.run()
            assert server.requests == []
    finally:
        engine.dispose()
    assert not at.success, [s.value for s in at.success]
    errors = " ".join(e.value for e in at.error).replace(WORD_JOINER, "")
    assert (
        "Not started, nothing was called or written: the detector 'held-judge' is already being run on "
        "'pages-test' (run other-run, started "
    ) in errors


def test_a_second_tab_starting_a_run_already_going_is_refused_naming_it(page_store):
    """Two tabs of one server: the second start of a label set being run is refused, naming the run."""
    import threading

    release = threading.Event()

    def held(text: str, attempt: int):
        release.wait(60)
        return tagging(text, attempt)

    with ChatServer(held) as server:
        try:
            first = open_page("app_pages/run_detector.py")
            fill_form(first, server, "busy-judge", run_detector_concurrency=1, run_detector_timeout=120.0)
            run = the_run("busy-judge")
            second = open_page("app_pages/run_detector.py")
            fill_form(second, server, "busy-judge")
            errors = " ".join(e.value for e in second.error).replace(WORD_JOINER, "")
            assert (
                f"Not started, nothing was called or written: the detector 'busy-judge' is already being run on "
                f"'pages-test' (run {run.id}, started {run.started_at} by 'annotator')"
            ) in errors
            assert "a second run at the same time would pay for every call again" in errors
            assert len(server.requests) == 1
        finally:
            release.set()
            wait_for(lambda: not the_run("busy-judge").running)


def test_a_run_the_endpoint_stops_says_why_and_what_is_left(page_store):
    with ChatServer(lambda text, attempt: status(401, message="key revoked")) as server:
        at = open_page("app_pages/run_detector.py")
        fill_form(at, server, "revoked-judge", run_detector_concurrency=1)
        run = the_run("revoked-judge")
        wait_for(lambda: not run.running)
        at.run()
    warnings = " ".join(w.value for w in at.warning)
    assert (
        "Stopped: the endpoint refused the call (HTTP 401: key revoked); every other call would be refused "
        "alike, so no more were made; what arrived is kept: 0 of 31 items written (0 already held), any "
        "other answer in the response cache; 31 item(s) left"
    ) in warnings
    assert len(server.requests) == 1


def test_answers_cut_at_max_tokens_are_named_on_the_page(page_store):
    def cutting(text: str, attempt: int):
        reply = tagging(text, attempt)
        return replace(reply, finish_reason="length") if "number 3." in text else reply

    with ChatServer(cutting) as server:
        at = open_page("app_pages/run_detector.py")
        fill_form(at, server, "cut-judge", run_detector_limit=5)
        run = the_run("cut-judge")
        wait_for(lambda: not run.running)
        at.run()
    assert run.result is not None and run.result.ok, run.error
    warnings = " ".join(w.value for w in at.warning)
    assert "1 answer(s) were cut at the token limit (finish reason 'length'), in 1 item(s)" in warnings
    cut = next(d.value for d in at.dataframe if "answers cut at max tokens" in d.value.columns)
    assert cut["item"].tolist() == ["item-3"]


def test_an_output_cut_at_max_tokens_says_so_where_it_is_shown(page_store):
    """The run's report named the cut answer, but the item and Compare showed its output as whole."""

    def cutting(text: str, attempt: int):
        reply = tagging(text, attempt)
        return replace(reply, finish_reason="length") if "number 3." in text else reply

    with ChatServer(cutting) as server:
        at = open_page("app_pages/run_detector.py")
        fill_form(at, server, "cut-judge", run_detector_limit=5)
        run = the_run("cut-judge")
        wait_for(lambda: not run.running)
    assert run.result is not None and run.result.ok, run.error
    said = "The endpoint cut this answer at its token limit (finish reason 'length')"
    for item, cut in (("item-3", True), ("item-2", False)):
        compare = open_page("app_pages/compare.py", item=item, detectors="cut-judge")
        (raw,) = [e.label for e in compare.expander if e.label.startswith("Raw output")]
        assert raw == (
            "Raw output (follows the format · CUT at the token limit)"
            if cut
            else "Raw output (follows the format)"
        )
        assert any(said in w.value for w in compare.warning) is cut

        shown = open_page("app_pages/item.py", item=item)
        shown.selectbox(key="item_label_set").set_value(
            next(o for o in shown.selectbox(key="item_label_set").options if "cut-judge" in o)
        ).run()
        (raw,) = [e.label for e in shown.expander if e.label.startswith("Raw detector output")]
        assert ("CUT at the token limit" in raw) is cut
        assert any(said in w.value for w in shown.warning) is cut


def test_the_ledger_says_the_cost_is_unknown_when_the_endpoint_reports_no_usage(page_store):
    def unmetered(text: str, attempt: int):
        return replace(tagging(text, attempt), usage=False)

    with ChatServer(unmetered) as server:
        at = open_page("app_pages/run_detector.py")
        fill_form(at, server, "unmetered-judge", run_detector_limit=4)
        run = the_run("unmetered-judge")
        wait_for(lambda: not run.running)
        at.run()
    costs = [d.value.loc[0, "cost"] for d in at.dataframe if "cost" in d.value.columns]
    assert "unknown (usage not reported for 4 of 4 call(s))" in costs


def test_the_form_refuses_what_cannot_run_before_calling_anything(page_store, monkeypatch):
    monkeypatch.delenv("SPANLIGHT_NO_SUCH_KEY", raising=False)
    with ChatServer(tagging) as server:
        at = open_page("app_pages/run_detector.py")
        fill_form(at, server, "refused", run_detector_key_env="SPANLIGHT_NO_SUCH_KEY")
        errors = " ".join(e.value for e in at.error)
        assert "Not started" in errors and "no environment variable" in errors
        fill_form(at, server, "", run_detector_key_env="")
        assert "name the detector run" in " ".join(e.value for e in at.error)
        # Typed text no store can keep (the run's name) nor any environment holds (the variable's name):
        # refused by field, where the name was written mid-run and the variable's lookup broke the page.
        fill_form(at, server, "refused\x00", run_detector_key_env="KEY\x00X")
        errors = " ".join(e.value for e in at.error)
        assert "the detector run's name contains a NUL character" in errors
        assert "named with letters, digits and underscores only" in errors
        # A key pasted into the field is refused without being shown back.
        fill_form(at, server, "refused", run_detector_key_env="sk-proj-REALKEY-abc123")
        errors = " ".join(e.value for e in at.error)
        assert "named with letters, digits and underscores only" in errors and "REALKEY" not in errors
    assert server.requests == [] and not [
        r for r in run_registry().runs() if r.spec.detector.startswith("refused")
    ]


def test_detector_cells_of_a_self_judging_detector_are_marked():
    import pandas as pd

    from analysis.reports.base import Table
    from analysis.reports.provenance import Provenance
    from components.report_footer import judge_bias_marked, styled

    table = Table("t", "T", pd.DataFrame({"detector": ["judge", "other"], "F1": [0.5, 0.25]}))
    provenance = Provenance("d", ("judge", "other"), 2, "abc", judge_bias=(("judge", "why"),))
    html = judge_bias_marked(styled(table), table.frame, provenance).to_html()
    assert "judge †" in html and "other †" not in html and "0.50" in html
    assert table.frame["detector"].tolist() == ["judge", "other"]


def test_the_progress_line_counts_items_without_an_answer_and_no_time_left_once_ended(page_store):
    """The bar counted an item the endpoint gave no answer for as done, and the line did not say so (a
    timing-out endpoint read as a run nearly done); a cancelled run still said "about 49 s left"."""

    def refusing_one(text: str, attempt: int):
        return status(400, message="image too large") if "number 3." in text else tagging(text, attempt)

    with ChatServer(refusing_one) as server:
        at = open_page("app_pages/run_detector.py")
        fill_form(at, server, "one-refused-judge")
        run = the_run("one-refused-judge")
        wait_for(lambda: not run.running)
        at.run()
    assert run.result is not None and len(run.result.failed) == 1, run.result
    shown = page_text(at)
    assert "31 of 31 items (1 without an answer) · " in shown
    assert "left" not in next(p.text for p in at.get("progress"))

    run = cancel_a_slow_run(at, "cancelled-judge")
    at.run()
    lines = [p.text for p in at.get("progress")]
    assert run.result is not None and run.result.status == "cancelled"
    assert lines and not any("left" in line for line in lines), lines
