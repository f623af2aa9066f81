"""One detector run over a dataset: the calls, their answers, and the outputs handed to the store.

The run reads the dataset's items from a :class:`RunStore` (``db.detector_runs`` is the real one; the
store knows nothing of HTTP and this module nothing of the database), skips the items the label set
already holds (a second run resumes), and works through the rest with at most ``concurrency`` calls in
flight on a thread pool. Each item's calls go out stage by stage (:class:`~detectors.base.Strategy`),
K times over for a self-ensemble; an answer already in the response cache is replayed instead of
asked again. When an item's last answer is in, the strategy parses it and the item's output joins the
next batch, written every ``batch_items`` outputs or ``batch_seconds`` seconds, whichever comes first,
so other pages see the run grow (each write bumps the store revision).

The store hands the run its label set alone (a second run of it, from any process, is refused) and a
:class:`~detectors.lease.Heartbeat` keeps that hold alive while the run lasts.

The run stops early when cancelled (a ``threading.Event``), when the tokens spent reach the budget or
when it must (``stopped``, with the reason: another run took its label set over, or the endpoint
refused the key, cannot be reached, or left :data:`FAILURES_IN_A_ROW` items in a row unanswered); it then starts
no new call, lets the calls in flight finish (a cancel, or an endpoint given up, ends them) and writes
what is complete. An item whose call fails after every retry, or whose image cannot be read, is not
written: it is reported with the reason and a later run tries it again. Items the strategy cannot judge at all (no claims, no
sentences, no scene graph) are outside the run and named once.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from detectors.base import Call, RunItem, Strategy
from detectors.cache import CachedAnswer, ResponseCache, cache_key
from detectors.client import Answer, CallFailed, Cancelled, ChatClient, RetryPolicy, redacted_endpoint
from detectors.ensemble import AGGREGATION, combine
from detectors.judge_bias import NOTE, self_judged
from detectors.lease import Heartbeat
from detectors.ledger import Ledger, Prices
from detectors.strategies import get_strategy
from formats.records import Annotations
from formats.storable import storable_text, unstorable

MAX_CONCURRENCY = 256
# Items whose calls fail one after another without an answer (no reply, a 5xx, a timeout, after every
# retry), no answer between, before the run takes the endpoint for down. A call the endpoint answers with
# an error about that request (a 400: too long for the model) says it is up, and counts for its item only.
FAILURES_IN_A_ROW = 5
# The finish reason of an answer cut at the token limit (max_tokens).
CUT = "length"
# The items with a cut answer named in a run's line on the label set (the count is always whole).
ITEMS_CUT_KEPT = 100
log = logging.getLogger("spanlight.detectors")


class RunRefused(Exception):
    """The run cannot start (no such dataset, unknown item ids, a label set made another way …); it
    called nothing and wrote nothing."""


class RunBroken(Exception):
    """The run broke off after it had begun (its label set deleted meanwhile …): what arrived is kept."""


class ImageUnavailable(Exception):
    """The item's image cannot be sent; the message says why (without server paths)."""


class RunStore(Protocol):
    """Where a run's items come from and its outputs go (see ``db.detector_runs.DetectorRunStore``)."""

    def items(self) -> list[RunItem]:
        """Every item of the dataset, in dataset order."""
        ...

    # How often a run renews its hold on the label set (:meth:`renew_run`), in seconds.
    renew_every_s: float

    def open_run(self, settings: dict[str, Any], run_id: str, line: dict[str, Any] | None = None) -> None:
        """Create the label set, or check that it was made with these settings (RunRefused if not);
        take it for ``run_id`` (RunRefused naming the run that holds it, when another live run does),
        list ``line`` (the run's first line in its history) and mark it incomplete."""
        ...

    def renew_run(self, run_id: str) -> None:
        """Keep the label set for ``run_id`` a while longer; LeaseLost when another run took it over."""
        ...

    def done(self) -> set[str]:
        """External ids of the items the label set already holds an output for."""
        ...

    def image_url(self, external_id: str) -> str:
        """The item's image as a ``data:`` URL; raises ImageUnavailable."""
        ...

    def save_outputs(self, outputs: list[Annotations], run: dict[str, Any]) -> dict[str, str]:
        """Write a batch of outputs and the run's progress; the items not written, with the reason."""
        ...

    def close_run(self, run: dict[str, Any], complete: bool) -> None:
        """Record the run's end, and whether the label set now holds every item it can; give the label
        set back."""
        ...


