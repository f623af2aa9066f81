"""Gold shown to a blind annotator is recorded, and their labels on that item are kept from then on.

On a blind dataset in team mode an annotator sees no gold while labeling, but once they finish an item
the Overridden labels page shows them gold where it overrode them; they could then go back to the item
and change their labels to gold's, and agreement and their scores against gold would silently measure
gold against itself. Each item whose gold was shown to an annotator is now recorded (who, which item,
when, on which page), and the store refuses that annotator's edits to the item.

Stores from before hold no record: what the page showed before cannot be known, so no item is locked
until gold is shown again. The downgrade drops the records (and with them the locks).

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gold_sightings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("page", sa.String(length=40), nullable=False),
        sa.Column("shown_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotators.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("annotator_id", "item_id", name="uq_gold_sightings"),
    )
    with op.batch_alter_table("gold_sightings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_gold_sightings_dataset_id"), ["dataset_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_gold_sightings_item_id"), ["item_id"], unique=False)


def downgrade() -> None:
    op.drop_table("gold_sightings")
