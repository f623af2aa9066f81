"""Team: who works on the store and on what.

Admins (``manage_team``) create accounts with a role and a first password, change roles, disable and
enable accounts, split a dataset's task among annotators (k per item, balanced, in a stable order), set
the dataset's team settings and each annotator's vote weight. Admins and reviewers (``see_progress``)
follow the progress per annotator and per item, and see to whom gold of which items was shown (which
locks those items for them); admins may lift such a lock, after a confirmation, as it lets the annotator
change labels that gold has already informed. Every change goes through the repositories, which check
the acting user's rights again. In local mode the page is open to the person at the machine: that is how
users and assignments are set up before the store is switched to team mode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from components.dataset_picker import pick_dataset
from components.page_setup import setup_page
from components.store_cache import cached
from db.access import PERMISSIONS, Forbidden, utc_minute
from db.models import ROLES, TASKS
from db.repositories.accounts import AccountError, UserView, add_user, list_users, set_disabled, set_role
from db.repositories.assignments import (
    AssignmentError,
    assign,
    progress_by_annotator,
    progress_by_item,
    set_weight,
    unassign,
    weights,
)
from db.repositories.datasets import DatasetInfo, dataset_settings, set_dataset_settings
from db.repositories.gold_sightings import Sighting, lift_locks, list_sightings
from db.repositories.queue import queue_size
from formats.problems import quoted
from render.literal_text import literal

MESSAGE = "team_message"
LIFT_PENDING = "team_lift_pending"  # (dataset id, annotator id, item ids or None for all) awaiting "Confirm"
PAGE_SIZE = 50
# Under the progress tables when an annotator has locked items: why they are neither done nor remaining.
LOCKED_CAPTION = (
    "Locked: items an annotator has not finished whose gold was shown to them (Overridden labels page). "
    "Their labels there are kept as they were, so these items are neither done nor remaining."
)

ctx = setup_page("Team")
ctx.require("see_progress")
engine = ctx.engine
st.title("Team", anchor=False)


def run(action: Callable[[], str]) -> None:
    """Do one change for the callback that asked for it; keep what happened to show after the rerun."""
    try:
        st.session_state[MESSAGE] = ("success", action())
    except (AccountError, AssignmentError, Forbidden, ValueError) as refused:
        st.session_state[MESSAGE] = ("error", str(refused))


def show_message() -> None:
    """The last change's outcome, in a slot drawn on every run: were it drawn only when there is a
    message, the tabs below would move in the page when it goes, and the browser would reset them to
    the first tab on the admin's next click."""
    slot = st.container()
    message = st.session_state.pop(MESSAGE, None)
    if message:
        getattr(slot, message[0])(literal(message[1]))


def labelers(users: list[UserView]) -> dict[int, UserView]:
    """The enabled accounts whose role may label: who can be given items."""
    return {u.id: u for u in users if not u.disabled and u.role in PERMISSIONS["label"]}


# ------------------------------------------------------------------------------------------------- users


def create_user() -> None:
    state = st.session_state

    def create() -> str:
        created = add_user(
            engine,
            state["team_new_name"],
            state["team_new_role"],
            state["team_new_password"],
            actor=ctx.actor,
            email=state["team_new_email"].strip() or None,
        )
        state["team_new_name"] = state["team_new_password"] = state["team_new_email"] = ""
        return f"Created the {created.role} {quoted(created.name)}."

    run(create)


def change_role(users: dict[int, UserView]) -> None:
    user = users[st.session_state["team_user"]]
    role = st.session_state[f"team_role_{user.id}"]
    run(lambda: f"{quoted(set_role(engine, user.name, role, actor=ctx.actor).name)} is now {role}.")


def toggle_disabled(users: dict[int, UserView]) -> None:
    user = users[st.session_state["team_user"]]

    def toggle() -> str:
        changed = set_disabled(engine, user.name, not user.disabled, actor=ctx.actor)
        return f"{quoted(changed.name)} is {'disabled' if changed.disabled else 'enabled again'}."

    run(toggle)