@dataclass(frozen=True)
class RunSpec:
    dataset: str
    detector: str
    strategy: str
    base_url: str
    model: str
    temperature: float = 0.0
    max_tokens: int | None = 1024
    samples: int = 1
    concurrency: int = 4
    limit: int | None = None
    items: tuple[str, ...] = ()
    budget_tokens: int | None = None
    prices: Prices = field(default_factory=Prices)
    images: bool = True
    timeout_s: float = 60.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    batch_items: int = 32
    batch_seconds: float = 1.0

    def problems(self) -> list[str]:
        """What is wrong with the settings themselves (a usage error), empty when nothing."""
        found = []
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            found.append(f"concurrency must be from 1 to {MAX_CONCURRENCY}")
        if self.samples < 1:
            found.append("samples must be at least 1")
        if not 0 <= self.temperature <= 2:
            found.append("temperature must be from 0 to 2")
        if self.limit is not None and self.limit < 1:
            found.append("limit must be at least 1")
        if self.max_tokens is not None and self.max_tokens < 1:
            found.append("max tokens must be at least 1")
        if self.budget_tokens is not None and self.budget_tokens < 1:
            found.append("the token budget must be at least 1")
        if self.timeout_s <= 0:
            found.append("the timeout must be positive")
        if self.prices.input_per_1k < 0 or self.prices.output_per_1k < 0:
            found.append("prices cannot be negative")
        if not self.detector.strip():
            found.append("name the detector run")
        if not self.model.strip():
            found.append("name the model")
        # Typed on the page: written to the store (the run's label set) before any reply is imported.
        for what, value in (
            ("the detector run's name", self.detector),
            ("the model's name", self.model),
            ("the endpoint", self.base_url),
        ):
            if (bad := unstorable(value)) is not None:
                found.append(f"{what} {bad[1]}")
        return found

    def settings(self, strategy: Strategy) -> dict[str, Any]:
        """What makes two runs the same run: recorded on the label set, compared on resume."""
        return {
            "endpoint": redacted_endpoint(self.base_url),
            "model": self.model,
            "strategy": strategy.name,
            "prompt_hash": strategy.prompt_hash,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "samples": self.samples,
            "aggregation": AGGREGATION[strategy.produces] if self.samples > 1 else None,
            "images": "inline" if self.images and strategy.uses_image else "none",
        }


@dataclass(frozen=True)
class Progress:
    status: str
    total: int
    saved: int
    failed: int
    in_flight: int
    elapsed_s: float
    ledger: dict[str, Any]

    @property
    def finished(self) -> int:
        return self.saved + self.failed

    @property
    def rate(self) -> float:
        """Items per second so far."""
        return self.finished / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        left = self.total - self.finished
        return left / self.rate if self.rate > 0 and left > 0 else (0.0 if left <= 0 else None)


@dataclass
class RunResult:
    status: str  # finished / cancelled / budget / stopped (``stop_reason`` says why)
    in_scope: int
    already_done: int
    saved: int
    failed: dict[str, str]
    not_judged: dict[str, str]
    ledger: dict[str, Any]
    complete: bool
    prompt_hash: str
    judge_bias: str | None
    elapsed_s: float
    started: str
    stop_reason: str | None = None
    # Items whose answer (one of their calls', or samples') was cut at max tokens, with those calls' units.
    truncated: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "finished" and not self.failed

    @property
    def left(self) -> int:
        """The items this run was to judge that hold no output yet (a later run asks for them)."""
        return self.in_scope - self.saved

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "status": self.status,
            "stop_reason": self.stop_reason,
            "items_in_scope": self.in_scope,
            "items_already_done": self.already_done,
            "items_saved": self.saved,
            "items_left": self.left,
            "failed": self.failed,
            "truncated": self.truncated,
            "not_judged": self.not_judged,
            "ledger": self.ledger,
            "complete": self.complete,
            "prompt_hash": self.prompt_hash,
            "judge_bias": self.judge_bias,
            "elapsed_s": round(self.elapsed_s, 3),
            "started": self.started,
        }


