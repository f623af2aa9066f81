"""Where the store lives: ``--db`` beats ``DATABASE_URL`` beats the embedded SQLite file.

The default is ``data/halluscope.db`` under the project folder (override the folder with
``HALLUSCOPE_DATA_DIR``). Configuration comes from environment variables only: ``st.secrets`` raises on
a real server when no secrets file exists.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """The folder for the default database and generated demo images."""
    return Path(os.environ.get("HALLUSCOPE_DATA_DIR") or PROJECT_ROOT / "data")


def default_sqlite_url() -> str:
    return f"sqlite:///{data_dir() / 'halluscope.db'}"


def resolve_url(explicit: str | None = None) -> str:
    """The database URL to use, normalised so PostgreSQL goes through psycopg 3."""
    url = explicit or os.environ.get("DATABASE_URL") or default_sqlite_url()
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def redact(url: str) -> str:
    """The URL with any password masked, for messages and logs."""
    head, sep, tail = url.partition("@")
    if not sep or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, userinfo = head.partition("//")
    user = userinfo.split(":", 1)[0]
    return f"{scheme}//{user}:***@{tail}"
