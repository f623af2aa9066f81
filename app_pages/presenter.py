"""Presenter mode: one figure per screen in large type, read-only, following the store as labels change.

Filters come from the page address (the same ``?subset=…&detector=…`` the Metrics page writes), so a
presenter opens a prepared link (read when presenter mode opens, and written back from the filters shown
on every run; a value no option names is left out, and said above the figure as on every page);
``?slide=`` picks the figure (one past the last shows the last, one that is no number the first, and
either is said above it, in the same words, until the presenter moves). The keyboard drives it as a
slide deck: → / PageDown for the next slide, ← / PageUp for the previous one, Esc back to the page
presenter mode was opened from. The address is read when presenter mode opens; while it stays open the deck counts its own
slides and writes the number into the address (which can fall behind: see :mod:`components.live_refresh`).
The figure takes the whole window below one line of title and above one line of controls, whatever the
window's size. A change saved in any session redraws the slide within seconds; while nothing
changes the page does not rerun.
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from analysis.reports.base import Report
from analysis.reports.data import UNKNOWN_CHOICES, UNKNOWN_EXCLUDED, ReportFilter, unknown_choice
from components.dataset_picker import pick_dataset
from components.live_refresh import follow_store, poll_left_as_shown
from components.navigation import PRESENTER_SLIDE, origin
from components.page_address import all_from_address, keep, left_out, notice, opening, unknown_values
from components.page_setup import setup_page
from components.presenter_slides import Slide, iter_slides
from components.report_filters import CALLED, MODEL_WIDGET, UNKNOWN_CALLED, filter_options
from components.report_views import figure_of
from components.unit_keys import catch_early_keys, unit_keys
from formats.problems import quoted
from render import figures
from render.literal_text import literal

# The window is the slide: no sidebar or header, one line of title on top, one line of controls at the
# bottom, and the figure's box sized to the rest of the window (the chart stretches to its box).
PRESENTER_CSS = """
<style>
section[data-testid="stSidebar"], header[data-testid="stHeader"],
[data-testid="stSidebarCollapsedControl"] { display: none; }
.block-container { padding: 0.6rem 1.5rem 0.4rem 1.5rem !important; max-width: 100% !important; }
.st-key-presenter h2 { font-size: 2rem !important; padding: 0 !important; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; }
.st-key-presenter .stMarkdown p, .st-key-presenter button p { font-size: 1.3rem !important; }
.st-key-presenter-stage { flex: none !important; height: calc(100vh - 9.5rem) !important;
  min-height: 12rem !important; }
.st-key-presenter-stage > div { flex: 1 1 0 !important; min-height: 0 !important; }
.st-key-presenter-stage > div:has(> .st-key-presenter-notices) { flex: none !important; max-height: 40%;
  overflow-y: auto; }
.st-key-presenter-jump [data-baseweb="select"] div { font-size: 1.1rem; }
.st-key-presenter-keys { display: none; }
</style>
"""

FILTER = "_presenter_filter"  # session state: the filters shown, read from the address when it opened
JUMP_LABEL = "Slide"  # the slide list: a pick there hands the keys back to the deck (see unit_keys)
PRESENTER_KEYS = (
    ("→ or PageDown", "next slide"),
    ("← or PageUp", "previous slide"),
    ("Esc", "back to the page presenter mode was opened from"),
)

ctx = setup_page("Presenter mode")
ctx.require("view_reports")
picked_dataset = pick_dataset(ctx.engine)
if picked_dataset is None:
    st.stop()
dataset = picked_dataset
follow_store(ctx.engine)
st.html(PRESENTER_CSS)
catch_early_keys()  # a → typed while a first visit still loads the slide's buttons steps once they are drawn


# The filters shown: those of the address presenter mode opened with (read once: see
# components.page_address; a filter it lacks is none), then kept in the session and written back into the
# address on every run, so a watcher's run that brings an older address back does not change the deck.
# A value no option names (a stale link's subset or detector) is left out of the deck, and said above it
# in the words of every page (components.page_address.notice), as long as presenter mode stays open.
asked = {name: all_from_address(name) for name in (*CALLED, "unknown")}
said: dict[str, str | None] = dict.fromkeys(asked)
if opening() or any(values is not None for values in asked.values()) or FILTER not in st.session_state:
    # The models Tri-HE's runs judged count as source models too: its slides filter on them.
    offered = filter_options(ctx.engine, dataset, answering_models=True)
    chosen = {
        name: tuple(v for v in dict.fromkeys(asked[name] or ()) if v in offered[name]) for name in CALLED
    }
    said.update({name: left_out(called, asked[name] or [], offered[name]) for name, called in CALLED.items()})
    unknown_asked = asked["unknown"][-1] if asked["unknown"] else None
    unknown = unknown_choice(unknown_asked)
    if unknown_asked and unknown_asked not in (unknown, UNKNOWN_CHOICES[unknown]):
        instead = f"showing {quoted(UNKNOWN_CHOICES[unknown])} instead"
        said["unknown"] = unknown_values(
            UNKNOWN_CALLED, [unknown_asked], list(UNKNOWN_CHOICES.values()), instead
        )
    st.session_state[FILTER] = ReportFilter(
        subsets=chosen["subset"],
        source_models=chosen[MODEL_WIDGET],
        detectors=chosen["detector"],
        types=chosen["type"],
        unknown=unknown,
    )
flt: ReportFilter = st.session_state[FILTER]
filtered = {
    "subset": flt.subsets,
    MODEL_WIDGET: flt.source_models,
    "detector": flt.detectors,
    "type": flt.types,
}
for name, values in filtered.items():
    keep(name, list(values) or None)
keep("unknown", None if flt.unknown == UNKNOWN_EXCLUDED else UNKNOWN_CHOICES[flt.unknown])
params = st.query_params


def _addressed() -> int:
    """The slide the address asks for: a number of 1 or more, else the first (``?slide=`` naming none,
    ``abc``, ``0`` or ``-2``: a link to the deck, cut or mistyped, opens at its start)."""
    try:
        return max(int(params.get("slide", 1)), 1)
    except ValueError:
        return 1


# The ?slide= of the address presenter mode opened with ("" for none), said when it names no slide.
asked_slide: str | None = None
if PRESENTER_SLIDE in st.session_state:
    wanted: int = st.session_state[PRESENTER_SLIDE]
else:  # presenter mode opens: the address says which slide
    wanted = _addressed()
    asked_slide = params.get("slide", "")


def _large(report: Report, figure_key: str) -> go.Figure:
    spec = next(s for s in figures.figures_for(report) if s.key == figure_key)
    return figures.enlarge(spec.make(report))


def _show(slide: Slide) -> None:
    """The slide's title and figure."""
    title.markdown(f"## {literal(slide.title)}")
    with stage:
        st.plotly_chart(
            figure_of(slide.shown(), _large, slide.spec.key),
            config={"displayModeBar": False},
            theme=None,  # the figure's own (enlarged) type sizes, not the app theme's
            height="stretch",
            key="presenter-figure",
        )


