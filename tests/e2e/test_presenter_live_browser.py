"""Presenter mode as a slide deck, and dashboards that follow the store, in headless Chromium.

Presenter mode: the figure fills the window at 1440×900 and 1920×1080 with every control inside it, the
arrow and Page keys step through the slides, a list jumps to one, and Esc goes back to the page it was
opened from. Live: a label written in another session (here: straight through the db layer) shows on an
open Metrics page and presenter slide without a reload, and while nothing changes the page never reruns
as a whole (only its small watching fragment does).

These tests run their own server on their own copy of the demo: they write gold labels.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, WebSocketRoute, expect

from db.access import OPERATOR
from db.engine import make_engine
from db.repositories import report_inputs as ev
from db.repositories.adjudication import imported_gold_replaced, promote_item
from db.repositories.datasets import get_dataset
from db.repositories.items import get_item
from tests.e2e.app_server import RunningApp, prepare_store, running_app
from tests.e2e.browser import (
    WAIT_MS,
    AppTab,
    HeldElementCode,
    HeldStream,
    RunKinds,
    asks_for_page_run,
    still_box,
)
from tests.e2e.test_annotation_browser import QUIET_JS, WHERE_KEYS_STAND_JS

DEMO = "Spanlight demo (synthetic)"
SIZES = [(1440, 900), (1920, 1080)]
_writes = itertools.count()  # each write marks another word, so every write changes what is scored


@pytest.fixture(scope="module")
def live_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    data_dir = tmp_path_factory.mktemp("presenter-live-e2e")
    with running_app(data_dir, prepare_store(data_dir)) as running:
        yield running


def _open(
    tab: AppTab, app: RunningApp, path: str, query: dict[str, str], size: tuple[int, int] = SIZES[0]
) -> None:
    tab.page.set_viewport_size({"width": size[0], "height": size[1]})
    tab.goto(f"{app.url}/{path}?{urlencode({'dataset': DEMO, **query})}")


def _write_gold(app: RunningApp) -> None:
    """Another session saves a label: the first item's gold spans become one word, another each time."""
    engine = make_engine(app.database_url)
    try:
        dataset = get_dataset(engine, DEMO)
        assert dataset is not None
        index = ev.item_index(engine, dataset.id)
        item = get_item(engine, dataset.id, index.external_ids[0])
        assert item is not None
        word = list(re.finditer(r"\S+", item.response))[next(_writes)]
        span = (word.start(), word.end(), None)
        seen = imported_gold_replaced(engine, dataset.id, index.ids[0], "spans", [span], method="edit")
        promote_item(
            engine,
            dataset.id,
            index.ids[0],
            "spans",
            [span],
            method="edit",
            sources=[],
            actor=OPERATOR,
            replacing=seen.digest,  # the demo's own gold, replaced knowingly
        )
    finally:
        engine.dispose()


def _on_slide_two(tab: AppTab, app: RunningApp) -> None:
    """Open presenter mode on slide 1 and press → once its keys are attached: the deck is on slide 2."""
    _open(tab, app, "presenter", {"slide": "1"})
    _figure(tab.page)
    tab.press("ArrowRight")
    expect(tab.page.get_by_text(re.compile(r"^Slide 2 of"))).to_be_visible()
    expect(tab.page).to_have_url(re.compile(r"[?&]slide=2(&|$)"))


def _heading(page: Page) -> str:
    return page.locator(".st-key-presenter h2").first.inner_text()


def _figure(page: Page) -> None:
    expect(page.locator(".st-key-presenter-stage .main-svg").first).to_be_attached()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_presenter_fills_the_window(
    live_app: RunningApp, tab: AppTab, artifacts: Path, size: tuple[int, int]
) -> None:
    page = tab.page
    width, height = size
    _open(tab, live_app, "presenter", {"slide": "1"}, size)
    _figure(page)
    page.screenshot(path=str(artifacts / f"presenter-{width}x{height}.png"))
    parts = {
        "figure": page.locator('[data-testid="stPlotlyChart"]'),
        "previous": page.get_by_role("button", name=re.compile("Previous")),
        "next": page.get_by_role("button", name=re.compile("Next")),
        "slide list": page.locator(".st-key-presenter-jump"),
        "leave": page.locator(".st-key-presenter-leave button"),
        "title": page.locator(".st-key-presenter h2"),
    }
    boxes = {name: still_box(locator.first) for name, locator in parts.items()}
    for name, box in boxes.items():
        assert box["x"] >= 0 and box["y"] >= 0, (name, box)
        assert box["x"] + box["width"] <= width and box["y"] + box["height"] <= height, (name, box, size)
    figure = boxes["figure"]
    assert figure["width"] * figure["height"] >= 0.75 * width * height, (figure, size)
    # The plot itself is drawn to the figure's box, not at a fixed height inside it.
    drawn = float(page.locator(".st-key-presenter-stage .main-svg").first.get_attribute("height") or 0)
    assert drawn >= figure["height"] - 2, (drawn, figure)


