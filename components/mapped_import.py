"""The Import page's "Map fields" mode: any table file or dataset folder, read by a field mapping built
here, uploaded, or taken from a dataset imported before.

One page, top to bottom: choose the file (an upload, or a file or dataset folder inside the import
folder); see its fields with sample values; a recognised benchmark (AlignBench, M-HalDetect) imports as
it is unless the user maps it; pick a field per role, the gold's shape, its options and its value
mapping; see the first items with their spans drawn and every problem; download the mapping; import,
all or nothing, with the mapping saved on the dataset. Field names and values come from the file, so
they appear only in tables, select boxes and through ``literal``, never as Markdown.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from components.import_views import show_outcome, show_preview
from components.page_setup import PageContext
from components.store_cache import cached
from db.access import Forbidden
from db.import_folder import (
    ImportPathRefused,
    dataset_folder_path,
    import_dir,
    names_import_folder,
    read_import_bytes,
    size_problem,
)
from db.repositories.datasets import import_mappings
from db.transfer import import_table
from formats.base import ReadOptions
from formats.dataset_folders import RECOGNISED_TITLES, open_dataset_folder, recognise
from formats.field_paths import value_key
from formats.mapping import ImportMapping, MappingError, open_file, preview_table
from formats.mapping_spec import (
    CLAIM_LABELS,
    ELEMENT_KEYS,
    ROLES,
    SENTENCE_LABELS,
    SHAPES,
    SPAN_SHAPES,
    VERDICTS,
)
from formats.preview import Preview, dataset_name_for
from formats.problems import Problem, whole_file_first
from formats.tables import TableSource, columns_of, head_records, labels_seen
from render.literal_text import literal

NONE = "(none)"
NO_LABEL = "(no label)"
SAMPLE_RECORDS = 50
# Field names a role is guessed from when a file is first opened.
_GUESSES: dict[str, tuple[str, ...]] = {
    "id": ("id", "question_id", "qid", "uid", "sample_id", "idx"),
    "image": ("image", "image_path", "image_url", "img", "image_file"),
    "prompt": ("prompt", "question", "query", "instruction"),
    "response": ("response", "answer", "output", "caption", "text", "test_solution"),
    "reference": ("reference", "gt_answer", "ground_truth", "original_solution"),
    "subset": ("subset", "category", "domain"),
    "source_model": ("model", "source_model", "model_name"),
}
_PATH_OPTIONS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    # shape -> (option, label, required) of the record fields it reads besides its own form choices
    "inline_tags": (("field", "Field with the tagged text", True),),
    "word_indices": (("field", "Field with the word-index spans", True),),
    "token_labels": (
        ("field", "Field with one label per token", True),
        ("tokens", "Field with the tokens (none: the response's words)", False),
    ),
    "sentence_labels": (
        ("field", "Field with one label per sentence", True),
        ("sentences", "Field with the sentence texts (none: split the response)", False),
    ),
    "claims": (
        ("field", "Field with the claims", True),
        ("labels", "Field with one label per claim (none: inside each claim)", False),
    ),
    "triplets": (
        ("field", "Field with the triplets", True),
        ("labels", "Field with one verdict per triplet (none: inside each triplet)", False),
    ),
    "response_score": (("field", "Field with the score", True),),
}
_CHOICES = {"sentence_labels": SENTENCE_LABELS, "claims": CLAIM_LABELS, "triplets": VERDICTS}


@dataclass(frozen=True)
class _Loaded:
    """A chosen file or folder: all of it (read on Import), the part a preview reads, and its identity."""

    source: TableSource
    head: TableSource
    ident: str
    title: str | None = None
    description: str | None = None


def _choose_source() -> _Loaded | None:
    server_paths = import_dir() is not None
    mode = (
        st.radio("From", ["Upload", "Path on the server"], horizontal=True, key="map_mode")
        if server_paths
        else "Upload"
    )
    if mode == "Upload":
        uploaded = st.file_uploader("Table file (CSV, JSON, JSON lines or Parquet)", key="map_upload")
        if uploaded is None:
            return None
        problem = size_problem(uploaded.size)
        if problem is not None:
            st.error(literal(f"{uploaded.name}: {problem}."))
            return None
        data = uploaded.getvalue()
        ident = hashlib.sha256(data).hexdigest()
        return _Loaded(open_file(data, uploaded.name), open_file(data, uploaded.name, head=True), ident)
    typed = st.text_input(
        "File or dataset folder on the server",
        key="map_path",
        help=f"A file, or a folder of Parquet shards, inside the import folder {import_dir()}.",
    )
    if not typed.strip():
        return None
    try:
        if names_import_folder(typed):
            folder = open_dataset_folder(dataset_folder_path(typed))
            stamp = [(p.name, p.split) for p in folder.source.parts]
            ident = hashlib.sha256(json.dumps([typed, stamp]).encode()).hexdigest()
            return _Loaded(folder.source, folder.source, ident, folder.title, folder.description)
        data = read_import_bytes(typed)
    except (ImportPathRefused, ValueError) as refused:
        st.error(literal(str(refused)))
        return None
    name = typed.strip().replace("\\", "/").rsplit("/", 1)[-1]
    ident = hashlib.sha256(data).hexdigest()
    return _Loaded(open_file(data, name), open_file(data, name, head=True), ident)


def _sample(loaded: _Loaded) -> tuple[list[Any], list[Problem]]:
    """The first records (kept for the file while it stays chosen)."""
    stored = st.session_state.get("map_sample")
    if stored is None or stored[0] != loaded.ident:
        problems: list[Problem] = []
        stored = (loaded.ident, head_records(loaded.head, SAMPLE_RECORDS, problems), problems)
        st.session_state["map_sample"] = stored
    return stored[1], stored[2]


def _select(label: str, options: list[str], key: str, default: str = NONE, **kwargs: Any) -> str | None:
    """A select box over field paths; a remembered choice the file does not have falls back to default."""
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]
    # A choice already made (or applied from a reused mapping) is the widget's; the guess is only a start.
    index = 0 if key in st.session_state else options.index(default) if default in options else 0
    chosen = st.selectbox(label, options, index=index, key=key, **kwargs)
    return None if chosen in (None, NONE) else str(chosen)


# ------------------------------------------------------------------------------------ reusing a mapping


def _reuse(ctx: PageContext) -> None:
    """Fill the controls from an uploaded mapping or a stored dataset's (each applied once)."""
    left, right = st.columns(2)
    uploaded = left.file_uploader("Reuse a mapping (JSON)", type=["json"], key="map_reuse_upload")
    stored = cached(import_mappings, ctx.engine)
    chosen = right.selectbox(
        "…or the mapping of a dataset imported before", [NONE, *stored], key="map_reuse_dataset"
    )
    raw: Any = None
    if uploaded is not None:
        try:
            raw = json.loads(uploaded.getvalue())
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
            st.error(literal(f"{uploaded.name}: not valid JSON: {error}"))
            return
    elif chosen != NONE:
        raw = stored[chosen]
    if raw is None:
        return
    ident = hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()
    if st.session_state.get("map_applied") == ident:
        return
    st.session_state["map_applied"] = ident
    try:
        mapping = ImportMapping.from_dict(raw)
    except MappingError as error:
        st.error(literal(str(error)))
        return
    _apply(mapping)


