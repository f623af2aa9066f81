"""Tri-HE: questions about GQA images with reference answers, triplets and scene objects.

``tri-he.json`` is one object keyed by image id; each value has ``instance`` (``question``, ``answer``,
``triplet``: the triplets supporting the answer), ``triplets`` (the image's scene graph, to which the
verified reasoning triplets were added), ``all_object`` and ``object``. Each question becomes an item
``<image id>/<n>`` with the answer as its response and the scene graph as its reference triplets (what a
model's extracted triplets are judged against). The image-level lists ride along in the item's meta so
an export rebuilds the file.

An item the file's numbering would not name — one of another dataset (``q1``), or a question whose
earlier sibling the dataset lacks (``42/1`` written first) — is written with its own id beside the
question (as ``spanlight_id``), and read back by it: numbered by position, a re-import would take it for another item.

Triplets are strings ``"(subject, relation, object)"``. A few in the release have more or fewer than
three parts (``"(Woman, reason for attention, Curiosity/Distraction, photographer)"``): they are kept
verbatim for export, reported, and not used as reference triplets, because splitting them would be a guess.

Model runs added to the same file (``<model>_triplets``, ``<model>_triplets_judgements``) are read by
:mod:`formats.trihe_judgments`, as a detector run over the stored items. A benchmark import keeps them
only as the questions' own fields (an export writes them back) and scores none of them, so it says so
(:func:`runs_note`): a file of answers and judgments must not look imported when its runs are not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from formats.base import Format, FormatError, ReadOptions, ReadResult
from formats.bundles import raw_output_json
from formats.fields import RecordError, get_list, get_str, type_name
from formats.ids import external_id, keys_with_id
from formats.json_documents import dump_json, load_document, loads
from formats.problems import Problem
from formats.records import Annotations, Bundle, DatasetRecord, ItemRecord, LabelSetRecord, TripletRecord
from formats.storable import unstorable
from formats.text import file_stem, head_text, looks_like_json

IMAGE_KEYS = ("instance", "triplets", "all_object", "object")
INSTANCE_KEYS = ("question", "answer", "triplet")
# An instance's item id where the file's numbering (``<image id>/<n>``) would name another item. Not
# ``id``: a benchmark file's own ``id`` (a question's number within its image, say) is one of its fields,
# kept as it came, and would merge items or rename them if it were read as theirs.
ID_KEY = "spanlight_id"
# A model's run, per instance: ``<model>_triplets`` extracted from its answer, the judge's
# ``<model>_triplets_judgements`` and (from some scripts) ``<model>_triplets_error_parts``.
SUFFIX_TRIPLETS = "_triplets"
SUFFIX_JUDGEMENTS = "_triplets_judgements"
SUFFIX_PARTS = "_triplets_error_parts"
RUN_SUFFIXES = (SUFFIX_TRIPLETS, SUFFIX_JUDGEMENTS, SUFFIX_PARTS)
# The label-set meta key naming the model whose answers a run judged (the ``<model>`` of its keys).
ANSWERING_MODEL = "answering_model"


def run_keys(document: dict[str, Any]) -> dict[str, list[str]]:
    """Each model with a run in the file, and its run keys (``<model>_triplets`` …), in order of
    appearance."""
    found: dict[str, dict[str, None]] = {}
    for entry in document.values():
        instances = entry.get("instance") if isinstance(entry, dict) else None
        for instance in instances if isinstance(instances, list) else []:
            for key in instance if isinstance(instance, dict) else ():
                suffix = next(
                    (s for s in (SUFFIX_JUDGEMENTS, SUFFIX_PARTS, SUFFIX_TRIPLETS) if key.endswith(s)), ""
                )
                if suffix and key != suffix:
                    found.setdefault(key[: -len(suffix)], {})[key] = None
    return {model: list(keys) for model, keys in found.items()}


def runs_note(document: dict[str, Any], source: str) -> Problem | None:
    """The warning of a benchmark import whose file also holds model runs, which it does not import."""
    runs = run_keys(document)
    if not runs:
        return None
    held = " and ".join(f"of model {model!r} ({', '.join(keys)})" for model, keys in runs.items())
    pick = "; the detector name picks the model" if len(runs) > 1 else ""
    return Problem(
        source,
        "-",
        "-",
        f"the file also holds runs {held}: a benchmark import keeps them only as the questions' fields and "
        f"scores none of them; import {'each' if len(runs) > 1 else 'it'} as a detector run (import-predictions, "
        f"or Detector outputs on the Import page, format trihe-judgments{pick})",
        "warning",
    )


def parse_triplet(text: Any) -> tuple[str, str, str] | None:
    """``(subject, relation, object)`` of ``"(a, b, c)"`` or ``["a", "b", "c"]``; None when not three parts."""
    if isinstance(text, list | tuple):
        parts = [p.strip() for p in text if isinstance(p, str)]
        return (parts[0], parts[1], parts[2]) if len(parts) == 3 == len(text) and all(parts) else None
    if not isinstance(text, str):
        return None
    inner = text.strip()
    if not (inner.startswith("(") and inner.endswith(")")):
        return None
    parts = [p.strip() for p in inner[1:-1].split(",")]
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 and all(parts) else None


def instance_id(image_id: str, n: int, instance: dict[str, Any]) -> str:
    """The item id of image ``image_id``'s ``n``-th instance: the ``id`` it gives, else ``<image id>/<n>``;
    RecordError when its ``id`` is no id. Both readers ask, so a run names the items the benchmark did."""
    return external_id(instance, (ID_KEY,), f"{image_id}/{n}")[0]


def triplet_text(triplet: TripletRecord) -> str:
    return f"({triplet.subject}, {triplet.relation}, {triplet.object})"


def read_scene_graph(values: list[Any]) -> tuple[list[TripletRecord], dict[str, Any], list[int]]:
    """Reference triplets, what the writer needs to restore the exact strings, and unparsed positions."""
    triplets, texts, unparsed = [], {}, []
    for k, value in enumerate(values):
        parsed = parse_triplet(value)
        if parsed is None:
            unparsed.append(k)
            texts[str(k)] = value
            continue
        record = TripletRecord(*parsed)
        if triplet_text(record) != value:
            texts[str(k)] = value  # spacing differs from "(a, b, c)": keep the original string
        triplets.append(record)
    return triplets, texts, unparsed


def write_scene_graph(triplets: list[TripletRecord], texts: dict[str, Any]) -> list[Any]:
    """The inverse of :func:`read_scene_graph`."""
    size = len(triplets) + sum(1 for k, v in texts.items() if parse_triplet(v) is None)
    out: list[Any] = []
    remaining = iter(triplets)
    for k in range(size):
        if str(k) in texts and parse_triplet(texts[str(k)]) is None:
            out.append(texts[str(k)])
            continue
        record = next(remaining, None)
        if record is None:
            break
        original = texts.get(str(k))
        out.append(
            original
            if original is not None
            and parse_triplet(original) == (record.subject, record.relation, record.object)
            else triplet_text(record)
        )
    out += [triplet_text(t) for t in remaining]
    return out


class TriHEFormat(Format):
    """The benchmark file, with every chosen label set that has triplets added as a model run in the
    file's own keys (as the Tri-HE scripts add them), so a detector's run is never silently left out."""

    name = "trihe"
    holds = ("triplet", "output")
    writes_every_label_set = True
    title = "Tri-HE (questions, reference triplets, scene objects)"
    description = (
        "One object keyed by image id: instance [{question, answer, triplet}], triplets, all_object, object;"
        " with <model>_triplets and <model>_triplets_judgements for each model run."
    )

    def sniff(self, data: bytes, filename: str = "") -> float:
        head = head_text(data)
        if looks_like_json(data) == "{" and '"instance"' in head and '"triplet' in head:
            return 0.9
        return 0.0

    def read(self, data: bytes, *, source: str, options: ReadOptions | None = None) -> ReadResult:
        options = options or ReadOptions()
        document, problems = load_document(data, source, dict, "an object keyed by image id")
        if document is None:
            return ReadResult(None, problems)
        items = []
        for image_id, entry in document.items():
            where = f"image {image_id}"
            try:
                items += self._image(image_id, entry, options, source, problems)
            except RecordError as error:
                problems.append(Problem(source, where, error.field, error.reason))
        runs = runs_note(document, source)
        if runs is not None:
            problems.append(runs)
        bundle = Bundle(
            dataset=DatasetRecord(
                name=options.dataset or file_stem(source), source_format=self.name, label_kinds=["triplet"]
            ),
            items=items,
        )
        return ReadResult(bundle, problems)

    def _image(
        self, image_id: str, entry: Any, options: ReadOptions, source: str, problems: list[Problem]
    ) -> list[ItemRecord]:
        if not isinstance(entry, dict):
            raise RecordError("-", f"expected an object, got {type_name(entry)}")
        bad = unstorable(entry)
        if bad:
            raise RecordError(*bad)
        instances = get_list(entry, "instance")
        scene = get_list(entry, "triplets", required=False)
        reference, texts, unparsed = read_scene_graph(scene)
        for k in unparsed:
            problems.append(
                Problem(
                    source,
                    f"image {image_id}",
                    f"triplets[{k}]",
                    f"{scene[k]!r} is not '(subject, relation, object)'; kept as text, not used as a reference",
                    "warning",
                )
            )
        image_meta = {
            "image_id": image_id,
            "all_object": entry.get("all_object"),
            "object": entry.get("object"),
            "scene_graph_texts": texts,
            "image_fields": {k: v for k, v in entry.items() if k not in IMAGE_KEYS},
            "image_keys": list(entry),
        }
        items = []
        for n, instance in enumerate(instances):
            where = f"image {image_id} instance {n}"
            try:
                if not isinstance(instance, dict):
                    raise RecordError("-", f"expected an object, got {type_name(instance)}")
                ext = instance_id(image_id, n, instance)
                question = get_str(instance, "question", allow_empty=False)
                answer = get_str(instance, "answer")
                answer_triplets = get_list(instance, "triplet", required=False)
            except RecordError as error:
                problems.append(Problem(source, where, f"instance[{n}].{error.field}", error.reason))
                continue
            items.append(
                ItemRecord(
                    external_id=ext,
                    response=answer or "",
                    prompt=question or "",
                    subset=options.subset,
                    image_ref=f"{image_id}.jpg",
                    reference_triplets=list(reference),
                    meta={
                        **image_meta,
                        "answer_triplets": answer_triplets,
                        "instance_fields": {
                            k: v for k, v in instance.items() if k not in (*INSTANCE_KEYS, ID_KEY)
                        },
                        "instance_keys": list(instance),
                    },
                )
            )
        return items

    def write(self, bundle: Bundle, *, filename: str = "") -> bytes:
        document = build_document(bundle)
        runs = [ls for ls in bundle.label_sets if any(a.triplets or _run_output(a) for a in ls.annotations)]
        outputs = [ls for ls in bundle.label_sets if any(a.raw_output for a in ls.annotations)]
        if not runs and outputs:  # raw outputs, but none a Tri-HE run's: the file would carry none of them
            raise FormatError(
                f"{outputs[0].kind}:{outputs[0].name}'s raw outputs are not Tri-HE runs (no triplets): "
                "the file would carry none of them. Export it as canonical (keeps everything)"
            )
        keys = [run_key(ls) for ls in runs]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            raise FormatError(
                f"two chosen label sets would both be written as the model {twice[0]!r} "
                f"({', '.join(f'{ls.kind}:{ls.name}' for ls in runs if run_key(ls) == twice[0])}): "
                "choose one of them"
            )
        for label_set in runs:
            add_run(document, bundle, label_set)
        return dump_json(document, indent=1)


def build_document(bundle: Bundle) -> dict[str, Any]:
    """The Tri-HE object for a bundle's items (instances grouped by image, in item order)."""
    document: dict[str, Any] = {}
    for item in bundle.items:
        meta = item.meta
        image_id = _image_of(item)
        position = len(document[image_id]["instance"]) if image_id in document else 0
        if image_id not in document:
            values = {
                "instance": [],
                "triplets": write_scene_graph(item.reference_triplets, meta.get("scene_graph_texts") or {}),
                "all_object": meta.get("all_object") or [],
                "object": meta.get("object") or [],
            }
            fields = meta.get("image_fields") or {}
            keys = meta.get("image_keys") or list(IMAGE_KEYS)
            document[image_id] = {k: values[k] if k in values else fields.get(k) for k in keys}
        values = {
            "question": item.prompt,
            "answer": item.response,
            "triplet": meta.get("answer_triplets") or [],
        }
        fields = meta.get("instance_fields") or {}
        keys = meta.get("instance_keys") or list(INSTANCE_KEYS)
        if item.external_id != f"{image_id}/{position}" or ID_KEY in keys:
            # Numbered by position, it would read back as another item (see the module's docstring).
            keys = keys_with_id(keys, ID_KEY)
            values[ID_KEY] = item.external_id
        document[image_id]["instance"].append({k: values[k] if k in values else fields.get(k) for k in keys})
    return document


