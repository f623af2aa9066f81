"""The Score responses page (0-6 and hallucination yes/no, saved at once, undoable) and the MMHal-Bench
table it feeds on the Metrics page, through AppTest on a real SQLite store."""

from __future__ import annotations

import json

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from db.access import OPERATOR
from db.engine import make_engine
from db.repositories.annotations import item_annotations
from db.repositories.items import get_item
from db.repositories.label_sets import list_label_sets
from db.repositories.queue import item_status
from db.transfer import import_file, import_predictions
from formats.base import ReadOptions
from tests.formats.mmhal_sample import IDS, sample_bytes
from tests.pages.demo_store import APP


@pytest.fixture
def store(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    engine = make_engine(sqlite_url)
    assert import_file(
        engine,
        sample_bytes(),
        source="mmhal.json",
        format_name="mmhal",
        options=ReadOptions(dataset="mm"),
        actor=OPERATOR,
    ).ok
    gold = {IDS[0]: 0, IDS[1]: 6, IDS[2]: 3, IDS[3]: 3}
    assert import_predictions(
        engine,
        json.dumps(gold).encode(),
        source="gold.json",
        dataset="mm",
        detector="gold",
        format_name="mmhal-ratings",
        options=ReadOptions(label_set_kind="gold"),
        actor=OPERATOR,
    ).ok
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    st.cache_resource.clear()
    st.cache_data.clear()
    return sqlite_url


def _open(page: str, **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": "mm", "user": "tester"})
    at.run()
    at.query_params.update(params)
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _click(at: AppTest, key: str) -> None:
    next(b for b in at.button if b.key == key).click().run()
    assert not at.exception, at.exception


def _button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def _mine(url: str, external_id: str):
    engine = make_engine(url)
    item = get_item(engine, 1, external_id)
    own = next(v for v in list_label_sets(engine, 1) if v.kind == "human" and v.name == "tester")
    return item_annotations(engine, item.id, [own.id])[own.id].response_score, item_status(
        engine, own.id, item.id, "response_scores"
    )


def test_score_flag_note_undo_and_done(store: str) -> None:
    at = _open("app_pages/score_responses.py", item=IDS[2])
    html = " ".join(h.proto.body for h in at.get("html"))
    # The answer is shown literally (the page's own key script aside, which holds no text of the item).
    assert "&lt;script&gt;x()&lt;/script&gt;" in html and "<script>x()" not in html
    assert any("Image contents: Car, Road" in c.value for c in at.caption)
    assert _button(at, "score_2").label == "2 · very informative, with hallucination"
    assert _button(at, "score_flag_H").disabled  # no flag before a score
    _click(at, "score_4")
    score, status = _mine(store, IDS[2])
    assert (score.score, score.hallucination, score.scale_max) == (4.0, None, 6)
    assert status.status == "done"
    assert _button(at, "score_4").proto.type == "primary"
    _click(at, "score_flag_H")
    _click(at, "score_1")  # a new score keeps the flag
    _note(at).input("says TAXI; nothing is written").run()
    score, _ = _mine(store, IDS[2])
    assert (score.score, score.hallucination, score.rationale) == (1.0, True, "says TAXI; nothing is written")
    _click(at, "score_flag_H")  # clicked again: left unsaid
    assert _mine(store, IDS[2])[0].hallucination is None
    _click(at, "frame_undo")
    assert _mine(store, IDS[2])[0].hallucination is True
    assert any("undid" in c.value for c in at.caption)


def _contradiction(at: AppTest) -> list[str]:
    return [w.value for w in at.warning if "check one of them" in w.value]


def test_a_flag_that_contradicts_the_rubric_of_the_score_is_pointed_out(store: str) -> None:
    """4 reads "no hallucination" in MMHal's rubric: flagged as hallucinating too, one of them slipped."""
    at = _open("app_pages/score_responses.py", item=IDS[2])
    _click(at, "score_4")
    _click(at, "score_flag_G")
    assert _contradiction(at) == []
    _click(at, "score_flag_H")
    assert _contradiction(at) == [
        'Score 4 reads "somewhat informative, no hallucination", but the response is flagged as '
        "hallucinating: check one of them. The hallucination rate counts scores below 3; agreement on "
        "flags counts the flag."
    ]
    assert _mine(store, IDS[2])[0].hallucination is True  # kept as said: the rater decides
    _click(at, "score_2")  # the score now agrees with the flag
    assert _contradiction(at) == []
    _click(at, "score_flag_G")
    assert "flagged as not hallucinating" in _contradiction(at)[0]


@pytest.mark.parametrize(("score", "flag"), [(6, "H"), (5, "H"), (3, "H"), (2, "G"), (1, "G"), (0, "G")])
def test_every_score_whose_rubric_meaning_the_flag_contradicts_is_pointed_out(
    store: str, score: int, flag: str
) -> None:
    """A score of 3 to 6 means "no hallucination" in MMHal's rubric, 0 to 2 "with hallucination": the
    warning follows each score's own words, shown above the score buttons (below the flags, it sat
    under the fold). The receipt names the scale, not "6 of 6"."""
    at = _open("app_pages/score_responses.py", item=IDS[2])
    _click(at, f"score_{score}")
    _click(at, f"score_flag_{flag}")
    said = "hallucinating" if flag == "H" else "not hallucinating"
    assert [
        w.startswith(f"Score {score} reads") and f"flagged as {said}:" in w for w in _contradiction(at)
    ] == [True]
    warning = next(w for w in at.warning if "check one of them" in w.value)
    first_score = next(b for b in at.button if b.key == "score_6")
    order = [e for e in at.main if e is warning or e is first_score]
    assert order == [warning, first_score]
    what = "hallucination" if flag == "H" else "no hallucination"
    assert any(
        f"✓ Saved · response scored {score} on the 0–6 scale, {what} · " in c.value for c in at.caption
    )


def test_the_rubric_says_which_scores_mean_a_hallucination() -> None:
    from formats.mmhal import RUBRIC_HALLUCINATES

    assert [p for p, hallucinates in sorted(RUBRIC_HALLUCINATES.items()) if hallucinates] == [0, 1, 2]


def _note(at: AppTest):
    return next(t for t in at.text_input if t.label == "Note (optional)")


def test_after_undo_the_note_box_shows_the_note_the_rating_has(store: str) -> None:
    """Undo took a note (or the whole score) back, but the box still showed the note, as if saved; scored
    again, the response had no note while the box said it had."""
    at = _open("app_pages/score_responses.py", item=IDS[2])
    _click(at, "score_4")
    _note(at).input("says TAXI").run()
    assert _mine(store, IDS[2])[0].rationale == "says TAXI"
    _click(at, "frame_undo")  # the note goes, the score stays
    assert _mine(store, IDS[2])[0].rationale is None
    assert _note(at).value == ""
    _note(at).input("says TAXI").run()
    _click(at, "frame_undo")
    _click(at, "frame_undo")  # the score goes too
    assert _mine(store, IDS[2])[0] is None
    assert (_note(at).value, _note(at).disabled) == ("", True)
    _click(at, "score_3")
    assert _mine(store, IDS[2])[0].rationale is None
    assert (_note(at).value, _note(at).disabled) == ("", False)


def test_nobody_elses_score_is_shown(store: str) -> None:
    at = _open("app_pages/score_responses.py", item=IDS[0])
    assert not any(b.proto.type == "primary" for b in at.button if b.key.startswith("score_"))


def test_metrics_shows_mmhal_scores_and_the_judge_against_gold(store: str) -> None:
    at = _open("app_pages/paper_metrics.py")
    assert at.button_group[0].options == ["MMHal-Bench"]
    titles = [m.value for m in at.markdown if m.value.startswith("**")]
    scores = at.dataframe[
        titles.index("**Average score (0-6) overall and per question type, and hallucination rate**")
    ].value
    assert list(scores["rater"]) == ["gold", "gpt-4"]
    assert list(scores["Overall score"]) == pytest.approx([3.0, 8 / 3])
    assert list(scores["attribute"]) == pytest.approx([1.5, 1.5])
    against = at.dataframe[titles.index("**Raters against gold on the same responses**")].value
    assert list(against["rater"]) == ["gpt-4"]
    # The rater's own scores appear beside them once saved on the Score responses page.
    page = _open("app_pages/score_responses.py", item=IDS[0])
    _click(page, "score_6")
    at = _open("app_pages/paper_metrics.py")
    scores = at.dataframe[
        titles.index("**Average score (0-6) overall and per question type, and hallucination rate**")
    ].value
    assert list(scores["rater"]) == ["gold", "tester", "gpt-4"]


def test_the_item_page_lists_every_rating_of_the_response(store: str) -> None:
    at = _open("app_pages/item.py", item=IDS[0])
    assert any(h.value == "Ratings of the response" for h in at.subheader)
    (table,) = [d.value for d in at.dataframe if "rationale" in d.value.columns]
    assert list(table["by"]) == ["Gold", "Detector · gpt-4"]
    assert list(table["score"]) == [0.0, 1.0] and list(table["hallucination"]) == ["", "yes"]


def test_an_annotator_scores_the_items_assigned_to_them_for_ratings(team_db: str) -> None:
    """Scoring responses is rating work: assigned as the ratings task, which the Team page offers and
    every score's write checks. Its queue looked for a task of its own name that nothing could assign,
    so an annotator was always told nothing was assigned to them."""
    from tests.pages.team_store import assign, signed_in

    assign(team_db, "alice", "ratings", "demo-004", "demo-009")
    at = signed_in("alice")
    at.switch_page("app_pages/score_responses.py").run()
    assert not at.exception, at.exception
    assert not any("assigned to you for this task yet" in i.value for i in at.info)
    assert any("Item **demo-004**" in c.value and "2 assigned to you" in c.value for c in at.caption)


def test_a_response_scored_before_is_not_done_by_opening_it(store: str) -> None:
    """A score saved elsewhere (an import, another tab): opening the page marked the item done, with an
    "item done" in the edit log. It is done by the annotator's score here, or by "Item done"."""
    from sqlalchemy import func, select

    from db import models as m
    from db.engine import read_session
    from db.repositories import labeling
    from db.repositories.annotators import get_or_create_annotator
    from db.repositories.label_sets import human_label_set

    engine = make_engine(store)
    who = get_or_create_annotator(engine, "tester").id
    own = human_label_set(engine, 1, who).id
    labeling.set_response_score(engine, own, get_item(engine, 1, IDS[2]).id, 4.0, who)

    def writes() -> tuple[int | None, int | None]:
        with read_session(engine) as session:
            return (
                session.scalar(select(func.count()).select_from(m.ItemStatus)),
                session.scalar(select(func.count()).select_from(m.EditLog)),
            )

    before = writes()
    at = _open("app_pages/score_responses.py", item=IDS[2])
    at.run()
    assert writes() == before
    assert _mine(store, IDS[2])[1] is None
    assert any("Press **D** (Item done)" in s.value for s in at.success)
    _click(at, "frame_done")
    assert _mine(store, IDS[2])[1].status == "done"
    assert any("This response is scored. Press **N**" in s.value for s in at.success)
    engine.dispose()


def test_a_new_score_or_flag_on_a_response_scored_before_leaves_it_for_item_done(store: str) -> None:
    """A response scored elsewhere, then one key here (a score, a flag): the item was marked done, with
    an "item done" in the log, though the page said to press D. Only the first score completes it."""
    from db.repositories import labeling
    from db.repositories.annotators import get_or_create_annotator
    from db.repositories.label_sets import human_label_set

    engine = make_engine(store)
    who = get_or_create_annotator(engine, "tester").id
    own = human_label_set(engine, 1, who).id
    labeling.set_response_score(engine, own, get_item(engine, 1, IDS[2]).id, 4.0, who)
    engine.dispose()
    at = _open("app_pages/score_responses.py", item=IDS[2])
    for key in ("score_5", "score_flag_G"):
        _click(at, key)
        assert any("✓ Saved" in c.value for c in at.caption)
        assert _mine(store, IDS[2])[1] is None
        assert any("This response is scored. Press **D** (Item done)" in s.value for s in at.success)
    _click(at, "frame_done")
    assert _mine(store, IDS[2])[1].status == "done"
    at = _open("app_pages/score_responses.py", item=IDS[3])  # unscored: the first score completes it
    _click(at, "score_2")
    assert _mine(store, IDS[3])[1].status == "done"


def test_scoring_and_rating_pages_and_the_team_page_count_the_ratings_task_alike(team_db: str) -> None:
    """Alice scored demo-004: the scoring page said "1 / 2 done" while the Team page (and the progress
    command) counted 0 for her on the ratings task, and the Rate detector outputs page "0 / 2 done". The
    demo has campaigns, so the task has an item once every campaign rated it; both rating pages now say
    their own count is this page's, and the task's beside it, which the Team page matches."""
    from db.repositories.rating_tasks import list_rating_tasks
    from tests.pages.team_store import USERS, assign, signed_in

    assign(team_db, "alice", "ratings", "demo-004", "demo-009")

    def bar(page: str, **params: str) -> str:
        at = signed_in("alice", **params)
        at.switch_page(page).run()
        assert not at.exception, at.exception
        return at.get("progress")[0].proto.text

    def team_done() -> int:
        at = signed_in(USERS["admin"])
        at.switch_page("app_pages/team.py").run()
        at.selectbox(key="team_progress_task").set_value("ratings").run()
        assert not at.exception, at.exception
        per_annotator = at.dataframe[-2].value
        return int(per_annotator.set_index("annotator").loc["alice", "done"])

    at = signed_in("alice", item="demo-004")
    at.switch_page("app_pages/score_responses.py").run()
    next(b for b in at.button if b.key == "score_4").click().run()
    assert not at.exception, at.exception
    text = at.get("progress")[0].proto.text
    assert text == "1 / 2 done on this page · ratings task: 0 / 2 done", text
    # The demo has one campaign: the Rate page's count is the task's, said once.
    assert bar("app_pages/rate.py", item="demo-004") == "0 / 2 done"
    assert team_done() == 0

    # Rated in every campaign as well, on the Rate page: the item is done on the task, everywhere.
    engine = make_engine(team_db)
    campaigns = [campaign.id for campaign in list_rating_tasks(engine, 1)]
    engine.dispose()
    assert campaigns
    for campaign in campaigns:
        at = signed_in("alice", item="demo-004", task=str(campaign))
        at.switch_page("app_pages/rate.py").run()
        for _ in range(20):  # one score (or judgment) per segment, the cursor moving on by itself
            if any("Everything on this item is rated" in s.value for s in at.success):
                break
            keys = [b.key for b in at.button if b.key.startswith(("rate_now_", "rate_nothing_True"))]
            next(b for b in at.button if b.key == keys[-1]).click().run()
            assert not at.exception, at.exception
        else:
            raise AssertionError("the item was never rated whole")
    assert bar("app_pages/score_responses.py", item="demo-004") == (
        "1 / 2 done on this page · ratings task: 1 / 2 done"
    )
    assert bar("app_pages/rate.py", item="demo-004") == "1 / 2 done"
    assert team_done() == 1
