"""A live detector run's side of the store: its items, its label set, its batches of outputs.

:class:`DetectorRunStore` is the store a :func:`detectors.runner.run_detector` run reads and writes. It
reads the dataset's items with what the strategies need (sentences, claims, the scene graph), reads
each image for the calls, and writes each batch of outputs through :func:`db.importer.import_bundle`,
the one writer of files too, so a live run is stored exactly as the same outputs imported from a file
would be (raw output always kept, the follows-format flag, parse errors) and each batch is logged and
undoable like an import.

The run's settings (endpoint without credentials, model, strategy, prompt hash, temperature, …), its
history and its token and cost ledger live in the label set's ``meta["live_run"]``, with ``complete``
False from the first call until a run leaves no item undone. A label set is one run: a second run
into it must have the same settings (it resumes); otherwise it is refused, and a new name is needed.
While a run goes on, the label set is its alone (:mod:`db.run_leases`): a run started meanwhile, in
this process or another, is refused naming it, until it ends or its process is no longer heard from.
Every write here first checks that the acting user may manage data (:mod:`db.access`).
"""

from __future__ import annotations

import base64
import hashlib
import io
from collections import defaultdict
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from db import models as m
from db import run_leases
from db.access import Actor, require_in
from db.column_lengths import overlong_label_set
from db.config import data_dir, redact, setting
from db.engine import hold_name, read_session, write_session
from db.images import check_image_file, display_copy, resolve_image
from db.import_changes import ReplaceRequired
from db.importer import import_bundle
from db.names import EmptyName, clean_name, dataset_stored, label_set_stored
from db.repositories.exchange import item_units
from detectors.base import RunItem
from detectors.cache import ResponseCache
from detectors.lease import LeaseLost
from detectors.ledger import CUT_OUTPUTS, Prices, add_ledgers, recovered
from detectors.runner import (
    ImageUnavailable,
    Progress,
    RunBroken,
    RunRefused,
    RunResult,
    RunSpec,
    run_detector,
)
from formats.problems import quoted, shown_id
from formats.records import Annotations, Bundle, DatasetRecord, LabelSetRecord

META_KEY = "live_run"
MAX_RUNS_KEPT = 50
OLDER_RUNS_LEDGER = "ledger_of_older_runs"  # the summed ledgers of the runs no longer listed
# Images sent as they are: the formats every OpenAI-compatible vision endpoint reads, up to this size.
SENT_AS_IS = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
MAX_SENT_BYTES = 8 * 1024 * 1024
# A run's label set's fields, as its settings name them in a refusal.
_SAID = {
    "name": "detector run's name",
    "detector_version": "model's name",
    "prompt_strategy": "prompting strategy",
}


def cache_path(engine: Engine) -> Path:
    """The response cache of this store: one JSON-lines file per database, under the data folder."""
    digest = hashlib.sha256(redact(engine.url.render_as_string(hide_password=False)).encode()).hexdigest()
    return data_dir() / "detector_cache" / f"responses-{digest[:12]}.jsonl"


def default_prices() -> Prices:
    """The price table from the ``SPANLIGHT_PRICE_IN`` / ``SPANLIGHT_PRICE_OUT`` settings (per 1K
    tokens; unset: 0); ValueError naming the setting when one is not a number from 0 up."""
    values = []
    for name in ("PRICE_IN", "PRICE_OUT"):
        text = setting(name) or "0"
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not value >= 0:
            raise ValueError(f"SPANLIGHT_{name} must be a number from 0 up, got {quoted(text)}")
        values.append(value)
    return Prices(*values)


def _ignore(_progress: Progress) -> None:
    return None


