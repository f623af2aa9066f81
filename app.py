"""Spanlight entry point: the navigation between the user's tasks.

Run with ``make run`` (or ``streamlit run app.py``). Pages live in ``pages/`` and each begins with the
shared setup (``components.page_setup.setup_page``) itself, because Streamlit may serve a page URL
before this file has run; this file therefore only routes.
"""

from __future__ import annotations

import streamlit as st

navigation = st.navigation(
    {
        "Data": [
            st.Page("pages/home.py", title="Datasets", icon=":material/dataset:", default=True),
            st.Page("pages/browse.py", title="Browse items", icon=":material/table_rows:"),
            st.Page("pages/item.py", title="Item", icon=":material/image:"),
            st.Page("pages/import_data.py", title="Import", icon=":material/upload:"),
            st.Page("pages/export_data.py", title="Export", icon=":material/download:"),
        ],
        "Annotate": [
            st.Page("pages/spans.py", title="Mark spans", icon=":material/format_ink_highlighter:"),
            st.Page("pages/sentences.py", title="Label sentences", icon=":material/format_list_bulleted:"),
            st.Page("pages/claims.py", title="Judge claims", icon=":material/fact_check:"),
            st.Page("pages/triplets.py", title="Judge triplets", icon=":material/account_tree:"),
            st.Page("pages/rate.py", title="Rate detector outputs", icon=":material/star_rate:"),
            st.Page("pages/rating_tasks.py", title="Rating tasks", icon=":material/rule:"),
        ],
        "Inspect": [
            st.Page("pages/compare.py", title="Compare detectors", icon=":material/compare:"),
            st.Page("pages/failures.py", title="Failure cases", icon=":material/bug_report:"),
        ],
        "Measure": [
            st.Page("pages/metrics.py", title="Metrics", icon=":material/leaderboard:"),
            st.Page("pages/correlation.py", title="Correlation", icon=":material/scatter_plot:"),
            st.Page("pages/agreement.py", title="Agreement", icon=":material/group:"),
            st.Page("pages/presenter.py", title="Presenter mode", icon=":material/slideshow:"),
        ],
    },
    expanded=True,
)
navigation.run()
