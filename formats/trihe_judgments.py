"""Tri-HE model runs: triplets extracted from a model's answers, and the judge's verdict on each.

The Tri-HE scripts add to each instance of ``tri-he.json`` the keys ``<model>_triplets`` (the extracted
triplets) and ``<model>_triplets_judgements`` (``yes`` / ``no`` / null per triplet; ``"null"`` too; or
the judge's sentence, which says "My answer is no" or begins "No." / "Yes,"); the model's answer may be under ``<model>`` or ``<model>_answer``. A ``no`` may name the wrong part
(``object1``, ``object2``, ``relation``): read from the judge's sentence ("The error is related to
'object1'") or from ``<model>_triplets_error_parts``. ``<model>`` is found in the file; when it holds
several runs, the detector name picks one.

A triplet that is not three parts, or a verdict that is none of the above (a leading answer the judge
takes back, "No, I cannot tell.", among them), is reported and kept as the model's raw output; the
item's judgments are then not imported (their format was not followed).
"""

from __future__ import annotations

import json
import re
from typing import Any

from formats.base import Format, ReadOptions, ReadResult
from formats.bundles import detector_bundle
from formats.fields import RecordError, type_name
from formats.json_documents import dump_json, load_document
from formats.problems import Problem
from formats.record_loops import in_dataset
from formats.records import Annotations, Bundle, RawOutputRecord, TripletRecord, pick_label_set
from formats.storable import unstorable
from formats.text import head_text, looks_like_json
from formats.trihe import (
    ANSWERING_MODEL,
    SUFFIX_JUDGEMENTS,
    SUFFIX_PARTS,
    SUFFIX_TRIPLETS,
    add_run,
    build_document,
    instance_id,
    parse_triplet,
    run_keys,
)

_VERDICT = re.compile(r"my answer is\s*['\"]?(yes|no)['\"]?", re.IGNORECASE)
# A judge that answers first, then explains ("No. The error is related to 'object2'.").
_LEADING = re.compile(r"\s*['\"]?(yes|no)['\"]?(?:\s*[.,;:!]|\s*$|[ \t]*\r?\n)", re.IGNORECASE)
# A leading answer the judge then takes back ("No, I cannot tell."): no verdict. Only the judge speaking
# of its own judgement counts ("I cannot tell", "it is impossible to say", "not enough information"); the
# words of a reason about the image do not ("we cannot say he is sitting", "the woman looks unsure").
# ("My answer is no" is the judge's own verdict line, whatever its reasons say.)
_HEDGE = re.compile(
    r"\bI\s*(?:cannot|can't|can not|could not|couldn't|am unable to|'m unable to)\s+"
    r"(?:tell|determine|judge|say|decide|verify|be sure)\b"
    r"|\b(?:I am|I'm)\s+(?:not\s+(?:sure|certain)|unsure)\b"
    r"|\bI\s+(?:don't|do not)\s+know\b"
    r"|\b(?:it is|it's)\s+(?:impossible|not possible|hard|difficult|unclear)\s+to\s+(?:tell|determine|judge|say)\b"
    r"|\b(?:it is|it's)\s+unclear\b"
    r"|\bnot enough (?:information|evidence|detail)\b"
    r"|\bcannot be (?:determined|told|judged)\b",
    re.IGNORECASE,
)
_PART = re.compile(r"related to\s*['\"]?(object1|object2|relation)['\"]?", re.IGNORECASE)


def model_keys(document: dict[str, Any]) -> list[str]:
    """Model names with ``<model>_triplets`` keys in any instance, in order of appearance."""
    return [model for model, keys in run_keys(document).items() if f"{model}{SUFFIX_TRIPLETS}" in keys]


def verdict_of(value: Any, part: Any = None) -> tuple[str | None, str | None]:
    """``(verdict, wrong part)`` of one judgment; RecordError when it is none of the accepted forms."""
    wrong = part if part in ("object1", "object2", "relation") else None
    if value is None or (isinstance(value, str) and value.strip().lower() in ("null", "none", "")):
        return None, None
    if isinstance(value, dict):
        return verdict_of(value.get("verdict", value.get("judgement")), value.get("wrong_part", part))
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("yes", "no"):
            return text, wrong if text == "no" else None
        said = _VERDICT.search(value) or _LEADING.match(value)
        if said and said.re is _LEADING and _HEDGE.search(value):
            raise RecordError(
                "judgement", f"{value!r} takes its answer back (the judge cannot tell): not yes, no or null"
            )
        if said:
            verdict = said.group(1).lower()
            named = _PART.search(value)
            return verdict, (named.group(1).lower() if named else wrong) if verdict == "no" else None
    raise RecordError("judgement", f"{value!r} is not yes, no or null")


