"""What every annotation page shares: the item queue, progress, jump and deep link, the saved
indicator, undo, and the skip/unsure flag.

In team mode an annotator's queue (next item, size, progress) holds only the items assigned to them on
the task (:func:`assigned_to`); reviewers and admins, and everyone in local mode, work on the whole dataset.

A page calls :func:`open_workspace` to get the dataset, the item and the annotator's own label set,
then runs each user action through :func:`act`, which saves it at once (its own transaction), records
what was saved for the indicator, and turns a refused action (stale version, inconsistent label, a
right the user lacks, a busy store) into a message instead of a crash. Every save passes the version
of what the page showed (or ``labeling.ABSENT``), so an edit made meanwhile in another session is
never overwritten unseen; Undo reverts the last action on the item on screen for this task, and only
if it is still the one offered.
Opening a page writes nothing: the annotator and their label set are created by their first save
(:attr:`Workspace.label_set`, :attr:`Workspace.who`); until then the page reads
:attr:`Workspace.view_id`. Actions run in widget callbacks, so the page re-renders with the new state.

A click reruns only the unit being labeled: the page draws it through :func:`labeling_unit`, a
fragment holding the unit, its receipt ("✓ Saved"), Undo, Skip / unsure and the item's status, so the
image, the sidebar and the header are not rebuilt on every click. The fragment updates the item's done
status itself, after one of the annotator's own label actions only (:func:`act` notes it), to done only
when that action completed the item (:func:`_label_completed`), and asks for a whole-page run only when
that status changed since the header was drawn (the progress bar would be one action behind otherwise).
Drawing an item whose units are all labeled already (imported, or labeled in another tab) writes nothing: it offers "Item done" (key D) instead. Marked done on every render, an
item became done for whoever merely opened it, and a read changed the progress and the edit log. A page
ends with :func:`finish`, which draws the header (progress, next item, jump) in the slot reserved at the
top.

Keyboard labeling and slow redraws: a key pressed before the page has redrawn still reaches the button
drawn for the previous unit. The current unit's buttons therefore keep the same widget keys from unit to
unit and act on the unit that is current when the key arrives (:func:`current_unit`), and a key that
arrives while the next item loads is refused (:func:`still_showing`), never applied to the wrong item.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import streamlit as st
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from components.dataset_picker import pick_dataset
from components.dead_ends import missing_item
from components.empty_queue import show_nothing_to_do
from components.login import say_at_login, still_signed_in
from components.page_setup import PageContext, engine_for
from components.store_cache import cached
from components.unit_keys import ANY_KEY, FLAG_LABEL, JUMP_LABEL, catch_early_keys, held_until_settled
from db.access import Forbidden, team_mode
from db.config import resolve_url
from db.repositories import labeling, queue
from db.repositories.assignments import is_item_assigned
from db.repositories.datasets import DatasetInfo
from db.repositories.gold_sightings import gold_seen
from db.repositories.items import ItemView, get_item
from db.repositories.label_sets import LabelSetView, human_label_set, list_label_sets
from formats.problems import quoted
from page_table import pages
from render.literal_text import literal

_SAVED = "annotation_saved"
_REFUSED = "annotation_refused"
_REFUSED_AS = "annotation_refused_as"  # the refusal's exception class
_TOTAL = "annotation_queue_total"
_FLAG_NOTE = "frame_flag_note"  # the note typed in "Skip / unsure"
_FLAG_NOTE_ITEM = "frame_flag_note_item"  # the item whose note it is
_FLAG_CHOICES = "frame_flag_choices"  # choices made in "Skip / unsure": each closes it
_JUMP = "frame_jump"
_JUMP_MISSING = "frame_jump_missing"  # an id typed in the jump box that the dataset does not have
# (task, item external id) of each item a label action of this session was saved on, until the item is
# drawn again on that task: that drawing brings its done status in step with its labels. Kept per item,
# as a key pressed before the page redrew (the last label, then N at once) draws another item first.
_LABELED = "frame_labeled_items"
# Those of them that were complete already when the first of those label actions arrived: a label that
# changes a complete item does not complete it, so it leaves the item for "Item done" (key D).
_LABELED_WHOLE = "frame_labeled_whole_items"
_SHOWN_COMPLETE = "frame_shown_complete"  # (task, item external id, complete) of the last drawing
_TASK_SHOWN = "frame_task_shown"  # the task of the page last drawn, whose buttons a callback answers
# The actions that change an item's labels (an undo counts as the action it reverts); a status or a
# draft started from a detector does not make an item done by itself.
_LABEL_ENTITIES = frozenset(
    ("spans", "sentence_labels", "claim_labels", "triplet_judgments", "response_scores", "ratings")
)
_SIGNED_OUT = (
    "You are no longer logged in (logged out in another tab, or the login ended): nothing was saved."
)
# What the page reads as the annotator's own label set before their first save: no row has id 0.
NO_LABEL_SET = 0
_NOBODY = 0  # no annotator has id 0: an annotator without a row has nothing assigned
_NOT_DRAWN = object()


# The keys the frame gives every annotation page (listed with the page's own on `?`).
FRAME_KEYS = (
    ("N", "next item for me"),
    ("U", "undo the last action on this item"),
    ("D", "mark the item done"),
    ("S", "skip this item or mark it unsure: type a note if you like, Tab to your choice, Enter"),
)


def assigned_to(ctx: PageContext) -> int | None:
    """Whose assignments narrow the queue: the annotator's in team mode, nobody's otherwise."""
    if ctx.team and ctx.actor.role == "annotator":
        return ctx.actor.id if ctx.actor.id is not None else _NOBODY
    return None


@dataclass(eq=False)
class Workspace:
    ctx: PageContext
    dataset: DatasetInfo
    item: ItemView
    own: LabelSetView | None  # the annotator's own label set, once they saved something here
    task: str  # "spans", "sentences", "claims", "triplets", "rating:<task id>"
    page_path: str
    header: Any  # the container at the top of the page that :func:`finish` fills
    _created: LabelSetView | None = field(default=None, repr=False)
    # The item's status when the header was drawn (``_NOT_DRAWN`` before): a unit's rerun compares it.
    header_status: str | None | object = field(default=_NOT_DRAWN, repr=False)
    unit_drawn: bool = field(default=False, repr=False)  # the tools are drawn by the unit's fragment
    # Called after an undo on this item: a page puts its cursor back on the unit the undo took back.
    on_undo: Callable[[], None] | None = field(default=None, repr=False)
    # The item is someone else's to label (team mode, a link to an item not assigned to this annotator),
    # or its gold was shown to this annotator (their labels are kept as they were): the pages draw their
    # label buttons disabled and their keys unbound; the store refuses labels too. ``why_read_only``
    # says which, in the words the keys repeat.
    read_only: bool = False
    why_read_only: str = ""
    # Decided once per run by :func:`open_workspace` and passed down, as each is asked several times a
    # run: whether the queue holds items back from the user until their labeling is done
    # (:func:`db.repositories.queue.holds`), and the queues of the page's assignment task
    # (:func:`db.repositories.queue.pages_of_task`).
    holds: bool = False
    task_pages: tuple[str, ...] = ()

    @property
    def whole_task(self) -> bool:
        """Whether this page's queue is all of its assignment task (every page but a rating campaign's
        beside others, and scoring responses beside a campaign): its count is then the task's."""
        return self.task_pages == (self.task,)

    @property
    def view_id(self) -> int:
        """The own label set's id for reading (:data:`NO_LABEL_SET` before the first save); a unit's
        rerun sees the label set its first save created."""
        own = self.own or self._created
        return own.id if own is not None and own.id != NO_LABEL_SET else NO_LABEL_SET

    @property
    def label_set(self) -> LabelSetView:
        """The annotator's own label set, created with the annotator by their first save: writes only."""
        if self.own is not None:
            return self.own
        if self._created is None and self.ctx.team and not still_signed_in(self.ctx.engine):
            # Evaluated as an argument before :func:`act` checks the login: a tab logged out elsewhere
            # must not create the label set either. ``act`` then refuses the action itself.
            return LabelSetView(
                NO_LABEL_SET, self.dataset.id, "human", self.ctx.annotator.name, None, None, None
            )
        if self._created is None:
            try:
                self._created = human_label_set(self.ctx.engine, self.dataset.id, self.who)
            except IntegrityError:  # another session of the annotator created it a moment ago
                self._created = human_label_set(self.ctx.engine, self.dataset.id, self.who)
            except Forbidden:
                # The user may not label. The action this is an argument of runs the same check first
                # and is refused with the same reason inside :func:`act`, which shows it; nothing is
                # written by either.
                return LabelSetView(
                    NO_LABEL_SET, self.dataset.id, "human", self.ctx.annotator.name, None, None, None
                )
        return self._created

    @property
    def who(self) -> int:
        """The annotator's id, creating their row: writes only."""
        return self.ctx.annotator.id


