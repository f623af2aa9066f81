"""The layers keep to their side of the one-way flow: file → formats → db → analysis → pages.

Each rule reads the import statements of every module (also those inside functions), so a shortcut
taken anywhere in a module breaks the build, not only one at its top.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app_pages", "components", "analysis", "render", "metrics", "formats", "db", "demo", "detectors")


def _modules() -> list[Path]:
    found = [ROOT / "app.py", ROOT / "cli.py", ROOT / "server.py", ROOT / "page_table.py"]
    for package in PACKAGES:
        found += sorted(p for p in (ROOT / package).rglob("*.py") if "migrations" not in p.parts)
    return found


def _imports(path: Path) -> set[str]:
    """Every module name an import statement in ``path`` names (``from a.b import c`` gives a.b, a.b.c)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _layer(path: Path) -> str:
    relative = path.relative_to(ROOT)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _hits(names: set[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(n == f or n.startswith(f + ".") for f in forbidden))


# layer → the imports it must never make, and why
RULES: dict[str, tuple[tuple[str, ...], str]] = {
    "metrics": (
        ("streamlit", "db", "sqlalchemy", "formats", "analysis", "render", "components", "pandas"),
        "the papers' formulas are pure numpy/scipy",
    ),
    "formats": (
        ("streamlit", "db", "sqlalchemy", "analysis", "render", "components", "app_pages"),
        "file readers and writers never touch the store or the UI",
    ),
    "analysis": (
        ("streamlit", "db.engine", "sqlalchemy.orm", "components", "app_pages"),
        "analysis is data in, tables out: no UI, no sessions",
    ),
    "render": (
        ("streamlit", "db", "sqlalchemy", "components", "app_pages"),
        "renderers draw what they are given",
    ),
    "detectors": (
        ("streamlit", "db", "sqlalchemy", "analysis", "render", "components", "app_pages"),
        "prompts, parsers and HTTP calls never touch the store or the UI; a run's store is handed in",
    ),
    "db": (
        ("streamlit", "analysis", "render", "components", "app_pages"),
        "the store knows nothing of the UI",
    ),
    "demo": (("streamlit", "components", "app_pages"), "the demo builds data, not pages"),
    "cli": (("streamlit", "components", "app_pages"), "the command line runs without a browser"),
    "app_pages": (("sqlalchemy",), "pages read through db repositories and never build SQL"),
    "server": (
        ("sqlalchemy", "app_pages", "components"),
        "the server routes requests; the pages do the rest",
    ),
}


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_keeps_to_its_layer(path: Path) -> None:
    rule = RULES.get(_layer(path))
    if rule is None:
        return
    forbidden, why = rule
    assert not _hits(_imports(path), forbidden), f"{path.relative_to(ROOT)}: {why}"


def test_streamlit_lives_only_in_the_app_pages_and_components() -> None:
    users = {str(p.relative_to(ROOT)) for p in _modules() if _hits(_imports(p), ("streamlit",))}
    allowed = ("app.py", "server.py", "app_pages/", "components/")
    assert sorted(u for u in users if not u.startswith(allowed)) == []


def test_components_hold_streamlit_code_only() -> None:
    """Everything in components/ uses Streamlit, itself or through another component (a cache by store
    revision, a widget); pure code belongs in analysis/ or render/."""
    pure = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "components").rglob("*.py")
        if p.name != "__init__.py" and not _hits(_imports(p), ("streamlit", "components"))
    ]
    assert pure == []


@pytest.mark.parametrize("layers", [("analysis", "render"), ("metrics", "formats"), ("detectors",)])
def test_importing_the_pure_layers_loads_no_streamlit(layers: tuple[str, ...]) -> None:
    """Also what they import in turn: the command line and the benchmarks load them without a UI."""
    modules = [
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for layer in layers
        for p in sorted((ROOT / layer).rglob("*.py"))
    ]
    script = f"import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\n" + (
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('streamlit', 'components'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_the_rules_see_real_imports() -> None:
    """Guard against a rule that cannot fail: the checker does find the imports it looks for."""
    assert "streamlit" in _imports(ROOT / "components" / "navigation.py")
    assert _hits(_imports(ROOT / "components" / "page_setup.py"), ("db",))
