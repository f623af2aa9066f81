"""Where the store lives: ``--db`` beats ``DATABASE_URL`` beats the embedded SQLite file.

The default is ``data/spanlight.db`` under the project folder (override the folder with
``SPANLIGHT_DATA_DIR``). Configuration comes from environment variables only: ``st.secrets`` raises on
a real server when no secrets file exists.
"""

from __future__ import annotations

import os
from pathlib import Path

from db.legacy_settings import note_old_store, old_setting

PROJECT_ROOT = Path(__file__).resolve().parent.parent


STORE_FILE_NAME = "spanlight.db"


def setting(name: str) -> str | None:
    """``SPANLIGHT_<name>`` from the environment (or its pre-rename spelling); ``None`` when unset or empty."""
    value = os.environ.get(f"SPANLIGHT_{name}")
    if value is None:
        value = old_setting(name)
    return value or None


def data_dir() -> Path:
    """The folder for the default database and generated demo images."""
    return Path(setting("DATA_DIR") or PROJECT_ROOT / "data")


def default_sqlite_url() -> str:
    folder = data_dir()
    note_old_store(folder, STORE_FILE_NAME)
    return f"sqlite:///{folder / STORE_FILE_NAME}"


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