def act(action: Callable[..., labeling.Action | None], *args: Any, **kwargs: Any) -> labeling.Action | None:
    """Run one annotator action now; remember what was saved (or why it was refused) for the page.

    None when the action was refused, or did nothing (an undo with nothing left to undo). In team mode
    the login is checked first: a logout in another tab must stop this one too.
    """
    st.session_state.pop(_REFUSED_AS, None)
    if team_mode() and not still_signed_in(engine_for(resolve_url())):
        st.session_state[_REFUSED] = _SIGNED_OUT
        say_at_login(_SIGNED_OUT)  # the page shows the login form in its place
        return None
    try:
        done = action(*args, **kwargs)
    except (
        labeling.StaleEdit,
        labeling.InconsistentLabel,
        labeling.StoreBusy,
        ValueError,
        Forbidden,
    ) as refused:
        # One message at a time: the receipt of an earlier action, left beside the refusal, read as
        # if this one had been saved too.
        st.session_state.pop(_SAVED, None)
        st.session_state[_REFUSED] = str(refused)
        st.session_state[_REFUSED_AS] = type(refused)
        return None
    except SQLAlchemyError:
        st.session_state.pop(_SAVED, None)
        st.session_state[_REFUSED] = "The store could not save this just now; nothing changed. Try again."
        return None
    if done is None:  # nothing was left to do (an undo with nothing to undo)
        return None
    st.session_state[_SAVED] = (
        done.description,
        datetime.now().strftime("%H:%M:%S"),
        st.query_params.get("item"),
    )
    st.session_state.pop(_REFUSED, None)
    if done.entity in _LABEL_ENTITIES:
        labeled: set[tuple[str | None, str | None]] = st.session_state.setdefault(_LABELED, set())
        key = (st.session_state.get(_TASK_SHOWN), st.query_params.get("item"))
        if key not in labeled and st.session_state.get(_SHOWN_COMPLETE) == (*key, True):
            st.session_state.setdefault(_LABELED_WHOLE, set()).add(key)
        labeled.add(key)
    return done


