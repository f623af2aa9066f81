"""Overridden labels in team mode on a blind dataset: gold shows an annotator where it overrode them,
but never on an item still open in their queue, where it would give them the answers they have yet
to give."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from sqlalchemy import Engine, event
from streamlit.proto.Block_pb2 import Block as BlockProto
from streamlit.testing.v1 import AppTest

from db.access import OPERATOR, Actor, GoldShown
from db.engine import make_engine
from db.models import TASKS
from db.repositories import labeling
from db.repositories.adjudication import promote_item
from db.repositories.annotations import item_annotations
from db.repositories.annotators import find_annotator
from db.repositories.assignments import unassign
from db.repositories.items import get_item
from db.repositories.label_sets import gold_label_set, human_label_set, list_label_sets
from tests.pages.team_store import assign, set_dataset_settings, signed_in

ITEM = "demo-007"  # sentences with gold, labeled by neither alice nor bob in the demo


def _promote_as_it_stands(url: str) -> list[str]:
    """A reviewer promotes the item's sentences as gold holds them; the gold labels, by sentence."""
    engine = make_engine(url)
    item = get_item(engine, 1, ITEM)
    gold = gold_label_set(engine, 1)
    reviewer = find_annotator(engine, "rev")
    assert item is not None and gold is not None and reviewer is not None
    labels = {
        index: (label.label, label.error_type)
        for index, label in item_annotations(engine, item.id, [gold.id])[gold.id].sentence_labels.items()
    }
    promote_item(
        engine,
        1,
        item.id,
        "sentences",
        labels,
        method="edit",
        sources=[],
        actor=Actor(reviewer.id, reviewer.name, "reviewer"),
    )
    engine.dispose()
    return [labels[index][0] for index in sorted(labels)]


def _label_as_alice(url: str, labels: list[str]) -> None:
    engine = make_engine(url)
    item = get_item(engine, 1, ITEM)
    alice = find_annotator(engine, "alice")
    assert item is not None and alice is not None
    own = next(ls for ls in list_label_sets(engine, 1, kind="human") if ls.annotator == "alice")
    for index, label in enumerate(labels):
        labeling.set_sentence_label(engine, own.id, item.id, index, label, alice.id, override=True)
    # As the page does after each label: the item is done once every sentence is labeled.
    complete = len(labels) == len(item.sentences)
    labeling.sync_done(engine, own.id, item.id, "sentences", complete, alice.id)
    engine.dispose()


def _overrides(name: str) -> AppTest:
    at = signed_in(name)
    at.switch_page("app_pages/overrides.py").run()
    assert not at.exception, at.exception
    return at


def test_gold_of_an_item_still_open_in_the_annotators_queue_stays_hidden(team_db: str) -> None:
    """She labeled one sentence of an item promoted before she started, and the page gave her gold's
    label of it: the answer key of an item she was still labeling."""
    assign(team_db, "alice", "sentences", ITEM)
    gold = _promote_as_it_stands(team_db)
    opposite = ["correct" if label != "correct" else "incorrect" for label in gold]
    _label_as_alice(team_db, opposite[:1])  # one sentence of several: the item is still open

    at = _overrides("alice")
    assert not at.dataframe, at.dataframe[0].value
    # Not that gold agrees with her (it does not): that the item is held back until she finishes it.
    assert not at.success
    assert [i.value for i in at.info] == [
        "1 promoted item(s) you have still to finish (on any of your tasks) are not compared here: gold "
        "there would answer what you have left to label. They appear once you finish them."
    ]

    # Skipped is not done: the item waits in her queue for her to come back to it.
    engine = make_engine(team_db)
    item, alice = get_item(engine, 1, ITEM), find_annotator(engine, "alice")
    assert item is not None and alice is not None
    own = next(ls for ls in list_label_sets(engine, 1, kind="human") if ls.annotator == "alice")
    labeling.set_item_status(engine, own.id, item.id, "sentences", "skipped", alice.id)
    engine.dispose()
    assert not _overrides("alice").dataframe

    _label_as_alice(team_db, opposite)  # every sentence labeled: the item is done
    at = _overrides("alice")
    frame = at.dataframe[0].value
    assert list(frame["item"]) == [ITEM] * len(gold)
    assert [said.split(" ")[0] for said in frame["gold says"]] == gold