def _apply(mapping: ImportMapping) -> None:
    state = st.session_state
    extra = set(mapping.fields.values())
    for role in ROLES:
        state[f"map_role_{role}"] = mapping.fields.get(role, NONE)
    gold = mapping.gold
    state["map_shape"] = gold.shape if gold else NONE
    if gold is not None:
        for option, path in gold.paths().items():
            state[f"map_gold_{option}"] = path
            extra.add(path)
        state["map_offsets_form"] = "Parallel lists" if gold.starts else "A list of objects"
        for name in ELEMENT_KEYS.get(gold.shape, {}):
            state[f"map_key_{gold.shape}_{name}"] = gold.key(name)
        state["map_tag"] = gold.tag or ""
        state["map_locate"] = gold.locate_by_text
        state["map_reference"] = gold.reference
        if gold.scale is not None:
            state["map_scale_low"], state["map_scale_high"] = gold.scale
        state["map_use_values"] = bool(gold.values)
        state["map_values_rows"] = (
            gold.shape,
            [
                {"value": raw, "becomes": _shown_target(gold.shape, target)}
                for raw, target in gold.values.items()
            ],
        )
        state["map_values_version"] = state.get("map_values_version", 0) + 1
    state["map_extra_paths"] = sorted(extra)


def _shown_target(shape: str, target: Any) -> str:
    if target is None or target is False:
        return NO_LABEL if shape in _CHOICES else ""
    if target is True:
        return "hallucination"
    return value_key(target)


