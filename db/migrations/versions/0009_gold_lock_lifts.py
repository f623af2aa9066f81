"""An admin may lift the lock that gold shown to a blind annotator put on an item; the record stays.

Since 0008 a blind annotator shown gold of an item could never change their labels there again, even
when gold was shown by mistake or the admin decided they may label it anew; the only way out was to
delete the record, which would also erase that they saw gold. A lift is now written onto the record
(``lifted_at``, ``lifted_by_id``) and a lifted record no longer locks. Gold shown again after a lift is a
new record that locks again, so the one-record-per-annotator-and-item constraint becomes a unique index
over the records that still lock (``lifted_at IS NULL``); lifted ones may be many.

Stores from before hold no lift: every record keeps locking, as it did. The downgrade cannot say "lifted"
in the older table, so it drops the lifted records (their items were open to the annotator and stay so)
and puts the one-record constraint back.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_LOCKING = "lifted_at IS NULL"
_LIFTED_BY_FK = "fk_gold_sightings_lifted_by"  # named, as SQLite's table rebuild needs it


def upgrade() -> None:
    with op.batch_alter_table("gold_sightings", schema=None) as batch_op:
        batch_op.add_column(sa.Column("lifted_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("lifted_by_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            _LIFTED_BY_FK, "annotators", ["lifted_by_id"], ["id"], ondelete="SET NULL"
        )
        batch_op.drop_constraint("uq_gold_sightings", type_="unique")
    op.create_index(
        "uq_gold_sightings_locking",
        "gold_sightings",
        ["annotator_id", "item_id"],
        unique=True,
        sqlite_where=sa.text(_LOCKING),
        postgresql_where=sa.text(_LOCKING),
    )


def downgrade() -> None:
    op.execute("DELETE FROM gold_sightings WHERE lifted_at IS NOT NULL")
    op.drop_index("uq_gold_sightings_locking", table_name="gold_sightings")
    with op.batch_alter_table("gold_sightings", schema=None) as batch_op:
        batch_op.create_unique_constraint("uq_gold_sightings", ["annotator_id", "item_id"])
        batch_op.drop_constraint(_LIFTED_BY_FK, type_="foreignkey")
        batch_op.drop_column("lifted_by_id")
        batch_op.drop_column("lifted_at")
