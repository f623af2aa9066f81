"""An annotator at work in headless Chromium: mouse on the span page, keyboard on the judging pages.

Each test works as its own user (``?user=e2e-…``) so the tests never see each other's labels in the
shared demo store, and checks what was saved by reading the store from this process, not only the UI.
Streamlit reruns after every key press; a key pressed before the run has finished would land on the
old page, so every step waits until the run it caused is over and drawn (``tests.e2e.browser.AppTab``),
then checks what the page shows.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Locator, Page, WebSocketRoute, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from sqlalchemy import Engine
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from db.access import OPERATOR
from db.engine import make_engine, write_session
from db.repositories import labeling
from db.repositories.annotations import ItemAnnotations, item_annotations, judged_triplets
from db.repositories.annotators import get_or_create_annotator
from db.repositories.datasets import get_dataset, set_dataset_settings
from db.repositories.items import ItemView, get_item
from db.repositories.label_sets import human_label_set, list_label_sets
from tests.e2e.app_server import RunningApp
from tests.e2e.browser import AppTab, HeldElementCode

DEMO = "Spanlight demo (synthetic)"
VIEWPORT = {"width": 1280, "height": 900}
PRIMARY = '[data-testid="stBaseButton-primary"]'  # a chosen label's button
# No click or key waits in the page's queue, and none let through waits for its answer.
QUIET_JS = "() => !window.spanlightKeyQueue?.keys.length && !window.spanlightKeyQueue?.awaiting"

# Viewport box of the nth occurrence of `word` in the span selector's text (inside its shadow root).
WORD_BOX_JS = """(root, [word, nth]) => {
  const text = root.textContent;
  let at = -1;
  for (let i = 0; i <= nth; i++) at = text.indexOf(word, at + 1);
  if (at < 0) throw new Error("no occurrence " + nth + " of " + word);
  const range = document.createRange();
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  let seen = 0, node, startSet = false;
  while ((node = walker.nextNode())) {
    const end = seen + node.data.length;
    if (!startSet && at < end) { range.setStart(node, at - seen); startSet = true; }
    if (startSet && at + word.length <= end) { range.setEnd(node, at + word.length - seen); break; }
    seen = end;
  }
  const box = range.getClientRects()[0];
  return {x: box.left, y: box.top, w: box.width, h: box.height, u16: at};
}"""


# ------------------------------------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def store(app: RunningApp) -> Iterator[Engine]:
    """The app's own store, read from the test process."""
    engine = make_engine(app.database_url)
    yield engine
    engine.dispose()


class Annotator(AppTab):
    """One person's browser tab on the app."""

    def __init__(self, page: Page, app: RunningApp) -> None:
        super().__init__(page)
        self.app = app

    def open(self, path: str, user: str, item: str) -> None:
        self.goto(f"{self.app.url}/{path}?{urlencode({'dataset': DEMO, 'item': item, 'user': user})}")
        expect(self.page.get_by_text(f"Item {item}", exact=False).first).to_be_visible()

    def press(self, key: str, *expectations: tuple[Locator, str]) -> None:
        """Press ``key`` like a person, wait for the run it causes, then check what each locator shows."""
        super().press(key)
        for locator, text in expectations:
            expect(locator).to_contain_text(text)

    def shoot(self, path: Path) -> None:
        self.screenshot(path, VIEWPORT["width"], VIEWPORT["height"])


@pytest.fixture
def annotator(app: RunningApp, page: Page) -> Annotator:
    page.set_viewport_size(VIEWPORT)
    return Annotator(page, app)


def mine(engine: Engine, user: str, external_id: str) -> tuple[ItemView, ItemAnnotations]:
    """The item and what ``user`` saved on it, straight from the store."""
    dataset = get_dataset(engine, DEMO)
    assert dataset is not None
    item = get_item(engine, dataset.id, external_id)
    assert item is not None
    own = [ls for ls in list_label_sets(engine, dataset.id, kind="human") if ls.name == user]
    if not own:
        return item, ItemAnnotations(label_set_id=-1)
    return item, item_annotations(engine, item.id, [own[0].id])[own[0].id]


# ------------------------------------------------------------------------------------------ spans


