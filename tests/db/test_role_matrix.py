"""Who may write what: every write function of the store × every kind of user, in team and in local mode,
on SQLite and on PostgreSQL.

The checks live in the functions that write (:mod:`db.access`), so this calls them directly, as a page
or a script would, with each kind of actor. A refused call raises :class:`Forbidden` and leaves the store
exactly as it was: the store revision (bumped by every commit) and the edit log are compared before and
after. :data:`WRITES` is the table: one row per function (a few functions have a second row for another
path through them). :func:`test_every_write_function_has_a_row` fails when a public function under
``db/`` or ``demo/`` that writes — opens ``write_session``, or calls a function that does — has neither a
row nor a reason in :data:`NOT_BY_ACTOR`.
"""

from __future__ import annotations

import ast
import json
import random
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from analysis.adjudication import RULES
from db import models as m
from db.access import OPERATOR, Actor, Forbidden
from db.engine import make_engine, store_revision, write_session
from db.export_files import export_file
from db.exporter import export_bundle
from db.import_undo import recent_imports, undo_import
from db.importer import import_bundle, import_bundles
from db.login_sessions import IDLE_LIMIT
from db.migrate import upgrade
from db.repositories import adjudication, assignments, gold_sightings, history, labeling, preannotation
from db.repositories.accounts import (
    add_user,
    end_session,
    set_disabled,
    set_password,
    set_role,
    start_session,
)
from db.repositories.annotators import find_annotator, get_or_create_annotator
from db.repositories.datasets import (
    dataset_settings,
    delete_dataset,
    set_dataset_settings,
    set_image_root,
    set_taxonomy,
)
from db.repositories.label_sets import human_label_set
from db.repositories.rating_tasks import (
    TaskSpec,
    create_rating_task,
    export_ratings,
    get_rating_task,
    import_ratings,
    rate,
    update_rating_task,
)
from db.transfer import import_file, import_path, import_predictions, import_table
from demo.load import ensure_demo, load_demo
from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, SpanRecord
from tests.conftest import PG_URL
from tests.db.import_samples import canonical, gold_bundle
from tests.db.test_importer import RESPONSE, _bundle
from tests.pg_schemas import own_schema, schema_of

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------------------------------ the actors

# The accounts of the test store: name -> (role, disabled).
USERS = {
    "ada": ("admin", False),
    "rex": ("reviewer", False),
    "ann": ("annotator", False),  # assigned item x1 on every task
    "ben": ("annotator", False),  # assigned item x1 too; acts on ann's label set
    "lou": ("annotator", False),  # assigned nothing
    "vic": ("viewer", False),
    "gus": ("admin", True),  # an admin whose account is disabled
}
ASSIGNED = ("ann", "ben")


@dataclass(frozen=True)
class Case:
    """Who acts (a user's name, or None for the command line), in which mode, and on whose labels:
    ``own`` (the actor's human label set), ``ann`` (another annotator's), ``gold`` or ``detector``.
    ``login``: the actor acts through a login session (as a page does) that is ``live``, ``ended``
    (logged out) or ``idle`` (past its idle limit); None, as the command line and scripts do."""

    title: str
    team: bool
    user: str | None
    target: str = "own"
    login: str | None = None


ADMIN = Case("admin", True, "ada")
REVIEWER = Case("reviewer", True, "rex")
ASSIGNED_ANNOTATOR = Case("annotator, item assigned", True, "ann")
UNASSIGNED = Case("annotator, item not assigned", True, "lou")
FOREIGN = Case("annotator on someone else's label set", True, "ben", "ann")
VIEWER = Case("viewer", True, "vic")
DISABLED = Case("disabled admin", True, "gus")
TEAM_GOLD = Case("admin on gold", True, "ada", "gold")
TEAM_DETECTOR = Case("admin on a detector run", True, "ada", "detector")
COMMAND_LINE = Case("command line", True, None)
# A page's actor carries its login session: a tab whose login has ended cannot write through the actor
# it was drawn with. (The labeling functions take an annotator id; their pages check the login first.)
SIGNED_IN = Case("admin through a live login", True, "ada", login="live")
LOGGED_OUT = Case("admin whose login has ended", True, "ada", login="ended")
IDLE = Case("admin whose login has idled out", True, "ada", login="idle")
THROUGH_LOGINS = {SIGNED_IN: True, LOGGED_OUT: False, IDLE: False}
LOCAL_OWN = Case("local: own label set", False, "lou")
LOCAL_FOREIGN = Case("local: someone else's label set", False, "ben", "ann")
LOCAL_GOLD = Case("local: gold", False, "lou", "gold")
LOCAL_DETECTOR = Case("local: detector run", False, "lou", "detector")
LOCAL_ANYONE = Case("local: an annotator", False, "lou")

TEAM_USERS = (ADMIN, REVIEWER, ASSIGNED_ANNOTATOR, UNASSIGNED, VIEWER, DISABLED)