def refused_as(kind: type[Exception]) -> bool:
    """Whether the last :func:`act` was refused for that reason (a sentence labeled correct over the
    annotator's own span is refused with an override to offer; a stale edit, an item not assigned or
    a login gone are refused with nothing to override)."""
    refusal = st.session_state.get(_REFUSED_AS)
    return isinstance(refusal, type) and issubclass(refusal, kind)


def _go_to(external_id: str | None) -> None:
    if external_id is not None:
        st.query_params["item"] = external_id


def _jump(engine: Engine, dataset_id: int) -> None:
    """The jump box's Enter: open the typed item, and empty the box. A value left in it would be read
    again on every run, taking Next and N back to the item jumped to."""
    wanted = str(st.session_state.get(_JUMP) or "").strip()
    st.session_state[_JUMP] = ""
    if not wanted:
        return
    if get_item(engine, dataset_id, wanted) is None:
        st.session_state[_JUMP_MISSING] = wanted
    else:
        _go_to(wanted)


def open_workspace(ctx: PageContext, task: str, page_path: str) -> Workspace | None:
    """Pick dataset and item (deep link, else the annotator's next unfinished item); reserve the header."""
    dataset = pick_dataset(ctx.engine)
    if dataset is None:
        return None
    if ctx.annotator.refused:
        st.info("Choose the name you work under in the sidebar (Working as) to annotate.")
        return None
    stored = ctx.annotator.stored()
    own = next(
        (
            ls
            for ls in list_label_sets(ctx.engine, dataset.id, kind="human")
            if stored is not None and ls.annotator == stored.name
        ),
        None,
    )
    own_id = own.id if own is not None else NO_LABEL_SET
    mine = assigned_to(ctx)
    holding = queue.holds(ctx.engine, dataset.id, task, mine)
    task_pages = queue.pages_of_task(ctx.engine, dataset.id, task)
    wanted = st.query_params.get("item") or queue.next_item(
        ctx.engine, dataset.id, own_id, task, assigned_to=mine, holding=holding
    )
    if wanted is None:
        if not queue.queue_size(ctx.engine, dataset.id, task):
            show_nothing_to_do(ctx, dataset, task)  # "done" would claim work that never existed
        elif mine is not None and not queue.queue_size(ctx.engine, dataset.id, task, assigned_to=mine):
            st.info("No item of this dataset is assigned to you for this task yet; ask an admin.")
        else:
            held = queue.held_for_rating(
                ctx.engine, dataset.id, own_id, task, assigned_to=mine, holding=holding
            )
            if held.items:
                # Not "every item is done": the rest wait for the annotator's own labeling of them.
                st.info(
                    f"No item is ready for you to rate now. {_waiting(held)}", icon=":material/lock_clock:"
                )
                _labeling_links(dataset.name, list(held.tasks))
            else:
                whose = "assigned to you" if mine is not None else "of this dataset"
                st.success(
                    f"Every item {whose} is done {_scope(task, task_pages == (task,))}"
                    f"{_locked_aside(ctx, dataset.id, own_id, task)}. 🎉"
                )
            _skipped_link(ctx, dataset.id, own_id, task, mine)
        return None
    item = get_item(ctx.engine, dataset.id, wanted)
    if item is None:
        missing_item(dataset, wanted, f"app_pages/{page_path}.py", None)
        return None
    read_only = mine is not None and not is_item_assigned(ctx.engine, mine, item.id, task)
    if read_only:
        # A link to an item assigned to someone else: it may be read, but every label would be refused.
        # Say so before the first click, and offer the annotator's own next item.
        with st.container(horizontal=True, vertical_alignment="center"):
            st.warning(
                f"Item {literal(quoted(item.external_id))} is not assigned to you on the "
                f"{literal(queue.assignment_task(task))} task: you can read it, not label it.",
                icon=":material/lock:",
            )
            st.page_link(
                f"app_pages/{page_path}.py",
                label="Open my next item",
                icon=":material/arrow_forward:",
                query_params={"dataset": dataset.name},
            )
    why = (
        f"Item {item.external_id} is assigned to someone else: you can read it, not label it."
        if read_only
        else ""
    )
    seen = gold_seen(ctx.engine, mine, item.id) if mine is not None and not read_only else None
    if seen is not None:
        # Gold of the item was shown to this blind annotator (Overridden labels): an edit now would bring
        # their labels to gold's, so the store refuses it; say why before the first click.
        read_only, why = True, seen.reason
        with st.container(horizontal=True, vertical_alignment="center"):
            st.warning(why, icon=":material/lock:")
            st.page_link(
                f"app_pages/{page_path}.py",
                label="Open my next item",
                icon=":material/arrow_forward:",
                query_params={"dataset": dataset.name},
            )
    if st.query_params.get("item") != item.external_id:
        st.query_params["item"] = item.external_id
    st.session_state[_TASK_SHOWN] = task  # what a label saved from this drawing's buttons is labeled on
    catch_early_keys()  # keys typed while the unit's buttons still load wait for them
    return Workspace(
        ctx,
        dataset,
        item,
        own,
        task,
        page_path,
        st.container(),
        read_only=read_only,
        why_read_only=why,
        holds=holding,
        task_pages=task_pages,
    )


def _scope(task: str, whole_task: bool) -> str:
    """What "every item is done" is said of: the task, or on a page that is one part of its assignment
    task (a rating page beside others: ``whole_task`` False, :attr:`Workspace.whole_task`) this page
    only, the task needing its other parts too."""
    whole = queue.assignment_task(task)
    return (
        "for this task"
        if whole_task
        else f"on this page (the {whole} task counts an item once every rating campaign of the dataset has "
        "it, or its score where the dataset has none)"
    )


