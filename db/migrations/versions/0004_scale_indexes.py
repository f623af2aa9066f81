"""Indexes for browsing large datasets: the browser's subset and source-model filters, and triplets
by label set.

With a million sentences a dataset holds over a hundred thousand items; filtering them by subset or
source model then read every item row (and its text) to count the matches and to find a page of them.
With these indexes both the count and the page come from the index, in dataset order. The triplets
page asks which label sets extracted triplets: by label set, that is one index probe each.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_items_dataset_subset", "items", ["dataset_id", "subset", "position"])
    op.create_index("ix_items_dataset_source_model", "items", ["dataset_id", "source_model", "position"])
    op.create_index("ix_triplets_label_set", "triplets", ["label_set_id"])


def downgrade() -> None:
    op.drop_index("ix_triplets_label_set", table_name="triplets")
    op.drop_index("ix_items_dataset_source_model", table_name="items")
    op.drop_index("ix_items_dataset_subset", table_name="items")
