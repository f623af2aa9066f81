"""Rating tasks: set up a human rating of one detector, follow it, and move its ratings in and out.

A task names the detector run, the scale and its rubric, and whether raters score each predicted
segment (MHALO Table 4, 1–4) or each whole response (Tri-HE Table 9, 1–5); a custom scale is possible.
The summary shows how much each rater did, each item's score (the mean of a rater's segment scores,
then the mean over raters, as MHALO section 5.1 averages per item) and Krippendorff's alpha (interval).
Raters rate on the "Rate detector outputs" page, where they see only their own scores.
"""

from __future__ import annotations

import html
from functools import partial

import pandas as pd
import streamlit as st

from analysis.rating_scores import summarise
from components.dataset_picker import pick_dataset
from components.page_setup import setup_page
from db.access import Forbidden
from db.repositories.label_sets import list_label_sets
from db.repositories.labeling import StaleEdit
from db.repositories.rating_tasks import (
    PRESETS,
    RatingTaskView,
    TaskSpec,
    create_rating_task,
    export_ratings,
    import_ratings,
    list_rating_tasks,
    task_ratings,
    update_rating_task,
)
from formats.problems import quoted
from formats.ratings import COLUMNS
from render.literal_text import literal

CUSTOM = "custom"
NEW = 0
MESSAGE = "rating_tasks_message"

ctx = setup_page("Rating tasks")
ctx.require("manage_data")
engine = ctx.engine
picked_dataset = pick_dataset(engine)
if picked_dataset is None:
    st.stop()
dataset = picked_dataset  # bound after the check, so the callbacks below see a dataset
st.title("Rating tasks", anchor=False)
detectors = {v.id: v for v in list_label_sets(engine, dataset.id, kind="detector")}
tasks = {t.id: t for t in list_rating_tasks(engine, dataset.id)}
if not detectors and not tasks:
    st.info("This dataset has no detector run to rate yet: import a detector's outputs first.")
    st.stop()

picker_key = f"rating_tasks_pick_{dataset.id}"
if st.session_state.get(picker_key) not in (NEW, *tasks):
    st.session_state.pop(picker_key, None)
picked = st.selectbox(
    "Task",
    [*tasks, NEW],
    key=picker_key,
    format_func=lambda t: "➕ New rating task" if t == NEW else f"{tasks[t].name} · {tasks[t].detector}",
)
task: RatingTaskView | None = tasks.get(picked)
message = st.session_state.pop(MESSAGE, None)
if message:
    getattr(st, message[0])(literal(message[1]))


def preset_of(view: RatingTaskView | None) -> str:
    if view is None:
        return "mhalo"
    for name, preset in PRESETS.items():
        if (preset.granularity, preset.scale_min, preset.scale_max, dict(preset.rubric)) == (
            view.granularity,
            view.scale_min,
            view.scale_max,
            view.rubric,
        ):
            return name
    return CUSTOM


def field_key(name: str) -> str:
    return f"rt_{picked}_{name}"


def spec_from_widgets() -> TaskSpec:
    state = st.session_state
    preset = state[field_key("preset")]
    if preset != CUSTOM:
        chosen = PRESETS[preset]
        granularity, low, high, rubric = chosen.granularity, chosen.scale_min, chosen.scale_max, chosen.rubric
    else:
        granularity, low, high = (
            state[field_key("granularity")],
            state[field_key("min")],
            state[field_key("max")],
        )
        rubric = {str(p): state.get(field_key(f"rubric_{p}"), "") for p in range(low, high + 1)}
    return TaskSpec(
        name=state[field_key("name")],
        detector_label_set_id=state[field_key("detector")],
        granularity=granularity,
        scale_min=int(low),
        scale_max=int(high),
        rubric=rubric,
    )


def save() -> None:
    try:
        spec = spec_from_widgets()
        if task is None:
            new_id = create_rating_task(engine, dataset.id, spec, ctx.annotator.id, actor=ctx.actor)
            st.session_state[picker_key] = new_id
            st.session_state[MESSAGE] = ("success", f"Created rating task {quoted(spec.name.strip())}.")
        else:
            update_rating_task(
                engine, task.id, spec, ctx.annotator.id, expected_version=task.version, actor=ctx.actor
            )
            st.session_state[MESSAGE] = ("success", "Saved.")
    except (ValueError, StaleEdit, Forbidden) as refused:
        st.session_state[MESSAGE] = ("error", str(refused))


