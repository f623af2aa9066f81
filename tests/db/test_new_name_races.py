"""Two connections creating the same new label set (or dataset, or rating task) at once, on the real PostgreSQL.

Each looked the name up, found nothing, and inserted it; the second insert waited for the first
transaction and then failed on the unique constraint, so an import (a file, a live run's batch, a
rating task's) or an annotator's first label ended in a raw ``UniqueViolation``. Now the second waits
before it looks, and then works on what the first made: the same content is nothing to change, other
content needs replacing, and a second live run of the label set is refused naming the first.

The two writers are held at the same point, deterministically: a third connection locks the store's
revision counters, which every write updates just before it commits, until both writers wait (on that
lock, or on each other).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, func, select, text

from db import models as m
from db.access import OPERATOR
from db.detector_runs import DetectorRunStore
from db.engine import make_engine
from db.import_changes import ReplaceRequired
from db.importer import import_bundle, import_bundles
from db.repositories.annotators import get_or_create_annotator
from db.repositories.label_sets import human_label_set
from detectors.runner import RunRefused, RunSpec
from detectors.strategies import get_strategy
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RawOutputRecord,
    SpanRecord,
)

pytestmark = pytest.mark.postgres

Work = Callable[[Engine], Any]


@pytest.fixture
def pg_url(request: pytest.FixtureRequest) -> str:
    """A migrated, emptied PostgreSQL schema holding dataset ``d`` with three items."""
    from tests.conftest import _empty_postgres

    url = str(request.getfixturevalue("pg_schema_url"))
    engine = make_engine(url)
    _empty_postgres(engine)
    items = [ItemRecord(f"i{k}", "A red cat.") for k in range(3)]
    import_bundle(engine, Bundle(DatasetRecord("d", "canonical"), items), actor=OPERATOR)
    engine.dispose()
    return url


def _waiting_behind(connection: Any, pid: int) -> int:
    """How many sessions wait, directly or through another waiting one, for session ``pid``. (Each look
    is a transaction of its own: within one, PostgreSQL shows the sessions as they were at its first.)"""
    with connection.begin():
        return int(
            connection.execute(
                text(
                    """
                WITH RECURSIVE behind(pid) AS (
                    SELECT a.pid FROM pg_stat_activity a WHERE CAST(:pid AS integer) = ANY(pg_blocking_pids(a.pid))
                    UNION
                    SELECT a.pid FROM pg_stat_activity a JOIN behind b ON b.pid = ANY(pg_blocking_pids(a.pid))
                )
                SELECT count(*) FROM behind
                """
                ),
                {"pid": pid},
            ).scalar_one()
        )


def race(url: str, *works: Work) -> list[tuple[str, Any]]:
    """Run ``works`` at once, each on connections of its own, released together once all wait; each
    one's ("ok", value) or ("error", exception)."""
    locker = make_engine(url)
    outcomes: list[tuple[str, Any]] = [("not run", None)] * len(works)

    def run(k: int, work: Work) -> None:
        engine = make_engine(url)
        try:
            outcomes[k] = ("ok", work(engine))
        except Exception as error:  # noqa: BLE001 - the outcome is what the test checks
            outcomes[k] = ("error", error)
        finally:
            engine.dispose()

    threads = [threading.Thread(target=run, args=(k, w)) for k, w in enumerate(works)]
    try:
        with locker.connect() as connection:
            transaction = connection.begin()
            connection.execute(text("LOCK TABLE store_revision IN EXCLUSIVE MODE"))
            pid = connection.execute(text("SELECT pg_backend_pid()")).scalar_one()
            for thread in threads:
                thread.start()
            with locker.connect() as watcher:
                deadline = time.monotonic() + 300  # a condition, not a pause: generous for a busy machine
                while _waiting_behind(watcher, pid) < len(works):
                    ended = [outcomes[k] for k, thread in enumerate(threads) if not thread.is_alive()]
                    assert not ended, f"a writer ended before all reached the store: {ended}"
                    assert time.monotonic() < deadline, "the writers did not both reach the store"
                    time.sleep(0.02)
            transaction.commit()
        for thread in threads:
            thread.join(60)
    finally:
        locker.dispose()
    return outcomes


def _detector(name: str, spans: list[SpanRecord]) -> Bundle:
    return Bundle(
        DatasetRecord("d", "canonical"),
        [],
        [LabelSetRecord("detector", name, annotations=[Annotations("i0", spans=spans)])],
    )


def _count(url: str, query: Any) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return int(connection.execute(query).scalar_one())
    finally:
        engine.dispose()


def _label_sets(url: str, name: str) -> int:
    return _count(url, select(func.count()).select_from(m.LabelSet).where(m.LabelSet.name == name))


