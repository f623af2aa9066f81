"""Page tests run the real app (AppTest) against a real SQLite store holding a small dataset."""

from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import streamlit as st
from sqlalchemy import Engine

from components import live_refresh
from db.access import OPERATOR
from db.engine import make_engine
from db.importer import import_bundle
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    RawOutputRecord,
    SentenceLabelRecord,
    SpanRecord,
)

XSS = 'Look: <script>window.__xss=1</script> and <img src=x onerror="window.__xss=2"> **bold** here.'


def small_bundle() -> Bundle:
    items = [
        ItemRecord(
            external_id=f"item-{k}",
            response=f"A red cube number {k}. The ball is blue.",
            prompt="Describe the image.",
            subset="shapes" if k % 2 else "signs",
            source_model="captioner-a",
            image_ref=f"missing-{k}.png",
        )
        for k in range(30)
    ]
    items.append(ItemRecord(external_id="xss", response=XSS, prompt="<b>prompt</b>", subset="signs"))
    gold = LabelSetRecord(
        kind="gold",
        name="gold",
        annotations=[
            Annotations(
                item=f"item-{k}",
                spans=[SpanRecord(2, 5, "Color Attribute")],
                sentence_labels=[
                    SentenceLabelRecord(0, "incorrect", "Color Attribute"),
                    SentenceLabelRecord(1, "correct"),
                ],
            )
            for k in range(0, 30, 3)
        ]
        + [Annotations(item="xss", spans=[SpanRecord(6, 39, "OCR")])],
    )
    detector = LabelSetRecord(
        kind="detector",
        name="eager",
        annotations=[
            Annotations(
                item="item-0",
                spans=[SpanRecord(2, 10)],
                raw_output=RawOutputRecord(
                    "Header\n<Tagged_Text>A <hallucination>red cube</hallucination></Tagged_Text>",
                    False,
                    parse_error="text differs",
                ),
            )
        ],
    )
    return Bundle(
        dataset=DatasetRecord(
            "pages-test", "canonical", taxonomy=["Color Attribute", "OCR"], label_kinds=["span", "sentence"]
        ),
        items=items,
        label_sets=[gold, detector],
    )


def add_small_dataset(url: str, name: str) -> None:
    """Import :func:`small_bundle` into the store at ``url`` as a dataset named ``name``."""
    bundle = small_bundle()
    engine = make_engine(url)
    renamed = Bundle(
        dataset=dataclasses.replace(bundle.dataset, name=name),
        items=bundle.items,
        label_sets=bundle.label_sets,
    )
    import_bundle(engine, renamed, source="fixture", actor=OPERATOR)
    engine.dispose()


def watcher_reruns_the_next_run(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The next run of a live page goes on as it does when its watcher (:mod:`components.live_refresh`)
    finds the store changed (and, on Compare, a detector run going): the page is drawn, then the watcher
    reruns it (``st.rerun``), with the address that run was asked for and without the widget values a
    browser sends. Returns the store revisions the page's runs were drawn from, one a run: two for the
    next run when the watcher did rerun it."""
    remember = live_refresh._remember
    drawn: list[int] = []

    def remember_an_older_revision_once(engine: Engine) -> None:
        remember(engine)
        drawn.append(st.session_state[live_refresh._SEEN])
        if len(drawn) == 1:
            st.session_state[live_refresh._SEEN] -= 1

    monkeypatch.setattr(live_refresh, "_remember", remember_an_older_revision_once)
    monkeypatch.setattr(live_refresh, "_runs_going", lambda: True)
    return drawn


def serve(url: str, bundle: Bundle, monkeypatch: pytest.MonkeyPatch) -> str:
    """Import ``bundle`` into the store at ``url`` and point the app at it (DATABASE_URL), with no
    cached reads of another store left."""
    engine = make_engine(url)
    import_bundle(engine, bundle, source="fixture", actor=OPERATOR)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", url)
    st.cache_resource.clear()
    st.cache_data.clear()
    return url


@pytest.fixture
def app_db(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A store with the small dataset; the app finds it through DATABASE_URL."""
    return serve(sqlite_url, small_bundle(), monkeypatch)


@pytest.fixture(scope="session")
def team_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo store with one account per role, made once per run (see ``tests/pages/team_store.py``)."""
    from tests.pages.team_store import make_team_template

    with pytest.MonkeyPatch.context() as monkeypatch:
        return make_team_template(tmp_path_factory.mktemp("team-template"), monkeypatch)


@pytest.fixture
def team_db(team_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh copy of the team template, which the app uses in team mode."""
    from tests.pages.team_store import use_team_copy

    return use_team_copy(team_template, tmp_path, monkeypatch)


def problem_report(at: Any) -> pd.DataFrame:
    """The validation report the page shows (an HTML table of escaped cells), as a frame."""
    body = "\n".join(element.proto.body for element in at.get("html"))
    table = body[body.index('<div class="sl-problems">') :]
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("</thead>", 1)[1].split("</table>", 1)[0], re.S)
    cells = [dict(re.findall(r'<td data-column="([^"]+)">(.*?)</td>', row, re.S)) for row in rows]
    return pd.DataFrame([{k: html.unescape(v) for k, v in row.items()} for row in cells])