def locked_words(locked: int) -> str:
    """How the progress views (the annotation pages and the home card) name the items locked for the
    annotator: "1,234 locked: gold was shown to you", counted as every other number on them is."""
    return f"{locked:,} {queue.LOCKED_NOTE}"


def held_words(held: int) -> str:
    """How the rating header names the items of the annotator's queue held back until their own labeling
    of them is done (:func:`db.repositories.queue.held_for_rating`): "3 held back until your labeling is
    done". Unlike locked items they are still to do, so they stay in the total and the remaining."""
    return f"{held:,} held back until your labeling is done"


def _locked_aside(ctx: PageContext, dataset_id: int, label_set_id: int, task: str) -> str:
    """What "every item is done" leaves out for an annotator with locked items, which are not done (nor
    left to do): ", but for 2 locked: gold was shown to you"; nothing when none is locked."""
    mine = assigned_to(ctx)
    if mine is None:
        return ""
    locked = queue.locked_count(ctx.engine, dataset_id, label_set_id, task, mine)
    return f", but for {locked_words(locked)}" if locked else ""


def _skipped_link(
    ctx: PageContext,
    dataset_id: int,
    label_set_id: int,
    task: str,
    mine: int | None,
) -> None:
    """Under "every item is done": how many of them were skipped, with a link to the first. The queue
    passes skipped items over, so nothing else leads back to them."""
    done = queue.progress(ctx.engine, dataset_id, label_set_id, task, assigned_to=mine)
    first = queue.next_skipped(ctx.engine, dataset_id, label_set_id, task, assigned_to=mine)
    if not done.skipped or first is None:
        return
    with st.container(horizontal=True, vertical_alignment="center"):
        st.caption(f"{done.skipped:,} of them skipped, not done.")
        # A button that sets the address, as Next does: a link to the same page changed the page but not
        # the address, and the first label on the item was refused as one for another item.
        st.button(
            "Open the first skipped item",
            icon=":material/flag:",
            on_click=_go_to,
            args=(first,),
            key="frame_first_skipped",
        )


def say_item_finished(ws: Workspace, what: str) -> None:
    """Say the item is finished (``what``: "Every sentence is labeled."), and where to go: N, or, on the
    last item left, that none is (it said "Press N" with N disabled). Looked up here, not taken from the
    header, which is drawn after the unit. An item labeled whole before this visit is not done yet
    (opening it writes nothing): the annotator is sent to "Item done" instead."""
    status = queue.item_status(ws.ctx.engine, ws.view_id, ws.item.id, ws.task)
    now = status.status if status is not None else None
    if now != "done" and not (_label_completed(ws) and now in (None, "skipped")) and not ws.read_only:
        # Labeled before this visit (imported, or in another tab): finished by the annotator's word.
        st.success(f"{what} Press **D** (Item done) to mark the item done.")
        return
    mine = assigned_to(ws.ctx)
    if _next_for_me(ws) is not None:
        st.success(f"{what} Press **N** (Next item for me) to continue.")
        return
    held = _held(ws)
    if held.items:
        st.success(f"{what} No other item is ready for you to rate now. {_waiting(held)}")
    else:
        whose = "assigned to you" if mine is not None else "of this dataset"
        aside = _locked_aside(ws.ctx, ws.dataset.id, ws.view_id, ws.task)
        st.success(
            f"{what} That was the last item left: every item {whose} is done "
            f"{_scope(ws.task, ws.whole_task)}{aside}. 🎉"
        )


def _next_for_me(ws: Workspace) -> str | None:
    """The item N opens (the user's next unfinished one after this, wrapping around); None when N has
    nowhere to go, this being the only one left or none."""
    following = queue.next_item(
        ws.ctx.engine,
        ws.dataset.id,
        ws.view_id,
        ws.task,
        after_position=ws.item.position,
        assigned_to=assigned_to(ws.ctx),
        holding=ws.holds,
    )
    return following if following != ws.item.external_id else None


def _held(ws: Workspace) -> queue.HeldBack:
    """The items of the user's queue held back until their labeling is done (none where the queue
    holds nothing back, without a read)."""
    if not ws.holds:
        return queue.HeldBack(0, {})
    return queue.held_for_rating(
        ws.ctx.engine, ws.dataset.id, ws.view_id, ws.task, assigned_to=assigned_to(ws.ctx), holding=True
    )


def _waiting(held: queue.HeldBack) -> str:
    """What :func:`db.repositories.queue.held_for_rating` held back, and why, in one sentence."""
    where = ", ".join(
        f"{task} ({count} item{'s' if count != 1 else ''})" for task, count in held.tasks.items()
    )
    return (
        f"{held.items} item(s) assigned to you here wait until you finish labeling them on: {where}. "
        "A detector's output on them would answer part of that labeling."
    )


def _labeling_links(dataset_name: str, tasks: Sequence[str], item: str | None = None) -> None:
    """Links to the labeling pages of ``tasks`` (at ``item``, else at the annotator's next item)."""
    specs = {spec.path: spec for spec in pages()}
    with st.container(horizontal=True):
        for task in tasks:
            spec = specs[f"app_pages/{task}.py"]
            st.page_link(
                spec.path,
                label=spec.title,
                icon=spec.icon,
                query_params={"dataset": dataset_name, **({"item": item} if item is not None else {})},
            )


