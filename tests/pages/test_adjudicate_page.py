"""The Adjudicate and Overridden labels pages through AppTest, on the synthetic demo (alice and bob
label spans and sentences of the first 20 items; three raters score the eager detector)."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from analysis.reports import mhalo
from analysis.reports.data import ReportFilter
from analysis.reports.spans import load_span_inputs
from components import adjudication_forms as forms
from db.access import OPERATOR
from db.engine import make_engine
from db.repositories import labeling
from db.repositories.annotations import item_annotations
from db.repositories.annotators import find_annotator
from db.repositories.assignments import set_weight
from db.repositories.datasets import get_dataset
from db.repositories.items import get_item
from db.repositories.label_sets import gold_label_set, list_label_sets
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    SentenceLabelRecord,
    SentenceRecord,
    SpanRecord,
)
from render.literal_text import literal
from tests.analysis.reports.demo_store import DEMO, load_demo_store
from tests.hostile_store import HOSTILE, shown
from tests.pages.conftest import serve
from tests.pages.test_literal_text_pages import markdown_sources

TIMEOUT = 60
APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = load_demo_store(tmp_path, monkeypatch)
    monkeypatch.setenv("DATABASE_URL", url)
    st.cache_resource.clear()
    st.cache_data.clear()
    return url


def _open(page: str, dataset: str = DEMO, user: str = "rita", **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"dataset": dataset, "user": user})
    at.run()
    at.switch_page(page)
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def _widget(elements, suffix: str):
    return next(e for e in elements if e.key and e.key.endswith(suffix))


def _agree_to_replace(at: AppTest) -> AppTest:
    """Tick the box that agrees to replace the imported gold the page lists (the demo's gold came with
    its import)."""
    box = next(c for c in at.checkbox if c.key and "_replace_" in c.key)
    return box.check().run()


def _f1_iou(url: str, detector: str) -> float:
    """The Metrics page's MHALO Table 3: a detector's average F1_IoU against the store's gold."""
    engine = make_engine(url)
    table = mhalo.build(load_span_inputs(engine, 1), ReportFilter()).tables["table3"].frame
    engine.dispose()
    return float(table.set_index("detector").loc[detector, "Average · F1_IoU"])


def _gold_spans(url: str, external_id: str) -> list[tuple[int, int, str | None]]:
    engine = make_engine(url)
    item = get_item(engine, 1, external_id)
    gold = gold_label_set(engine, 1)
    found = item_annotations(engine, item.id, [gold.id])[gold.id].spans
    engine.dispose()
    return [(s.start, s.end, s.type) for s in found]


def _spans_of(url: str, who: str, external_id: str) -> list[tuple[int, int, str | None]]:
    engine = make_engine(url)
    item = get_item(engine, 1, external_id)
    label_set = next(v for v in list_label_sets(engine, 1, kind="human") if v.name == who)
    found = item_annotations(engine, item.id, [label_set.id])[label_set.id].spans
    engine.dispose()
    return [(s.start, s.end, s.type) for s in found]


def test_accepting_an_annotator_moves_the_metrics_gold(store: str) -> None:
    at = _open("app_pages/adjudicate.py")
    assert [t.value for t in at.title] == [f"Adjudicate · {literal(DEMO)}"]
    chosen = at.selectbox(key="adj_item_spans")
    first = chosen.value
    assert chosen.options[0] == first  # the most disagreement first
    assert f"**{literal('bob')}** · {len(_spans_of(store, 'bob', first))} span(s)" in [
        m.value for m in at.markdown
    ]
    before = {name: _f1_iou(store, name) for name in ("cautious", "eager", "sloppy")}
    assert _gold_spans(store, first) != _spans_of(store, "bob", first)

    _widget(at.radio, "_mode").set_value("Accept one annotator's labels").run()
    accept = _widget(at.selectbox, "_accept")
    assert accept.options == ["alice", "bob"]  # annotators by name
    accept.select_index(1).run()
    at.button(key="adj_promote").click().run()
    assert not at.exception, at.exception
    assert [s.value for s in at.success][0].startswith(
        literal(f"Promoted spans of item {first} to gold (accept)")
    )

    assert _gold_spans(store, first) == _spans_of(store, "bob", first)
    after = {name: _f1_iou(store, name) for name in before}
    assert after != before  # the Metrics page now scores the detectors against bob's spans on that item
    # the item leaves the list (its promotion is current) unless asked for; the page still shows it
    assert first not in at.dataframe[0].value["item"].tolist()
    assert at.selectbox(key="adj_item_spans").value == first
    at.checkbox(key="adj_show_promoted").check().run()
    listed = at.dataframe[0].value
    assert listed.set_index("item").loc[first, "promoted"] == "accept"


