"""Initial schema: the whole domain (datasets, items, label sets and every kind of annotation).

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "annotators",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=30), nullable=False),
        sa.Column("password_hash", sa.String(length=300), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "datasets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("source_format", sa.String(length=50), nullable=False),
        sa.Column("taxonomy", sa.JSON(), nullable=False),
        sa.Column("label_kinds", sa.JSON(), nullable=False),
        sa.Column("image_root", sa.String(length=1000), nullable=True),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("is_synthetic", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    store_revision = op.create_table(
        "store_revision",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    # The single revision row that every write bumps (see db.engine.write_session).
    op.bulk_insert(store_revision, [{"id": 1, "revision": 0}])
    op.create_table(
        "edit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=True),
        sa.Column("action", sa.String(length=20), nullable=False),
        sa.Column("entity", sa.String(length=50), nullable=False),
        sa.Column("entity_id", sa.Integer(), nullable=True),
        sa.Column("item_id", sa.Integer(), nullable=True),
        sa.Column("label_set_id", sa.Integer(), nullable=True),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotators.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("edit_log", schema=None) as batch_op:
        batch_op.create_index("ix_edit_log_actor", ["annotator_id", "id"], unique=False)
        batch_op.create_index(batch_op.f("ix_edit_log_item_id"), ["item_id"], unique=False)

    op.create_table(
        "items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("external_id", sa.String(length=300), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("subset", sa.String(length=200), nullable=True),
        sa.Column("split", sa.String(length=100), nullable=True),
        sa.Column("source_model", sa.String(length=200), nullable=True),
        sa.Column("task_type", sa.String(length=50), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("response", sa.Text(), nullable=False),
        sa.Column("reference", sa.Text(), nullable=True),
        sa.Column("image_ref", sa.String(length=1000), nullable=True),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("text_hash", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("dataset_id", "external_id", name="uq_items_dataset_external"),
    )
    with op.batch_alter_table("items", schema=None) as batch_op:
        batch_op.create_index("ix_items_dataset_position", ["dataset_id", "position"], unique=False)

    op.create_table(
        "label_sets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=True),
        sa.Column("detector_version", sa.String(length=200), nullable=True),
        sa.Column("prompt_strategy", sa.String(length=200), nullable=True),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotators.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("dataset_id", "kind", "name", name="uq_label_sets_name"),
    )
    op.create_table(
        "claims",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("start", sa.Integer(), nullable=True),
        sa.Column("end", sa.Integer(), nullable=True),
        sa.Column("segment", sa.Integer(), nullable=True),
        sa.Column("segment_text", sa.Text(), nullable=True),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("item_id", "index", name="uq_claims_item_index"),
    )
    op.create_table(
        "item_statuses",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("label_set_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("page", sa.String(length=30), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["label_set_id"], ["label_sets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("label_set_id", "item_id", "page", name="uq_item_statuses"),
    )
    with op.batch_alter_table("item_statuses", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_item_statuses_item_id"), ["item_id"], unique=False)

    op.create_table(
        "rating_tasks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("detector_label_set_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("granularity", sa.String(length=20), nullable=False),
        sa.Column("scale_min", sa.Integer(), nullable=False),
        sa.Column("scale_max", sa.Integer(), nullable=False),
        sa.Column("rubric", sa.JSON(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["detector_label_set_id"], ["label_sets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("dataset_id", "name", name="uq_rating_tasks_name"),
    )
    op.create_table(
        "raw_outputs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("label_set_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("analysis", sa.Text(), nullable=True),
        sa.Column("follows_format", sa.Boolean(), nullable=False),
        sa.Column("parse_error", sa.Text(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["label_set_id"], ["label_sets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("label_set_id", "item_id", name="uq_raw_outputs"),
    )
    with op.batch_alter_table("raw_outputs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_raw_outputs_item_id"), ["item_id"], unique=False)

    op.create_table(
        "sentences",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("start", sa.Integer(), nullable=False),
        sa.Column("end", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.CheckConstraint('start >= 0 AND "end" > start', name="ck_sentences_offsets"),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("item_id", "index", name="uq_sentences_item_index"),
    )
    op.create_table(
        "spans",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("label_set_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("start", sa.Integer(), nullable=False),
        sa.Column("end", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=100), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.CheckConstraint('start >= 0 AND "end" > start', name="ck_spans_offsets"),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["label_set_id"], ["label_sets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("spans", schema=None) as batch_op:
        batch_op.create_index("ix_spans_item", ["item_id"], unique=False)
        batch_op.create_index("ix_spans_label_set_item", ["label_set_id", "item_id"], unique=False)

    op.create_table(
        "token_probabilities",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("label_set_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("token_index", sa.Integer(), nullable=False),
        sa.Column("start", sa.Integer(), nullable=False),
        sa.Column("end", sa.Integer(), nullable=False),
        sa.Column("probability", sa.Float(), nullable=False),
        sa.Column("type", sa.String(length=100), nullable=True),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["label_set_id"], ["label_sets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("token_probabilities", schema=None) as batch_op:
        batch_op.create_index("ix_token_probabilities_ls_item", ["label_set_id", "item_id"], unique=False)

    op.create_table(
        "triplets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("label_set_id", sa.Integer(), nullable=True),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("relation", sa.Text(), nullable=False),
        sa.Column("object", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["label_set_id"], ["label_sets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("triplets", schema=None) as batch_op:
        batch_op.create_index("ix_triplets_item_label_set", ["item_id", "label_set_id"], unique=False)

    op.create_table(
        "claim_labels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("label_set_id", sa.Integer(), nullable=False),
        sa.Column("claim_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=30), nullable=False),
        sa.Column("type", sa.String(length=50), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.CheckConstraint("label IN ('hallucination', 'non-hallucination')", name="ck_claim_label"),
        sa.ForeignKeyConstraint(["claim_id"], ["claims.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["label_set_id"], ["label_sets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("label_set_id", "claim_id", name="uq_claim_labels"),
    )
    with op.batch_alter_table("claim_labels", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_claim_labels_item_id"), ["item_id"], unique=False)

    op.create_table(
        "ratings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("segment_start", sa.Integer(), nullable=False),
        sa.Column("segment_end", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("nothing_flagged_correct", sa.Boolean(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotators.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["task_id"], ["rating_tasks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "task_id", "item_id", "annotator_id", "segment_start", "segment_end", name="uq_ratings"
        ),
    )
    with op.batch_alter_table("ratings", schema=None) as batch_op:
        batch_op.create_index("ix_ratings_task_item", ["task_id", "item_id"], unique=False)

    op.create_table(
        "sentence_labels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("label_set_id", sa.Integer(), nullable=False),
        sa.Column("sentence_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=20), nullable=False),
        sa.Column("error_type", sa.String(length=100), nullable=True),
        sa.Column("override", sa.Boolean(), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.CheckConstraint("label IN ('correct', 'incorrect', 'unknown')", name="ck_sentence_label"),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["label_set_id"], ["label_sets.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["sentence_id"], ["sentences.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("label_set_id", "sentence_id", name="uq_sentence_labels"),
    )
    with op.batch_alter_table("sentence_labels", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sentence_labels_item_id"), ["item_id"], unique=False)

    op.create_table(
        "sentence_scores",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("label_set_id", sa.Integer(), nullable=False),
        sa.Column("sentence_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("parsed", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["label_set_id"], ["label_sets.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["sentence_id"], ["sentences.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("label_set_id", "sentence_id", name="uq_sentence_scores"),
    )
    with op.batch_alter_table("sentence_scores", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sentence_scores_item_id"), ["item_id"], unique=False)

    op.create_table(
        "triplet_judgments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("label_set_id", sa.Integer(), nullable=False),
        sa.Column("triplet_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("verdict", sa.String(length=10), nullable=True),
        sa.Column("wrong_part", sa.String(length=20), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["label_set_id"], ["label_sets.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["triplet_id"], ["triplets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("label_set_id", "triplet_id", name="uq_triplet_judgments"),
    )
    with op.batch_alter_table("triplet_judgments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_triplet_judgments_item_id"), ["item_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("triplet_judgments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_triplet_judgments_item_id"))

    op.drop_table("triplet_judgments")
    with op.batch_alter_table("sentence_scores", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sentence_scores_item_id"))

    op.drop_table("sentence_scores")
    with op.batch_alter_table("sentence_labels", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sentence_labels_item_id"))

    op.drop_table("sentence_labels")
    with op.batch_alter_table("ratings", schema=None) as batch_op:
        batch_op.drop_index("ix_ratings_task_item")

    op.drop_table("ratings")
    with op.batch_alter_table("claim_labels", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_claim_labels_item_id"))

    op.drop_table("claim_labels")
    with op.batch_alter_table("triplets", schema=None) as batch_op:
        batch_op.drop_index("ix_triplets_item_label_set")

    op.drop_table("triplets")
    with op.batch_alter_table("token_probabilities", schema=None) as batch_op:
        batch_op.drop_index("ix_token_probabilities_ls_item")

    op.drop_table("token_probabilities")
    with op.batch_alter_table("spans", schema=None) as batch_op:
        batch_op.drop_index("ix_spans_label_set_item")
        batch_op.drop_index("ix_spans_item")

    op.drop_table("spans")
    op.drop_table("sentences")
    with op.batch_alter_table("raw_outputs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_raw_outputs_item_id"))

    op.drop_table("raw_outputs")
    op.drop_table("rating_tasks")
    with op.batch_alter_table("item_statuses", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_item_statuses_item_id"))

    op.drop_table("item_statuses")
    op.drop_table("claims")
    op.drop_table("label_sets")
    with op.batch_alter_table("items", schema=None) as batch_op:
        batch_op.drop_index("ix_items_dataset_position")

    op.drop_table("items")
    with op.batch_alter_table("edit_log", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_edit_log_item_id"))
        batch_op.drop_index("ix_edit_log_actor")

    op.drop_table("edit_log")
    op.drop_table("store_revision")
    op.drop_table("datasets")
    op.drop_table("annotators")