def _image_of(item: ItemRecord) -> str:
    return str(item.meta.get("image_id") or item.external_id.rsplit("/", 1)[0])


def _instances(
    document: dict[str, Any], items: list[ItemRecord]
) -> Iterator[tuple[ItemRecord, dict[str, Any]]]:
    """Each item with its instance in :func:`build_document`'s ``document`` of these items (the k-th item
    of an image is its k-th instance, whatever its number in the file it came from)."""
    seen: Counter[str] = Counter()
    for item in items:
        image_id = _image_of(item)
        yield item, document[image_id]["instance"][seen[image_id]]
        seen[image_id] += 1


def _run_output(annotations: Annotations) -> dict[str, Any]:
    """A raw output in the Tri-HE run's own shape (an object with its ``triplets``), else empty."""
    return _run_shape(raw_output_json(annotations, {}))


def _run_shape(raw: Any) -> dict[str, Any]:
    return raw if isinstance(raw, dict) and "triplets" in raw else {}


def run_answer(raw_text: str) -> str | None:
    """The answering model's own answer, which a Tri-HE run keeps in its raw output: the text its
    triplets were extracted from. The item's response is the benchmark's reference answer, so a page
    showing a run's triplets shows this beside them. None when the output is not a Tri-HE run's or
    holds no answer."""
    try:
        raw = loads(raw_text)
    except (ValueError, RecursionError):
        return None
    answer = _run_shape(raw).get("answer")
    return answer if isinstance(answer, str) else None


