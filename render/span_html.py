"""Safe HTML for untrusted model text with highlighted spans, sentence badges and a colour legend.

Model output is untrusted: it may contain ``<script>``, ``<img onerror=...>`` or Markdown that must be
shown to the annotator exactly as the model wrote it. Every piece of text therefore goes through
:func:`html.escape` here, even though ``st.html`` sanitizes again, and nothing is passed through
Markdown. Offsets are Python code-point indices, the same as everywhere else in Spanlight.

Overlapping spans are drawn as nested ``<mark>`` elements, each on its own *lane*: a lane is an
underline at its own depth, so two spans over the same words show two lines. Every span piece that
starts or ends a span gets a left or right edge, so two adjacent spans never merge into one.
"""

from __future__ import annotations

import html
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

# Twelve colours that stay apart from one another, for colour-blind readers too (after Paul Tol's
# "bright" and "vibrant" schemes, plus violet, brown, pink and slate for the 12-type taxonomies).
PALETTE: tuple[str, ...] = (
    "#4477AA",
    "#EE6677",
    "#228833",
    "#CCBB44",
    "#66CCEE",
    "#AA3377",
    "#EE7733",
    "#009988",
    "#7E57C2",
    "#8C6D31",
    "#E377C2",
    "#5F6B73",
)
UNTYPED_COLOUR = "#888888"
UNTYPED_LABEL = "span"

# How a span's fate is drawn: underline style, colour when colouring by fate, legend label.
FATES: dict[str, tuple[str, str, str]] = {
    "matched": ("solid", "#228833", "Matched"),
    "partial": ("double", "#CCBB44", "Partial match"),
    "false-positive": ("dashed", "#EE6677", "False positive"),
    "missed": ("dotted", "#4477AA", "Missed"),
}

SENTENCE_BADGES: dict[str | None, tuple[str, str, str]] = {
    # label -> (symbol, colour, accessible name)
    "correct": ("✓", "#228833", "correct"),
    "incorrect": ("✗", "#CC3311", "incorrect"),
    "unknown": ("?", "#777777", "unknown"),
    None: ("·", "#AAAAAA", "not labelled"),
}

_LANE_GAP_PX = 4
_TINT_ALPHA = "2E"  # about 18 % opacity, appended to #RRGGBB
_SAFE_COLOUR = re.compile(r"#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,20}|(?:rgb|rgba|hsl|hsla)\([0-9.,%\s/]+\)")
_SAFE_CLASS = re.compile(r"-?[_a-zA-Z][_a-zA-Z0-9-]{0,63}")


@dataclass(frozen=True)
class SpanStyle:
    """One span to draw: where it lies, what it is and how it looks.

    ``start``/``end`` are code-point offsets (``end`` exclusive). ``colour`` overrides the type colour;
    ``tooltip`` becomes the ``title`` attribute; ``fate`` is one of :data:`FATES` (``false_positive``
    is accepted for ``false-positive``).
    """

    start: int
    end: int
    type: str | None = None
    colour: str | None = None
    css_class: str | None = None
    tooltip: str | None = None
    fate: str | None = None


# A SpanStyle, a (start, end[, type[, tooltip]]) tuple, a mapping, or a record with start/end/type.
SpanLike = Any


def type_colours(types: Iterable[str]) -> dict[str, str]:
    """Map each type to a palette colour by its position in ``types`` (the taxonomy order).

    The first twelve types get twelve different colours; after that the palette repeats. Pass the
    whole taxonomy, not just the types present, so a type keeps its colour on every page.

    >>> type_colours(["Object", "OCR"])
    {'Object': '#4477AA', 'OCR': '#EE6677'}
    """
    colours: dict[str, str] = {}
    for name in types:
        if name not in colours:
            colours[name] = PALETTE[len(colours) % len(PALETTE)]
    return colours


def colour_for(type_name: str | None, colours: Mapping[str, str] | None = None) -> str:
    """The colour of ``type_name``: from ``colours`` if listed there, else stable by a hash of the name."""
    if type_name is None:
        return UNTYPED_COLOUR
    if colours and type_name in colours:
        return colours[type_name]
    return PALETTE[zlib.crc32(type_name.encode("utf-8")) % len(PALETTE)]


