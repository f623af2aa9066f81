"""Spanlight entry point: the navigation between the user's tasks.

Run with ``make run`` (or ``streamlit run app.py``). Pages live in ``app_pages/`` and each begins with the
shared setup (``components.page_setup.setup_page``) itself, because Streamlit may serve a page URL
before this file has run; this file therefore only routes.
"""

from __future__ import annotations

import streamlit as st

navigation = st.navigation(
    {
        "Data": [
            st.Page("app_pages/home.py", title="Datasets", icon=":material/dataset:", default=True),
            st.Page("app_pages/browse.py", title="Browse items", icon=":material/table_rows:"),
            st.Page("app_pages/item.py", title="Item", icon=":material/image:"),
            st.Page("app_pages/import_data.py", title="Import", icon=":material/upload:"),
            st.Page("app_pages/export_data.py", title="Export", icon=":material/download:"),
        ],
        "Annotate": [
            st.Page("app_pages/spans.py", title="Mark spans", icon=":material/format_ink_highlighter:"),
            st.Page(
                "app_pages/sentences.py", title="Label sentences", icon=":material/format_list_bulleted:"
            ),
            st.Page("app_pages/claims.py", title="Judge claims", icon=":material/fact_check:"),
            st.Page("app_pages/triplets.py", title="Judge triplets", icon=":material/account_tree:"),
            st.Page("app_pages/score_responses.py", title="Score responses", icon=":material/grade:"),
            st.Page("app_pages/rate.py", title="Rate detector outputs", icon=":material/star_rate:"),
            st.Page("app_pages/rating_tasks.py", title="Rating tasks", icon=":material/rule:"),
        ],
        "Inspect": [
            st.Page("app_pages/compare.py", title="Compare detectors", icon=":material/compare:"),
            st.Page("app_pages/failures.py", title="Failure cases", icon=":material/bug_report:"),
        ],
        "Measure": [
            st.Page(
                "app_pages/paper_metrics.py",
                title="Metrics",
                url_path="metrics",
                icon=":material/leaderboard:",
            ),
            st.Page("app_pages/correlation.py", title="Correlation", icon=":material/scatter_plot:"),
            st.Page("app_pages/agreement.py", title="Agreement", icon=":material/group:"),
            st.Page("app_pages/presenter.py", title="Presenter mode", icon=":material/slideshow:"),
        ],
        "Team": [
            st.Page("app_pages/team.py", title="Team", icon=":material/groups:"),
        ],
    },
    expanded=True,
)
navigation.run()
