"""An export its writer refuses half way closes its reading transaction at once. It stayed open until the
garbage collector came by, holding its locks: on PostgreSQL a TRUNCATE, a migration or a dataset's
deletion waited on it (a test run hung on the next test's setup)."""

from __future__ import annotations

import io
import json

import pytest
from sqlalchemy import Engine, text

from db.access import OPERATOR
from db.export_files import export_to
from db.transfer import import_file
from formats.base import FormatError, ReadOptions


def test_a_refused_export_leaves_no_transaction_open(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite's readers hold no lock a writer waits on here")
    records = [{"id": "a", "test_solution": "A cat.", "hallucinated_solution": "A cat."}]
    assert import_file(
        engine,
        json.dumps(records).encode(),
        source="m.json",
        format_name="mhalo",
        options=ReadOptions(dataset="d"),
        actor=OPERATOR,
    ).ok
    # AlignBench names captions by model. The refusal is kept, as a page keeps it to show it (its
    # traceback holds the export's frames).
    with pytest.raises(FormatError, match="has no source model") as refused:
        export_to(engine, "d", "alignbench", io.BytesIO(), actor=OPERATOR)
    with engine.connect() as connection:
        open_here = connection.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND state = 'idle in transaction' AND pid <> pg_backend_pid()"
            )
        ).scalar_one()
    assert open_here == 0
    assert refused.value is not None
