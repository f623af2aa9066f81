"""The pre-rename spellings of the settings, honoured for a while so existing set-ups keep working.

The product was called HalluScope before it became Spanlight. A variable such as ``HALLUSCOPE_DATA_DIR``
is still read when its ``SPANLIGHT_`` spelling is not set, with one deprecation line per variable on
standard error; a store left at the old default file name is pointed out the same way. This module is
the only place that knows the old name.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_OLD_PREFIX = "HALLUSCOPE_"
_OLD_STORE_NAME = "halluscope.db"
_said: set[str] = set()


def _say_once(key: str, message: str) -> None:
    if key not in _said:
        _said.add(key)
        print(f"Deprecated: {message}", file=sys.stderr)


def old_setting(name: str) -> str | None:
    """``HALLUSCOPE_<name>`` from the environment, saying once that ``SPANLIGHT_<name>`` replaces it."""
    value = os.environ.get(_OLD_PREFIX + name)
    if value is not None:
        _say_once(name, f"{_OLD_PREFIX}{name} is read for now; set SPANLIGHT_{name} instead.")
    return value


def note_old_store(folder: Path, new_name: str) -> None:
    """Say once that a store under the old default name sits unused beside the new default."""
    old = folder / _OLD_STORE_NAME
    if old.exists() and not (folder / new_name).exists():
        _say_once(
            "store",
            f"{old} is the store's old default name; stop the app and rename it to {new_name} "
            "(with its -wal and -shm files) to keep using it.",
        )
