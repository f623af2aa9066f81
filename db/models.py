"""The whole Spanlight domain as SQLAlchemy 2 typed models.

One benchmark item (image + prompt + model response) is annotated by *label sets*: a human annotator's
work, the adjudicated gold, or one run of a detector. Every kind of annotation (spans, sentence labels,
claim labels, triplet judgments, scores, raw outputs) hangs off a label set, so "compare gold with
detector X" and "compare annotator A with B" are the same query.

Offsets are Python code-point indices into ``Item.response`` exactly as stored (see the metrics contract).
Every mutable row carries ``version`` for optimistic locking (SQLAlchemy's ``version_id_col``): a stale
write raises ``StaleDataError`` instead of silently overwriting a colleague's edit.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Connection,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    event,
    false,
)
from sqlalchemy import text as sql_text
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column, relationship

from formats.records import RESPONSE_SCALE

SENTENCE_LABELS = ("correct", "incorrect", "unknown")
CLAIM_LABELS = ("hallucination", "non-hallucination")
LABEL_SET_KINDS = ("gold", "human", "detector")
# Team-mode roles, from most to least rights (see ``db/access.py`` for what each may do).
ROLES = ("admin", "reviewer", "annotator", "viewer")
# The annotation tasks a team assigns and adjudicates (item statuses use the same names as ``page``).
TASKS = ("spans", "sentences", "claims", "triplets", "ratings")
TRIPLET_VERDICTS = ("yes", "no")
TRIPLET_WRONG_PARTS = ("object1", "object2", "relation")
ITEM_STATUSES = ("done", "skipped", "unsure")


def utcnow() -> datetime:
    """Timezone-aware now; stored as UTC on both SQLite and PostgreSQL."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


class Versioned:
    """Mixin for mutable rows: a version counter checked (and bumped) on every UPDATE."""

    version: Mapped[int] = mapped_column(Integer, nullable=False, default=1)

    @declared_attr.directive
    def __mapper_args__(cls) -> dict[str, Any]:
        return {"version_id_col": cls.__table__.c.version}  # type: ignore[attr-defined]  # set on the mapped subclass


class Dataset(Versioned, Base):
    __tablename__ = "datasets"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    source_format: Mapped[str] = mapped_column(String(50))
    # The hallucination types annotators may choose from (MHALO's 12, AlignBench's 8, a custom list ...).
    taxonomy: Mapped[list[Any]] = mapped_column(default=list)
    # Granularity the dataset is annotated at: "span", "sentence", "claim" or "triplet" (several allowed).
    label_kinds: Mapped[list[Any]] = mapped_column(default=list)
    image_root: Mapped[str | None] = mapped_column(String(1000))
    description: Mapped[str] = mapped_column(Text, default="")
    is_synthetic: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # Team settings: {"blind": bool (default true), "allow_preannotation": bool (default false)}.
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)

    items: Mapped[list[Item]] = relationship(back_populates="dataset", cascade="all, delete-orphan")
    label_sets: Mapped[list[LabelSet]] = relationship(back_populates="dataset", cascade="all, delete-orphan")


