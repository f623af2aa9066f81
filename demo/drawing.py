"""Pillow drawing of a :class:`demo.scenes.Scene`.

Only Pillow's bundled default font is used (no font files, no network), and nothing random happens
here: the same scene always gives the same pixels, and Pillow's PNG writer adds no timestamp, so the
same seed gives byte-identical files.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from demo.scenes import COLOURS, COLUMNS, HEIGHT, ROWS, WIDTH, Scene, ShapeGroup, Sign

BACKGROUND = (246, 243, 236)
INK = (40, 40, 40)


@lru_cache(maxsize=1)
def _font() -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=28)


def _cell_box(cell: tuple[int, int]) -> tuple[int, int, int, int]:
    row, col = cell
    cw, ch = WIDTH // len(COLUMNS), HEIGHT // len(ROWS)
    return col * cw, row * ch, (col + 1) * cw, (row + 1) * ch


def _draw_shape(
    draw: ImageDraw.ImageDraw, kind: str, cx: int, cy: int, r: int, fill: tuple[int, int, int]
) -> None:
    box = (cx - r, cy - r, cx + r, cy + r)
    if kind == "circle":
        draw.ellipse(box, fill=fill, outline=INK, width=2)
    elif kind == "square":
        draw.rectangle(box, fill=fill, outline=INK, width=2)
    elif kind == "triangle":
        draw.polygon([(cx, cy - r), (cx + r, cy + r), (cx - r, cy + r)], fill=fill, outline=INK, width=2)
    else:
        raise ValueError(f"unknown shape kind {kind!r}")


def _draw_group(draw: ImageDraw.ImageDraw, group: ShapeGroup) -> None:
    x0, y0, x1, y1 = _cell_box(group.cell)
    fill = COLOURS[group.colour]
    if group.count == 1:
        _draw_shape(draw, group.kind, (x0 + x1) // 2, (y0 + y1) // 2, 52, fill)
        return
    # Up to three per row, small enough that six still fit and stay easy to count.
    per_row = min(group.count, 3)
    rows = -(-group.count // per_row)
    step_x, step_y = (x1 - x0) // (per_row + 1), (y1 - y0) // (rows + 1)
    for k in range(group.count):
        r, c = divmod(k, per_row)
        _draw_shape(draw, group.kind, x0 + step_x * (c + 1), y0 + step_y * (r + 1), 17, fill)


def _draw_sign(draw: ImageDraw.ImageDraw, sign: Sign) -> None:
    x0, y0, x1, y1 = _cell_box(sign.cell)
    cx = (x0 + x1) // 2
    left, top, right, bottom = draw.textbbox((0, 0), sign.text, font=_font())
    w, h = right - left, bottom - top
    board = (cx - w // 2 - 14, y0 + 40, cx + w // 2 + 14, y0 + 40 + h + 28)
    draw.line((cx, board[3], cx, y1 - 12), fill=(120, 120, 120), width=6)
    draw.rectangle(board, fill=(255, 255, 255), outline=INK, width=3)
    draw.text((cx - w // 2 - left, y0 + 54 - top), sign.text, fill=INK, font=_font())


def draw_scene(scene: Scene) -> Image.Image:
    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for group in scene.groups:
        _draw_group(draw, group)
    if scene.sign:
        _draw_sign(draw, scene.sign)
    return image


def save_scene(scene: Scene, directory: Path) -> Path:
    path = directory / scene.image_name
    draw_scene(scene).save(path, format="PNG")
    return path
