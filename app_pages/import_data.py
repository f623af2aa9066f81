"""Import: bring a benchmark file or a detector's outputs into the store, after seeing what will happen.

The file is read first (never written): its format is recognised (and can be overridden), the first items
are shown with their spans, and every problem is listed with file, record, field and reason. Only then
does the Import button write it, all or nothing. A file that would remove or change annotations already
stored is refused with a report of what would change, unless "Replace existing annotations" is ticked;
every import can be undone from the Recent imports list.

"Map fields" reads any CSV, JSON, JSON lines or Parquet file, or a dataset folder of Parquet shards, by
saying which field is the id, the response, the gold… (:mod:`components.mapped_import`).

The preview reads only the head of the file; the whole file is read when Import is pressed. Files and
image folders on the server are read through :mod:`db.import_folder` only (inside the import folder,
never the store's own files, never above the size cap), which also caps uploads.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

import streamlit as st

from components.dataset_picker import current_dataset
from components.import_views import show_outcome, show_preview, with_image_check
from components.mapped_import import mapped_import_panel
from components.page_setup import setup_page
from components.recent_imports import recent_imports_panel
from components.store_cache import cached
from db.access import Forbidden
from db.import_folder import (
    ImportPathRefused,
    image_folder_path,
    import_dir,
    read_import_bytes,
    read_import_head,
    size_problem,
)
from db.repositories.datasets import list_dataset_infos
from db.repositories.exchange import known_items
from db.transfer import import_file, import_path, import_predictions
from formats.base import Kind, ReadOptions
from formats.faithscore import POLARITIES, POLARITY_HELP
from formats.preview import PREVIEW_HEAD_BYTES, PREVIEW_LONG_BYTES, Preview, dataset_name_for, preview_file
from formats.problems import quoted
from formats.registry import FORMATS, detect, formats, not_recognised
from formats.text import data_parts, file_windows, sniff_head
from render.literal_text import literal


def _head_and_view(head: bytes | memoryview, parts: Iterable[bytes | memoryview]) -> tuple[bytes, bytes]:
    """The first :data:`PREVIEW_HEAD_BYTES` of a file whose bytes begin with ``head`` and what its format
    is recognised from (:func:`~formats.text.sniff_head`: a long first record hides no keys there)."""
    first = bytes(head[:PREVIEW_HEAD_BYTES])
    return first, sniff_head(first, parts)


def _sniffed_once(
    identity: tuple[object, ...], look: Callable[[], tuple[bytes, bytes]]
) -> tuple[bytes, bytes]:
    """``look()`` for the file ``identity`` names, computed when that file is chosen and kept while it
    stays chosen (one file's, so the state stays small): every click on the page reruns it, and a file
    whose first record is one long string was read through, 150 MB of it, at each click."""
    stored = st.session_state.get("import_sniffed")
    if stored is None or stored[0] != identity:
        stored = (identity, look())
        st.session_state["import_sniffed"] = stored
    kept: tuple[bytes, bytes] = stored[1]
    return kept


def _first_bytes(buffer: memoryview, count: int) -> bytes:
    """An upload's first ``count`` bytes, copied from its buffer (not from a copy of all of it)."""
    return bytes(buffer[:count])


def _import_head(typed: str, count: int) -> bytes:
    """A server file's first ``count`` bytes, read through the import folder's checks."""
    return read_import_head(typed, count)[0]


ctx = setup_page("Import")
ctx.require("manage_data")
st.title("Import")
list_recent_imports_again = recent_imports_panel(ctx.engine, ctx.annotator.name, actor=ctx.actor)

kind_label = st.radio(
    "What are you importing?",
    ["Benchmark file", "Detector outputs", "Map fields"],
    horizontal=True,
    key="import_kind",
    help="Map fields: any CSV, JSON, JSON lines or Parquet file, or a dataset folder of Parquet shards, "
    "read by saying which field is what.",
)
if kind_label == "Map fields":
    mapped_import_panel(ctx, list_recent_imports_again)
    st.stop()
kind: Kind = "benchmark" if kind_label == "Benchmark file" else "predictions"

server_paths = import_dir() is not None
mode = (
    st.radio("From", ["Upload", "Path on the server"], horizontal=True, key="import_mode")
    if server_paths
    else "Upload"
)
head: bytes | None = None
# What the format is recognised from (formats.text.sniff_head): a long first record hides no keys there.
sniffed = b""
size, name = 0, ""
load: Callable[[], bytes] = bytes  # the whole file, read only when Import is pressed
load_head: Callable[[int], bytes] = bytes  # the file's first bytes, as many as asked for
on_server: Path | None = None  # a server file, which a benchmark import reads from disk
source_id = ""  # which upload or path: a new one is recognised afresh
if mode == "Upload":
    uploaded = st.file_uploader("File", key="import_upload")
    if uploaded is not None:
        source_id = uploaded.file_id
        upload_problem = size_problem(uploaded.size)
        if upload_problem is not None:
            st.error(literal(f"{uploaded.name}: {upload_problem}."))
        else:
            size, name, load = uploaded.size, uploaded.name, uploaded.getvalue
            load_head = partial(_first_bytes, uploaded.getbuffer())
            head, sniffed = _sniffed_once(
                (mode, source_id, name, size),
                partial(_head_and_view, uploaded.getbuffer(), data_parts(uploaded.getbuffer())),
            )
else:
    typed = st.text_input(
        "File path on the server", key="import_path", help=f"A file inside the import folder {import_dir()}."
    )
    source_id = typed
    if typed.strip():
        try:
            head, size, on_server = read_import_head(typed, PREVIEW_HEAD_BYTES)
            name = on_server.name
            _, sniffed = _sniffed_once(
                (mode, str(on_server), size, on_server.stat().st_mtime_ns),
                partial(_head_and_view, head, file_windows(on_server, 0, part=1 << 16)),
            )
            load = partial(read_import_bytes, typed)
            load_head = partial(_import_head, typed)
            set_cap = size_problem(size, set_only=True)  # a cap the operator set holds for every file
            if set_cap is not None:
                raise ImportPathRefused(f"{quoted(typed)}: {set_cap}.")
        except ImportPathRefused as refused:
            head = None
            st.error(literal(str(refused)))
if head is None:
    st.info("Choose a file. Its format is recognised from its content; you can override it.")
    st.stop()

# A new file is recognised afresh: the format, dataset, subset and run name chosen for the last file go
# (kept, they sent a second file in the first one's format into the first one's dataset or run).
chosen_file = (mode, name, size, source_id)
if st.session_state.get("import_chosen_file") != chosen_file:
    for stale in (
        f"import_format_{kind}",
        "import_dataset",
        "import_subset",
        "import_detector",
        "import_version",
    ):
        st.session_state.pop(stale, None)
    st.session_state["import_chosen_file"] = chosen_file

found = detect(sniffed, name, kind)
names = [f.name for f in formats(kind)]
best = found[0][0] if found else None
if best is not None:
    st.caption(f"Recognised as **{best.title}**.")
else:  # no format is pre-picked: its complaints would blame the file for not being a format nobody chose
    said = not_recognised(sniffed, name, kind, choose="choose it below")
    st.warning(literal(said[:1].upper() + said[1:]).replace("\n", "  \n"))
format_key = f"import_format_{kind}"
# The format recognised for a new file is put in the box's state, not given as its default: a default
# left the box showing, in the browser, the last file's format over an unrecognised file's empty choice.
if format_key not in st.session_state:
    st.session_state[format_key] = best.name if best else None
format_name = st.selectbox(
    "Format",
    names,
    index=None,
    format_func=lambda n: FORMATS[n].title,
    key=format_key,
    help=FORMATS[best.name].description if best else None,
    placeholder="Choose the file's format",
)
if format_name is None:
    st.stop()

options = ReadOptions()
image_root: str | None = None
typed_root: str | None = None  # the image folder as typed, which the import's report names
image_zip: bytes | None = None
if kind == "benchmark":
    left, right = st.columns(2)
    options.dataset = left.text_input("Dataset", value=dataset_name_for(name), key="import_dataset") or None
    options.subset = right.text_input("Subset (optional)", key="import_subset") or None
    if format_name == "faithscore":
        options.faithscore_polarity = st.radio(
            "FaithScore labels: what 1 means",
            POLARITIES,
            format_func=POLARITY_HELP.__getitem__,
            key="import_faithscore_polarity",
            help="The release's README and its annotations disagree; the annotations' reading is the default "
            "(see the FaithScore format's notes).",
        )
    with st.expander("Images (optional)"):
        if server_paths:
            folder = st.text_input(
                "Image folder on the server", key="import_image_root", help=f"A folder inside {import_dir()}."
            )
            if folder.strip():
                try:
                    image_root = str(image_folder_path(folder))
                    typed_root = folder.strip()
                except ImportPathRefused as refused:
                    st.error(literal(str(refused)))
        zipped = st.file_uploader("…or a ZIP of images", type=["zip"], key="import_image_zip")
        if zipped is not None:
            zip_problem = size_problem(zipped.size)
            if zip_problem is None:
                image_zip = zipped.getvalue()
            else:
                st.error(literal(f"{zipped.name}: {zip_problem}."))
else:
    infos = cached(list_dataset_infos, ctx.engine)
    if not infos:
        st.info("Import the benchmark first: detector outputs are read against its stored items.")
        st.stop()
    names = [d.name for d in infos]
    current = current_dataset(ctx.engine)  # the dataset the user works on, not the first one
    options.dataset = st.selectbox(
        "Dataset the outputs are about",
        names,
        index=names.index(current.name) if current is not None and current.name in names else 0,
        key="import_target",
    )
    left, mid, right = st.columns(3)
    options.detector = left.text_input("Detector run name", key="import_detector").strip() or None
    options.detector_version = mid.text_input("Version (optional)", key="import_version") or None
    options.prompt_strategy = right.text_input("Prompt strategy (optional)", key="import_strategy") or None
    options.known = cached(known_items, ctx.engine, options.dataset)
    if format_name == "mmhal-ratings":
        whose = {"detector": "a judge's (detector run)", "gold": "gold", "human": "an annotator's"}
        options.label_set_kind = (
            st.radio(
                "Whose ratings",
                list(whose),
                format_func=whose.__getitem__,
                horizontal=True,
                key="import_ratings_kind",
                help="The run name above names the judge, or the annotator whose ratings these are.",
            )
            or "detector"
        )

preview_key = (
    hashlib.sha256(head).hexdigest(),
    size,
    format_name,
    options.dataset,
    options.subset,
    options.detector,
    options.faithscore_polarity,
    options.label_set_kind,
    name,
    image_root,
    image_zip is not None,
)


def _preview_of(fmt_name: str, data: bytes) -> tuple[Preview, int]:
    """The preview of the file's first bytes ``data``, and how many it read."""
    complete = size <= len(data)
    preview = preview_file(
        fmt_name, data, source=name, options=options, complete=complete, head_bytes=len(data)
    )
    return preview, len(data)


stored = st.session_state.get("import_preview")
if stored is None or stored[0] != preview_key:
    with st.spinner("Reading the file…"):
        read, shown_bytes = _preview_of(format_name, head)
        if read.partial and read.n_items == 0 and not read.problems:  # the first record is longer
            read, shown_bytes = _preview_of(format_name, load_head(PREVIEW_LONG_BYTES))
        if image_zip is None:  # a ZIP's images are checked by the import, once unpacked
            read = with_image_check(
                ctx.engine, read, image_root, name, typed=typed_root, folder=on_server and on_server.parent
            )
        stored = (preview_key, read, shown_bytes)
    st.session_state["import_preview"] = stored
preview: Preview = stored[1]
shown_kb = f"{stored[2] // 1024:,} KB"

allow_skip = st.checkbox(
    "Allow skipping bad records",
    key="import_allow_skip",
    help="Import the sound records and report the others. Off: any error refuses the whole file."
    if not preview.unreadable
    else "No record of this file is sound: skipping the bad ones would import nothing.",
    disabled=preview.unreadable,  # skipping every record is no import
)
replace_existing = st.checkbox(
    "Replace existing annotations",
    key="import_replace",
    help="Let the file remove or change annotations already stored. The replaced annotations are kept "
    "in the history: Undo in Recent imports puts them back. Off: such a file is refused with a report.",
)

show_preview(
    preview,
    noun="Items" if kind == "benchmark" else "Outputs",
    partial_note=(
        f"The preview reads the first {shown_kb} of {size / 1024 / 1024:,.1f} MB: its counts and problems "
        "cover that part. Import reads and checks the whole file."
    ),
    none_whole_note=(
        f"The first {shown_kb} of {size / 1024 / 1024:,.1f} MB, all the preview reads, hold no whole record: "
        "the first one is longer, so none is shown or counted here. Import reads and checks the whole file."
    ),
)

blocked = preview.unreadable or (preview.n_errors > 0 and not allow_skip)
missing_detector = kind == "predictions" and not options.detector
if preview.unreadable:
    st.warning("Nothing of this file can be imported as it is: see the report above.")
elif blocked:
    st.warning("The file has errors: fix them, or allow skipping bad records to import the rest.")
if missing_detector:
    st.warning("Name the detector run: each run becomes its own label set.")
if not st.button("Import", type="primary", disabled=blocked or missing_detector, key="import_go"):
    st.stop()

bar = st.progress(0.0, text="Starting…")
data = b""
# A benchmark file on the server is read from disk as it is imported, where its format can (so the size
# cap, which guards the server's memory, does not apply to it); anything else is read whole, here.
if on_server is None or kind != "benchmark":
    try:
        data = load()
    except ImportPathRefused as refused:
        bar.empty()
        st.error(literal(str(refused)))
        st.stop()


def progress(fraction: float, message: str) -> None:
    bar.progress(min(max(fraction, 0.0), 1.0), text=literal(message))


try:
    if kind == "benchmark":
        run_import = (
            partial(import_path, ctx.engine, on_server, too_large=size_problem)
            if on_server is not None
            else partial(import_file, ctx.engine, data)
        )
        outcome = run_import(
            actor=ctx.actor,
            source=name,
            format_name=format_name,
            options=options,
            allow_skip=allow_skip,
            image_root=typed_root,  # the import resolves it again, by the same rule
            image_zip=image_zip,
            annotator=ctx.annotator.name,
            progress=progress,
            replace_existing=replace_existing,
            confine_image_root=True,  # a file's own image folder, like a typed one, within the import folder
        )
    else:
        outcome = import_predictions(
            ctx.engine,
            data,
            actor=ctx.actor,
            source=name,
            dataset=options.dataset or "",
            detector=options.detector or "",
            format_name=format_name,
            options=options,
            allow_skip=allow_skip,
            annotator=ctx.annotator.name,
            progress=progress,
            replace_existing=replace_existing,
        )
except Forbidden as refused:
    bar.empty()
    st.error(literal(str(refused)))
    st.stop()
st.session_state.pop("import_preview", None)
show_outcome(outcome, bar, key_prefix="import")
if outcome.ok:
    list_recent_imports_again()
