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