def run_key(label_set: LabelSetRecord) -> str:
    """The ``<model>`` a label set's run is written under: the answering model it was read with, else its
    name."""
    model = label_set.meta.get(ANSWERING_MODEL)
    return model if isinstance(model, str) and model else label_set.name


def add_run(document: dict[str, Any], bundle: Bundle, label_set: LabelSetRecord) -> None:
    """Add ``label_set``'s triplets and verdicts to :func:`build_document`'s ``document`` as a model run
    (``<model>_triplets`` …); a run read from a Tri-HE file gives back its raw keys exactly."""
    model = run_key(label_set)
    if model in (*INSTANCE_KEYS, ID_KEY):
        raise FormatError(
            f"a run named {model!r} would overwrite the questions' own {model!r} field: "
            "export it as canonical, or under another name"
        )
    by_item = {a.item: a for a in label_set.annotations}
    for item, instance in _instances(document, bundle.items):
        detected = by_item.get(item.external_id)
        if detected is None:
            continue
        for key in (model, f"{model}_answer", *(f"{model}{suffix}" for suffix in RUN_SUFFIXES)):
            instance.pop(key, None)  # a run the benchmark file already carried gives way to the stored one
        raw = _run_output(detected)
        if raw:
            values = {
                SUFFIX_TRIPLETS: raw.get("triplets"),
                SUFFIX_JUDGEMENTS: raw.get("judgements"),
                SUFFIX_PARTS: raw.get("error_parts"),
            }
        else:
            values = {
                SUFFIX_TRIPLETS: [[t.subject, t.relation, t.object] for t in detected.triplets],
                SUFFIX_JUDGEMENTS: [t.verdict for t in detected.triplets],
                SUFFIX_PARTS: [t.wrong_part for t in detected.triplets]
                if any(t.wrong_part for t in detected.triplets)
                else None,
            }
        if isinstance(raw.get("answer"), str):
            instance[f"{model}_answer"] = raw["answer"]
        for suffix, value in values.items():
            if value is not None:
                instance[f"{model}{suffix}"] = value


FORMAT = TriHEFormat()
