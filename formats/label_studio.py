"""Label Studio JSON: tasks with text and image and ``labels`` results, so teams can move over both ways.

A task is ``{id, data: {text, image, …}, annotations: [{completed_by, ground_truth, result: […]}],
predictions: [{model_version, result: […]}]}``; a ``labels`` result is ``{from_name, to_name, type:
"labels", value: {start, end, text, labels: [type]}}``. Annotations marked ``ground_truth`` become the gold
label set, other annotations one human label set per ``completed_by``, predictions one detector label set
per ``model_version``. The label ``Hallucination`` stands for an untyped span. Besides the text, prompt
and image, a task's ``data`` carries the item's ``reference`` answer, ``subset``, ``split``,
``source_model`` and ``task_type`` (when not image-to-text), so that they read back as they were.

Where an annotator stands on an item is said as Label Studio says it: a submitted annotation is the item
done (an empty result: checked, nothing found), a cancelled one (``was_cancelled``) the item skipped, and
a draft (``drafts: [{user, was_postponed, result}]``) spans not marked done yet, or, postponed, the item
marked unsure. A note beside a mark has no place, nor has gold's "skipped" or "unsure": the export says
so. Gold and a detector run are an annotation and a prediction of each item they cover. A file an earlier
version wrote (``completed_by`` a bare name) made an annotation of every person's spans, done or not: its
annotations say nothing of where their annotators stand.

Label Studio takes ``completed_by`` as one of its users: their id, or ``{id, email, …}`` (an import
finds the user by the e-mail address, an older one by the id). An annotator (and gold) is written as
``{id, email}``, the id numbered in the file and the name as the address, and read back by that name; a
name that is a number, a Label Studio user id read from its file, is written as that id.

Label Studio counts offsets in code points since 2021 (earlier versions counted UTF-16 units, so an
emoji shifted everything after it). Each span is checked against the ``text`` it carries: code points
first, UTF-16 units second (reported as a warning), otherwise the span is rejected as misplaced.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import count
from typing import Any

from formats.base import Format, ReadOptions, ReadResult
from formats.fields import RecordError, get_first_str, get_int, get_list, type_name
from formats.ids import external_id
from formats.json_documents import dump_json, load_json
from formats.problems import Problem, outside
from formats.record_loops import benchmark_items
from formats.records import (
    Annotations,
    Bundle,
    DatasetRecord,
    ItemRecord,
    ItemStatusRecord,
    LabelSetRecord,
    SpanRecord,
)
from formats.storable import unstorable
from formats.text import file_stem, head_text, looks_like_json

UNTYPED = "Hallucination"
SPANS = "spans"  # the task whose statuses a file holds
TEXT_KEYS = ("text", "response", "caption")
PROMPT_KEYS = ("prompt", "question")
IMAGE_KEYS = ("image", "image_url", "img")
# The item's fields a task's data carries beside its text, prompt and image.
ITEM_FIELDS = ("reference", "subset", "split", "source_model", "task_type")
DATA_KNOWN = (*TEXT_KEYS, *PROMPT_KEYS, *IMAGE_KEYS, "external_id", *ITEM_FIELDS)


def utf16_to_code_points(text: str, offset: int) -> int | None:
    """The code-point index of UTF-16 offset ``offset`` in ``text`` (None when it splits a character)."""
    units = 0
    for k, ch in enumerate(text):
        if units == offset:
            return k
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > offset:
            return None
    return len(text) if units == offset else None


def place(text: str, value: dict[str, Any], field: str) -> tuple[tuple[int, int], bool]:
    """Code-point offsets of one result, and whether they were converted from UTF-16 units."""
    start = get_int(value.get("start"), f"{field}.start")
    end = get_int(value.get("end"), f"{field}.end")
    quoted = value.get("text")
    if quoted is not None and not isinstance(quoted, str):
        raise RecordError(f"{field}.text", f"expected text, got {type_name(quoted)}")
    if 0 <= start < end <= len(text) and (quoted is None or text[start:end] == quoted):
        return (start, end), False
    if quoted is not None:
        s16, e16 = utf16_to_code_points(text, start), utf16_to_code_points(text, end)
        if s16 is not None and e16 is not None and s16 < e16 and text[s16:e16] == quoted:
            return (s16, e16), True
        raise RecordError(
            field, f"{quoted!r} is not the task text at {start}-{end} (in code points or UTF-16)"
        )
    raise RecordError(field, outside(start, end, "the text", len(text)))


def user_ids(label_sets: list[LabelSetRecord]) -> dict[tuple[str, str], Any]:
    """The ``completed_by`` of each gold and human label set, by kind and name: a distinct id with the
    name, or the id the name is."""
    people = [ls for ls in label_sets if ls.kind != "detector"]
    own = {ls.name: int(ls.name) for ls in people if re.fullmatch(r"[1-9][0-9]{0,8}", ls.name)}
    numbers = (n for n in count(1) if n not in own.values())
    users: dict[tuple[str, str], Any] = {}
    for label_set in people:
        name = label_set.name
        users[label_set.kind, name] = own[name] if name in own else {"id": next(numbers), "email": name}
    return users


def _whose(group: str, entry: dict[str, Any]) -> tuple[tuple[str, str] | None, str | None]:
    """The label set an annotation, prediction or draft belongs to, and where its annotator stands on
    the item (see the module docstring); no label set for a cancelled gold annotation."""
    if group == "predictions":
        return ("detector", str(entry.get("model_version") or "label-studio-predictions")), None
    if group == "drafts":
        return ("human", _who(entry.get("user"))), "unsure" if entry.get("was_postponed") else None
    if entry.get("ground_truth"):
        return (None, None) if entry.get("was_cancelled") else (("gold", "gold"), None)
    if entry.get("was_cancelled"):
        return ("human", _who(entry.get("completed_by"))), "skipped"
    return ("human", _who(entry.get("completed_by"))), None if _by_earlier_writer(entry) else "done"


def _by_earlier_writer(annotation: dict[str, Any]) -> bool:
    """Whether an annotation was written by an earlier version of this format's writer, which wrote every
    person's spans as an annotation, done or not, with ``completed_by`` their bare name: such a file says
    nothing of where they stand. (Label Studio writes a user's id, or an object; so does the writer now.)"""
    who = annotation.get("completed_by")
    return isinstance(who, str) and not who.isdigit()


def _spans(text: str, results: list[Any], field: str, warnings: list[tuple[str, str]]) -> list[SpanRecord]:
    """The spans of an entry's ``labels`` results (other results are named in a warning)."""
    spans = []
    for r, result in enumerate(results):
        rfield = f"{field}.result[{r}]"
        if not isinstance(result, dict):
            raise RecordError(rfield, f"expected an object, got {type_name(result)}")
        if result.get("type") != "labels":
            warnings.append((rfield, f"a {result.get('type')!r} result; only 'labels' results are read"))
            continue
        value = result.get("value")
        if not isinstance(value, dict):
            raise RecordError(f"{rfield}.value", f"expected an object, got {type_name(value)}")
        (start, end), converted = place(text, value, f"{rfield}.value")
        if converted:
            warnings.append((rfield, "offsets were UTF-16 units (an older Label Studio); converted"))
        labels = value.get("labels") or []
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise RecordError(f"{rfield}.value.labels", "expected a list of label names")
        spans += [SpanRecord(start, end, None if name == UNTYPED else name) for name in labels or [UNTYPED]]
    return spans


def _who(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("email") or value.get("username") or value.get("id") or "label-studio")
    return str(value) if value not in (None, "") else "label-studio"


class LabelStudioFormat(Format):
    name = "label-studio"
    holds_statuses = True  # an annotation, a cancelled one, a draft: done, skipped, not yet or unsure
    holds = ("span",)
    writes_every_label_set = True
    title = "Label Studio JSON (tasks with labels)"
    description = (
        "Label Studio export: tasks {data: {text, image}, annotations, predictions} with labels results."
    )

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data)
        if (
            looks_like_json(data)
            and '"data"' in head
            and ('"annotations"' in head or '"predictions"' in head)
        ):
            return 0.85
        return 0.0

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        options = options or ReadOptions()
        document, problems = load_json(data, source)
        if document is None:
            return ReadResult(None, problems)
        tasks = [document] if isinstance(document, dict) else document
        if not isinstance(tasks, list):
            problems.append(Problem(source, "-", "-", f"expected a list of tasks, got {type_name(document)}"))
            return ReadResult(None, problems)
        stem = file_stem(source)
        label_sets: dict[tuple[str, str], dict[str, Annotations]] = {}
        items, said_by_task = benchmark_items(
            enumerate(tasks),
            source,
            problems,
            lambda task, index, warnings: self._task(task, index, stem, warnings),
        )
        for item, said in zip(items, said_by_task, strict=True):
            item.subset = options.subset or item.subset
            for key, given in said.items():
                annotations = label_sets.setdefault(key, {}).setdefault(
                    item.external_id, Annotations(item.external_id)
                )
                annotations.spans += given.spans
                annotations.statuses += given.statuses
        types = sorted(
            {s.type for sets in label_sets.values() for a in sets.values() for s in a.spans if s.type}
        )
        bundle = Bundle(
            dataset=DatasetRecord(
                name=options.dataset or stem, source_format=self.name, taxonomy=types, label_kinds=["span"]
            ),
            items=items,
            label_sets=[
                LabelSetRecord(
                    kind=kind,
                    name=name,
                    annotator=name if kind == "human" else None,
                    annotations=list(a.values()),
                )
                for (kind, name), a in label_sets.items()
            ],
        )
        return ReadResult(bundle, problems)

    def _task(
        self, task: Any, index: int, stem: str, warnings: list[tuple[str, str]]
    ) -> tuple[ItemRecord, dict[tuple[str, str], Annotations]]:
        if not isinstance(task, dict):
            raise RecordError("-", f"expected a task object, got {type_name(task)}")
        bad = unstorable(task)
        if bad:
            raise RecordError(*bad)
        values = task.get("data")
        if not isinstance(values, dict):
            raise RecordError("data", f"expected an object, got {type_name(values)}")
        _, text = get_first_str(values, TEXT_KEYS)
        assert text is not None
        ext, _ = external_id(values, ("external_id",), "")
        if not ext:
            ext, _ = external_id(task, ("id",), f"{stem}-{index}")
        said: dict[tuple[str, str], Annotations] = {}
        for group in ("annotations", "predictions", "drafts"):
            for a, entry in enumerate(get_list(task, group, required=False)):
                field = f"{group}[{a}]"
                if not isinstance(entry, dict):
                    raise RecordError(field, f"expected an object, got {type_name(entry)}")
                key, status = _whose(group, entry)
                if key is None:
                    warnings.append((field, "a cancelled gold annotation; skipped"))
                    continue
                if group == "drafts" and key in said:
                    warnings.append((field, "a draft beside the annotation of the same annotator; skipped"))
                    continue
                given = said.setdefault(key, Annotations(ext))
                if status and not given.statuses:
                    given.statuses.append(ItemStatusRecord(SPANS, status))
                given.spans += _spans(text, get_list(entry, "result", required=False), field, warnings)
        _, prompt = get_first_str(values, PROMPT_KEYS, required=False)
        _, image = get_first_str(values, IMAGE_KEYS, required=False)
        # Another tool's task may use these names for something else: only text is taken as the item's.
        fields = {k: values[k] for k in ITEM_FIELDS if isinstance(values.get(k), str)}
        item = ItemRecord(
            external_id=ext,
            response=text,
            prompt=prompt or "",
            image_ref=image,
            meta={
                "data": {
                    k: v
                    for k, v in values.items()
                    if k not in DATA_KNOWN or (k in ITEM_FIELDS and k not in fields)
                }
            },
            **fields,
        )
        return item, said

    def changed_in_writing(self, batch: Bundle, label_set: LabelSetRecord) -> Counter[str]:
        """The marks on items a file has no place for: a note beside an annotator's mark, and gold's
        "skipped" or "unsure" (only an annotator's are kept, in a cancelled annotation or a draft)."""
        changed: Counter[str] = Counter()
        for said in label_set.annotations:
            mark = next((s for s in said.statuses if s.task == SPANS), None)
            if mark is None:
                continue
            if _status(said, label_set) != mark.status:
                changed[f"items marked {mark.status} are written without the mark"] += 1
            elif mark.note:
                changed[f"notes of items marked {mark.status} are not in the file"] += 1
        return changed

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        by_set = [(ls, {a.item: a for a in ls.annotations}) for ls in bundle.label_sets]
        users = user_ids(bundle.label_sets)
        tasks = []
        for index, item in enumerate(bundle.items):
            data = {
                **(item.meta.get("data") or {}),
                "text": item.response,
                "prompt": item.prompt,
                "image": item.image_ref,
                "external_id": item.external_id,
            }
            data.update(
                (k, getattr(item, k))
                for k in ITEM_FIELDS
                if getattr(item, k) is not None and (k != "task_type" or item.task_type != "image-to-text")
            )
            task: dict[str, Any] = {"id": index + 1, "data": data, "annotations": [], "predictions": []}
            for label_set, by_item in by_set:
                said = by_item.get(item.external_id)
                if said is None:
                    continue
                status = _status(said, label_set)
                if not (said.spans or status):
                    continue
                result = [
                    {
                        "id": f"{label_set.kind[0]}{k}",
                        "from_name": "label",
                        "to_name": "text",
                        "type": "labels",
                        "value": {
                            "start": s.start,
                            "end": s.end,
                            "text": item.response[s.start : s.end],
                            "labels": [s.type or UNTYPED],
                        },
                    }
                    for k, s in enumerate(said.spans)
                ]
                user = users.get((label_set.kind, label_set.name))
                if label_set.kind == "detector":
                    # (a run given the item, flagged nothing: an empty result)
                    task["predictions"].append({"model_version": label_set.name, "result": result})
                elif label_set.kind == "human" and status in (None, "unsure"):
                    draft = {"user": _address(user), "was_postponed": status == "unsure", "result": result}
                    task.setdefault("drafts", []).append(draft)
                else:  # gold, or an annotator's item done or skipped
                    # (an item checked and found clean is an annotation with an empty result)
                    annotation = {
                        "completed_by": user,
                        "ground_truth": label_set.kind == "gold",
                        "result": result,
                    }
                    if label_set.kind == "human" and status == "skipped":
                        annotation["was_cancelled"] = True
                    task["annotations"].append(annotation)
            tasks.append(task)
        return dump_json(tasks)


def _status(said: Annotations, label_set: LabelSetRecord) -> str | None:
    """Where the label set stands on the item's spans, as a file says it: ``done`` (checked, whether or
    not it found any; for a detector run or gold, given the item), an annotator's ``skipped`` or
    ``unsure``, or nowhere yet."""
    status = next((s.status for s in said.statuses if s.task == SPANS), None)
    return status if label_set.kind == "human" or status == "done" else None


def _address(user: Any) -> str:
    """A draft's user as Label Studio writes it: the e-mail address (or the id, as text)."""
    return str(user["email"] if isinstance(user, dict) else user)


FORMAT = LabelStudioFormat()
