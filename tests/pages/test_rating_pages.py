"""The rating pages: rate every segment by button, nothing-flagged items, blind raters, gold after
rating, undo, one queue per task; create tasks from the presets and a custom scale; the summary."""

from __future__ import annotations

import pytest
from sqlalchemy import delete
from streamlit.testing.v1 import AppTest

from db import models as m
from db.engine import make_engine, write_session
from db.repositories.annotators import get_or_create_annotator
from db.repositories.items import get_item
from db.repositories.rating_tasks import detector_segments, list_rating_tasks, my_ratings
from tests.pages.demo_store import APP, DEMO, demo_store


@pytest.fixture
def store(sqlite_url, tmp_path, monkeypatch) -> str:
    return demo_store(sqlite_url, tmp_path, monkeypatch)


def _open(page: str = "rate", user: str = "tester", **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"dataset": DEMO, "user": user})
    at.run()
    at.query_params.update(params)  # after the home page, which forwards only dataset/item/user links
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def _button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def _mine(url: str, external_id: str, task_name: str = "MHALO segment ratings", user: str = "tester"):
    engine = make_engine(url)
    task = next(t for t in list_rating_tasks(engine, 1) if t.name == task_name)
    item = get_item(engine, 1, external_id)
    who = get_or_create_annotator(engine, user)
    return task, item, my_ratings(engine, task.id, item.id, who.id)


def test_rate_every_segment_then_gold_undo_and_next(store: str) -> None:
    at = _open(item="demo-001")
    task, item, mine = _mine(store, "demo-001")
    assert mine == {}  # rater-1..3 rated this item, but a rater only ever sees their own scores
    segments = detector_segments(make_engine(store), task)["demo-001"]
    assert len(segments) >= 2
    assert not any(b.proto.type == "primary" for b in at.button if b.key.startswith("rate_"))
    assert at.toggle(key="rate_show_gold").disabled
    assert any("Completely accurate and fine-grained" in h.proto.body for h in at.get("html"))
    for score in [4, 2, 1, 3][: len(segments)]:
        _button(at, f"rate_now_{score}").click().run()  # the current segment's buttons; it moves on
        assert not at.exception
    _, _, mine = _mine(store, "demo-001")
    assert {k: v.score for k, v in mine.items()} == dict(zip(segments, [4.0, 2.0, 1.0, 3.0], strict=False))
    assert any("Everything on this item is rated" in s.value for s in at.success)
    assert any("✓ Saved" in c.value for c in at.caption)
    assert not at.toggle(key="rate_show_gold").disabled
    at.toggle(key="rate_show_gold").set_value(True).run()
    assert any("Gold spans" in md.value for md in at.markdown)

    _button(at, "frame_undo").click().run()  # undo reaches ratings too, and reopens the item
    _, _, mine = _mine(store, "demo-001")
    assert len(mine) == len(segments) - 1
    assert not any("Everything on this item is rated" in s.value for s in at.success)
    assert not any("Gold spans" in md.value for md in at.markdown)
    _button(at, "frame_next").click().run()
    assert at.query_params["item"] == "demo-002"
    assert at.query_params["task"] == str(task.id)


def test_the_current_segment_moves_with_j_and_k(store: str) -> None:
    at = _open(item="demo-001")
    task, item, _ = _mine(store, "demo-001")
    assert any(md.value.startswith("▶ **Segment 1 of") for md in at.markdown)
    _button(at, "rate_next").click().run()
    assert any(md.value.startswith("▶ **Segment 2 of") for md in at.markdown)
    _button(at, "rate_prev").click().run()
    _button(at, f"rate_{task.id}_{item.id}_1_2").click().run()  # a mouse click scores that segment
    assert any(md.value.startswith("▶ **Segment 3 of") for md in at.markdown)
    _button(at, "rate_prev").click().run()
    _button(at, "rate_prev").click().run()
    _button(at, "rate_now_3").click().run()  # the keyed buttons score the current one, then move on
    assert any(md.value.startswith("▶ **Segment 2 of") for md in at.markdown)
    _, _, mine = _mine(store, "demo-001")
    assert [mine[s].score for s in sorted(mine)] == [3.0, 2.0]