def run_live(
    engine: Engine,
    spec: RunSpec,
    actor: Actor,
    *,
    api_key: str | None,
    cancel: Any = None,
    progress: Any = _ignore,
    use_cache: bool = True,
    run_id: str | None = None,
) -> RunResult:
    """Run ``spec`` over the store, with this store's response cache; raises RunRefused. The dataset and
    detector names are trimmed as every import trims them (:mod:`db.names`)."""
    try:
        dataset = clean_name(spec.dataset, "dataset", dataset_stored(engine))
        detector = clean_name(spec.detector, "detector run", label_set_stored(engine, dataset))
    except EmptyName as empty:
        raise RunRefused(str(empty)) from None
    spec = replace(spec, dataset=dataset, detector=detector)
    cache = ResponseCache(cache_path(engine) if use_cache else None)
    store = DetectorRunStore(engine, spec.dataset, spec.detector, actor, cache=cache)
    try:
        return run_detector(
            spec, store, api_key=api_key, cache=cache, cancel=cancel, progress=progress, run_id=run_id
        )
    finally:
        cache.close()


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


class DetectorRunStore:
    """The store of one run: ``dataset``'s items and the detector label set ``detector``; ``cache`` is
    the run's response cache, which holds what a killed run spent after its last batch."""

    def __init__(
        self,
        engine: Engine,
        dataset: str,
        detector: str,
        actor: Actor,
        *,
        lease_s: float | None = None,
        cache: ResponseCache | None = None,
    ) -> None:
        self.engine = engine
        self.cache = cache
        self.dataset = dataset
        self.detector = detector
        self.actor = actor
        # How long the label set stays the run's once it is no longer heard from; renewed 4 times as often.
        try:
            self.lease_s = lease_s if lease_s is not None else run_leases.lease_seconds()
        except ValueError as bad:
            raise RunRefused(str(bad)) from None
        self.renew_every_s = self.lease_s / 4
        self._images: dict[str, str | None] = {}
        self._image_root: str | None = None

    # ------------------------------------------------------------------------------------------ reads

    def items(self) -> list[RunItem]:
        with read_session(self.engine) as session:
            dataset = session.scalar(select(m.Dataset).where(m.Dataset.name == self.dataset))
            if dataset is None:
                raise RunRefused(f"there is no dataset named {quoted(self.dataset)}")
            self._image_root = dataset.image_root
            rows = session.execute(
                select(
                    m.Item.id,
                    m.Item.external_id,
                    m.Item.response,
                    m.Item.prompt,
                    m.Item.task_type,
                    m.Item.source_model,
                    m.Item.image_ref,
                    m.Item.meta,
                )
                .where(m.Item.dataset_id == dataset.id)
                .order_by(m.Item.position)
            ).all()
            sentences, claims = item_units(session, dataset.id)
            in_dataset = select(m.Item.id).where(m.Item.dataset_id == dataset.id)
            triplets: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
            for item_id, subject, relation, obj in session.execute(
                select(m.Triplet.item_id, m.Triplet.subject, m.Triplet.relation, m.Triplet.object)
                .where(m.Triplet.item_id.in_(in_dataset), m.Triplet.label_set_id.is_(None))
                .order_by(m.Triplet.item_id, m.Triplet.index)
            ):
                triplets[item_id].append((subject, relation, obj))
        items = []
        for item_id, ext, response, prompt, task_type, source_model, image_ref, meta in rows:
            meta = meta or {}
            numbers = meta.get("sentence_index")
            self._images[ext] = image_ref
            items.append(
                RunItem(
                    external_id=ext,
                    response=response,
                    prompt=prompt or "",
                    task_type=task_type,
                    source_model=source_model,
                    sentences=tuple(sentences[item_id]),
                    sentence_numbers=tuple(numbers)
                    if isinstance(numbers, list) and all(isinstance(n, int) for n in numbers)
                    else (),
                    claims=tuple(claims[item_id]),
                    reference_triplets=tuple(triplets[item_id]),
                    objects=_strings(meta.get("all_object")) or _strings(meta.get("object")),
                )
            )
        return items

    def done(self) -> set[str]:
        with read_session(self.engine) as session:
            return set(
                session.scalars(
                    select(m.Item.external_id)
                    .join(m.RawOutput, m.RawOutput.item_id == m.Item.id)
                    .join(m.LabelSet, m.LabelSet.id == m.RawOutput.label_set_id)
                    .join(m.Dataset, m.Dataset.id == m.LabelSet.dataset_id)
                    .where(
                        m.Dataset.name == self.dataset,
                        m.LabelSet.kind == "detector",
                        m.LabelSet.name == self.detector,
                    )
                )
            )

    def image_url(self, external_id: str) -> str:
        ref = self._images.get(external_id)
        if not ref:
            raise ImageUnavailable("the item has no image reference")
        if not self._image_root:
            raise ImageUnavailable(f"image {quoted(ref)}: the dataset has no image folder set")
        path = resolve_image(self._image_root, ref)
        if path is None:
            raise ImageUnavailable(f"image {quoted(ref)} is not found under the dataset's image folder")
        problem = check_image_file(path).problem
        if problem is not None:
            raise ImageUnavailable(f"image {quoted(ref)}: {problem}")
        mime = SENT_AS_IS.get(path.suffix.lower())
        try:
            if mime is not None and path.stat().st_size <= MAX_SENT_BYTES:
                data = path.read_bytes()
            else:  # an unusual format or a very large file: a PNG copy at most 2048 px on its long side
                buffer = io.BytesIO()
                display_copy(path).save(buffer, format="PNG")
                data, mime = buffer.getvalue(), "image/png"
        except (OSError, ValueError) as error:
            raise ImageUnavailable(f"image {quoted(ref)} cannot be read: {type(error).__name__}") from None
        return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"

    # ----------------------------------------------------------------------------------------- writes

    def _label_set(self, session: Session, *, lock: bool = False) -> m.LabelSet | None:
        """The run's label set; ``lock``: its row locked until the transaction ends (PostgreSQL), as
        its meta is read, changed and written back by the run, its lease's heartbeat and other runs."""
        query = (
            select(m.LabelSet)
            .join(m.Dataset, m.Dataset.id == m.LabelSet.dataset_id)
            .where(
                m.Dataset.name == self.dataset,
                m.LabelSet.kind == "detector",
                m.LabelSet.name == self.detector,
            )
        )
        if lock:
            query = query.with_for_update(of=m.LabelSet).execution_options(populate_existing=True)
        return session.scalar(query)

    def open_run(self, settings: dict[str, Any], run_id: str, line: dict[str, Any] | None = None) -> None:
        """Take the label set for ``run_id`` and list ``line`` (the run's first line) in its history, so
        a run killed before its first batch is listed too. A run taken over because its process stopped
        is marked interrupted, its ledger completed from the response cache (:func:`recovered`)."""
        now = _now()
        with write_session(self.engine) as session:
            require_in(session, self.actor, "manage_data")
            # Started from a live login, the run goes on after that tab logs out or idles: its later
            # writes check the account (role, enabled), not the login session.
            by = self.actor.name
            self.actor = replace(self.actor, login=None)
            dataset = session.scalar(select(m.Dataset).where(m.Dataset.name == self.dataset))
            if dataset is None:
                raise RunRefused(f"there is no dataset named {quoted(self.dataset)}")
            # Another run or an import making the label set now is waited for; its label set is then found.
            hold_name(session, "label set", dataset.id, "detector", self.detector)
            label_set = self._label_set(session, lock=True)
            if label_set is None:
                made = LabelSetRecord(
                    "detector",
                    self.detector,
                    detector_version=settings["model"],
                    prompt_strategy=f"{settings['strategy']} #{settings['prompt_hash']}",
                )
                for field, reason in overlong_label_set(made):  # before any call is paid for
                    raise RunRefused(f"the {_SAID[field]} {reason}")
                label_set = m.LabelSet(
                    dataset_id=dataset.id,
                    kind=made.kind,
                    name=made.name,
                    detector_version=made.detector_version,
                    prompt_strategy=made.prompt_strategy,
                    meta={META_KEY: {"settings": settings, "started": now, "runs": [], "ledger": {}}},
                )
                session.add(label_set)
            else:
                _check_same_run(label_set, settings, self.detector)
            before = dict(label_set.meta[META_KEY])
            live = run_leases.take(
                before,
                run_id,
                by,
                run_leases.store_clock(session),
                self.lease_s,
                name=self.detector,
                dataset=self.dataset,
            )
            live["runs"] = self._interrupted(before.get("runs") or [], live["runs"])
            if line is not None:
                live = _listed(live, line)
            live |= {"updated": now, "status": "running", "complete": False}
            label_set.meta = {**label_set.meta, META_KEY: live}

    def _interrupted(self, before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``after``'s lines, the ledgers of those just marked interrupted completed from the cache. The
        cache is this machine's: a run resumed from an app process on another machine (one PostgreSQL
        for the team) finds none of the killed run's answers, which keeps the ledger it recorded."""
        was = {line.get("id"): line.get("status") for line in before}
        if self.cache is None:
            return after
        return [
            line | {"ledger": recovered(dict(line.get("ledger") or {}), self.cache.spent(str(line["id"])))}
            if line.get("status") == run_leases.INTERRUPTED and was.get(line.get("id")) != line["status"]
            else line
            for line in after
        ]

    def _deleted(self) -> str:
        return f"the label set {quoted(self.detector)} of dataset {quoted(self.dataset)} was deleted during the run"

    def renew_run(self, run_id: str) -> None:
        # Bookkeeping: nothing a page shows changes, so no cache keyed on the store revision is dropped.
        with write_session(self.engine, bookkeeping=True) as session:
            require_in(session, self.actor, "manage_data")
            label_set = self._label_set(session, lock=True)
            if label_set is None:
                raise LeaseLost(self._deleted())
            live = run_leases.renew(
                dict(label_set.meta.get(META_KEY) or {}),
                run_id,
                run_leases.store_clock(session),
                self.lease_s,
            )
            label_set.meta = {**label_set.meta, META_KEY: live}

    def _record(
        self, session: Session, run: dict[str, Any], *, release: bool = False, **changes: Any
    ) -> None:
        """Put ``run`` (this run's line, by its id) into the label set's meta, and ``changes`` too while
        this run holds the label set (a run taken over leaves the new run's state alone); ``release``
        gives the label set back."""
        require_in(session, self.actor, "manage_data")
        label_set = self._label_set(session, lock=True)
        if label_set is None:
            raise RunBroken(self._deleted())
        live = dict(label_set.meta.get(META_KEY) or {})
        if not run_leases.holds(live, run["id"]):
            changes = {}
        live = _listed(live, run) | {"updated": run["updated"], **changes}
        if release:
            live = run_leases.release(live, run["id"])
        label_set.meta = {**label_set.meta, META_KEY: live}

    def save_outputs(self, outputs: list[Annotations], run: dict[str, Any]) -> dict[str, str]:
        """Write the batch, then the run's line counting it. The line went first, so a run killed before
        its next batch was listed as having saved a batch fewer than it wrote (0 items for its first)."""
        with read_session(self.engine) as session:
            require_in(session, self.actor, "manage_data")
            if self._label_set(session) is None:  # the import would make it anew, without its runs
                raise RunBroken(self._deleted())
        not_written = self._import(outputs)
        written = len(outputs) - len(not_written)
        counted = run | {
            "items_saved": int(run.get("items_saved", 0)) + written,
            "items_failed": int(run.get("items_failed", 0)) + len(not_written),
        }
        with write_session(self.engine) as session:
            self._record(session, counted, status="running")
        return not_written

    def _import(self, outputs: list[Annotations]) -> dict[str, str]:
        """Import the batch; the items not written, with the reason."""
        not_written: dict[str, str] = {}
        batch = list(outputs)
        for _ in range(2):
            try:
                result = import_bundle(
                    self.engine,
                    self._bundle(batch),
                    actor=self.actor,
                    source=f"live run {self.detector}",
                    allow_skip=True,
                    annotator=self.actor.name if self.actor.id is not None else None,
                )
            except ReplaceRequired:
                # Another run wrote some of these items meanwhile: keep theirs, write the rest.
                held = self.done()
                not_written |= {a.item: "written meanwhile by another run" for a in batch if a.item in held}
                batch = [a for a in batch if a.item not in held]
                continue
            for problem in result.skipped:
                for output in batch:
                    if f"(id={shown_id(output.item)})" in problem.record:
                        not_written.setdefault(output.item, f"{problem.field}: {problem.reason}")
            break
        else:
            not_written |= {a.item: "written meanwhile by another run" for a in batch}
        return not_written

    def _bundle(self, outputs: list[Annotations]) -> Bundle:
        return Bundle(
            dataset=DatasetRecord(name=self.dataset, source_format="live"),
            label_sets=[LabelSetRecord(kind="detector", name=self.detector, annotations=outputs)],
        )

    def close_run(self, run: dict[str, Any], complete: bool) -> None:
        with write_session(self.engine) as session:
            self._record(session, run, release=True, status=run["status"], complete=complete)