@dataclass
class _Job:
    """One item on its way through the strategy's stages."""

    item: RunItem
    image_url: str | None = None
    stage: int = 0
    calls: dict[str, Call] = field(default_factory=dict)
    answers: dict[tuple[str, int], str] = field(default_factory=dict)
    waiting: int = 0
    failure: str | None = None

    def view(self, sample: int) -> dict[str, str]:
        return {
            unit: self.answers[(unit, sample if call.sampled else 0)]
            for unit, call in self.calls.items()
            if (unit, sample if call.sampled else 0) in self.answers
        }


def _messages(call: Call, image_url: str | None) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if call.system:
        messages.append({"role": "system", "content": call.system})
    if call.image and image_url:
        content: Any = [
            {"type": "image_url", "image_url": {"url": image_url}},
            {"type": "text", "text": call.user},
        ]
    else:
        content = call.user
    messages.append({"role": "user", "content": content})
    return messages


class _Run:
    def __init__(
        self,
        spec: RunSpec,
        store: RunStore,
        client: ChatClient,
        cache: ResponseCache,
        cancel: threading.Event,
        halt: threading.Event,
        progress: Callable[[Progress], None],
        ledger: Ledger,
        run_id: str,
    ) -> None:
        self.spec = spec
        self.store = store
        self.client = client
        self.cache = cache
        self.cancel = cancel
        # Ends the calls in flight (the client's cancel): set on a cancel, or once the endpoint is given up.
        self.halt = halt
        self.report = progress
        self.strategy = get_strategy(spec.strategy)
        self.ledger = ledger
        self.started = time.monotonic()
        self.started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self.run_id = run_id
        self.stop_reason: str | None = None
        self.endpoint_given_up = False
        self.failing: list[str] = []  # the items of the calls failed in a row, no answer between
        self.failed: dict[str, str] = {}
        self.truncated: dict[str, list[str]] = {}  # item -> the units whose answer was cut at max tokens
        self.saved = 0
        self.total = 0
        self.batch: list[Annotations] = []
        self.last_flush = time.monotonic()
        self.last_report = 0.0
        self.status = "running"

    # ------------------------------------------------------------------------------------- the calls

    def _key(self, job: _Job, call: Call, sample: int) -> str:
        text = hashlib.sha256(f"{call.system or ''}\x00{call.user}".encode()).hexdigest()
        return cache_key(
            endpoint=self.client.endpoint,
            model=self.spec.model,
            prompt_hash=self.strategy.prompt_hash,
            dataset=self.spec.dataset,
            item=job.item.external_id,
            unit=call.unit,
            sample=sample,
            temperature=self.spec.temperature,
            max_tokens=self.spec.max_tokens,
            image=bool(call.image and job.image_url),
            text=text,
        )

    def _ask(self, job: _Job, call: Call, key: str) -> Answer:
        """In a worker thread: the call, its answer made durable in the cache before it counts."""
        body: dict[str, Any] = {
            "model": self.spec.model,
            "messages": _messages(call, job.image_url),
            "temperature": self.spec.temperature,
        }
        if self.spec.max_tokens:
            body["max_tokens"] = self.spec.max_tokens
        answer = self.client.complete(body)
        self.cache.put(
            key,
            CachedAnswer(answer.text, answer.prompt_tokens, answer.completion_tokens, answer.finish_reason),
            run=self.run_id,
        )
        return answer

    def _stage_calls(self, job: _Job) -> list[tuple[_Job, Call, int]]:
        """The next stage's calls of ``job`` (moving past stages with none); [] once it is parsed."""
        while job.stage < self.strategy.stages:
            try:
                calls = self.strategy.calls(job.item, job.stage, job.view(0))
            except Exception as error:  # noqa: BLE001 - one item's odd answer must not end the run
                self._fail(job, f"the next calls could not be made: {type(error).__name__}: {error}")
                return []
            job.stage += 1
            if calls:
                pending = []
                for call in calls:
                    job.calls[call.unit] = call
                    pending += [(job, call, s) for s in range(self.spec.samples if call.sampled else 1)]
                job.waiting = len(pending)
                return pending
        self._finish(job)
        return []

    def _finish(self, job: _Job) -> None:
        try:
            parsed = [self.strategy.parse(job.item, job.view(s)) for s in range(self.spec.samples)]
            output = combine(self.strategy.produces, job.item, parsed)
        except Exception as error:  # noqa: BLE001 - a parser failing on one answer must not end the run
            self._fail(job, f"the answer could not be read: {type(error).__name__}: {error}")
            return
        if job.item.external_id in self.truncated and output.raw_output is not None:
            # Read as it came (what it tagged before the cut is still its answer), but marked on the
            # stored output, so whoever reads the item, Compare or an export sees it may be incomplete.
            output.raw_output = replace(output.raw_output, cut=True)
        self.batch.append(output)

    def _fail(self, job: _Job, reason: str) -> None:
        if job.failure is None:
            job.failure = reason
            self.failed[job.item.external_id] = reason

    def _answered(
        self, job: _Job, call: Call, sample: int, text: str, finish_reason: str | None
    ) -> list[tuple[_Job, Call, int]]:
        job.answers[(call.unit, sample)] = storable_text(text)  # a NUL in an answer failed its item for good
        if finish_reason == CUT:  # read as it is, but named: a cut answer may read as "nothing wrong"
            self.ledger.cut()
            units = self.truncated.setdefault(job.item.external_id, [])
            if call.unit not in units:
                units.append(call.unit)
        job.waiting -= 1
        if job.waiting or job.failure is not None:
            return []
        return self._stage_calls(job)

    def stop(self, reason: str) -> None:
        """Start no new call (from any thread): the run ends ``stopped``, with the first reason given."""
        if self.stop_reason is None:
            self.stop_reason = reason

    def _call_failed(self, job: _Job, call: Call, failed: CallFailed) -> None:
        """A call failed after its retries. When another call would fare no better (the endpoint refused
        the key, cannot be reached, or failed call after call) the run stops calling and says why once,
        instead of failing every item alike; the items it leaves are tried by the next run."""
        if self.endpoint_given_up:  # a call that was in flight: the reason was given already
            return
        if failed.kind == "refused":
            self._give_up_endpoint(
                f"the endpoint refused the call ({failed.reason}); every other call would be refused "
                "alike, so no more were made"
            )
            return
        if failed.kind == "unreachable":
            self._give_up_endpoint(
                f"the endpoint cannot be reached ({failed.reason}); no more calls were made"
            )
            return
        self._fail(job, f"{call.unit}: {failed.reason}")
        if failed.kind == "rejected":  # the endpoint answered, about this item alone: it is up
            self.failing.clear()
            return
        if job.item.external_id not in self.failing:  # items, not calls: an item's samples fail together
            self.failing.append(job.item.external_id)
        if len(self.failing) >= FAILURES_IN_A_ROW:
            for external_id in self.failing:  # said once, in the reason, rather than item by item
                self.failed.pop(external_id, None)
            self._give_up_endpoint(
                f"the calls of {len(self.failing)} items in a row got no answer, the last {failed.reason}; the "
                "endpoint seems down, so no more calls were made"
            )

    def _give_up_endpoint(self, reason: str) -> None:
        self.endpoint_given_up = True
        self.stop(reason)
        self.halt.set()

    # ---------------------------------------------------------------------------------------- the loop

    def run(self, todo: Sequence[RunItem]) -> str:
        self.total = len(todo)
        items = iter(todo)
        exhausted = False
        queue: deque[tuple[_Job, Call, int]] = deque()
        in_flight: dict[Future[Answer], tuple[_Job, Call, int]] = {}
        stopping: str | None = None
        with ThreadPoolExecutor(self.spec.concurrency, thread_name_prefix="detector-call") as pool:
            while True:
                if stopping is None and self.cancel.is_set():
                    stopping = "cancelled"
                    self.halt.set()
                if stopping is None and self.stop_reason is not None:
                    stopping = "stopped"
                # Start calls while there is room: the next queued call, else the next item's first.
                while stopping is None and len(in_flight) < self.spec.concurrency:
                    if not queue:
                        item = None if exhausted else next(items, None)
                        if item is None:
                            exhausted = True
                            break
                        queue.extend(self._start(item))
                        continue
                    if self.spec.budget_tokens is not None and self.ledger.tokens >= self.spec.budget_tokens:
                        stopping = "budget"
                        break
                    if self.spec.budget_tokens is not None and self.ledger.calls_without_usage:
                        self.stop(
                            "the token budget cannot be kept: the endpoint reports no token usage, so the "
                            "tokens spent are not known"
                        )
                        stopping = "stopped"
                        break
                    job, call, sample = queue.popleft()
                    if job.failure is not None:
                        continue
                    key = self._key(job, call, sample)
                    cached = self.cache.get(key)
                    if cached is not None:
                        self.ledger.answered(cached.prompt_tokens, cached.completion_tokens, cached=True)
                        queue.extendleft(
                            reversed(self._answered(job, call, sample, cached.text, cached.finish_reason))
                        )
                        continue
                    in_flight[pool.submit(self._ask, job, call, key)] = (job, call, sample)
                if not in_flight:  # nothing left to start, or stopping with nothing to wait for
                    break
                finished, _ = wait(in_flight, timeout=0.25, return_when=FIRST_COMPLETED)
                for future in finished:
                    job, call, sample = in_flight.pop(future)
                    try:
                        answer = future.result()
                    except CallFailed as failed:
                        self.ledger.failed()
                        self._call_failed(job, call, failed)
                        continue
                    except Cancelled:
                        continue
                    self.failing.clear()
                    self.ledger.answered(answer.prompt_tokens, answer.completion_tokens, cached=False)
                    # The item's next calls go first: items finish (and are written) in order.
                    queue.extendleft(
                        reversed(self._answered(job, call, sample, answer.text, answer.finish_reason))
                    )
                self._flush(force=False)
                self._progress(len(in_flight), force=False)
        self.status = stopping or "finished"
        self._flush(force=True)
        self._progress(0, force=True)
        return self.status

    def _start(self, item: RunItem) -> list[tuple[_Job, Call, int]]:
        job = _Job(item)
        if self.spec.images and self.strategy.uses_image:
            try:
                job.image_url = self.store.image_url(item.external_id)
            except ImageUnavailable as missing:
                self._fail(job, f"no image: {missing}")
                return []
        return self._stage_calls(job)

    def _flush(self, *, force: bool) -> None:
        due = (
            len(self.batch) >= self.spec.batch_items
            or time.monotonic() - self.last_flush >= self.spec.batch_seconds
        )
        if not self.batch or not (force or due):
            return
        batch, self.batch = self.batch, []
        not_written = self.store.save_outputs(batch, self.run_record())
        self.failed.update(not_written)
        self.saved += len(batch) - len(not_written)
        self.last_flush = time.monotonic()

    def run_record(self) -> dict[str, Any]:
        """This run's line in the label set's history (what it has done so far)."""
        return {
            "id": self.run_id,
            "started": self.started_at,
            "updated": datetime.now(UTC).isoformat(timespec="seconds"),
            "status": self.status,
            "items_saved": self.saved,
            "items_failed": len(self.failed),
            "items_cut": list(self.truncated)[:ITEMS_CUT_KEPT],
            "ledger": self.ledger.snapshot(),
        } | ({"stop_reason": self.stop_reason} if self.stop_reason is not None else {})

    def _progress(self, in_flight: int, *, force: bool) -> None:
        now = time.monotonic()
        if not force and now - self.last_report < 0.2:
            return
        self.last_report = now
        self.report(
            Progress(
                self.status,
                self.total,
                self.saved,
                len(self.failed),
                in_flight,
                now - self.started,
                self.ledger.snapshot(),
            )
        )


