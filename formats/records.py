"""Plain in-memory records: the one shape every reader produces and every writer consumes.

A benchmark file, a detector's outputs, the demo generator and the canonical JSONL all become a
:class:`Bundle`; :mod:`db.importer` validates a bundle as a whole and writes it in one transaction, and
:mod:`db.exporter` reads one back out of the store. Format modules therefore never touch the database,
and the database never knows about formats.

Offsets are Python code-point indices into ``ItemRecord.response`` (see the metrics contract).
Annotations refer to sentences and claims by their 0-based index within the item.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class SpanRecord:
    start: int
    end: int
    type: str | None = None
    note: str | None = None


@dataclass
class SentenceRecord:
    """Where a sentence lies in the response (imported rows override the default splitter)."""

    start: int
    end: int


@dataclass
class ClaimRecord:
    text: str
    start: int | None = None
    end: int | None = None
    segment: int | None = None
    segment_text: str | None = None
    source: str = "response"  # "prompt" for text-to-image items


@dataclass
class TripletRecord:
    subject: str
    relation: str
    object: str
    verdict: str | None = None  # "yes" / "no" / None, for extracted triplets with judgments
    wrong_part: str | None = None  # "object1" / "object2" / "relation" when verdict == "no"


@dataclass
class TripletJudgmentRecord:
    """A verdict on a triplet that another label set extracted from the same item (a person judging a
    detector's triplets, Tri-HE): that label set by kind and name, the triplet by its 0-based index
    among that label set's triplets of the item. The judged triplet stays the other label set's; only
    the verdict belongs to the label set holding this record."""

    label_set_kind: str
    label_set_name: str
    index: int
    verdict: str | None = None  # "yes" / "no" / None
    wrong_part: str | None = None  # "object1" / "object2" / "relation" when verdict == "no"


@dataclass
class ItemStatusRecord:
    """Where a label set stands on an item for one annotation task: ``done`` (finished, also when it found
    nothing), ``skipped`` or ``unsure`` (with a note). ``task``: ``spans``, ``sentences``, ``claims``,
    ``triplets``, ``response_scores``, or ``rating:`` and a rating task's name (a campaign's own queue)."""

    task: str
    status: str
    note: str | None = None


@dataclass
class ItemRecord:
    external_id: str
    response: str
    prompt: str = ""
    subset: str | None = None
    split: str | None = None
    source_model: str | None = None
    task_type: str = "image-to-text"
    reference: str | None = None
    image_ref: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    # None: let the default splitter decide.
    sentences: list[SentenceRecord] | None = None
    claims: list[ClaimRecord] = field(default_factory=list)
    reference_triplets: list[TripletRecord] = field(default_factory=list)


@dataclass
class SentenceLabelRecord:
    index: int
    label: str  # correct / incorrect / unknown
    error_type: str | None = None
    override: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class ClaimLabelRecord:
    index: int
    label: str  # hallucination / non-hallucination
    type: str | None = None
    reason: str | None = None


@dataclass
class SentenceScoreRecord:
    index: int
    score: float
    parsed: bool = True


@dataclass
class TokenProbabilityRecord:
    token_index: int
    start: int
    end: int
    probability: float
    type: str | None = None


@dataclass
class RawOutputRecord:
    text: str
    follows_format: bool
    analysis: str | None = None
    parse_error: str | None = None
    # The endpoint cut (one of) the answer(s) short at the token limit (``finish_reason: "length"``): the
    # text is kept and read as it came, but what it says may stop before the model had finished.
    cut: bool = False


# MMHal-Bench's 0–6 rating: the scale of a response score unless the score says otherwise.
RESPONSE_SCALE = (0, 6)


@dataclass
class ResponseScoreRecord:
    """One rating of the whole response by a human or a judge (MMHal-Bench: 0–6, and whether it
    hallucinates). No detector output is needed: the rating is the label."""

    score: float
    hallucination: bool | None = None  # None: the rater did not say
    rationale: str | None = None  # the rater's or judge's explanation
    scale_min: int = RESPONSE_SCALE[0]
    scale_max: int = RESPONSE_SCALE[1]


@dataclass
class Annotations:
    """Everything one label set says about one item."""

    item: str  # the item's external id
    spans: list[SpanRecord] = field(default_factory=list)
    sentence_labels: list[SentenceLabelRecord] = field(default_factory=list)
    claim_labels: list[ClaimLabelRecord] = field(default_factory=list)
    # Triplets extracted from this label set's answer, with their judgments (Tri-HE).
    triplets: list[TripletRecord] = field(default_factory=list)
    # Its verdicts on triplets other label sets extracted from the item.
    triplet_judgments: list[TripletJudgmentRecord] = field(default_factory=list)
    raw_output: RawOutputRecord | None = None
    sentence_scores: list[SentenceScoreRecord] = field(default_factory=list)
    token_probabilities: list[TokenProbabilityRecord] = field(default_factory=list)
    response_score: ResponseScoreRecord | None = None
    # Where it stands on the item per annotation task (a person's "done", "skipped", "unsure").
    statuses: list[ItemStatusRecord] = field(default_factory=list)


@dataclass
class LabelSetRecord:
    kind: str  # gold / human / detector
    name: str
    annotator: str | None = None
    detector_version: str | None = None
    prompt_strategy: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    annotations: list[Annotations] = field(default_factory=list)


@dataclass
class RatingRecord:
    item: str
    rater: str
    score: float | None
    segment_start: int = -1  # -1/-1: the whole response
    segment_end: int = -1
    nothing_flagged_correct: bool | None = None


@dataclass
class RatingTaskRecord:
    name: str
    detector: str  # name of the detector label set being rated
    granularity: str = "segment"
    scale_min: int = 1
    scale_max: int = 4
    rubric: dict[str, str] = field(default_factory=dict)
    ratings: list[RatingRecord] = field(default_factory=list)


@dataclass
class DatasetRecord:
    name: str
    source_format: str
    taxonomy: list[str] = field(default_factory=list)
    label_kinds: list[str] = field(default_factory=list)
    description: str = ""
    is_synthetic: bool = False
    image_root: str | None = None


@dataclass
class Bundle:
    """A dataset's content and any number of label sets and rating tasks, ready to import."""

    dataset: DatasetRecord
    items: list[ItemRecord] = field(default_factory=list)
    label_sets: list[LabelSetRecord] = field(default_factory=list)
    rating_tasks: list[RatingTaskRecord] = field(default_factory=list)
    # Kept on the dataset's row (``Dataset.settings``) by the import, key by key: a mapped import keeps
    # the mapping it was read with under ``import_mapping``, so the same file shape imports again alike.
    dataset_settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def merge_batches(batches: Iterable[Bundle]) -> Bundle:
    """Batches of one dataset as one bundle: the first batch, extended by the items, annotations and
    rating tasks of the others. Every batch names the same label sets in the same order (as an export's
    batches do), so annotations are merged by position."""
    whole: Bundle | None = None
    for batch in batches:
        if whole is None:
            whole = batch
            continue
        whole.items += batch.items
        for label_set, more in zip(whole.label_sets, batch.label_sets, strict=True):
            label_set.annotations += more.annotations
        whole.rating_tasks += batch.rating_tasks
    if whole is None:
        raise ValueError("no batches to merge")
    return whole


def pick_label_set(bundle: Bundle, kind: str = "gold") -> LabelSetRecord | None:
    """The label set a single-label-set writer puts into a file: the first of ``kind``, else the only one."""
    for label_set in bundle.label_sets:
        if label_set.kind == kind:
            return label_set
    return bundle.label_sets[0] if len(bundle.label_sets) == 1 else None