def as_span_style(span: SpanLike) -> SpanStyle:
    """Accept a :class:`SpanStyle`, a ``(start, end[, type[, tooltip]])`` tuple, a mapping or a record
    with ``start``/``end``/``type`` attributes (such as ``formats.records.SpanRecord``)."""
    if isinstance(span, SpanStyle):
        return span
    if isinstance(span, tuple):
        if not 2 <= len(span) <= 4:
            raise ValueError(f"a span tuple is (start, end[, type[, tooltip]]), got {span!r}")
        return SpanStyle(
            span[0],
            span[1],
            span[2] if len(span) > 2 else None,
            tooltip=span[3] if len(span) == 4 else None,
        )
    if isinstance(span, Mapping):
        fields = ("start", "end", "type", "colour", "css_class", "tooltip", "fate")
        return SpanStyle(**{name: span[name] for name in fields if name in span})
    return SpanStyle(span.start, span.end, getattr(span, "type", None))


def _normalise_fate(fate: str | None) -> str | None:
    if fate is None:
        return None
    key = fate.strip().lower().replace("_", "-").replace(" ", "-")
    if key not in FATES:
        raise ValueError(f"unknown span fate {fate!r}; expected one of {sorted(FATES)}")
    return key


def _checked(spans: Iterable[SpanLike], text_length: int) -> list[SpanStyle]:
    checked = []
    for raw in spans:
        span = as_span_style(raw)
        if not (isinstance(span.start, int) and isinstance(span.end, int)):
            raise TypeError(f"span offsets must be integers, got {span.start!r}, {span.end!r}")
        if not 0 <= span.start <= span.end <= text_length:
            raise ValueError(f"span {span.start}–{span.end} lies outside a text of length {text_length}")
        checked.append(SpanStyle(**{**span.__dict__, "fate": _normalise_fate(span.fate)}))
    return checked


def _lanes(spans: Sequence[SpanStyle]) -> list[int]:
    """Give each span the lowest lane not taken by an overlapping span (interval colouring)."""
    lanes = [0] * len(spans)
    lane_ends: list[int] = []  # lane -> end of the last span placed on it
    for index in sorted(range(len(spans)), key=lambda i: (spans[i].start, -spans[i].end)):
        span = spans[index]
        lane = next((n for n, end in enumerate(lane_ends) if end <= span.start), len(lane_ends))
        if lane == len(lane_ends):
            lane_ends.append(span.end)
        else:
            lane_ends[lane] = span.end
        lanes[index] = lane
    return lanes


def _safe_colour(colour: str | None) -> str | None:
    return colour if colour is not None and _SAFE_COLOUR.fullmatch(colour.strip()) else None


def _tint(colour: str) -> str:
    return colour + _TINT_ALPHA if re.fullmatch(r"#[0-9a-fA-F]{6}", colour) else "transparent"


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