def test_a_dataset_that_is_not_blind_shows_gold_of_open_items_as_before(team_db: str) -> None:
    """Its annotators see gold anyway (the Item page offers it), so nothing waits for the item's end."""
    set_dataset_settings(team_db, blind=False)
    assign(team_db, "alice", "sentences", ITEM)
    gold = _promote_as_it_stands(team_db)
    _label_as_alice(team_db, ["correct" if gold[0] != "correct" else "incorrect"])
    assert list(_overrides("alice").dataframe[0].value["unit"]) == ["sentence 1"]


GOLD_SHOWN = re.compile(
    r"Gold for this item was shown to you on \d{4}-\d\d-\d\d \d\d:\d\d UTC \(Overridden labels page\); "
    r"your labels on it are kept as they were\."
)
SENTENCE_KEYS = ("sentence_now_correct", "sentence_now_incorrect", "sentence_now_unknown")


def _sentences_page(name: str) -> AppTest:
    at = signed_in(name, item=ITEM)
    at.query_params.update(item=ITEM)
    at.switch_page("app_pages/sentences.py").run()
    assert not at.exception, at.exception
    return at


def test_once_gold_was_shown_the_annotation_page_keeps_her_labels_as_they_were(team_db: str) -> None:
    """The page showed her gold of the item she had finished, and she could go back to it on Sentences
    and relabel every sentence as gold said: her labels then agreed with gold, and with whoever else
    gold was made from, and nothing told."""
    assign(team_db, "alice", "sentences", ITEM)
    gold = _promote_as_it_stands(team_db)
    _label_as_alice(team_db, ["correct" if label != "correct" else "incorrect" for label in gold])
    before = _sentences_page("alice")
    assert not [w for w in before.warning if GOLD_SHOWN.fullmatch(w.value)]
    assert not next(b for b in before.button if b.key == SENTENCE_KEYS[0]).disabled

    at = _overrides("alice")
    assert list(at.dataframe[0].value["item"]) == [ITEM] * len(gold)
    assert any("your labels on them are kept as they were" in c.value for c in at.caption)

    page = _sentences_page("alice")
    # One line, said literally: no Markdown or HTML turns any of it into something else.
    (said,) = [w.value for w in page.warning if "Gold for this item" in w.value]
    assert GOLD_SHOWN.fullmatch(said), said
    for key in (*SENTENCE_KEYS, "frame_undo"):
        assert next(b for b in page.button if b.key == key).disabled, key
    # Nor the error type of a sentence she marked incorrect: a choice there showed as made, unsaved.
    boxes = [box for box in page.selectbox if box.label == "Error type"]
    assert boxes and all(box.disabled for box in boxes)
    # Not only the page: the store refuses her label too, with the same reason.
    engine = make_engine(team_db)
    item, alice = get_item(engine, 1, ITEM), find_annotator(engine, "alice")
    assert item is not None and alice is not None
    own = next(ls for ls in list_label_sets(engine, 1, kind="human") if ls.annotator == "alice")
    with pytest.raises(GoldShown, match=GOLD_SHOWN.pattern):
        labeling.set_sentence_label(engine, own.id, item.id, 0, gold[0], alice.id, override=True)
    engine.dispose()

    # A reviewer on the same item labels on: gold is theirs to see anyway.
    assert not next(b for b in _sentences_page("rev").button if b.key == SENTENCE_KEYS[0]).disabled


def test_a_reviewer_shown_the_overrides_page_keeps_editing(team_db: str) -> None:
    """Reviewers see gold everywhere; the page records nothing for them and locks nothing."""
    gold = _promote_as_it_stands(team_db)
    engine = make_engine(team_db)
    item, reviewer = get_item(engine, 1, ITEM), find_annotator(engine, "rev")
    assert item is not None and reviewer is not None
    own = human_label_set(engine, 1, reviewer.id)
    opposite = ["correct" if label != "correct" else "incorrect" for label in gold]
    for index, label in enumerate(opposite):
        labeling.set_sentence_label(engine, own.id, item.id, index, label, reviewer.id, override=True)
    engine.dispose()
    assert _overrides("rev").dataframe
    page = _sentences_page("rev")
    assert not [w for w in page.warning if "Gold for this item" in w.value]
    assert not next(b for b in page.button if b.key == SENTENCE_KEYS[0]).disabled


