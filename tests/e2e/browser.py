"""Waiting on a Streamlit page in the browser: always for a condition, never for a fixed time.

A busy machine makes every step slower but never changes what the page shows once a script run is over,
so each step waits until the run it caused has finished and the page is drawn, then checks the page.
``WAIT_MS`` is the only bound on any wait: it is long, because it only decides how long a broken test
hangs before it fails; a passing test never waits for it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Locator, Page, Route, WebSocket, WebSocketRoute, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

WAIT_MS = 180_000
expect.set_options(timeout=WAIT_MS)  # every `expect(...)` of the browser tests waits as long

# Idle: the app has finished a script run (its root reports "notRunning"; before the first run it says
# "initial"), the running indicator is gone, no element of an earlier run is left (stale), no element
# still shows the skeleton it has while its code loads (on a first visit), and the run's content is on
# the page. Checked on every animation frame; it must hold on two frames in a row,
# so the effects React runs after a paint (where buttons attach their keyboard shortcuts) have run.
_IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const idle = app !== null && app.dataset.testScriptState === "notRunning"
    && !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-stale="true"]')
    && !document.querySelector('[data-testid="stSkeleton"]')
    && document.querySelector('[data-testid="stMain"] [data-testid="stElementContainer"]') !== null;
  window.__idleFrames = idle ? (window.__idleFrames || 0) + 1 : 0;
  return window.__idleFrames >= 2;
}"""

# Where the keyboard is, for a failure's message: the focused element and any open list's options
# (the focused one starred).
_FOCUS_JS = """() => {
  const active = document.activeElement;
  const options = [...document.querySelectorAll('[role="option"]')]
    .map((option) => option.textContent + (option.dataset.focused ? "*" : ""));
  const focus = active === document.body ? "body" : active?.outerHTML.slice(0, 200);
  return {focus, value: active?.value, options,
          state: document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState};
}"""

# Remember the last key event, so a test can see whether a handler took it (called preventDefault).
_LAST_KEY_JS = "addEventListener('keydown', (e) => { window.__lastKeydown = e; }, true)"


def wait_idle(page: Page) -> None:
    """Wait until the page's current script run has finished and its content is drawn."""
    page.evaluate("() => { window.__idleFrames = 0; }")
    page.wait_for_function(_IDLE_JS, timeout=WAIT_MS, polling="raf")


def wait_images_settled(page: Page) -> None:
    """Wait until every image of the page has loaded or failed (so any ``onerror`` has run)."""
    page.wait_for_function("() => [...document.images].every((image) => image.complete)", timeout=WAIT_MS)


# The element's box once it has stopped moving: the same on two animation frames in a row.
_STILL_BOX_JS = """(element) => {
  const r = element.getBoundingClientRect();
  const box = {x: r.x, y: r.y, width: r.width, height: r.height};
  const key = JSON.stringify(box);
  const still = r.width > 0 && element.__lastBox === key;
  element.__lastBox = key;
  return still ? box : false;
}"""


def still_box(locator: Locator) -> dict[str, float]:
    """Where ``locator`` is drawn once it has stopped moving (a chart may still be laying itself out)."""
    handle = locator.element_handle(timeout=WAIT_MS)
    found = locator.page.wait_for_function(_STILL_BOX_JS, arg=handle, timeout=WAIT_MS, polling="raf")
    box: dict[str, float] = found.json_value()
    return box


