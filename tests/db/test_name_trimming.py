"""Names given with spaces around them (`--detector " detA "`) are trimmed by the store's imports, as the
Import page trims them, so they name what they read as; a blank name is refused; a name stored with its
spaces before this rule still answers to its exact spelling. Real SQLite and PostgreSQL."""

from __future__ import annotations

import json

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from db import models as m
from db.access import OPERATOR
from db.transfer import import_file, import_predictions
from formats.base import ReadOptions

TINY = json.dumps(
    [
        {
            "id": f"t{k}",
            "prompt": "Describe.",
            "image_path": "a.jpg",
            "test_solution": "The cat sits on a red mat.",
            "hallucinated_solution": "The cat sits on a <hallucination>red</hallucination> mat.",
        }
        for k in (1, 2)
    ]
).encode()
RUN = json.dumps(
    [
        {
            "id": f"t{k}",
            "output": "<Tagged_Text>The cat <hallucination>sits</hallucination> on a red mat.</Tagged_Text>",
        }
        for k in (1, 2)
    ]
).encode()


def _tiny(engine, name: str = "tiny") -> None:
    outcome = import_file(
        engine,
        TINY,
        actor=OPERATOR,
        source="tiny.json",
        format_name="mhalo",
        options=ReadOptions(dataset=name),
    )
    assert outcome.ok, outcome.problems


def _run(engine, detector: str, dataset: str = "tiny", annotator: str | None = None):
    return import_predictions(
        engine,
        RUN,
        actor=OPERATOR,
        source="run.json",
        dataset=dataset,
        detector=detector,
        annotator=annotator,
    )


def _detectors(engine) -> list[str]:
    with Session(engine) as session:
        return sorted(session.scalars(select(m.LabelSet.name).where(m.LabelSet.kind == "detector")))


def test_a_detector_name_with_spaces_is_the_run_it_reads_as(engine) -> None:
    _tiny(engine)
    assert _run(engine, "detA").ok
    outcome = _run(engine, " detA \t", dataset=" tiny ")
    assert outcome.ok, outcome.problems
    assert _detectors(engine) == ["detA"]


def test_a_new_run_is_stored_under_its_trimmed_name(engine) -> None:
    _tiny(engine)
    assert _run(engine, "  detB ").ok
    assert _detectors(engine) == ["detB"]


def test_a_blank_dataset_name_is_refused_with_its_reason(engine) -> None:
    _tiny(engine)
    outcome = _run(engine, "detA", dataset="  ")
    assert not outcome.ok
    assert [p.reason for p in outcome.problems] == ["the dataset name is empty ('  ' is only white space)"]
    refused = import_file(
        engine,
        TINY,
        actor=OPERATOR,
        source="tiny.json",
        format_name="mhalo",
        options=ReadOptions(dataset=" \n"),
    )
    assert not refused.ok
    assert [p.reason for p in refused.problems] == ["the dataset name is empty (' \\n' is only white space)"]


def test_a_benchmark_imported_under_a_spaced_name_is_stored_trimmed(engine) -> None:
    _tiny(engine, " tiny  ")
    with Session(engine) as session:
        assert list(session.scalars(select(m.Dataset.name))) == ["tiny"]


def test_a_name_stored_with_its_spaces_still_answers_to_them(engine) -> None:
    """Stored before names were trimmed: the exact spelling reaches it, and no second run is made."""
    _tiny(engine)
    assert _run(engine, "old").ok
    with Session(engine) as session, session.begin():
        session.execute(update(m.LabelSet).where(m.LabelSet.name == "old").values(name=" old "))
        session.execute(update(m.Dataset).where(m.Dataset.name == "tiny").values(name=" tiny"))
    outcome = _run(engine, " old ", dataset=" tiny")
    assert outcome.ok, outcome.problems
    assert _detectors(engine) == [" old "]
