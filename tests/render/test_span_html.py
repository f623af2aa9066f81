"""Safe span HTML: untrusted text stays text, spans land on the right code points, overlaps stay apart."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from render.span_html import (
    PALETTE,
    SpanStyle,
    colour_for,
    render_sentences_html,
    render_spans_html,
    type_colours,
)

ALLOWED_TAGS = {"div", "mark", "span", "ol", "li"}


class _Tree(HTMLParser):
    """Collects tags, the text inside the text container and, per character, the spans covering it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[dict[str, str | None]] = []
        self.stack: list[tuple[str, dict[str, str | None]]] = []
        self.text = ""
        self.legend = ""
        self.covering: list[tuple[int, ...]] = []  # per code point of text: the data-span ids
        self.empty_at: dict[int, list[int]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append(tag)
        self.attrs.append(attributes)
        self.stack.append((tag, attributes))
        if attributes.get("data-empty"):
            self.empty_at.setdefault(len(self.text), []).append(int(attributes["data-span"]))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1][0] == tag, f"unbalanced </{tag}>"
        self.stack.pop()

    def _role(self) -> str | None:
        roles = [a.get("data-role") for _, a in self.stack if a.get("data-role")]
        return roles[-1] if roles else None

    def handle_data(self, data: str) -> None:
        if self._role() == "text":
            ids = tuple(sorted(int(a["data-span"]) for t, a in self.stack if t == "mark"))
            self.text += data
            self.covering += [ids] * len(data)
        elif self._role() == "legend":
            self.legend += data


def parse(markup: str) -> _Tree:
    tree = _Tree()
    tree.feed(markup)
    tree.close()
    assert not tree.stack, "unclosed tags"
    return tree


NASTY = "<script>window.__xss=1</script> & <img src=x onerror=\"alert('x')\"> 'q' \"dq\" **bold**"


def test_untrusted_text_is_shown_verbatim_and_never_becomes_markup() -> None:
    markup = render_spans_html(NASTY, [(0, 8, "Object"), (42, 71, "OCR")])
    tree = parse(markup)
    assert tree.text == NASTY
    assert set(tree.tags) <= ALLOWED_TAGS
    assert "<script" not in markup and "<img" not in markup
    assert "&lt;script&gt;" in markup and "&amp;" in markup and "&quot;dq&quot;" in markup
    assert "**bold**" in markup  # no Markdown


def test_labels_and_tooltips_are_escaped_in_attributes_and_legend() -> None:
    evil = '"><script>alert(1)</script>'
    markup = render_spans_html("abc", [SpanStyle(0, 3, type=evil, tooltip=evil)])
    tree = parse(markup)
    assert "script" not in tree.tags
    mark = next(a for t, a in zip(tree.tags, tree.attrs, strict=True) if t == "mark")
    assert mark["title"] == evil and mark["data-type"] == evil
    assert tree.legend == evil


def test_hostile_colour_and_class_are_dropped() -> None:
    markup = render_spans_html(
        "abc", [SpanStyle(0, 3, "Object", colour="red;background:url(x)", css_class='x" onclick="y ok')]
    )
    assert "url(" not in markup and "onclick" not in markup
    assert 'class="hs-span ok"' in markup
    assert f"border-bottom:2px solid {colour_for('Object')}" in markup


def test_whitespace_is_preserved() -> None:
    markup = render_spans_html("a\n\n  b", [(5, 6, "Object")])
    assert "white-space:pre-wrap" in markup
    assert parse(markup).text == "a\n\n  b"


@pytest.mark.parametrize(
    ("prefix", "word"),
    [
        ("🙂 ", "cube"),  # astral emoji: one code point, two UTF-16 units
        ("红色的 ", "cube"),  # CJK
        ("cafe\u0301 ", "cube"),  # e + combining acute: two code points
        ("👩‍👩‍👧 ", "cube"),  # ZWJ family: five code points
    ],
)
def test_offsets_are_python_code_points(prefix: str, word: str) -> None:
    text = prefix + word + " end"
    start = len(prefix)
    tree = parse(render_spans_html(text, [(start, start + len(word), "Object")]))
    marked = "".join(ch for ch, ids in zip(tree.text, tree.covering, strict=True) if ids)
    assert marked == word
    assert tree.text == text


def test_overlapping_spans_cover_their_own_characters_and_nest() -> None:
    text = "a big red cube"
    spans = [(2, 9, "Color Attribute"), (6, 14, "Object")]
    tree = parse(render_spans_html(text, spans, types=["Object", "Color Attribute"]))
    by_char = dict(enumerate(tree.covering))
    assert by_char[2] == (0,) and by_char[6] == (0, 1) and by_char[10] == (1,) and by_char[1] == ()
    # The two spans sit on different lanes, so their underlines are at different depths.
    pads = {
        a["data-span"]: a["style"].split("padding:")[1].split(";")[0] for a in tree.attrs if "data-span" in a
    }
    assert pads["0"] != pads["1"]


def test_identical_spans_of_two_types_both_show() -> None:
    tree = parse(render_spans_html("red", [(0, 3, "Color Attribute"), (0, 3, "Object")]))
    assert tree.covering == [(0, 1)] * 3


