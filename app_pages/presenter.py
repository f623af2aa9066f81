"""Presenter mode: one figure per screen in large type, read-only, refreshing itself as labels change.

Filters come from the page address (the same ``?subset=…&detector=…`` the Metrics page writes), so a
presenter opens a prepared link; ``?slide=`` picks the figure and ``?refresh=`` the seconds between
refreshes (default 10).
"""

from __future__ import annotations

from datetime import datetime

import plotly.graph_objects as go
import streamlit as st

from analysis.reports.base import Report
from analysis.reports.data import ReportFilter, unknown_choice
from components.dataset_picker import pick_dataset
from components.page_setup import setup_page
from components.presenter_slides import Slide, slides_for
from components.report_views import figure_of
from render import figures
from render.literal_text import literal

LARGE_TYPE = """
<style>
section[data-testid="stSidebar"], header[data-testid="stHeader"] { display: none; }
.block-container { padding-top: 1rem; max-width: 96vw; }
h1 { font-size: 2.6rem !important; }
h2 { font-size: 2.1rem !important; }
.stMarkdown p, .stCaption p, button p { font-size: 1.35rem !important; }
</style>
"""

ctx = setup_page("Presenter mode")
ctx.require("view_reports")
picked_dataset = pick_dataset(ctx.engine)
if picked_dataset is None:
    st.stop()
dataset = picked_dataset  # bound after the check, so the slide fragment below sees a dataset
st.html(LARGE_TYPE)

params = st.query_params
flt = ReportFilter(
    subsets=tuple(params.get_all("subset")),
    source_models=tuple(params.get_all("model")),
    detectors=tuple(params.get_all("detector")),
    types=tuple(params.get_all("type")),
    unknown=unknown_choice(params.get("unknown")),
)
try:
    refresh = max(2.0, float(params.get("refresh", 10)))
except ValueError:
    refresh = 10.0


def _large(report: Report, figure_key: str) -> go.Figure:
    spec = next(s for s in figures.figures_for(report) if s.key == figure_key)
    return figures.enlarge(spec.make(report))


def _go(step: int, count: int) -> None:
    current = int(st.query_params.get("slide", 1))
    st.query_params["slide"] = str((current - 1 + step) % count + 1)


@st.fragment(run_every=refresh)
def show_slide() -> None:
    slides: list[Slide] = slides_for(ctx.engine, dataset.id, flt)
    if not slides:
        st.title(literal(dataset.name))
        st.info("Nothing to present yet: this dataset has no gold labels with a detector run or ratings.")
        return
    try:
        number = min(max(int(st.query_params.get("slide", 1)), 1), len(slides))
    except ValueError:
        number = 1
    slide = slides[number - 1]
    st.markdown(f"## {slide.section} · {slide.spec.title}")
    st.plotly_chart(
        figure_of(slide.report, _large, slide.spec.key),
        config={"displayModeBar": False},
        theme=None,  # the figure's own (enlarged) type sizes, not the app theme's
        key="presenter-figure",
    )
    back, where, forward = st.columns([1, 4, 1], vertical_alignment="center")
    back.button("◀ Previous", on_click=_go, args=(-1, len(slides)), width="stretch", key="presenter-prev")
    forward.button("Next ▶", on_click=_go, args=(1, len(slides)), width="stretch", key="presenter-next")
    where.caption(
        f"Slide {number} of {len(slides)} · {literal(dataset.name)} · refreshed {datetime.now():%H:%M:%S}, "
        f"every {refresh:g} s"
    )


show_slide()