def test_two_imports_of_the_same_outputs_into_a_new_label_set_make_it_once(pg_url) -> None:
    red = [SpanRecord(2, 5)]
    outcomes = race(
        pg_url,
        lambda engine: import_bundle(engine, _detector("fresh", red), actor=OPERATOR),
        lambda engine: import_bundle(engine, _detector("fresh", red), actor=OPERATOR),
    )
    assert [kind for kind, _ in outcomes] == ["ok", "ok"], outcomes
    assert _label_sets(pg_url, "fresh") == 1
    assert _count(pg_url, select(func.count()).select_from(m.Span)) == 1  # not written twice


def test_a_second_import_of_other_outputs_into_a_new_label_set_needs_replacing(pg_url) -> None:
    outcomes = race(
        pg_url,
        lambda engine: import_bundle(engine, _detector("fresh", [SpanRecord(2, 5)]), actor=OPERATOR),
        lambda engine: import_bundle(engine, _detector("fresh", [SpanRecord(6, 9)]), actor=OPERATOR),
    )
    kinds = sorted(kind for kind, _ in outcomes)
    assert kinds == ["error", "ok"], outcomes
    refused = next(value for kind, value in outcomes if kind == "error")
    assert isinstance(refused, ReplaceRequired), refused
    assert _label_sets(pg_url, "fresh") == 1
    assert _count(pg_url, select(func.count()).select_from(m.Span)) == 1


def test_two_imports_making_the_same_new_dataset_make_it_once(pg_url) -> None:
    def new_dataset(engine: Engine) -> Any:
        bundle = Bundle(DatasetRecord("new", "canonical"), [ItemRecord("a", "A red cat.")])
        return import_bundle(engine, bundle, actor=OPERATOR)

    outcomes = race(pg_url, new_dataset, new_dataset)
    assert [kind for kind, _ in outcomes] == ["ok", "ok"], outcomes
    assert _count(pg_url, select(func.count()).select_from(m.Dataset).where(m.Dataset.name == "new")) == 1


def test_a_live_run_and_an_import_making_the_same_new_label_set_do_not_crash(pg_url) -> None:
    """Whichever is first makes the label set; the other is told why it cannot use it."""
    settings = RunSpec("d", "fresh", "mhalo-vanilla", "http://127.0.0.1:9/v1", "m", images=False).settings(
        get_strategy("mhalo-vanilla")
    )
    outcomes = race(
        pg_url,
        lambda engine: DetectorRunStore(engine, "d", "fresh", OPERATOR).open_run(settings, "run-a"),
        lambda engine: import_bundle(engine, _detector("fresh", [SpanRecord(2, 5)]), actor=OPERATOR),
    )
    (run_kind, run_value), (import_kind, import_value) = outcomes
    assert _label_sets(pg_url, "fresh") == 1
    if run_kind == "ok":  # the run made it: the import adds to a run's label set, as a file may
        assert import_kind == "ok", import_value
    else:  # the import made it: the run refuses outputs it did not make
        assert isinstance(run_value, RunRefused) and "not made by a live run" in str(run_value)
        assert import_kind == "ok", import_value


def test_two_live_runs_making_the_same_new_label_set_one_runs_the_other_is_refused(pg_url) -> None:
    settings = RunSpec("d", "fresh", "mhalo-vanilla", "http://127.0.0.1:9/v1", "m", images=False).settings(
        get_strategy("mhalo-vanilla")
    )
    outcomes = race(
        pg_url,
        lambda engine: DetectorRunStore(engine, "d", "fresh", OPERATOR).open_run(settings, "run-a"),
        lambda engine: DetectorRunStore(engine, "d", "fresh", OPERATOR).open_run(settings, "run-b"),
    )
    assert sorted(kind for kind, _ in outcomes) == ["error", "ok"], outcomes
    refused = next(value for kind, value in outcomes if kind == "error")
    assert isinstance(refused, RunRefused) and "is already being run on 'd'" in str(refused)
    assert _label_sets(pg_url, "fresh") == 1


def test_two_sessions_of_one_annotator_making_their_label_set_get_the_same_one(pg_url) -> None:
    engine = make_engine(pg_url)
    try:
        annotator = get_or_create_annotator(engine, "ann").id
    finally:
        engine.dispose()
    dataset = _count(pg_url, select(m.Dataset.id).where(m.Dataset.name == "d"))
    outcomes = race(
        pg_url,
        lambda engine: human_label_set(engine, dataset, annotator).id,
        lambda engine: human_label_set(engine, dataset, annotator).id,
    )
    assert [kind for kind, _ in outcomes] == ["ok", "ok"], outcomes
    assert outcomes[0][1] == outcomes[1][1] and _label_sets(pg_url, "ann") == 1


