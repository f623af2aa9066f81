"""The package surface: contract names, pure dependencies, documented formulas, runnable examples."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import subprocess
import sys

import pytest

import metrics

CONTRACT = [
    "f1_iou",
    "f1_m",
    "parse_tagged",
    "follows_format",
    "token_spans",
    "auroc",
    "localization_precision",
    "mean_iou",
    "claim_scores",
    "segment_labels",
    "hallu_rates",
    "ece",
    "ace",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
]
MODULES = [f"metrics.{m.name}" for m in pkgutil.iter_modules(metrics.__path__)]


def test_contract_names_are_exported():
    for name in CONTRACT:
        assert callable(getattr(metrics, name)), name
    assert set(CONTRACT) <= set(metrics.__all__)
    assert all(hasattr(metrics, name) for name in metrics.__all__)


def test_runtime_imports_only_numpy_and_scipy():
    code = (
        "import sys, metrics\n"
        "banned = ('streamlit', 'sqlalchemy', 'pandas', 'sklearn', 'statsmodels', 'hypothesis', 'krippendorff',"
        " 'db', 'components', 'analysis', 'render', 'pages')\n"
        "print(','.join(m for m in banned if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


@pytest.mark.parametrize("name", [n for n in metrics.__all__ if callable(getattr(metrics, n))])
def test_public_functions_document_their_source(name):
    doc = inspect.getdoc(getattr(metrics, name)) or ""
    assert len(doc) > 60, f"{name} needs a docstring that states what it computes"


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_the_names_typed_are_the_names_loaded_on_use():
    """The imports a type checker reads and the table the package loads its names from at run time say
    the same: each name from the same module."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(metrics.__file__).read_text(encoding="utf-8"))
    (typed,) = [node for node in tree.body if isinstance(node, ast.If)]
    imported = {
        node.module.removeprefix("metrics."): tuple(alias.name for alias in node.names) for node in typed.body
    }
    assert imported == metrics._EXPORTS


def test_one_function_loads_its_module_alone():
    code = "import sys\nfrom metrics import parse_tagged\nprint('numpy' in sys.modules, 'metrics.ranking' in sys.modules)\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]
    assert "parse_tagged" in dir(metrics) and "no_such_name" not in dir(metrics)
    with pytest.raises(AttributeError, match="no_such_name"):
        metrics.no_such_name  # noqa: B018 - the lookup is what is tested
