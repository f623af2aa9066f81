"""The span selector in a real headless Chromium, through a real Streamlit server.

Mouse drags, double-clicks and key presses go through the browser's own selection machinery, so
these tests cover what AppTest cannot: UTF-16 → code-point conversion, shadow-DOM selection, and
that model text full of markup stays text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import WAIT_MS, AppTab

pytestmark = pytest.mark.e2e

# Emoji (2 UTF-16 units), CJK, a combining accent, markup and a script before the words we mark.
TEXT = "🙂 红色 cafe\u0301 <b>cube</b> and <script>window.__xss=1</script> two balls.\nThe sign says OPEN."
TYPES = ["Object", "Color Attribute", "Spatial Relation", "OCR"]
SELECTOR_ENV = {"SELECTOR_TEXT": TEXT, "SELECTOR_TYPES": json.dumps(TYPES)}  # read by `selector_url`

# Bounding box of the nth occurrence of `word` inside the selector's text (searched in DOM text).
WORD_BOX_JS = """(el, [word, nth]) => {
  const text = el.textContent;
  let index = -1;
  for (let i = 0; i <= nth; i++) index = text.indexOf(word, index + 1);
  if (index < 0) throw new Error("word not found: " + word);
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let pos = 0, node, started = false;
  while ((node = walker.nextNode())) {
    const len = node.data.length;
    if (!started && index < pos + len) { range.setStart(node, index - pos); started = true; }
    if (started && index + word.length <= pos + len) { range.setEnd(node, index + word.length - pos); break; }
    pos += len;
  }
  const r = range.getClientRects()[0];
  return {x: r.left, y: r.top, w: r.width, h: r.height};
}"""


def cp(word: str, nth: int = 0) -> tuple[int, int]:
    """Python code-point offsets of the nth occurrence of ``word`` in TEXT."""
    index = -1
    for _ in range(nth + 1):
        index = TEXT.index(word, index + 1)
    return index, index + len(word)


class Selector(AppTab):
    """One browser session on the test page."""

    def __init__(self, page: Page) -> None:
        super().__init__(page)
        self.text = page.locator(".hs-text")
        self.code = page.locator("[data-testid=stCode] code")
        self.dialogs: list[str] = []
        page.on("dialog", self._on_dialog)

    def _on_dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def value(self) -> dict:
        """What Python returned to the page in its last run (the page's JSON line)."""
        return json.loads(self.code.inner_text())

    def wait_value(self, events: int) -> dict:
        """The value once Python has handled ``events`` edits in all and its run is over."""
        expect(self.code).to_contain_text(f'"events": {events}}}')
        self.idle()
        return self.value()

    def box(self, word: str, nth: int = 0) -> dict:
        return self.text.evaluate(WORD_BOX_JS, [word, nth])

    def drag(self, start_word: str, end_word: str | None = None, *, pad: float = 1.0) -> None:
        first = self.box(start_word)
        last = self.box(end_word or start_word)
        y0 = first["y"] + first["h"] / 2
        y1 = last["y"] + last["h"] / 2
        self.page.mouse.move(first["x"] + pad, y0)
        self.page.mouse.down()
        self.page.mouse.move(last["x"] + last["w"] - pad, y1, steps=6)
        self.page.mouse.up()

    def click_word(self, word: str, *, double: bool = False) -> None:
        box = self.box(word)
        x, y = box["x"] + box["w"] / 2, box["y"] + box["h"] / 2
        if double:
            self.page.mouse.dblclick(x, y)
        else:
            self.page.mouse.click(x, y)

    def marked(self) -> list[str]:
        """data-spans of every highlighted segment, in text order."""
        return self.page.locator(".hs-seg.hs-marked").evaluate_all("els => els.map(e => e.dataset.spans)")


@pytest.fixture
def open_selector(
    browser: Browser, selector_url: str, artifacts_dir: Path
) -> Iterator[Callable[..., Selector]]:
    contexts = []

    def _open(spans: list[dict] | None = None, *, disabled: bool = False) -> Selector:
        context = browser.new_context(viewport={"width": 1000, "height": 700}, device_scale_factor=2)
        context.set_default_timeout(WAIT_MS)
        contexts.append(context)
        params = [f"spans={quote(json.dumps(spans))}"] if spans else []
        if disabled:
            params.append("disabled=1")
        selector = Selector(context.new_page())
        selector.goto(selector_url + "/?" + "&".join(params))
        selector.text.wait_for()
        assert "spans" in selector.value()
        return selector

    yield _open
    for context in contexts:
        context.close()


def test_drag_select_reports_code_point_offsets(open_selector, artifacts_dir: Path) -> None:
    selector = open_selector()
    start, end = cp("<b>cube</b>")  # a drag inside a token marks the whole token
    assert len(TEXT[:start].encode("utf-16-le")) // 2 != start  # the browser's count would differ
    selector.drag("cube")
    value = selector.wait_value(events=1)
    span = {"start": start, "end": end, "type": "Object"}
    assert value["spans"] == [span]
    assert value["event"] == {"action": "add", "span": span, "rev": 1}
    assert selector.marked() == ["0"]
    selector.page.locator(".hs-sel").screenshot(path=artifacts_dir / "drag_select.png")


def test_selection_edges_are_trimmed_and_span_many_words(open_selector) -> None:
    selector = open_selector()
    # From inside the space before "two" to the end of "balls".
    box = selector.box(" two")
    selector.page.mouse.move(box["x"] + 1, box["y"] + box["h"] / 2)
    selector.page.mouse.down()
    end = selector.box("balls")
    selector.page.mouse.move(end["x"] + end["w"] - 1, end["y"] + end["h"] / 2, steps=6)
    selector.page.mouse.up()
    value = selector.wait_value(events=1)
    start, _ = cp("two")
    _, stop_ = cp("balls")
    assert value["spans"] == [{"start": start, "end": stop_, "type": "Object"}]


def test_double_click_marks_a_word_after_emoji_cjk_and_accents(open_selector, artifacts_dir: Path) -> None:
    selector = open_selector()
    selector.page.locator(".hs-type", has_text="OCR").click()
    selector.click_word("sign", double=True)
    value = selector.wait_value(events=1)
    start, end = cp("sign")
    assert value["spans"] == [{"start": start, "end": end, "type": "OCR"}]
    selector.page.screenshot(path=artifacts_dir / "double_click_page.png")


def test_markup_in_model_text_is_shown_literally_and_never_runs(open_selector, artifacts_dir: Path) -> None:
    selector = open_selector()
    shown = selector.text.inner_text()
    assert "<b>cube</b>" in shown and "<script>window.__xss=1</script>" in shown
    assert selector.page.locator(".hs-text b, .hs-text script").count() == 0
    selector.drag("cube")
    selector.wait_value(events=1)
    assert selector.page.evaluate("typeof window.__xss") == "undefined"
    assert selector.dialogs == []
    selector.page.locator(".hs-sel").screenshot(path=artifacts_dir / "literal_markup.png")


def test_click_selects_span_and_delete_key_removes_it(open_selector) -> None:
    start, end = cp("balls")
    span = {"start": start, "end": end, "type": "Object"}
    selector = open_selector([span])
    assert selector.marked() == ["0"]
    selector.click_word("balls")
    selector.page.locator(".hs-selected-label").wait_for()
    selector.page.keyboard.press("Delete")
    value = selector.wait_value(events=1)
    assert value["spans"] == []
    assert value["event"]["action"] == "delete" and value["event"]["span"] == span
    assert selector.marked() == []


def test_number_key_retypes_the_selected_span(open_selector) -> None:
    start, end = cp("balls")
    selector = open_selector([{"start": start, "end": end, "type": "Object"}])
    selector.click_word("balls")
    selector.page.keyboard.press("3")
    value = selector.wait_value(events=1)
    assert value["spans"] == [{"start": start, "end": end, "type": "Spatial Relation"}]
    assert value["event"]["action"] == "retype"
    assert value["event"]["previous"]["type"] == "Object"
    # The × button deletes too.
    selector.page.locator(".hs-delete").click()
    value = selector.wait_value(events=2)
    assert value["spans"] == []


def test_key_pressed_before_python_answers_is_not_lost(open_selector) -> None:
    selector = open_selector()
    selector.drag("cube")
    selector.page.keyboard.press("2")  # retype the new span at once, while the add is in flight
    value = selector.wait_value(events=2)
    start, end = cp("<b>cube</b>")
    assert value["spans"] == [{"start": start, "end": end, "type": "Color Attribute"}]
    assert value["event"]["action"] == "retype"


def test_disabled_selector_shows_spans_but_ignores_edits(open_selector) -> None:
    start, end = cp("balls")
    selector = open_selector([{"start": start, "end": end, "type": "Object"}], disabled=True)
    assert selector.marked() == ["0"]
    assert selector.page.locator(".hs-type:disabled").count() == len(TYPES)
    selector.drag("cube")
    selector.click_word("balls")
    selector.page.keyboard.press("Delete")
    # A run asked for after the edits ends after any run they asked for: then nothing has arrived.
    selector.after_run(selector.page.get_by_role("button", name="Rerun").click)
    assert selector.value()["events"] == 0
    assert selector.marked() == ["0"]


def test_spans_passed_from_python_are_redrawn_after_undo(open_selector) -> None:
    selector = open_selector()
    selector.click_word("balls", double=True)
    assert len(selector.wait_value(events=1)["spans"]) == 1
    assert selector.marked() == ["0"]
    selector.after_run(selector.page.get_by_role("button", name="Undo").click)
    value = selector.value()
    assert value["spans"] == [] and value["event"] is None
    selector.page.wait_for_function(
        "() => document.querySelector('[data-testid=stBidiComponentIsolated]')"
        ".shadowRoot.querySelectorAll('.hs-marked').length === 0"
    )


def test_overlapping_and_adjacent_spans_are_drawn_apart(open_selector, artifacts_dir: Path) -> None:
    two, balls = cp("two"), cp("balls")
    op = cp("OPEN")
    spans = [
        {"start": two[0], "end": balls[1], "type": "Object"},  # "two balls"
        {"start": balls[0], "end": balls[1], "type": "Color Attribute"},  # nested inside it
        {"start": op[0], "end": op[0] + 2, "type": "OCR"},  # "OP"
        {"start": op[0] + 2, "end": op[1], "type": "OCR"},  # "EN", adjacent, same type
    ]
    selector = open_selector(spans)
    assert selector.marked() == ["0", "0 1", "2", "3"]
    abutting = selector.page.locator(".hs-seg.hs-abuts").evaluate_all("els => els.map(e => e.textContent)")
    assert abutting == ["EN"]
    selector.page.locator(".hs-sel").screenshot(path=artifacts_dir / "overlap_adjacent.png")
    # Clicking the overlap selects the shorter span first, then the longer one.
    selector.click_word("balls")
    assert selector.page.locator(".hs-selected-type").inner_text().strip() == "Color Attribute"
    selector.click_word("balls")
    assert selector.page.locator(".hs-selected-type").inner_text().strip() == "Object"
    selector.page.locator(".hs-sel").screenshot(path=artifacts_dir / "overlap_selected.png")


def test_static_span_html_looks_right_in_chromium(browser: Browser, artifacts_dir: Path) -> None:
    """`render_spans_html` output, outside Streamlit: text intact, nothing executed, spans apart."""
    from render.span_html import SpanStyle, render_sentences_html, render_spans_html

    two, balls, op = cp("two"), cp("balls"), cp("OPEN")
    spans = [
        SpanStyle(two[0], balls[1], "Object", tooltip="Object · matched gold · IoU 0.67", fate="matched"),
        SpanStyle(balls[0], balls[1], "Color Attribute", fate="false-positive"),
        SpanStyle(op[0], op[0] + 2, "OCR", fate="missed"),
        SpanStyle(op[0] + 2, op[1], "OCR"),
        (cp("cube")[0], cp("cube")[1], "Object"),
    ]
    body = render_spans_html(TEXT, spans, types=TYPES) + render_sentences_html(
        TEXT, [(0, TEXT.index("\n")), (TEXT.index("\n") + 1, len(TEXT))], ["incorrect", None], current=0
    )
    context = browser.new_context(viewport={"width": 900, "height": 400}, device_scale_factor=2)
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.set_content(f"<html><body style='font-family:sans-serif;padding:1em'>{body}</body></html>")
    assert page.locator("[data-role=text]").evaluate("e => e.textContent") == TEXT
    assert page.evaluate("typeof window.__xss") == "undefined" and dialogs == []
    page.screenshot(path=artifacts_dir / "static_span_html.png")
    context.close()