def show_held_back(ws: Workspace, tasks: Sequence[str]) -> None:
    """The rating page of an item held back from a blind annotator (:func:`queue.rating_waits_on`):
    one line saying why, links to the labeling still open on it, and the header (progress, Next item),
    but nothing of the detector's output and no rating tools."""
    st.info(queue.held_back_reason(tasks), icon=":material/lock_clock:")
    # An action sent from the item's page as drawn before it was held back (a rating, "Skip this
    # item"), which the store refused: said here, or it stayed behind and showed on the next item.
    refused = st.session_state.pop(_REFUSED, None)
    if refused:
        st.error(literal(refused))
    _labeling_links(ws.dataset.name, tasks, ws.item.external_id)
    with ws.header:
        _header(ws)


def _counted_queue(engine: Engine, dataset_id: int, task: str, mine: int | None) -> int:
    return queue.queue_size(engine, dataset_id, task, assigned_to=mine)


def _queue_total(ws: Workspace) -> int:
    """The queue's size, counted at most once per item shown and once per store revision: counting
    scans the dataset (a fifth of a second at a million sentences), and no annotator action changes it
    (only an import or a removal do, seen from the next item on). Moving on to the next item without
    saving anything, in any session, reuses the count. An annotator's queue is counted again as soon as
    their assignments change: items taken away while they work must not be counted as still theirs."""
    mine = assigned_to(ws.ctx)
    assignments = (
        queue.assignments_mark(ws.ctx.engine, ws.dataset.id, ws.task, mine) if mine is not None else None
    )
    key = (ws.ctx.database, ws.dataset.id, ws.task, ws.item.id, mine, assignments)
    known = st.session_state.get(_TOTAL)
    if known is None or known[0] != key:
        known = (key, cached(_counted_queue, ws.ctx.engine, ws.dataset.id, ws.task, mine))
        st.session_state[_TOTAL] = known
    return known[1]


def _whole_task(ws: Workspace, mine: int | None) -> str:
    """On a page whose queue is one part of its assignment task (a rating campaign's, or scoring
    responses: both the ratings task), the count above is this page's alone; this adds the task's, as
    the Team page, the progress command and the home card count it (an item is done there once every
    campaign has it, or its score on a dataset without one: :func:`db.repositories.queue.task_pages`). Alone, "1 / 40 done" on the scoring page
    stood beside "done 0" on the Team page for the same annotator. Nothing on the other pages."""
    task = queue.assignment_task(ws.task)
    if ws.whole_task:  # this page's count is the task's
        return ""
    whole = queue.task_progress(
        ws.ctx.engine, ws.dataset.id, ws.view_id, ws.task, assigned_to=mine, pages=ws.task_pages
    )
    skipped = f", {whole.skipped:,} skipped" if whole.skipped else ""
    return f" on this page · {task} task: {whole.finished - whole.skipped:,} / {whole.total:,} done{skipped}"


def _header(ws: Workspace) -> None:
    engine = ws.ctx.engine
    mine = assigned_to(ws.ctx)
    total = _queue_total(ws)
    done = queue.progress(engine, ws.dataset.id, ws.view_id, ws.task, total=total, assigned_to=mine)
    # An empty queue (a dataset with nothing to label on this task) has no next item: looking for one
    # would scan every item twice, after this one and again from the start.
    following = (
        queue.next_item(
            engine,
            ws.dataset.id,
            ws.view_id,
            ws.task,
            after_position=ws.item.position,
            assigned_to=mine,
            holding=ws.holds,
        )
        if total
        else None
    )
    top = st.columns([2, 2, 2, 3])
    # The bar is how far the queue is through; the words keep skipped items apart from done ones.
    skipped = f" · {done.skipped:,} skipped" if done.skipped else ""
    # Items locked for the annotator (gold shown to them) are neither done nor left: the bar is full once
    # the rest are finished, and the words say how many are locked, and why.
    locked = f" · {locked_words(done.locked)}" if done.locked else ""
    # Items held back from the annotator's rating queue are counted in and still to do, but N does not
    # offer them yet: "0 / 5 done" with 3 of the 5 held back read as if 5 were waiting to be rated.
    n_held = _held(ws).items if total else 0
    held = f" · {held_words(n_held)}" if n_held else ""
    top[0].progress(
        done.fraction,
        text=f"{done.finished - done.skipped:,} / {done.total:,} done{skipped}{_whole_task(ws, mine)}{locked}{held}",
    )
    top[1].button(
        "Next item for me",
        icon=":material/skip_next:",
        shortcut="N",
        disabled=following is None or following == ws.item.external_id,
        on_click=_go_to,
        args=(following,),
        help="The next item you have not finished, in dataset order (key N)"
        + (": only items assigned to you." if mine is not None else "."),
        key="frame_next",
        width="stretch",
    )
    top[2].text_input(
        JUMP_LABEL,
        key=_JUMP,
        placeholder="jump to item id…",
        label_visibility="collapsed",
        on_change=_jump,
        args=(engine, ws.dataset.id),
    )
    missing = st.session_state.pop(_JUMP_MISSING, None)
    if missing is not None:
        top[2].error(f"No item {literal(quoted(missing))}.")
    link = "?" + urlencode({"dataset": ws.dataset.name, "item": ws.item.external_id})
    # The item's place is in the dataset; the queue is the items this page labels (those with claims on
    # the claims page, say) or, for an annotator in team mode, those assigned: "3 of 15" mixed the two.
    where = f"at {ws.item.position} in the dataset · " + (
        f"{done.total} in this page's queue"
        if assigned_to(ws.ctx) is None
        else f"{done.total} assigned to you"
    )
    top[3].caption(
        f"Item **{literal(ws.item.external_id)}** ({where}) · as **{literal(ws.ctx.annotator.name)}** · "
        f"[deep link]({ws.page_path}{link})"
    )
    if done.skipped:  # the queue passes skipped items over: the way back to them
        back = queue.next_skipped(
            engine, ws.dataset.id, ws.view_id, ws.task, after_position=ws.item.position, assigned_to=mine
        )
        if back is not None and back != ws.item.external_id:
            top[3].button(
                f"Next skipped ({done.skipped:,} skipped)",
                icon=":material/flag:",
                on_click=_go_to,
                args=(back,),
                key="frame_next_skipped",
                help="The next item you skipped, in dataset order (Next item for me passes them over)",
            )
    status = queue.item_status(engine, ws.view_id, ws.item.id, ws.task)
    ws.header_status = status.status if status else None


