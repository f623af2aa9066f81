"""Detector outputs in the MHALO style: the response copied with each hallucinated span tagged.

An output (MHALO appendix D) is a header line, optionally an ``<Analysis>…</Analysis>`` part
(Analyze-then-Judge), then ``<Tagged_Text>…</Tagged_Text>`` with ``<hallucination>…</hallucination>``
around each span; other detectors use the other elements MHALO tried (``<A>…</A>``, ``<Bb>``, ``<@>``).
Unless the run's tag is given, it is guessed among those names only (see :func:`is_span_tag`), never
taken from markup the response itself holds (``<strong>``), and is ``hallucination`` otherwise.
Records are ``{id, output}`` (also ``response``, ``prediction``, ``raw_output``, ``model_output``) in a
JSON list or JSON lines, or one object mapping item id -> output.

The output is stored exactly as produced, with its analysis and whether it followed the format: MHALO's
IF (section 4.1) as the metrics contract defines it (:func:`metrics.follows_format`): the tags parse and
the text holds the response's words, whitespace aside. A copy that joins or splits a word
(``is<hallucination>sitting</hallucination>`` for ``is sitting``, ``awindow`` for ``a window``) does not
follow it, though a gold file's copy may (:func:`formats.alignment.spans_on_copy`: a benchmark's own
tags are its data; a detector's copy is what IF measures). Spans are placed on the stored response
character by character, ignoring whitespace. An output that does not follow the format is kept, visible
and counted (as 0 in the tables), with no spans — never dropped.

A run of which (nearly) no output holds its item's response is refused whole instead
(:class:`formats.record_formats.RunTextChecks`): it is the run over another dataset whose ids collide
with this one's, not a detector that failed every item. That check is looser than IF, so a detector's
own slips of the right dataset never trip it: the response found anywhere in the output, whitespace and
the run's tags aside (a header or an unclosed tag around a faithful copy), or a copy of at least its
first half (an output cut short) counts as matching. An output that is a JSON list or object, another
format's output that failed there and was written here as its text, holds no response to match and is
not counted.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from typing import Any

from formats.alignment import (
    NotACopy,
    first_difference_ignoring_whitespace,
    first_word_difference,
    norm_ws,
    spans_on_copy,
)
from formats.base import FormatError, KnownItem, ReadOptions
from formats.bundles import detector_outputs
from formats.fields import get_first_str
from formats.json_documents import dump_jsonl
from formats.markers import explain_broken_tags, insert_markers, overlapping
from formats.record_formats import PredictionRecordsFormat, TextCheck, Warnings
from formats.records import Annotations, Bundle, LabelSetRecord, RawOutputRecord, SpanRecord, pick_label_set
from formats.text import head_text, looks_like_json
from metrics.tagged_text import WRAPPER_CLOSE, WRAPPER_OPEN, parse_tagged

_MARKUP = re.compile(r"<[^<>]{1,80}>")  # any tag, to compare an output's words with a response's
# A record's key in the file's text: a quoted name, not escaped (a key inside an output's JSON text is).
RECORD_KEY = re.compile(r'(?<!\\)"(\w+)"\s*:')
OUTPUT_KEYS = ("output", "response", "prediction", "raw_output", "model_output", "generated_text", "value")
DEFAULT_TAG = "hallucination"
_ANALYSIS = re.compile(r"<Analysis>(.*?)</Analysis>", re.DOTALL | re.IGNORECASE)
# A marker ``<name>`` whose name could be a span tag: a word, or one of the symbols MHALO tried.
_TAG_NAME = re.compile(r"<([A-Za-z][\w-]{0,40}|[@#&])>")


def is_span_tag(name: str) -> bool:
    """Whether ``name`` is a tag detectors mark hallucinated spans with: MHALO's own ``hallucination``,
    or one of the other XML elements its appendix C.2 (Table 7) prompted with — one letter (``A``,
    ``b``), a letter pair in mixed case (``aA``, ``Bb``) or ``@``, ``#``, ``&``.

    Only these are guessed: a response often holds markup of its own (``<strong>``, ``<code>``), which a
    faithful copy repeats and which is no span tag.
    """
    if name == DEFAULT_TAG or name in ("@", "#", "&"):
        return True
    if len(name) == 1:
        return name.isascii() and name.isalpha()
    return (
        len(name) == 2
        and name.isascii()
        and name.isalpha()
        and name[0] != name[1]
        and name.lower()[0] == name.lower()[1]
    )


def find_tag(output: str, response: str = "") -> str:
    """The span tag an output uses, else ``hallucination`` (the tag of MHALO datasets).

    The candidates are the names :func:`is_span_tag` accepts that are opened and closed inside
    ``<Tagged_Text>`` (the whole output without it) and that are not markup of the ``response`` itself;
    ``hallucination`` wins when present, else the most frequent.
    """
    body = output
    start = output.find("<Tagged_Text>")
    if start != -1:
        end = output.find("</Tagged_Text>", start)
        body = output[start : end if end != -1 else len(output)]
    names = Counter(
        name
        for name in (m.group(1) for m in _TAG_NAME.finditer(body))
        if is_span_tag(name) and f"</{name}>" in body and f"<{name}>" not in response
    )
    if not names or DEFAULT_TAG in names:
        return DEFAULT_TAG
    return names.most_common(1)[0][0]


def read_output(output: str, response: str, tag: str | None) -> tuple[list[tuple[int, int]], RawOutputRecord]:
    """Spans on ``response`` and the raw output record (with the IF flag and any parse error)."""
    analysis_match = _ANALYSIS.search(output)
    analysis = analysis_match.group(1).strip() if analysis_match else None
    tag = tag or find_tag(output, response)
    try:
        text, spans = parse_tagged(output, tag)
    except ValueError as error:
        return [], RawOutputRecord(
            output, False, analysis, f"tags do not parse: {explain_broken_tags(output, tag, error)}"
        )
    try:
        placed, _ = spans_on_copy(text, spans, response)
    except NotACopy as difference:
        return [], RawOutputRecord(
            output, False, analysis, f"the tagged text is not the response {difference}"
        )
    if norm_ws(text) != norm_ws(response):  # the same characters, but words joined or split
        return [], RawOutputRecord(
            output,
            False,
            analysis,
            f"the tagged text joins or splits words of the response {first_word_difference(text, response)}",
        )
    return [span for span in placed if span is not None], RawOutputRecord(output, True, analysis)


class MhaloOutputsFormat(PredictionRecordsFormat[tuple[str | None, str | None]]):
    name = "mhalo-outputs"
    holds = ("span", "output")
    holds_span_types = False
    title = "MHALO-style detector outputs (<Tagged_Text>)"
    source_format = "mhalo"
    read_before_repeat = True
    description = "Records {id, output} where output holds <Tagged_Text> with <hallucination> (or any) tags."

    def sniff(self, data: bytes, filename: str = "") -> float:
        """Outputs in ``<Tagged_Text>``; else records keyed ``id`` and ``output`` alone, as this format
        writes them: a run whose first outputs all failed their format (another format's outputs,
        written as their text) shows no ``<Tagged_Text>``, and is still this format's file."""
        head = head_text(data)
        if not looks_like_json(data):
            return 0.0
        if "Tagged_Text" in head:
            return 0.9
        return 0.5 if set(RECORD_KEY.findall(head)) == {"id", "output"} else 0.0

    def record_fields(self, record: dict[str, Any]) -> tuple[str | None, str | None]:
        return get_first_str(record, OUTPUT_KEYS)

    def annotate(
        self,
        ext: str,
        record: dict[str, Any],
        fields: tuple[str | None, str | None],
        item: KnownItem,
        options: ReadOptions,
        warnings: Warnings,
    ) -> Annotations:
        key, output = fields
        spans, raw = read_output(output or "", item.response, options.tag)
        if not raw.follows_format:
            warnings.append((key or "output", f"kept without spans: {raw.parse_error}"))
        return Annotations(ext, [SpanRecord(s, e) for s, e in spans], raw_output=raw)

    def text_check(
        self,
        fields: tuple[str | None, str | None],
        item: KnownItem,
        options: ReadOptions,
        annotations: Annotations,
    ) -> TextCheck | None:
        if annotations.raw_output is not None and annotations.raw_output.follows_format:
            return TextCheck(True)  # its tagged text is the response: placed on it, nothing to look for
        _, output = fields
        return copy_check(output or "", item.response, options.tag or find_tag(output or "", item.response))

    def changed_in_writing(self, batch: Bundle, label_set: LabelSetRecord) -> Counter[str]:
        by_item = {a.item: a for a in label_set.annotations}
        changed = super().changed_in_writing(batch, label_set)  # the span types, the cut outputs
        for item in batch.items:
            if item.external_id in by_item:
                changed += written_output(item.response, by_item[item.external_id], label_set.name)[1]
        return changed

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        label_set = pick_label_set(bundle, "detector")
        name = label_set.name if label_set is not None else ""
        rows = [
            {"id": item.external_id, "output": written_output(item.response, detected, name)[0]}
            for item, detected in detector_outputs(bundle)
        ]
        return dump_jsonl(rows)

    def default_filename(self, dataset: str) -> str:
        return f"{dataset}.outputs.jsonl"


