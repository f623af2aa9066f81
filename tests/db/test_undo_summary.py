"""What an undo says it did: the labels it took away as well as the rows it put back (an undo of a
detector run's first import said only "restored no rows")."""

from __future__ import annotations

import json

from sqlalchemy import Engine

from db.access import OPERATOR
from db.import_undo import recent_imports, undo_import
from db.transfer import ImportOutcome, import_file, import_predictions
from formats.base import ReadOptions

GOLD = [
    {
        "id": "a",
        "test_solution": "Two cats.",
        "hallucinated_solution": "<hallucination>Two</hallucination> cats.",
    }
]
RUN = [{"id": "a", "output": "Two <hallucination>cats</hallucination>."}]


def store_gold(engine: Engine, records: list[dict[str, str]] = GOLD) -> None:
    """Dataset ``d`` from a MHALO file of ``records``."""
    assert import_file(
        engine,
        json.dumps(records).encode(),
        source="g.json",
        format_name="mhalo",
        options=ReadOptions(dataset="d"),
        actor=OPERATOR,
    ).ok


def import_run(engine: Engine, records: list[dict[str, str]] = RUN, source: str = "o.json") -> ImportOutcome:
    """Detector ``det``'s MHALO outputs of ``records`` into dataset ``d``."""
    return import_predictions(
        engine,
        json.dumps(records).encode(),
        source=source,
        dataset="d",
        detector="det",
        format_name="mhalo-outputs",
        actor=OPERATOR,
    )


def test_a_runs_import_says_no_new_or_stored_items(engine: Engine) -> None:
    """A detector's outputs bring no items: the summary read "0 new items, 0 already stored"."""
    store_gold(engine)
    outcome = import_run(engine)
    assert outcome.ok
    assert "new items" not in outcome.summary() and "already stored" not in outcome.summary()
    assert outcome.summary().startswith("o.json: mhalo-outputs → dataset 'd': ")


def test_undoing_a_first_run_says_what_it_took_away(engine: Engine) -> None:
    store_gold(engine)
    assert import_run(engine).ok
    newest = recent_imports(engine)[0]
    done = undo_import(engine, newest.log_id, actor=OPERATOR)
    assert done.removed == {"span": 1, "output": 1}
    assert done.summary() == (
        "took away 1 spans, 1 raw outputs, 1 coverage marks; restored no rows; "
        "removed the label sets it had made, now empty: detector:det"
    )
    assert done.to_dict()["removed"] == {"span": 1, "output": 1}
    # The list of recent imports says the same of the undo (it read only "1 coverage marks").
    listed = recent_imports(engine)[0]
    assert listed.undid == newest.log_id
    assert listed.summary() == done.summary()
    assert listed.to_dict()["removed"] == {"span": 1, "output": 1}