@dataclass(frozen=True)
class _ToolsRow:
    """The row of tools, drawn in two steps: the receipt at once, the rest once the unit is drawn."""

    undo: Any
    flag: Any
    status: Any


def _receipt(item: str) -> _ToolsRow:
    """Lay out the tools row and show the receipt of the last action on ``item`` (or why an action was
    refused) in it now: the action is saved before the unit is drawn, so its receipt need not wait for
    the drawing. The receipt of an action on another item stays behind (the next item is fresh)."""
    # Undo and Skip / unsure wide enough for their labels (narrower, they read "U…" and "Sk…").
    tools = st.columns([2.4, 3.4, 3.2])
    with tools[2]:
        row = _ToolsRow(tools[0], tools[1], st.empty())
        saved = st.session_state.get(_SAVED)
        if saved and saved[2] == item:
            # The time is the app's own (``%H:%M:%S``): shown through literal(), its colons took word
            # joiners, invisible but copied with it.
            st.caption(f"✓ Saved · {literal(saved[0])} · {saved[1]}")
        refused = st.session_state.pop(_REFUSED, None)
        if refused:
            st.error(literal(refused))
    return row


def _tools(
    ws: Workspace, row: _ToolsRow, status: queue.ItemStatusView | None, complete: bool | None = None
) -> None:
    """Undo, Skip / unsure and the item's ``status``, in the row :func:`_receipt` laid out; and, on an
    item ``complete`` but not done (its labels were there before this visit), "Item done"."""
    engine = ws.ctx.engine
    stored = ws.ctx.annotator.stored()
    undoable = (
        labeling.undoable(engine, stored.id, [ws.view_id], item_id=ws.item.id, task=ws.task)
        if stored is not None and ws.view_id != NO_LABEL_SET
        else None
    )
    row.undo.button(
        "Undo",
        icon=":material/undo:",
        shortcut="U",
        disabled=undoable is None or ws.read_only,
        help=literal(ws.why_read_only)
        if ws.read_only
        else f"Undo on this item: {literal(undoable.description)} (key U)"
        if undoable
        else "Nothing to undo on this item",
        on_click=_undo,
        args=(ws, undoable.log_id if undoable else None),
        key="frame_undo",
        width="stretch",
    )
    # One popover per item: one left open on an item closes with it, instead of following the
    # annotator to the next one with "Skip this item" focused (Space then skipped that item unseen).
    # The note starts from the item's own, not the one typed on the item before.
    if st.session_state.get(_FLAG_NOTE_ITEM) != ws.item.id:
        st.session_state[_FLAG_NOTE_ITEM] = ws.item.id
        st.session_state[_FLAG_NOTE] = (status.note or "") if status else ""
    # Drawn off on an item read-only for the user, with the reason: open, it offered choices that were
    # all disabled, and the button itself looked as if there were something to do.
    with row.flag.popover(
        FLAG_LABEL,
        icon=":material/flag:",
        width="stretch",
        key=_flag_popover(ws),
        disabled=ws.read_only,
        help=literal(ws.why_read_only) if ws.read_only else None,
    ):
        st.text_input("Note", key=_FLAG_NOTE)
        for label, value in (("Skip this item", "skipped"), ("Mark unsure", "unsure")):
            st.button(
                label,
                key=f"frame_flag_{value}",
                disabled=ws.read_only,
                on_click=_flag,
                args=(ws, value, status.version if status else labeling.ABSENT),
            )
        if status is not None and status.status in ("skipped", "unsure"):
            st.button(  # an unsure item never left the queue: only a skipped one goes back
                "Clear skipped: back in my queue" if status.status == "skipped" else "Clear unsure",
                key="frame_flag_clear",
                disabled=ws.read_only,
                on_click=_clear_flag,
                args=(ws, status.version),
            )
    offer_done = complete is True and (status is None or status.status != "done") and not ws.read_only
    if status is None and not offer_done:
        return
    with row.status.container(horizontal=True, vertical_alignment="center", gap="small"):
        if offer_done:
            st.button(
                "Item done",
                icon=":material/task_alt:",
                shortcut="D",
                help="Every unit is labeled: mark the item done (key D).",
                on_click=mark_done,
                args=(ws, status.version if status else labeling.ABSENT),
                key="frame_done",
            )
        if status is not None:
            st.caption(
                f"Status: **{literal(status.status)}**"
                + (f" — {literal(status.note)}" if status.note else "")
            )


def mark_done(ws: Workspace, shown_version: int, task: str | None = None) -> None:
    """Mark the item done on ``task`` (default: the page's), unless its status changed since the page
    showed it: "Item done" here, and a detector's draft checked (:mod:`components.preannotation`)."""
    if still_showing(ws):
        act(
            labeling.set_item_status,
            ws.ctx.engine,
            ws.label_set.id,
            ws.item.id,
            task or ws.task,
            "done",
            ws.who,
            expected_version=shown_version,
        )