# What each kind of write expects of each case: True allowed, False refused.
EXPECTED: dict[str, dict[Case, bool]] = {
    # labeling: one's own human label set; in team mode an annotator only on assigned items; never gold
    # or a detector run, in either mode.
    "label": {
        ADMIN: True,
        REVIEWER: True,
        ASSIGNED_ANNOTATOR: True,
        UNASSIGNED: False,
        FOREIGN: False,
        VIEWER: False,
        DISABLED: False,
        TEAM_GOLD: False,
        TEAM_DETECTOR: False,
        LOCAL_OWN: True,
        LOCAL_FOREIGN: False,
        LOCAL_GOLD: False,
        LOCAL_DETECTOR: False,
    },
    # making one's own label set: anyone who may label (assigned or not)
    "own label set": {
        **dict.fromkeys(TEAM_USERS, False),
        ADMIN: True,
        REVIEWER: True,
        ASSIGNED_ANNOTATOR: True,
        UNASSIGNED: True,
        LOCAL_ANYONE: True,
    },
    "manage_data": {
        **dict.fromkeys(TEAM_USERS, False),
        ADMIN: True,
        COMMAND_LINE: True,
        LOCAL_ANYONE: True,
        **THROUGH_LOGINS,
    },
    "manage_team": {
        **dict.fromkeys(TEAM_USERS, False),
        ADMIN: True,
        COMMAND_LINE: True,
        LOCAL_ANYONE: True,
        **THROUGH_LOGINS,
    },
    # writing gold by adjudication: reviewers and admins (everyone in local mode)
    "adjudicate": {
        **dict.fromkeys(TEAM_USERS, False),
        ADMIN: True,
        REVIEWER: True,
        COMMAND_LINE: True,
        LOCAL_ANYONE: True,
        **THROUGH_LOGINS,
    },
    # undoing one's latest action: as labeling, except that an adjudicator undoes their own change to gold
    "undo": {
        ADMIN: True,
        REVIEWER: True,
        ASSIGNED_ANNOTATOR: True,
        UNASSIGNED: False,
        FOREIGN: False,
        VIEWER: False,
        DISABLED: False,
        TEAM_GOLD: True,
        TEAM_DETECTOR: False,
        LOCAL_OWN: True,
        LOCAL_FOREIGN: False,
        LOCAL_GOLD: True,
        LOCAL_DETECTOR: False,
    },
    # restoring an earlier state of a label set on an item: as labeling, on human label sets
    "restore": {
        ADMIN: True,
        REVIEWER: True,
        ASSIGNED_ANNOTATOR: True,
        UNASSIGNED: False,
        FOREIGN: False,
        VIEWER: False,
        DISABLED: False,
        LOCAL_OWN: True,
        LOCAL_FOREIGN: False,
    },
    # starting from a detector: as labeling in local mode; in team mode nobody, until the dataset allows
    # it (then as labeling: the rows below with ``prepare`` allow it first)
    "preannotate": {
        **dict.fromkeys(TEAM_USERS, False),
        FOREIGN: False,
        TEAM_GOLD: False,
        TEAM_DETECTOR: False,
        LOCAL_OWN: True,
        LOCAL_FOREIGN: False,
        LOCAL_GOLD: False,
        LOCAL_DETECTOR: False,
    },
    "export": {
        **dict.fromkeys(TEAM_USERS, False),
        ADMIN: True,
        REVIEWER: True,
        COMMAND_LINE: True,
        LOCAL_ANYONE: True,
        **THROUGH_LOGINS,
    },
}

# ----------------------------------------------------------------------------------------- the store


@dataclass
class World:
    """The test store: dataset ``tiny`` (items x1, x2; gold, detector ``eager``, a rating task, one
    undoable import) and dataset ``spare`` (no label sets), the users above, each with a label set on
    ``tiny`` holding one span on x1."""

    engine: Engine
    dataset: int
    spare: int
    item: int
    claim: int
    triplet: int
    label_sets: dict[str, int]  # user name, "gold" or "detector" -> label set id
    spans: dict[int, int]  # label set id -> one of its spans on x1
    users: dict[str, int]
    rating_task: int
    undoable_import: int


@dataclass(frozen=True)
class Act:
    """One call's actor and what it acts on."""

    actor: Actor
    label_set: int
    span: int

    @property
    def uid(self) -> int:
        assert self.actor.id is not None, "labeling is always done by an annotator"
        return self.actor.id