def _to(number: int) -> None:
    st.session_state[PRESENTER_SLIDE] = number
    keep("slide", str(number))


def _moved(number: int) -> None:
    """The presenter chose a slide (what the address asked for is said until then: see ``notice``)."""
    _to(number)


def _step(step: int, count: int) -> None:
    """One slide on or back from the one shown (not the address's: it may be behind), wrapping around."""
    current = min(max(st.session_state.get(PRESENTER_SLIDE, 1), 1), count)
    _moved((current - 1 + step) % count + 1)


def _jumped() -> None:
    # A poll's run brings the list's number as the tab showed it before the last step: no pick.
    if poll_left_as_shown("presenter-jump", st.session_state.get(PRESENTER_SLIDE, 1)):
        return
    _moved(int(st.session_state["presenter-jump"]))


with st.container(key="presenter"):
    head, jump, leave = st.columns([6, 3, 1.4], vertical_alignment="center")
    title = head.empty()
    jump_box = jump.empty()
    if leave.button("✕ Leave", shortcut="Esc", key="presenter-leave", help="Back to the page you came from"):
        page, query = origin()
        st.switch_page(page, query_params={**query, "dataset": dataset.name})
    stage = st.container(key="presenter-stage")
    # Above the figure, which gives them room; many of them scroll (see PRESENTER_CSS).
    notices = stage.container(key="presenter-notices")
    with notices:
        for name, shown in [*filtered.items(), ("unknown", flt.unknown)]:
            notice(name, shown, said[name])
    controls = st.empty()

    # Draw the wanted slide as soon as its report is ready, then finish the list of slides.
    slides: list[Slide] = []
    for slide in iter_slides(ctx.engine, dataset.id, flt):
        slides.append(slide)
        if len(slides) == wanted:
            _show(slide)
    if not slides:
        title.markdown(f"## {literal(dataset.name)}")
        stage.info(
            "Nothing to present yet: this dataset has no gold labels with a detector run or ratings, "
            "or too few of them for any figure to draw (the Metrics page shows their tables)."
        )
        st.stop()
    count = len(slides)
    number = min(wanted, count)
    if number != wanted:  # the address asked for a slide past the end: show the last one
        _show(slides[-1])
    _to(number)
    # Said until the presenter moves, so a rerun as the store changes keeps it (a reload reads the
    # address, where the slide's number now stands, and says nothing).
    numbers = [str(k) for k in range(1, count + 1)]
    with notices:
        notice(
            "slide",
            number,
            unknown_values("slide", [asked_slide], numbers, f"showing slide {number} instead")
            if asked_slide and asked_slide not in numbers
            else None,
        )

    st.session_state["presenter-jump"] = number
    jump_box.selectbox(
        JUMP_LABEL,
        range(1, count + 1),
        format_func=lambda k: f"{k} · {slides[k - 1].title}",
        key="presenter-jump",
        on_change=_jumped,
        label_visibility="collapsed",
        help="Jump to a slide",
    )
    with controls.container():
        back, where, forward = st.columns([1, 4, 1], vertical_alignment="center")
        back.button(
            "◀ Previous",
            shortcut="Left",
            on_click=_step,
            args=(-1, count),
            width="stretch",
            key="presenter-prev",
        )
        forward.button(
            "Next ▶", shortcut="Right", on_click=_step, args=(1, count), width="stretch", key="presenter-next"
        )
        where.caption(
            f"Slide {number} of {count} · {literal(dataset.name)} · ← → PageUp PageDown to step · Esc to leave"
        )
    with st.container(key="presenter-keys"):  # the second keys of the same steps (hidden)
        st.button("Previous", shortcut="PageUp", on_click=_step, args=(-1, count), key="presenter-pageup")
        st.button("Next", shortcut="PageDown", on_click=_step, args=(1, count), key="presenter-pagedown")
        # Four quick presses of → are four slides: a key pressed while the page still answers the one
        # before waits for it (Streamlit merged quick presses of one button into one click).
        unit_keys(None, PRESENTER_KEYS, release=(JUMP_LABEL,))