def _listed(live: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """``live`` with ``run`` as its latest line (replacing its earlier one) and the totals summed again.
    The runs past the last MAX_RUNS_KEPT leave the list, not the totals: their ledgers are summed apart
    (the 51st run's cost was dropped from the label set's total)."""
    runs = [r for r in live.get("runs", []) if r.get("id") != run["id"]] + [run]
    older: dict[str, Any] = dict(live.get(OLDER_RUNS_LEDGER) or {})
    for dropped in runs[:-MAX_RUNS_KEPT]:
        older = add_ledgers(older, dropped.get("ledger", {}))
    runs = runs[-MAX_RUNS_KEPT:]
    live = live | {"runs": runs}
    if older:
        live[OLDER_RUNS_LEDGER] = older
    totals = older
    for earlier in runs:
        totals = add_ledgers(totals, earlier.get("ledger", {}))
    return live | {"ledger": totals}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _check_same_run(label_set: m.LabelSet, settings: dict[str, Any], name: str) -> None:
    """Refuse to add to a label set made otherwise: from a file, or by a run with other settings."""
    live = (label_set.meta or {}).get(META_KEY)
    if not isinstance(live, dict) or not isinstance(live.get("settings"), dict):
        raise RunRefused(
            f"the detector {quoted(name)} already holds outputs that were not made by a live run (an import?); "
            "choose another name"
        )
    before = live["settings"]
    differ = [f"{k} {before.get(k)!r} → {settings[k]!r}" for k in settings if before.get(k) != settings[k]]
    if differ:
        raise RunRefused(
            f"the detector {quoted(name)} was run with other settings ({'; '.join(differ)}); resuming needs the "
            "same ones, so choose another name for this run"
        )


def run_provenance(
    engine: Engine, dataset_id: int
) -> tuple[dict[str, dict[str, Any]], dict[str | None, int]]:
    """The live runs of the dataset's detector label sets (name -> ``meta["live_run"]``), and how many
    items each source model wrote: what report footers say about detectors and their judge bias.

    A run whose stored outputs include answers the endpoint cut at its token limit gets their number as
    ``CUT_OUTPUTS``: the tables score such an answer as it stands, and one cut before it tagged or judged
    everything reads as a detector that missed the rest, so the footer says how many there are."""
    with read_session(engine) as session:
        runs = {
            name: meta[META_KEY]
            for name, meta in session.execute(
                select(m.LabelSet.name, m.LabelSet.meta).where(
                    m.LabelSet.dataset_id == dataset_id, m.LabelSet.kind == "detector"
                )
            )
            if isinstance(meta, dict) and isinstance(meta.get(META_KEY), dict)
        }
        cut = session.execute(
            select(m.LabelSet.name, func.count())
            .join(m.RawOutput, m.RawOutput.label_set_id == m.LabelSet.id)
            .where(m.LabelSet.dataset_id == dataset_id, m.LabelSet.kind == "detector", m.RawOutput.cut)
            .group_by(m.LabelSet.name)
        )
        for name, n in cut:
            if name in runs:
                runs[name] = {**runs[name], CUT_OUTPUTS: int(n)}
        sources = {
            source: int(n)
            for source, n in session.execute(
                select(m.Item.source_model, func.count())
                .where(m.Item.dataset_id == dataset_id)
                .group_by(m.Item.source_model)
            )
        }
    return runs, sources