def users_section() -> None:
    users = {u.id: u for u in list_users(engine)}
    st.dataframe(
        pd.DataFrame(
            {
                "name": [u.name for u in users.values()],
                "role": [u.role for u in users.values()],
                "disabled": [u.disabled for u in users.values()],
                "password set": [u.has_password for u in users.values()],
                "locked until": [
                    "—" if u.locked_until is None else f"{u.locked_until:%Y-%m-%d %H:%M}"
                    for u in users.values()
                ],
                "e-mail": [u.email or "" for u in users.values()],
            }
        ),
        hide_index=True,
        width="stretch",
    )
    with st.form("team_new_user", clear_on_submit=False):
        st.markdown("**New user**")
        left, right = st.columns(2)
        left.text_input("Name", key="team_new_name", max_chars=200)
        right.selectbox("Role", ROLES, index=ROLES.index("annotator"), key="team_new_role")
        left.text_input("First password", type="password", key="team_new_password")
        right.text_input("E-mail (optional)", key="team_new_email")
        st.form_submit_button("Create user", on_click=create_user)
    if not users:
        return
    st.markdown("**Change a user**")
    cols = st.columns([3, 2, 2, 2], vertical_alignment="bottom")
    picked = cols[0].selectbox("User", list(users), format_func=lambda u: users[u].name, key="team_user")
    user = users[picked]
    # Keyed per user, so picking another user shows their role.
    cols[1].selectbox("Role", ROLES, index=ROLES.index(user.role), key=f"team_role_{user.id}")
    cols[2].button("Change role", on_click=change_role, args=(users,), key="team_set_role")
    cols[3].button(
        "Enable" if user.disabled else "Disable", on_click=toggle_disabled, args=(users,), key="team_toggle"
    )


# ------------------------------------------------------------------------------------------- assignments


def do_assign(dataset: DatasetInfo, people: dict[int, UserView]) -> None:
    state = st.session_state
    task, chosen, k = state["team_assign_task"], list(state["team_assign_who"]), int(state["team_assign_k"])

    def split() -> str:
        counts = assign(engine, dataset.id, task, chosen, k, actor=ctx.actor)
        loads = ", ".join(f"{quoted(people[a].name)}: {n}" for a, n in counts.loads.items())
        return (
            f"{task}: {counts.items} item(s), {k} annotator(s) each — {counts.added} assignment(s) added, "
            f"{counts.kept} kept. Items per annotator: {loads}."
        )

    run(split)


def do_unassign(dataset: DatasetInfo, people: dict[int, UserView]) -> None:
    state = st.session_state
    task, who, unfinished = state["team_assign_task"], state["team_unassign_who"], state["team_unassign_open"]

    def remove() -> str:
        removed = unassign(engine, dataset.id, task, who, actor=ctx.actor, only_unfinished=unfinished)
        return f"Removed {removed} assignment(s) of {quoted(people[who].name)} on {task}."

    run(remove)


def assignments_section(dataset: DatasetInfo) -> None:
    people = labelers(list_users(engine))
    if not people:
        st.info("Nobody can be given items yet: create users with the annotator, reviewer or admin role.")
        return
    st.selectbox("Task", TASKS, key="team_assign_task")
    st.multiselect(
        "Annotators (their order breaks ties)",
        list(people),
        format_func=lambda a: people[a].name,
        key="team_assign_who",
    )
    st.number_input("Annotators per item (k)", min_value=1, value=1, step=1, key="team_assign_k")
    st.button(
        "Assign",
        type="primary",
        on_click=do_assign,
        args=(dataset, people),
        key="team_assign",
        help="Every item of the task gets k different annotators among those chosen, the least loaded "
        "first; existing assignments stay, so running it again adds only what is missing.",
    )
    st.markdown("**Take items away**")
    cols = st.columns([3, 3, 2], vertical_alignment="bottom")
    cols[0].selectbox(
        "Annotator", list(people), format_func=lambda a: people[a].name, key="team_unassign_who"
    )
    cols[1].checkbox("Only items they have not finished", value=True, key="team_unassign_open")
    cols[2].button("Unassign", on_click=do_unassign, args=(dataset, people), key="team_unassign")