def _build(engine: Engine) -> World:
    """Everything is set up in local mode, where every right is granted, then the test picks its mode."""
    tiny = _bundle(items=[*_bundle().items, ItemRecord(external_id="x2", response=RESPONSE)])
    import_bundle(engine, tiny, actor=OPERATOR)
    import_bundle(
        engine,
        Bundle(DatasetRecord("spare", "canonical"), items=[ItemRecord("s1", "Spare text.")]),
        actor=OPERATOR,
    )
    with write_session(engine) as session:
        for name, (role, _) in USERS.items():
            session.add(m.Annotator(name=name, role=role))
    with Session(engine) as session:
        users = {name: uid for name, uid in session.execute(select(m.Annotator.name, m.Annotator.id))}
        dataset, spare = (
            session.scalar(select(m.Dataset.id).where(m.Dataset.name == n)) for n in ("tiny", "spare")
        )
        item = session.scalar(select(m.Item.id).where(m.Item.external_id == "x1"))
        claim = session.scalar(select(m.Claim.id).where(m.Claim.item_id == item, m.Claim.index == 0))
        triplet = session.scalar(
            select(m.Triplet.id).where(m.Triplet.item_id == item, m.Triplet.label_set_id.is_(None))
        )
        shared = {
            kind: session.scalar(select(m.LabelSet.id).where(m.LabelSet.kind == kind))
            for kind in ("gold", "detector")
        }
    assert dataset and spare and item and claim and triplet and all(shared.values())
    label_sets = {**shared, **{name: human_label_set(engine, dataset, users[name]).id for name in USERS}}
    spans = {}
    for name in USERS:
        added = labeling.add_span(engine, label_sets[name], item, 2, 5, None, users[name])
        spans[label_sets[name]] = added.entity_id
        labeling.add_span(engine, label_sets[name], item, 6, 9, None, users[name])  # restore takes it away
        # a skipped item, for clear_item_status
        labeling.set_item_status(engine, label_sets[name], item, "sentences", "skipped", users[name])
    task = create_rating_task(
        engine, dataset, TaskSpec("judged", shared["detector"], "response", 1, 5), None, actor=OPERATOR
    )
    regold = LabelSetRecord("gold", "gold", annotations=[Annotations("x1", spans=[SpanRecord(0, 1)])])
    import_bundle(engine, _bundle(label_sets=[regold]), actor=OPERATOR, replace_existing=True)
    with Session(engine) as session:
        for label_set in shared.values():
            spans[label_set] = session.scalar(
                select(m.Span.id).where(m.Span.label_set_id == label_set, m.Span.item_id == item).limit(1)
            )
    with write_session(engine) as session:
        for name in ASSIGNED:
            for task_name in m.TASKS:
                session.add(
                    m.Assignment(dataset_id=dataset, task=task_name, item_id=item, annotator_id=users[name])
                )
        for name, (_, disabled) in USERS.items():
            session.get_one(m.Annotator, users[name]).disabled = disabled
    return World(
        engine=engine,
        dataset=dataset,
        spare=spare,
        item=item,
        claim=claim,
        triplet=triplet,
        label_sets=label_sets,
        spans=spans,
        users=users,
        rating_task=task,
        undoable_import=recent_imports(engine, 1)[0].log_id,
    )


def _act(world: World, case: Case) -> Act:
    """The case's actor; when it acts on someone else's labels, their span and an edit-log entry of the
    actor's own on it (as an older store or an adjudication could hold), so undo has something to try."""
    if case.user is None:
        return Act(OPERATOR, 0, 0)
    uid = world.users[case.user]
    role = USERS[case.user][0]
    label_set = world.label_sets[case.user if case.target == "own" else case.target]
    span = world.spans[label_set]
    if case.target != "own":
        with write_session(world.engine) as session:
            row = session.get_one(m.Span, span)
            session.add(
                m.EditLog(
                    annotator_id=uid,
                    action="create",
                    entity="spans",
                    entity_id=span,
                    item_id=world.item,
                    label_set_id=label_set,
                    after={
                        **{
                            k: getattr(row, k)
                            for k in ("label_set_id", "item_id", "start", "end", "type", "note")
                        },
                        "version": row.version,
                        "description": "a span",
                    },
                )
            )
    return Act(Actor(uid, case.user, role, login=_login(world.engine, uid, case.login)), label_set, span)


def _login(engine: Engine, uid: int, state: str | None) -> int | None:
    """A login session of the user in the given state (see :class:`Case`), as a page would hold it."""
    if state is None:
        return None
    token = start_session(engine, uid)
    if state == "ended":
        end_session(engine, token)
    with write_session(engine) as session:
        row = session.scalars(
            select(m.LoginSession)
            .where(m.LoginSession.annotator_id == uid)
            .order_by(m.LoginSession.id.desc())
        ).first()
        assert row is not None
        if state == "idle":
            row.last_seen = m.utcnow() - IDLE_LIMIT - timedelta(minutes=1)
        return row.id


# ------------------------------------------------------------------------------------------ the table


@dataclass(frozen=True)
class Write:
    function: str  # module.function, as the scan below names it
    kind: str  # a key of EXPECTED
    call: Callable[[World, Act], Any]
    writes: bool = True  # False: reads only (an export), so an allowed call changes nothing either
    variant: str = ""
    prepare: Callable[[World], Any] | None = None  # run by the command line before the case is measured

    @property
    def id(self) -> str:
        return self.function.rsplit(".", 1)[1] + (f"[{self.variant}]" if self.variant else "")


L = "db.repositories.labeling."
D = "db.repositories.datasets."
R = "db.repositories.rating_tasks."
A = "db.repositories.accounts."
PASSWORD = "a long enough password"


def _predictions(w: World, a: Act) -> Any:
    output = json.dumps({"id": "x1", "output": f"<Tagged_Text>{RESPONSE}</Tagged_Text>"}).encode()
    return import_predictions(
        w.engine,
        output,
        actor=a.actor,
        source="o.jsonl",
        dataset="tiny",
        detector="d2",
        format_name="mhalo-outputs",
    )