def settings() -> None:
    if not detectors:
        st.info("This dataset has no detector run: import a detector's outputs to rate them.")
        return
    locked = task is not None and task.n_ratings > 0
    st.text_input("Name", value=task.name if task else "", key=field_key("name"), max_chars=200)
    detector_ids = list(detectors)
    st.selectbox(
        "Detector run to rate",
        detector_ids,
        index=detector_ids.index(task.detector_label_set_id)
        if task and task.detector_label_set_id in detectors
        else 0,
        format_func=lambda d: detectors[d].title,
        key=field_key("detector"),
        disabled=locked,
    )
    options = [*PRESETS, CUSTOM]
    preset = st.radio(
        "Scale and rubric",
        options,
        index=options.index(preset_of(task)),
        format_func=lambda p: PRESETS[p].title if p in PRESETS else "Custom scale",
        key=field_key("preset"),
        disabled=locked,
        horizontal=True,
    )
    if locked and task is not None:
        st.caption(
            f"The task holds {task.n_ratings} rating(s), so its detector and scale are fixed; "
            "its name (and a custom rubric's wording) can still change."
        )
    if preset != CUSTOM:
        chosen = PRESETS[preset]
        st.caption(f"Raters score each {chosen.granularity} from {chosen.scale_min} to {chosen.scale_max}.")
        st.html(
            "<dl>"
            + "".join(
                f"<dt><b>{html.escape(k)}</b></dt><dd>{html.escape(v)}</dd>" for k, v in chosen.rubric.items()
            )
            + "</dl>"
        )
    else:
        cols = st.columns(3)
        cols[0].radio(
            "Raters score",
            ["segment", "response"],
            index=["segment", "response"].index(task.granularity if task else "segment"),
            format_func=lambda g: "each predicted segment" if g == "segment" else "the whole response",
            key=field_key("granularity"),
            disabled=locked,
        )
        low = cols[1].number_input(
            "Lowest score",
            0,
            9,
            value=task.scale_min if task else 1,
            step=1,
            key=field_key("min"),
            disabled=locked,
        )
        high = cols[2].number_input(
            "Highest score",
            1,
            10,
            value=task.scale_max if task else 5,
            step=1,
            key=field_key("max"),
            disabled=locked,
        )
        for point in range(int(low), int(high) + 1):
            st.text_area(
                f"What a {point} means",
                value=task.rubric_for(point) if task else "",
                key=field_key(f"rubric_{point}"),
                height=68,
            )
    st.button("Create task" if task is None else "Save changes", type="primary", on_click=save, key="rt_save")


def summary(view: RatingTaskView) -> None:
    found = summarise(task_ratings(engine, view.id))
    top = st.columns(4)
    top[0].metric("Ratings", found.n_ratings)
    top[1].metric("Raters", len(found.raters))
    top[2].metric("Items with a score", len(found.items))
    top[3].metric(
        "Krippendorff's α (interval)",
        "—" if found.alpha is None else f"{found.alpha:.3f}",
        help=f"Over the {found.paired_units} segment(s) scored by two or more raters; raters are the coders.",
    )
    right, judged = found.nothing_flagged
    if judged:
        st.caption(
            f"Items where the detector flagged nothing: raters judged that right {right} of {judged} times "
            f"({right / judged:.0%})."
        )
    if not found.n_ratings:
        st.info("No ratings yet. Raters work on the Rate detector outputs page, or import a ratings file.")
        return
    st.subheader("Per rater", anchor=False)
    st.dataframe(
        found.raters.rename(
            columns={
                "rater": "Rater",
                "scores": "Scores given",
                "items": "Items",
                "mean_score": "Mean score",
                "nothing_flagged_right": "Nothing flagged: judged right",
                "nothing_flagged_judged": "Nothing flagged: judged",
            }
        ),
        hide_index=True,
        width="stretch",
    )
    st.subheader("Per item", anchor=False)
    st.caption("Each rater's mean over the item's segments, and the item's score: the mean of those means.")
    st.dataframe(
        found.items.rename(
            columns={
                "external_id": "Item",
                "human_score": "Item score",
                "n_raters": "Raters",
                "n_segments": "Segments",
            }
        ),
        hide_index=True,
        width="stretch",
    )


def transfer(view: RatingTaskView) -> None:
    st.markdown(
        "Ratings files are CSV or JSONL with the columns " + ", ".join(f"`{c}`" for c in COLUMNS) + "."
    )
    st.caption(
        "A segment is given by its index among the detector's predicted segments on the item (text order) "
        "or by its character offsets; neither means the whole response. A file either imports completely or "
        "not at all, unless you allow skipping bad rows; importing replaces each listed rater's ratings of "
        "each listed item."
    )
    upload = st.file_uploader("Ratings file", type=["csv", "jsonl", "json"], key=f"rt_upload_{view.id}")
    allow_skip = st.checkbox("Import the sound rows and skip bad ones", key=f"rt_skip_{view.id}")
    if upload is not None and st.button("Import ratings", type="primary", key=f"rt_import_{view.id}"):
        try:
            outcome = import_ratings(
                engine,
                view,
                upload.getvalue(),
                actor=ctx.actor,
                source=upload.name,
                annotator=ctx.annotator.name,
                allow_skip=allow_skip,
            )
        except Forbidden as refused:
            st.error(literal(str(refused)))
            return
        if outcome.ok:
            st.success(f"Imported {outcome.written} rating(s) from {literal(upload.name)}.")
        else:
            st.error(f"Nothing was imported from {literal(upload.name)}.")
        if outcome.problems:
            st.dataframe(
                pd.DataFrame([p.to_dict() for p in outcome.problems]), hide_index=True, width="stretch"
            )
    cols = st.columns(2)
    stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in view.name).strip("_") or "ratings"
    for col, suffix, mime in ((cols[0], "csv", "text/csv"), (cols[1], "jsonl", "application/jsonl")):
        name = f"{stem}.{suffix}"
        col.download_button(
            f"Export {suffix.upper()}",
            data=partial(
                export_ratings, engine, view, filename=name, actor=ctx.actor
            ),  # written when clicked
            file_name=name,
            mime=mime,
            icon=":material/download:",
            key=f"rt_export_{suffix}_{view.id}",
            width="stretch",
        )


if task is None:
    st.subheader("New rating task", anchor=False)
    settings()
else:
    st.caption(
        f"Detector **{literal(task.detector)}** · per {literal(task.granularity)} · scale {task.scale_min}–{task.scale_max} · "
        f"{task.n_ratings} rating(s)"
    )
    st.page_link(
        "app_pages/rate.py",
        label="Rate this task",
        icon=":material/star_rate:",
        query_params={"task": str(task.id)},
    )
    summary_tab, settings_tab, files_tab = st.tabs(["Summary", "Settings", "Import / export"])
    with summary_tab:
        summary(task)
    with settings_tab:
        settings()
    with files_tab:
        transfer(task)
