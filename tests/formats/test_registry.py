"""The format registry: every format module's formats under their own names, each module loaded only when
one of its formats is asked for."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

import formats
from formats.base import Format
from formats.registry import _MODULE_OF, FORMATS, detect, get_format, module_formats

ROOT = Path(__file__).resolve().parents[2]


def test_each_name_is_the_name_its_module_gives_its_format() -> None:
    for module_name in set(_MODULE_OF.values()):
        defined = module_formats(module_name)
        assert set(defined) == {n for n, m in _MODULE_OF.items() if m == module_name}, module_name
        assert all(isinstance(fmt, Format) for fmt in defined.values())
    assert [FORMATS[name].name for name in FORMATS] == list(_MODULE_OF)


def test_every_module_defining_a_format_is_listed() -> None:
    def defines_one(module: object) -> bool:
        found = getattr(module, "FORMATS", None) or [getattr(module, "FORMAT", None)]
        return isinstance(found, list | tuple) and all(isinstance(f, Format) for f in found)

    modules = [info.name for info in pkgutil.iter_modules(formats.__path__)]
    defining = {name for name in modules if defines_one(import_module(f"formats.{name}"))}
    assert defining == set(_MODULE_OF.values())


def test_an_unknown_name_is_refused_with_the_known_ones() -> None:
    assert "nope" not in FORMATS and FORMATS.get("nope") is None
    try:
        get_format("nope")
    except LookupError as error:
        assert "unknown format 'nope'; known: alignbench, alignbench-localization" in str(error)
    else:
        raise AssertionError("an unknown format was found")


def test_naming_a_format_loads_its_module_alone() -> None:
    code = (
        "import sys\n"
        "from formats.registry import get_format\n"
        "get_format('alignbench-localization')\n"
        "print(sorted(m for m in sys.modules if m.startswith('formats.') and m[8:] in "
        f"{sorted(set(_MODULE_OF.values()))!r}))\n"
        "print('numpy' in sys.modules)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert shown[0] == "['formats.alignbench', 'formats.alignbench_scores']"  # the one it builds on
    assert shown[1] == "False"


# CSV files as spreadsheet programs save them ("CSV UTF-8" starts with a byte-order mark).
CSV_FILES = {
    "alignbench": "model,image_name,sentence_index,caption,annotation\nm,i.jpg,0,One.,correct\n",
    "alignbench-scores": "model,image_name,sentence_index,score\nm,i.jpg,0,80\n",
    "mmhal-ratings": "id,rating\na1,3\n",
    "mmhal-ratings-item-id": "item_id,rating,hallucination\na1,3,true\n",
}


@pytest.mark.parametrize("sample", sorted(CSV_FILES))
def test_a_csv_with_a_byte_order_mark_is_recognised_as_without(sample: str) -> None:
    name = sample.removesuffix("-item-id")
    data = CSV_FILES[sample].encode()
    kind = get_format(name).kind
    assert detect(data, "f.csv", kind)[0][0].name == name
    assert detect(b"\xef\xbb\xbf" + data, "f.csv", kind)[0][0].name == name
