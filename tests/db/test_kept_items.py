"""An import writes labels, never a stored item's own fields: a file that gives a stored item another
prompt or image is imported, the stored ones stay, and the report says so by record and field."""

from __future__ import annotations

import json

from sqlalchemy import Engine

from db.access import OPERATOR
from db.repositories.datasets import get_dataset
from db.repositories.items import get_item
from db.transfer import import_file
from formats.base import ReadOptions

RECORD = {
    "id": "a",
    "question": "Describe.",
    "image": "x.jpg",
    "test_solution": "Two cats.",
    "hallucinated_solution": "<hallucination>Two</hallucination> cats.",
}


def _import(engine: Engine, **changes: str):
    data = json.dumps([{**RECORD, **changes}]).encode()
    return import_file(
        engine, data, source="m.json", format_name="mhalo", options=ReadOptions(dataset="d"), actor=OPERATOR
    )


def test_a_changed_prompt_or_image_is_reported_and_the_stored_item_kept(engine: Engine) -> None:
    assert _import(engine).ok
    again = _import(engine, question="Describe it.", image="y.jpg")
    assert again.ok
    assert [(p.record, p.field, p.severity) for p in again.problems] == [
        ("#0 (id=a)", "prompt", "warning"),
        ("#0 (id=a)", "image", "warning"),
    ]
    assert again.problems[0].reason.startswith("'Describe it.' differs from the stored 'Describe.'")
    dataset = get_dataset(engine, "d")
    assert dataset is not None
    item = get_item(engine, dataset.id, "a")
    assert item is not None and (item.prompt, item.image_ref) == ("Describe.", "x.jpg")
    assert not _import(engine).problems  # the stored values again: nothing to say


def test_a_file_that_moves_every_image_names_ten_and_counts_the_rest(engine: Engine) -> None:
    records = [{**RECORD, "id": f"i{k}", "image": f"{k}.jpg"} for k in range(25)]
    data = json.dumps(records).encode()
    first = import_file(
        engine, data, source="m.json", format_name="mhalo", options=ReadOptions(dataset="d"), actor=OPERATOR
    )
    assert first.ok
    moved = json.dumps([{**r, "image": f"imgs/{r['image']}"} for r in records]).encode()
    again = import_file(
        engine, moved, source="m.json", format_name="mhalo", options=ReadOptions(dataset="d"), actor=OPERATOR
    )
    assert again.ok
    assert [p.record for p in again.problems] == [f"#{k} (id=i{k})" for k in range(10)] + ["-"]
    assert (
        again.problems[-1].reason
        == "and 15 more stored items whose image the file gives otherwise; the stored ones stay"
    )


def test_changed_reference_triplets_are_reported_and_the_stored_ones_kept(engine: Engine) -> None:
    """A corrected Tri-HE scene graph re-imported into the same dataset changed nothing and said nothing."""
    from tests.db.test_trihe_runs import BENCH

    def trihe(document: dict) -> object:
        return import_file(
            engine,
            json.dumps(document).encode(),
            source="tri-he.json",
            format_name="trihe",
            options=ReadOptions(dataset="t"),
            actor=OPERATOR,
        )

    assert trihe(BENCH).ok
    assert not trihe(BENCH).problems  # the same scene graph: nothing to say
    changed = json.loads(json.dumps(BENCH))
    changed["42"]["triplets"] = ["(lamp, is, off)", "(laptop, on, desk)"]
    again = trihe(changed)
    assert again.ok
    assert [(p.record, p.field, p.severity) for p in again.problems] == [
        ("#0 (id=42/0)", "reference triplets", "warning"),
        ("#1 (id=42/1)", "reference triplets", "warning"),
    ]
    assert again.problems[0].reason.startswith(
        "'(lamp, is, off); (laptop, on, desk)' differs from the stored"
    )
