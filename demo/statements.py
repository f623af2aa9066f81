"""What can be said about a scene: one :class:`Statement` per sentence, with swappable slots.

A statement is a sentence template whose ``{fields}`` are :class:`Slot` values (a colour, a position, a
count, a sign's text …). Each slot knows its true value, plausible wrong values and the MHALO type an
error there would be — so injecting a hallucination is swapping one slot, and the gold span, the
sentence label, the claims and the triplet of that sentence all follow from the same swap
(:mod:`demo.responses`). Keeping the facts structured is what keeps every label level consistent.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from demo.scenes import COLOURS, KINDS, SIGN_MISREADINGS, Scene, ShapeGroup, position_name

NUMBER_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]

SUBJECTIVE = (
    "The scene feels calm.",
    "It looks like a cheerful poster.",
    "The arrangement seems carefully balanced.",
    "Overall the picture has a playful mood.",
)
# For one item: emoji, CJK and a combining accent, so offset handling is exercised (code points).
SUBJECTIVE_UNICODE = "At first sight it feels cheerful 🙂, like a cafe\u0301 poster (看起来很愉快)."

INVENTED_THINGS = ("star", "heart", "arrow", "moon", "cloud")

# Sign words with a piece of general knowledge about them, for Knowledge Error injections.
SIGN_KNOWLEDGE: dict[str, tuple[str, str, str]] = {
    # word: (template with {fact}, true fact, wrong fact)
    "STOP": ("A sign like this tells drivers to {fact}.", "halt", "speed up"),
    "EXIT": ("Such signs mark the way {fact}.", "out", "in"),
    "OPEN": ("A sign like this tells visitors that they may {fact}.", "come in", "not enter"),
    "HOTEL": ("A hotel is a place where travellers can {fact}.", "stay overnight", "buy fuel"),
}


@dataclass(frozen=True)
class Slot:
    """One checkable value in a sentence. ``true is None`` marks invented content (an Object error)."""

    true: str | None
    fakes: tuple[str, ...]
    type: str  # the MHALO type of the error when a fake is used


@dataclass(frozen=True)
class Statement:
    template: str
    slots: Mapping[str, Slot] = field(default_factory=dict)
    # (claim template, MHaluBench claim type when the claim holds)
    claims: tuple[tuple[str, str], ...] = ()
    # (subject, relation, object) templates: what a triplet extractor would pull out of the sentence.
    triplets: tuple[tuple[str, str, str], ...] = ()
    subjective: bool = False  # an opinion nobody can check: labelled "unknown"

    @property
    def invented(self) -> bool:
        return any(slot.true is None for slot in self.slots.values())


def _other_colours(colour: str) -> tuple[str, ...]:
    return tuple(c for c in COLOURS if c != colour)


def _other_positions(cell: tuple[int, int]) -> tuple[str, ...]:
    return tuple(position_name((r, c)) for r in range(2) for c in range(3) if (r, c) != cell)


def number_word(n: int) -> str:
    return NUMBER_WORDS[n] if n < len(NUMBER_WORDS) else str(n)


def relation_of(a: tuple[int, int], b: tuple[int, int]) -> tuple[str, str]:
    """The true spatial relation of cell ``a`` to cell ``b``, and its opposite."""
    if a[1] != b[1]:
        pair = ("to the left of", "to the right of")
        return pair if a[1] < b[1] else pair[::-1]
    return ("above", "below") if a[0] < b[0] else ("below", "above")


def place(group: ShapeGroup, scene: Scene) -> Statement:
    # Wrong colours and kinds never name another thing in the picture, so "the red circle" stays unique.
    present = {(g.colour, g.kind) for g in scene.groups}
    colours = tuple(c for c in _other_colours(group.colour) if (c, group.kind) not in present)
    kinds = tuple(k for k in KINDS if k != group.kind and (group.colour, k) not in present)
    return Statement(
        "A {colour} {kind} sits in the {position}.",
        {
            "colour": Slot(group.colour, colours, "Color Attribute"),
            "kind": Slot(group.kind, kinds, "Shape Attribute"),
            "position": Slot(group.position, _other_positions(group.cell), "Spatial Attribute"),
        },
        claims=(
            ("There is a {colour} {kind}.", "object"),
            ("The {colour} {kind} is in the {position}.", "attribute"),
        ),
        triplets=(("{colour} {kind}", "in", "{position}"),),
    )


def count(group: ShapeGroup) -> Statement:
    wrong = tuple(number_word(n) for n in range(2, 8) if n != group.count and abs(n - group.count) <= 2)
    return Statement(
        "There are {count} {colour} " + group.kind + "s in the {position}.",
        {
            "count": Slot(number_word(group.count), wrong, "Numerical Attribute"),
            "colour": Slot(group.colour, _other_colours(group.colour), "Color Attribute"),
            "position": Slot(group.position, _other_positions(group.cell), "Spatial Attribute"),
        },
        claims=(
            ("There are {count} {colour} " + group.kind + "s.", "attribute"),
            ("The {colour} " + group.kind + "s are in the {position}.", "attribute"),
        ),
        triplets=(("{count} {colour} " + group.kind + "s", "in", "{position}"),),
    )


def relation(a: ShapeGroup, b_name: str, b_cell: tuple[int, int]) -> Statement:
    true, wrong = relation_of(a.cell, b_cell)
    verb = "are" if a.count > 1 else "is"
    return Statement(
        f"The {a.name} {verb} {{relation}} the {b_name}.",
        {"relation": Slot(true, (wrong,), "Spatial Relation")},
        claims=((f"The {a.name} {verb} {{relation}} the {b_name}.", "attribute"),),
        triplets=((a.name, "{relation}", b_name),),
    )


def compare(a: ShapeGroup, b: ShapeGroup) -> Statement:
    true, wrong = ("more", "fewer") if a.count > b.count else ("fewer", "more")
    return Statement(
        f"There are {{comparison}} {a.name} than {b.name}.",
        {"comparison": Slot(true, (wrong,), "Numerical Relation")},
        claims=((f"There are {{comparison}} {a.name} than {b.name}.", "attribute"),),
        triplets=((a.name, "{comparison} than", b.name),),
    )


def total(groups: tuple[ShapeGroup, ...]) -> Statement:
    n = sum(g.count for g in groups)
    wrong = tuple(number_word(k) for k in (n - 2, n - 1, n + 1, n + 2) if k > 0)
    return Statement(
        "That makes {total} shapes in total.",
        {"total": Slot(number_word(n), wrong, "Calculation Error")},
        claims=(("The image contains {total} shapes.", "attribute"),),
        triplets=(("shapes", "add up to", "{total}"),),
    )


def sign_reads(scene: Scene) -> Statement:
    assert scene.sign is not None
    text = scene.sign.text
    return Statement(
        'A sign in the {position} reads "{text}".',
        {
            "position": Slot(scene.sign.position, _other_positions(scene.sign.cell), "Spatial Attribute"),
            "text": Slot(text, (SIGN_MISREADINGS[text],), "OCR"),
        },
        claims=(
            ("There is a sign.", "object"),
            ('The sign reads "{text}".', "scene-text"),
            ("The sign is in the {position}.", "attribute"),
        ),
        triplets=(("sign", "reads", "{text}"), ("sign", "in", "{position}")),
    )


def sign_knowledge(word: str) -> Statement:
    template, true, wrong = SIGN_KNOWLEDGE[word]
    return Statement(
        template,
        {"fact": Slot(true, (wrong,), "Knowledge Error")},
        claims=((template, "fact"),),
        triplets=((f"{word.lower()} sign", "means", "{fact}"),),
    )


def invented(rng: random.Random, cell: tuple[int, int]) -> Statement:
    """A sentence about something that is not in the picture (an Object hallucination)."""
    thing = f"{rng.choice(sorted(COLOURS))} {rng.choice(INVENTED_THINGS)}"
    where = position_name(cell)
    return Statement(
        f"There is also a {{thing}} in the {where}.",
        {"thing": Slot(None, (thing,), "Object")},
        claims=(("There is a {thing}.", "object"),),
        triplets=(("{thing}", "in", where),),
    )


def subjective(text: str) -> Statement:
    return Statement(text, subjective=True)


def truthful_statements(scene: Scene, rng: random.Random) -> list[Statement]:
    """Every sentence of a correct description of ``scene``, in reading order."""
    groups = scene.groups
    out: list[Statement] = []
    if scene.subset == "shapes":
        out += [place(g, scene) for g in groups]
        pairs = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :]]
        for a, b in rng.sample(pairs, k=min(len(pairs), rng.choice((1, 2)))):
            out.append(relation(a, b.name, b.cell))
    elif scene.subset == "counting":
        out += [count(g) for g in groups]
        unequal = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :] if a.count != b.count]
        if unequal:
            out.append(compare(*rng.choice(unequal)))
        out.append(total(groups))
        out.append(relation(groups[0], groups[1].name, groups[1].cell))
    else:
        assert scene.sign is not None
        out.append(sign_reads(scene))
        if scene.sign.text in SIGN_KNOWLEDGE:
            out.append(sign_knowledge(scene.sign.text))
        out += [place(g, scene) for g in groups]
        out.append(relation(groups[0], "sign", scene.sign.cell))
    return out


def adversarial_statements() -> list[Statement]:
    """Sentences quoting markup a model might emit; the app must show it as inert text.

    Meant for a scene with a sign reading "HELLO" in the top middle and a red circle in the bottom left.
    """
    return [
        Statement(
            "A sign in the top middle reads {text} in **bold** letters.",
            {"text": Slot('"HELLO"', ("<script>alert(1)</script>",), "OCR")},
            claims=(("The sign reads {text}.", "scene-text"),),
            triplets=(("sign", "reads", "{text}"),),
        ),
        Statement(
            "Below it, <img src=x onerror=alert(1)> marks a {colour} circle in the bottom left.",
            {"colour": Slot("red", ("blue",), "Color Attribute")},
            claims=(("There is a {colour} circle.", "attribute"),),
            triplets=(("{colour} circle", "in", "bottom left"),),
        ),
    ]
