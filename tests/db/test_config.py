"""Settings: the SPANLIGHT_ variables, and the pre-rename spellings still honoured with one notice."""

from __future__ import annotations

from pathlib import Path

import pytest

from db import config, legacy_settings

OLD = legacy_settings._OLD_PREFIX  # the old spelling is written in the shim only


@pytest.fixture(autouse=True)
def _fresh_notices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(legacy_settings, "_said", set())
    for name in ("DATA_DIR", "USER"):
        monkeypatch.delenv(f"SPANLIGHT_{name}", raising=False)
        monkeypatch.delenv(OLD + name, raising=False)


def test_new_variable_is_read_without_notice(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path))
    assert config.data_dir() == tmp_path
    assert config.default_sqlite_url() == f"sqlite:///{tmp_path / 'spanlight.db'}"
    assert capsys.readouterr().err == ""


def test_old_variable_is_honoured_with_one_deprecation_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(OLD + "DATA_DIR", str(tmp_path))
    assert config.data_dir() == tmp_path
    assert config.data_dir() == tmp_path
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "SPANLIGHT_DATA_DIR" in err[0] and err[0].startswith("Deprecated:")


def test_new_variable_wins_over_old(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("SPANLIGHT_USER", "alice")
    monkeypatch.setenv(OLD + "USER", "bob")
    assert config.setting("USER") == "alice"
    assert capsys.readouterr().err == ""


def test_unset_and_empty_are_none(monkeypatch):
    assert config.setting("USER") is None
    monkeypatch.setenv("SPANLIGHT_USER", "")
    assert config.setting("USER") is None


def test_a_store_under_the_old_default_name_is_pointed_out(monkeypatch, tmp_path: Path, capsys):
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path))
    (tmp_path / legacy_settings._OLD_STORE_NAME).write_bytes(b"")
    config.default_sqlite_url()
    err = capsys.readouterr().err
    assert "rename it to spanlight.db" in err
