"""Response scores: one rating of a whole response per label set (MMHal-Bench's 0-6 score and
hallucination yes/no), with the scale it is on.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "response_scores",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("label_set_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("scale_min", sa.Integer(), nullable=False),
        sa.Column("scale_max", sa.Integer(), nullable=False),
        sa.Column("hallucination", sa.Boolean(), nullable=True),
        sa.Column("rationale", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.CheckConstraint(
            "scale_min < scale_max AND score >= scale_min AND score <= scale_max",
            name="ck_response_scores_scale",
        ),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["label_set_id"], ["label_sets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("label_set_id", "item_id", name="uq_response_scores"),
    )
    with op.batch_alter_table("response_scores", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_response_scores_item_id"), ["item_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("response_scores", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_response_scores_item_id"))
    op.drop_table("response_scores")