class _Painter:
    """Works out each span's colour, line style and classes once, then draws its pieces."""

    def __init__(
        self,
        spans: Sequence[SpanStyle],
        colours: Mapping[str, str] | None,
        colour_by: Literal["type", "fate"],
    ) -> None:
        self.spans = spans
        self.lanes = _lanes(spans)
        self.colours = [self._colour(span, colours, colour_by) for span in spans]

    @staticmethod
    def _colour(span: SpanStyle, colours: Mapping[str, str] | None, colour_by: str) -> str:
        explicit = _safe_colour(span.colour)
        if explicit:
            return explicit
        if colour_by == "fate" and span.fate:
            return FATES[span.fate][1]
        return colour_for(span.type, colours)

    def _common_attrs(self, index: int) -> str:
        span = self.spans[index]
        label = span.type if span.type is not None else UNTYPED_LABEL
        tooltip = span.tooltip if span.tooltip is not None else f"{label} · {span.start}–{span.end}"
        classes = ["hs-span"]
        if span.fate:
            classes.append(f"hs-fate-{span.fate}")
        if span.css_class:
            classes += [c for c in span.css_class.split() if _SAFE_CLASS.fullmatch(c)]
        return (
            f'class="{_attr(" ".join(classes))}" data-span="{index}" data-type="{_attr(label)}"'
            f' title="{_attr(tooltip)}"'
        )

    def open_mark(self, index: int, *, first: bool, last: bool, gap: bool = False) -> str:
        """Open one piece of span ``index``; ``first``/``last``: the piece starts/ends the span."""
        span, colour = self.spans[index], self.colours[index]
        line = FATES[span.fate][0] if span.fate else "solid"
        width = 3 if line == "double" else 2
        pad = 1 + self.lanes[index] * _LANE_GAP_PX
        # Edges are short brackets rising from the underline, not full-height borders, so a span
        # nested in a longer one does not seem to cut the longer one in two.
        layers = [
            f"linear-gradient({colour},{colour}) {side} bottom/2px 0.6em no-repeat"
            for side, wanted in (("left", first), ("right", last))
            if wanted
        ]
        if span.fate != "missed":
            layers.append(f"linear-gradient({_tint(colour)},{_tint(colour)})")
        style = [
            f"background:{', '.join(layers) or 'transparent'}",
            "color:inherit",
            f"border-bottom:{width}px {line} {colour}",
            f"padding:0 {2 if last else 0}px {pad}px {2 if first else 0}px",
        ]
        if gap:
            style.append("margin-left:3px")
        return f'<mark {self._common_attrs(index)} style="{";".join(style)}">'

    def empty_marker(self, index: int) -> str:
        colour = self.colours[index]
        style = f"border-left:3px solid {colour};background:transparent;margin:0 1px;padding:0"
        return f'<mark {self._common_attrs(index)} data-empty="1" style="{style}"></mark>'


def _text_html(text: str, spans: Sequence[SpanStyle], painter: _Painter) -> str:
    bounds = sorted({0, len(text), *(s.start for s in spans), *(s.end for s in spans)})
    empties: dict[int, list[int]] = {}
    for index, span in enumerate(spans):
        if span.start == span.end:
            empties.setdefault(span.start, []).append(index)
    starts = {s.start for s in spans if s.start < s.end}
    ends = {s.end for s in spans if s.start < s.end}
    out: list[str] = []
    for left, right in zip(bounds, bounds[1:] + [None], strict=True):
        out += [painter.empty_marker(i) for i in empties.get(left, [])]
        if right is None or right == left:
            continue
        covering = [i for i, s in enumerate(spans) if s.start <= left and right <= s.end and s.start < s.end]
        # Outermost mark = deepest lane, so its underline sits lowest.
        covering.sort(key=lambda i: -painter.lanes[i])
        # Where one span ends exactly where another begins, a small gap keeps them apart.
        abuts = left in starts and left in ends
        for n, i in enumerate(covering):
            out.append(
                painter.open_mark(
                    i, first=spans[i].start == left, last=spans[i].end == right, gap=abuts and n == 0
                )
            )
        out.append(html.escape(text[left:right]))
        out.append("</mark>" * len(covering))
    return "".join(out)


def _legend_html(
    spans: Sequence[SpanStyle], painter: _Painter, types: Sequence[str] | None, colour_by: str
) -> str:
    items: list[str] = []

    def item(label: str, colour: str, line: str = "solid", tint: bool = True) -> None:
        swatch = (
            "display:inline-block;width:1.1em;height:0.8em;vertical-align:middle;margin-right:0.3em;"
            f"background:{_tint(colour) if tint else 'transparent'};border-bottom:2px {line} {colour}"
        )
        items.append(
            # A whole item moves to the next line; one wider than the page (a type named at any length
            # by a file) wraps inside itself instead of running off the page's edge.
            '<span class="hs-legend-item" style="margin-right:1em;display:inline-block;max-width:100%;'
            'overflow-wrap:anywhere;vertical-align:top">'
            f'<span style="{swatch}"></span>{html.escape(label)}</span>'
        )

    if colour_by == "type":
        order = {name: n for n, name in enumerate(types or ())}
        seen: dict[str, str] = {}
        for index, span in enumerate(spans):
            label = span.type if span.type is not None else UNTYPED_LABEL
            seen.setdefault(label, painter.colours[index])
        for label in sorted(seen, key=lambda name: order.get(name, len(order))):
            item(label, seen[label])
    fates = [fate for fate in FATES if any(span.fate == fate for span in spans)]
    for fate in fates:
        line, colour, label = FATES[fate]
        item(label, colour if colour_by == "fate" else "#777777", line, tint=fate != "missed")
    if not items:
        return ""
    return (
        '<div class="hs-legend" data-role="legend" style="margin-top:0.5em;font-size:0.85em;opacity:0.9">'
        + "".join(items)
        + "</div>"
    )


