"""The item comparison for demos and reports: a self-contained HTML document and a PNG for slides.

Both are drawn from the same :class:`analysis.item_comparison.ItemComparison` the page shows. The
HTML reuses the page's escaped span markup (hover or click a span for its explanation) and embeds the
image as a data URI, so the file works offline and can be pasted into a report. The PNG is drawn with
Pillow alone (no browser): each track's text is wrapped to the width, every span gets a tinted box
and an underline in its fate's colour and line style, overlapping spans on separate lanes.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from analysis.item_comparison import ItemComparison, Track
from render.comparison_tracks import (
    TRACK_CSS,
    legend_entries,
    legend_html,
    track_html,
    track_styles,
)
from render.span_html import FATES, SpanStyle

FOOTER = "Exported from Spanlight"
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


def _footer(comparison: ItemComparison, generated: datetime | None) -> str:
    when = (generated or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    matching = (
        f"matching at IoU ≥ {comparison.threshold:.2f} in whitespace tokens (MHALO F1_IoU)"
        if comparison.graded
        else "no gold label set: spans not scored"
    )
    return f"{FOOTER} · dataset {comparison.dataset} · item {comparison.item} · {matching} · {when}"


# ---------------------------------------------------------------------------------------------- HTML


def comparison_html(
    comparison: ItemComparison,
    *,
    show_missed: bool = True,
    image_png: bytes | None = None,
    generated: datetime | None = None,
) -> str:
    """A standalone HTML document with the prompt, the image and every track (all text escaped)."""
    e = html.escape
    title = f"{comparison.item} · {comparison.dataset}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{e(title)} · Spanlight</title>",
        "<style>body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:62em;margin:2em auto;"
        "padding:0 1em;color:#222}h1{font-size:1.3em}h2{font-size:1.05em;margin:0 0 0.2em}"
        ".hs-block{border:1px solid #ddd;border-radius:6px;padding:0.6em 0.9em;margin:0.8em 0}"
        ".hs-summary{color:#555;font-size:0.85em;margin:0 0 0.4em}.hs-prompt{white-space:pre-wrap}"
        "footer{color:#777;font-size:0.8em;margin-top:2em}img{max-width:24em;border-radius:4px}</style>",
        TRACK_CSS,
        "</head><body>",
        f"<h1>Item {e(comparison.item)} <small style='color:#777'>· {e(comparison.dataset)}</small></h1>",
    ]
    if image_png:
        data = base64.b64encode(image_png).decode("ascii")
        parts.append(f'<figure><img alt="the item\'s image" src="data:image/png;base64,{data}"></figure>')
    parts += [
        f'<p><strong>Prompt</strong></p><div class="hs-prompt">{e(comparison.prompt)}</div>',
    ]
    if comparison.graded:  # without gold no span has a fate to explain
        parts.append(f'<div style="margin:1em 0 0.5em">{legend_html(comparison)}</div>')
    for track in comparison.tracks:
        parts.append(
            f'<section class="hs-block"><h2>{e(track.name)}</h2>'
            f'<p class="hs-summary">{e(track.summary())}</p>'
            # a run not given the item has no text of its own, as on the page
            f"{track_html(comparison, track, show_missed=show_missed) if track.given else ''}</section>"
        )
    parts += [f"<footer>{e(_footer(comparison, generated))}</footer>", "</body></html>"]
    return "\n".join(parts)


# ----------------------------------------------------------------------------------------------- PNG

WIDTH = 1600
MARGIN = 48
TEXT_SIZE = 24
HEAD_SIZE = 27
SMALL_SIZE = 19
LANE_GAP = 5
_FONT_FILES = ("DejaVuSans.ttf", "LiberationSans-Regular.ttf")
_BOLD_FILES = ("DejaVuSans-Bold.ttf", "LiberationSans-Bold.ttf")


def _font(size: int, bold: bool = False) -> Font:
    """A system sans-serif font when one is installed, else Pillow's own scalable default font."""
    for name in _BOLD_FILES if bold else _FONT_FILES:
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def _rgb(colour: str) -> tuple[int, int, int]:
    colour = colour.lstrip("#")
    return int(colour[0:2], 16), int(colour[2:4], 16), int(colour[4:6], 16)


def _tint(colour: str, alpha: float = 0.18) -> tuple[int, int, int]:
    r, g, b = _rgb(colour)

    def mix(c: int) -> int:
        return round(255 - (255 - c) * alpha)

    return mix(r), mix(g), mix(b)


@dataclass(frozen=True)
class _Piece:
    """A run of characters placed on one line, covered by the same spans."""

    x: float
    line: int
    text: str
    width: float
    spans: tuple[int, ...]
    first: tuple[int, ...]  # spans that start in this piece
    last: tuple[int, ...]  # spans that end in this piece


def _lanes(spans: Sequence[SpanStyle]) -> list[int]:
    lanes = [0] * len(spans)
    ends: list[int] = []
    for k in sorted(range(len(spans)), key=lambda i: (spans[i].start, -spans[i].end)):
        lane = next((n for n, end in enumerate(ends) if end <= spans[k].start), len(ends))
        if lane == len(ends):
            ends.append(spans[k].end)
        else:
            ends[lane] = spans[k].end
        lanes[k] = lane
    return lanes


