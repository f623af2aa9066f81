"""A presenter starts a detector run on the Run detector page and watches its track fill in on Compare.

The endpoint is a real chat-completions server on 127.0.0.1 (tests/detectors/chat_server.py) that holds
its answer until the test has seen Compare show the run's track still empty; then it answers, and
Compare must redraw by itself (no reload) with the span the answer tagged. Every step waits for a
condition (the request arriving, the page drawn, the mark appearing), never for a fixed time. On a
store of its own: the run's detector would add a track to the shared store's Compare tests.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import expect

from tests.detectors.chat_server import ChatServer, Reply, answer
from tests.e2e.app_server import RunningApp
from tests.e2e.browser import WAIT_MS, AppTab

DEMO = "Spanlight demo (synthetic)"
ITEM = "demo-004"
DETECTOR = "live-e2e"
VIEWPORT = {"width": 1440, "height": 900}


class HeldAnswers:
    """Tags the first word of the response, once the test lets the answer go."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()
        self.first_word = ""

    def __call__(self, text: str, attempt: int) -> Reply:
        response = text.rsplit("model's response: ", 1)[-1]
        first, rest = response.split(" ", 1)
        self.first_word = first
        self.asked.set()
        self.release.wait(WAIT_MS / 1000)
        return answer(
            "Here is the response with hallucinated content tagged:\n"
            f"<Tagged_Text><hallucination>{first}</hallucination> {rest}</Tagged_Text>"
        )


def test_a_run_started_on_the_page_fills_in_compare(
    private_app: RunningApp, tab: AppTab, artifacts: Path
) -> None:
    script = HeldAnswers()
    with ChatServer(script) as server:
        page = tab.page
        page.set_viewport_size(VIEWPORT)
        tab.goto(f"{private_app.url}/run_detector?{urlencode({'dataset': DEMO})}")
        page.get_by_label("Detector name (its label set)").fill(DETECTOR)
        page.get_by_label("Endpoint base URL").fill(server.base_url)
        page.get_by_label("Model").fill("judge-model")
        page.get_by_label("Only these item ids (comma-separated, optional)").fill(ITEM)
        page.get_by_label("Timeout (s)").fill("600")  # the answer is held while the test looks at Compare
        page.get_by_text("Text only (send no images)").click()
        tab.after_run(page.get_by_role("button", name="Start run").click)
        # "Started", or "Starting" when its checks outlast the page's wait on a busy machine.
        expect(
            page.get_by_text(re.compile("^Start(ed|ing) " + re.escape(f"'{DETECTOR}' on '{DEMO}'")))
        ).to_be_visible()
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
