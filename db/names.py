"""Names that enter the store (datasets, label sets, annotators), trimmed the one way every path trims.

A name typed with spaces around it (`--detector " detA "` on the command line) read like another name
everywhere it is shown, so a second run "detA" appeared beside the first. Every import path trims a name
before it is looked up or written, and refuses one that is only white space. A name stored with spaces
before this rule still answers to its exact spelling: a given name that matches a stored one exactly is
kept as it is, so nothing stored becomes unreachable.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Engine, select

from db import models as m
from db.engine import read_session


class EmptyName(ValueError):
    """A name that is empty once the white space around it is taken off."""


def clean_name(given: str, what: str, stored: Callable[[str], bool] | None = None) -> str:
    """``given`` without the white space around it; ``given`` itself when ``stored`` says a stored
    name is spelt exactly so (an older name kept its spaces). Raises EmptyName for a blank name."""
    name = given.strip()
    if name != given and stored is not None and stored(given):
        return given
    if not name:
        raise EmptyName(f"the {what} name is empty" + (f" ({given!r} is only white space)" if given else ""))
    return name


def dataset_stored(engine: Engine) -> Callable[[str], bool]:
    def stored(name: str) -> bool:
        with read_session(engine) as session:
            return session.scalar(select(m.Dataset.id).where(m.Dataset.name == name)) is not None

    return stored


def label_set_stored(engine: Engine, dataset: str) -> Callable[[str], bool]:
    def stored(name: str) -> bool:
        with read_session(engine) as session:
            found = session.scalar(
                select(m.LabelSet.id)
                .join(m.Dataset, m.Dataset.id == m.LabelSet.dataset_id)
                .where(m.Dataset.name == dataset, m.LabelSet.name == name)
            )
            return found is not None

    return stored


def annotator_stored(engine: Engine) -> Callable[[str], bool]:
    def stored(name: str) -> bool:
        with read_session(engine) as session:
            return session.scalar(select(m.Annotator.id).where(m.Annotator.name == name)) is not None

    return stored
