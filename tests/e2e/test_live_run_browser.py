"""A presenter starts a detector run on the Run detector page and watches its track fill in on Compare.

The endpoint is a real chat-completions server on 127.0.0.1 (tests/detectors/chat_server.py) that holds
its answer until the test has seen Compare show the run's track still empty; then it answers, and
Compare must redraw by itself (no reload) with the span the answer tagged. Every step waits for a
condition (the request arriving, the page drawn, the mark appearing), never for a fixed time. While
a run goes on Compare polls the store, and tracks arranged meanwhile must stay arranged. On a store of
its own: the run's detector would add a track to the shared store's Compare tests.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

from playwright.sync_api import Page, expect

from tests.detectors.chat_server import ChatServer, Reply, answer
from tests.e2e.app_server import RunningApp
from tests.e2e.browser import WAIT_MS, AppTab, HeldStream, RunKinds

DEMO = "Spanlight demo (synthetic)"
ITEM = "demo-004"
LATER_ITEM = "demo-005"  # asked after ITEM, and answered only at the end of a test
DETECTOR = "live-e2e"
VIEWPORT = {"width": 1440, "height": 900}


class HeldAnswers:
    """Tags the first word of the response, once the test lets the answer go: the first call's with
    ``release``, any later call's with ``release_later``."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()
        self.release_later = threading.Event()
        self.first_word = ""

    def __call__(self, text: str, attempt: int) -> Reply:
        response = text.rsplit("model's response: ", 1)[-1]
        first, rest = response.split(" ", 1)
        held = self.release_later if self.asked.is_set() else self.release
        if not self.asked.is_set():
            self.first_word = first
            self.asked.set()
        held.wait(WAIT_MS / 1000)
        return answer(
            "Here is the response with hallucinated content tagged:\n"
            f"<Tagged_Text><hallucination>{first}</hallucination> {rest}</Tagged_Text>"
        )


def _start_run(tab: AppTab, app: RunningApp, server: ChatServer, detector: str, items: str) -> None:
    """Start a run of ``detector`` against ``server`` on the Run detector page, one call at a time."""
    page = tab.page
    page.set_viewport_size(VIEWPORT)
    tab.goto(f"{app.url}/run_detector?{urlencode({'dataset': DEMO})}")
    page.get_by_label("Detector name (its label set)").fill(detector)
    page.get_by_label("Endpoint base URL").fill(server.base_url)
    page.get_by_label("Model").fill("judge-model")
    page.get_by_label("Only these item ids (comma-separated, optional)").fill(items)
    page.get_by_label("Calls at once").fill("1")  # the items are asked, and answered, in order
    page.get_by_label("Timeout (s)").fill("600")  # the answer is held while the test looks at Compare
    page.get_by_text("Text only (send no images)").click()
    tab.after_run(page.get_by_role("button", name="Start run").click)
    # "Started", or "Starting" when its checks outlast the page's wait on a busy machine.
    expect(
        page.get_by_text(re.compile("^Start(ed|ing) " + re.escape(f"'{detector}' on '{DEMO}'")))
    ).to_be_visible()


def test_a_run_started_on_the_page_fills_in_compare(
    private_app: RunningApp, tab: AppTab, artifacts: Path
) -> None:
    script = HeldAnswers()
    with ChatServer(script) as server:
        page = tab.page
        _start_run(tab, private_app, server, DETECTOR, ITEM)
        assert script.asked.wait(WAIT_MS / 1000), "the endpoint got no request"

        # A second tab, as on a presenter's second screen: the run's track is there, still empty.
        viewer = AppTab(page.context.new_page())
        other = viewer.page
        other.set_viewport_size(VIEWPORT)
        viewer.goto(
            f"{private_app.url}/compare?{urlencode({'dataset': DEMO, 'item': ITEM, 'detectors': DETECTOR})}"
        )
        track = other.locator(f'.hs-track[data-track="{DETECTOR}"]')
        expect(track).to_be_visible()
        expect(track.locator("mark.hs-pred")).to_have_count(0)
        viewer.screenshot(artifacts / "live-run-compare-before.png", VIEWPORT["width"], VIEWPORT["height"])

        script.release.set()
        # No reload: the page redraws itself when the run's answer is stored.
        expect(track.locator("mark.hs-pred")).to_have_count(1)
        expect(track.locator("mark.hs-pred")).to_have_text(script.first_word)
        viewer.idle()
        viewer.screenshot(artifacts / "live-run-compare-after.png", VIEWPORT["width"], VIEWPORT["height"])

        # The Run detector page reports the run done, one item written.
        expect(page.get_by_text("1 items written")).to_be_visible()
        assert server.count() == 1
        other.close()


def _tracks(page: Page) -> list[str]:
    return page.eval_on_selector_all(".hs-track", "els => els.map(e => e.dataset.track)")


def test_tracks_arranged_during_a_run_stay_arranged_when_its_answer_arrives(
    private_app: RunningApp, tab: AppTab, artifacts: Path
) -> None:
    """During a run Compare polls the store every second, sending its widgets as the tab shows them. A
    poll sent after the tracks were arranged but before that run's list of tracks reached the tab
    carried the old order, which the server took for the person's pick: the page's next run, when an
    answer arrived, put the tracks back. Here the server's messages are held from "By name" until the
    run's first answer is stored and the page has run for it, so the polls sent meanwhile carry the old
    order; the run's second answer is held to the end, so no later run of the page draws them anew."""
    detector = "live-arranged"
    script = HeldAnswers()
    with ChatServer(script) as server:
        page = tab.page
        try:
            _start_run(tab, private_app, server, detector, f"{ITEM},{LATER_ITEM}")
            assert script.asked.wait(WAIT_MS / 1000), "the endpoint got no request"

            viewer = AppTab(page.context.new_page())
            other = viewer.page
            kinds = RunKinds(other)
            stream = HeldStream(other)
            other.set_viewport_size(VIEWPORT)
            shown = ["sloppy", detector, "eager"]
            query = {"dataset": DEMO, "item": ITEM, "detectors": ",".join(shown)}
            viewer.goto(f"{private_app.url}/compare?{urlencode(query)}")
            track = other.locator(f'.hs-track[data-track="{detector}"]')
            expect(track).to_be_visible()
            assert _tracks(other) == ["Gold", *shown]
            other.get_by_role("button", name="Arrange tracks").click()
            by_name = other.get_by_role("button", name="By name")
            expect(by_name).to_be_visible()
            stream.closed = True
            by_name.click()  # its run goes on at the server; the tab sees none of it
            # a poll sent once the arrangement's run is over at the server
            kinds.wait_until(lambda: max(stream.polls, default=0) >= 1, "a poll after the arrangement's run")
            script.release.set()
            # the arrangement's run, then the page's run that a poll asked for on seeing the answer stored
            kinds.wait_until(lambda: stream.page_runs >= 2, "the page run again after the answer")
            stream.release()
            expect(track.locator("mark.hs-pred")).to_have_count(1)  # the page's last run is drawn
            viewer.idle()
            arranged = ["eager", detector, "sloppy"]
            assert _tracks(other) == ["Gold", *arranged]
            assert parse_qs(urlparse(other.url).query)["detectors"] == [",".join(arranged)]
            other.keyboard.press("Escape")  # the popover
            viewer.screenshot(
                artifacts / "live-run-compare-arranged.png", VIEWPORT["width"], VIEWPORT["height"]
            )
        finally:
            script.release.set()
            script.release_later.set()
        expect(page.get_by_text("2 items written")).to_be_visible()
        other.close()
