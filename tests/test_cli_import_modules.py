"""A command loads only what it needs: importing a file does not load the analysis libraries (SciPy,
Streamlit, Plotly), and ``cli.py --help`` does not even load the store's libraries. Checked in a fresh
process, as a user starts one, since a test process has loaded everything already."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs cli.py as ``__main__`` and prints the modules it loaded, as JSON, as its last line.
_LOADED = """
import json, runpy, sys
sys.argv = ["cli.py", *sys.argv[1:]]
try:
    runpy.run_path("cli.py", run_name="__main__")
except SystemExit as stop:
    code = stop.code
sys.stdout.flush()
print("\\n" + json.dumps({"code": code, "loaded": sorted(sys.modules)}))
"""


def loaded_by(*argv: str) -> tuple[int, set[str], str]:
    """The command's exit code, the modules it loaded (packages and their submodules), its output."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    last = json.loads(done.stdout.rstrip().splitlines()[-1])
    return last["code"], set(last["loaded"]), done.stdout + done.stderr


def test_importing_a_file_loads_no_analysis_library(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "model,image_name,sentence_index,caption,annotation\n"
        "m,a.jpg,0,A dog sits.,correct\n"
        "m,a.jpg,1,It is red.,incorrect\n"
    )
    code, loaded, out = loaded_by("import", "--db", f"sqlite:///{tmp_path / 's.db'}", str(rows))
    assert code == 0, out
    assert "1 new items" in out
    assert "sqlalchemy" in loaded  # the check sees what the command loaded
    assert not loaded & {"scipy", "streamlit", "plotly", "pandas"}, out
    # Nor, on SQLite, SQLAlchemy's PostgreSQL dialect (0.06-0.1 s of every command's start); an export
    # reads through the items' repository too, whose PostgreSQL search binds an array.
    assert "sqlalchemy.dialects.sqlite" in loaded and "sqlalchemy.dialects.postgresql" not in loaded
    code, loaded, out = loaded_by(
        "export",
        "--db",
        f"sqlite:///{tmp_path / 's.db'}",
        "--dataset",
        "rows",
        "--format",
        "canonical",
        "--out",
        str(tmp_path / "out.jsonl"),
    )
    assert code == 0, out
    assert "db.repositories.items" in loaded and "sqlalchemy.dialects.postgresql" not in loaded


def test_help_loads_no_store_library() -> None:
    code, loaded, out = loaded_by("--help")
    assert code == 0 and "import" in out
    assert not loaded & {"sqlalchemy", "alembic", "numpy", "scipy"}
