"""The page address module on a small script of its own (AppTest): an address value that names no option is
said once, in the same words for one choice and many, literally, and for as long as the choice is the one
shown in its place."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from components.page_address import unknown_values
from render.literal_text import literal

PAPERS = ["MHALO", "AlignBench"]
DETECTORS = ["cautious", "eager"]


def _script() -> None:
    """A page with a one-choice and a many-choice widget kept in its address, run as ``app.py`` runs a page
    (``begin_run`` first, so the address is read when it opens)."""
    import streamlit as st

    from components.page_address import begin_run, keep_many, keep_one, many_choices, one_choice

    papers, detectors = ["MHALO", "AlignBench"], ["cautious", "eager"]  # the script is run from its source
    begin_run("page")
    one_choice("view", papers, "MHALO", called="paper")
    view = st.segmented_control("Paper", papers, required=True, key="view") or "MHALO"
    keep_one("view", view, "MHALO")
    many_choices("detector", detectors, called="detector")
    keep_many("detector", st.multiselect("Detector", detectors, key="detector"))


def _open(**address: str | list[str]) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=30)
    at.query_params.update(address)
    at.run()
    assert not at.exception, at.exception
    return at


PAPER_SAID = (
    "The link asked for paper 'nonsense', which is not one of 'MHALO', 'AlignBench'; showing 'MHALO' instead."
)
GHOST_SAID = "The link asked for detector 'ghost', which is not one of 'cautious', 'eager'; it is left out."


def test_unknown_values_are_said_not_dropped_unseen() -> None:
    at = _open(view="nonsense", detector=["eager", "ghost"])
    assert [w.value for w in at.warning] == [literal(PAPER_SAID), literal(GHOST_SAID)]
    assert at.segmented_control(key="view").value == "MHALO"
    assert at.multiselect(key="detector").value == ["eager"]
    assert "view" not in at.query_params and at.query_params["detector"] == "eager"


def test_the_notice_stays_while_the_choice_does_and_is_said_once() -> None:
    """A rerun (a watcher's, a cookie's confirmation) keeps the notice; the older address brought back
    does not say it twice; the reader's own choice ends it, for that choice only."""
    at = _open(view="nonsense", detector=["ghost"])
    at.run()
    assert len(at.warning) == 2
    at.query_params.update({"view": "nonsense", "detector": ["ghost"]})  # an older address, brought back
    at.run()
    assert [w.value for w in at.warning] == [
        literal(PAPER_SAID),
        literal(
            "The link asked for detector 'ghost', which is not one of 'cautious', 'eager'; it is left out."
        ),
    ]
    at.segmented_control(key="view").set_value("AlignBench").run()
    assert [w.value for w in at.warning] == [literal(GHOST_SAID)]
    at.multiselect(key="detector").set_value(["cautious"]).run()
    assert not at.warning
    assert at.query_params["view"] == "AlignBench" and at.query_params["detector"] == "cautious"


def test_a_known_address_says_nothing() -> None:
    at = _open(view="AlignBench", detector=["cautious", "eager"])
    assert not at.warning
    assert at.multiselect(key="detector").value == DETECTORS


def test_the_values_are_shown_literally() -> None:
    """The values come from a URL: Markdown, a link or an image in them stays their characters."""
    hostile = "**bold** [x](https://e.vil) ![i](https://e.vil/i.png) <b>tag</b> :red[red]"
    at = _open(view=hostile)
    said = unknown_values("paper", [hostile], PAPERS, "showing 'MHALO' instead")
    assert [w.value for w in at.warning] == [literal(said)]
    assert said.startswith(f"The link asked for paper {hostile!r}, which is not one of")


def test_the_wording_names_a_few_options_and_counts_the_rest() -> None:
    offered = [f"d{k}" for k in range(11)]
    assert unknown_values("detector", ["x", "y\n"], offered, "they are left out") == (
        "The link asked for detector 'x', 'y\\n', which are not one of 'd0', 'd1', 'd2', 'd3', 'd4', 'd5', "
        "'d6', 'd7' (or 3 more); they are left out."
    )
    assert unknown_values("subset", ["a"], [], "it is left out") == (
        "The link asked for subset 'a', which is not offered here (there is no subset); it is left out."
    )


def test_back_or_forward_to_an_address_without_a_choice_shows_its_default(monkeypatch) -> None:
    """A choice at its default is left out of the address; stepping back to such an address kept the
    choice shown since (the widget's), so back did not undo it."""
    from components import page_address

    at = _open(view="AlignBench", detector=["eager"])
    at.multiselect(key="detector").set_value(["eager", "cautious"]).run()
    monkeypatch.setattr(page_address, "back_or_forward", lambda: True, raising=False)
    at.query_params.clear()  # the address the back button went to: both choices at their defaults
    at.run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="view").value == "MHALO"
    assert at.multiselect(key="detector").value == []
    monkeypatch.undo()
    at.query_params.update({"view": "AlignBench"})  # and forward again
    monkeypatch.setattr(page_address, "back_or_forward", lambda: True, raising=False)
    at.run()
    assert at.segmented_control(key="view").value == "AlignBench"