def _flag_popover(ws: Workspace) -> str:
    """The key of the item's "Skip / unsure" popover: a popover drawn under a new key is a new one,
    closed, so the key changes with the item and with each choice made in it (:func:`_close_flag`)."""
    return f"frame_flag_{ws.item.id}_{st.session_state.get(_FLAG_CHOICES, 0)}"


def _close_flag() -> None:
    """Close "Skip / unsure" once a choice is made in it: left open, it covered the receipt and the
    status beside it, so the annotator could not see that the choice was saved (or refused). Setting a
    tracked popover's state closed did not do: the page's run that follows a fragment's sometimes
    reached the browser without it, and the popover stayed open."""
    st.session_state[_FLAG_CHOICES] = st.session_state.get(_FLAG_CHOICES, 0) + 1


def _flag(ws: Workspace, status: str, shown_version: int) -> None:
    """Mark the item skipped or unsure, unless its status changed since the page showed it. The note is
    read here, not bound when the button was drawn: typed and then clicked at once, the text reaches the
    server in the same rerun as the click, after the button was drawn."""
    _close_flag()
    note = str(st.session_state.get(_FLAG_NOTE) or "")
    act(
        labeling.set_item_status,
        ws.ctx.engine,
        ws.label_set.id,
        ws.item.id,
        ws.task,
        status,
        ws.who,
        note=note,
        expected_version=shown_version,
    )


def _clear_flag(ws: Workspace, shown_version: int) -> None:
    """Take the item's skipped or unsure mark away, unless its status changed since the page showed it."""
    _close_flag()
    act(
        labeling.clear_item_status,
        ws.ctx.engine,
        ws.label_set.id,
        ws.item.id,
        ws.task,
        ws.who,
        expected_version=shown_version,
    )


def _undo(ws: Workspace, log_id: int | None) -> None:
    """Undo the action the button offered, on the item on screen; say which item and what it undid."""
    if log_id is None or not still_showing(ws):
        return
    done = act(
        labeling.undo_last,
        ws.ctx.engine,
        ws.who,
        [ws.label_set.id],
        item_id=ws.item.id,
        task=ws.task,
        expected_log_id=log_id,
    )
    if done is not None:
        if ws.on_undo is not None:
            ws.on_undo()
        what = f"{done.description} (item {done.item or ws.item.external_id})"
        st.session_state[_SAVED] = (what, datetime.now().strftime("%H:%M:%S"), ws.item.external_id)


def still_showing(ws: Workspace) -> bool:
    """False (and a message) when an action arrives for an item the page no longer shows."""
    if st.query_params.get("item") != ws.item.external_id:
        st.session_state[_REFUSED] = "That key arrived while the next item was loading; press it again."
        return False
    return True


def place_cursor(cursor_key: str, labeled: Callable[[], Sequence[bool]]) -> None:
    """Start the cursor on the item's first unit without a label, the first time this browser session
    shows the item (``labeled``: per unit, whether the annotator has labeled it). After a reload the
    next key must not land on unit 1 and overwrite a label there."""
    if cursor_key not in st.session_state:
        st.session_state[cursor_key] = next((k for k, done in enumerate(labeled()) if not done), 0)


def track_labeled_unit(ws: Workspace, cursor_key: str, recent_key: str) -> None:
    """Keep ``recent_key`` (the unit the last label key labeled, which the cursor has left) for this
    visit of the item only, and have U put the cursor back on it: the undo takes that label back, and
    the next key must not label the unit after it. Coming back to the item later, E/T/W are for the
    current unit again."""
    shown = f"labeled_unit_item_{ws.page_path}"
    if st.session_state.get(shown) != ws.item.id:
        st.session_state.pop(recent_key, None)
        st.session_state[shown] = ws.item.id

    def back_to_undone() -> None:
        if recent_key in st.session_state:
            st.session_state[cursor_key] = st.session_state.pop(recent_key)

    ws.on_undo = back_to_undone


def current_unit(cursor_key: str, n_units: int) -> int:
    """The unit (sentence, claim, triplet …) the cursor is on now, clamped to the item's units."""
    return max(0, min(int(st.session_state.get(cursor_key, 0)), n_units - 1))


def key_reasons(ws: Workspace, page: Mapping[str, str] | None = None) -> dict[str, str]:
    """Why keys do nothing now, said by the keyboard when one is pressed (``unavailable`` of
    :func:`components.unit_keys.unit_keys`): the frame's keys when their buttons are disabled, and the
    page's own ``page`` reasons (E on a sentence not marked incorrect: "press 2, then E"). On an item
    someone else is to label, or one whose gold was shown to the user, that is the reason for every
    label key, the page's and Undo's too: theirs would send the user to a key that does nothing there
    either."""
    # Why N does nothing is asked only where it does nothing; where the queue holds items back, it may
    # be because the rest wait for the user's labeling (a read of the queue, spared when N has an item).
    held = _held(ws) if ws.holds and _next_for_me(ws) is None else queue.HeldBack(0, {})
    reasons = {
        "N": f"No other item is ready for you to rate now. {_waiting(held)}"
        if held.items
        else "No other item is left for you on this task: every other one is done, skipped or locked.",
        "U": "Nothing to undo on this item: U takes back your last action on the item shown.",
        "D": "D marks the item done once every unit is labeled, if it is not done yet.",
        **(page or {}),
    }
    if ws.read_only:
        why = ws.why_read_only
        reasons.update({key: why for key in page or {}})
        reasons["U"] = why
        reasons["D"] = why
        reasons[ANY_KEY] = why
    return reasons