# ------------------------------------------------------------------------------------- dataset settings


def setting_key(name: str, dataset: DatasetInfo) -> str:
    """A settings widget's key, per dataset: a toggle keeps its state across reruns whatever its
    ``value``, so a key shared by every dataset would show the dataset picked before (and save it)."""
    return f"team_{name}_{dataset.id}"


def save_settings(dataset: DatasetInfo) -> None:
    state = st.session_state

    def save() -> str:
        saved = set_dataset_settings(
            engine,
            dataset.id,
            blind=state[setting_key("blind", dataset)],
            allow_preannotation=state[setting_key("preannotation", dataset)],
            char_precision=state[setting_key("char_precision", dataset)],
            actor=ctx.actor,
        )
        return (
            f"Saved: annotators work {'blind' if saved.blind else 'seeing other labels'}, "
            f"pre-annotation {'allowed' if saved.allow_preannotation else 'not allowed'}, "
            f"spans {'may be character-precise (Alt)' if saved.char_precision else 'snap to whole words'}."
        )

    run(save)


def settings_section(dataset: DatasetInfo) -> None:
    current = dataset_settings(engine, dataset.id)
    allowed = ctx.may("manage_data")
    st.toggle(
        "Blind: annotators see neither other annotators' labels nor gold nor detectors while labeling",
        value=current.blind,
        key=setting_key("blind", dataset),
        disabled=not allowed,
    )
    st.toggle(
        "Allow pre-annotation: annotators may start from a detector's labels",
        value=current.allow_preannotation,
        key=setting_key("preannotation", dataset),
        disabled=not allowed,
    )
    st.toggle(
        "Character precision: a span marked with Alt held may start or end inside a word",
        value=current.char_precision,
        key=setting_key("char_precision", dataset),
        disabled=not allowed,
        help="For OCR-type errors (one wrong letter). Off: every span snaps to whole words, "
        "as MHALO scores whitespace tokens.",
    )
    st.button(
        "Save settings",
        on_click=save_settings,
        args=(dataset,),
        key="team_save_settings",
        disabled=not allowed,
    )


# ------------------------------------------------------------------------------------------------ weights


def save_weight(dataset: DatasetInfo, people: dict[int, UserView]) -> None:
    state = st.session_state
    who = state["team_weight_who"]
    weight = float(state[f"team_weight_{dataset.id}_{who}"])
    trusted = state[f"team_trusted_{dataset.id}_{who}"]

    def save() -> str:
        set_weight(engine, dataset.id, who, weight, trusted, actor=ctx.actor)
        return (
            f"{quoted(people[who].name)} now weighs {weight:g}"
            + ("" if trusted else " and is not trusted")
            + "."
        )

    run(save)


def weights_section(dataset: DatasetInfo) -> None:
    people = labelers(list_users(engine))
    if not people:
        st.info("No annotator yet.")
        return
    stored = weights(engine, dataset.id)
    st.dataframe(
        pd.DataFrame(
            {
                "annotator": [p.name for p in people.values()],
                "weight": [stored[a][0] for a in people],
                "trusted": [stored[a][1] for a in people],
            }
        ),
        hide_index=True,
        width="stretch",
    )
    cols = st.columns([3, 2, 2, 2], vertical_alignment="bottom")
    who = cols[0].selectbox(
        "Annotator", list(people), format_func=lambda a: people[a].name, key="team_weight_who"
    )
    # Keyed per dataset and annotator, so picking another shows that one's stored values.
    weight, trusted = stored[who]
    cols[1].number_input(
        "Weight", min_value=0.0, value=weight, step=0.1, key=f"team_weight_{dataset.id}_{who}"
    )
    cols[2].checkbox("Trusted", value=trusted, key=f"team_trusted_{dataset.id}_{who}")
    cols[3].button("Save weight", on_click=save_weight, args=(dataset, people), key="team_save_weight")


