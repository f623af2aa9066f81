"""The sentence-label CHECK written as comparisons joined by OR, not as ``IN (…)``.

SQLite evaluates ``label IN ('correct', 'incorrect', 'unknown')`` by building a temporary table of the
three values once per statement run, and a bulk insert runs its statement once per row: importing 100 K
sentence labels spent 0.45 s of its 1 s of SQLite work on that alone. ``label = 'correct' OR …`` admits
exactly the same values at no measurable cost. (Lists of one or two values are compared in place, so
the claim-label check keeps its ``IN``.) On SQLite the table is rebuilt to change its CHECK.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_NAME = "ck_sentence_label"
_OR_FORM = "label = 'correct' OR label = 'incorrect' OR label = 'unknown'"
_IN_FORM = "label IN ('correct', 'incorrect', 'unknown')"


def _replace_check(condition: str) -> None:
    with op.batch_alter_table("sentence_labels", schema=None, recreate="auto") as batch_op:
        batch_op.drop_constraint(_NAME, type_="check")
        batch_op.create_check_constraint(_NAME, condition)


def upgrade() -> None:
    _replace_check(_OR_FORM)


def downgrade() -> None:
    _replace_check(_IN_FORM)