# -------------------------------------------------------------------------------------------- gold


def _gold(paths: list[str], records: list[Any]) -> dict[str, Any] | None:
    shapes = [NONE, *SHAPES]
    shape = st.selectbox(
        "Gold",
        shapes,
        key="map_shape",
        format_func=lambda s: "No gold: items only" if s == NONE else SHAPES[s],
    )
    if shape == NONE:
        return None
    gold: dict[str, Any] = {"shape": shape}
    if shape == "offsets":
        form = st.radio(
            "The spans are", ["A list of objects", "Parallel lists"], horizontal=True, key="map_offsets_form"
        )
        if form == "A list of objects":
            gold["field"] = _select("Field with the spans", paths, "map_gold_field")
        else:
            a, b, c, d = st.columns(4)
            with a:
                gold["starts"] = _select("Starts", paths, "map_gold_starts")
            with b:
                gold["ends"] = _select("Ends", paths, "map_gold_ends")
            with c:
                gold["texts"] = _select("Texts (optional)", paths, "map_gold_texts")
            with d:
                gold["labels"] = _select("Labels (optional)", paths, "map_gold_labels")
        gold["locate_by_text"] = st.checkbox(
            "Locate by text",
            key="map_locate",
            help="When a span's offsets do not spell its text, place it where that text is in the response "
            "(nearest to the given offsets), with a warning. Off: such a record is an error.",
        )
    for option, label, _ in _PATH_OPTIONS.get(shape, ()):
        gold[option] = _select(label, paths, f"map_gold_{option}")
    if shape == "inline_tags":
        gold["tag"] = (
            st.text_input(
                "Tag name",
                key="map_tag",
                help="The one tag that marks a span (e.g. hallucination). Empty: every tag marks a span "
                "and names its type (<number>three</number>).",
            ).strip()
            or None
        )
    if shape == "triplets":
        gold["reference"] = st.checkbox(
            "These are the item's reference triplets (a scene graph), not judged gold triplets",
            key="map_reference",
        )
    if shape == "response_score":
        low, high = st.columns(2)
        st.session_state.setdefault("map_scale_low", 0.0)
        st.session_state.setdefault("map_scale_high", 6.0)
        gold["scale"] = [
            low.number_input("Lowest score", step=1.0, key="map_scale_low"),
            high.number_input("Highest score", step=1.0, key="map_scale_high"),
        ]
    keys = ELEMENT_KEYS.get(shape, {})
    if keys and not (shape == "offsets" and gold.get("starts")):
        with st.expander("Keys inside each element"):
            columns = st.columns(len(keys))
            given = {}
            for column, (name, default) in zip(columns, keys.items(), strict=True):
                if f"map_key_{shape}_{name}" not in st.session_state:
                    st.session_state[f"map_key_{shape}_{name}"] = default
                typed = column.text_input(name, key=f"map_key_{shape}_{name}").strip()
                if typed and typed != default:
                    given[name] = typed
            if given:
                gold["keys"] = given
    values = _values(shape, gold, records)
    if values:
        gold["values"] = values
    return {k: v for k, v in gold.items() if v not in (None, False)}


def _label_values(shape: str, gold: dict[str, Any], records: list[Any]) -> list[Any]:
    """The raw labels the first records hold, for the value mapping editor."""
    field = gold.get("field")
    label_key = (gold.get("keys") or {}).get("label") or ELEMENT_KEYS.get(shape, {}).get("label")
    if gold.get("labels"):
        return labels_seen(records, gold["labels"])
    if not field:
        return []
    if shape in ("offsets", "word_indices", "claims", "triplets"):
        return labels_seen(records, field, key=label_key)
    if shape == "sentence_labels":
        return labels_seen(records, field, key=label_key) or labels_seen(records, field)
    if shape in ("token_labels", "response_score"):
        return labels_seen(records, field)
    return []