def test_adjacent_spans_show_a_boundary() -> None:
    markup = render_spans_html("redcube", [(0, 3, "Object"), (3, 7, "Object")])
    tree = parse(markup)
    assert tree.covering == [(0,)] * 3 + [(1,)] * 4
    marks = [a for t, a in zip(tree.tags, tree.attrs, strict=True) if t == "mark"]
    assert "right bottom" in marks[0]["style"]  # closing bracket of "red"
    assert "left bottom" in marks[1]["style"] and "margin-left:3px" in marks[1]["style"]
    assert "margin-left" not in marks[0]["style"]


def test_empty_span_list_renders_plain_escaped_text_without_legend() -> None:
    markup = render_spans_html("x < y", [])
    tree = parse(markup)
    assert tree.text == "x < y" and "mark" not in tree.tags
    assert 'data-role="legend"' not in markup


def test_zero_length_span_is_a_marker_that_adds_no_text() -> None:
    tree = parse(render_spans_html("ab", [(1, 1, "Object")]))
    assert tree.text == "ab"
    assert tree.empty_at == {1: [0]}


def test_spans_outside_the_text_are_rejected() -> None:
    with pytest.raises(ValueError):
        render_spans_html("abc", [(2, 4, "Object")])
    with pytest.raises(ValueError):
        render_spans_html("abc", [(2, 1, "Object")])
    with pytest.raises(TypeError):
        render_spans_html("abc", [(0.5, 2, "Object")])


def test_legend_lists_types_present_in_taxonomy_order() -> None:
    taxonomy = ["Object", "OCR", "Color Attribute"]
    markup = render_spans_html("red cube", [(4, 8, "Color Attribute"), (0, 3, "Object")], types=taxonomy)
    tree = parse(markup)
    assert tree.legend == "ObjectColor Attribute"
    assert "OCR" not in tree.legend
    assert render_spans_html("x", [(0, 1, "OCR")], legend=False).count("legend") == 0


def test_fates_get_line_styles_and_a_legend() -> None:
    spans = [
        SpanStyle(0, 3, "Object", fate="matched", tooltip="Object · matched gold 0–3 · IoU 1.00"),
        SpanStyle(4, 8, "Object", fate="false_positive"),
        SpanStyle(9, 12, "Object", fate="missed"),
    ]
    markup = render_spans_html("red cube big", spans, colour_by="fate")
    tree = parse(markup)
    assert tree.legend == "MatchedFalse positiveMissed"
    styles = [a["style"] for t, a in zip(tree.tags, tree.attrs, strict=True) if t == "mark"]
    assert "solid #228833" in styles[0] and "dashed #EE6677" in styles[1] and "dotted" in styles[2]
    assert "hs-fate-false-positive" in markup
    with pytest.raises(ValueError):
        render_spans_html("abc", [SpanStyle(0, 1, fate="lucky")])


def test_accepts_mappings_and_records() -> None:
    class Record:
        start, end, type = 0, 3, "Object"

    tree = parse(render_spans_html("red cube", [Record(), {"start": 4, "end": 8, "type": "OCR"}]))
    assert tree.covering[0] == (0,) and tree.covering[5] == (1,)


def test_type_colours_follow_taxonomy_order_and_are_stable() -> None:
    taxonomy = [f"type {n}" for n in range(14)]
    colours = type_colours(taxonomy)
    assert [colours[t] for t in taxonomy[:12]] == list(PALETTE)
    assert len(set(PALETTE)) == 12
    assert colours["type 12"] == PALETTE[0]
    assert colour_for("Unlisted") == colour_for("Unlisted") and colour_for("Unlisted") in PALETTE
    assert colour_for("Object", {"Object": "#123456"}) == "#123456"


def test_sentences_are_escaped_and_badged() -> None:
    text = "A <b>red</b> cube. Two & balls."
    markup = render_sentences_html(text, [(0, 18), (19, 31)], ["incorrect", None], current=1)
    tree = parse(markup)
    assert set(tree.tags) <= ALLOWED_TAGS
    assert "&lt;b&gt;red&lt;/b&gt;" in markup and "Two &amp; balls." in markup
    items = [a for t, a in zip(tree.tags, tree.attrs, strict=True) if t == "li"]
    assert [i["data-label"] for i in items] == ["incorrect", ""]
    assert "data-current" in items[1] and "data-current" not in items[0]
    with pytest.raises(ValueError):
        render_sentences_html(text, [(0, 18)], ["wrong"])


def test_a_legend_item_wider_than_the_page_wraps_inside_itself() -> None:
    """A span type 120 characters long with no space ran off the right edge of the item page: legend
    items were kept on one line whatever their length."""
    long_type = "T" * 120
    tree = parse(render_spans_html("abc", [SpanStyle(0, 3, type=long_type)]))
    item = next(a for t, a in zip(tree.tags, tree.attrs, strict=True) if a.get("class") == "hs-legend-item")
    style = item["style"].replace(" ", "")
    assert "white-space:nowrap" not in style
    assert "overflow-wrap:anywhere" in style and "max-width:100%" in style
