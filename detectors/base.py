"""What every strategy is made of: the item it reads, the calls it makes, and how it reads the answers.

A strategy turns one stored item into chat calls (:class:`Call`) — one per item (MHALO), per sentence
(AlignBench) or per extracted triplet (Tri-HE) — possibly in stages, a later stage built from the
answers of an earlier one (Tri-HE extracts triplets, then judges each). Its :meth:`Strategy.parse` turns
the answers into the :class:`~formats.records.Annotations` a predictions file of the same paper would
give, always with the raw answer kept (``raw_output``), whether it followed the format, and why not.

The prompts and the parser version together are hashed (:attr:`Strategy.prompt_hash`), so a label set
records exactly which wording produced it and a changed prompt is never mixed into an earlier run.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from formats.records import Annotations

# Bump when a parser changes how it reads the same answer: the hash then changes with it.
PARSER_VERSION = "1"

# unit -> the model's answer text, for one sample.
Outputs = Mapping[str, str]


@dataclass(frozen=True)
class RunItem:
    """What a strategy may read of one stored item (plain values: no database objects)."""

    external_id: str
    response: str
    prompt: str = ""
    task_type: str = "image-to-text"
    source_model: str | None = None
    # Offsets of the stored sentences, and the benchmark's own number of each (AlignBench's
    # ``sentence_index``; the position when the benchmark has none).
    sentences: tuple[tuple[int, int], ...] = ()
    sentence_numbers: tuple[int, ...] = ()
    claims: tuple[str, ...] = ()
    # The image's scene graph and object list (Tri-HE's reference for judging triplets).
    reference_triplets: tuple[tuple[str, str, str], ...] = ()
    objects: tuple[str, ...] = ()

    def sentence_number(self, k: int) -> int:
        return self.sentence_numbers[k] if k < len(self.sentence_numbers) else k


@dataclass(frozen=True)
class Call:
    """One chat call: ``unit`` names the part of the item it is about (unique within the item)."""

    unit: str
    user: str
    system: str | None = None
    # Attach the item's image (as a data URL content part).
    image: bool = True
    # Repeated once per self-ensemble sample; False for a preparatory call (Tri-HE's extraction).
    sampled: bool = True


class Strategy:
    """A paper's prompting strategy: its calls for an item and the parser of their answers."""

    name: ClassVar[str]
    title: ClassVar[str]
    paper: ClassVar[str]
    # What the answers become: "spans", "sentence scores", "claim labels" or "triplet judgments".
    produces: ClassVar[str]
    stages: ClassVar[int] = 1
    # False when the paper's judge reads text only (Tri-HE's GPT-4 judge).
    uses_image: ClassVar[bool] = True

    def templates(self) -> Sequence[str]:
        """Every prompt text the strategy sends (before the item is filled in): hashed into its version."""
        raise NotImplementedError

    @property
    def prompt_hash(self) -> str:
        digest = hashlib.sha256()
        for part in (self.name, PARSER_VERSION, *self.templates()):
            digest.update(part.encode("utf-8"))
            digest.update(b"\x00")
        return digest.hexdigest()[:12]

    def unsuitable(self, item: RunItem) -> str | None:
        """Why this strategy cannot judge ``item`` (no claims, no sentences …), or None."""
        return None

    def calls(self, item: RunItem, stage: int, outputs: Outputs) -> list[Call]:
        """The calls of ``stage`` (from 0), given the answers of the earlier stages."""
        raise NotImplementedError

    def parse(self, item: RunItem, outputs: Outputs) -> Annotations:
        """The item's annotations from the answers of one sample (every call's unit present)."""
        raise NotImplementedError


_FIELD = re.compile(r"\{(\w+)\}")


def fill(template: str, **values: str) -> str:
    """``template`` with each ``{name}`` replaced in one pass (an item's text that itself holds
    ``{response}`` stays as written); other braces, such as a JSON example's, are left alone."""
    return _FIELD.sub(lambda found: values.get(found.group(1), found.group(0)), template)