class TriHEJudgmentsFormat(Format):
    name = "trihe-judgments"
    holds = ("triplet", "output")
    title = "Tri-HE extracted triplets with yes/no/null judgments"
    kind = "predictions"
    description = "tri-he.json with <model>_triplets and <model>_triplets_judgements added per instance."

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data, 1 << 20)
        if looks_like_json(data) == "{" and '"instance"' in head and SUFFIX_JUDGEMENTS in head:
            return 0.95
        return 0.0

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        options = options or ReadOptions()
        document, problems = load_document(data, source, dict, "an object keyed by image id")
        if document is None:
            return ReadResult(None, problems)
        models = model_keys(document)
        wanted = options.tag or options.detector
        if len(models) == 1:
            model = models[0]
        elif wanted in models:
            model = wanted
        else:
            reason = (
                f"holds runs of {', '.join(models)}; name one as the detector"
                if models
                else "holds no <model>_triplets keys"
            )
            problems.append(Problem(source, "-", "-", f"the file {reason}"))
            return ReadResult(None, problems)
        annotations = []
        for image_id, entry in document.items():
            instances = entry.get("instance") if isinstance(entry, dict) else None
            if not isinstance(instances, list):
                problems.append(Problem(source, f"image {image_id}", "instance", "expected a list"))
                continue
            for n, instance in enumerate(instances):
                where = f"image {image_id} instance {n}"
                if not isinstance(instance, dict) or f"{model}{SUFFIX_TRIPLETS}" not in instance:
                    continue
                try:
                    ext = instance_id(image_id, n, instance)
                except RecordError as error:
                    problems.append(Problem(source, where, error.field, error.reason))
                    continue
                if ext not in options.known:
                    problems.append(
                        Problem(source, where, "-", f"no item {ext!r} in {in_dataset(options.dataset)}")
                    )
                    continue
                bad = unstorable(instance)
                if bad:
                    problems.append(Problem(source, where, *bad))
                    continue
                annotations.append(self._instance(ext, model, instance, source, where, problems))
        bundle = detector_bundle(options, annotations, "trihe")
        bundle.label_sets[0].meta[ANSWERING_MODEL] = model  # whose answers: the file's keys, on export too
        return ReadResult(bundle, problems)

    @staticmethod
    def _instance(
        ext: str, model: str, instance: dict[str, Any], source: str, where: str, problems: list[Problem]
    ) -> Annotations:
        extracted = instance.get(f"{model}{SUFFIX_TRIPLETS}")
        judgements = instance.get(f"{model}{SUFFIX_JUDGEMENTS}")
        parts = instance.get(f"{model}{SUFFIX_PARTS}")
        answer = next(
            (
                instance[k]
                for k in (model, f"{model}_answer", f"{model}_response")
                if isinstance(instance.get(k), str)
            ),
            None,
        )
        raw_text = json.dumps(
            {"answer": answer, "triplets": extracted, "judgements": judgements, "error_parts": parts},
            ensure_ascii=False,
        )
        try:
            if not isinstance(extracted, list):
                raise RecordError(f"{model}{SUFFIX_TRIPLETS}", f"expected a list, got {type_name(extracted)}")
            if judgements is not None and (
                not isinstance(judgements, list) or len(judgements) != len(extracted)
            ):
                raise RecordError(
                    f"{model}{SUFFIX_JUDGEMENTS}", "expected one judgement per extracted triplet"
                )
            if parts is not None and (not isinstance(parts, list) or len(parts) != len(extracted)):
                raise RecordError(f"{model}{SUFFIX_PARTS}", "expected one entry per extracted triplet")
            triplets = []
            for k, value in enumerate(extracted):
                parsed = parse_triplet(value)
                if parsed is None:
                    raise RecordError(
                        f"{model}{SUFFIX_TRIPLETS}[{k}]", f"{value!r} is not (subject, relation, object)"
                    )
                try:
                    verdict, wrong = verdict_of(
                        judgements[k] if judgements is not None else None,
                        parts[k] if parts is not None else None,
                    )
                except RecordError as error:
                    raise RecordError(f"{model}{SUFFIX_JUDGEMENTS}[{k}]", error.reason) from None
                triplets.append(TripletRecord(*parsed, verdict=verdict, wrong_part=wrong))
        except RecordError as error:
            problems.append(
                Problem(source, where, error.field, f"kept without judgments: {error.reason}", "warning")
            )
            return Annotations(ext, raw_output=RawOutputRecord(raw_text, False, parse_error=error.reason))
        return Annotations(ext, triplets=triplets, raw_output=RawOutputRecord(raw_text, True))

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        document = build_document(bundle)
        label_set = pick_label_set(bundle, "detector")
        if label_set is not None:
            add_run(document, bundle, label_set)
        return dump_json(document, indent=1)

    def default_filename(self, dataset: str) -> str:
        return f"{dataset}.judgements.json"


FORMAT = TriHEJudgmentsFormat()