def _ratings(w: World, a: Act) -> Any:
    task = get_rating_task(w.engine, w.rating_task)
    assert task is not None
    header = "item_id,detector,segment_index,segment_start,segment_end,rater,score,nothing_flagged_correct\n"
    data = (header + "x1,eager,,,,carol,4,\n").encode()
    outcome = import_ratings(w.engine, task, data, actor=a.actor, source="r.csv")
    assert outcome.ok, [str(p) for p in outcome.problems]
    return outcome


def _export_ratings(w: World, a: Act) -> Any:
    task = get_rating_task(w.engine, w.rating_task)
    assert task is not None
    return export_ratings(w.engine, task, filename="r.csv", actor=a.actor)


def _first_entry(w: World, label_set: int) -> int:
    """The label set's first logged change on the item: restoring it changes what came after."""
    with Session(w.engine) as session:
        first = session.scalar(
            select(func.min(m.EditLog.id)).where(
                m.EditLog.label_set_id == label_set, m.EditLog.item_id == w.item
            )
        )
    assert first is not None, "every human label set holds two logged spans on the item"
    return first


def _import_table(w: World, a: Act) -> Any:
    from formats.base import ReadOptions
    from formats.mapping_spec import ImportMapping
    from formats.tables import file_source

    rows = b"id,response\nt1,A table row.\n"
    mapping = ImportMapping.from_dict({"version": 1, "fields": {"id": "id", "response": "response"}})
    outcome = import_table(
        w.engine, file_source(rows, "t.csv"), actor=a.actor, mapping=mapping, options=ReadOptions(dataset="t")
    )
    assert outcome.ok, outcome.summary()
    return outcome


LIVE_SETTINGS = {"model": "m", "strategy": "vanilla", "prompt_hash": "0"}
LIVE_RUN = {"id": "r1", "updated": "2026-01-01T00:00:00+00:00", "status": "done"}


def _live_store(w: World, a: Act, opened: bool) -> Any:
    """A live run's store on dataset ``tiny``. ``opened``: the run is begun first (by the command line)
    when the actor may run detectors at all; a refused call must fail on its own check, writing nothing."""
    from db.access import require_now
    from db.detector_runs import DetectorRunStore

    try:
        require_now(w.engine, a.actor, "manage_data")
    except Forbidden:
        opened = False
    if opened:
        DetectorRunStore(w.engine, "tiny", "live", OPERATOR).open_run(LIVE_SETTINGS, LIVE_RUN["id"])
    return DetectorRunStore(w.engine, "tiny", "live", a.actor)


def _import_file(w: World, a: Act) -> Any:
    outcome = import_file(w.engine, canonical(gold_bundle()), actor=a.actor, source="gold.jsonl")
    assert outcome.ok, outcome.summary()
    return outcome


def _import_path(w: World, a: Act) -> Any:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "gold.jsonl"
        path.write_bytes(canonical(gold_bundle()))
        outcome = import_path(w.engine, path, actor=a.actor, source="gold.jsonl")
    assert outcome.ok, outcome.summary()
    return outcome


def _allow_preannotation(w: World) -> Any:
    return set_dataset_settings(w.engine, w.dataset, allow_preannotation=True, actor=OPERATOR)


def _preannotate(w: World, a: Act) -> Any:
    """Over the actor's two spans on x1 (confirmed), from the dataset's detector."""
    detector = w.label_sets["detector"]
    return preannotation.preannotate(w.engine, a.label_set, w.item, "spans", detector, a.uid, replace=True)


def _preannotate_dataset(w: World, a: Act) -> Any:
    """Sentences of every item the actor may label that the detector ran on (x1): nobody labeled any."""
    detector = w.label_sets["detector"]
    started = preannotation.preannotate_dataset(w.engine, a.label_set, "sentences", detector, a.uid)
    assert started == 1, started
    return started


def _gold_shown_to_ann(w: World) -> Any:
    """Gold of x1 shown to ann, which locks it for her: a lock for the case to lift."""
    with write_session(w.engine) as session:
        session.add(
            m.GoldSighting(dataset_id=w.dataset, item_id=w.item, annotator_id=w.users["ann"], page="p")
        )


P = "db.repositories.preannotation."