def render_spans_html(
    text: str,
    spans: Iterable[SpanLike],
    *,
    legend: bool = True,
    types: Sequence[str] | None = None,
    colours: Mapping[str, str] | None = None,
    colour_by: Literal["type", "fate"] = "type",
) -> str:
    """Return escaped HTML showing ``text`` with ``spans`` highlighted, plus a legend of span types.

    Parameters
    ----------
    text : the untrusted text, shown verbatim (``white-space: pre-wrap``, no Markdown).
    spans : :class:`SpanStyle` objects, ``(start, end[, type[, tooltip]])`` tuples, mappings or
        records with ``start``/``end``/``type``; offsets in code points. Zero-length spans are drawn as
        a thin marker. Raises :class:`ValueError` for offsets outside the text.
    legend : add a legend of the types (and fates) present.
    types : the taxonomy in order; fixes the colours (see :func:`type_colours`) and the legend order.
    colours : an explicit type → colour mapping; overrides ``types``.
    colour_by : ``"type"`` (default) or ``"fate"`` — colour every span by its fate instead of its type.

    >>> html_ = render_spans_html("a <b> c", [(2, 5, "Object")])
    >>> "&lt;b&gt;" in html_ and "<b>" not in html_
    True
    """
    checked = _checked(spans, len(text))
    palette = dict(colours) if colours is not None else type_colours(types or ())
    painter = _Painter(checked, palette, colour_by)
    depth = max(painter.lanes, default=-1) + 1
    line_height = f"calc(1.7em + {depth * _LANE_GAP_PX}px)"
    body = _text_html(text, checked, painter)
    parts = [
        '<div class="hs-spans">',
        f'<div class="hs-spans-text" data-role="text" style="white-space:pre-wrap;'
        f'overflow-wrap:anywhere;line-height:{line_height}">{body}</div>',
    ]
    if legend:
        parts.append(_legend_html(checked, painter, types, colour_by))
    parts.append("</div>")
    return "".join(parts)


def render_sentences_html(
    text: str,
    sentences: Sequence[tuple[int, int]],
    labels: Sequence[str | None],
    current: int | None = None,
) -> str:
    """Return escaped HTML listing each sentence of ``text`` with a correct/incorrect/unknown badge.

    ``sentences`` are ``(start, end)`` code-point offsets; ``labels[i]`` is ``"correct"``,
    ``"incorrect"``, ``"unknown"`` or ``None`` (not labelled yet); ``current`` is the index of the
    sentence being labelled, drawn with a frame.
    """
    if len(labels) != len(sentences):
        raise ValueError(f"{len(sentences)} sentences but {len(labels)} labels")
    rows = []
    for index, ((start, end), label) in enumerate(zip(sentences, labels, strict=True)):
        if not 0 <= start <= end <= len(text):
            raise ValueError(f"sentence {start}–{end} lies outside a text of length {len(text)}")
        if label not in SENTENCE_BADGES:
            raise ValueError(f"unknown sentence label {label!r}")
        symbol, colour, name = SENTENCE_BADGES[label]
        is_current = index == current
        frame = "outline:2px solid #4477AA;outline-offset:2px;" if is_current else ""
        badge = (
            f'<span class="hs-badge" title="{_attr(name)}" aria-label="{_attr(name)}" '
            f'style="display:inline-block;min-width:1.4em;text-align:center;border-radius:0.7em;'
            f'margin-right:0.5em;color:#fff;background:{colour};font-weight:bold">{symbol}</span>'
        )
        current_attr = ' data-current="1"' if is_current else ""
        rows.append(
            f'<li class="hs-sentence" data-label="{_attr(label or "")}"{current_attr}'
            f' style="margin:0.25em 0;{frame}">'
            f'{badge}<span style="white-space:pre-wrap">{html.escape(text[start:end])}</span></li>'
        )
    return f'<ol class="hs-sentences" style="padding-left:1.8em">{"".join(rows)}</ol>'
