"""Export: a dataset, with the label sets you choose, in any format Spanlight writes — as a download."""

from __future__ import annotations

import streamlit as st

from components.dataset_picker import pick_dataset
from components.page_setup import setup_page
from components.store_cache import cached
from db.access import Forbidden
from db.exporter import UnknownDataset
from db.repositories.label_sets import list_label_sets
from db.transfer import export_file
from formats.base import FormatError
from formats.registry import formats
from render.literal_text import literal

ctx = setup_page("Export")
ctx.require("export")
st.title("Export")

dataset = pick_dataset(ctx.engine)
if dataset is None:
    st.stop()

label_sets = cached(list_label_sets, ctx.engine, dataset.id)
choices = {f"{ls.kind}:{ls.name}": ls.title for ls in label_sets}
chosen = st.multiselect(
    "Label sets",
    list(choices),
    default=list(choices),
    format_func=choices.__getitem__,
    key="export_label_sets",
    help="A benchmark format writes the gold label set (or the only one chosen); a detector-output format "
    "writes the chosen detector run. The canonical JSONL keeps them all.",
)

writable = {f.name: f for f in formats(writable=True)}
if st.session_state.get("export_format_of") != dataset.id:  # another dataset: start from its own format
    st.session_state["export_format_of"] = dataset.id
    st.session_state.pop("export_format", None)
format_name = st.selectbox(
    "Format",
    list(writable),
    index=list(writable).index(dataset.source_format) if dataset.source_format in writable else 0,
    format_func=lambda n: f"{writable[n].title} ({writable[n].kind})",
    key="export_format",
)
fmt = writable[format_name]
extension = fmt.extensions[0]
if len(fmt.extensions) > 1 and (format_name.startswith("alignbench") or format_name == "mmhal-ratings"):
    extension = st.radio("Encoding", list(fmt.extensions), horizontal=True, key="export_encoding")
file_name = fmt.default_filename(dataset.name)
if not file_name.endswith(extension):
    file_name = f"{dataset.name}{extension}"

if not chosen:
    st.info("Choose at least one label set.")
    st.stop()

if st.button("Prepare file", type="primary", key="export_prepare"):
    try:
        with st.spinner("Writing…"):
            st.session_state["export_file"] = (
                (dataset.name, format_name, tuple(chosen), file_name),
                export_file(
                    ctx.engine,
                    dataset.name,
                    format_name,
                    actor=ctx.actor,
                    label_sets=chosen,
                    filename=file_name,
                ),
            )
    except (FormatError, UnknownDataset) as error:
        st.session_state.pop("export_file", None)
        st.error(f"Cannot export as {fmt.title}: {literal(error)}")
    except Forbidden as refused:
        st.session_state.pop("export_file", None)
        st.error(literal(str(refused)))

prepared = st.session_state.get("export_file")
if prepared and prepared[0] == (dataset.name, format_name, tuple(chosen), file_name):
    data = prepared[1]
    st.download_button(
        f"Download {literal(file_name)} ({len(data):,} bytes)",
        data=data,
        file_name=file_name,
        mime="application/octet-stream",
        key="export_download",
        icon=":material/download:",
    )
