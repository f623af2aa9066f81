"""The store's JSON columns read back exactly what :func:`json.loads` gives, through the fast parser or not."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine
from sqlalchemy import text as sql

from db.access import OPERATOR
from db.exporter import export_bundle
from db.importer import import_bundle
from db.json_columns import loads
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    SentenceLabelRecord,
)

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()  # unbounded: past 64 bits too
    | st.floats()  # NaN and the infinities too
    | st.text()  # lone surrogates too
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def _same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN and -0.0 told from 0.0, and every number of the same type."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


@given(_VALUES, st.booleans())
def test_loads_gives_what_json_loads_gives(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert _same(loads(text), json.loads(text))
    assert _same(loads(text.encode("utf-8", "surrogatepass")), json.loads(text))


def test_the_cases_the_fast_parser_reads_differently() -> None:
    for text in (
        '{"n": 123456789012345678901234567890}',  # orjson: a float
        '{"n": -9223372036854775809}',  # orjson: a float
        '{"nan": NaN, "inf": Infinity, "ninf": -Infinity}',  # orjson: refused
        '{"s": "\\ud800"}',  # orjson: refused
        '{"big": 1e400}',  # orjson: refused
    ):
        assert _same(loads(text), json.loads(text)), text


def test_label_metadata_comes_back_exact_from_the_store(engine: Engine) -> None:
    meta = {
        "big": 2**70,
        "negative": -(2**63) - 1,
        "ratio": 0.1 + 0.2,
        "id": "img_00000000000000000001",
    }
    bundle = Bundle(
        dataset=DatasetRecord("json", "canonical"),
        items=[ItemRecord("a", "One. Two.")],
        label_sets=[
            LabelSetRecord(
                "gold",
                "gold",
                annotations=[
                    Annotations("a", sentence_labels=[SentenceLabelRecord(0, "correct", meta=meta)])
                ],
            )
        ],
    )
    import_bundle(engine, bundle, actor=OPERATOR)
    if engine.dialect.name == "sqlite":  # PostgreSQL's json type holds none of these
        # An import refuses them now (db.value_check), but a SQLite store written before may hold them.
        meta |= {"nan": math.nan, "inf": -math.inf, "surrogate": "\ud800"}
        with engine.begin() as connection:
            connection.execute(sql("UPDATE sentence_labels SET metadata = :meta"), {"meta": json.dumps(meta)})
    back = export_bundle(engine, "json", actor=OPERATOR).label_sets[0].annotations[0].sentence_labels[0].meta
    assert _same(back, meta)


def test_every_engine_reads_json_columns_this_way(engine: Engine) -> None:
    assert engine.dialect._json_deserializer is loads  # type: ignore[attr-defined]