def keys_off(ws: Workspace, keys: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Which of the listed ``keys`` do nothing on this item, and why (``listed_off`` of
    :func:`components.unit_keys.unit_keys`): on an item read-only for the user, every key but N (their
    next item), for the reason the page gives at the top."""
    if not ws.read_only:
        return {}
    return {key: ws.why_read_only for key, _ in keys if key != "N"}


def label_first(unit: str, state: str, holder: str, part: str, keys: str, *, moved_on: bool) -> str:
    """Why a key for part of a label (``E`` an error type, ``T`` a claim's type, ``3`` a triplet's wrong
    part) found nothing to act on, and the keys that make it there: ``unit`` ("Claim 3") ``state`` ("is
    judged not a hallucination"), and only ``holder`` ("a hallucination") has ``part`` ("a type");
    ``keys`` ("1, then T") give it one. ``moved_on``: the cursor has left the unit (the key was for the
    unit just labeled), so K goes back to it first."""
    back = "K to go back to it, then " if moved_on else ""
    return f"{unit} {state}, and only {holder} has {part}: press {back}{keys}."


def _just_labeled(ws: Workspace) -> bool:
    """Whether a label action of this session on the item shown (on this task) is not yet in step with
    its done status."""
    return (ws.task, ws.item.external_id) in st.session_state.get(_LABELED, set())


def _label_completed(ws: Workspace) -> bool:
    """Whether a label action of this session on the item shown is one that may complete it: the item
    was not complete when it arrived. On an item labeled whole before (imported, another tab), one key
    (even a label that changed nothing) marked the item done, though the page said to press D."""
    key = (ws.task, ws.item.external_id)
    return _just_labeled(ws) and key not in st.session_state.get(_LABELED_WHOLE, set())


def _sync_done(ws: Workspace, complete: bool | None) -> queue.ItemStatusView | None:
    """After a label action on the item, bring its done status in step with ``complete`` (None: the
    page decides by a button); return the item's status after it. Any other run only reads: an item
    is made done by the label that completes it (:func:`_label_completed`), not by being looked at, nor
    by a label on an item that was complete already."""
    status = queue.item_status(ws.ctx.engine, ws.view_id, ws.item.id, ws.task)
    key = (ws.task, ws.item.external_id)
    labeled, completed = _just_labeled(ws), _label_completed(ws)
    st.session_state.get(_LABELED, set()).discard(key)  # this drawing syncs it
    st.session_state.get(_LABELED_WHOLE, set()).discard(key)
    st.session_state[_SHOWN_COMPLETE] = (*key, complete)  # what the next label action finds
    if complete is None or not labeled or (complete and not completed):
        return status
    is_done = status is not None and status.status == "done"
    skipped_now_whole = complete and status is not None and status.status == "skipped"
    if (
        complete != is_done
        and (status is None or is_done or skipped_now_whole)
        and ws.view_id != NO_LABEL_SET
    ):
        # Refused when the user may no longer write here: the status stays as it was, like their labels.
        with contextlib.suppress(Forbidden):
            labeling.sync_done(ws.ctx.engine, ws.label_set.id, ws.item.id, ws.task, complete, ws.who)
            status = queue.item_status(ws.ctx.engine, ws.view_id, ws.item.id, ws.task)
    return status


@st.fragment
def _unit(ws: Workspace, draw: Callable[[], bool | None]) -> None:
    if st.session_state.get(_REFUSED) == _SIGNED_OUT:
        del st.session_state[_REFUSED]
        st.rerun(scope="app")  # the whole page, which shows the login form
    if ws.header_status is not _NOT_DRAWN and st.query_params.get("item") != ws.item.external_id:
        st.rerun(scope="app")  # the item changed under the unit (e.g. a link): show the new one whole
    refused = st.session_state.get(_REFUSED)  # shown (and taken) by the receipt
    with held_until_settled() as settled:  # the keys wait for the whole page's run when one follows
        row = _receipt(ws.item.external_id)
        complete = draw()
        status = _sync_done(ws, complete)
        _tools(ws, row, status, complete)
        # A rerun of the unit alone: if the item became done (or not), the progress bar must say so.
        settled["rerun"] = (
            ws.header_status is not _NOT_DRAWN and (status.status if status else None) != ws.header_status
        )
    if settled["rerun"]:
        if refused is not None:  # refused because the status changed elsewhere: said on the redrawn page
            st.session_state[_REFUSED] = refused
        st.rerun(scope="app")


def labeling_unit(ws: Workspace, draw: Callable[[], bool | None]) -> None:
    """Draw the unit being labeled (``draw``, which returns whether the item is complete, or None when
    the page decides that by a button) with its receipt, Undo, Skip / unsure and status, as a fragment:
    an action taken in it reruns only it, which is what makes a click's receipt appear at once."""
    ws.unit_drawn = True
    _unit(ws, draw)


def finish(ws: Workspace, complete: bool | None = None) -> None:
    """Draw the header in the slot at the top, after the unit, so its progress includes the action just
    taken. On a page that drew no :func:`labeling_unit`, ``complete`` is the item's completeness (None:
    the page decides by a button) and the tools are drawn under the header."""
    status = None if ws.unit_drawn else _sync_done(ws, complete)
    with ws.header:
        _header(ws)
        if not ws.unit_drawn:
            _tools(ws, _receipt(ws.item.external_id), status, complete)
