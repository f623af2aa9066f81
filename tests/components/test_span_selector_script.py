"""The span selector's script as Streamlit receives it: ``selector.js`` and the modules it imports,
joined by :func:`components.span_selector.assemble_script` into one module that must still parse."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import components.span_selector as span_selector
from components.span_selector import assemble_script
from tests.conftest import IN_CI

SELECTOR_JS = Path(span_selector.__file__).parent / "selector.js"


def test_the_script_has_every_module_once_and_no_imports() -> None:
    script = assemble_script(SELECTOR_JS)
    assert not re.search(r"^import\b", script, re.MULTILINE)
    assert re.findall(r"^export\b.*$", script, re.MULTILINE) == ["export default function (component) {"]
    helpers = [path for path in SELECTOR_JS.parent.glob("*.js") if path != SELECTOR_JS]
    assert helpers, "selector.js has no helper modules"
    for path in helpers:
        names = re.findall(
            r"^export (?:function|const) (\w+)", path.read_text(encoding="utf-8"), re.MULTILINE
        )
        assert names, f"{path.name} exports nothing"
        for name in names:
            declared = re.findall(rf"^(?:function|const) {name}\b", script, re.MULTILINE)
            assert len(declared) == 1, f"{name} from {path.name} is declared {len(declared)} times"


def test_the_script_parses_as_one_module(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        if IN_CI:
            pytest.fail("node is not installed")
        pytest.skip("node is not installed")
    script = tmp_path / "selector.mjs"
    script.write_text(assemble_script(SELECTOR_JS), encoding="utf-8")
    result = subprocess.run([node, "--check", str(script)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_imported_modules_come_once_before_their_importers(tmp_path: Path) -> None:
    (tmp_path / "base.js").write_text("export const BASE = 1;\n", encoding="utf-8")
    (tmp_path / "twice.js").write_text(
        'import { BASE } from "./base.js";\nexport function twice() {\n  return 2 * BASE;\n}\n',
        encoding="utf-8",
    )
    (tmp_path / "entry.js").write_text(
        'import {\n  BASE,\n} from "./base.js";\nimport { twice } from "./twice.js";\n'
        "export default function () {\n  return twice() + BASE;\n}\n",
        encoding="utf-8",
    )
    assert assemble_script(tmp_path / "entry.js") == (
        "const BASE = 1;\n\nfunction twice() {\n  return 2 * BASE;\n}\n\n"
        "export default function () {\n  return twice() + BASE;\n}\n"
    )


def test_other_imports_are_refused(tmp_path: Path) -> None:
    (tmp_path / "entry.js").write_text(
        'import confetti from "https://example.org/confetti.js";\nexport default function () {}\n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="entry.js"):
        assemble_script(tmp_path / "entry.js")