WRITES = [
    # labeling
    Write(P + "preannotate", "preannotate", _preannotate),
    Write(P + "preannotate", "label", _preannotate, variant="allowed", prepare=_allow_preannotation),
    Write(P + "preannotate_dataset", "preannotate", _preannotate_dataset),
    Write(
        P + "preannotate_dataset",
        "label",
        _preannotate_dataset,
        variant="allowed",
        prepare=_allow_preannotation,
    ),
    Write(
        L + "add_span",
        "label",
        lambda w, a: labeling.add_span(w.engine, a.label_set, w.item, 0, 1, None, a.uid),
    ),
    Write(L + "retype_span", "label", lambda w, a: labeling.retype_span(w.engine, a.span, "Object", a.uid)),
    Write(L + "delete_span", "label", lambda w, a: labeling.delete_span(w.engine, a.span, a.uid)),
    Write(
        L + "set_sentence_label",
        "label",
        lambda w, a: labeling.set_sentence_label(w.engine, a.label_set, w.item, 0, "unknown", a.uid),
    ),
    Write(
        L + "set_claim_label",
        "label",
        lambda w, a: labeling.set_claim_label(w.engine, a.label_set, w.claim, "hallucination", a.uid),
    ),
    Write(
        L + "set_triplet_judgment",
        "label",
        lambda w, a: labeling.set_triplet_judgment(w.engine, a.label_set, w.triplet, "yes", a.uid),
    ),
    Write(
        L + "set_item_status",
        "label",
        lambda w, a: labeling.set_item_status(
            w.engine, a.label_set, w.item, "spans", "unsure", a.uid, note="?"
        ),
    ),
    Write(
        L + "set_item_status",
        "label",
        lambda w, a: labeling.set_item_status(
            w.engine, a.label_set, w.item, f"rating:{w.rating_task}", "skipped", a.uid
        ),
        variant="rating queue",
        # Blind, x1 would wait for the annotators' own labeling of it (test_rating_holds tests that).
        prepare=_allow_preannotation,
    ),
    Write(
        L + "clear_item_status",
        "label",
        lambda w, a: labeling.clear_item_status(w.engine, a.label_set, w.item, "sentences", a.uid),
    ),
    Write(
        L + "sync_done",
        "label",
        lambda w, a: labeling.sync_done(w.engine, a.label_set, w.item, "spans", True, a.uid),
    ),
    Write(
        L + "set_rating",
        "label",
        lambda w, a: labeling.set_rating(
            w.engine, w.rating_task, w.item, a.uid, score=3, label_set_id=a.label_set
        ),
        # Blind, x1 would wait for the annotators' own labeling of it (test_rating_holds tests that).
        prepare=_allow_preannotation,
    ),
    Write(
        L + "set_response_score",
        "label",
        lambda w, a: labeling.set_response_score(
            w.engine, a.label_set, w.item, 4, a.uid, hallucination=False
        ),
    ),
    Write(
        R + "rate",
        "label",
        lambda w, a: rate(w.engine, w.rating_task, w.item, a.uid, a.label_set, score=2),
        prepare=_allow_preannotation,
    ),
    Write(
        L + "undo_last",
        "undo",
        lambda w, a: (
            labeling.undo_last(w.engine, a.uid, [a.label_set], item_id=w.item) or pytest.fail("no undo")
        ),
    ),
    Write(
        "db.repositories.label_sets.human_label_set",
        "own label set",
        lambda w, a: human_label_set(w.engine, w.spare, a.uid),
    ),
    # data
    Write(
        "db.importer.import_bundle",
        "manage_data",
        lambda w, a: import_bundle(
            w.engine,
            Bundle(DatasetRecord("new", "canonical"), items=[ItemRecord("n1", "New.")]),
            actor=a.actor,
        ),
    ),
    Write(
        "db.importer.import_bundles",
        "manage_data",
        lambda w, a: import_bundles(
            w.engine,
            [Bundle(DatasetRecord("new", "canonical"), items=[ItemRecord(f"n{k}", "New.")]) for k in (1, 2)],
            actor=a.actor,
            problems=[],
        ),
    ),
    Write("db.transfer.import_file", "manage_data", _import_file),
    Write("db.transfer.import_path", "manage_data", _import_path),
    Write("db.transfer.import_table", "manage_data", _import_table),
    Write("db.transfer.import_predictions", "manage_data", _predictions),
    Write(R + "import_ratings", "manage_data", _ratings),
    Write(
        "db.import_undo.undo_import",
        "manage_data",
        lambda w, a: undo_import(w.engine, w.undoable_import, actor=a.actor),
    ),
    Write(
        D + "set_image_root",
        "manage_data",
        lambda w, a: set_image_root(w.engine, w.dataset, "img", actor=a.actor),
    ),
    Write(
        D + "set_taxonomy",
        "manage_data",
        lambda w, a: set_taxonomy(w.engine, w.dataset, ["Object"], actor=a.actor),
    ),
    Write(
        D + "set_dataset_settings",
        "manage_data",
        lambda w, a: set_dataset_settings(w.engine, w.dataset, blind=False, actor=a.actor),
    ),
    Write(D + "delete_dataset", "manage_data", lambda w, a: delete_dataset(w.engine, "spare", actor=a.actor)),
    Write(
        R + "create_rating_task",
        "manage_data",
        lambda w, a: create_rating_task(
            w.engine,
            w.dataset,
            TaskSpec("second", w.label_sets["detector"], "response", 1, 5),
            None,
            actor=a.actor,
        ),
    ),
    Write(
        R + "update_rating_task",
        "manage_data",
        lambda w, a: update_rating_task(
            w.engine,
            w.rating_task,
            TaskSpec("renamed", w.label_sets["detector"], "response", 1, 5),
            None,
            actor=a.actor,
        ),
    ),
    Write("demo.load.load_demo", "manage_data", lambda w, a: load_demo(w.engine, actor=a.actor)),
    Write(
        "demo.load.ensure_demo",
        "manage_data",
        lambda w, a: ensure_demo(w.engine, actor=a.actor),
        writes=False,
    ),
    # accounts
    Write(
        A + "add_user",
        "manage_team",
        lambda w, a: add_user(w.engine, "newbie", "annotator", PASSWORD, actor=a.actor),
    ),
    Write(A + "set_role", "manage_team", lambda w, a: set_role(w.engine, "ben", "viewer", actor=a.actor)),
    Write(A + "set_disabled", "manage_team", lambda w, a: set_disabled(w.engine, "ben", True, actor=a.actor)),
    Write(
        A + "set_password", "manage_team", lambda w, a: set_password(w.engine, "ben", PASSWORD, actor=a.actor)
    ),
    # live detector runs (the store a run writes through)
    Write(
        "db.detector_runs.DetectorRunStore.open_run",
        "manage_data",
        lambda w, a: _live_store(w, a, False).open_run(LIVE_SETTINGS, LIVE_RUN["id"]),
    ),
    Write(
        "db.detector_runs.DetectorRunStore.save_outputs",
        "manage_data",
        lambda w, a: _live_store(w, a, True).save_outputs([], LIVE_RUN),
        writes=False,  # the run was opened beforehand; saving no outputs changes only its record
    ),
    Write(
        "db.detector_runs.DetectorRunStore.renew_run",
        "manage_data",
        lambda w, a: _live_store(w, a, True).renew_run(LIVE_RUN["id"]),
        writes=False,  # bookkeeping: the run's lease is renewed, nothing a page shows
    ),
    Write(
        "db.detector_runs.DetectorRunStore.close_run",
        "manage_data",
        lambda w, a: _live_store(w, a, True).close_run(LIVE_RUN, True),
        writes=False,
    ),
    # team work
    Write(
        "db.repositories.assignments.assign",
        "manage_team",
        lambda w, a: assignments.assign(w.engine, w.dataset, "claims", [w.users["lou"]], 1, actor=a.actor),
    ),
    Write(
        "db.repositories.assignments.unassign",
        "manage_team",
        lambda w, a: assignments.unassign(w.engine, w.dataset, "spans", w.users["ann"], actor=a.actor),
    ),
    Write(
        "db.repositories.gold_sightings.lift_locks",
        "manage_team",
        lambda w, a: gold_sightings.lift_locks(w.engine, w.dataset, w.users["ann"], actor=a.actor),
        prepare=_gold_shown_to_ann,
    ),
    Write(
        "db.repositories.assignments.set_weight",
        "manage_team",
        lambda w, a: assignments.set_weight(w.engine, w.dataset, w.users["ann"], 2.0, False, actor=a.actor),
    ),
    Write(
        "db.repositories.adjudication.promote_item",
        "adjudicate",
        lambda w, a: adjudication.promote_item(
            w.engine,
            w.dataset,
            w.item,
            "spans",
            [(0, 3, None)],
            method="edit",
            sources=[],
            actor=a.actor,
            replacing=adjudication.imported_gold_replaced(  # the imported gold, replaced knowingly
                w.engine, w.dataset, w.item, "spans", [(0, 3, None)], method="edit"
            ).digest,
        ),
    ),
    Write(
        "db.repositories.adjudication.promote_by_rule",
        "adjudicate",
        lambda w, a: adjudication.promote_by_rule(
            w.engine,
            w.dataset,
            "spans",
            RULES["majority"],
            actor=a.actor,
            replacing=adjudication.promote_by_rule(  # the imported gold its dry run names, knowingly
                w.engine, w.dataset, "spans", RULES["majority"], actor=a.actor, dry_run=True
            ).imported.digest,
        ),
        writes=True,  # the rule promotes item x1, replacing its imported gold, as its dry run named
    ),
    Write(
        "db.repositories.history.restore_state",
        "restore",
        lambda w, a: history.restore_state(
            w.engine,
            a.label_set,
            w.item,
            _first_entry(w, a.label_set),
            annotator_id=a.uid,
            expected_latest=history.latest_change(w.engine, a.label_set, w.item),
        ),
    ),
    # exports: they write nothing, but hand out everyone's labels
    Write(
        "db.exporter.export_bundle",
        "export",
        lambda w, a: export_bundle(w.engine, "tiny", actor=a.actor),
        writes=False,
    ),
    Write(
        "db.export_files.export_file",
        "export",
        lambda w, a: export_file(w.engine, "tiny", "canonical", actor=a.actor),
        writes=False,
    ),
    Write(R + "export_ratings", "export", _export_ratings, writes=False),
]