def test_presenter_keys_and_slide_list(live_app: RunningApp, tab: AppTab) -> None:
    page = tab.page
    _open(tab, live_app, "presenter", {"slide": "1"})
    _figure(page)
    first = _heading(page)
    status = re.search(r"Slide 1 of (\d+)", page.get_by_text(re.compile(r"^Slide 1 of")).inner_text())
    assert status is not None
    count = int(status[1])
    for key, slide in (
        ("ArrowRight", 2),
        ("PageDown", 3),
        ("ArrowLeft", 2),
        ("PageUp", 1),
        ("ArrowLeft", count),
    ):
        tab.press(key)
        expect(page).to_have_url(re.compile(rf"[?&]slide={slide}(&|$)"))
        expect(page.get_by_text(re.compile(rf"^Slide {slide} of {count}"))).to_be_visible()
    tab.press("ArrowRight")
    expect(page.locator(".st-key-presenter h2").first).to_have_text(first)

    # The list names every slide; picking one shows it.
    jump = page.locator(".st-key-presenter-jump")
    tab.after_run(lambda: jump.click())
    options = page.get_by_role("option")
    expect(options).to_have_count(count)
    fifth = options.nth(4).inner_text()
    tab.after_run(lambda: options.nth(4).click())
    expect(page).to_have_url(re.compile(r"[?&]slide=5(&|$)"))
    expect(page.locator(".st-key-presenter h2").first).to_have_text(fifth.split(" · ", 1)[1])


def test_the_keys_step_slides_after_the_slide_list(live_app: RunningApp, tab: AppTab) -> None:
    """A slide picked in the list with the mouse left the cursor in the list: → and PageDown then did
    nothing until the presenter clicked elsewhere, and Esc to close the open list left presenter mode."""
    page = tab.page
    _open(tab, live_app, "presenter", {"slide": "1"})
    _figure(page)
    jump = page.locator(".st-key-presenter-jump")
    tab.after_run(lambda: jump.click())
    tab.after_run(lambda: page.get_by_role("option").nth(4).click())
    expect(page).to_have_url(re.compile(r"[?&]slide=5(&|$)"))
    tab.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]slide=6(&|$)"))
    tab.press("PageDown")
    expect(page).to_have_url(re.compile(r"[?&]slide=7(&|$)"))

    # Esc with the list open closes the list only; the deck's keys work on, and the next Esc leaves.
    tab.after_run(lambda: jump.click())
    expect(page.get_by_role("option").first).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("option")).to_have_count(0)
    tab.idle()
    # Still on slide 7 of the deck; the address may say so a poll later (see components.live_refresh).
    assert page.get_by_text(re.compile(r"^Slide 7 of")).is_visible()
    expect(page).to_have_url(re.compile(r"/presenter\?.*[?&]slide=7(&|$)"))
    tab.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]slide=8(&|$)"))
    tab.press("Escape")
    expect(page).not_to_have_url(re.compile(r"/presenter\?"))


def test_quick_presses_each_step_a_slide(live_app: RunningApp, tab: AppTab) -> None:
    """Four presses of → as fast as a presenter clicks are four slides: a press that came while the page
    still answered the one before was merged into it (it ended on slide 3 of 5)."""
    page = tab.page
    _open(tab, live_app, "presenter", {"slide": "1"})
    _figure(page)
    status = re.search(r"Slide 1 of (\d+)", page.get_by_text(re.compile(r"^Slide 1 of")).inner_text())
    assert status is not None and int(status[1]) >= 5
    tab.press("ArrowRight")  # once the page's keys are attached…
    for _ in range(3):
        page.keyboard.press("ArrowRight")  # …three more, with no wait between them
    try:
        expect(page).to_have_url(re.compile(r"[?&]slide=5(&|$)"))
    except AssertionError as failed:  # where the keys stood (once on a busy machine: still on slide 2)
        raise AssertionError(f"{failed}\nkeys and runs: {page.evaluate(WHERE_KEYS_STAND_JS)}") from None
    expect(page.get_by_text(re.compile(rf"^Slide 5 of {status[1]}"))).to_be_visible()
    tab.idle()
    # and no press is still to come: the deck stays on slide 5 (its address may follow a poll later)
    assert page.get_by_text(re.compile(rf"^Slide 5 of {status[1]}")).is_visible()
    expect(page).to_have_url(re.compile(r"[?&]slide=5(&|$)"))