def test_nothing_flagged_is_judged_right_or_wrong(store: str) -> None:
    engine = make_engine(store)
    task = list_rating_tasks(engine, 1)[0]
    silent = next(ext for ext, segments in detector_segments(engine, task).items() if not segments)
    at = _open(item=silent)
    assert any("flagged nothing" in md.value for md in at.markdown)
    _, item, _ = _mine(store, silent)
    _button(at, "rate_nothing_False").click().run()
    _, _, mine = _mine(store, silent)
    assert (mine[None].score, mine[None].nothing_flagged_correct) == (None, False)
    assert any("Everything on this item is rated" in s.value for s in at.success)


def test_new_tasks_from_presets_and_a_custom_scale_each_with_their_own_queue(store: str) -> None:
    at = _open("rating_tasks")
    assert not at.exception
    at.selectbox(key="rating_tasks_pick_1").set_value(0).run()
    at.text_input(key="rt_0_name").input("Whole responses").run()
    at.radio(key="rt_0_preset").set_value("tri-he").run()
    assert any("No hallucination exists in the generated response." in h.proto.body for h in at.get("html"))
    _button(at, "rt_save").click().run()
    assert not at.exception
    assert any("Created rating task" in s.value for s in at.success)
    engine = make_engine(store)
    tri_he = next(t for t in list_rating_tasks(engine, 1) if t.name == "Whole responses")
    assert (tri_he.granularity, tri_he.scale_min, tri_he.scale_max) == ("response", 1, 5)

    at.selectbox(key="rating_tasks_pick_1").set_value(0).run()
    at.text_input(key="rt_0_name").input("Yes / partly / no").run()
    at.radio(key="rt_0_preset").set_value("custom").run()
    at.number_input(key="rt_0_min").set_value(0).run()
    at.number_input(key="rt_0_max").set_value(2).run()
    at.text_area(key="rt_0_rubric_0").input("wrong").run()
    at.text_area(key="rt_0_rubric_2").input("right").run()
    _button(at, "rt_save").click().run()
    custom = next(t for t in list_rating_tasks(engine, 1) if t.name == "Yes / partly / no")
    assert (custom.granularity, custom.points, custom.rubric) == (
        "segment",
        [0, 1, 2],
        {"0": "wrong", "2": "right"},
    )

    at = _open(item="demo-001", task=str(tri_he.id))
    _, item, _ = _mine(store, "demo-001", "Whole responses")
    assert any("**The whole response**" in md.value for md in at.markdown)
    assert [b.key for b in at.button if b.key.startswith("rate_")] == [f"rate_now_{p}" for p in range(1, 6)]
    _button(at, "rate_now_5").click().run()
    _, _, mine = _mine(store, "demo-001", "Whole responses")
    assert mine[None].score == 5.0
    assert any("1 / 60 done" in p.proto.text for p in at.get("progress"))  # this task's own queue
    at.selectbox(key="rating_task_1").set_value(1).run()  # back to the MHALO task: its queue is untouched
    assert at.query_params["task"] == "1"
    assert any("0 / 60 done" in p.proto.text for p in at.get("progress"))


def test_summary_shows_raters_items_and_agreement(store: str) -> None:
    at = _open("rating_tasks")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Ratings"] == "159" and metrics["Raters"] == "3"
    alpha = float(metrics["Krippendorff's α (interval)"])
    assert 0.5 < alpha <= 1.0
    raters, items = at.dataframe[0].value, at.dataframe[1].value
    assert raters["Rater"].tolist() == ["rater-1", "rater-2", "rater-3"]
    assert {"Item", "mean · rater-1", "Item score", "Raters"} <= set(items.columns)
    assert items["Item score"].between(1, 4).all()
    assert any("flagged nothing" in c.value for c in at.caption)
    assert [b.label for b in at.get("download_button")] == ["Export CSV", "Export JSONL"]


def test_changing_a_rated_task_keeps_its_scale(store: str) -> None:
    at = _open("rating_tasks")
    assert at.radio(key="rt_1_preset").disabled
    at.text_input(key="rt_1_name").input("MHALO, renamed").run()
    _button(at, "rt_save").click().run()
    assert any(s.value == "Saved." for s in at.success)
    assert list_rating_tasks(make_engine(store), 1)[0].name == "MHALO, renamed"


def test_a_dataset_without_tasks_points_to_the_task_page(store: str) -> None:
    engine = make_engine(store)
    with write_session(engine) as session:
        session.execute(delete(m.RatingTask))
    at = _open()
    assert any("no rating task" in i.value for i in at.info)
