"""The scene model of the synthetic demo: coloured shapes (and sometimes a sign) on a 2 × 3 grid.

Real benchmark images may not be redistributed, so the demo draws its own. A scene is kept deliberately
simple — every fact a response states (colour, shape, count, position, relation, sign text) is one a
viewer can check at a glance, which is what makes an injected hallucination *visible* in the picture.
Scenes are plain frozen data; :mod:`demo.drawing` turns one into pixels and :mod:`demo.statements`
turns one into sentences.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

WIDTH, HEIGHT = 512, 384
ROWS = ("top", "bottom")
COLUMNS = ("left", "middle", "right")
CELLS = tuple((row, col) for row in range(len(ROWS)) for col in range(len(COLUMNS)))

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (214, 40, 40),
    "blue": (38, 84, 214),
    "green": (36, 150, 68),
    "yellow": (240, 196, 25),
    "pink": (236, 112, 170),
    "purple": (128, 58, 178),
}
KINDS = ("circle", "square", "triangle")

# Sign words and how a careless reader misreads them (one or two letters off), for OCR hallucinations.
SIGN_MISREADINGS: dict[str, str] = {
    "STOP": "SHOP",
    "EXIT": "EDIT",
    "OPEN": "OVEN",
    "HOTEL": "HOSTEL",
    "CAFE": "CAKE",
    "BANK": "BARK",
    "SALE": "SALT",
    "PARK": "PORK",
    "TAXI": "TAX",
    "POLICE": "POLICY",
}

SUBSETS = ("shapes", "counting", "signs")


def position_name(cell: tuple[int, int]) -> str:
    """``(0, 0)`` → ``"top left"``: the words responses use for a cell."""
    return f"{ROWS[cell[0]]} {COLUMNS[cell[1]]}"


@dataclass(frozen=True)
class ShapeGroup:
    """``count`` identical shapes of one colour and kind, drawn together in one grid cell."""

    colour: str
    kind: str
    count: int
    cell: tuple[int, int]

    @property
    def position(self) -> str:
        return position_name(self.cell)

    @property
    def name(self) -> str:
        """How a response refers to the group: ``"red circle"`` or ``"red circles"``."""
        return f"{self.colour} {self.kind}" + ("s" if self.count > 1 else "")


@dataclass(frozen=True)
class Sign:
    text: str
    cell: tuple[int, int]

    @property
    def position(self) -> str:
        return position_name(self.cell)


@dataclass(frozen=True)
class Scene:
    number: int  # 1-based; also names the image file
    subset: str
    groups: tuple[ShapeGroup, ...]
    sign: Sign | None = None

    @property
    def image_name(self) -> str:
        return f"scene_{self.number:03d}.png"

    def empty_cells(self) -> list[tuple[int, int]]:
        used = {g.cell for g in self.groups} | ({self.sign.cell} if self.sign else set())
        return [cell for cell in CELLS if cell not in used]

    def summary(self) -> str:
        """A plain list of what is in the picture (the ground truth a careful viewer would state)."""
        parts = [f"{_count_phrase(g)} in the {g.position}" for g in self.groups]
        if self.sign:
            parts.append(f'a sign reading "{self.sign.text}" in the {self.sign.position}')
        return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]

    def to_dict(self) -> dict[str, object]:
        """JSON-friendly scene description, stored in the item's metadata."""
        return {
            "groups": [
                {"colour": g.colour, "kind": g.kind, "count": g.count, "position": g.position}
                for g in self.groups
            ],
            "sign": {"text": self.sign.text, "position": self.sign.position} if self.sign else None,
        }


def _count_phrase(group: ShapeGroup) -> str:
    return f"{'a' if group.count == 1 else group.count} {group.name}"


def make_scene(number: int, subset: str, rng: random.Random) -> Scene:
    """Draw a random scene of ``subset``; each colour–kind pair appears at most once so "the red
    circle" always names exactly one thing."""
    cells = list(CELLS)
    rng.shuffle(cells)
    pairs = [(c, k) for c in COLOURS for k in KINDS]
    rng.shuffle(pairs)
    if subset == "shapes":
        n, counts, sign = rng.choice((3, 3, 4)), None, None
    elif subset == "counting":
        n, sign = rng.choice((2, 2, 3)), None
        counts = [rng.randint(2, 5) for _ in range(n)]
    elif subset == "signs":
        n, counts = rng.choice((1, 2)), None
        sign = Sign(rng.choice(sorted(SIGN_MISREADINGS)), cells.pop())
    else:
        raise ValueError(f"unknown subset {subset!r}")
    groups = tuple(
        ShapeGroup(colour, kind, counts[i] if counts else 1, cells[i])
        for i, (colour, kind) in enumerate(pairs[:n])
    )
    return Scene(number=number, subset=subset, groups=groups, sign=sign)