class Item(Versioned, Base):
    __tablename__ = "items"
    __table_args__ = (
        UniqueConstraint("dataset_id", "external_id", name="uq_items_dataset_external"),
        Index("ix_items_dataset_position", "dataset_id", "position"),
        # The browser's filters, counted and paged in dataset order from the index (migration 0004).
        Index("ix_items_dataset_subset", "dataset_id", "subset", "position"),
        Index("ix_items_dataset_source_model", "dataset_id", "source_model", "position"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    external_id: Mapped[str] = mapped_column(String(300))
    # Stable order inside the dataset (import order); queues walk items by it.
    position: Mapped[int] = mapped_column(Integer)
    subset: Mapped[str | None] = mapped_column(String(200))
    split: Mapped[str | None] = mapped_column(String(100))
    source_model: Mapped[str | None] = mapped_column(String(200))
    # "image-to-text" (captioning, VQA) or "text-to-image" (the image is the model's output).
    task_type: Mapped[str] = mapped_column(String(50), default="image-to-text")
    prompt: Mapped[str] = mapped_column(Text, default="")
    response: Mapped[str] = mapped_column(Text)
    reference: Mapped[str | None] = mapped_column(Text)
    image_ref: Mapped[str | None] = mapped_column(String(1000))
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    # sha256 of the response: spans are only valid against exactly this text.
    text_hash: Mapped[str] = mapped_column(String(64))

    dataset: Mapped[Dataset] = relationship(back_populates="items")
    sentences: Mapped[list[Sentence]] = relationship(
        back_populates="item", cascade="all, delete-orphan", order_by="Sentence.index"
    )
    claims: Mapped[list[Claim]] = relationship(
        back_populates="item", cascade="all, delete-orphan", order_by="Claim.index"
    )
    triplets: Mapped[list[Triplet]] = relationship(
        back_populates="item", cascade="all, delete-orphan", order_by="Triplet.index"
    )


class Sentence(Base):
    """A sentence of an item's response, by offsets (the default splitter or imported rows)."""

    __tablename__ = "sentences"
    __table_args__ = (
        UniqueConstraint("item_id", "index", name="uq_sentences_item_index"),
        CheckConstraint('start >= 0 AND "end" > start', name="ck_sentences_offsets"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"))
    index: Mapped[int] = mapped_column(Integer)
    start: Mapped[int] = mapped_column(Integer)
    end: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String(20), default="splitter")

    item: Mapped[Item] = relationship(back_populates="sentences")


class Claim(Base):
    """A checkable claim (MHaluBench). For text-to-image items claims come from the prompt."""

    __tablename__ = "claims"
    __table_args__ = (UniqueConstraint("item_id", "index", name="uq_claims_item_index"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"))
    index: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    start: Mapped[int | None] = mapped_column(Integer)
    end: Mapped[int | None] = mapped_column(Integer)
    segment: Mapped[int | None] = mapped_column(Integer)
    segment_text: Mapped[str | None] = mapped_column(Text)
    # "response" or "prompt" (text-to-image).
    source: Mapped[str] = mapped_column(String(20), default="response")

    item: Mapped[Item] = relationship(back_populates="claims")


class Triplet(Base):
    """An object-relation-object triplet (Tri-HE).

    ``label_set_id`` is NULL for the image's reference scene graph, and names the label set (the model
    run) whose answer the triplet was extracted from otherwise.
    """

    __tablename__ = "triplets"
    __table_args__ = (
        Index("ix_triplets_item_label_set", "item_id", "label_set_id"),
        Index("ix_triplets_label_set", "label_set_id"),  # which label sets extracted any (migration 0004)
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"))
    label_set_id: Mapped[int | None] = mapped_column(ForeignKey("label_sets.id", ondelete="CASCADE"))
    index: Mapped[int] = mapped_column(Integer)
    subject: Mapped[str] = mapped_column(Text)
    relation: Mapped[str] = mapped_column(Text)
    object: Mapped[str] = mapped_column(Text)

    item: Mapped[Item] = relationship(back_populates="triplets")

    @property
    def kind(self) -> str:
        return "reference" if self.label_set_id is None else "extracted"


class Annotator(Versioned, Base):
    __tablename__ = "annotators"
    __table_args__ = (UniqueConstraint("email", name="uq_annotators_email"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    role: Mapped[str] = mapped_column(String(30), default="annotator")
    # argon2id hash for team mode; never a plain password. NULL in local mode (no login).
    password_hash: Mapped[str | None] = mapped_column(String(300))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # A disabled account cannot log in and its sessions end; its labels stay.
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    # Failed logins since the last success; at the limit the account is locked until ``locked_until``.
    failed_logins: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The e-mail an identity provider vouches for (OIDC login maps onto the account holding it).
    email: Mapped[str | None] = mapped_column(String(300))


class LoginSession(Base):
    """A logged-in browser: only the SHA-256 of its random token is stored, so a copy of the store
    cannot be replayed as a login."""

    __tablename__ = "login_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotators.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ended: Mapped[bool] = mapped_column(Boolean, default=False)


class Assignment(Base):
    """One annotator is to label one item on one task of a dataset (team mode's work split)."""

    __tablename__ = "assignments"
    __table_args__ = (
        UniqueConstraint("dataset_id", "task", "item_id", "annotator_id", name="uq_assignments"),
        Index("ix_assignments_annotator", "annotator_id", "dataset_id", "task"),
        Index("ix_assignments_item", "dataset_id", "task", "item_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    task: Mapped[str] = mapped_column(String(20))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"))
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotators.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AnnotatorWeight(Base):
    """How much an annotator's vote counts when agreed items are promoted to gold, per dataset;
    ``trusted`` annotators' "incorrect" sends an item to review under AlignBench's rule."""

    __tablename__ = "annotator_weights"
    __table_args__ = (UniqueConstraint("dataset_id", "annotator_id", name="uq_annotator_weights"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotators.id", ondelete="CASCADE"))
    weight: Mapped[float] = mapped_column(Float, default=1.0)
    trusted: Mapped[bool] = mapped_column(Boolean, default=True)


class Promotion(Base):
    """One item's labels of one task written into gold by adjudication: who, how, from whose labels.
    Annotators see where the reviewer overrode them by comparing their labels with gold on these items."""

    __tablename__ = "promotions"
    __table_args__ = (Index("ix_promotions_item", "dataset_id", "task", "item_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"))
    task: Mapped[str] = mapped_column(String(20))
    reviewer_id: Mapped[int | None] = mapped_column(ForeignKey("annotators.id", ondelete="SET NULL"))
    # "accept", "merge", "edit", or the bulk rule ("majority", "unanimity", "alignbench").
    method: Mapped[str] = mapped_column(String(30))
    # The annotators whose labels were considered, by id.
    sources: Mapped[list[Any]] = mapped_column(JSON, default=list)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


# Which gold sightings lock: those not lifted (one per annotator and item, by a partial unique index).
SIGHTING_LOCKS = "lifted_at IS NULL"


class GoldSighting(Base):
    """Gold of an item was shown to an annotator who labels blind (team mode), after they finished it:
    on the Overridden labels page, where gold overrode them. From then on their labels on the item are
    no longer an independent judgment if they change, so the store keeps them as they were
    (:func:`db.access.check_label_write`), until an admin lifts the lock.

    A lift is written onto the record (who, when), never by deleting it: the record stays the truth of
    what the annotator saw, and a lifted one no longer locks (:func:`db.access.sighting_locks`, the one
    test every reader of this table applies). Gold shown to them again afterwards is a new record, which
    locks again; so an annotator and item have at most one record that locks, and any number lifted."""

    __tablename__ = "gold_sightings"
    __table_args__ = (
        # On SQLite only: PostgreSQL's is made by ``_locking_index_on_postgresql`` (end of the module).
        Index(
            "uq_gold_sightings_locking",
            "annotator_id",
            "item_id",
            unique=True,
            sqlite_where=sql_text(SIGHTING_LOCKS),
        ).ddl_if(dialect="sqlite"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"), index=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotators.id", ondelete="CASCADE"))
    # Where gold was shown, as the page's title says it ("Overridden labels").
    page: Mapped[str] = mapped_column(String(40))
    shown_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # Set together when an admin lifts the lock; ``lifted_by_id`` stays None when the command line
    # lifted it (it acts as no account).
    lifted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    lifted_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("annotators.id", ondelete="SET NULL", name="fk_gold_sightings_lifted_by")
    )


class LabelSet(Versioned, Base):
    """One source of labels on a dataset: gold, a human annotator, or a detector run."""

    __tablename__ = "label_sets"
    __table_args__ = (UniqueConstraint("dataset_id", "kind", "name", name="uq_label_sets_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))
    name: Mapped[str] = mapped_column(String(200))
    annotator_id: Mapped[int | None] = mapped_column(ForeignKey("annotators.id", ondelete="SET NULL"))
    detector_version: Mapped[str | None] = mapped_column(String(200))
    prompt_strategy: Mapped[str | None] = mapped_column(String(200))
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    dataset: Mapped[Dataset] = relationship(back_populates="label_sets")
    annotator: Mapped[Annotator | None] = relationship()


class Span(Versioned, Base):
    __tablename__ = "spans"
    __table_args__ = (
        Index("ix_spans_label_set_item", "label_set_id", "item_id"),
        Index("ix_spans_item", "item_id"),
        CheckConstraint('start >= 0 AND "end" > start', name="ck_spans_offsets"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    label_set_id: Mapped[int] = mapped_column(ForeignKey("label_sets.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"))
    start: Mapped[int] = mapped_column(Integer)
    end: Mapped[int] = mapped_column(Integer)
    type: Mapped[str | None] = mapped_column(String(100))
    note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class SentenceLabel(Versioned, Base):
    __tablename__ = "sentence_labels"
    __table_args__ = (
        UniqueConstraint("label_set_id", "sentence_id", name="uq_sentence_labels"),
        # Not ``label IN (…)``: SQLite builds a table of the values for that on every row of a bulk
        # insert (migration 0005).
        CheckConstraint(
            "label = 'correct' OR label = 'incorrect' OR label = 'unknown'", name="ck_sentence_label"
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    label_set_id: Mapped[int] = mapped_column(ForeignKey("label_sets.id", ondelete="CASCADE"))
    sentence_id: Mapped[int] = mapped_column(ForeignKey("sentences.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    label: Mapped[str] = mapped_column(String(20))
    error_type: Mapped[str | None] = mapped_column(String(100))
    # True when an annotator confirmed "correct" although a hallucinated span lies inside the sentence.
    override: Mapped[bool] = mapped_column(Boolean, default=False)
    # Extra per-row facts from the source (AlignBench agreement ratio, vote counts, error words ...).
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class ClaimLabel(Versioned, Base):
    __tablename__ = "claim_labels"
    __table_args__ = (
        UniqueConstraint("label_set_id", "claim_id", name="uq_claim_labels"),
        CheckConstraint("label IN ('hallucination', 'non-hallucination')", name="ck_claim_label"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    label_set_id: Mapped[int] = mapped_column(ForeignKey("label_sets.id", ondelete="CASCADE"))
    claim_id: Mapped[int] = mapped_column(ForeignKey("claims.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    label: Mapped[str] = mapped_column(String(30))
    type: Mapped[str | None] = mapped_column(String(50))
    reason: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class TripletJudgment(Versioned, Base):
    __tablename__ = "triplet_judgments"
    __table_args__ = (UniqueConstraint("label_set_id", "triplet_id", name="uq_triplet_judgments"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    label_set_id: Mapped[int] = mapped_column(ForeignKey("label_sets.id", ondelete="CASCADE"))
    triplet_id: Mapped[int] = mapped_column(ForeignKey("triplets.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    # "yes" (supported), "no" (hallucinated) or NULL (the judge could not decide).
    verdict: Mapped[str | None] = mapped_column(String(10))
    wrong_part: Mapped[str | None] = mapped_column(String(20))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class SentenceScore(Base):
    """A detector's 0-100 correctness score for one sentence (AlignBench)."""

    __tablename__ = "sentence_scores"
    __table_args__ = (UniqueConstraint("label_set_id", "sentence_id", name="uq_sentence_scores"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    label_set_id: Mapped[int] = mapped_column(ForeignKey("label_sets.id", ondelete="CASCADE"))
    sentence_id: Mapped[int] = mapped_column(ForeignKey("sentences.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    score: Mapped[float] = mapped_column(Float)
    # False when the detector's output could not be parsed and the score defaulted to 50.
    parsed: Mapped[bool] = mapped_column(Boolean, default=True)


class TokenProbability(Base):
    """A detector's probability that one token of the response is hallucinated (HalLoc)."""

    __tablename__ = "token_probabilities"
    __table_args__ = (Index("ix_token_probabilities_ls_item", "label_set_id", "item_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    label_set_id: Mapped[int] = mapped_column(ForeignKey("label_sets.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"))
    token_index: Mapped[int] = mapped_column(Integer)
    start: Mapped[int] = mapped_column(Integer)
    end: Mapped[int] = mapped_column(Integer)
    probability: Mapped[float] = mapped_column(Float)
    # Optional per-type probability (HalLoc predicts object/attribute/relationship/scene).
    type: Mapped[str | None] = mapped_column(String(100))


class ResponseScore(Versioned, Base):
    """One rating of a whole response by a label set: MMHal-Bench's 0-6 score and hallucination yes/no.

    A label set of any kind holds them (a judge's run is a detector label set, a rater's work a human
    one, the reference ratings gold); no detector spans are involved. The scale travels with the row, so
    a score always says what it is out of.
    """

    __tablename__ = "response_scores"
    __table_args__ = (
        UniqueConstraint("label_set_id", "item_id", name="uq_response_scores"),
        CheckConstraint(
            "scale_min < scale_max AND score >= scale_min AND score <= scale_max",
            name="ck_response_scores_scale",
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    label_set_id: Mapped[int] = mapped_column(ForeignKey("label_sets.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    score: Mapped[float] = mapped_column(Float)
    scale_min: Mapped[int] = mapped_column(Integer, default=RESPONSE_SCALE[0])
    scale_max: Mapped[int] = mapped_column(Integer, default=RESPONSE_SCALE[1])
    # True/False as the rater said; NULL when they did not say (MMHal then reads a score below 3 as yes).
    hallucination: Mapped[bool | None] = mapped_column(Boolean)
    rationale: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class RawOutput(Versioned, Base):
    """A detector's output exactly as produced, kept even when it does not parse (the IF flag)."""

    __tablename__ = "raw_outputs"
    __table_args__ = (UniqueConstraint("label_set_id", "item_id", name="uq_raw_outputs"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    label_set_id: Mapped[int] = mapped_column(ForeignKey("label_sets.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    text: Mapped[str] = mapped_column(Text)
    # Analyze-then-Judge detectors explain themselves before tagging; shown on demand.
    analysis: Mapped[str | None] = mapped_column(Text)
    follows_format: Mapped[bool] = mapped_column(Boolean)
    parse_error: Mapped[str | None] = mapped_column(Text)
    # The answer was cut at the endpoint's token limit: kept and parsed, but it may end before the model
    # had tagged or judged everything, so every view of the output says so. The store's own default lets
    # a process still running the code from before the mark (another app of a team, mid-upgrade) write.
    cut: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class RatingTask(Versioned, Base):
    """A human-rating campaign of one detector's outputs (MHALO Table 4 1-4, Tri-HE 1-5 ...)."""

    __tablename__ = "rating_tasks"
    __table_args__ = (UniqueConstraint("dataset_id", "name", name="uq_rating_tasks_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    detector_label_set_id: Mapped[int] = mapped_column(ForeignKey("label_sets.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    # "segment" (one score per predicted span) or "response" (one score per item).
    granularity: Mapped[str] = mapped_column(String(20), default="segment")
    scale_min: Mapped[int] = mapped_column(Integer, default=1)
    scale_max: Mapped[int] = mapped_column(Integer, default=4)
    # {score: rubric text} shown to raters.
    rubric: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class Rating(Versioned, Base):
    """One rater's score of one predicted segment (or whole response) of a detector."""

    __tablename__ = "ratings"
    __table_args__ = (
        UniqueConstraint(
            "task_id", "item_id", "annotator_id", "segment_start", "segment_end", name="uq_ratings"
        ),
        Index("ix_ratings_task_item", "task_id", "item_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("rating_tasks.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"))
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotators.id", ondelete="CASCADE"))
    # Offsets of the rated predicted segment; -1/-1 for a response-level rating (NULLs break uniqueness).
    segment_start: Mapped[int] = mapped_column(Integer, default=-1)
    segment_end: Mapped[int] = mapped_column(Integer, default=-1)
    # The score; NULL with ``nothing_flagged_correct`` set when the detector flagged nothing.
    score: Mapped[float | None] = mapped_column(Float)
    nothing_flagged_correct: Mapped[bool | None] = mapped_column(Boolean)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


# The task whose "done" status also marks the items a gold label set or a detector run covers: gold
# checked them (and found nothing where it has no span), the run was given them (db.importer's cover).
COVERAGE_PAGE = "spans"


class ItemStatus(Versioned, Base):
    """Where one label set stands on one item: done, skipped or unsure (with a note)."""

    __tablename__ = "item_statuses"
    __table_args__ = (UniqueConstraint("label_set_id", "item_id", "page", name="uq_item_statuses"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    label_set_id: Mapped[int] = mapped_column(ForeignKey("label_sets.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    # The annotation task the status is for ("spans", "sentences", "claims", "triplets", "rating").
    page: Mapped[str] = mapped_column(String(30))
    status: Mapped[str] = mapped_column(String(20))
    note: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class EditLog(Base):
    """Append-only history of every change made through the app: who, when, what, before and after."""

    __tablename__ = "edit_log"
    __table_args__ = (Index("ix_edit_log_actor", "annotator_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    annotator_id: Mapped[int | None] = mapped_column(ForeignKey("annotators.id", ondelete="SET NULL"))
    # create / update / delete / import, undo (``after`` = {"undid": <id of the entry undone>}), or
    # restore (``after`` = {"restored_to": <id of the entry whose state was put back>}), or preannotate
    # (a label set's item started from a detector: ``after`` names it, see db.repositories.preannotation).
    action: Mapped[str] = mapped_column(String(20))
    entity: Mapped[str] = mapped_column(String(50))  # table name
    entity_id: Mapped[int | None] = mapped_column(Integer)
    item_id: Mapped[int | None] = mapped_column(Integer, index=True)
    label_set_id: Mapped[int | None] = mapped_column(Integer)
    before: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class StoreRevision(Base):
    """Counters bumped by every write (one row each time, their sum is the store's revision), so caches
    key on data changes rather than on time."""

    __tablename__ = "store_revision"

    id: Mapped[int] = mapped_column(primary_key=True)
    revision: Mapped[int] = mapped_column(Integer, default=0)


# PostgreSQL's copy of GoldSighting's partial index (uq_gold_sightings_locking), made by its own DDL:
# naming ``postgresql_where`` on the Index would load SQLAlchemy's PostgreSQL dialect (0.06-0.1 s) in
# every process, SQLite's included.
@event.listens_for(GoldSighting.__table__, "after_create")
def _locking_index_on_postgresql(_table: Any, connection: Connection, **_kw: Any) -> None:
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql(
            "CREATE UNIQUE INDEX uq_gold_sightings_locking ON gold_sightings (annotator_id, item_id) "
            f"WHERE {SIGHTING_LOCKS}"
        )