# Functions that write without acting for a user of the store, and why that is right.
NOT_BY_ACTOR = {
    A + "authenticate": "logging in: it acts for whoever proves the password, and counts failed attempts",
    A + "start_session": "called once authenticate has verified the password, for that user",
    A + "session_user": "only notes when the holder of a login token was last seen",
    A + "end_session": "logging out: ends the session whose token the caller holds",
    "db.repositories.annotators.get_or_create_annotator": (
        "local mode's typed name; in team mode it creates nobody (test_team_mode_creates_no_annotator_by_name)"
    ),
    "db.repositories.gold_sightings.record_gold_shown": (
        "notes what a page showed the acting annotator, for them only (their login checked): it takes "
        "away only their own edits (tests/db/test_gold_sightings.py)"
    ),
    "db.store_copy.copy_store": (
        "the command line's copy of a whole store into a new one: whoever runs it holds both databases "
        "(their URLs), and it writes into none but a new store (tests/db/test_store_copy.py)"
    ),
}

CASES = [
    pytest.param(write, case, id=f"{write.id}-{case.title}")
    for write in WRITES
    for case in EXPECTED[write.kind]
]


def _footprint(engine: Engine) -> tuple[int, int]:
    with Session(engine) as session:
        return store_revision(engine), session.scalar(select(func.count()).select_from(m.EditLog)) or 0


