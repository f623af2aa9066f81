"""A fixture-free helper for team-mode page tests: the demo store, one account per role, logins."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from db import models as m
from db.access import OPERATOR
from db.engine import make_engine, write_session
from db.migrate import upgrade
from db.repositories.accounts import add_user
from db.repositories.items import get_item
from tests.pages.demo_store import APP, DEMO, demo_store

PASSWORD = "a long enough password"
# One account per role. "alice" and "bob" labeled in the demo before they had accounts.
USERS = {"admin": "adm", "reviewer": "rev", "annotator": "alice", "viewer": "vic"}
TIMEOUT = 30


def make_team_template(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A SQLite file holding the demo with :data:`USERS` and a second annotator, "bob", as accounts
    (the demo's images under ``folder / "data"``); copied per test by :func:`use_team_copy`."""
    path = folder / "team.db"
    shutil.copy(migrated_template(folder), path)
    demo_store(f"sqlite:///{path}", folder, monkeypatch)
    engine = make_engine(f"sqlite:///{path}")
    for name, role in [*((name, role) for role, name in USERS.items()), ("bob", "annotator")]:
        add_user(engine, name, role, PASSWORD, actor=OPERATOR)
    with engine.connect() as connection:
        connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()
    return path


def migrated_template(folder: Path) -> Path:
    path = folder / "empty.db"
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    with engine.connect() as connection:
        connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()
    return path


def use_team_copy(template: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A copy of the team template in ``folder``, which the app (in team mode) now uses."""
    path = folder / "store.db"
    shutil.copy(template, path)
    url = f"sqlite:///{path}"
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(template.parent / "data"))
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    st.cache_resource.clear()
    st.cache_data.clear()
    return url


def assign(url: str, name: str, task: str, *external_ids: str) -> None:
    """Assign demo items to an account on a task (rows written directly: the store is real)."""
    engine = make_engine(url)
    with write_session(engine) as session:
        annotator_id = session.query(m.Annotator.id).filter(m.Annotator.name == name).scalar()
        for external_id in external_ids:
            item = get_item(engine, 1, external_id)
            assert item is not None
            session.add(m.Assignment(dataset_id=1, task=task, item_id=item.id, annotator_id=annotator_id))
    engine.dispose()


def set_dataset_settings(url: str, **settings: bool) -> None:
    engine = make_engine(url)
    with write_session(engine) as session:
        dataset = session.get_one(m.Dataset, 1)
        dataset.settings = dict(settings)
    engine.dispose()


def fresh_app(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(query)
    return at


def log_in(at: AppTest, name: str, password: str = PASSWORD) -> AppTest:
    """Fill in and submit the login form on the page ``at`` shows."""
    at.text_input(key="login_name").input(name)
    at.text_input(key="login_password").input(password)
    next(b for b in at.button if b.label == "Log in").click().run()
    assert not at.exception, at.exception
    return at


def signed_in(name: str, **query: str) -> AppTest:
    """A new browser session that opened the app and logged in as ``name`` (the demo dataset chosen)."""
    at = fresh_app(dataset=DEMO, **query).run()
    return log_in(at, name)


def is_login_form(at: AppTest) -> bool:
    keys = {t.key for t in at.text_input}
    return {"login_name", "login_password"} <= keys and [s.value for s in at.subheader] == ["Log in"]
