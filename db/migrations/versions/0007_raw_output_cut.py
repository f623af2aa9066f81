"""Raw outputs say whether the endpoint cut the answer at its token limit.

A live run named the items whose answer came back cut (``finish_reason: "length"``) in its report only;
the stored output carried no mark, so the item, Compare and an export showed a cut answer as a whole
one. Outputs stored before are not known to be cut: they read as not cut. The column keeps its default:
an app process of a team still running the code from before (upgrades are not stopped all at once)
writes outputs without naming it, and those read as not cut too.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("raw_outputs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("cut", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("raw_outputs", schema=None) as batch_op:
        batch_op.drop_column("cut")