# The store is built once per database (building it for each of the hundreds of cases would take
# minutes): SQLite's file is copied for each test; PostgreSQL's rows are copied from a schema of their own
# whenever the store changed since the last copy (every commit bumps the store revision; refused calls,
# most of the cases, change nothing, so the next case can use the same rows).


def _build_quietly(engine: Engine) -> World:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.delenv("SPANLIGHT_MODE", raising=False)
        return _build(engine)


@pytest.fixture(scope="module")
def sqlite_world(sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, World]:
    path = tmp_path_factory.mktemp("role-matrix") / "world.db"
    shutil.copy(sqlite_template, path)
    engine = make_engine(f"sqlite:///{path}")
    world = _build_quietly(engine)
    with engine.connect() as connection:
        connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()
    return path, world


@dataclass
class PostgresCopy:
    engine: Engine  # on the test schema
    schema: str  # the schema the store was built in
    world: World
    revision: int | None = None  # the store revision right after the last copy

    def fresh(self) -> Engine:
        """The test schema holding the built store as built."""
        if self.revision is None or store_revision(self.engine) != self.revision:
            self._copy()
            self.revision = store_revision(self.engine)
        return self.engine

    def _copy(self) -> None:
        """Empty the test schema and copy every row of the built one into it, in one round trip (deleting
        a few rows is much faster than the TRUNCATE the other tests' fixture runs). The revision is set to
        a number no other test's writes would reach by chance."""
        tables = [t for t in m.Base.metadata.sorted_tables if t.name != "store_revision"]
        script = ["SET LOCAL synchronous_commit TO OFF"]  # a test copy need not survive a crash
        script += [f'DELETE FROM "{table.name}"' for table in reversed(tables)]
        for table in tables:
            columns = ", ".join(f'"{c.name}"' for c in table.columns)
            script.append(
                f'INSERT INTO "{table.name}" ({columns}) SELECT {columns} FROM "{self.schema}"."{table.name}"'
            )
            if "id" in table.c:
                script.append(
                    f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                    f'(SELECT COALESCE(MAX(id), 0) + 1 FROM "{table.name}"), false)'
                )
        script.append("DELETE FROM store_revision")
        script.append(
            f"INSERT INTO store_revision (id, revision) VALUES (1, {random.randrange(10**8, 10**9)})"
        )
        with self.engine.begin() as connection:
            connection.exec_driver_sql(";\n".join(script))


@pytest.fixture(scope="module")
def postgres_world(pg_schema_url: str) -> Iterator[PostgresCopy]:
    with own_schema(PG_URL, "world") as url:
        built = make_engine(url)
        engine = make_engine(pg_schema_url)
        try:
            upgrade(built)
            yield PostgresCopy(engine, schema_of(url), _build_quietly(built))
        finally:
            built.dispose()
            engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def world(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """The built store, on SQLite and on PostgreSQL, in local mode until the test says otherwise."""
    monkeypatch.delenv("SPANLIGHT_MODE", raising=False)
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))  # where the demo draws its images
    if request.param == "postgres":
        copy: PostgresCopy = request.getfixturevalue("postgres_world")
        yield replace(copy.world, engine=copy.fresh())
        return
    url = request.getfixturevalue("sqlite_url")
    path, template = request.getfixturevalue("sqlite_world")
    shutil.copy(path, make_url(url).database or "")
    engine = make_engine(url)
    yield replace(template, engine=engine)
    engine.dispose()


@pytest.mark.parametrize(("write", "case"), CASES)
def test_write_is_allowed_or_refused(world: World, write: Write, case: Case, monkeypatch) -> None:
    act = _act(world, case)
    if case.team:
        monkeypatch.setenv("SPANLIGHT_MODE", "team")
    if write.prepare is not None:
        write.prepare(world)
    before = _footprint(world.engine)
    if EXPECTED[write.kind][case]:
        write.call(world, act)
        if write.writes:
            assert _footprint(world.engine)[0] > before[0], "an allowed write changed nothing"
        return
    with pytest.raises(Forbidden) as refused:
        write.call(world, act)
    assert str(refused.value), "a refusal says why"
    assert _footprint(world.engine) == before, "a refused call wrote something"


# ------------------------------------------------------------------------------------------ the rest