def _runs(text: str, spans: Sequence[SpanStyle]) -> list[tuple[int, int, tuple[int, ...]]]:
    """Split ``text`` at span bounds, whitespace/word changes and newlines: (start, end, covering)."""
    cuts = {0, len(text)}
    for span in spans:
        cuts.update((span.start, span.end))
    for k in range(1, len(text)):
        if text[k].isspace() != text[k - 1].isspace() or text[k] == "\n" or text[k - 1] == "\n":
            cuts.add(k)
    bounds = sorted(cuts)
    return [
        (a, b, tuple(i for i, s in enumerate(spans) if s.start <= a and b <= s.end and s.start < s.end))
        for a, b in zip(bounds, bounds[1:], strict=False)
        if a < b
    ]


def _layout(text: str, spans: Sequence[SpanStyle], font: Font, width: float) -> tuple[list[_Piece], int]:
    """Greedy word wrap of the runs; returns the placed pieces and the number of lines."""
    words: list[list[tuple[int, int, tuple[int, ...]]]] = []  # a word: consecutive non-space runs
    for run in _runs(text, spans):
        chunk = text[run[0] : run[1]]
        if chunk.isspace() or not words or text[run[0] - 1].isspace():
            words.append([run])
        else:
            words[-1].append(run)
    pieces: list[_Piece] = []
    x, line = 0.0, 0
    for word in words:
        chunk = text[word[0][0] : word[-1][1]]
        if "\n" in chunk:  # newline runs stand alone (see _runs)
            x, line = 0.0, line + chunk.count("\n")
            continue
        size = font.getlength(chunk.replace("\t", "    "))
        if chunk.isspace():
            if x == 0:
                continue  # no leading blanks on a wrapped line
        elif x > 0 and x + size > width:
            x, line = 0.0, line + 1
        if not chunk.isspace() and size > width:  # longer than a whole line: break between characters
            word = [(k, k + 1, covering) for start, end, covering in word for k in range(start, end)]
        for start, end, covering in word:
            piece = text[start:end].replace("\t", "    ")
            length = font.getlength(piece)
            if x > 0 and x + length > width and not piece.isspace():
                x, line = 0.0, line + 1
            pieces.append(
                _Piece(
                    x,
                    line,
                    piece,
                    length,
                    covering,
                    tuple(i for i in covering if spans[i].start == start),
                    tuple(i for i in covering if spans[i].end == end),
                )
            )
            x += length
    return pieces, line + 1


class _Canvas:
    """Drawing operations collected top to bottom, replayed once the height is known."""

    def __init__(self) -> None:
        self.y = MARGIN
        self.ops: list[tuple[Any, ...]] = []  # (kind, *arguments), replayed by render()

    def text(self, x: float, text: str, font: Font, fill: str = "#222222", gap: int = 8) -> None:
        width = WIDTH - MARGIN - x
        pieces, lines = _layout(text, [], font, width)
        height = _line_height(font)
        for piece in pieces:
            self.ops.append(("text", (x + piece.x, self.y + piece.line * height), piece.text, font, fill))
        self.y += lines * height + gap

    def render(self) -> Image.Image:
        image = Image.new("RGB", (WIDTH, int(self.y + MARGIN)), "white")
        draw = ImageDraw.Draw(image)
        for op in self.ops:
            kind, *args = op
            if kind == "text":
                (xy, text, font, fill) = args
                draw.text(xy, text, font=font, fill=fill)
            elif kind == "rect":
                draw.rectangle(args[0], fill=args[1], outline=args[2] if len(args) > 2 else None)
            elif kind == "line":
                _styled_line(draw, *args)
            elif kind == "line_v":  # a span's edge: a short bracket rising from its underline
                x, y, height, colour = args
                draw.line([(x, y), (x, y - height)], fill=colour, width=2)
            elif kind == "image":
                image.paste(args[1], args[0])
        return image


def _line_height(font: Font) -> int:
    ascent, descent = font.getmetrics() if hasattr(font, "getmetrics") else (12, 4)
    return int((ascent + descent) * 1.55)


def _styled_line(draw: ImageDraw.ImageDraw, x0: float, x1: float, y: float, colour: str, style: str) -> None:
    if style in ("dashed", "dotted"):
        on, off = (9, 5) if style == "dashed" else (3, 4)
        x = x0
        while x < x1:
            draw.line([(x, y), (min(x + on, x1), y)], fill=colour, width=2)
            x += on + off
    elif style == "double":
        draw.line([(x0, y - 2), (x1, y - 2)], fill=colour, width=1)
        draw.line([(x0, y + 1), (x1, y + 1)], fill=colour, width=1)
    else:
        draw.line([(x0, y), (x1, y)], fill=colour, width=2)