# ----------------------------------------------------------------------------------------------- progress


def progress_section(dataset: DatasetInfo) -> None:
    task = st.selectbox("Task", TASKS, key="team_progress_task")
    rows = cached(progress_by_annotator, engine, dataset.id, task)
    st.markdown("**Per annotator**")
    if not rows:
        st.info(f"Nothing is assigned on the {task} task of this dataset yet.")
    else:
        st.dataframe(
            pd.DataFrame(
                {
                    "annotator": [r.name for r in rows],
                    "assigned": [r.assigned for r in rows],
                    "done": [r.done for r in rows],
                    "skipped": [r.skipped for r in rows],
                    "locked": [r.locked for r in rows],
                    "remaining": [r.remaining for r in rows],
                    # Of what they can still finish: a locked item never will be, and kept the bar short.
                    "finished": [
                        (r.done + r.skipped) / (r.assigned - r.locked) if r.assigned > r.locked else None
                        for r in rows
                    ],
                }
            ),
            column_config={"finished": st.column_config.ProgressColumn("finished", min_value=0, max_value=1)},
            hide_index=True,
            width="stretch",
        )
        if any(r.locked for r in rows):
            st.caption(LOCKED_CAPTION)
    total = cached(queue_size, engine, dataset.id, task)
    st.markdown("**Per item**")
    if not total:
        st.info(f"No item of this dataset has anything to label on the {task} task.")
        return
    pages = (total + PAGE_SIZE - 1) // PAGE_SIZE
    page = int(st.number_input(f"Page (of {pages})", 1, pages, value=1, step=1, key="team_progress_page"))
    items = cached(progress_by_item, engine, dataset.id, task, (page - 1) * PAGE_SIZE, PAGE_SIZE)
    st.caption(
        f"Items {(page - 1) * PAGE_SIZE + 1}–{(page - 1) * PAGE_SIZE + len(items)} of {total}, in dataset order."
    )
    table: dict[str, list[Any]] = {
        "item": [i.external_id for i in items],
        "assigned to": [", ".join(i.annotators) for i in items],
        "annotators": [len(i.annotators) for i in items],
        "finished": [i.finished for i in items],
        "locked": [i.locked for i in items],
    }
    st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch")
    if any(i.locked for i in items):
        st.caption(LOCKED_CAPTION)


# ------------------------------------------------------------------------------------------------ gold shown


def ask_lift(dataset: DatasetInfo) -> None:
    """The "Lift…" button: ask for a confirmation of what is chosen, lifting nothing yet."""
    state = st.session_state
    item = state["team_lift_item"]
    state[LIFT_PENDING] = (dataset.id, state["team_lift_who"], None if item is None else (item,))


def confirm_lift(dataset: DatasetInfo, name: str) -> None:
    state = st.session_state
    _, annotator_id, item_ids = state.pop(LIFT_PENDING)

    def lift() -> str:
        lifted = lift_locks(engine, dataset.id, annotator_id, actor=ctx.actor, item_ids=item_ids)
        if not lifted:
            return f"{quoted(name)} had no locked item left to lift (lifted meanwhile?)."
        return (
            f"Lifted the lock of {quoted(name)} on {len(lifted)} item(s): {', '.join(map(quoted, lifted))}. "
            "They may change their labels there again; the records stay, marked lifted."
        )

    run(lift)


def cancel_lift() -> None:
    st.session_state.pop(LIFT_PENDING, None)