def _locked_for_alice(url: str) -> None:
    """ITEM becomes locked for alice with nothing of it done: she labeled one sentence, the item was taken
    from her unfinished, the Overridden labels page then showed her its gold (it was no longer hers to
    finish), and it was assigned to her again, on sentences and on spans."""
    assign(url, "alice", "sentences", ITEM)
    gold = _promote_as_it_stands(url)
    _label_as_alice(url, ["correct" if gold[0] != "correct" else "incorrect"])
    engine = make_engine(url)
    unassign(engine, 1, "sentences", _alice_id(engine), actor=OPERATOR)
    engine.dispose()
    assert list(_overrides("alice").dataframe[0].value["item"]) == [ITEM]  # gold shown: recorded
    assign(url, "alice", "sentences", ITEM)
    assign(url, "alice", "spans", ITEM)


def _alice_id(engine: Engine) -> int:
    alice = find_annotator(engine, "alice")
    assert alice is not None
    return alice.id


LOCKED = "1 locked: gold was shown to you"


def test_an_item_locked_for_her_is_neither_done_nor_left_in_any_view_of_her_progress(team_db: str) -> None:
    """She could never finish the item whose gold she was shown, yet her progress counted it as still to
    do: the bars never filled and "remaining" never reached 0; now it is counted, and said, as locked."""
    _locked_for_alice(team_db)

    page = _sentences_page("alice")
    (bar,) = page.get("progress")
    assert (bar.proto.text, bar.proto.value) == (f"0 / 1 done · {LOCKED}", 100)
    # Her queue, opened without an item: nothing left, though not everything is done.
    at = signed_in("alice")
    at.switch_page("app_pages/sentences.py").run()
    assert [s.value for s in at.success] == [
        f"Every item assigned to you is done for this task, but for {LOCKED}. 🎉"
    ]

    (card,) = signed_in("alice").get("progress")
    assert card.proto.text == f"You: 0 / 1 items finished on every task assigned to you · {LOCKED}"

    # Those who follow everyone's progress see it too: neither done nor remaining, but locked.
    team = signed_in("rev")
    team.switch_page("app_pages/team.py").run()
    team.selectbox(key="team_progress_task").set_value("sentences").run()
    assert not team.exception, team.exception
    per_annotator, per_item, gold_shown = (frame.value for frame in team.dataframe)
    row = per_annotator.set_index("annotator").loc["alice"]
    assert (row["assigned"], row["done"], row["locked"], row["remaining"]) == (1, 0, 1, 0)
    assert per_item.set_index("item").loc[ITEM, "locked"] == 1
    assert gold_shown[["annotator", "item", "locked"]].values.tolist() == [["alice", ITEM, True]]
    assert any(c.value.startswith("Locked: items an annotator has not finished") for c in team.caption)


def test_the_spans_page_on_a_locked_item_draws_its_type_picker_off_and_its_keys_unavailable(
    team_db: str,
) -> None:
    """Its span-type picker still showed a type as picked for new spans, and the ? list gave every key
    as working, where none did anything."""
    _locked_for_alice(team_db)
    at = signed_in("alice", item=ITEM)
    at.query_params.update(item=ITEM)
    at.switch_page("app_pages/spans.py").run()
    assert not at.exception, at.exception
    (why,) = [w.value for w in at.warning if "Gold for this item" in w.value]
    assert GOLD_SHOWN.fullmatch(why), why
    components = {c.proto.component_name: json.loads(c.proto.json) for c in at.get("bidi_component")}
    selector = components["spanlight_span_selector"]
    assert (selector["disabled"], selector["disabled_why"]) == (True, why)
    keys = components["spanlight_unit_keys"]
    off = {key: reason for key, _, reason in keys["keys"] if reason}
    assert set(off) == {"1–9, 0, Q, W …", "Delete", "Esc", "D", "U", "S"} and set(off.values()) == {why}
    # The type keys and Delete, pressed, say so too, rather than doing nothing without a word.
    types = len(selector["types"])
    assert types and all(keys["unavailable"][key] == why for key in [*"1234567890"[:types], "delete"])

    # Her own item still open: nothing is off.
    assign(team_db, "alice", "spans", "demo-002")
    own = signed_in("alice", item="demo-002")
    own.query_params.update(item="demo-002")
    own.switch_page("app_pages/spans.py").run()
    components = {c.proto.component_name: json.loads(c.proto.json) for c in own.get("bidi_component")}
    assert components["spanlight_span_selector"]["disabled_why"] == ""
    assert not [reason for _, _, reason in components["spanlight_unit_keys"]["keys"] if reason]