def test_keys_pressed_while_a_first_visit_still_loads_the_buttons_step_once_they_are_drawn(
    live_app: RunningApp, tab: AppTab
) -> None:
    """On a first visit Streamlit loads each kind of element's code when it is first drawn; until then
    the element is a placeholder. → and PageDown pressed once the slide's title could be read, while its
    buttons and the page's keyboard still loaded, reached no handler and were lost: the deck stayed on
    slide 1. They now wait for the buttons, and each steps the deck (three on, one back).

    The test holds the code of buttons and of the page's keyboard component until it has pressed the
    keys, so they surely come while only the title is drawn, however fast or slow the machine."""
    page = tab.page
    held = HeldElementCode(page)
    # Not through the tab: it waits until every element is drawn, and the buttons are held.
    page.goto(f"{live_app.url}/presenter?{urlencode({'dataset': DEMO, 'slide': '1'})}", timeout=WAIT_MS)
    expect(page.locator(".st-key-presenter h2").first).not_to_be_empty()
    # The listener comes with the page's first st.html (its layout, as presenter mode's CSS is one too):
    # the title, a heading, needs no code of its own and may be read a moment before.
    page.wait_for_function("() => window.spanlightEarlyKeys !== undefined", timeout=WAIT_MS)
    expect(page.locator('.st-key-presenter [data-testid^="stBaseButton"]')).to_have_count(0)  # still loading
    assert held.asked, "the buttons' code was asked for and is held"
    for key in ("ArrowRight", "PageDown", "ArrowRight", "ArrowLeft"):
        page.keyboard.press(key)
    held.release()
    expect(page).to_have_url(re.compile(r"[?&]slide=3(&|$)"))
    expect(page.get_by_text(re.compile(r"^Slide 3 of"))).to_be_visible()
    page.wait_for_function(QUIET_JS, timeout=WAIT_MS)
    tab.idle()
    # and no press is still to come: the deck stays on slide 3
    assert page.get_by_text(re.compile(r"^Slide 3 of")).is_visible()
    expect(page).to_have_url(re.compile(r"[?&]slide=3(&|$)"))


def test_a_poll_run_is_not_taken_for_the_run_a_key_asked_for(live_app: RunningApp, tab: AppTab) -> None:
    """The page polls the store every second (a fragment's run). A → let through to its button waited
    for "a run" to start; a poll's run passed for it, so the next → clicked before the awaited run
    began, Streamlit merged the two clicks and the deck went one slide on for two presses. Here the
    page's run is held at the socket while polls go on: the second → still waits, then steps too."""
    page = tab.page
    kinds = RunKinds(page)
    held: list[tuple[WebSocketRoute, bytes | str]] = []
    gate = {"closed": False}

    def hold_page_runs(socket: WebSocketRoute) -> None:
        server = socket.connect_to_server()

        def up(message: bytes | str) -> None:
            if gate["closed"] and asks_for_page_run(message):
                held.append((server, message))
            else:
                server.send(message)

        socket.on_message(up)

    page.route_web_socket(re.compile(r"/_stcore/stream"), hold_page_runs)
    _on_slide_two(tab, live_app)
    gate["closed"] = True
    page.keyboard.press("ArrowRight")  # its run is asked for, and held
    page.keyboard.press("ArrowRight")  # waits behind it
    # (the first waits too when it came during a poll's run: its run is then asked for once that ends)
    kinds.wait_until(lambda: len(held) >= 1, "the first →'s page run asked for")
    polls = kinds.fragment
    kinds.wait_until(lambda: kinds.fragment >= polls + 2, "two polls while the page's run is held")
    tab.idle()
    assert len(held) == 1, f"{len(held)} page runs asked for: the second → did not wait"
    assert page.evaluate("() => window.spanlightKeyQueue.keys.length") == 1
    gate["closed"] = False
    for server, message in held:
        server.send(message)
    expect(page).to_have_url(re.compile(r"[?&]slide=4(&|$)"))
    expect(page.get_by_text(re.compile(r"^Slide 4 of"))).to_be_visible()