class SpanText:
    """The span selector's text on the page, and a mouse to use on it."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.text = page.locator(".hs-text")

    def box(self, word: str, nth: int = 0) -> dict:
        return self.text.evaluate(WORD_BOX_JS, [word, nth])

    def drag(self, word: str, nth: int = 0) -> dict:
        box = self.box(word, nth)
        y = box["y"] + box["h"] / 2
        self.page.mouse.move(box["x"] + 1, y)
        self.page.mouse.down()
        self.page.mouse.move(box["x"] + box["w"] - 1, y, steps=8)
        self.page.mouse.up()
        return box

    def drag_between(self, first: str, last: str) -> None:
        """Press in the middle of the word ``first`` and release in the middle of the next ``last``."""
        a = self.box(first)
        text = self.text.evaluate("root => root.textContent")
        b = self.box(last, text[: a["u16"]].count(last))  # the occurrence after `first`
        self.page.mouse.move(a["x"] + a["w"] / 2, a["y"] + a["h"] / 2)
        self.page.mouse.down()
        self.page.mouse.move(b["x"] + b["w"] / 2, b["y"] + b["h"] / 2, steps=8)
        self.page.mouse.up()

    def click(self, word: str, nth: int = 0, *, double: bool = False) -> None:
        box = self.box(word, nth)
        x, y = box["x"] + box["w"] / 2, box["y"] + box["h"] / 2
        if double:
            self.page.mouse.dblclick(x, y)
        else:
            self.page.mouse.click(x, y)

    def marked(self) -> list[str]:
        """Tooltips of the highlighted segments: "type · start–end" per span, in text order."""
        return self.page.locator(".hs-seg.hs-marked").evaluate_all("els => els.map(e => e.title)")


def spans_of(engine: Engine, user: str, external_id: str) -> list[tuple[int, int, str | None]]:
    return [(s.start, s.end, s.type) for s in mine(engine, user, external_id)[1].spans]


def test_mark_spans_with_the_mouse_retype_by_key_reload_delete_and_undo(
    annotator: Annotator, store: Engine, artifacts: Path
) -> None:
    user, item_id = "e2e-spans", "demo-004"  # an emoji and CJK come before the marked words
    me, page = annotator, annotator.page
    me.open("spans", user, item_id)
    item, _ = mine(store, user, item_id)
    text = SpanText(page)
    left = item.response.index("left")  # "… sits in the bottom left" (the circle is bottom right)
    bottom = item.response.index("bottom", item.response.index("blue circle"))
    spatial = "Spatial Attribute"  # the 6th type of the demo's taxonomy: key 6
    both = [(left, left + 4, spatial), (bottom, bottom + 6, "Object")]

    # Drag across a word: saved at once, in code points (the browser counts UTF-16 units).
    assert text.box("left")["u16"] == left + 1, "an emoji before the word makes the two counts differ"
    me.after_run(lambda: text.drag("left"))
    assert spans_of(store, user, item_id) == [(left, left + 4, "Object")]
    expect(page.get_by_text("✓ Saved · added span “left” (Object)")).to_be_visible()
    # The new span is selected: a number key retypes it.
    me.press("6")
    assert spans_of(store, user, item_id) == [(left, left + 4, spatial)]
    # Double-click another word.
    me.after_run(lambda: text.click("bottom", 1, double=True))
    assert spans_of(store, user, item_id) == both
    expect(page.get_by_text("2 span(s) marked by you")).to_be_visible()

    # Reload: both spans are still shown, from the store.
    me.reload()
    expect(page.locator(".hs-seg.hs-marked")).to_have_count(2)
    assert text.marked() == [f"{spatial} · {left}–{left + 4}", f"Object · {bottom}–{bottom + 6}"]

    # Click a span and press Delete: removed; press U: the undo brings it back.
    text.click("left")
    expect(page.locator(".hs-selected-label")).to_contain_text("left")
    me.press("Delete")
    assert spans_of(store, user, item_id) == both[1:]
    expect(page.locator(".hs-seg.hs-marked")).to_have_count(1)
    me.press("u")
    assert spans_of(store, user, item_id) == both
    expect(page.locator(".hs-seg.hs-marked")).to_have_count(2)
    expect(page.get_by_text("✓ Saved · undid: deleted span “")).to_be_visible()
    text.click("bottom", 1)  # a selected span, for the screenshot
    expect(page.locator(".hs-selected-label")).to_contain_text("bottom")
    me.shoot(artifacts / "annotate-spans.png")


def test_a_drag_from_mid_word_marks_whole_words_and_alt_keeps_characters_where_allowed(
    annotator: Annotator, store: Engine, artifacts: Path
) -> None:
    user, item_id = "e2e-snap", "demo-004"
    me, page = annotator, annotator.page
    me.open("spans", user, item_id)
    item, _ = mine(store, user, item_id)
    text = SpanText(page)
    sits = item.response.index("sits in the")

    # Press inside "sits", release inside "the": the whole words are saved, not "ts in th".
    me.after_run(lambda: text.drag_between("sits", "the"))
    assert spans_of(store, user, item_id) == [(sits, sits + len("sits in the"), "Object")]
    expect(page.get_by_text("✓ Saved · added span “sits in the” (Object)")).to_be_visible()

    # Alt held: still whole words while the dataset does not allow character precision …
    page.keyboard.down("Alt")
    me.after_run(lambda: text.drag_between("bottom", "left"))
    page.keyboard.up("Alt")
    bottom = item.response.index("bottom", sits)
    whole = spans_of(store, user, item_id)
    assert [item.response[start:end] for start, end, _ in whole] == ["sits in the", "bottom left."]
    assert whole[1][0] == bottom  # released inside "left": its whole token, full stop included

    # … and exact characters once it does (for OCR-type errors).
    dataset = get_dataset(store, DEMO)
    assert dataset is not None
    set_dataset_settings(store, dataset.id, char_precision=True, actor=OPERATOR)
    try:
        me.reload()
        expect(page.locator(".hs-hint")).to_contain_text("hold Alt")
        page.keyboard.down("Alt")
        me.after_run(lambda: text.drag_between("sits", "the"))
        page.keyboard.up("Alt")
        ((start, end, _),) = set(spans_of(store, user, item_id)) - set(whole)
        exact = item.response[start:end]
        assert " in " in exact and exact != "sits in the" and exact in "sits in the", exact
        me.shoot(artifacts / "annotate-spans-whole-words.png")
    finally:
        set_dataset_settings(store, dataset.id, char_precision=False, actor=OPERATOR)


# --------------------------------------------------------------------------------------- sentences


def sentence_row(page: Page, index: int) -> Locator:
    return page.locator(f".st-key-sentence_row_{index}")


def test_label_sentences_with_the_keyboard_only(annotator: Annotator, store: Engine, artifacts: Path) -> None:
    user, item_id = "e2e-sentences", "demo-002"
    me, page = annotator, annotator.page
    me.open("sentences", user, item_id)
    item, _ = mine(store, user, item_id)
    assert len(item.sentences) == 6
    row = lambda i: sentence_row(page, i)  # noqa: E731
    expect(row(0)).to_contain_text("▶ Sentence 1 · —")

    me.press("1", (row(0), "Sentence 1 · ✓ Correct"), (row(1), "▶ Sentence 2"))
    me.press("2", (row(1), "Sentence 2 · ✗ Incorrect"), (row(2), "▶ Sentence 3"))
    me.press("k", (row(1), "▶ Sentence 2"))
    me.press("3", (row(1), "Sentence 2 · ? Unknown"), (row(2), "▶ Sentence 3"))
    me.press("j", (row(3), "▶ Sentence 4"))
    me.press("1", (row(3), "Sentence 4 · ✓ Correct"), (row(4), "▶ Sentence 5"))
    me.press("ArrowUp", (row(3), "▶ Sentence 4"))
    me.press("ArrowUp", (row(2), "▶ Sentence 3"))
    me.press("3", (row(2), "Sentence 3 · ? Unknown"), (row(3), "▶ Sentence 4"))
    me.press("ArrowDown", (row(4), "▶ Sentence 5"))
    me.press("2", (row(4), "Sentence 5 · ✗ Incorrect"), (row(5), "▶ Sentence 6"))
    me.press("1", (row(5), "Sentence 6 · ✓ Correct"))

    expected = {0: "correct", 1: "unknown", 2: "unknown", 3: "correct", 4: "incorrect", 5: "correct"}
    saved = mine(store, user, item_id)[1].sentence_labels
    assert {i: v.label for i, v in saved.items()} == expected
    expect(page.get_by_text("Every sentence is labeled")).to_be_visible()
    expect(page.get_by_text("6 / 6 sentences labeled")).to_be_visible()

    # Reload: the labels come back from the store.
    me.reload()
    badges = {"correct": "✓ Correct", "incorrect": "✗ Incorrect", "unknown": "? Unknown"}
    for index, value in expected.items():
        expect(row(index)).to_contain_text(f"Sentence {index + 1} · {badges[value]}")
    expect(page.get_by_text("Every sentence is labeled")).to_be_visible()
    me.shoot(artifacts / "annotate-sentences.png")


def test_an_item_labeled_before_is_not_done_by_opening_it_and_d_finishes_it(
    annotator: Annotator, store: Engine
) -> None:
    """Every sentence labeled before the visit (an import, another tab): opening the item marked it done
    and counted it. Now it says so and waits for D."""
    from db.repositories.queue import item_status

    me, page = annotator, annotator.page
    user, item_id = "e2e-labeled-before", "demo-008"
    dataset = get_dataset(store, DEMO)
    assert dataset is not None
    who = get_or_create_annotator(store, user).id
    own = human_label_set(store, dataset.id, who).id
    item = get_item(store, dataset.id, item_id)
    assert item is not None
    for sentence in item.sentences:
        labeling.set_sentence_label(store, own, item.id, sentence.index, "unknown", who)
    me.open("sentences", user, item_id)
    expect(page.get_by_text("Every sentence is labeled. Press D (Item done)")).to_be_visible()
    expect(page.get_by_text(re.compile(r"^0 / \d+ done$"))).to_be_visible()
    assert item_status(store, own, item.id, "sentences") is None
    me.press("d")
    expect(page.get_by_text("Status: done")).to_be_visible()
    expect(page.get_by_text(re.compile(r"^1 / \d+ done$"))).to_be_visible()
    expect(page.get_by_text("Every sentence is labeled. Press N")).to_be_visible()
    status = item_status(store, own, item.id, "sentences")
    assert status is not None and status.status == "done"


def test_jump_to_an_item_then_label_it_and_move_on_by_keys(
    annotator: Annotator, store: Engine, artifacts: Path
) -> None:
    """Enter in the jump box opens the item, empties the box and gives the keys back to the page: the
    next key labels the item jumped to, and N then moves on from it (not back to it)."""
    user = "e2e-jump"
    me, page = annotator, annotator.page
    me.open("sentences", user, "demo-002")
    box = page.get_by_placeholder("jump to item id…")
    box.click()
    box.fill("demo-012")
    me.after_run(lambda: box.press("Enter"))
    expect(page.get_by_text("Item demo-012", exact=False).first).to_be_visible()
    expect(box).to_have_value("")
    expect(box).not_to_be_focused()
    me.press("1", (sentence_row(page, 0), "Sentence 1 · ✓ Correct"))
    assert {i: v.label for i, v in mine(store, user, "demo-012")[1].sentence_labels.items()} == {0: "correct"}
    me.press("n")
    expect(page.get_by_text("Item demo-013", exact=False).first).to_be_visible()
    me.shoot(artifacts / "annotate-after-jump.png")


def test_label_keys_typed_faster_than_the_page_answers_are_all_saved(
    annotator: Annotator, store: Engine
) -> None:
    """Streamlit merges two presses of one button that reach the server before its run starts into one
    click; a key pressed while the page still answers the one before waits its turn instead."""
    user, item_id = "e2e-quick-keys", "demo-005"
    me, page = annotator, annotator.page
    me.open("sentences", user, item_id)
    item, _ = mine(store, user, item_id)
    n = len(item.sentences)
    expect(sentence_row(page, 0)).to_contain_text("▶ Sentence 1 · —")
    for key in "1" * (n - 1) + "2":
        page.keyboard.press(key, delay=20)  # one key after another, as fast as a held-down key repeats
    expect(page.get_by_text(f"{n} / {n} sentences labeled")).to_be_visible()
    me.idle()
    saved = mine(store, user, item_id)[1].sentence_labels
    assert {i: v.label for i, v in saved.items()} == {
        **{i: "correct" for i in range(n - 1)},
        n - 1: "incorrect",
    }


def test_label_keys_typed_while_the_page_still_loads_its_buttons_are_all_saved(
    annotator: Annotator, store: Engine
) -> None:
    """On a first visit Streamlit loads each kind of element's code when it is first drawn; until then
    the element is a placeholder. Keys typed once the sentences can be read, while the buttons and the
    page's keyboard are still loading, reached no handler and were lost without a word (all four of
    "2 2 2 1" on a busy machine). They now wait for the buttons, as keys typed during a run do.

    The test holds the code of buttons and of the page's keyboard component until it has typed, so the
    keys surely come while only the text is drawn, however fast or slow the machine."""
    user, item_id = "e2e-early-keys", "demo-003"
    page = annotator.page
    held = HeldElementCode(page)
    page.goto(f"{annotator.app.url}/sentences?{urlencode({'dataset': DEMO, 'item': item_id, 'user': user})}")
    expect(sentence_row(page, 0).get_by_text("A sign in the top right")).to_be_visible()
    expect(sentence_row(page, 0).get_by_role("button")).to_have_count(0)  # the buttons still load
    assert held.asked, "the buttons' code was asked for and is held"
    for key in "2221":
        page.keyboard.press(key)
    held.release()
    expect(page.get_by_text("4 / 4 sentences labeled")).to_be_visible()
    page.wait_for_function(QUIET_JS)
    annotator.idle()
    saved = mine(store, user, item_id)[1].sentence_labels
    assert {i: v.label for i, v in saved.items()} == {
        0: "incorrect",
        1: "incorrect",
        2: "incorrect",
        3: "correct",
    }


def test_a_drag_begun_before_the_last_save_is_answered_marks_the_words_dragged(
    annotator: Annotator, store: Engine
) -> None:
    """An annotator marks one word and at once starts dragging across the next words: the answer to
    the first save redraws the selector while the button is still down, and the drag must still end
    in the words it covered (it once began at the response's first character)."""
    user, item_id = "e2e-quick", "demo-004"
    me, page = annotator, annotator.page
    me.open("spans", user, item_id)
    item, _ = mine(store, user, item_id)
    text = SpanText(page)
    green = item.response.index("green")
    purple = item.response.index("purple circle")
    held: dict[str, float] = {}

    def mark_then_hold() -> None:
        text.drag("green")  # saved by the run this action waits for …
        start = text.box("purple")
        page.mouse.move(start["x"] + 2, start["y"] + start["h"] / 2)
        page.mouse.down()  # … which answers while this button is down
        held.update(text.box("circle"))

    me.after_run(mark_then_hold)
    page.mouse.move(held["x"] + held["w"] - 2, held["y"] + held["h"] / 2, steps=6)
    me.after_run(page.mouse.up)

    assert spans_of(store, user, item_id) == [
        (green, green + len("green"), "Object"),
        (purple, purple + len("purple circle"), "Object"),
    ]
    expect(page.locator(".hs-seg.hs-marked")).to_have_count(2)


# A save that waited longer than the selector waits for its answer (5 s, on a very busy machine) lets the
# second mark go out on its own, as a plain mark the key then retypes: the same spans, another receipt.
_QUICK_TYPE_RECEIPT = re.compile(
    r"✓ Saved · (added|retyped) span “purple” \((Object → )?Numerical Attribute\)"
)


def test_a_type_key_right_after_a_quick_second_mark_types_that_mark(
    annotator: Annotator, store: Engine
) -> None:
    """Two words double-clicked in quick succession, then at once a type key: the key is for the word
    just marked, whose save waits behind the first (it used to change only the next span's type).

    The test holds the store's write turn while it marks, so the first save is surely still waiting
    when the second word is marked and the key pressed, however fast or slow the machine: left to
    chance, a quick answer to the first save made the second word a plain mark that the key retyped."""
    user, item_id = "e2e-quick-type", "demo-004"
    me, page = annotator, annotator.page
    me.open("spans", user, item_id)
    item, _ = mine(store, user, item_id)
    text = SpanText(page)
    green, purple = item.response.index("green"), item.response.index("purple")

    def burst() -> None:
        with write_session(store, bookkeeping=True):  # the app's save of "green" waits for the store
            text.click("green", double=True)
            expect(page.locator(".hs-saving")).to_be_visible()
            text.click("purple", double=True)
            page.keyboard.press("3")

    me.after_run(burst)
    expect(page.get_by_text(_QUICK_TYPE_RECEIPT)).to_be_visible()
    assert spans_of(store, user, item_id) == [
        (green, green + len("green"), "Object"),
        (purple, purple + len("purple"), "Numerical Attribute"),
    ]


def test_delete_right_after_a_quick_mark_and_type_deletes_that_mark(
    annotator: Annotator, store: Engine
) -> None:
    """A word marked and typed, a second word marked and typed, then at once Delete: the key is for
    the word just marked, as the page shows it selected, though its save still waits behind the first.
    It used to be dropped (the second word stayed), or to delete the first word instead.

    The test holds the store's write turn while it marks and types, so the first save is surely still
    waiting when the later keys are pressed, however fast or slow the machine."""
    user, item_id = "e2e-quick-delete", "demo-008"
    me, page = annotator, annotator.page
    me.open("spans", user, item_id)
    item, _ = mine(store, user, item_id)
    text = SpanText(page)
    yellow = item.response.index("yellow")

    def burst() -> None:
        with write_session(store, bookkeeping=True):  # the app's save of "yellow" waits for the store
            text.click("yellow", double=True)
            expect(page.locator(".hs-saving")).to_be_visible()
            page.keyboard.press("3")
            text.click("blue", double=True)
            page.keyboard.press("5")
            page.keyboard.press("Delete")

    me.after_run(burst)
    expect(page.locator(".hs-saving")).to_be_hidden()
    me.idle()
    assert spans_of(store, user, item_id) == [(yellow, yellow + len("yellow"), "Numerical Attribute")]
    expect(page.locator(".hs-seg.hs-marked")).to_have_count(1)


def test_a_first_visit_asks_for_no_run_but_the_annotators_own(annotator: Annotator, store: Engine) -> None:
    """Opening a page remembers its dataset in a cookie without asking for a run: a run asked for
    right after the first one used to take over the run of a key pressed in that moment, which lost the
    key (nothing saved, no receipt)."""
    user, item_id = "e2e-first-visit", "demo-001"
    me, page = annotator, annotator.page
    me.open("sentences", user, item_id)
    me.press("2", (sentence_row(page, 0), "Sentence 1 · ✗ Incorrect"))
    assert mine(store, user, item_id)[1].sentence_labels[0].label == "incorrect"
    assert me.runs_asked == 2, "only the page's first run and the key's were asked for"
    assert any(cookie["name"].startswith("spanlight_dataset") for cookie in page.context.cookies())


def test_correct_on_a_sentence_with_my_span_needs_the_override(
    annotator: Annotator, store: Engine, artifacts: Path
) -> None:
    user, item_id = "e2e-consistency", "demo-005"
    me, page = annotator, annotator.page
    # This annotator marked "two" in the second sentence as hallucinated (on the span page, earlier).
    dataset = get_dataset(store, DEMO)
    assert dataset is not None
    who = get_or_create_annotator(store, user)
    label_set = human_label_set(store, dataset.id, who.id)
    item, _ = mine(store, user, item_id)
    second = item.sentences[1]
    two = item.response.index("two", second.start)
    labeling.add_span(store, label_set.id, item.id, two, two + 3, "Numerical Attribute", who.id)

    me.open("sentences", user, item_id)
    row = lambda i: sentence_row(page, i)  # noqa: E731
    me.press("j", (row(1), "▶ Sentence 2"))
    me.press("1", (row(1), "contains a span you marked as hallucinated (“two”)"))
    assert 1 not in mine(store, user, item_id)[1].sentence_labels  # nothing saved
    expect(row(1)).to_contain_text("Sentence 2 · —")
    me.shoot(artifacts / "annotate-sentences-consistency.png")

    me.after_run(page.get_by_role("button", name="Save as correct anyway").click)
    expect(row(1)).to_contain_text("(confirmed despite a span)")
    saved = mine(store, user, item_id)[1].sentence_labels[1]
    assert (saved.label, saved.override) == ("correct", True)
    expect(page.get_by_text("contains a span you marked as hallucinated")).to_have_count(0)
    expect(row(2)).to_contain_text("▶ Sentence 3")


# ---------------------------------------------------------------------------------- claims, triplets


def test_judge_the_claims_of_an_item_with_the_keyboard(
    annotator: Annotator, store: Engine, artifacts: Path
) -> None:
    user, item_id = "e2e-claims", "demo-003"
    me, page = annotator, annotator.page
    me.open("claims", user, item_id)
    item, _ = mine(store, user, item_id)
    assert len(item.claims) == 8
    row = lambda i: page.locator(f".st-key-claim_row_{i}")  # noqa: E731
    judged = lambda n: (page.get_by_text(f"{n} / 8 claims judged"), f"{n} / 8")  # noqa: E731

    me.press("2", judged(1), (row(1), "▶ 2."))
    me.press("1", judged(2), (row(2), "▶ 3."), (row(1), "Type"))  # its type and reason open
    for n in range(3, 6):
        me.press("2", judged(n), (row(n), f"▶ {n + 1}."))
    me.press("k", (row(4), "▶ 5."))
    me.press("1", (row(5), "▶ 6."), (row(4), "Type"))  # changed my mind on claim 5
    me.press("2", judged(6), (row(6), "▶ 7."))
    me.press("j", (row(7), "▶ 8."))
    me.press("1", judged(7), (row(7), "Type"))
    me.press("k", (row(6), "▶ 7."))
    me.press("2", judged(8), (page.get_by_text("Every claim is judged"), "Every claim"))

    saved = mine(store, user, item_id)[1].claim_labels
    hallucinated = {1, 4, 7}
    assert {i: v.label for i, v in saved.items()} == {
        i: "hallucination" if i in hallucinated else "non-hallucination" for i in range(8)
    }
    me.shoot(artifacts / "annotate-claims.png")


def test_judge_the_triplets_of_an_item_with_the_keyboard(
    annotator: Annotator, store: Engine, artifacts: Path
) -> None:
    user, item_id = "e2e-triplets", "demo-001"
    me, page = annotator, annotator.page
    me.open("triplets", user, item_id)
    source_title = page.get_by_role("combobox", name="Triplets extracted by").input_value()
    row = lambda i: page.locator('[class*="st-key-triplet_row_"]').nth(i)  # noqa: E731
    judged = lambda n: (page.get_by_text(f"{n} / 5 triplets judged"), f"{n} / 5")  # noqa: E731

    wrong = lambda i, part: row(i).get_by_role("button", name=part)  # noqa: E731
    chosen = lambda i, part: row(i).locator(PRIMARY, has_text=part)  # noqa: E731

    me.press("1", judged(1), (row(1), "▶"))
    me.press("2", judged(2))
    expect(wrong(1, "Subject")).to_be_visible()  # "no" asks which part is wrong
    me.press("3", (row(2), "▶"))
    expect(chosen(1, "Subject")).to_be_visible()
    me.press("1", judged(3), (row(3), "▶"))
    me.press("2", judged(4))
    expect(wrong(3, "Relation")).to_be_visible()
    me.press("4", (row(4), "▶"))
    expect(chosen(3, "Relation")).to_be_visible()
    me.press("k", (row(3), "▶"))
    me.press("j", (row(4), "▶"))
    me.press("2", judged(5), (page.get_by_text("Every triplet is judged"), "Every triplet"))
    me.press("5")
    expect(chosen(4, "Object")).to_be_visible()

    dataset = get_dataset(store, DEMO)
    assert dataset is not None
    sets = list_label_sets(store, dataset.id)
    source = next(ls for ls in sets if ls.title == source_title)
    own = next(ls for ls in sets if ls.kind == "human" and ls.name == user)
    item, _ = mine(store, user, item_id)
    verdicts = [(t.verdict, t.wrong_part) for t in judged_triplets(store, item.id, source.id, own.id)]
    assert verdicts == [
        ("yes", None),
        ("no", "object1"),
        ("yes", None),
        ("no", "relation"),
        ("no", "object2"),
    ]
    me.shoot(artifacts / "annotate-triplets.png")


# --------------------------------------------------------------------------------- response scores


def test_score_a_response_and_flag_it_with_the_keyboard(
    annotator: Annotator, store: Engine, artifacts: Path
) -> None:
    user, item_id = "e2e-scores", "demo-005"
    me, page = annotator, annotator.page
    me.open("score_responses", user, item_id)

    def rated() -> tuple[float, bool | None] | None:
        found = mine(store, user, item_id)[1].response_score
        return None if found is None else (found.score, found.hallucination)

    me.press("4", (page.get_by_text("This response is scored"), "scored"))
    assert rated() == (4.0, None)
    me.press(
        "h",
        (page.get_by_text("✓ Saved · response scored 4 on the 0–6 scale, hallucination"), "hallucination"),
    )
    assert rated() == (4.0, True)
    me.press(
        "0",
        (
            page.get_by_text("✓ Saved · response scored 0 on the 0–6 scale, hallucination"),
            "0 on the 0–6 scale",
        ),
    )
    assert rated() == (0.0, True)  # a new score keeps the flag
    me.press("g", (page.get_by_text("✓ Saved · response scored 0 on the 0–6 scale, no hallucination"), "no"))
    assert rated() == (0.0, False)
    me.press(
        "u",
        (page.get_by_text("✓ Saved · undid: response scored 0 on the 0–6 scale, no hallucination"), "undid"),
    )
    assert rated() == (0.0, True)
    me.shoot(artifacts / "score-responses.png")


# ------------------------------------------------------------------------ keyboard reach and view

SMALL_WINDOW = {"width": 1440, "height": 900}


def test_the_current_unit_stays_in_view_as_keys_move_it(annotator: Annotator, artifacts: Path) -> None:
    """Hallucination verdicts open a Type and Reason row under each claim, so the list outgrows the
    window; after every key press the current claim (and, on sentences, the current sentence under the
    Error type boxes) is fully in view."""
    me, page = annotator, annotator.page
    page.set_viewport_size(SMALL_WINDOW)
    me.open("claims", "e2e-in-view", "demo-003")
    for n in range(1, 8):
        me.press("1", (page.locator(f".st-key-claim_row_{n}"), f"▶ {n + 1}."))
        expect(page.locator(f".st-key-claim_row_{n}")).to_be_in_viewport(ratio=1)
    me.screenshot(artifacts / "annotate-claims-in-view.png", **SMALL_WINDOW)

    me.open("sentences", "e2e-in-view", "demo-002")
    for n in range(1, 6):
        me.press("2", (sentence_row(page, n), f"▶ Sentence {n + 1}"))
        expect(sentence_row(page, n)).to_be_in_viewport(ratio=1)

    me.open("triplets", "e2e-in-view", "demo-001")
    row = lambda i: page.locator('[class*="st-key-triplet_row_"]').nth(i)  # noqa: E731
    for n in range(1, 5):
        me.press("2")
        me.press("3", (row(n), "▶"))
        expect(row(n)).to_be_in_viewport(ratio=1)


def test_every_type_and_error_type_has_a_key_and_question_mark_lists_them(
    annotator: Annotator, store: Engine, artifacts: Path
) -> None:
    me, page = annotator, annotator.page
    page.set_viewport_size(SMALL_WINDOW)
    user, item_id = "e2e-keys", "demo-004"

    # Span page: all twelve MHALO types show a key; the twelfth (Spatial Relation) is W.
    me.open("spans", user, item_id)
    types = page.locator(".hs-type")
    expect(types).to_have_count(12)
    assert [types.nth(i).locator("kbd").inner_text() for i in (9, 10, 11)] == ["0", "Q", "W"]
    item, _ = mine(store, user, item_id)
    left = item.response.index("left")
    text = SpanText(page)
    me.after_run(lambda: text.drag("left"))
    me.press("w")
    assert spans_of(store, user, item_id) == [(left, left + 4, "Spatial Relation")]
    me.press("q")
    assert spans_of(store, user, item_id) == [(left, left + 4, "Numerical Relation")]
    expect(
        page.get_by_text("✓ Saved · retyped span “left” (Spatial Relation → Numerical Relation)")
    ).to_be_visible()

    # `?` lists the page's keys; Esc closes the list.
    page.keyboard.press("?")
    keys = page.get_by_role("dialog", name="Keys of this page")
    expect(keys).to_contain_text("remove the selected span")
    me.shoot(artifacts / "keys-overlay-spans.png")
    page.keyboard.press("Escape")
    expect(keys).to_have_count(0)

    # Sentences: E opens the current sentence's Error type; typing filters it, Enter saves it.
    me.open("sentences", user, "demo-002")
    me.press("2", (sentence_row(page, 1), "▶ Sentence 2"))
    me.press("k", (sentence_row(page, 0), "▶ Sentence 1"))
    page.keyboard.press("e")
    page.keyboard.type("spatial rel")
    expect(page.get_by_role("option", name="Spatial Relation")).to_be_visible()
    me.after_run(lambda: page.keyboard.press("Enter"))
    expect(page.get_by_text("✓ Saved · sentence 1 → incorrect")).to_be_visible()
    saved = mine(store, user, "demo-002")[1].sentence_labels[0]
    assert (saved.label, saved.error_type) == ("incorrect", "Spatial Relation")
    # Right after 2 the cursor is on the next sentence, and the Error type box opens under the one just
    # marked: E opens that one (before, E found no box on the current sentence and did nothing).
    me.press("j", (sentence_row(page, 1), "▶ Sentence 2"))
    me.press("j", (sentence_row(page, 2), "▶ Sentence 3"))
    me.press("2", (sentence_row(page, 3), "▶ Sentence 4"))
    page.keyboard.press("e")
    page.keyboard.type("color")
    # The list has followed the typing before Enter picks from it (on a busy machine it had not yet, and
    # Enter picked nothing): the box under sentence 3 holds the typing and its one option is the one
    # Enter picks.
    expect(sentence_row(page, 2).get_by_role("combobox", name="Error type")).to_be_focused()
    expect(page.locator('[role="option"][data-focused="true"]')).to_have_text("Color Attribute")
    me.after_run(lambda: page.keyboard.press("Enter"))
    expect(page.get_by_text("✓ Saved · sentence 3 → incorrect")).to_be_visible()
    saved = mine(store, user, "demo-002")[1].sentence_labels[2]
    assert (saved.label, saved.error_type) == ("incorrect", "Color Attribute")
    assert 3 not in mine(store, user, "demo-002")[1].sentence_labels  # the current one is untouched
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keys of this page")).to_contain_text("error type")
    me.shoot(artifacts / "keys-overlay-sentences.png")
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keys of this page")).to_have_count(0)

    # Claims: T opens the current claim's Type.
    me.open("claims", user, "demo-003")
    me.press("1", (page.locator(".st-key-claim_row_1"), "▶ 2."))
    me.press("k", (page.locator(".st-key-claim_row_0"), "▶ 1."))
    page.keyboard.press("t")
    page.keyboard.type("object")
    # the list has followed the typing: its one option, the one Enter picks, is focused
    expect(page.locator('[role="option"][data-focused="true"]')).to_have_text("object")
    me.after_run(lambda: page.keyboard.press("Enter"))
    assert mine(store, user, "demo-003")[1].claim_labels[0].type == "object"
    # … and right after 1, T and W open the fields of the claim just judged, not of the next one.
    me.press("j", (page.locator(".st-key-claim_row_1"), "▶ 2."))
    me.press("1", (page.locator(".st-key-claim_row_2"), "▶ 3."))
    page.keyboard.press("w")
    page.keyboard.type("no such sign")
    me.after_run(lambda: page.keyboard.press("Enter"))
    judged = mine(store, user, "demo-003")[1].claim_labels
    assert (judged[1].label, judged[1].reason) == ("hallucination", "no such sign")
    assert 2 not in judged


def test_a_key_with_nothing_to_act_on_says_why(annotator: Annotator, store: Engine, artifacts: Path) -> None:
    """T right after "not a hallucination" finds no Type (only a hallucination has one): the page says
    why and what to press, where it did nothing at all. So do E on a sentence not marked incorrect, a
    wrong-part key before a triplet is judged no, and U with nothing to undo."""
    me, page = annotator, annotator.page
    user = "e2e-why-not"
    said = page.get_by_role("status").filter(has_text=re.compile(r"\S"))
    taken = "() => window.__lastKeydown?.defaultPrevented === true"

    me.open("claims", user, "demo-003")
    row = lambda i: page.locator(f".st-key-claim_row_{i}")  # noqa: E731
    me.press("2", (row(1), "▶ 2."))
    page.keyboard.press("t")
    expect(said).to_have_text(
        "Claim 1 is judged not a hallucination, and only a hallucination has a type: "
        "press K to go back to it, then 1, then T."
    )
    assert page.evaluate(taken)  # the key was answered, not passed on to the page
    expect(page.get_by_role("combobox", name="Type")).to_have_count(0)
    me.shoot(artifacts / "annotate-claims-key-says-why.png")
    # T pressed while the page still answers the verdict before it waits, and says why just the same.
    page.keyboard.press("2")
    page.keyboard.press("t")
    expect(said).to_contain_text("Claim 2 is judged not a hallucination")
    me.idle()
    judged = mine(store, user, "demo-003")[1].claim_labels
    assert {i: (v.label, v.type) for i, v in judged.items()} == {
        0: ("non-hallucination", None),
        1: ("non-hallucination", None),
    }

    me.open("sentences", user, "demo-002")
    me.press("1", (sentence_row(page, 1), "▶ Sentence 2"))
    page.keyboard.press("e")
    expect(said).to_have_text(
        "Sentence 1 is marked correct, and only an incorrect sentence has an error type: "
        "press K to go back to it, then 2, then E."
    )

    me.open("triplets", user, "demo-001")
    page.keyboard.press("3")
    expect(said).to_have_text(
        "Triplet 1 is not judged yet, and only a triplet judged no has a wrong part: press 2, then 3, 4 or 5."
    )
    assert page.evaluate(taken)
    page.keyboard.press("u")
    expect(said).to_have_text(
        "Nothing to undo on this item: U takes back your last action on the item shown."
    )


def test_a_key_waits_for_a_run_that_starts_late(annotator: Annotator) -> None:
    """On a busy machine the run a verdict key asks for has started more than a second after the key.
    T pressed meanwhile waited a second, then acted on the page from before the verdict: it said why
    about the claim before. Here the server gets the verdict's request only after the page's clock has
    passed that second and more: T still waits, and then speaks of the claim just judged."""
    me, page = annotator, annotator.page
    held: list[tuple[WebSocketRoute, str | bytes]] = []
    gate = {"open": True}

    def hold_requests(socket: WebSocketRoute) -> None:
        server = socket.connect_to_server()

        def up(message: str | bytes) -> None:
            if gate["open"]:
                server.send(message)
            else:
                held.append((server, message))

        socket.on_message(up)

    page.route_web_socket(re.compile(r"/_stcore/stream"), hold_requests)
    me.open("claims", "e2e-late-run", "demo-003")
    row = lambda i: page.locator(f".st-key-claim_row_{i}")  # noqa: E731
    me.press("2", (row(1), "▶ 2."))
    gate["open"] = False
    page.keyboard.press("2")  # its click's request waits at the gate
    page.keyboard.press("t")
    page.wait_for_function("() => performance.now() - window.spanlightKeyQueue.since > 2500")
    assert held, "the verdict's click sent nothing"
    assert page.evaluate("() => window.spanlightKeyQueue.keys.length") == 1  # T still waits
    gate["open"] = True
    for server, message in held:
        server.send(message)
    said = page.get_by_role("status").filter(has_text=re.compile(r"\S"))
    expect(said).to_have_text(
        "Claim 2 is judged not a hallucination, and only a hallucination has a type: "
        "press K to go back to it, then 1, then T."
    )
    expect(row(2)).to_contain_text("▶ 3.")


IDLE_AFTER_DONE_JS = """() => {
  const idle = document.querySelector('[data-testid="stApp"]').dataset.testScriptState === "notRunning"
    && !document.querySelector('[data-stale="true"]')
    && document.querySelector('.st-key-spans_done button')?.disabled === true;
  window.__framesIdle = idle ? (window.__framesIdle || 0) + 1 : 0;
  return window.__framesIdle > 30;
}"""


# For a failure's message: the page's run state and what the keys hold and wait for.
WHERE_KEYS_STAND_JS = """() => {
  const q = window.spanlightKeyQueue ?? {};
  return {
    script: document.querySelector('[data-testid="stApp"]').dataset.testScriptState,
    stale: document.querySelectorAll('[data-stale="true"]').length,
    done: document.querySelector('.st-key-spans_done button')?.disabled ?? null,
    keys: q.keys, awaiting: q.awaiting, started: q.started,
    waitedMs: q.since ? Math.round(performance.now() - q.since) : null,
  };
}"""


def _done_drawn(msg: ForwardMsg) -> bool:
    """Whether the server's message draws the spans page's "done" button disabled (the item is done)."""
    if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
        return False
    element = msg.delta.new_element
    return (
        element.WhichOneof("type") == "button"
        and element.button.id.endswith("spans_done")
        and element.button.disabled
    )


# Idle with the item done (held between the two runs), or the next item shown (the runs went by).
HELD_OR_NEXT_JS = f"""() => ({IDLE_AFTER_DONE_JS})() || document.body.innerText.includes("Item demo-007")"""


def test_n_right_after_d_waits_for_the_run_of_the_whole_page(annotator: Annotator) -> None:
    """D reruns the unit alone, which finds the item done and asks for a run of the whole page (the
    header counts the item). Between the two runs the page looked idle, and N, pressed right after D,
    was clicked then: its run merged with the one asked for, which drew the item shown before, and N
    was lost (3 of 40 on a busy machine). N now waits for the run of the whole page, then opens the
    next item.

    The test holds what the server sends after the unit's run has ended, so the page surely sits
    between the two runs while N waits, however fast or slow the machine. Only when the unit's run drew
    the item done: a run that starts drops what the run before left unsent, and on a busy machine the
    unit's drawing is sometimes dropped so (1 in 12). The page then never sits between the runs, N
    opens the next item all the same, and the test tries again as another annotator."""
    me, page = annotator, annotator.page
    held: list[str | bytes] = []
    # stage: 0 passes the server's messages, 1 once the unit's run, having drawn the item done, stopped
    # for the whole page's run, 2 holds them once the page has been told no run goes on; asked: the
    # page's requests meanwhile; drawn: the unit's run drew the item done
    gate = {"stage": 0, "asked": 0, "drawn": False}
    sockets: list[WebSocketRoute] = []

    def hold_between_the_runs(socket: WebSocketRoute) -> None:
        server = socket.connect_to_server()
        sockets.append(socket)

        def down(message: str | bytes) -> None:
            if gate["stage"] == 2:
                held.append(message)
                return
            socket.send(message)
            if not isinstance(message, bytes):
                return
            msg = ForwardMsg.FromString(message)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                gate["drawn"] = False
            elif _done_drawn(msg):
                gate["drawn"] = True
            elif kind == "script_finished" and msg.metadata.run.fragment_ids:
                early = msg.script_finished == ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN
                gate["stage"] = 1 if early and gate["drawn"] else 0
            elif kind == "session_status_changed" and gate["stage"] == 1:
                gate["stage"] = 2 if not msg.session_status_changed.script_is_running else 1

        def up(message: str | bytes) -> None:
            if gate["stage"] == 2 and isinstance(message, bytes):
                gate["asked"] += BackMsg.FromString(message).WhichOneof("type") == "rerun_script"
            server.send(message)

        server.on_message(down)
        socket.on_message(up)

    page.route_web_socket(re.compile(r"/_stcore/stream"), hold_between_the_runs)
    for attempt in range(3):
        held.clear()
        gate.update(stage=0, asked=0, drawn=False)
        me.open("spans", f"e2e-done-then-next-{attempt}", "demo-006")
        page.wait_for_function("() => window.spanlightUnitKeys?.listening === true")  # the keys D and N meet
        pressed = time.monotonic()
        page.keyboard.press("d")
        page.keyboard.press("n")
        # The unit drawn anew (D's button now says the item is done), then idle to the eye for many frames.
        try:
            page.wait_for_function(HELD_OR_NEXT_JS, polling="raf")
        except PlaywrightTimeoutError:
            raise AssertionError(
                f"neither idle with the item done nor on the next item {time.monotonic() - pressed:.0f} s "
                f"after D: gate {gate}, {len(held)} message(s) held, {len(sockets)} socket(s); "
                f"page {page.evaluate(WHERE_KEYS_STAND_JS)}"
            ) from None
        if gate["stage"] == 2:
            break
        # The unit's drawing was dropped: N opened the next item after the runs, as it must.
        me.idle()
        expect(page.get_by_text("Item demo-007", exact=False).first).to_be_visible()
    else:
        raise AssertionError("in 3 tries the unit's run never drew the item done before the whole page's run")
    assert gate["asked"] == 0, "N was clicked before the run of the whole page"
    assert page.evaluate("() => window.spanlightKeyQueue.keys") == ["n"]
    gate["stage"] = 0
    for message in held:
        sockets[-1].send(message)
    expect(page.get_by_text("Item demo-007", exact=False).first).to_be_visible()
    page.wait_for_function(QUIET_JS)
    me.idle()
    expect(page.get_by_text("Item demo-007", exact=False).first).to_be_visible()


def test_s_skips_an_item_with_a_note_by_keyboard_alone(annotator: Annotator, store: Engine) -> None:
    """S opens "Skip / unsure" with the cursor in its note; Tab reaches the choice, Enter presses it."""
    from db.repositories.queue import item_status

    me, page = annotator, annotator.page
    user, item_id = "e2e-skip", "demo-005"
    me.open("sentences", user, item_id)
    page.keyboard.press("s")
    note = page.get_by_role("textbox", name="Note")
    expect(note).to_be_focused()
    page.keyboard.type("image too dark")
    me.after_run(lambda: page.keyboard.press("Tab"))  # leaving the box hands its text to the server
    expect(page.get_by_role("button", name="Skip this item")).to_be_focused()
    me.after_run(lambda: page.keyboard.press("Enter"))
    item, annotations = mine(store, user, item_id)
    status = item_status(store, annotations.label_set_id, item.id, "sentences")
    assert status is not None and (status.status, status.note) == ("skipped", "image too dark")


@pytest.mark.parametrize(("choice", "status"), [("Mark unsure", "unsure"), ("Skip this item", "skipped")])
def test_a_choice_in_skip_unsure_closes_it_and_the_receipt_shows(
    annotator: Annotator, store: Engine, artifacts: Path, choice: str, status: str
) -> None:
    """Once a choice is made in "Skip / unsure" it closes, and the receipt and status it covered show
    (after "Mark unsure" it stayed open over them)."""
    from db.repositories.queue import item_status

    me, page = annotator, annotator.page
    user, item_id = f"e2e-flag-{status}", "demo-009"
    me.open("sentences", user, item_id)
    page.keyboard.press("s")
    expect(page.get_by_role("textbox", name="Note")).to_be_focused()
    page.keyboard.type("hard to tell")
    me.after_run(page.get_by_role("button", name=choice).click)
    expect(page.locator('[data-testid="stPopoverBody"]')).to_have_count(0)
    expect(page.get_by_role("button", name=choice)).to_have_count(0)
    expect(page.get_by_text(f"✓ Saved · item marked {status}: hard to tell")).to_be_visible()
    expect(page.get_by_text(f"Status: {status} — hard to tell")).to_be_visible()
    item, annotations = mine(store, user, item_id)
    saved = item_status(store, annotations.label_set_id, item.id, "sentences")
    assert saved is not None and (saved.status, saved.note) == (status, "hard to tell")
    me.shoot(artifacts / f"annotate-flag-{status}.png")


def test_a_skipped_item_is_found_again_and_put_back_in_the_queue(
    annotator: Annotator, store: Engine, artifacts: Path
) -> None:
    """The queue passes a skipped item over; the header's "next skipped" opens it, and "Clear skipped"
    puts it back in the queue."""
    from db.repositories.queue import item_status

    me, page = annotator, annotator.page
    user = "e2e-skip-back"
    me.open("sentences", user, "demo-007")
    page.keyboard.press("s")
    me.after_run(lambda: page.get_by_role("button", name="Skip this item").click())
    # N: the popover the skip left open stays with its item (it followed, "Skip this item" focused).
    me.after_run(lambda: page.get_by_role("button", name="Next item for me").click())
    expect(page.get_by_text("Item demo-008", exact=False).first).to_be_visible()
    expect(page.get_by_role("button", name="Skip this item")).to_have_count(0)
    me.open("sentences", user, "demo-002")
    back = page.get_by_role("button", name="Next skipped (1 skipped)")
    expect(back).to_be_visible()
    me.shoot(artifacts / "annotate-next-skipped.png")
    me.after_run(back.click)
    expect(page.get_by_text("Item demo-007", exact=False).first).to_be_visible()
    assert "item=demo-007" in page.url  # the address follows, so the next key is for this item
    me.press("1", (sentence_row(page, 1), "▶ Sentence 2"))  # saved on demo-007, not refused
    item, annotations = mine(store, user, "demo-007")
    assert annotations.sentence_labels[0].label == "correct"
    page.keyboard.press("s")
    clear = page.get_by_role("button", name="Clear skipped: back in my queue")
    me.after_run(clear.click)
    expect(page.get_by_text("Status: skipped")).to_have_count(0)
    assert item_status(store, annotations.label_set_id, item.id, "sentences") is None


def test_undo_puts_the_cursor_back_and_the_next_item_starts_without_a_receipt(
    annotator: Annotator, store: Engine
) -> None:
    """2 then U then 1: the 1 is for the sentence the undo took back (it went to the next one). And the
    receipt of the last save stays with its item: N opens the next item without it."""
    me, page = annotator, annotator.page
    user, item_id = "e2e-undo", "demo-031"
    me.open("sentences", user, item_id)
    row = lambda i: sentence_row(page, i)  # noqa: E731
    me.press("2", (row(1), "▶ Sentence 2"))
    me.press("u", (row(0), "▶ Sentence 1"))
    me.press("1", (row(1), "▶ Sentence 2"))
    labels = mine(store, user, item_id)[1].sentence_labels
    assert {i: lab.label for i, lab in labels.items()} == {0: "correct"}
    expect(page.get_by_text("✓ Saved · sentence 1 → correct")).to_be_visible()
    me.press("n")
    expect(page.get_by_text("✓ Saved")).to_have_count(0)


def test_e_typed_right_after_2_opens_the_error_type_once_it_is_drawn(
    annotator: Annotator, store: Engine
) -> None:
    """2, then at once E and the type's name: E waits for the Error type box the 2 brings, and what is
    typed meanwhile goes into it. Before, E was dropped and the letters acted as keys (the u of "Query"
    undid the label)."""
    me, page = annotator, annotator.page
    user, item_id = "e2e-fast-e", "demo-007"
    me.open("sentences", user, item_id)
    expect(sentence_row(page, 0)).to_contain_text("▶ Sentence 1")

    def burst() -> None:
        page.keyboard.press("2")
        page.keyboard.press("e")
        page.keyboard.type("query")
        page.keyboard.press("Enter")

    me.after_run(burst)
    expect(page.get_by_text("✓ Saved · sentence 1 → incorrect (Query Misunderstanding)")).to_be_visible()
    saved = mine(store, user, item_id)[1].sentence_labels
    assert {i: (lab.label, lab.error_type) for i, lab in saved.items()} == {
        0: ("incorrect", "Query Misunderstanding")
    }