def test_two_promotions_making_a_datasets_first_gold_make_it_once(pg_url) -> None:
    from analysis.adjudication import RULES
    from db.repositories import adjudication as adj
    from tests.db.test_adjudication import Panel

    engine = make_engine(pg_url)
    try:
        dataset = Panel(engine, "panel").dataset
    finally:
        engine.dispose()
    outcomes = race(
        pg_url,
        *(
            lambda engine, task=task: adj.promote_by_rule(
                engine, dataset, task, RULES["majority"], actor=OPERATOR
            )
            for task in ("sentences", "claims")
        ),
    )
    assert [kind for kind, _ in outcomes] == ["ok", "ok"], outcomes
    gold = select(func.count()).select_from(m.LabelSet).where(m.LabelSet.kind == "gold")
    assert _count(pg_url, gold) == 1


def test_a_promotion_and_a_gold_import_making_a_datasets_first_gold_do_not_crash(pg_url) -> None:
    """Adjudication makes the gold label set too: it waits for an import making it (and the other way
    round), where the second ended in a raw UniqueViolation."""
    from db.repositories import adjudication as adj

    dataset = _count(pg_url, select(m.Dataset.id).where(m.Dataset.name == "d"))
    item = _count(pg_url, select(m.Item.id).where(m.Item.external_id == "i1"))

    def promote(engine: Engine) -> Any:
        return adj.promote_item(
            engine, dataset, item, "spans", [(2, 5, "Object")], method="edit", sources=[], actor=OPERATOR
        )

    def gold_file(engine: Engine) -> Any:
        gold = LabelSetRecord("gold", "gold", annotations=[Annotations("i0", spans=[SpanRecord(2, 5)])])
        return import_bundle(engine, Bundle(DatasetRecord("d", "canonical"), [], [gold]), actor=OPERATOR)

    outcomes = race(pg_url, promote, gold_file)
    assert [kind for kind, _ in outcomes] == ["ok", "ok"], outcomes
    assert _count(pg_url, select(func.count()).select_from(m.LabelSet).where(m.LabelSet.kind == "gold")) == 1


def _blocked(connection: Any, application: str) -> bool:
    """Whether the session named ``application`` waits for another one's lock (a transaction a look, as
    :func:`_waiting_behind`)."""
    with connection.begin():
        return bool(
            connection.execute(
                text(
                    "SELECT coalesce(bool_or(cardinality(pg_blocking_pids(pid)) > 0), false) "
                    "FROM pg_stat_activity WHERE application_name = :name"
                ),
                {"name": application},
            ).scalar_one()
        )


def test_a_long_import_into_a_dataset_does_not_hold_up_a_live_runs_writes(pg_url) -> None:
    """Only a dataset or label set being made is held: an import of a large file into dataset ``d``
    held its name to the end, and a live run's batch of outputs into ``d`` waited for all of it."""
    application = f"live-writer-{uuid.uuid4().hex[:8]}"
    engine = make_engine(f"{pg_url}&application_name={application}")
    store = DetectorRunStore(engine, "d", "live", OPERATOR)
    spec = RunSpec("d", "live", "mhalo-vanilla", "http://127.0.0.1:9/v1", "m", images=False)
    store.open_run(spec.settings(get_strategy("mhalo-vanilla")), "run-a")
    in_first_batch, finish = threading.Event(), threading.Event()

    def large_file() -> Iterator[Bundle]:  # read and written batch by batch, in one transaction
        yield Bundle(DatasetRecord("d", "canonical"), [ItemRecord(f"new{k}", "A dog.") for k in range(50)])
        in_first_batch.set()
        finish.wait(120)
        yield Bundle(DatasetRecord("d", "canonical"), [ItemRecord(f"more{k}", "A dog.") for k in range(50)])

    def long_import() -> None:
        other = make_engine(pg_url)
        try:
            import_bundles(other, large_file(), actor=OPERATOR, problems=[])
        finally:
            other.dispose()

    saved = threading.Event()
    output = Annotations(
        "i0", spans=[SpanRecord(2, 5)], raw_output=RawOutputRecord("A <h>red</h> cat.", True)
    )
    run = {"id": "run-a", "updated": "2026-01-01T00:00:00+00:00"}
    importer = threading.Thread(target=long_import)
    writer = threading.Thread(target=lambda: (store.save_outputs([output], run), saved.set()), daemon=True)
    watcher = make_engine(pg_url)
    held_up = False
    importer.start()
    try:
        assert in_first_batch.wait(120), "the import did not reach its first batch"
        writer.start()
        with watcher.connect() as connection:
            deadline = time.monotonic() + 120
            while not saved.is_set() and not held_up:
                assert time.monotonic() < deadline, "the live run's batch neither saved nor waited"
                held_up = _blocked(connection, application)
                saved.wait(0.02)
    finally:
        finish.set()
        importer.join(120)
        writer.join(120)
        watcher.dispose()
        engine.dispose()
    assert not held_up, "the live run's batch waited for the import of other items into its dataset"
    assert saved.is_set()