class AppTab:
    """One browser tab on a Streamlit app, following the script runs it asks for on its websocket.

    The page alone cannot tell "the run my click caused has not started yet" from "it is over": its
    root says "notRunning" in both cases. Counting finished runs is not enough either: a run already
    under way before the action (a cookie's confirmation on a first visit, a live fragment) finishes
    after the action and would pass for its run. So ``after_run`` follows the messages in order: the
    rerun requests the tab sends, each run's start (the server's ``new_session``) and end
    (``script_finished``), and waits until a run that started after the last request sent since the
    action has finished.
    """

    def __init__(self, page: Page) -> None:
        self.page = page
        self._seq = 0  # position of the latest websocket message, sent or received
        self._requests: list[int] = []  # positions of the rerun requests this tab sent
        self._starts: list[int] = []  # positions of the runs' starts
        self._ends: list[int] = []  # positions of the runs' ends
        self._socket: WebSocket | None = None
        page.on("websocket", self._watch)
        page.add_init_script(_LAST_KEY_JS)

    def _watch(self, socket: WebSocket) -> None:
        self._socket = socket
        socket.on("framesent", self._sent)
        socket.on("framereceived", self._received)

    def _sent(self, payload: bytes | str) -> None:
        self._seq += 1
        if isinstance(payload, bytes) and BackMsg.FromString(payload).WhichOneof("type") == "rerun_script":
            self._requests.append(self._seq)

    def _received(self, payload: bytes | str) -> None:
        self._seq += 1
        if not isinstance(payload, bytes):
            return
        kind = ForwardMsg.FromString(payload).WhichOneof("type")
        if kind == "new_session":
            self._starts.append(self._seq)
        elif kind == "script_finished":
            self._ends.append(self._seq)

    @property
    def runs_asked(self) -> int:
        """How many script runs this tab has asked the server for since it opened."""
        return len(self._requests)

    def _answered_since(self, mark: int) -> bool:
        """Whether the tab asked for a run after ``mark`` and a run started after its last such
        request has finished."""
        asked = [r for r in self._requests if r > mark]
        if not asked:
            return False
        started = [s for s in self._starts if s > asked[-1]]
        return bool(started) and any(e > started[0] for e in self._ends)

    def _wait_answered(self, mark: int) -> None:
        """Wait for the answer to the action after ``mark``; when none comes, fail saying what the tab
        sent and received since, and where its keyboard focus was (the step that went nowhere)."""
        deadline = time.monotonic() + WAIT_MS / 1000
        while not self._answered_since(mark):
            left_ms = (deadline - time.monotonic()) * 1000
            if self._socket is None or left_ms <= 0:
                raise AssertionError(f"no script run answered the action: {self._since(mark)}")
            try:
                self._socket.wait_for_event("framereceived", timeout=left_ms)
            except PlaywrightTimeoutError:
                continue  # the deadline has passed: said above, with what the page shows

    def _since(self, mark: int) -> str:
        requests = sum(r > mark for r in self._requests)
        starts, ends = sum(s > mark for s in self._starts), sum(e > mark for e in self._ends)
        return (
            f"{requests} run request(s) sent, {starts} run(s) started and {ends} finished since; "
            f"page: {self.page.evaluate(_FOCUS_JS)}"
        )

    def idle(self) -> None:
        wait_idle(self.page)

    def goto(self, url: str) -> None:
        """Open ``url`` and wait for the first script run of the new page to finish."""
        self.page.goto(url, timeout=WAIT_MS)
        self.idle()

    def reload(self) -> None:
        self.page.reload(timeout=WAIT_MS)
        self.idle()

    def after_run(self, action: Callable[[], object]) -> None:
        """Do ``action`` and wait until the script run it causes has finished and the page is drawn."""
        mark = self._seq
        action()
        self._wait_answered(mark)
        self.idle()

    def press(self, key: str) -> None:
        """Press ``key`` like a person and wait for the run it causes.

        Every shortcut of these pages takes its key with ``preventDefault()``. Right after a page is
        drawn a button's shortcut may not be attached yet; a key that came back not prevented reached
        no handler, so it is pressed again once the page has been drawn anew (never one that did).
        """
        deadline = time.monotonic() + WAIT_MS / 1000

        def press_until_taken() -> None:
            while True:
                self.page.keyboard.press(key)
                if self.page.evaluate("() => window.__lastKeydown?.defaultPrevented === true"):
                    return
                assert time.monotonic() < deadline, f"no handler took the key {key!r}"
                self.idle()

        self.after_run(press_until_taken)

    def screenshot(self, path: Path, width: int, height: int) -> None:
        """The whole page: grow the window to the content (the main area scrolls, not the body)."""
        content = self.page.evaluate(
            "() => Math.max(...['stMain', 'stSidebarContent'].map("
            "id => document.querySelector(`[data-testid=${id}]`)?.scrollHeight ?? 0))"
        )
        self.page.set_viewport_size({"width": width, "height": min(max(height, content + 20), 12_000)})
        self.idle()
        self.page.screenshot(path=str(path))
        self.page.set_viewport_size({"width": width, "height": height})