def _fate_look(span: SpanStyle) -> tuple[str, str]:
    """(colour, line style) of a span drawn by fate; spans without a fate are solid, in their own colour
    (a gold span compared with no detector: gold, as on the page) or else grey."""
    if span.fate and span.fate.replace("_", "-") in FATES:
        line, colour, _ = FATES[span.fate.replace("_", "-")]
        return colour, line
    return span.colour or "#888888", "solid"


def _draw_spans(canvas: _Canvas, x0: float, text: str, spans: Sequence[SpanStyle], font: Font) -> None:
    lanes = _lanes(spans)
    depth = max(lanes, default=-1) + 1
    height = _line_height(font) + depth * LANE_GAP
    ascent, descent = font.getmetrics() if hasattr(font, "getmetrics") else (12, 4)
    pieces, lines = _layout(text, spans, font, WIDTH - MARGIN - x0)
    for piece in pieces:
        top = canvas.y + piece.line * height
        base = top + ascent + descent + 3
        for i in piece.spans:
            colour, style = _fate_look(spans[i])
            left, right = x0 + piece.x, x0 + piece.x + piece.width
            if spans[i].fate != "missed":
                canvas.ops.append(("rect", (left, top - 2, right, base), _tint(colour)))
            y = base + 2 + lanes[i] * LANE_GAP
            canvas.ops.append(("line", left, right, y, colour, style))
            edge = int(ascent * 0.45)
            if i in piece.first:
                canvas.ops.append(("line_v", left, y, edge, colour))
            if i in piece.last:
                canvas.ops.append(("line_v", right, y, edge, colour))
        canvas.ops.append(("text", (x0 + piece.x, top), piece.text, font, "#222222"))
    canvas.y += lines * height + 10


def _legend(canvas: _Canvas, comparison: ItemComparison, font: Font) -> None:
    x: float = MARGIN
    for line, colour, hollow, label in legend_entries(comparison):
        if not hollow:
            canvas.ops.append(("rect", (x, canvas.y + 4, x + 30, canvas.y + 20), _tint(colour)))
        canvas.ops.append(("line", x, x + 30, canvas.y + 22, colour, line))
        canvas.ops.append(("text", (x + 40, canvas.y), label, font, "#333333"))
        x += 60 + font.getlength(label)
    canvas.y += _line_height(font) + 8


def _track_block(canvas: _Canvas, comparison: ItemComparison, track: Track, show_missed: bool) -> None:
    head, small, body = _font(HEAD_SIZE, bold=True), _font(SMALL_SIZE), _font(TEXT_SIZE)
    canvas.ops.append(("rect", (MARGIN - 16, canvas.y - 8, MARGIN - 10, canvas.y + 30), "#BBBBBB"))
    canvas.text(MARGIN, track.name, head, gap=2)
    canvas.text(MARGIN, track.summary(), small, fill="#555555", gap=6)
    if track.given:  # a run not given the item has no text of its own, as on the page
        _draw_spans(canvas, MARGIN, comparison.response, track_styles(track, show_missed=show_missed), body)
    canvas.y += 14


def comparison_png(
    comparison: ItemComparison,
    *,
    show_missed: bool = True,
    image: Image.Image | None = None,
    generated: datetime | None = None,
) -> bytes:
    """A PNG of the comparison: title, image and prompt, legend, one block per track, footer."""
    canvas = _Canvas()
    canvas.text(MARGIN, f"Item {comparison.item} · {comparison.dataset}", _font(HEAD_SIZE + 5, bold=True))
    top = canvas.y
    x_text = MARGIN
    if image is not None:
        thumb = image.convert("RGB")
        thumb.thumbnail((360, 360))
        canvas.ops.append(("image", (MARGIN, int(top)), thumb))
        x_text = MARGIN + thumb.width + 28
    canvas.text(x_text, "Prompt", _font(SMALL_SIZE, bold=True), gap=2)
    canvas.text(x_text, comparison.prompt, _font(TEXT_SIZE))
    if image is not None:
        canvas.y = max(canvas.y, top + thumb.height + 16)
    if comparison.graded:  # without gold no span has a fate to explain
        _legend(canvas, comparison, _font(SMALL_SIZE))
    canvas.y += 6
    for track in comparison.tracks:
        _track_block(canvas, comparison, track, show_missed)
    canvas.text(MARGIN, _footer(comparison, generated), _font(SMALL_SIZE - 2), fill="#777777")
    rendered = canvas.render()
    out = io.BytesIO()
    rendered.save(out, format="PNG")
    return out.getvalue()


def thumbnail(path: Path | None, *, size: int = 480, max_pixels: int = 80_000_000) -> Image.Image | None:
    """The image at ``path`` shrunk to fit ``size`` pixels, or None when it is missing or unreadable."""
    if path is None:
        return None
    try:
        with Image.open(path) as image:
            if image.width * image.height > max_pixels:
                return None
            image.thumbnail((size, size))
            return image.convert("RGB")
    except (OSError, ValueError, Image.DecompressionBombError):
        return None


def png_bytes(image: Image.Image | None) -> bytes | None:
    if image is None:
        return None
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()
