"""Annotators: who is working. Single-user mode names people; team mode adds passwords later.

An annotator row is created by their first saved label (:func:`get_or_create_annotator`), never by a
page visit (:func:`find_annotator` only reads), so names typed into the address bar leave no trace; in
team mode not even a save creates one (accounts are an admin's to make).
Names that would be mistaken for another source of labels ("gold", a detector run's name) and names
that are empty or hold control or invisible characters are refused with :class:`InvalidName`.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from sqlalchemy import Engine, func, select
from sqlalchemy.exc import IntegrityError

from db import models as m
from db.access import Forbidden, team_mode
from db.engine import read_session, write_session
from formats.problems import quoted
from formats.storable import unstorable

MAX_NAME_LENGTH = 200


@dataclass(frozen=True)
class AnnotatorView:
    id: int
    name: str
    role: str


class InvalidName(ValueError):
    """The name cannot be an annotator's; the message says why."""


def clean_name(name: str) -> str:
    """The name as stored: runs of whitespace become one space, none at the ends."""
    return " ".join(name.split())


def validate_name(engine: Engine, name: str) -> str:
    """The cleaned name, or :class:`InvalidName` for an empty, reserved or unprintable one."""
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in name):  # Cs: broken Unicode
        raise InvalidName("A name cannot hold control or invisible characters.")
    cleaned = clean_name(name)
    if not cleaned:
        raise InvalidName("An annotator needs a name.")
    if len(cleaned) > MAX_NAME_LENGTH:
        raise InvalidName(f"A name has at most {MAX_NAME_LENGTH} characters.")
    if cleaned.casefold() == "gold":
        raise InvalidName(f"{quoted(cleaned)} is reserved for the adjudicated labels; choose your own name.")
    with read_session(engine) as session:
        detector = session.scalar(
            select(m.LabelSet.name)
            .where(m.LabelSet.kind == "detector", func.lower(m.LabelSet.name) == cleaned.lower())
            .limit(1)
        )
    if detector is not None:
        raise InvalidName(f"{quoted(cleaned)} is the name of a detector run; choose your own name.")
    return cleaned


def find_annotator(engine: Engine, name: str) -> AnnotatorView | None:
    """The annotator of this name, if they have saved anything yet (reads only)."""
    if unstorable(name) is not None:  # no annotator has such a name; PostgreSQL refuses it mid-query
        return None
    with read_session(engine) as session:
        found = session.scalar(select(m.Annotator).where(m.Annotator.name == clean_name(name)))
        return None if found is None else AnnotatorView(found.id, found.name, found.role)


def get_or_create_annotator(engine: Engine, name: str, role: str = "annotator") -> AnnotatorView:
    """The annotator of this name, created if new — in local mode only: in team mode accounts are made
    by an admin (:func:`db.repositories.accounts.add_user`), so a typed name creates nothing
    (:class:`~db.access.Forbidden`)."""
    if role not in m.ROLES:
        raise ValueError(f"Unknown role {quoted(str(role))}; expected one of {', '.join(m.ROLES)}.")
    cleaned = validate_name(engine, name)
    found = find_annotator(engine, cleaned)
    if found is not None:
        return found
    if team_mode():
        raise Forbidden(f"There is no account {quoted(cleaned)}; in team mode an admin creates accounts.")
    try:
        with write_session(engine) as session:
            row = session.scalar(select(m.Annotator).where(m.Annotator.name == cleaned))
            if row is None:
                row = m.Annotator(name=cleaned, role=role)
                session.add(row)
                session.flush()
            return AnnotatorView(row.id, row.name, row.role)
    except IntegrityError:  # another session created the same name a moment ago
        found = find_annotator(engine, cleaned)
        if found is None:
            raise
        return found


def list_annotators(engine: Engine) -> list[AnnotatorView]:
    with read_session(engine) as session:
        return [
            AnnotatorView(a.id, a.name, a.role)
            for a in session.scalars(select(m.Annotator).order_by(m.Annotator.name))
        ]
