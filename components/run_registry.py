"""The server's one registry of detector runs (see :mod:`detectors.background`)."""

from __future__ import annotations

import streamlit as st

from detectors.background import RunRegistry


@st.cache_resource(show_spinner=False)
def run_registry() -> RunRegistry:
    """Shared by every session of this server process, so a run outlives the tab that started it."""
    return RunRegistry()