def test_merge_sentences_unit_by_unit(store: str) -> None:
    at = _open("app_pages/adjudicate.py", task="Sentences")
    external_id = at.selectbox(key="adj_item_sentences").value
    _widget(at.radio, "_mode").set_value("Merge").run()
    units = [s for s in at.selectbox if s.key and "_merge_unit_" in s.key]
    assert units, "one choice per sentence"
    for unit in units:  # take the label bob gave (options read "label · who gave it")
        unit.select_index(next(k for k, o in enumerate(unit.options) if o.endswith("bob")))
    at.run()
    _agree_to_replace(at)
    at.button(key="adj_promote").click().run()
    assert not at.exception, at.exception
    engine = make_engine(store)
    item = get_item(engine, 1, external_id)
    gold = gold_label_set(engine, 1)
    bob = next(v for v in list_label_sets(engine, 1, kind="human") if v.name == "bob")
    found = item_annotations(engine, item.id, [gold.id, bob.id])
    engine.dispose()
    said = {k: (v.label, v.error_type) for k, v in found[bob.id].sentence_labels.items()}
    assert {k: (v.label, v.error_type) for k, v in found[gold.id].sentence_labels.items()} == said


def test_bulk_promotion_previews_then_promotes(store: str) -> None:
    at = _open("app_pages/adjudicate.py", task="Sentences")
    assert not any(b.key == "adj_confirm" for b in at.button)
    at.button(key="adj_preview").click().run()
    metrics = {m.label: int(m.value) for m in at.metric}
    assert metrics["Would promote"] > 0 and metrics["Unchanged since promoted"] == 0
    reasons = at.dataframe[-1].value
    assert list(reasons.columns) == ["item", "why it needs review"] and len(reasons) == metrics["Need review"]
    engine = make_engine(store)
    assert gold_label_set(engine, 1) is not None  # the demo's own gold
    at.button(key="adj_confirm").click().run()
    assert not at.exception, at.exception
    assert [s.value for s in at.success] == [
        literal(
            f"The majority rule promoted {metrics['Would promote']} item(s) to gold; {metrics['Need review']} need review."
        )
    ]
    at.button(key="adj_preview").click().run()
    again = {m.label: int(m.value) for m in at.metric}
    assert (again["Would promote"], again["Unchanged since promoted"]) == (0, metrics["Would promote"])
    engine.dispose()


def test_overridden_labels_for_the_annotator(store: str) -> None:
    at = _open("app_pages/adjudicate.py")
    first = at.selectbox(key="adj_item_spans").value
    _widget(at.radio, "_mode").set_value("Accept one annotator's labels").run()
    _widget(at.selectbox, "_accept").select_index(1).run()  # bob
    at.button(key="adj_promote").click().run()
    assert not at.exception, at.exception
    page = _open("app_pages/overrides.py", user="alice")
    frame = page.dataframe[0].value
    assert list(frame.columns) == [
        "item",
        "labels",
        "unit",
        "you said",
        "gold says",
        "promoted by",
        "how",
        "when",
    ]
    assert set(frame["item"]) == {first} and set(frame["labels"]) == {"spans"}
    assert set(frame["promoted by"]) == {"rita"} and set(frame["how"]) == {"accept"}
    assert (frame["you said"] != frame["gold says"]).all()
    bob = _open("app_pages/overrides.py", user="bob")
    assert [s.value for s in bob.success] == [
        "Gold agrees with every label of yours on the items promoted so far."
    ]
    nobody = _open("app_pages/overrides.py", user="someone new")
    assert "has not labelled anything yet" in nobody.info[0].value