def sightings_table(rows: list[Sighting]) -> None:
    st.dataframe(
        pd.DataFrame(
            {
                "annotator": [r.annotator for r in rows],
                "item": [r.external_id for r in rows],
                "page": [r.page for r in rows],
                "shown": [utc_minute(r.shown_at) for r in rows],
                "locked": [r.locks for r in rows],
                "lifted": ["—" if r.lifted_at is None else utc_minute(r.lifted_at) for r in rows],
                "lifted by": ["—" if r.lifted_at is None else r.lifted_by or "command line" for r in rows],
            }
        ),
        hide_index=True,
        width="stretch",
    )


def lift_controls(dataset: DatasetInfo, rows: list[Sighting]) -> None:
    """Choose an annotator and one of their locked items, or all of them; then confirm."""
    locked: dict[int, list[Sighting]] = {}
    for r in rows:
        if r.locks:
            locked.setdefault(r.annotator_id, []).append(r)
    if not locked:
        st.caption("No lock is left to lift: every record above was lifted.")
        return
    names = {annotator_id: found[0].annotator for annotator_id, found in locked.items()}
    pending = st.session_state.get(LIFT_PENDING)
    if pending is not None and pending[0] == dataset.id and pending[1] in locked:
        _, who, item_ids = pending
        chosen = [r.external_id for r in locked[who] if item_ids is None or r.item_id in item_ids]
        st.warning(
            literal(
                f"Lift the lock of {quoted(names[who])} on {len(chosen)} item(s): {', '.join(map(quoted, chosen))}? "
                "They saw gold of these items, so labels they change there may follow gold rather than "
                "their own judgment. The records stay, marked lifted by you; gold shown to them again "
                "locks the item again."
            ),
            icon=":material/lock_open:",
        )
        with st.container(horizontal=True):
            st.button(
                "Confirm lift",
                type="primary",
                on_click=confirm_lift,
                args=(dataset, names[who]),
                key="team_lift_confirm",
            )
            st.button("Cancel", on_click=cancel_lift, key="team_lift_cancel")
        return
    st.markdown("**Lift a lock**")
    cols = st.columns([3, 3, 2], vertical_alignment="bottom")
    who = cols[0].selectbox("Annotator", list(locked), format_func=names.__getitem__, key="team_lift_who")
    items = {r.item_id: r.external_id for r in locked[who]}
    cols[1].selectbox(
        "Items",
        [None, *items],
        format_func=lambda i: f"All {len(items)} locked item(s)" if i is None else items[i],
        key="team_lift_item",
    )
    cols[2].button("Lift…", on_click=ask_lift, args=(dataset,), key="team_lift")


def sightings_section(dataset: DatasetInfo) -> None:
    rows = cached(list_sightings, engine, dataset.id)
    st.caption(
        "Gold shown to blind annotators (Overridden labels page), newest first. Each shown item is "
        "locked for its annotator: their labels there are kept as they were, until an admin lifts it."
    )
    if not rows:
        st.info("No gold has been shown to a blind annotator on this dataset.")
        return
    sightings_table(rows)
    if ctx.may("manage_team"):
        lift_controls(dataset, rows)


# ------------------------------------------------------------------------------------------------- layout

show_message()
dataset = pick_dataset(engine)
if ctx.may("manage_team"):
    users_tab, assign_tab, settings_tab, weights_tab, progress_tab, gold_tab = st.tabs(
        ["Users", "Assignments", "Dataset settings", "Weights", "Progress", "Gold shown"]
    )
    with users_tab:
        users_section()
    for tab, section in (
        (assign_tab, assignments_section),
        (settings_tab, settings_section),
        (weights_tab, weights_section),
        (progress_tab, progress_section),
        (gold_tab, sightings_section),
    ):
        with tab:
            if dataset is None:
                st.info("Import a dataset first.")
            else:
                section(dataset)
elif dataset is not None:
    progress_section(dataset)
    st.subheader("Gold shown", anchor=False)
    sightings_section(dataset)
