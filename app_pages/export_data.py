"""Export: a dataset, with the label sets you choose, in any format Spanlight writes — as a download.

The file is written on the server a batch at a time (:mod:`db.prepared_exports`) and, when the server
serves the download route (``make run``), streamed to the browser from disk: no size of dataset is held
in memory. Without the route (``streamlit run app.py``) the prepared file is offered as a download button.
"""

from __future__ import annotations

import streamlit as st

from components.dataset_picker import dataset_switched, pick_dataset
from components.page_setup import setup_page
from components.store_cache import cached
from db.access import Forbidden
from db.exporter import UnknownDataset
from db.prepared_exports import discard_export, download_link, prepare_export, prepared_file
from db.repositories.items import count_items
from db.repositories.label_sets import list_label_sets
from formats.base import FormatError
from formats.registry import formats
from render.literal_text import literal

ctx = setup_page("Export")
ctx.require("export")
st.title("Export")

dataset = pick_dataset(ctx.engine)
if dataset is None:
    st.stop()

# Another dataset: start from its own label sets and format. A widget keeps its value whatever its
# default, so the label sets chosen for the dataset before (those this one shares) stayed chosen alone.
if dataset_switched("export_choices_of", dataset):
    st.session_state.pop("export_label_sets", None)
    st.session_state.pop("export_format", None)

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

wanted = (dataset.name, format_name, tuple(chosen), file_name)
if st.button("Prepare file", type="primary", key="export_prepare"):
    earlier = st.session_state.pop("export_file", None)
    if earlier:
        discard_export(earlier[1])
    n_items = cached(count_items, ctx.engine, dataset.id)
    slot = st.empty()
    bar = slot.progress(0.0, text="Writing…")

    def items_done(done: int) -> None:
        bar.progress(
            min(done / n_items, 1.0) if n_items else 1.0, text=f"Written {done:,} of {n_items:,} items…"
        )

    try:
        prepared = prepare_export(
            ctx.engine,
            dataset.name,
            format_name,
            actor=ctx.actor,
            label_sets=chosen,
            filename=file_name,
            items_done=items_done,
        )
        st.session_state["export_file"] = (wanted, prepared.ticket, prepared.size, prepared.left_out)
    except (FormatError, UnknownDataset) as error:
        st.error(f"Cannot export as {fmt.title}: {literal(error)}")
    except Forbidden as refused:
        st.error(literal(str(refused)))
    except OSError as failed:  # the disk is full, or refuses the file
        st.error(f"Cannot write the file on the server: {literal(failed.strerror or str(failed))}")
    finally:
        slot.empty()

held = st.session_state.get("export_file")
if held and held[0] == wanted:
    _, ticket, size, left_out = held
    path = prepared_file(ticket)
    if path is not None and left_out:
        # Label sets are chosen from the store's names: shown as text, never as Markdown.
        st.warning(
            literal(f"{fmt.title} does not keep everything chosen (the canonical JSONL does):"),
            icon=":material/info:",
        )
        st.text("\n".join(f"• {line}" for line in left_out))
    label = f"Download {literal(file_name)} ({size:,} bytes)"
    link = download_link(ticket)
    if path is None:
        st.session_state.pop("export_file", None)
        st.info("The prepared file has expired. Prepare it again.")
    elif link is not None:
        st.link_button(label, link, type="primary", icon=":material/download:")
        st.caption(
            "The link works for an hour. Whoever holds it can download the file, so share it only as you "
            "would share the file."
        )
    else:
        st.download_button(
            label,
            data=path.read_bytes,  # read when the button is pressed, not on every rerun
            file_name=file_name,
            mime="application/octet-stream",
            key="export_download",
            icon=":material/download:",
        )
