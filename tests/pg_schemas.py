"""A PostgreSQL schema of its own for a test or a bench run: made, handed over as a URL, dropped.

Tests and benches share one PostgreSQL database; each works in a schema nobody else uses, named with
a random suffix, so runs side by side never see each other's tables."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, text


@contextmanager
def own_schema(base_url: str, prefix: str) -> Iterator[str]:
    """The database at ``base_url`` with a new, empty schema ``<prefix>_<random>`` as its search path;
    the schema and everything in it are dropped on leaving."""
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base_url)
    try:
        with admin.begin() as connection:
            connection.execute(text(f'CREATE SCHEMA "{schema}"'))
        try:
            yield f"{base_url}?options=-csearch_path%3D{schema}"
        finally:
            with admin.begin() as connection:
                connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    finally:
        admin.dispose()


def schema_of(url: str) -> str:
    """The schema an :func:`own_schema` URL searches."""
    return url.rsplit("search_path%3D", 1)[1]