def copy_check(output: str, response: str, tag: str) -> TextCheck | None:
    """Whether ``output`` holds ``response`` (see the module's docstring), whatever its tags' format;
    None when its tagged text is empty (a detector that answered nothing says nothing of the dataset),
    or when it is a JSON list or object: another format's output that failed there (word indices that
    could not be placed), written here as its text, which holds no response of any dataset. Counted,
    they would have a run of them, exported here and read back, refused as one over another dataset."""
    without_tags = output.replace(f"<{tag}>", "").replace(f"</{tag}>", "")
    dense_response = "".join(response.split())
    if dense_response in "".join(without_tags.split()):
        return TextCheck(True)
    # Marked with tags of its own (``<Hallucination>``, ``<error type="x">``), which the guess of the
    # run's tag does not know: every output then breaks the format, but it is a copy of this response.
    bare_response = "".join(_MARKUP.sub("", response).split())
    if bare_response and bare_response in "".join(_MARKUP.sub("", output).split()):
        return TextCheck(True)
    start = without_tags.find(WRAPPER_OPEN)
    text = without_tags
    if start != -1:
        end = without_tags.find(WRAPPER_CLOSE, start)
        text = without_tags[start + len(WRAPPER_OPEN) : end if end != -1 else len(without_tags)]
    dense_text = "".join(text.split())
    if not dense_text or _json_value(output):
        return None
    if 2 * len(dense_text) >= len(dense_response) and dense_response.startswith(dense_text):
        return TextCheck(True)
    difference = first_difference_ignoring_whitespace(text.strip(), response)
    return TextCheck(False, f"the tagged text is not the response {difference}")