def _values(shape: str, gold: dict[str, Any], records: list[Any]) -> dict[str, Any]:
    """The value mapping editor (shown when asked for): raw value in the file -> what is stored."""
    choices = _CHOICES.get(shape)
    if shape in SPAN_SHAPES:
        hint = 'Blank: not a span. "hallucination": an untyped span. Any other text: the span\'s type.'
    elif shape == "response_score":
        hint = "The number each value in the file stands for."
    else:
        hint = f"One of {', '.join(choices or ())}, or no label."
    if not st.checkbox("Map label values", key="map_use_values", help=hint):
        return {}
    applied = st.session_state.get("map_values_rows")
    rows = applied[1] if applied and applied[0] == shape else None
    if not rows:
        seen = _label_values(shape, gold, records)
        rows = [{"value": value_key(v), "becomes": _guess(shape, v)} for v in seen]
    becomes = (
        st.column_config.SelectboxColumn("Becomes", options=[*choices, NO_LABEL], required=True)
        if choices
        else st.column_config.TextColumn("Becomes")
    )
    version = st.session_state.get("map_values_version", 0)
    rows_id = hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()[:12]
    edited = st.data_editor(
        pd.DataFrame(rows, columns=["value", "becomes"]).astype(object),
        num_rows="dynamic",
        hide_index=True,
        column_config={
            "value": st.column_config.TextColumn("Value in the file", required=True),
            "becomes": becomes,
        },
        key=f"map_values_{shape}_{version}_{rows_id}",
    )
    st.caption(hint)
    values: dict[str, Any] = {}
    for row in edited.to_dict("records"):
        raw = row.get("value")
        if raw is None or (isinstance(raw, float) and pd.isna(raw)) or not str(raw).strip():
            continue
        shown = row.get("becomes")
        unanswered = shown is None or (isinstance(shown, float) and pd.isna(shown)) or not str(shown).strip()
        if unanswered and shape in _CHOICES:
            continue  # not mapped yet: its records are reported until the user says what it means
        values[str(raw).strip()] = _stored_target(shape, shown)
    return values


def _guess(shape: str, value: Any) -> str | None:
    """A first answer for a value seen in the file; None (left for the user) when it cannot be guessed."""
    choices = _CHOICES.get(shape)
    text = value_key(value)
    if choices:
        return text.lower() if text.lower() in choices else None
    if shape == "response_score":
        return text
    return "" if text.lower() in ("o", "0", "false", "") else text


def _stored_target(shape: str, shown: Any) -> Any:
    text = "" if shown is None or (isinstance(shown, float) and pd.isna(shown)) else str(shown).strip()
    if shape in _CHOICES:
        return None if text == NO_LABEL else text
    if shape == "response_score":
        try:
            return float(text)
        except ValueError:
            return text  # reported by the mapping check, naming the value
    return text or None


# -------------------------------------------------------------------------------------------- panel


def _mapping(ctx: PageContext, records: list[Any]) -> ImportMapping | None:
    """The mapping the controls describe (None with the reasons shown when it is not valid yet)."""
    _reuse(ctx)
    columns = columns_of(records)
    paths = [NONE, *dict.fromkeys([c.path for c in columns] + st.session_state.get("map_extra_paths", []))]
    st.subheader("Fields", anchor=False)
    fields: dict[str, str] = {}
    boxes = st.columns(4)
    for k, (role, title) in enumerate(ROLES.items()):
        guess = next((g for g in _GUESSES[role] if g in paths), NONE)
        with boxes[k % 4]:
            chosen = _select(title, paths, f"map_role_{role}", guess)
        if chosen:
            fields[role] = chosen
    gold = _gold(paths, records)
    value: dict[str, Any] = {"version": 1, "fields": fields}
    if gold is not None:
        value["gold"] = gold
    try:
        mapping = ImportMapping.from_dict(value)
    except MappingError as error:
        st.warning("The mapping is not complete yet:")
        st.dataframe(
            [{"mapping field": where, "reason": reason} for where, reason in error.problems],
            hide_index=True,
            key="map_mapping_problems",
        )
        return None
    st.download_button(
        "Download the mapping (JSON)",
        mapping.to_json(),
        file_name="mapping.json",
        mime="application/json",
        key="map_download",
    )
    return mapping


