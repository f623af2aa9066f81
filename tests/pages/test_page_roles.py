"""Team mode, every page × every role: the page opens for the roles the rights table allows, shows the
refusal (and nothing of itself) to the others, and shows the login form to nobody signed in.

The expected matrix is written out here, not read from ``components/navigation.py``, so a change to
either the menu or a page's own check that breaks the agreed rights fails this test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.clean_copy import KEY as COPY_KEY
from components.navigation import listed_pages
from db.access import Actor
from page_table import pages
from tests.pages.team_store import USERS, fresh_app, is_login_form, signed_in, use_team_copy

ALL = {"admin", "reviewer", "annotator", "viewer"}
LABELERS = {"admin", "reviewer", "annotator"}
READERS = {"admin", "reviewer", "viewer"}
EXPECTED: dict[str, set[str]] = {
    "app_pages/home.py": ALL,
    "app_pages/browse.py": ALL,
    "app_pages/item.py": ALL,
    "app_pages/import_data.py": {"admin"},
    "app_pages/rating_tasks.py": {"admin"},
    "app_pages/export_data.py": {"admin", "reviewer"},
    "app_pages/spans.py": LABELERS,
    "app_pages/sentences.py": LABELERS,
    "app_pages/claims.py": LABELERS,
    "app_pages/triplets.py": LABELERS,
    "app_pages/rate.py": LABELERS,
    "app_pages/score_responses.py": LABELERS,
    "app_pages/compare.py": READERS,
    "app_pages/failures.py": READERS,
    "app_pages/run_detector.py": {"admin"},
    "app_pages/paper_metrics.py": READERS,
    "app_pages/correlation.py": READERS,
    "app_pages/agreement.py": READERS,
    "app_pages/presenter.py": READERS,
    "app_pages/adjudicate.py": {"admin", "reviewer"},
    "app_pages/overrides.py": LABELERS,
    "app_pages/team.py": {"admin", "reviewer"},
}


@pytest.fixture(scope="module")
def store(team_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One copy for the module (its tests only read, and log in), so the pages' caches are shared."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield use_team_copy(team_template, tmp_path_factory.mktemp("page-roles"), monkeypatch)


def test_every_page_is_in_the_matrix() -> None:
    assert sorted(spec.path for spec in pages()) == sorted(EXPECTED)


@pytest.mark.parametrize("role", sorted(ALL))
def test_menu_lists_the_pages_of_the_role(role: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    listed = {spec.path for spec in listed_pages(Actor(7, "someone", role))}
    assert listed == {path for path, roles in EXPECTED.items() if role in roles}
    assert listed_pages(None) == []  # nobody signed in: an empty (hidden) menu


def test_local_mode_lists_every_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPANLIGHT_MODE", raising=False)
    assert len(listed_pages(Actor(None, "local", "viewer"))) == len(EXPECTED)


def _drawn(at: AppTest) -> list[object]:
    """The main area's elements but the copy listener's, which every page mounts and which draws nothing."""
    return [e for e in at.main.children.values() if getattr(e, "key", None) != COPY_KEY]


def _refusal(at: AppTest, role: str) -> list[str]:
    return [e.value for e in at.error if e.value.startswith(f"The {role} role cannot")]


@pytest.mark.parametrize("role", sorted(ALL))
def test_each_page_opens_or_refuses_for_the_role(store: str, role: str) -> None:
    at = signed_in(USERS[role])
    assert [m.value for m in at.sidebar.markdown][0] == f"Signed in as {USERS[role]} ({role})"
    for path, roles in EXPECTED.items():
        at.switch_page(path).run()
        assert not at.exception, (path, at.exception)
        assert not is_login_form(at), path
        if role in roles:
            assert not _refusal(at, role), (path, _refusal(at, role))
            assert len(_drawn(at)) > 0, path
        else:
            # The refusal and nothing else of the page: no title, table, button or input.
            assert [e.value for e in at.error] == _refusal(at, role) and len(_refusal(at, role)) == 1, path
            assert not (at.title or at.main.dataframe or at.main.button or at.main.text_input), path
            assert len(_drawn(at)) == 1, path


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_nobody_signed_in_gets_the_login_form_on_every_page(store: str, path: str) -> None:
    at = fresh_app().run()
    at.switch_page(path).run()
    assert not at.exception, at.exception
    assert is_login_form(at)
    assert not at.error and not at.sidebar.selectbox and not at.sidebar.button  # no page, no logout