def _json_value(output: str) -> bool:
    """Whether ``output`` is a JSON list or object as a whole (another format's output)."""
    if output.lstrip()[:1] not in ("[", "{"):
        return False
    try:
        return isinstance(json.loads(output), list | dict)
    except ValueError:
        return False


FAILED_AS_TEXT = "outputs that failed their format are written as their text (read back, they fail still)"
REPLACED = "raw outputs are replaced by the response tagged with their spans"


def written_output(response: str, detected: Annotations, label_set: str = "") -> tuple[str, Counter[str]]:
    """The output a record holds for a detector's annotations of ``response``, and what reads back
    otherwise than they say, as :meth:`~formats.base.Format.changed_in_writing` counts it.

    An output read back as the same spans and the same verdict on the format is written as it came. An
    output that failed its format is written as its text, which fails again. Any other — spans from
    elsewhere, or an output in another format's shape (a word-index list copied here read back as no
    MHALO output at all) — is written as the response tagged with its spans. Every written output is
    read back first: one that would not give the same spans (spans that overlap, a response whose own
    text holds the tags) raises :class:`FormatError` naming the label set and the format that keeps it,
    rather than writing a file that says otherwise without a word.
    """
    raw = detected.raw_output
    spans = tuple(sorted({(s.start, s.end) for s in detected.spans}))
    fields = (raw.text, raw.follows_format, raw.analysis, raw.parse_error) if raw is not None else None
    return _written_output(label_set, detected.item, response, spans, fields)


@lru_cache(maxsize=4_096)  # more than an export's batch: each output is asked for again once counted
def _written_output(
    label_set: str,
    ext: str,
    response: str,
    spans: tuple[tuple[int, int], ...],
    raw_fields: tuple[Any, ...] | None,
) -> tuple[str, Counter[str]]:
    raw = RawOutputRecord(*raw_fields) if raw_fields is not None else None
    if raw is not None:
        back, back_raw = read_output(raw.text, response, None)
        if back_raw.follows_format == raw.follows_format and tuple(sorted(back)) == spans:
            return raw.text, Counter()  # the output as it came
        if not raw.follows_format and not back_raw.follows_format:
            return raw.text, Counter([FAILED_AS_TEXT])
        if not raw.follows_format:
            raise _cannot_write(
                label_set,
                ext,
                "its output failed its format, and its text reads as an MHALO output that follows it",
            )
    clash = overlapping(list(spans))
    if clash:
        raise _cannot_write(
            label_set, ext, f"spans {clash[0]} and {clash[1]} overlap; inline tags cannot express them"
        )
    tagged = insert_markers(response, [(s, e, f"<{DEFAULT_TAG}>", f"</{DEFAULT_TAG}>") for s, e in spans])
    output = f"{WRAPPER_OPEN}{tagged}{WRAPPER_CLOSE}"
    back, back_raw = read_output(output, response, None)
    if not back_raw.follows_format or tuple(sorted(back)) != spans:
        why = back_raw.parse_error or "its tagged response reads back as other spans"
        raise _cannot_write(label_set, ext, why)
    return output, Counter([REPLACED] if raw is not None else [])


def _cannot_write(label_set: str, ext: str, why: str) -> FormatError:
    return FormatError(
        f"detector:{label_set}, item {ext}: cannot be written as {MhaloOutputsFormat.title} so that it reads "
        f"back the same ({why}). Export it as canonical (keeps everything)"
    )


FORMAT = MhaloOutputsFormat()