def test_the_page_reads_her_open_items_once_for_what_it_shows_and_what_it_holds_back(team_db: str) -> None:
    """It read the items she has still to finish twice, task by task: once to leave them out, once to
    count them; the second read could disagree with the first, and cost as much again."""
    assign(team_db, "alice", "sentences", ITEM)
    gold = _promote_as_it_stands(team_db)
    _label_as_alice(team_db, ["correct" if gold[0] != "correct" else "incorrect"])  # still open
    at = signed_in("alice")
    statements: list[str] = []

    def seen(_connection: object, _cursor: object, statement: str, *_: object) -> None:
        statements.append(statement)

    event.listen(Engine, "before_cursor_execute", seen)
    try:
        at.switch_page("app_pages/overrides.py").run()
    finally:
        event.remove(Engine, "before_cursor_execute", seen)
    assert not at.exception, at.exception
    assert not at.dataframe and [i.value for i in at.info] == [  # what it shows, as before
        "1 promoted item(s) you have still to finish (on any of your tasks) are not compared here: gold "
        "there would answer what you have left to label. They appear once you finish them."
    ]
    open_items = [
        s
        for s in statements
        if s.lstrip().startswith("SELECT assignments.item_id") and "LEFT OUTER JOIN" in s
    ]
    assert len(open_items) == len(TASKS), open_items


def _popovers(at: AppTest) -> list[BlockProto.Popover]:
    """Every popover block the page drew (its proto: label, disabled, help)."""
    found: list[BlockProto.Popover] = []
    stack: list[Any] = [at._tree]
    while stack:
        node = stack.pop()
        proto = getattr(node, "proto", None)
        if isinstance(proto, BlockProto) and proto.WhichOneof("type") == "popover":
            found.append(proto.popover)
        stack.extend(getattr(node, "children", {}).values())
    return found


def test_on_an_item_locked_for_her_skip_unsure_is_drawn_off_with_the_reason(team_db: str) -> None:
    """Every choice inside "Skip / unsure" was disabled on an item locked for her, but the button itself
    looked as active as on any other item; it is now drawn off, saying why like the other tools."""
    from components.unit_keys import FLAG_LABEL

    _locked_for_alice(team_db)
    page = _sentences_page("alice")
    (flag,) = [p for p in _popovers(page) if p.label == FLAG_LABEL]
    (undo,) = [b for b in page.button if b.key == "frame_undo"]
    assert flag.disabled and flag.help == undo.help
    assert GOLD_SHOWN.fullmatch(flag.help.replace("\u2060", "")), flag.help  # shown literally
    # Bob's own item: nothing locked for him, the popover is his to use.
    assign(team_db, "bob", "sentences", ITEM)
    (open_flag,) = [p for p in _popovers(_sentences_page("bob")) if p.label == FLAG_LABEL]
    assert not open_flag.disabled and not open_flag.help


def test_once_an_admin_lifts_her_lock_on_the_team_page_the_item_is_hers_to_label_again(team_db: str) -> None:
    """The lock had no way out: gold shown by mistake, or an admin's decision that she relabel, still left
    the item read-only for her and counted locked in her progress for good."""
    _locked_for_alice(team_db)
    assert [w.value for w in _sentences_page("alice").warning if "Gold for this item" in w.value]

    engine = make_engine(team_db)
    alice = _alice_id(engine)
    engine.dispose()
    team = signed_in("adm")
    team.switch_page("app_pages/team.py").run()
    team.selectbox(key="team_lift_who").set_value(alice)
    next(b for b in team.button if b.label == "Lift…").click().run()
    next(b for b in team.button if b.label == "Confirm lift").click().run()
    assert not team.exception, team.exception
    assert [s.value for s in team.success] == [
        f"Lifted the lock of 'alice' on 1 item(s): '{ITEM}'. They may change their labels there again; "
        "the records stay, marked lifted."
    ]

    page = _sentences_page("alice")
    assert not [w for w in page.warning if "Gold for this item" in w.value]
    assert not next(b for b in page.button if b.key == SENTENCE_KEYS[0]).disabled
    (bar,) = page.get("progress")
    assert LOCKED not in bar.proto.text
    (card,) = signed_in("alice").get("progress")
    assert LOCKED not in card.proto.text