def make_client(spec: RunSpec, api_key: str | None, cancel: threading.Event, ledger: Ledger) -> ChatClient:
    """The run's HTTP client; its retries are counted in ``ledger``."""
    return ChatClient(
        spec.base_url,
        api_key,
        timeout_s=spec.timeout_s,
        policy=spec.retry,
        cancel=cancel,
        on_retry=lambda _problem: ledger.retried(),
    )


def _no_progress(_progress: Progress) -> None:
    return None


def run_detector(
    spec: RunSpec,
    store: RunStore,
    *,
    api_key: str | None = None,
    cache: ResponseCache | None = None,
    cancel: threading.Event | None = None,
    progress: Callable[[Progress], None] = _no_progress,
    run_id: str | None = None,
) -> RunResult:
    """Run ``spec`` over the store's dataset (as run ``run_id``, else a new id); raises RunRefused
    (nothing called, nothing written)."""
    problems = spec.problems()
    if problems:
        raise RunRefused("; ".join(problems))
    strategy = get_strategy(spec.strategy)
    spec = replace(spec, images=spec.images and strategy.uses_image)
    everything = store.items()
    if not everything:
        raise RunRefused(f"the dataset {spec.dataset!r} has no items")
    by_id = {item.external_id: item for item in everything}
    unknown = [ext for ext in spec.items if ext not in by_id]
    if unknown:
        raise RunRefused(
            f"no item {unknown[0]!r} in the dataset {spec.dataset!r}"
            + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
        )
    chosen = [by_id[ext] for ext in dict.fromkeys(spec.items)] if spec.items else everything
    not_judged = {i.external_id: reason for i in chosen if (reason := strategy.unsuitable(i)) is not None}
    if len(not_judged) == len(chosen):
        raise RunRefused(f"{strategy.title} cannot judge any chosen item: {next(iter(not_judged.values()))}")
    cancel = cancel or threading.Event()
    halt = threading.Event()
    ledger = Ledger(spec.prices)
    run_id = run_id or uuid.uuid4().hex[:12]
    client = make_client(spec, api_key, halt, ledger)
    run = _Run(
        spec,
        store,
        client,
        cache if cache is not None else ResponseCache(None),
        cancel,
        halt,
        progress,
        ledger,
        run_id,
    )
    try:
        store.open_run(spec.settings(strategy), run_id, run.run_record())
        try:  # from here on the run holds its label set: whatever ends it gives it back
            done = store.done()
            todo = [i for i in chosen if i.external_id not in done and i.external_id not in not_judged]
            if spec.limit is not None:
                todo = todo[: spec.limit]
            source_models: dict[str | None, int] = {}
            for item in todo:
                source_models[item.source_model] = source_models.get(item.source_model, 0) + 1
            own = self_judged(spec.model, source_models)
            named = f"run {run_id} of detector {spec.detector!r} on dataset {spec.dataset!r}"
            with Heartbeat(lambda: store.renew_run(run_id), store.renew_every_s, run.stop, named):
                status = run.run(todo)
            held = store.done()
            complete = all(i.external_id in held for i in everything if strategy.unsuitable(i) is None)
        except BaseException:
            run.status = "failed"
            _give_back(store, run)
            raise
    finally:
        client.close()
    store.close_run(run.run_record(), complete)
    return RunResult(
        status=status,
        in_scope=len(todo),
        already_done=sum(1 for i in chosen if i.external_id in done),
        saved=run.saved,
        failed=dict(run.failed),
        not_judged=not_judged,
        ledger=run.ledger.snapshot(),
        complete=complete,
        prompt_hash=strategy.prompt_hash,
        judge_bias=f"{own} of {len(todo)} items: {NOTE}" if own else None,
        elapsed_s=time.monotonic() - run.started,
        started=run.started_at,
        stop_reason=run.stop_reason,
        truncated=dict(run.truncated),
    )


def _give_back(store: RunStore, run: _Run) -> None:
    """After a run broke off (its error is raised again): record it and give the label set back, so the
    next run need not wait for the lease to expire; a store that cannot be written now lets it expire."""
    try:
        store.close_run(run.run_record(), False)
    except Exception as error:  # noqa: BLE001 - the run's own error is the one to report
        log.warning("the broken-off run was not recorded (%s)", type(error).__name__)