def test_a_name_held_in_one_stores_schema_does_not_hold_it_in_another(pg_url) -> None:
    """Advisory locks are the database's: a name held while made in one store (schema) held the same
    name up in every other store of the database (each test run's, each team's)."""
    from sqlalchemy.orm import Session

    from db.engine import hold_name
    from tests.conftest import PG_URL
    from tests.pg_schemas import own_schema

    first = make_engine(pg_url)
    with own_schema(PG_URL, "other") as other_url:
        second = make_engine(other_url)
        try:
            with Session(first) as holding, holding.begin():
                hold_name(holding, "label set", 1, "detector", "fresh")
                with Session(second) as other, other.begin():
                    # Held up, the statement would end in a lock timeout instead of returning at once.
                    other.execute(text("SET LOCAL lock_timeout = '60s'"))
                    hold_name(other, "label set", 1, "detector", "fresh")
        finally:
            second.dispose()
            first.dispose()


def _with_detector_run(url: str) -> tuple[int, int]:
    """Dataset ``d`` given a detector run ``det`` to rate: their ids."""
    engine = make_engine(url)
    try:
        run = LabelSetRecord("detector", "det", annotations=[Annotations("i0", spans=[SpanRecord(2, 5)])])
        import_bundle(engine, Bundle(DatasetRecord("d", "canonical"), [], [run]), actor=OPERATOR)
    finally:
        engine.dispose()
    dataset_id = _count(url, select(m.Dataset.id).where(m.Dataset.name == "d"))
    return dataset_id, _count(url, select(m.LabelSet.id).where(m.LabelSet.name == "det"))


def _rating_tasks(url: str, dataset_id: int) -> list[str]:
    from db.repositories.rating_tasks import list_rating_tasks

    engine = make_engine(url)
    try:
        return [t.name for t in list_rating_tasks(engine, dataset_id)]
    finally:
        engine.dispose()


def test_two_managers_creating_the_same_new_rating_task_make_it_once(pg_url) -> None:
    """Both looked the task's name up, found nothing and inserted it: the second ended in a raw
    ``UniqueViolation``. Now the second waits, then is told the dataset already has a task of that name."""
    from db.repositories.rating_tasks import TaskSpec, create_rating_task

    dataset_id, detector_id = _with_detector_run(pg_url)
    spec = TaskSpec("Faithfulness", detector_id)
    create = lambda e: create_rating_task(e, dataset_id, spec, None, actor=OPERATOR)  # noqa: E731
    outcomes = sorted(race(pg_url, create, create), key=lambda outcome: outcome[0])
    assert [kind for kind, _ in outcomes] == ["error", "ok"]
    assert type(outcomes[0][1]) is ValueError
    assert str(outcomes[0][1]) == "This dataset already has a rating task named 'Faithfulness'."
    assert _rating_tasks(pg_url, dataset_id) == ["Faithfulness"]


def test_an_import_and_a_manager_making_the_same_new_rating_task_do_not_crash(pg_url) -> None:
    """An import bringing a rating task the dataset lacks made it just as a manager's form did: the
    second of the two ended in a raw ``UniqueViolation``. Now whichever comes second finds the first's task:
    the import adds to it, the form is told the name is taken."""
    from db.repositories.rating_tasks import TaskSpec, create_rating_task
    from formats.records import RatingTaskRecord

    dataset_id, detector_id = _with_detector_run(pg_url)
    task = RatingTaskRecord("Faithfulness", "det")
    outcomes = race(
        pg_url,
        lambda e: create_rating_task(
            e, dataset_id, TaskSpec("Faithfulness", detector_id), None, actor=OPERATOR
        ),
        lambda e: import_bundle(e, Bundle(DatasetRecord("d", "canonical"), [], [], [task]), actor=OPERATOR),
    )
    form, imported = outcomes
    assert imported[0] == "ok" and not imported[1].problems, outcomes
    assert form[0] == "ok" or (type(form[1]) is ValueError and "already has a rating task" in str(form[1])), (
        outcomes
    )
    assert _rating_tasks(pg_url, dataset_id) == ["Faithfulness"]