def test_names_and_labels_stay_literal(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Annotator names, item id, dataset name, types and the response are hostile Markdown: no element
    Streamlit renders as Markdown may hold a live link or image, and the text is there to read."""
    names = [f"ann {HOSTILE}", f"other {HOSTILE}"]
    text = f"A red cube {HOSTILE}. The ball is blue."  # text[11:19] == "**bold**"
    kind = f"type {HOSTILE}"
    bundle = Bundle(
        DatasetRecord(f"set {HOSTILE}", "canonical", taxonomy=[kind]),
        [ItemRecord(f"id {HOSTILE}", text)],
        [
            LabelSetRecord(
                kind="human",
                name=name,
                annotator=name,
                annotations=[
                    Annotations(
                        f"id {HOSTILE}",
                        spans=[SpanRecord(11, 19, kind) if k else SpanRecord(2, 10, kind)],  # disjoint
                        sentence_labels=[
                            SentenceLabelRecord(0, "incorrect" if k else "correct", kind if k else None),
                            SentenceLabelRecord(1, "correct"),
                        ],
                    )
                ],
            )
            for k, name in enumerate(names)
        ],
    )
    serve(sqlite_url, bundle, monkeypatch)

    def check(at: AppTest, *expected: str) -> None:
        sources = markdown_sources(at)
        for source in sources:
            assert "](https://" not in source and "<img" not in source, source
        texts = [shown(source) for source in sources]
        for wanted in expected:
            assert any(wanted in t for t in texts), (wanted, texts)

    for task, mode in (("Spans", "Merge"), ("Spans", "Edit"), ("Sentences", "Merge"), ("Sentences", "Edit")):
        at = _open("app_pages/adjudicate.py", dataset=f"set {HOSTILE}", user=names[0], task=task)
        _widget(at.radio, "_mode").set_value(mode).run()
        assert not at.exception, at.exception
        check(at, f"set {HOSTILE}", f"id {HOSTILE}")
        if task == "Spans":
            check(at, *names)  # the annotators' names over their spans
        else:
            table = at.dataframe[1].value  # the unit table: names head columns, labels are plain cells
            assert set(names) <= set(table.columns)
            assert f"incorrect ({kind})" in set(table[names[1]])
    at.button(key="adj_promote").click().run()
    assert not at.exception, at.exception
    page = _open("app_pages/overrides.py", dataset=f"set {HOSTILE}", user=names[1])
    check(page, f"set {HOSTILE}")
    assert f"incorrect ({kind})" in set(page.dataframe[0].value["you said"])


def test_weights_set_on_the_team_page_decide_the_preview(store: str) -> None:
    at = _open("app_pages/adjudicate.py", task="Sentences")
    at.button(key="adj_preview").click().run()
    even = {m.label: int(m.value) for m in at.metric}
    engine = make_engine(store)
    alice = find_annotator(engine, "alice")
    assert alice is not None
    set_weight(engine, 1, alice.id, 3.0, True, actor=OPERATOR)
    engine.dispose()
    at = _open("app_pages/adjudicate.py", task="Sentences")
    weights_table = next(d.value for d in at.dataframe if "weight" in d.value.columns)
    assert weights_table.to_dict("records") == [{"annotator": "alice", "weight": 3.0, "trusted": "yes"}]
    at.button(key="adj_preview").click().run()
    weighted = {m.label: int(m.value) for m in at.metric}
    # alice's 3 of 4 settles every sentence she and bob disagree on: nothing is left for review
    assert (weighted["Need review"], even["Need review"] > 0) == (0, True)
    assert weighted["Would promote"] == even["Would promote"] + even["Need review"]


def _sentence_labels(
    url: str, external_id: str, who: str | None, dataset: str = DEMO
) -> dict[int, tuple[str, str | None]]:
    """An item's sentence labels of ``who`` (None: gold), straight from the store."""
    engine = make_engine(url)
    found = get_dataset(engine, dataset)
    assert found is not None
    item = get_item(engine, found.id, external_id)
    label_set = (
        gold_label_set(engine, found.id)
        if who is None
        else next(v for v in list_label_sets(engine, found.id, kind="human") if v.name == who)
    )
    found = item_annotations(engine, item.id, [label_set.id])[label_set.id].sentence_labels
    engine.dispose()
    return {k: (v.label, v.error_type) for k, v in found.items()}


def test_a_merge_over_imported_gold_lists_what_it_replaces_and_waits_for_the_reviewer(store: str) -> None:
    """The demo's gold came with its import: a merge that changes it says how many of its labels on
    which item go, and Promote waits until the reviewer agrees (it replaced them without a word)."""
    at = _open("app_pages/adjudicate.py", task="Sentences")
    external_id = at.selectbox(key="adj_item_sentences").value
    _widget(at.radio, "_mode").set_value("Merge").run()
    for unit in [s for s in at.selectbox if s.key and "_merge_unit_" in s.key]:
        unit.select_index(next(k for k, o in enumerate(unit.options) if o.endswith("bob")))
    at.run()
    gold, bob = _sentence_labels(store, external_id, None), _sentence_labels(store, external_id, "bob")
    going = sorted(k for k, label in gold.items() if bob.get(k) != label)
    assert going, "the merge changes some of the imported gold"
    labels, are = ("labels", "they are") if len(going) != 1 else ("label", "it is")
    warnings = [w.value for w in at.warning if "no promotion wrote" in w.value]
    assert warnings == [
        literal(
            f"Promoting replaces {len(going)} gold {labels} on 1 item ({external_id}) that no promotion "
            f"wrote as {are} now. They came with an import of the dataset, or an undo, a restore or an "
            "import put them back: they may be the benchmark's own gold, or adjudicated labels put back, "
            "which the store cannot tell apart. Look at them before you agree."
        )
    ]
    table = next(d.value for d in at.dataframe if "labels replaced" in d.value.columns)
    assert table.to_dict("records") == [
        {
            "item": external_id,
            "labels replaced": len(going),
            "they say now": "; ".join(
                f"sentence {k + 1}: {gold[k][0]}" + (f" ({gold[k][1]})" if gold[k][1] else "") for k in going
            ),
        }
    ]
    assert at.button(key="adj_promote").disabled  # nothing is replaced unseen
    assert _sentence_labels(store, external_id, None) == gold

    _agree_to_replace(at)
    assert not at.button(key="adj_promote").disabled
    at.button(key="adj_promote").click().run()
    assert not at.exception, at.exception
    assert _sentence_labels(store, external_id, None) == bob
    assert [s.value for s in at.success][0].endswith(
        literal(f", among them the {len(going)} listed that no promotion wrote.")
    )


def test_a_rule_over_imported_gold_lists_it_after_the_preview_and_waits_for_the_reviewer(store: str) -> None:
    at = _open("app_pages/adjudicate.py", task="Spans")
    at.button(key="adj_preview").click().run()
    warnings = [w.value for w in at.warning if "no promotion wrote" in w.value]
    assert len(warnings) == 1 and "1 gold label on 1 item (demo-005) that no promotion wrote" in warnings[0]
    table = next(d.value for d in at.dataframe if "labels replaced" in d.value.columns)
    assert table["item"].tolist() == ["demo-005"] and table["they say now"].str.startswith("span “").all()
    assert at.button(key="adj_confirm").disabled
    before = _gold_spans(store, "demo-005")
    _agree_to_replace(at)
    at.button(key="adj_confirm").click().run()
    assert not at.exception, at.exception
    assert [s.value for s in at.success][0].startswith(literal("The majority rule promoted"))
    assert _gold_spans(store, "demo-005") != before


def test_a_long_list_of_imported_gold_shows_its_first_items_and_counts_the_rest(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A held preview sends the list again on every rerun: it lists the first items and counts the rest,
    which agreeing replaces all the same (a rule over a large benchmark sent a row for every item)."""
    monkeypatch.setattr(forms, "LISTED_ITEMS", 2)
    items = [ItemRecord(f"x{k}", "The ball is red.", sentences=[SentenceRecord(0, 16)]) for k in range(5)]

    def labels(label: str, error_type: str | None = None) -> list[Annotations]:
        return [
            Annotations(i.external_id, sentence_labels=[SentenceLabelRecord(0, label, error_type)])
            for i in items
        ]

    bundle = Bundle(
        DatasetRecord("long", "canonical"),
        items,
        [
            *(
                LabelSetRecord(
                    kind="human", name=who, annotator=who, annotations=labels("incorrect", "Color")
                )
                for who in ("ann", "bo")
            ),
            LabelSetRecord(kind="gold", name="gold", annotations=labels("correct")),
        ],
    )
    serve(sqlite_url, bundle, monkeypatch)

    at = _open("app_pages/adjudicate.py", dataset="long", user="ann", task="Sentences")
    at.button(key="adj_preview").click().run()
    table = next(d.value for d in at.dataframe if "labels replaced" in d.value.columns)
    assert table["item"].tolist() == ["x0", "x1"]
    assert [c.value for c in at.caption if "more of these labels" in c.value] == [
        "The first 2 items are listed; 3 more hold 3 more of these labels, which are replaced too."
    ]
    _agree_to_replace(at)
    at.button(key="adj_confirm").click().run()
    assert not at.exception, at.exception
    assert all(
        _sentence_labels(sqlite_url, i.external_id, None, "long") == {0: ("incorrect", "Color")}
        for i in items
    )


def test_merge_boxes_follow_the_annotators_labels_when_they_change(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An annotator marked another span while a reviewer had the item open: the Merge boxes kept their
    places, so "Span 1" (now a span one annotator marked) stayed ticked and the span both marked, now
    "Span 2", stood unticked; Promote then wrote the wrong span to gold."""
    text = "A red cube and a blue ball on a green table."
    blue, green, red = (text.index(word) for word in ("blue", "green", "red"))
    bundle = Bundle(
        DatasetRecord("merge", "canonical", taxonomy=["Color"]),
        [ItemRecord("x", text)],
        [
            LabelSetRecord(
                kind="human",
                name="ann",
                annotator="ann",
                annotations=[Annotations("x", spans=[SpanRecord(blue, blue + 4, "Color")])],
            ),
            LabelSetRecord(
                kind="human",
                name="bo",
                annotator="bo",
                annotations=[
                    Annotations(
                        "x",
                        spans=[SpanRecord(blue, blue + 4, "Color"), SpanRecord(green, green + 5, "Color")],
                    )
                ],
            ),
        ],
    )
    serve(sqlite_url, bundle, monkeypatch)
    engine = make_engine(sqlite_url)
    at = _open("app_pages/adjudicate.py", dataset="merge", user="rev", item="x")
    _widget(at.radio, "_mode").set_value("Merge").run()
    assert [(c.label, c.value) for c in at.checkbox if c.label.startswith("Span")] == [
        ("Span 1: “blue”", True),
        ("Span 2: “green”", False),
    ]

    ann = next(v for v in list_label_sets(engine, 1, kind="human") if v.name == "ann")
    annotator = find_annotator(engine, "ann")
    assert annotator is not None
    labeling.add_span(engine, ann.id, get_item(engine, 1, "x").id, red, red + 3, "Color", annotator.id)
    at.run()
    assert not at.exception
    assert [(c.label, c.value) for c in at.checkbox if c.label.startswith("Span")] == [
        ("Span 1: “red”", False),
        ("Span 2: “blue”", True),
        ("Span 3: “green”", False),
    ]
    assert any("changed their labels on this item" in i.value for i in at.info)
    at.button(key="adj_promote").click().run()
    assert not at.exception
    gold = gold_label_set(engine, 1)
    assert gold is not None
    spans = item_annotations(engine, get_item(engine, 1, "x").id, [gold.id])[gold.id].spans
    assert [(s.start, s.end) for s in spans] == [(blue, blue + 4)]
    engine.dispose()


def test_the_labels_chosen_stay_in_the_address_over_an_older_one(store: str) -> None:
    """``?task=`` as its button reads opens that task; once the page is open the task shown is the truth,
    and a run asked for with an older address leaves the address saying the task shown (what a reload or
    a copied link opens)."""
    at = _open("app_pages/adjudicate.py", task="Sentences")
    labels = next(b for b in at.button_group if b.key == "task")
    assert labels.value == "sentences"
    assert at.query_params["task"] == "Sentences"
    labels.set_value("ratings").run()
    assert at.query_params["task"] == "Ratings"
    at.query_params["task"] = "Sentences"  # the address from before the last choice
    at.run()
    assert not at.exception, at.exception
    assert next(b for b in at.button_group if b.key == "task").value == "ratings"
    assert at.query_params["task"] == "Ratings"
    next(b for b in at.button_group if b.key == "task").set_value("spans").run()
    assert "task" not in at.query_params  # the default is left out, as before


def test_a_link_naming_no_task_opens_spans(store: str) -> None:
    at = _open("app_pages/adjudicate.py", task="Nonsense")
    assert next(b for b in at.button_group if b.key == "task").value == "spans"
    assert "task" not in at.query_params
    # under the title: beside the button in the sidebar it was below the fold of a 900-pixel window
    assert [w.value for w in at.main.warning] == [
        literal(
            "The link asked for labels 'Nonsense', which is not one of 'Spans', 'Sentences', 'Claims', "
            "'Triplets', 'Ratings'; showing 'Spans' instead."
        )
    ]


def test_the_item_shown_stays_over_an_older_address(store: str) -> None:
    """``?item=`` was read on every run: a run asked for with the address from before the last choice
    (as a watcher's run is) opened the labels chosen next on that older item. The item shown is the
    truth once the page is open; the address says it, and other labels open on it too."""
    at = _open("app_pages/adjudicate.py")
    first, second = at.selectbox(key="adj_item_spans").options[:2]
    at.selectbox(key="adj_item_spans").set_value(second).run()
    assert at.query_params["item"] == second
    at.query_params["item"] = first  # the address from before the last choice
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="adj_item_spans").value == second
    assert at.query_params["item"] == second
    at.query_params["item"] = first
    next(b for b in at.button_group if b.key == "task").set_value("sentences").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="adj_item_sentences").value == second
    assert at.subheader[1].value == f"Item {literal(second)}"
    assert at.query_params["item"] == second