def test_team_mode_creates_no_annotator_by_name(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    get_or_create_annotator(engine, "known")
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    before = _footprint(engine)
    with pytest.raises(Forbidden, match="admin creates accounts"):
        get_or_create_annotator(engine, "stranger")
    assert find_annotator(engine, "stranger") is None and _footprint(engine) == before
    assert get_or_create_annotator(engine, "known").name == "known"


def test_a_role_change_applies_to_the_next_action(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The role is read in the writing transaction, not taken from the caller's Actor."""
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    rex = world.users["rex"]
    stale = Actor(rex, "rex", "admin")  # what a page might still hold after the demotion
    with pytest.raises(Forbidden, match="reviewer role cannot import"):
        set_taxonomy(world.engine, world.dataset, ["X"], actor=stale)
    set_role(world.engine, "ann", "viewer", actor=Actor(world.users["ada"], "ada", "admin"))
    ann = world.label_sets["ann"]
    with pytest.raises(Forbidden, match="viewer role cannot label"):
        labeling.add_span(world.engine, ann, world.item, 0, 1, None, world.users["ann"])


def test_dataset_settings_default_and_change(world: World) -> None:
    assert dataset_settings(world.engine, world.dataset) == dataset_settings(world.engine, world.spare)
    settings = dataset_settings(world.engine, world.dataset)
    assert (settings.blind, settings.allow_preannotation) == (True, False)
    changed = set_dataset_settings(world.engine, world.dataset, allow_preannotation=True, actor=OPERATOR)
    assert (changed.blind, changed.allow_preannotation) == (True, True)
    assert dataset_settings(world.engine, world.dataset) == changed
    assert set_dataset_settings(world.engine, world.dataset, blind=False, actor=OPERATOR).blind is False
    with Session(world.engine) as session:
        logged = session.scalars(
            select(m.EditLog.after).where(m.EditLog.entity == "datasets", m.EditLog.action == "update")
        ).all()
    assert [entry["settings"] for entry in logged] == [
        {"blind": True, "allow_preannotation": True, "char_precision": False},
        {"blind": False, "allow_preannotation": True, "char_precision": False},
    ]


def test_anyone_sets_their_own_password(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    vic = Actor(world.users["vic"], "vic", "viewer")
    assert set_password(world.engine, "vic", PASSWORD, actor=vic).has_password
    with pytest.raises(Forbidden):
        set_password(world.engine, "ann", PASSWORD, actor=vic)


# ------------------------------------------------------------------------- no write without a row


def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    """Module-level functions and methods of one file, by qualified name (module.function)."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, ast.FunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[f"{module}.{node.name}"] = node
        elif isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, ast.FunctionDef):
                    found[f"{module}.{node.name}.{inner.name}"] = inner
    return found


def _called(node: ast.AST) -> set[str]:
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            target = call.func
            if isinstance(target, ast.Name):
                names.add(target.id)
            elif isinstance(target, ast.Attribute):
                names.add(target.attr)
    return names


def write_functions() -> set[str]:
    """Public functions under db/ and demo/ that open a write transaction, directly or through another
    function there that does (matched by name, so a wrapper such as ``import_file`` counts too)."""
    functions: dict[str, ast.FunctionDef] = {}
    for folder in ("db", "demo"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "migrations" not in path.parts:
                functions.update(_functions(path))
    calls = {name: _called(node) for name, node in functions.items()}
    writers = {name for name, called in calls.items() if "write_session" in called}
    while True:
        short = {name.rsplit(".", 1)[1] for name in writers}
        more = {name for name, called in calls.items() if called & short} - writers
        if not more:
            break
        writers |= more
    return {name for name in writers if not any(part.startswith("_") for part in name.split("."))}


def test_every_write_function_has_a_row() -> None:
    found = write_functions()
    assert (
        "db.repositories.labeling.add_span" in found and "db.transfer.import_file" in found
    )  # the scan works
    covered = {write.function for write in WRITES}
    missing = found - covered - set(NOT_BY_ACTOR)
    assert not missing, (
        f"write functions without a row in WRITES (or a reason in NOT_BY_ACTOR): {sorted(missing)}"
    )
    assert set(NOT_BY_ACTOR) <= found, "NOT_BY_ACTOR names a function that no longer writes"
    assert not covered & set(NOT_BY_ACTOR)


def test_a_live_run_started_through_a_login_goes_on_after_it_ends(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes check the login session, but a detector run begun from a page is a job of the account:
    it keeps writing after that tab logs out, as long as the account may still run detectors."""
    from db.detector_runs import DetectorRunStore

    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    ada = world.users["ada"]
    login = _login(world.engine, ada, "live")
    store = DetectorRunStore(world.engine, "tiny", "live", Actor(ada, "ada", "admin", login=login))
    store.open_run(LIVE_SETTINGS, LIVE_RUN["id"])
    with write_session(world.engine) as session:
        session.get_one(m.LoginSession, login).ended = True  # logged out in the meantime
    before = _footprint(world.engine)
    store.close_run(LIVE_RUN, True)
    assert _footprint(world.engine)[0] > before[0]
    set_disabled(world.engine, "ada", True, actor=OPERATOR)  # but not once the account is disabled
    with pytest.raises(Forbidden, match="disabled"):
        store.close_run(LIVE_RUN, True)
