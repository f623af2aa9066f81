"""The Compare page's tracks as HTML: the response with one track's spans coloured by their fate.

:mod:`analysis.item_comparison` decides each span's fate and explanation; this module only draws them
(escaped, through :func:`render.span_html.render_spans_html`), for the page and for the exports.
"""

from __future__ import annotations

import html

from analysis.item_comparison import ItemComparison, Track
from render.span_html import FATES, SpanStyle, render_spans_html

#: A gold span no detector was compared with (none shown, none run on the item, or it covers no token):
#: drawn in gold, solid, never in a fate's colour. Coloured by its type, its colour could be the pink of
#: "False positive" under a legend of fates that applied to nothing drawn.
GOLD_COLOUR = "#B8860B"
GOLD_LABEL = "Gold span (not compared with a detector)"


def attribute_text(text: str) -> str:
    """``text`` for a ``title`` attribute, with angle brackets shown as ‹ ›.

    ``st.html`` sanitizes its HTML and drops an attribute whose value looks like markup, so the
    explanation of a span quoting model text such as ``<script>`` would vanish. The text itself is
    still escaped when the attribute is written; this only keeps the explanation visible.
    """
    return text.replace("<", "‹").replace(">", "›")


def track_styles(track: Track, *, show_missed: bool = True) -> list[SpanStyle]:
    """What to draw: the track's spans (and, if wanted, the gold spans it missed)."""
    gold = track.kind == "gold"
    out = [
        SpanStyle(
            s.start,
            s.end,
            s.type,
            colour=GOLD_COLOUR if gold and s.fate is None else None,
            css_class="hs-gold" if gold else "hs-pred",
            tooltip=attribute_text(s.explanation),
            fate=s.fate,
        )
        for s in track.spans
    ]
    if show_missed:
        out += [
            SpanStyle(
                s.start,
                s.end,
                s.type,
                css_class="hs-missed-gold",
                tooltip=attribute_text(s.explanation),
                fate="missed",
            )
            for s in track.missed
        ]
    return out


#: Click (or tab to) a span to pin its explanation under the track's text; hovering shows the same text
#: as a tooltip. The note is placed against the track, not the span, so it is never cut off at the edge.
TRACK_CSS = """
<style>
.hs-track { position: relative; }
.hs-track mark.hs-span { cursor: help; }
.hs-track mark.hs-span:focus { outline: 2px solid #333; outline-offset: 1px; }
.hs-track mark.hs-span:focus::after {
  content: attr(title); position: absolute; left: 0; right: 0; top: calc(100% + 4px); z-index: 20;
  background: #222; color: #fff; font-size: 0.8rem; line-height: 1.35; padding: 6px 8px;
  border-radius: 4px; white-space: pre-line; font-weight: normal;
}
</style>
"""


def _focusable(spans_html: str) -> str:
    # Model text is escaped, so the only "<mark class=" in the output are the span tags themselves.
    return spans_html.replace("<mark class=", '<mark tabindex="0" class=')


def track_html(comparison: ItemComparison, track: Track, *, show_missed: bool = True) -> str:
    """The response with ``track``'s spans, escaped, coloured by fate, each span focusable."""
    body = render_spans_html(
        comparison.response, track_styles(track, show_missed=show_missed), legend=False, colour_by="fate"
    )
    return (
        f'<div class="hs-track" data-track="{html.escape(track.name, quote=True)}" '
        f'data-kind="{track.kind}">{_focusable(body)}</div>'
    )


def compared_with_detectors(comparison: ItemComparison) -> bool:
    """Whether a detector shown was run on the item, so that spans have fates to draw and explain."""
    return any(track.given for track in comparison.detectors)


def legend_entries(comparison: ItemComparison) -> list[tuple[str, str, bool, str]]:
    """What the tracks draw, for the legend of the page and of the exports: (line style, colour,
    hollow, label) of the fates once a detector shown was run on the item, and of gold when a gold span
    is compared with none."""
    labels = (
        {
            "matched": "Matched (IoU ≥ threshold)",
            "false-positive": "False positive",
            "missed": "Gold span missed",
        }
        if compared_with_detectors(comparison)
        else {}
    )
    entries = [(FATES[fate][0], FATES[fate][1], fate == "missed", label) for fate, label in labels.items()]
    gold = comparison.gold
    if gold is not None and any(span.fate is None for span in gold.spans):
        entries.append(("solid", GOLD_COLOUR, False, GOLD_LABEL))
    return entries


def legend_html(comparison: ItemComparison) -> str:
    """The legend shared by all tracks (:func:`legend_entries`)."""
    items = []
    for line, colour, hollow, label in legend_entries(comparison):
        tint = "transparent" if hollow else colour + "2E"
        items.append(
            '<span style="margin-right:1.2em;white-space:nowrap">'
            '<span style="display:inline-block;width:1.2em;height:0.8em;vertical-align:middle;'
            f'margin-right:0.35em;background:{tint};border-bottom:2px {line} {colour}"></span>'
            f"{html.escape(label)}</span>"
        )
    return f'<div class="hs-legend" style="font-size:0.85em">{"".join(items)}</div>'
