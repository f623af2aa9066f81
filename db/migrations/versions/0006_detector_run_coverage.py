"""Detector runs stored before runs were marked: every item of their dataset marked as given to them.

An import now marks the items a detector run's records give (the "done" coverage mark gold has, on the
spans task), and the measures score a run only on the items it was given. A run that records no marks and
no raw outputs is read as given every item, as every run was before; but a later import into the same
run adds marks for its own items only, and the items of the first import on which the run flagged
nothing would then drop out of its scores. So each such run of a dataset with spans gets the marks that
say what was always assumed: every item of the dataset. A run with raw outputs is left as it is (its
outputs say which items it was given), and so is one holding no span (a scorer: no span run).

The downgrade keeps the marks: they say what the store read before, and the marks imports add from now on
cannot be told from them.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_MARK_EVERY_ITEM = """
INSERT INTO item_statuses (label_set_id, item_id, page, status, note, updated_at, version)
SELECT label_sets.id, items.id, 'spans', 'done', NULL, CURRENT_TIMESTAMP, 1
FROM label_sets
JOIN datasets ON datasets.id = label_sets.dataset_id
JOIN items ON items.dataset_id = label_sets.dataset_id
WHERE label_sets.kind = 'detector'
  AND CAST(datasets.label_kinds AS TEXT) LIKE '%"span"%'
  AND EXISTS (SELECT 1 FROM spans WHERE spans.label_set_id = label_sets.id)
  AND NOT EXISTS (SELECT 1 FROM raw_outputs WHERE raw_outputs.label_set_id = label_sets.id)
  AND NOT EXISTS (
    SELECT 1 FROM item_statuses
    WHERE item_statuses.label_set_id = label_sets.id AND item_statuses.page = 'spans'
  )
"""


def upgrade() -> None:
    op.execute(_MARK_EVERY_ITEM)


def downgrade() -> None:
    pass