class HeldElementCode:
    """The code of buttons and of the page's keyboard component, held back from a first visit's page
    until :meth:`release`: keys pressed meanwhile surely come while only the page's text is drawn (on a
    first visit Streamlit loads each kind of element's code when it is first drawn), however fast or slow
    the machine."""

    PATTERN = re.compile(r"/static/js/(Button|BidiComponent)\.[^/]*\.js$")

    def __init__(self, page: Page) -> None:
        self._routes: list[Route] = []
        self._released = False
        page.route(self.PATTERN, self._hold)

    def _hold(self, route: Route) -> None:
        if self._released:
            route.continue_()
        else:
            self._routes.append(route)

    @property
    def asked(self) -> bool:
        """Whether the page has asked for the code held (it is drawing such an element)."""
        return bool(self._routes)

    def release(self) -> None:
        self._released = True
        for route in self._routes:
            route.continue_()


class RunKinds:
    """Counts the tab's finished script runs by kind: whole-page runs and fragment-only runs.

    A run cut short because another was asked for (``FINISHED_EARLY_FOR_RERUN``: two ticks of the
    watcher in a row, or the watcher asking for the page) is neither: what it gave way to is counted.
    """

    def __init__(self, page: Page) -> None:
        self.full = 0
        self.fragment = 0
        self._socket: WebSocket | None = None
        page.on("websocket", self._watch)

    def _watch(self, socket: WebSocket) -> None:
        self._socket = socket
        socket.on("framereceived", self._received)

    def _received(self, payload: bytes | str) -> None:
        if not isinstance(payload, bytes):
            return
        message = ForwardMsg.FromString(payload)
        if message.WhichOneof("type") != "script_finished":
            return
        if message.script_finished == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
            self.fragment += 1
        elif message.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
            self.full += 1

    def wait_until(self, done: Callable[[], bool], what: str) -> None:
        """Wait until ``done()`` holds (the counts change only while a wait reads the socket)."""
        deadline = time.monotonic() + WAIT_MS / 1000
        while not done():
            left_ms = (deadline - time.monotonic()) * 1000
            assert self._socket is not None and left_ms > 0, (
                f"{what}: {self.full} full, {self.fragment} fragment"
            )
            self._socket.wait_for_event("framereceived", timeout=left_ms)

    def wait_fragments(self, count: int) -> None:
        """Wait until ``count`` more fragment runs have finished."""
        target = self.fragment + count
        self.wait_until(lambda: self.fragment >= target, f"{count} fragment runs")


def asks_for_page_run(message: bytes | str) -> bool:
    """Whether a message the tab sends asks for a run of the whole page (not a fragment's, the poll's)."""
    if not isinstance(message, bytes):
        return False
    sent = BackMsg.FromString(message)
    return sent.WhichOneof("type") == "rerun_script" and not sent.rerun_script.fragment_id


def asks_for_run(message: bytes | str) -> bool:
    """Whether a message the tab sends asks for a run (of the page, or of a fragment: a poll)."""
    return isinstance(message, bytes) and BackMsg.FromString(message).WhichOneof("type") == "rerun_script"


class HeldStream:
    """The tab's socket to the server, through the test: while :attr:`closed`, what the server sends is
    held (the tab sees no run, its widgets stay as they were drawn) and the tab's polls are noted;
    :meth:`release` sends what was held, in order, and lets the rest through. Route it before the tab
    opens its page."""

    def __init__(self, page: Page) -> None:
        self.closed = False
        self.held: list[tuple[WebSocketRoute, bytes | str]] = []
        self.page_runs = 0  # whole-page runs finished among the held messages
        self.polls: list[int] = []  # for each poll the tab sent while closed: page_runs held by then
        page.route_web_socket(re.compile(r"/_stcore/stream"), self._route)

    def _route(self, socket: WebSocketRoute) -> None:
        server = socket.connect_to_server()

        def down(message: bytes | str) -> None:
            if not self.closed:
                socket.send(message)
                return
            self.held.append((socket, message))
            if isinstance(message, bytes):
                finished = ForwardMsg.FromString(message)
                ended = finished.WhichOneof("type") == "script_finished"
                self.page_runs += ended and finished.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY

        def up(message: bytes | str) -> None:
            if self.closed and asks_for_run(message) and not asks_for_page_run(message):
                self.polls.append(self.page_runs)
            server.send(message)

        server.on_message(down)
        socket.on_message(up)

    def release(self) -> None:
        self.closed = False
        for socket, message in self.held:
            socket.send(message)
