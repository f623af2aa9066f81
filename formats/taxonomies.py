"""Hallucination-type lists of the seed benchmarks; a dataset may also carry a custom list.

Names are spelled as the papers' tables spell them, so exports and imports stay recognisable.
"""

from __future__ import annotations

# MHALO Table 1: twelve types.
MHALO = (
    "Object",
    "OCR",
    "Numerical Attribute",
    "Color Attribute",
    "Shape Attribute",
    "Spatial Attribute",
    "Logical Error",
    "Calculation Error",
    "Knowledge Error",
    "Query Misunderstanding",
    "Numerical Relation",
    "Spatial Relation",
)
# AlignBench section 3 / appendix: the error categories of its sentence annotations ("Other" catches the rest).
ALIGNBENCH = (
    "Attribute",
    "Object",
    "Number",
    "Location",
    "Illusion",
    "Direction",
    "Text",
    "Relation",
    "Other",
)
# MHaluBench claim types.
MHALUBENCH = ("object", "attribute", "scene-text", "fact")
# HalLoc annotation groups.
HALLOC = ("object", "attribute", "relationship", "scene")

BY_NAME: dict[str, tuple[str, ...]] = {
    "mhalo": MHALO,
    "alignbench": ALIGNBENCH,
    "mhalubench": MHALUBENCH,
    "halloc": HALLOC,
}
