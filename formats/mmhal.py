"""MMHal-Bench: questions about images, each with a model's answer rated as a whole from 0 to 6.

The benchmark file is a JSON array (JSON lines are read too) of records ``{question_type,
question_topic, image_id, image_src, image_content, question, gt_answer, model_answer}``. Each record
is one item: the question is the prompt, the model's answer the response, the standard human answer
the reference and the question type the subset. The image is looked up by the file name of
``image_src`` (a web address in the release: the images are downloaded into the dataset's image
folder), and ``image_content`` (the image's object labels, which the judge is shown) and every other
field are kept with the item, so the file is written back as it was.

Records have no id of their own; an item's id is the record's position and its image id
(``007-<image_id>``), which stays the same as long as the file's order does (the benchmark's own
scoring relies on that order too). A record's ``id`` or ``question_id`` is used when it has one (and
is written back as it was, with every other field).

The protocol rates each response 0-6 (:data:`RUBRIC`) and says whether it hallucinates; a rating of
2 or less is a hallucination (Sun et al., 2023, "Aligning Large Multimodal Models with Factually
Augmented RLHF"). A record that carries a judge's rating — ``rating`` (or ``score``), ``hallucination``,
or the judge's review text ending in ``Rating: N`` (``review``, ``gpt4_review``, ``evaluation`` or
``rationale``; a ``Hallucination: yes/no`` in it is read too) — brings it as a response score of a
detector label set named after the judge (``judge`` field, else the detector name given, else
``judge``). A rating outside 0-6, or a review with no rating in it, is an error of that record.

A rating need not be a judge's: a dataset's gold ratings, or an annotator's, are written with
``rated_by`` (``gold`` or ``annotator``; ``judge``, the default, for a judge's), so that they read back
as the gold label set or as that annotator's rather than as a detector run named ``gold``. The
annotator's name is then the ``judge`` field (gold's name too, when it is not ``gold``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlparse

from formats.base import Format, ReadOptions, ReadResult
from formats.fields import RecordError, as_float, get_str, storable_object, type_name
from formats.ids import external_id
from formats.json_documents import dump_json, load_records
from formats.record_loops import benchmark_items
from formats.records import (
    RESPONSE_SCALE,
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    LabelSetRecord,
    ResponseScoreRecord,
)
from formats.text import file_stem, head_text, looks_like_json

# The judge's rubric (the benchmark's evaluation prompt): what each rating means.
RUBRIC: dict[int, str] = {
    6: "very informative with good analysis or reasoning, no hallucination",
    5: "very informative, no hallucination",
    4: "somewhat informative, no hallucination",
    3: "not informative, no hallucination",
    2: "very informative, with hallucination",
    1: "somewhat informative, with hallucination",
    0: "not informative, with hallucination",
}
# Whether each rating means a hallucinating response, in the rubric's own words ("…, with hallucination"
# or "…, no hallucination"): a rater's flag that says otherwise contradicts the rating they gave.
RUBRIC_HALLUCINATES: dict[int, bool] = {
    point: meaning.endswith(", with hallucination") for point, meaning in RUBRIC.items()
}
# Fields that become the item's own (the rest is kept in its metadata).
ITEM_KEYS = ("question", "model_answer", "gt_answer", "question_type")
ID_KEYS = ("id", "question_id")
RATING_KEYS = ("rating", "score")
REVIEW_KEYS = ("review", "gpt4_review", "evaluation", "rationale")
JUDGE_KEYS = ("judge", "judge_model")
# Everything a judge's rating brings; these belong to the judge's label set, not to the item.
RATING_FIELDS = (*RATING_KEYS, "hallucination", *REVIEW_KEYS, *JUDGE_KEYS)
# Whose rating a record carries (a judge's when the field is absent), and the kind of label set it is.
RATED_BY = "rated_by"
RATERS = {"judge": "detector", "gold": "gold", "annotator": "human"}
_RATER_OF_KIND = {kind: rater for rater, kind in RATERS.items()}
_RATING_IN_TEXT = re.compile(r"rating\s*[:：]\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)
_HALLUCINATION_IN_TEXT = re.compile(r"hallucination\s*[:：]\s*(yes|no)\b", re.IGNORECASE)
_YES = {"yes", "true", "1"}
_NO = {"no", "false", "0"}


# ------------------------------------------------------------------------------------ ratings


def _number(value: Any, field: str) -> float:
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise RecordError(field, f"expected a rating from 0 to 6, got {value!r}") from None
    elif isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordError(field, f"expected a rating from 0 to 6, got {type_name(value)}")
    else:
        number = as_float(value, field)
    if not math.isfinite(number):
        raise RecordError(field, f"expected a finite rating, got {value!r}")
    low, high = RESPONSE_SCALE
    if not low <= number <= high:
        raise RecordError(field, f"{number:g} is outside the scale {low}-{high}")
    return number


def _flag(value: Any, field: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, str | int) else None
    if text in _YES | _NO:
        return text in _YES
    raise RecordError(field, f"expected yes or no, got {value!r}")


def rating_of(record: Mapping[str, Any], warnings: list[tuple[str, str]]) -> ResponseScoreRecord | None:
    """The rating a record carries (None when it carries none); RecordError naming the field when it
    is not a rating from 0 to 6.

    A review text is the judge's explanation; its last ``Rating: N`` is the rating when no number is
    given (the rubric asks for the rating after the explanation). A given number that disagrees with
    the review is kept, with a warning.
    """
    rating_key = next((k for k in RATING_KEYS if record.get(k) is not None), None)
    review_key = next((k for k in REVIEW_KEYS if record.get(k) is not None), None)
    review = get_str(record, review_key, required=False) if review_key else None
    flag = _flag(record.get("hallucination"), "hallucination")
    if rating_key is None and review is None and flag is None:
        return None
    said = _said_rating(ResponseScoreRecord(0, rationale=review))
    if rating_key is not None:
        score = _number(record[rating_key], rating_key)
        if said is not None and said != score:
            warnings.append((review_key or "-", f"the review says Rating: {said:g}; kept {score:g}"))
    elif said is not None:
        assert review_key is not None
        score = _number(said, review_key)
    else:
        where = review_key or "rating"
        raise RecordError(where, "no rating: give rating (0-6) or a review ending in 'Rating: N'")
    if flag is None:
        flag = _said_flag(ResponseScoreRecord(score, rationale=review))
    return ResponseScoreRecord(score, flag, review)


def _said_rating(rated: ResponseScoreRecord) -> float | None:
    """The last ``Rating: N`` of the rationale (a judge's review), if any."""
    said = _RATING_IN_TEXT.findall(rated.rationale or "")
    return float(said[-1]) if said else None


def _said_flag(rated: ResponseScoreRecord) -> bool | None:
    """What the rationale's last ``Hallucination: yes/no`` says, if it says it."""
    named = _HALLUCINATION_IN_TEXT.findall(rated.rationale or "")
    return named[-1].lower() == "yes" if named else None


def judge_of(record: Mapping[str, Any], default: str) -> str:
    key = next((k for k in JUDGE_KEYS if record.get(k) is not None), None)
    name = get_str(record, key, allow_empty=False) if key else default
    return " ".join(name.split())


def rater_of(record: Mapping[str, Any], default_judge: str) -> tuple[str, str]:
    """The kind and name of the label set a record's rating belongs to (see :data:`RATERS`)."""
    rater = record.get(RATED_BY)
    if rater is None:
        return "detector", judge_of(record, default_judge)
    if rater not in RATERS:
        raise RecordError(RATED_BY, f"expected {', '.join(RATERS)}, got {rater!r}")
    kind = RATERS[rater]
    if kind == "detector":
        return kind, judge_of(record, default_judge)
    if kind == "gold":
        return kind, judge_of(record, "gold")
    if not any(record.get(k) is not None for k in JUDGE_KEYS):
        raise RecordError("judge", "missing: name the annotator whose rating this is")
    return kind, judge_of(record, "")


def rater_fields(label_set: LabelSetRecord, judge_key: str | None) -> dict[str, str]:
    """The fields naming whose rating a written record carries: ``rated_by`` unless a judge's, and the
    judge's or annotator's name (under ``judge_key``, the file's own name for it) unless it goes
    without saying (a judge called ``judge``, gold called ``gold``)."""
    fields = {}
    if label_set.kind != "detector":
        fields[RATED_BY] = _RATER_OF_KIND[label_set.kind]
    said = {"detector": "judge", "gold": "gold"}.get(label_set.kind)
    if judge_key or label_set.name != said:
        fields[judge_key or "judge"] = label_set.name
    return fields


def rating_fields(rated: ResponseScoreRecord) -> dict[str, Any]:
    """A response score as the fields an MMHal record or ratings row carries."""
    score: float | int = int(rated.score) if float(rated.score).is_integer() else rated.score
    fields: dict[str, Any] = {"rating": score}
    if rated.hallucination is not None:
        fields["hallucination"] = rated.hallucination
    if rated.rationale is not None:
        fields["rationale"] = rated.rationale
    return fields


def response_counts(label_set: LabelSetRecord) -> Mapping[str, int]:
    """A label set's response scores, counted as :meth:`Format.written_label_set` is given them."""
    return {"response": sum(a.response_score is not None for a in label_set.annotations)}


def scored_label_set(
    bundle: Bundle, counts: Callable[[LabelSetRecord], Mapping[str, int]] = response_counts
) -> LabelSetRecord | None:
    """The label set whose response scores a single-rater file carries: gold when it has any, else the
    first that has any (an export chooses it with its label-set choice)."""
    scored = [ls for ls in bundle.label_sets if counts(ls).get("response")]
    return next((ls for ls in scored if ls.kind == "gold"), scored[0] if scored else None)


def image_contents(meta: Mapping[str, Any]) -> list[str]:
    """The image's object labels an MMHal item keeps (what the judge is shown), else none."""
    value = (meta.get("fields") or {}).get("image_content")
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else []


# ------------------------------------------------------------------------------------ items


def _image_ref(source: str | None) -> str | None:
    """The file name an image is found under in the dataset's image folder."""
    if not source:
        return None
    path = urlparse(source).path if "://" in source else source
    return path.rstrip("/").rsplit("/", 1)[-1] or source


def read_record(
    record: Any, index: int, default_judge: str, warnings: list[tuple[str, str]]
) -> tuple[ItemRecord, tuple[str, str, ResponseScoreRecord] | None]:
    storable_object(record)
    image_id, _ = external_id(record, ("image_id",), "")
    fallback = f"{index:03d}-{image_id}" if image_id else f"{index:03d}"
    ext, _ = external_id(record, ID_KEYS, fallback)
    question = get_str(record, "question")
    answer = get_str(record, "model_answer")
    if not answer.strip():
        warnings.append(("model_answer", "is empty: there is no answer to rate"))
    contents = record.get("image_content")
    if contents is not None and not (
        isinstance(contents, str)
        or (isinstance(contents, list) and all(isinstance(c, str) for c in contents))
    ):
        raise RecordError("image_content", f"expected a list of labels, got {type_name(contents)}")
    source = get_str(record, "image_src", required=False)
    rated = rating_of(record, warnings)
    kind, judge = rater_of(record, default_judge) if rated is not None else ("", "")
    item = ItemRecord(
        external_id=ext,
        response=answer,
        prompt=question,
        subset=get_str(record, "question_type", required=False),
        reference=get_str(record, "gt_answer", required=False),
        image_ref=_image_ref(source),
        meta={
            "fields": {
                k: v
                for k, v in record.items()
                if k not in ITEM_KEYS and k not in RATING_FIELDS and k != RATED_BY
            },
            "layout": {
                "keys": list(record),
                "rating_key": next((k for k in RATING_KEYS if record.get(k) is not None), None),
                "review_key": next((k for k in REVIEW_KEYS if record.get(k) is not None), None),
                "judge_key": next((k for k in JUDGE_KEYS if record.get(k) is not None), None),
            },
        },
    )
    return item, ((kind, judge, rated) if rated is not None else None)


def _label_sets(rated: list[tuple[str, str, str, ResponseScoreRecord]]) -> list[LabelSetRecord]:
    by_rater: dict[tuple[str, str], LabelSetRecord] = {}
    for ext, kind, name, score in rated:
        label_set = by_rater.setdefault(
            (kind, name),
            LabelSetRecord(kind=kind, name=name, annotator=name if kind == "human" else None),
        )
        label_set.annotations.append(Annotations(item=ext, response_score=score))
    return list(by_rater.values())


class MMHalFormat(Format):
    name = "mmhal"
    title = "MMHal-Bench (questions, answers and 0-6 ratings)"
    extensions = (".json", ".jsonl")
    holds = ("response",)
    description = (
        "A JSON array of {question_type, image_id, image_src, image_content, question, gt_answer, "
        "model_answer}, optionally with a judge's rating, hallucination or review."
    )

    def written_label_set(
        self, bundle: Bundle, counts: Callable[[LabelSetRecord], Mapping[str, int]]
    ) -> LabelSetRecord | None:
        return scored_label_set(bundle, counts)

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data)
        if looks_like_json(data) and '"gt_answer"' in head and '"model_answer"' in head:
            return 0.9
        return 0.0

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        options = options or ReadOptions()
        records, problems = load_records(data, source)
        if records is None:
            return ReadResult(None, problems)
        default_judge = " ".join((options.detector or "judge").split()) or "judge"
        items, ratings = benchmark_items(
            records,
            source,
            problems,
            lambda record, index, warnings: read_record(record, index, default_judge, warnings),
        )
        for item in items:
            item.subset = options.subset or item.subset
        rated = [(i.external_id, *r) for i, r in zip(items, ratings, strict=True) if r is not None]
        bundle = Bundle(
            dataset=DatasetRecord(
                name=options.dataset or file_stem(source), source_format=self.name, label_kinds=["response"]
            ),
            items=items,
            label_sets=_label_sets(rated),
        )
        return ReadResult(bundle, problems)

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        scored = self.written_label_set(bundle, response_counts)
        ratings = {a.item: a.response_score for a in scored.annotations} if scored else {}
        rows = []
        for item in bundle.items:
            rated = ratings.get(item.external_id)
            layout = item.meta.get("layout") or {}
            extra: dict[str, Any] = {}
            if rated is not None:
                extra = rating_fields(rated)
                # What the review says (as the file had it) is not repeated beside it.
                if not layout.get("rating_key") and _said_rating(rated) == rated.score:
                    del extra["rating"]
                if (
                    "hallucination" not in (layout.get("keys") or [])
                    and _said_flag(rated) == rated.hallucination
                ):
                    extra.pop("hallucination", None)
                if scored is not None:
                    extra.update(rater_fields(scored, layout.get("judge_key")))
            rows.append(self._record(item, extra))
        return dump_json(rows)

    @staticmethod
    def _record(item: ItemRecord, rating: dict[str, Any]) -> dict[str, Any]:
        layout = item.meta.get("layout") or {}
        fields = item.meta.get("fields") or {}
        values: dict[str, Any] = {
            **fields,
            "question_type": item.subset,
            "question": item.prompt,
            "gt_answer": item.reference,
            "model_answer": item.response,
        }
        # A rating goes back under the names the file gave it (``score``, ``review`` …).
        names = {"rating": layout.get("rating_key"), "rationale": layout.get("review_key")}
        rating = {names.get(k) or k: v for k, v in rating.items()}
        keys = [k for k in layout.get("keys") or [] if k in values or k in rating]
        keys += [k for k in [*values, *rating] if k not in keys]
        return {k: rating[k] if k in rating else values[k] for k in keys}

    def default_filename(self, dataset: str) -> str:
        return f"{dataset}.mmhal.json"


FORMAT = MMHalFormat()
