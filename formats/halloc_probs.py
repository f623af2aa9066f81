"""HalLoc-style detector outputs: a probability per token that it is hallucinated (for calibration plots).

Records (JSON list or JSON lines) are ``{id, probabilities: [p, …]}`` with one probability per word of the
stored response (words: maximal runs of non-whitespace), optionally per type ``{id, probabilities:
{object: [...], attribute: [...]}}``, or ``{id, tokens: [{token, start, end, probability, type}]}`` with
character offsets. A count that does not match the words, a token whose text is not the response at its
offsets, or a probability outside [0, 1] is reported and the record keeps no probabilities.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from formats.base import KnownItem, ReadOptions
from formats.bundles import detector_outputs, raw_output_json
from formats.fields import RecordError, as_float, get_int, get_list, type_name
from formats.json_documents import dump_jsonl
from formats.problems import outside
from formats.record_formats import PredictionRecordsFormat, Warnings, kept_without
from formats.record_loops import ITEM_ID_KEYS
from formats.records import Annotations, Bundle, TokenProbabilityRecord
from formats.text import head_text, looks_like_json

_WORD = re.compile(r"\S+")


def _probability(value: Any, field: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(as_float(value, field))
    ):
        raise RecordError(field, f"expected a probability, got {value!r}")
    if not 0.0 <= value <= 1.0:
        raise RecordError(field, f"{value!r} is not in [0, 1]")
    return float(value)


def read_probabilities(record: dict[str, Any], response: str) -> list[TokenProbabilityRecord]:
    words = [m.span() for m in _WORD.finditer(response)]
    if "tokens" in record:
        tokens = get_list(record, "tokens")
        out = []
        for k, token in enumerate(tokens):
            field = f"tokens[{k}]"
            if not isinstance(token, dict):
                raise RecordError(field, f"expected an object, got {type_name(token)}")
            index = get_int(token.get("token_index", k), f"{field}.token_index")
            if "start" in token or "end" in token:
                start, end = (
                    get_int(token.get("start"), f"{field}.start"),
                    get_int(token.get("end"), f"{field}.end"),
                )
            elif 0 <= index < len(words):
                start, end = words[index]
            else:
                raise RecordError(field, f"word {index} does not exist ({len(words)} words)")
            if not 0 <= start < end <= len(response):
                raise RecordError(field, outside(start, end, "the response", len(response)))
            text = token.get("token")
            if text is not None and text != response[start:end]:
                raise RecordError(f"{field}.token", f"{text!r} is not the response at {start}-{end}")
            kind = token.get("type")
            if kind is not None and not isinstance(kind, str):
                raise RecordError(f"{field}.type", f"expected text, got {type_name(kind)}")
            probability = _probability(token.get("probability", token.get("prob")), f"{field}.probability")
            out.append(TokenProbabilityRecord(index, start, end, probability, kind))
        return out
    values = record.get("probabilities", record.get("probs", record.get("value")))
    by_type = values if isinstance(values, dict) else {None: values}
    out = []
    for kind, probabilities in by_type.items():
        field = "probabilities" if kind is None else f"probabilities.{kind}"
        if not isinstance(probabilities, list):
            raise RecordError(field, f"expected a list, got {type_name(probabilities)}")
        if len(probabilities) != len(words):
            raise RecordError(
                field, f"{len(probabilities)} probabilities for the response's {len(words)} words"
            )
        for k, value in enumerate(probabilities):
            start, end = words[k]
            out.append(TokenProbabilityRecord(k, start, end, _probability(value, f"{field}[{k}]"), kind))
    return out


class HalLocProbabilitiesFormat(PredictionRecordsFormat[None]):
    name = "halloc-probs"
    holds = ("probability", "output")  # a record kept without probabilities is written back as it came
    title = "Token probabilities (HalLoc-style)"
    source_format = "halloc"
    description = (
        "Records {id, probabilities: [p per word]} or {id, tokens: [{start, end, probability, type}]}."
    )

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data)
        if looks_like_json(data) and ('"probabilities"' in head or '"probability"' in head):
            return 0.8
        return 0.0

    def record_fields(self, record: dict[str, Any]) -> None:
        return None

    def annotate(
        self,
        ext: str,
        record: dict[str, Any],
        fields: None,
        item: KnownItem,
        options: ReadOptions,
        warnings: Warnings,
    ) -> Annotations:
        try:
            return Annotations(ext, token_probabilities=read_probabilities(record, item.response))
        except RecordError as error:
            raw = {k: v for k, v in record.items() if k not in ITEM_ID_KEYS}
            return kept_without("probabilities", ext, json.dumps(raw, ensure_ascii=False), error, warnings)

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        rows = []
        for item, detected in detector_outputs(bundle):
            if not detected.token_probabilities and detected.raw_output is not None:
                raw = raw_output_json(detected)
                rows.append({"id": item.external_id, **(raw if isinstance(raw, dict) else {})})
                continue
            tokens = [
                {
                    "token_index": t.token_index,
                    "start": t.start,
                    "end": t.end,
                    "token": item.response[t.start : t.end],
                    "probability": t.probability,
                    **({"type": t.type} if t.type else {}),
                }
                for t in detected.token_probabilities
            ]
            rows.append({"id": item.external_id, "tokens": tokens})
        return dump_jsonl(rows)

    def default_filename(self, dataset: str) -> str:
        return f"{dataset}.token-probabilities.jsonl"


FORMAT = HalLocProbabilitiesFormat()
