"""Prepared exports: written whole into a ticket's own folder, found by the ticket alone, gone once expired."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from db import prepared_exports as prepared
from db.access import OPERATOR, Actor, Forbidden
from db.export_files import FormatError, export_file
from db.importer import import_bundle
from db.repositories.accounts import set_disabled, set_role
from db.repositories.annotators import get_or_create_annotator
from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, SpanRecord


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def _store(engine: Engine, name: str = "d/../x") -> None:
    gold = LabelSetRecord("gold", "gold", annotations=[Annotations("a", spans=[SpanRecord(0, 3, "Object")])])
    bundle = Bundle(DatasetRecord(name, "canonical"), items=[ItemRecord("a", "Two cats.")], label_sets=[gold])
    import_bundle(engine, bundle, actor=OPERATOR)


def _team_member(engine: Engine, monkeypatch: pytest.MonkeyPatch, name: str, role: str) -> Actor:
    """A person of ``role`` in team mode, on the store of :func:`_store`."""
    _store(engine)
    person = get_or_create_annotator(engine, name, role=role)
    monkeypatch.setenv("SPANLIGHT_MODE", "team")
    return Actor(person.id, person.name, role)


def _prepare(
    engine: Engine, filename: str = "x.jsonl", *, fmt: str = "canonical", actor: Actor = OPERATOR, **more: Any
) -> prepared.PreparedExport:
    """The dataset of :func:`_store` prepared for download."""
    return prepared.prepare_export(
        engine, "d/../x", fmt, actor=actor, label_sets=None, filename=filename, **more
    )


def test_a_prepared_file_is_the_export_and_is_found_by_its_ticket(engine: Engine, data: Path) -> None:
    _store(engine)
    told: list[int] = []
    made = _prepare(engine, "../d/x.jsonl", items_done=told.append)
    assert told == [1]
    assert made.path.parent == data / "exports" / made.ticket  # the name cannot leave its folder
    assert made.path.name == "_d_x.jsonl"
    assert made.path.read_bytes() == export_file(engine, "d/../x", "canonical", actor=OPERATOR)
    assert made.size == made.path.stat().st_size
    assert prepared.prepared_file(made.ticket) == made.path
    for wrong in ("", "..", made.ticket[:-1], made.ticket + "a", "../" + made.ticket[3:]):
        assert prepared.prepared_file(wrong) is None
    prepared.discard_export(made.ticket)
    assert prepared.prepared_file(made.ticket) is None
    assert not (data / "exports" / made.ticket).exists()


def test_a_long_name_is_cut_to_fit_the_disk_keeping_its_extension(engine: Engine, data: Path) -> None:
    _store(engine)
    for long_name in ("数" * 120 + ".jsonl", "a" * 300 + ".jsonl"):
        made = _prepare(engine, long_name)
        assert made.path.suffix == ".jsonl" and made.path.stem == long_name[: len(made.path.stem)]
        assert len(made.path.name.encode()) <= 160 and made.path.read_bytes()


def test_an_expired_file_is_not_served_and_is_swept(engine: Engine, data: Path) -> None:
    _store(engine)
    old, new = _prepare(engine), _prepare(engine)
    past = time.time() - prepared.LIFETIME_S - 1
    os.utime(old.path.parent, (past, past))
    assert prepared.prepared_file(old.ticket) is None
    assert prepared.prepared_file(new.ticket) == new.path
    assert prepared.sweep_exports() == 1
    assert sorted(p.name for p in (data / "exports").iterdir()) == [new.ticket]


def test_a_refused_export_leaves_no_folder(
    engine: Engine, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    viewer = _team_member(engine, monkeypatch, "vic", "viewer")
    with pytest.raises(FormatError):  # AlignBench holds sentence labels; this dataset has only spans
        _prepare(engine, "x.csv", fmt="alignbench")
    with pytest.raises(Forbidden):
        _prepare(engine, actor=viewer)
    assert not any((data / "exports").glob("*"))


def test_a_download_is_refused_once_its_preparer_may_no_longer_export(
    engine: Engine, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reviewer = _team_member(engine, monkeypatch, "rita", "reviewer")

    first = _prepare(engine, actor=reviewer)
    assert prepared.download_file(engine, first.ticket) == first.path
    set_role(engine, "rita", "annotator", actor=OPERATOR)
    with pytest.raises(Forbidden, match="annotator role cannot export"):
        prepared.download_file(engine, first.ticket)
    set_role(engine, "rita", "reviewer", actor=OPERATOR)
    second = _prepare(engine, actor=reviewer)
    set_disabled(engine, "rita", True, actor=OPERATOR)
    with pytest.raises(Forbidden, match="disabled"):
        prepared.download_file(engine, second.ticket)
    with pytest.raises(prepared.ExportGone):
        prepared.download_file(engine, "x" * 32)


def test_the_link_exists_only_where_the_route_is_served(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prepared, "_served_at", [])
    assert prepared.download_link("t") is None
    prepared.serve_downloads_at("/base/api/download")
    assert prepared.download_link("t") == "/base/api/download/t"