def test_a_link_to_an_item_opens_it_and_the_address_follows_the_choice(store: str) -> None:
    at = _open("app_pages/adjudicate.py")
    listed = at.selectbox(key="adj_item_spans").options
    at = _open("app_pages/adjudicate.py", item=listed[2])
    assert at.selectbox(key="adj_item_spans").value == listed[2]
    at.selectbox(key="adj_item_spans").set_value(listed[0]).run()
    assert at.query_params["item"] == listed[0]


def test_a_promotion_over_gold_another_reviewer_changed_meanwhile_is_refused(store: str) -> None:
    """Two reviewers open the same item; rita promotes alice's spans, then sam, whose page still shows
    the gold as it was, promotes bob's. Sam's promotion silently replaced rita's and sam never knew; now
    the page refuses it, names rita, and offers to reload; after the reload it goes through."""
    pages = {name: _open("app_pages/adjudicate.py", user=name) for name in ("rita", "sam")}
    first = pages["rita"].selectbox(key="adj_item_spans").value
    assert pages["sam"].selectbox(key="adj_item_spans").value == first
    for name, annotator in (("sam", 1), ("rita", 0)):  # sam decides first, promotes last
        at = pages[name]
        _widget(at.radio, "_mode").set_value("Accept one annotator's labels").run()
        _widget(at.selectbox, "_accept").select_index(annotator).run()
        if any(c.key and "_replace_" in c.key for c in at.checkbox):  # the demo's imported gold
            _agree_to_replace(at)
    pages["rita"].button(key="adj_promote").click().run()
    assert _gold_spans(store, first) == _spans_of(store, "alice", first)

    sam = pages["sam"].button(key="adj_promote").click().run()
    assert not sam.exception, sam.exception
    [refusal] = [e.value for e in sam.error]
    assert refusal.startswith(literal(f"The gold spans of item {first} were changed by rita on "))
    assert refusal.endswith(literal("reload the item to see them before promoting."))
    assert _gold_spans(store, first) == _spans_of(store, "alice", first)  # rita's decision stands

    sam.button(key="adj_reload").click().run()
    assert not sam.error
    sam.button(key="adj_promote").click().run()
    assert not sam.error, [e.value for e in sam.error]
    assert [s.value for s in sam.success][0].startswith(literal(f"Promoted spans of item {first} to gold"))
    assert _gold_spans(store, first) == _spans_of(store, "bob", first)
