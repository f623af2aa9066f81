"""An annotator at work in headless Chromium: mouse on the span page, keyboard on the judging pages.

Each test works as its own user (``?user=e2e-…``) so the tests never see each other's labels in the
shared demo store, and checks what was saved by reading the store from this process, not only the UI.
Streamlit reruns after every key press; a key pressed before the run has finished would land on the
old page, so every step waits until the run it caused is over and drawn (``tests.e2e.browser.AppTab``),
then checks what the page shows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Locator, Page, expect
from sqlalchemy import Engine

from db.engine import make_engine
from db.repositories import labeling
from db.repositories.annotations import ItemAnnotations, item_annotations, judged_triplets
from db.repositories.annotators import get_or_create_annotator
from db.repositories.datasets import get_dataset
from db.repositories.items import ItemView, get_item
from db.repositories.label_sets import human_label_set, list_label_sets
from tests.e2e.app_server import RunningApp
from tests.e2e.browser import AppTab

DEMO = "Spanlight demo (synthetic)"
VIEWPORT = {"width": 1280, "height": 900}
PRIMARY = '[data-testid="stBaseButton-primary"]'  # a chosen label's button

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
    expect(page.get_by_text("✓ Saved · undid: deleted span")).to_be_visible()
    text.click("bottom", 1)  # a selected span, for the screenshot
    expect(page.locator(".hs-selected-label")).to_contain_text("bottom")
    me.shoot(artifacts / "annotate-spans.png")


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
    me.press("h", (page.get_by_text("✓ Saved · response scored 4 of 6, hallucination"), "hallucination"))
    assert rated() == (4.0, True)
    me.press("0", (page.get_by_text("✓ Saved · response scored 0 of 6, hallucination"), "0 of 6"))
    assert rated() == (0.0, True)  # a new score keeps the flag
    me.press("g", (page.get_by_text("✓ Saved · response scored 0 of 6, no hallucination"), "no"))
    assert rated() == (0.0, False)
    me.press("u", (page.get_by_text("✓ Saved · undid: response scored 0 of 6, no hallucination"), "undid"))
    assert rated() == (0.0, True)
    me.shoot(artifacts / "score-responses.png")