def test_a_poll_sent_before_a_step_was_drawn_does_not_take_the_deck_back(
    live_app: RunningApp, tab: AppTab
) -> None:
    """The poll every second sends the page's widgets as the tab shows them. Sent after a → but before
    that run's slide list reached the tab, it carried the list's old number, which the server took for a
    pick in the list: the deck went back a slide (four quick → ended on slide 4 of 5). Here the server's
    messages are held after a → while a label is saved elsewhere, so the polls the tab sends meanwhile
    carry the old number and one of them reruns the page: the deck stays on the slide → went to."""
    page = tab.page
    kinds = RunKinds(page)
    stream = HeldStream(page)
    _on_slide_two(tab, live_app)
    stream.closed = True
    page.keyboard.press("ArrowRight")  # its run goes on at the server; the tab sees none of it
    kinds.wait_until(lambda: len(stream.polls) >= 1, "a poll sent while the step is held")
    _write_gold(live_app)
    # the step's run, then the page's run that a poll asked for on seeing the write
    kinds.wait_until(lambda: stream.page_runs >= 2, "the page run again after the write")
    stream.release()
    tab.idle()
    expect(page.get_by_text(re.compile(r"^Slide 3 of"))).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]slide=3(&|$)"))
    tab.press("ArrowRight")
    expect(page.get_by_text(re.compile(r"^Slide 4 of"))).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]slide=4(&|$)"))


def test_an_address_past_the_last_slide_is_said_through_a_live_rerun(
    live_app: RunningApp, tab: AppTab
) -> None:
    """``?slide=999`` shows the last slide and says so above it, in the words of every page; a label
    saved elsewhere reruns the page and the notice stays; the keys step on from the last slide, and the
    notice goes."""
    page = tab.page
    runs = RunKinds(page)
    _open(tab, live_app, "presenter", {"slide": "999"})
    _figure(page)
    said = page.locator('[data-testid="stAlertContentWarning"]').filter(has_text="The link asked for slide")
    expect(said).to_have_count(1)
    found = re.search(r"The link asked for slide '999', which is not one of '1', .*; showing slide (\d+) instead\.$",
                      said.inner_text())  # fmt: skip
    assert found is not None, said.inner_text()
    count = int(found[1])
    expect(page.get_by_text(re.compile(rf"^Slide {count} of {count} · "))).to_be_visible()
    expect(page).to_have_url(re.compile(rf"[?&]slide={count}(&|$)"))

    full = runs.full
    _write_gold(live_app)
    runs.wait_until(lambda: runs.full > full, "a whole-page run after the write")
    tab.idle()
    expect(said).to_have_count(1)

    tab.press("ArrowLeft")
    expect(page).to_have_url(re.compile(rf"[?&]slide={count - 1}(&|$)"))
    expect(page.get_by_text(re.compile(rf"^Slide {count - 1} of {count} · "))).to_be_visible()
    expect(said).to_have_count(0)
    tab.press("ArrowRight")
    expect(page.get_by_text(re.compile(rf"^Slide {count} of {count} · "))).to_be_visible()
    expect(said).to_have_count(0)


def test_esc_goes_back_to_the_page_presenter_mode_was_opened_from(live_app: RunningApp, tab: AppTab) -> None:
    page = tab.page
    _open(tab, live_app, "agreement", {"kind": "Sentence labels"})
    expect(page.get_by_role("heading", name=re.compile("^Agreement"))).to_be_visible()
    tab.after_run(lambda: page.locator('[data-testid="stSidebarNav"]').get_by_text("Presenter mode").click())
    _figure(page)
    expect(page).to_have_url(re.compile(r"/presenter\?"))
    tab.press("Escape")
    expect(page).to_have_url(re.compile(r"/agreement\?"))
    expect(page.get_by_role("heading", name=re.compile("^Agreement"))).to_be_visible()
    assert "kind=Sentence+labels" in page.url


@pytest.mark.parametrize(
    ("path", "query", "shown"),
    [
        ("metrics", {"view": "MHALO"}, '[data-testid="stCaptionContainer"]:has-text("Computed from")'),
        ("presenter", {"slide": "1"}, '.st-key-presenter-stage [data-testid="stPlotlyChart"]'),
    ],
)
def test_a_label_saved_elsewhere_shows_without_a_reload(
    live_app: RunningApp, tab: AppTab, path: str, query: dict[str, str], shown: str
) -> None:
    page = tab.page
    runs = RunKinds(page)
    _open(tab, live_app, path, query)
    numbers = page.locator(shown).first
    expect(numbers).to_contain_text("data sha256")
    before = numbers.text_content()
    assert before

    # Nothing changes: the watcher runs, the page does not.
    full = runs.full
    runs.wait_fragments(3)
    assert runs.full == full

    _write_gold(live_app)
    expect(numbers).not_to_have_text(before)  # no reload, no click: the page follows the store
    runs.wait_until(lambda: runs.full > full, "a whole-page run after the write")