def mapped_import_panel(ctx: PageContext, imported: Callable[[], None] | None = None) -> None:
    """The whole "Map fields" mode of the Import page; ``imported`` is called after an import wrote."""
    loaded = _choose_source()
    if loaded is None:
        st.info(
            "Choose a CSV, JSON, JSON lines or Parquet file, or a dataset folder of Parquet shards (as "
            "Hugging Face datasets ship), then say which field is what."
        )
        return
    if loaded.title:
        st.text(loaded.title)
    if loaded.description:
        st.caption(literal(loaded.description))
    if loaded.source.folder is not None:
        st.caption(literal(f"{len(loaded.source.parts)} Parquet file(s) in {loaded.source.name}"))
    records, problems = _sample(loaded)
    if not records:
        st.error("No records could be read from it.")
        if problems:
            st.dataframe(
                [p.to_dict() for p in whole_file_first(problems)], hide_index=True, key="map_read_problems"
            )
        return
    with st.expander(f"Fields of the first {len(records)} records", expanded=True):
        st.dataframe(
            [
                {"field": c.path, "types": ", ".join(c.types), "sample values": " | ".join(c.samples)}
                for c in columns_of(records)
            ],
            hide_index=True,
            width="stretch",
            key="map_columns",
        )
    recognised = recognise(records)
    mapping: ImportMapping | None = None
    if recognised is not None:
        st.success(f"Recognised as {RECOGNISED_TITLES[recognised]}: it imports without a mapping.")
    if recognised is None or st.checkbox("Map its fields myself instead", key="map_override"):
        mapping = _mapping(ctx, records)
        if mapping is None:
            return

    left, right = st.columns(2)
    dataset = left.text_input(
        "Dataset", value=dataset_name_for(loaded.source.name), key="map_dataset"
    ).strip()
    subset = right.text_input("Subset (optional)", key="map_subset").strip() or None
    options = ReadOptions(dataset=dataset or None, subset=subset)
    allow_skip = st.checkbox(
        "Allow skipping bad records",
        key="map_allow_skip",
        help="Import the sound records and report the others. Off: any error refuses the whole file.",
    )
    replace_existing = st.checkbox(
        "Replace existing annotations",
        key="map_replace",
        help="Let the file remove or change annotations already stored (undoable in Recent imports).",
    )
    preview = _preview(loaded, mapping, options)
    show_preview(
        preview,
        partial_note="The preview reads the first records only; Import reads and checks them all.",
    )
    blocked = preview.n_errors > 0 and not allow_skip
    if blocked:
        st.warning("There are errors: fix the mapping or the file, or allow skipping bad records.")
    if not st.button("Import", type="primary", disabled=blocked, key="map_go"):
        return
    bar = st.progress(0.0, text="Starting…")

    def progress(fraction: float, message: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=literal(message))

    try:
        outcome = import_table(
            ctx.engine,
            loaded.source,
            actor=ctx.actor,
            mapping=mapping,
            options=options,
            allow_skip=allow_skip,
            annotator=ctx.annotator.name,
            progress=progress,
            replace_existing=replace_existing,
        )
    except Forbidden as refused:
        st.error(literal(str(refused)))
        return
    st.session_state.pop("map_preview", None)
    show_outcome(outcome, bar, key_prefix="map")
    if outcome.ok and imported is not None:
        imported()  # the page's list of recent imports, with this one


def _preview(loaded: _Loaded, mapping: ImportMapping | None, options: ReadOptions) -> Preview:
    key = (loaded.ident, mapping.to_json() if mapping else b"", options.dataset, options.subset)
    stored = st.session_state.get("map_preview")
    if stored is None or stored[0] != key:
        with st.spinner("Reading the first records…"):
            stored = (key, preview_table(loaded.head, mapping, options))
        st.session_state["map_preview"] = stored
    preview: Preview = stored[1]
    return preview
