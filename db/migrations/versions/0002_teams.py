"""Teams: accounts (disabled, lockout, e-mail), login sessions, assignments, annotator weights,
promotions into gold, and per-dataset team settings. Old role names map onto the new ones.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("annotators", schema=None) as batch_op:
        batch_op.add_column(sa.Column("disabled", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column("failed_logins", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("email", sa.String(length=300), nullable=True))
        batch_op.create_unique_constraint("uq_annotators_email", ["email"])
    with op.batch_alter_table("annotators", schema=None) as batch_op:
        batch_op.alter_column("disabled", server_default=None)
        batch_op.alter_column("failed_logins", server_default=None)
    op.execute("UPDATE annotators SET role = 'reviewer' WHERE role = 'adjudicator'")
    op.execute("UPDATE annotators SET role = 'viewer' WHERE role = 'researcher'")

    with op.batch_alter_table("datasets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("settings", sa.JSON(), nullable=True))
    op.execute("UPDATE datasets SET settings = '{}'")
    with op.batch_alter_table("datasets", schema=None) as batch_op:
        batch_op.alter_column("settings", existing_type=sa.JSON(), nullable=False)

    op.create_table(
        "login_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotators.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    with op.batch_alter_table("login_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_login_sessions_annotator_id"), ["annotator_id"], unique=False)

    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("task", sa.String(length=20), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotators.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("dataset_id", "task", "item_id", "annotator_id", name="uq_assignments"),
    )
    with op.batch_alter_table("assignments", schema=None) as batch_op:
        batch_op.create_index(
            "ix_assignments_annotator", ["annotator_id", "dataset_id", "task"], unique=False
        )
        batch_op.create_index("ix_assignments_item", ["dataset_id", "task", "item_id"], unique=False)

    op.create_table(
        "annotator_weights",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.Column("trusted", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotators.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("dataset_id", "annotator_id", name="uq_annotator_weights"),
    )

    op.create_table(
        "promotions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("task", sa.String(length=20), nullable=False),
        sa.Column("reviewer_id", sa.Integer(), nullable=True),
        sa.Column("method", sa.String(length=30), nullable=False),
        sa.Column("sources", sa.JSON(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["reviewer_id"], ["annotators.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("promotions", schema=None) as batch_op:
        batch_op.create_index("ix_promotions_item", ["dataset_id", "task", "item_id"], unique=False)


def downgrade() -> None:
    op.drop_table("promotions")
    op.drop_table("annotator_weights")
    op.drop_table("assignments")
    op.drop_table("login_sessions")
    with op.batch_alter_table("datasets", schema=None) as batch_op:
        batch_op.drop_column("settings")
    with op.batch_alter_table("annotators", schema=None) as batch_op:
        batch_op.drop_constraint("uq_annotators_email", type_="unique")
        batch_op.drop_column("email")
        batch_op.drop_column("locked_until")
        batch_op.drop_column("failed_logins")
        batch_op.drop_column("disabled")
