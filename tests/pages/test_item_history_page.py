"""The Item page's History: changes listed literally and newest first, paged, and "Restore this state"."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from db.engine import make_engine
from db.repositories import labeling
from db.repositories.annotations import item_annotations
from db.repositories.annotators import get_or_create_annotator
from db.repositories.items import get_item
from db.repositories.label_sets import human_label_set
from tests.pages.conftest import XSS

TIMEOUT = 30
APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _open(item: str, user: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(dataset="pages-test", item=item, user=user)
    at.run()
    at.switch_page("app_pages/item.py").run()
    assert not at.exception, at.exception
    return at


def _label(url: str, name: str, external_id: str) -> tuple[int, int, int]:
    """``name``'s label set on the item, with the item's id and the annotator's."""
    engine = make_engine(url)
    who = get_or_create_annotator(engine, name).id
    item = get_item(engine, 1, external_id)
    assert item is not None
    found = human_label_set(engine, 1, who).id, item.id, who
    engine.dispose()
    return found


def _history(at: AppTest) -> list[str]:
    """The History's entries as shown: two literal text elements each (when and who; label set and
    what), joined by a newline."""
    texts = [t.value for t in at.text]
    return [f"{texts[k]}\n{texts[k + 1]}" for k in range(0, len(texts), 2)]


def _restore_buttons(at: AppTest) -> list:
    return [b for b in at.button if b.label == "Restore this state"]


def test_history_lists_changes_and_restores_an_earlier_state(app_db: str) -> None:
    ls, item, who = _label(app_db, "alice", "item-0")
    engine = make_engine(app_db)
    first = labeling.add_span(engine, ls, item, 2, 5, "Color Attribute", who)
    labeling.set_sentence_label(engine, ls, item, 1, "incorrect", who, error_type="OCR")
    labeling.add_span(engine, ls, item, 6, 10, None, who)
    bob_ls, _item, bob = _label(app_db, "bob", "item-0")
    labeling.add_span(engine, bob_ls, item, 2, 10, None, bob)

    at = _open("item-0", "alice")
    assert any(e.label == "History" for e in at.expander)
    lines = _history(at)
    assert any(line.endswith("\nspan “red” added (Color Attribute)") for line in lines)
    assert any("sentence 2: — → incorrect (OCR)" in line for line in lines)
    assert any("\nAnnotator · bob\n" in line for line in lines)  # local mode: everyone's history
    assert any("\nGold\nimported from fixture" in line for line in lines)
    # restorable: alice's own entries (but not the newest: that is the current state) and gold's
    keys = {b.key for b in _restore_buttons(at)}
    assert f"item_history_restore_{first.log_id}_{ls}" in keys
    assert not any(k.endswith(f"_{bob_ls}") for k in keys)
    newest = next(b for b in _restore_buttons(at) if b.key.endswith(f"_{ls}"))
    assert newest.disabled

    at.button(key=f"item_history_restore_{first.log_id}_{ls}").click().run()
    assert not at.exception
    assert "2 change(s), each in this history" in at.success[0].value
    spans = item_annotations(engine, item, [ls])[ls]
    assert [(s.start, s.end, s.type) for s in spans.spans] == [(2, 5, "Color Attribute")]
    assert spans.sentence_labels == {}
    assert sum("restored to the state of" in line for line in _history(at)) == 2
    engine.dispose()


def test_a_change_made_meanwhile_is_not_overwritten(app_db: str) -> None:
    ls, item, who = _label(app_db, "alice", "item-1")
    engine = make_engine(app_db)
    first = labeling.add_span(engine, ls, item, 2, 5, None, who)
    labeling.add_span(engine, ls, item, 6, 10, None, who)
    at = _open("item-1", "alice")
    labeling.add_span(engine, ls, item, 11, 17, None, who)  # another tab, after the page showed the history
    at.button(key=f"item_history_restore_{first.log_id}_{ls}").click().run()
    assert "changed meanwhile" in at.error[0].value
    assert len(item_annotations(engine, item, [ls])[ls].spans) == 3
    engine.dispose()


def test_history_is_literal_and_paged(app_db: str) -> None:
    name = "**mallory** [x](https://example.com)"
    ls, item, who = _label(app_db, name, "xss")
    engine = make_engine(app_db)
    labeling.add_span(engine, ls, item, 6, 41, "<b>OCR</b>", who)  # whole words
    for k in range(25):
        labeling.set_item_status(engine, ls, item, "spans", "unsure", who, note=f"look {k} *again*")
    engine.dispose()

    at = _open("xss", name)
    lines = _history(at)
    assert len(lines) == 20  # the first page
    assert lines[0].endswith("status on spans: unsure: look 23 *again* → unsure: look 24 *again*")
    assert all(f"{name} · " in line for line in lines)  # st.text: no Markdown, no HTML
    at.number_input(key=f"item_history_page_{item}").set_value(2).run()
    lines = _history(at)
    assert len(lines) == 7  # 26 changes, and the import of gold
    assert any(line.endswith(f"span “{XSS[6:41][:40]}” added (<b>OCR</b>)") for line in lines)
    assert "\nGold\nimported from fixture" in lines[-1]


def _history_as(url: str, name: str, role: str, external_id: str) -> None:
    """The History component alone, for a team-mode user of the given role (args come from the test)."""
    import streamlit as st

    from components.item_history import show_item_history
    from components.page_setup import Annotator, PageContext
    from db.access import Actor
    from db.engine import make_engine
    from db.repositories.datasets import list_dataset_infos
    from db.repositories.items import get_item

    engine = make_engine(url)
    dataset = list_dataset_infos(engine)[0]
    person = Annotator(engine, name, None)
    stored = person.stored()
    ctx = PageContext(engine, person, "store", Actor(stored.id if stored else None, name, role), team=True)
    item = get_item(engine, dataset.id, external_id)
    assert item is not None
    st.title("History as " + role)
    show_item_history(ctx, dataset, item)


def test_in_team_mode_an_annotator_sees_only_their_own_history(app_db: str, monkeypatch) -> None:
    ls, item, who = _label(app_db, "alice", "item-3")
    bob_ls, _item, bob = _label(app_db, "bob", "item-3")
    engine = make_engine(app_db)
    first = labeling.add_span(engine, ls, item, 2, 5, None, who)
    labeling.add_span(engine, ls, item, 6, 10, None, who)
    labeling.add_span(engine, bob_ls, item, 2, 10, None, bob)
    get_or_create_annotator(engine, "rita", role="reviewer")
    engine.dispose()
    monkeypatch.setenv("SPANLIGHT_MODE", "team")  # the labels above were made before, in local mode

    mine = AppTest.from_function(
        _history_as, args=(app_db, "alice", "annotator", "item-3"), default_timeout=TIMEOUT
    )
    mine.run()
    assert not mine.exception, mine.exception
    lines = _history(mine)
    assert len(lines) == 2 and all("\nAnnotator · alice\n" in line for line in lines)
    assert f"item_history_restore_{first.log_id}_{ls}" in {b.key for b in _restore_buttons(mine)}

    reviewer = AppTest.from_function(
        _history_as, args=(app_db, "rita", "reviewer", "item-3"), default_timeout=TIMEOUT
    )
    reviewer.run()
    assert not reviewer.exception, reviewer.exception
    lines = _history(reviewer)
    assert any("\nAnnotator · bob\n" in line for line in lines)
    assert any("\nGold\nimported from fixture" in line for line in lines)
    # a reviewer restores gold, never an annotator's labels
    keys = {b.key for b in _restore_buttons(reviewer)}
    assert keys and all(k.endswith("_1") for k in keys)
