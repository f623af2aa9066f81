"""analysis/ and render/ are plain Python: no Streamlit, no database sessions of their own.

They may call ``db.repositories`` read functions that take an Engine; caching by store revision and
everything on screen belong to ``components/`` and the pages.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BANNED = ("streamlit", "db.engine", "sqlalchemy.orm", "components", "app_pages")
SOURCES = sorted(p for layer in ("analysis", "render") for p in (ROOT / layer).rglob("*.py"))


def _imported(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_imports_nothing_from_the_ui_or_the_engine(path: Path) -> None:
    found = [n for n in _imported(path) if any(n == b or n.startswith(f"{b}.") for b in BANNED)]
    assert found == [], f"{path.relative_to(ROOT)} imports {found}"


def test_importing_both_layers_loads_no_streamlit() -> None:
    modules = [".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__") for p in SOURCES]
    script = f"import sys, importlib\nfor m in {modules!r}: importlib.import_module(m)\n" + (
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('streamlit', 'components'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
