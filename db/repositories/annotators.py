"""Annotators: who is working. Single-user mode names people; team mode adds passwords later."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, select

from db import models as m
from db.engine import read_session, write_session


@dataclass(frozen=True)
class AnnotatorView:
    id: int
    name: str
    role: str


def get_or_create_annotator(engine: Engine, name: str, role: str = "annotator") -> AnnotatorView:
    cleaned = " ".join(name.split())
    if not cleaned:
        raise ValueError("An annotator needs a name.")
    if role not in m.ROLES:
        raise ValueError(f"Unknown role {role!r}; expected one of {', '.join(m.ROLES)}.")
    with read_session(engine) as session:
        found = session.scalar(select(m.Annotator).where(m.Annotator.name == cleaned))
        if found is not None:
            return AnnotatorView(found.id, found.name, found.role)
    with write_session(engine) as session:
        found = session.scalar(select(m.Annotator).where(m.Annotator.name == cleaned))
        if found is None:
            found = m.Annotator(name=cleaned, role=role)
            session.add(found)
            session.flush()
        return AnnotatorView(found.id, found.name, found.role)


def list_annotators(engine: Engine) -> list[AnnotatorView]:
    with read_session(engine) as session:
        return [
            AnnotatorView(a.id, a.name, a.role)
            for a in session.scalars(select(m.Annotator).order_by(m.Annotator.name))
        ]
