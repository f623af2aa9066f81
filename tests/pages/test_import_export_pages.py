"""Import and Export pages, driven through Streamlit's AppTest on a real SQLite store."""

from __future__ import annotations

import html
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
import streamlit as st
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from db import prepared_exports
from db.access import OPERATOR
from db.engine import make_engine
from db.export_files import export_file
from db.exporter import export_bundle
from db.repositories.accounts import set_disabled
from db.repositories.annotators import get_or_create_annotator
from db.repositories.datasets import get_dataset, list_dataset_infos
from db.transfer import import_file, import_predictions
from formats.base import ReadOptions
from formats.preview import PREVIEW_HEAD_BYTES, PREVIEW_TEXT_CHARS
from formats.registry import not_recognised
from render.literal_text import literal
from tests.formats.mmhal_sample import IDS, sample_bytes
from tests.pages.conftest import add_small_dataset, problem_report

ROOT = Path(__file__).resolve().parents[2]
IMPORT_PAGE = str(ROOT / "app_pages" / "import_data.py")
EXPORT_PAGE = str(ROOT / "app_pages" / "export_data.py")
TIMEOUT = 30
XSS = "Look: <script>window.__xss=1</script> and <img src=x onerror=alert(1)> here."

RECORDS = [
    {
        "id": "a",
        "prompt": "Describe.",
        "test_solution": XSS,
        "hallucinated_solution": XSS.replace("here", "<hallucination>here</hallucination>"),
    },
    {
        "id": "b",
        "prompt": "Count.",
        "test_solution": "Two cats.",
        "hallucinated_solution": "<hallucination>Two</hallucination> cats.",
    },
    {
        "id": "c",
        "prompt": "Broken.",
        "test_solution": "One dog.",
        "hallucinated_solution": "One <hallucination>dog.",
    },
]


@pytest.fixture
def store(sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DATABASE_URL", sqlite_url)
    monkeypatch.setenv("SPANLIGHT_DATA_DIR", str(tmp_path / "data"))
    st.cache_resource.clear()
    st.cache_data.clear()
    return sqlite_url


def _html(at: AppTest) -> str:
    return "\n".join(element.proto.body for element in at.get("html"))


def _outputs_on_server(path: Path) -> AppTest:
    """The Import page on dataset "bench", reading detector outputs from ``path`` on the server."""
    at = AppTest.from_file(IMPORT_PAGE, default_timeout=TIMEOUT)
    at.query_params["dataset"] = "bench"
    at.run()
    at.radio(key="import_kind").set_value("Detector outputs").run()
    at.radio(key="import_mode").set_value("Path on the server").run()
    at.text_input(key="import_path").input(str(path)).run()
    return at


def _imports(tmp_path: Path) -> Path:
    """The default import folder of the store fixture's data folder (server paths must be inside it)."""
    folder = tmp_path / "data" / "imports"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _bench_store(url: str) -> Engine:
    """The store at ``url`` with the MHALO dataset "bench" of the first two records imported."""
    engine = make_engine(url)
    import_file(
        engine,
        json.dumps(RECORDS[:2]).encode(),
        source="b.json",
        format_name="mhalo",
        options=ReadOptions(dataset="bench"),
        actor=OPERATOR,
    )
    return engine


def _import_page(path: Path) -> AppTest:
    at = AppTest.from_file(IMPORT_PAGE, default_timeout=TIMEOUT).run()
    at.radio(key="import_mode").set_value("Path on the server").run()
    at.text_input(key="import_path").input(str(path)).run()
    return at


def test_import_page_previews_reports_and_imports(store: str, tmp_path: Path) -> None:
    path = _imports(tmp_path) / "processed_custom.json"
    path.write_text(json.dumps(RECORDS))
    at = _import_page(path)
    assert not at.exception
    assert at.selectbox(key="import_format_benchmark").value == "mhalo"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"Items": "2", "Errors": "1", "Warnings": "0"}
    body = _html(at)
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in body and "<script>" not in body
    assert "<mark" in body  # the gold span is drawn
    report = problem_report(at)
    assert list(report["record"]) == ["#2 (id=c)"] and "never closed" in report["reason"][0]
    go = at.button(key="import_go")
    assert go.disabled
    at.checkbox(key="import_allow_skip").check().run()
    at.button(key="import_go").click().run()
    assert not at.exception
    assert "2 new items" in at.success[0].value
    engine = make_engine(store)
    try:
        bundle = export_bundle(engine, "processed_custom", actor=OPERATOR)
    finally:
        engine.dispose()
    assert [i.external_id for i in bundle.items] == ["a", "b"]


def test_the_recent_imports_list_holds_the_import_just_made(store: str, tmp_path: Path) -> None:
    """Drawn above the Import button, the list still said "Recent imports (0)" after the import, and
    offered no Undo for it until the next click."""
    path = _imports(tmp_path) / "processed_custom.json"
    path.write_text(json.dumps(RECORDS[:2]))
    at = _import_page(path)
    assert [e.label for e in at.expander if e.label.startswith("Recent imports")] == ["Recent imports (0)"]
    at.button(key="import_go").click().run()
    assert not at.exception, at.exception
    assert [e.label for e in at.expander if e.label.startswith("Recent imports")] == ["Recent imports (1)"]
    undo = [b for b in at.button if (b.key or "").startswith("import_undo")]
    assert len(undo) == 1
    undo[0].click().run()
    assert not at.exception, at.exception
    assert any("undone" in s.value.lower() for s in at.success), [s.value for s in at.success]


def test_import_page_shows_a_refusal_and_writes_nothing(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store refuses the import (here: the account is disabled); the page says why, literally."""
    engine = make_engine(store)
    try:
        blocked = get_or_create_annotator(engine, "blocked*")
        set_disabled(engine, blocked.name, True, actor=OPERATOR)
    finally:
        engine.dispose()
    monkeypatch.setenv("SPANLIGHT_USER", "blocked*")
    path = _imports(tmp_path) / "processed_custom.json"
    path.write_text(json.dumps(RECORDS[:2]))
    at = _import_page(path)
    at.button(key="import_go").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == ["The account 'blocked\\*' is disabled."]  # the * as typed
    engine = make_engine(store)
    try:
        assert list_dataset_infos(engine) == []
    finally:
        engine.dispose()


def test_import_page_overrides_the_format_and_names_unreadable_files(store: str, tmp_path: Path) -> None:
    path = _imports(tmp_path) / "weird.bin"
    path.write_bytes(b"\xff\xfe not text")
    at = _import_page(path)
    assert "not recognised" in at.warning[0].value
    at.selectbox(key="import_format_benchmark").set_value("canonical").run()
    assert "not valid UTF-8" in problem_report(at)["reason"][0]
    assert at.button(key="import_go").disabled


def test_detector_outputs_chosen_as_a_benchmark_file_say_to_import_them_as_a_run(
    store: str, tmp_path: Path
) -> None:
    """Detector outputs sent to the benchmark import got only "The format was not recognised: choose
    it below", though no benchmark format reads them."""
    path = _imports(tmp_path) / "outputs.json"
    path.write_text(json.dumps([{"id": "a", "output": "<Tagged_Text>A <b>cube</b>.</Tagged_Text>"}]))
    at = _import_page(path)
    assert not at.exception
    assert at.warning[0].value == (
        literal(
            "The format of outputs.json was not recognised; this looks like detector outputs (format "
            "'mhalo-outputs'): import them as a detector run with import-predictions / the 'Detector "
            "outputs' import"
        )
    )
    at.selectbox(key="import_format_benchmark").set_value("canonical").run()
    assert "import them as a detector run" in problem_report(at)["reason"][0]


def test_a_new_file_is_recognised_afresh_not_read_as_the_last_ones_format_and_dataset(
    store: str, tmp_path: Path
) -> None:
    """The format and dataset chosen for one file went with the next file chosen: an AlignBench CSV
    after a MHALO file was read as MHALO, into the MHALO file's dataset."""
    first = _imports(tmp_path) / "processed_custom.json"
    first.write_text(json.dumps(RECORDS[:2]))
    second = _imports(tmp_path) / "captions.csv"
    second.write_text(
        "model,image_source,image_name,sentence_index,caption,annotation\nm,s,a.jpg,0,A cat.,correct\n"
    )
    at = _import_page(first)
    assert at.selectbox(key="import_format_benchmark").value == "mhalo"
    assert at.text_input(key="import_dataset").value == "processed_custom"
    at.text_input(key="import_subset").input("first-subset").run()
    at.text_input(key="import_path").input(str(second)).run()
    assert at.text_input(key="import_subset").value == ""
    assert not at.exception
    assert at.selectbox(key="import_format_benchmark").value == "alignbench"
    assert at.text_input(key="import_dataset").value == "captions"
    # A choice made for the file stays while it is the file chosen.
    at.text_input(key="import_dataset").input("mine").run()
    at.selectbox(key="import_format_benchmark").set_value("canonical").run()
    assert at.text_input(key="import_dataset").value == "mine"
    assert at.selectbox(key="import_format_benchmark").value == "canonical"


def test_a_chosen_file_is_sniffed_once_not_at_every_click(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a file's format is recognised from is computed when the file is chosen, not at every rerun:
    a file whose first record is one long string was read through, all of it, at each click on the page."""
    import formats.text

    sniffed: list[int] = []
    real_sniff = formats.text.sniff_head

    def spy(head: bytes, parts: Iterable[bytes | memoryview]) -> bytes:
        sniffed.append(len(head))
        return real_sniff(head, parts)

    monkeypatch.setattr(formats.text, "sniff_head", spy)  # the page imports it at each run
    long = json.dumps([{**RECORDS[1], "prompt": "p" * 100_000}, RECORDS[1]]).encode()
    at = AppTest.from_file(IMPORT_PAGE, default_timeout=TIMEOUT).run()
    at.file_uploader(key="import_upload").upload("long.json", long).run()
    assert at.selectbox(key="import_format_benchmark").value == "mhalo" and len(sniffed) == 1
    at.checkbox(key="import_replace").check().run()
    at.text_input(key="import_subset").input("s").run()
    assert not at.exception and len(sniffed) == 1
    at.file_uploader(key="import_upload").upload("long.json", long + b"\n").run()  # another upload
    assert len(sniffed) == 2
    path = _imports(tmp_path) / "long.json"
    path.write_bytes(long)
    at.radio(key="import_mode").set_value("Path on the server").run()
    at.text_input(key="import_path").input(str(path)).run()
    assert at.selectbox(key="import_format_benchmark").value == "mhalo" and len(sniffed) == 3
    at.checkbox(key="import_replace").uncheck().run()
    assert not at.exception and len(sniffed) == 3
    path.write_text(json.dumps(RECORDS[:2]))  # the same path, a changed file: sniffed afresh
    at.checkbox(key="import_replace").check().run()
    assert len(sniffed) == 4


def test_import_page_takes_detector_outputs(store: str, tmp_path: Path) -> None:
    engine = _bench_store(store)
    path = _imports(tmp_path) / "outputs.jsonl"
    outputs = [
        {
            "id": "b",
            "output": "<Analysis>Counted wrong.</Analysis><Tagged_Text><hallucination>Two</hallucination> cats.</Tagged_Text>",
        },
        {"id": "a", "output": "no tags at all"},
    ]
    path.write_text("".join(json.dumps(o) + "\n" for o in outputs))
    at = AppTest.from_file(IMPORT_PAGE, default_timeout=TIMEOUT).run()
    at.radio(key="import_kind").set_value("Detector outputs").run()
    at.radio(key="import_mode").set_value("Path on the server").run()
    at.text_input(key="import_path").input(str(path)).run()
    assert at.selectbox(key="import_format_predictions").value == "mhalo-outputs"
    assert at.button(key="import_go").disabled  # no detector name yet
    at.text_input(key="import_detector").input("tagger").run()
    assert {m.label: m.value for m in at.metric}["Warnings"] == "1"
    assert any("Output kept without spans" in c.value for c in at.caption)
    at.button(key="import_go").click().run()
    assert not at.exception and at.success
    try:
        sets = {ls.name: ls for ls in export_bundle(engine, "bench", actor=OPERATOR).label_sets}
    finally:
        engine.dispose()
    tagger = {a.item: a for a in sets["tagger"].annotations}
    assert tagger["b"].raw_output.analysis == "Counted wrong."
    assert tagger["a"].raw_output.follows_format is False


def test_detector_outputs_go_to_the_dataset_the_user_works_on(store: str, tmp_path: Path) -> None:
    """The page opened on a dataset offers it for the outputs, not the first one by name; a record
    naming no item of it says which dataset was looked in."""
    engine = _bench_store(store)
    import_file(
        engine,
        json.dumps(RECORDS[:1]).encode(),
        source="a.json",
        format_name="mhalo",
        options=ReadOptions(dataset="another"),  # before "bench" by name
        actor=OPERATOR,
    )
    engine.dispose()
    path = _imports(tmp_path) / "outputs.jsonl"
    path.write_text(json.dumps({"id": "zzz", "output": "<Tagged_Text>Two cats.</Tagged_Text>"}) + "\n")
    at = _outputs_on_server(path)
    assert at.selectbox(key="import_target").value == "bench"
    at.text_input(key="import_detector").input("tagger").run()
    assert "no item 'zzz' in dataset 'bench'" in html.unescape(_html(at))


def _bench(url: str) -> None:
    """Dataset "bench": items a, b and c, each response its own short text."""
    engine = make_engine(url)
    rows = [{"id": k, "test_solution": text, "hallucinated_solution": text} for k, text in
            (("a", "Two cats."), ("b", "A red bus."), ("c", "One dog."))]  # fmt: skip
    import_file(
        engine, json.dumps(rows).encode(), source="t.json", format_name="mhalo",
        options=ReadOptions(dataset="bench"), actor=OPERATOR,
    )  # fmt: skip
    engine.dispose()


def test_the_import_page_refuses_a_run_over_another_dataset(store: str, tmp_path: Path) -> None:
    """Outputs under this dataset's ids that copy none of its responses: the preview and the import say
    it once for the file, and skipping bad records does not import it."""
    _bench(store)
    path = _imports(tmp_path) / "outputs.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": k,
                    "output": f"<Tagged_Text>Angle {k} is <hallucination>60°</hallucination>.</Tagged_Text>",
                }
            )
            + "\n"
            for k in "abc"
        )
    )
    at = _outputs_on_server(path)
    at.text_input(key="import_detector").input("wrongdata").run()
    refusal = "none of the 3 outputs matches its item's response"
    assert {m.label: m.value for m in at.metric} == {"Outputs": "0", "Errors": "1", "Warnings": "0"}
    assert refusal in html.unescape(_html(at)) and at.button(key="import_go").disabled
    # Skipping bad records cannot import a file refused whole: the page neither suggests nor offers it.
    said = [w.value for w in at.warning]
    assert "Nothing of this file can be imported as it is: see the report above." in said
    assert not any("allow skipping" in w for w in said)
    assert at.checkbox(key="import_allow_skip").disabled and at.button(key="import_go").disabled
    engine = make_engine(store)
    try:
        assert [ls.name for ls in export_bundle(engine, "bench", actor=OPERATOR).label_sets] == ["gold"]
    finally:
        engine.dispose()


def _run_over_another_dataset(url: str, tmp_path: Path) -> Path:
    """Dataset "bench" (a, b, c) and a run whose outputs copy other texts, with ids "zzz" and "q" among
    them that name no item: three records' errors and the file's refusal."""
    _bench(url)
    outputs = [
        {"id": k, "output": f"<Tagged_Text>Angle {k} is <hallucination>60°</hallucination>.</Tagged_Text>"}
        for k in ("a", "zzz", "b", "c", "q")
    ]
    path = _imports(tmp_path) / "outputs.jsonl"
    path.write_text("".join(json.dumps(output) + "\n" for output in outputs))
    return path


def test_the_report_says_first_why_a_whole_file_is_refused(store: str, tmp_path: Path) -> None:
    """The refusal of the whole run came last, under the lines of its records: read from the top, the
    report gave details first and the reason nothing can be imported at the bottom."""
    at = _outputs_on_server(_run_over_another_dataset(store, tmp_path))
    at.text_input(key="import_detector").input("wrongdata").run()
    report = problem_report(at)
    assert list(report["record"]) == ["-", "#1 (id=zzz)", "#4 (id=q)"], report
    assert "none of the 3 outputs matches its item's response" in report["reason"][0]
    assert "Nothing of this file can be imported as it is: see the report above." in [
        w.value for w in at.warning
    ]


def test_the_import_page_says_a_tri_he_files_runs_are_not_imported_with_its_items(
    store: str, tmp_path: Path
) -> None:
    """A Tri-HE file with a model's run imported as a benchmark: the preview and the import name the
    model's keys and where to import them, like the file's other notes."""
    path = _imports(tmp_path) / "trihe_with_runs.json"
    instance = {"question": "Who sits?", "answer": "A man.", "triplet": ["(man, sits on, bench)"],
                "llava_triplets": ["(man, sits on, chair)"], "llava_triplets_judgements": ["no"]}  # fmt: skip
    path.write_text(json.dumps({"7": {"instance": [instance], "triplets": ["(man, sits on, bench)"]}}))
    at = _import_page(path)
    assert at.selectbox(key="import_format_benchmark").value == "trihe"
    note = "runs of model 'llava' (llava_triplets, llava_triplets_judgements)"
    assert {m.label: m.value for m in at.metric}["Warnings"] == "1"
    assert note in html.unescape(_html(at))
    at.button(key="import_go").click().run()
    assert not at.exception and "1 new items" in at.success[0].value
    assert note in html.unescape(_html(at))


def _far_file(tmp_path: Path) -> tuple[Path, Path]:
    """A canonical file in the import folder naming its own image folder, which lies outside it; the
    file and that folder."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    lines = [
        {"record": "dataset", "format_version": 1, "name": "far", "source_format": "canonical",
         "image_root": str(outside)},
        {"record": "item", "external_id": "a", "response": "A cat.", "image_ref": "secret.jpg"},
    ]  # fmt: skip
    path = _imports(tmp_path) / "far.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path, outside


def test_a_files_own_image_folder_outside_the_import_folder_is_not_used(store: str, tmp_path: Path) -> None:
    """A canonical file names its image folder. From the page it is used only inside the import (or
    data) folder, like a folder typed there: the preview does not probe one elsewhere, the import does
    not keep it, and both say why. (The command line, run by whoever holds the store, keeps it.)"""
    path, outside = _far_file(tmp_path)
    at = _import_page(path)
    page = html.unescape(_html(at))
    assert f"the file's image folder {str(outside)!r} is outside" in page
    assert "secret.jpg" not in page  # not probed there
    at.button(key="import_go").click().run()
    assert not at.exception and at.success
    engine = make_engine(store)
    try:
        far = get_dataset(engine, "far")
        assert far is not None and far.image_root is None
        kept = import_file(engine, path.read_bytes(), source="far.jsonl", actor=OPERATOR,
                           options=ReadOptions(dataset="cli"))  # fmt: skip
        cli = get_dataset(engine, "cli")
        assert kept.ok and cli is not None and cli.image_root == str(outside)
    finally:
        engine.dispose()


def test_a_chosen_image_folder_quiets_the_files_own(store: str, tmp_path: Path) -> None:
    """Once an image folder is chosen on the page, the file's own folder would not be used anyway: the
    preview and the import no longer ask to choose one (the warning stayed after the folder was chosen)."""
    path, _ = _far_file(tmp_path)
    chosen = _imports(tmp_path) / "images"
    chosen.mkdir()
    (chosen / "secret.jpg").write_bytes(b"not really a picture")
    at = _import_page(path)
    assert "choose an image folder on the Import page" in html.unescape(_html(at))
    at.text_input(key="import_image_root").input(str(chosen)).run()
    assert "choose an image folder" not in html.unescape(_html(at))
    at.button(key="import_go").click().run()
    assert not at.exception and at.success
    assert "choose an image folder" not in html.unescape(_html(at))


def test_export_page_offers_a_download(store: str) -> None:
    engine = _bench_store(store)
    row = {
        "model": "m",
        "image_name": "a.jpg",
        "sentence_index": 0,
        "caption": "Two cats.",
        "annotation": "incorrect",
    }
    import_file(
        engine,
        json.dumps([row]).encode(),
        source="s.json",
        format_name="alignbench",
        options=ReadOptions(dataset="sentences"),
        actor=OPERATOR,
    )
    engine.dispose()
    at = AppTest.from_file(EXPORT_PAGE, default_timeout=TIMEOUT).run()
    at.selectbox(key="dataset_picker").set_value("bench").run()
    assert not at.exception
    assert at.selectbox(key="export_format").value == "mhalo"
    assert at.multiselect(key="export_label_sets").value == ["gold:gold"]
    at.button(key="export_prepare").click().run()
    (download,) = at.get("download_button")
    assert "bench.json" in download.label
    # AlignBench holds sentence labels, which this dataset of spans has none of: refused, nothing offered.
    at.selectbox(key="export_format").set_value("alignbench").run()
    at.radio(key="export_encoding").set_value(".csv").run()
    at.button(key="export_prepare").click().run()
    assert "holds sentence labels" in at.error[0].value and "has none: it has 2 spans" in at.error[0].value
    assert not at.get("download_button")
    # A dataset with sentence labels is written in the chosen encoding.
    at.selectbox(key="dataset_picker").set_value("sentences").run()
    at.selectbox(key="export_format").set_value("alignbench").run()
    at.radio(key="export_encoding").set_value(".csv").run()
    at.button(key="export_prepare").click().run()
    (download,) = at.get("download_button")
    assert "sentences.csv" in download.label
    at.selectbox(key="dataset_picker").set_value("bench").run()
    at.selectbox(key="export_format").set_value("typed-tags").run()
    at.button(key="export_prepare").click().run()
    assert "would read back as a tag" in at.error[0].value
    assert not at.get("download_button")


def test_export_page_links_to_the_streamed_file_where_the_server_serves_it(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _bench_store(store)
    monkeypatch.setattr(prepared_exports, "_served_at", ["/api/download"])
    at = AppTest.from_file(EXPORT_PAGE, default_timeout=TIMEOUT).run()
    at.selectbox(key="dataset_picker").set_value("bench").run()
    at.button(key="export_prepare").click().run()
    assert not at.exception and not at.get("download_button")
    (link,) = at.get("link_button")
    assert "bench.json" in link.proto.label
    ticket = link.proto.url.removeprefix("/api/download/")
    assert link.proto.url == f"/api/download/{ticket}"
    first = prepared_exports.prepared_file(ticket)
    assert first is not None and first.parent.parent == tmp_path / "data" / "exports"
    assert first.read_bytes() == export_file(engine, "bench", "mhalo", actor=OPERATOR, filename="bench.json")
    # Prepared again (another format): the earlier file is gone, the link is the new one's.
    at.selectbox(key="export_format").set_value("canonical").run()
    at.button(key="export_prepare").click().run()
    (link,) = at.get("link_button")
    assert prepared_exports.prepared_file(ticket) is None
    assert not first.parent.exists()
    assert (
        b'"record": "dataset"'
        in prepared_exports.prepared_file(link.proto.url.rsplit("/", 1)[1]).read_bytes()
    )
    engine.dispose()


def _count_items_elsewhere(db_file: Path) -> int:
    """The items another process sees in the store (it opens and closes the file, as a CLI run would)."""
    script = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(c.execute('SELECT count(*) FROM items').fetchone()[0]); c.close()"
    done = subprocess.run(
        [sys.executable, "-c", script, str(db_file)], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


def test_import_page_refuses_the_live_store_and_later_labels_survive(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db_file = Path(store.removeprefix("sqlite:///"))
    monkeypatch.setenv("SPANLIGHT_IMPORT_DIR", str(db_file.parent))  # a careless setting: the store's folder
    engine = make_engine(store)
    try:
        import_file(
            engine, json.dumps(RECORDS[:1]).encode(), source="one.json", format_name="mhalo", actor=OPERATOR
        )
        assert _count_items_elsewhere(db_file) == 1
        before = db_file.with_name(db_file.name + "-wal").exists()
        at = _import_page(db_file)
        assert not at.exception
        assert "own database" in at.error[0].value
        assert at.metric == [] and _count_items_elsewhere(db_file) == 1
        assert db_file.with_name(db_file.name + "-wal").exists() == before
        # This process still writes through its open connection; another process must see the write.
        import_file(
            engine, json.dumps(RECORDS[1:2]).encode(), source="two.json", format_name="mhalo", actor=OPERATOR
        )
        assert _count_items_elsewhere(db_file) == 2
    finally:
        engine.dispose()


def test_import_page_offers_upload_only_when_server_paths_are_off(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPANLIGHT_IMPORT_DIR", "off")
    at = AppTest.from_file(IMPORT_PAGE, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert not [r for r in at.radio if r.key == "import_mode"]
    assert at.get("file_uploader")


def test_import_page_refuses_files_outside_the_import_folder_and_above_the_cap(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(RECORDS))
    at = _import_page(outside)
    assert "outside" in at.error[0].value and at.metric == []
    monkeypatch.setenv("SPANLIGHT_MAX_IMPORT_MB", "1")
    big = _imports(tmp_path) / "big.json"
    big.write_text(json.dumps(RECORDS * 4000))
    assert big.stat().st_size > 1024 * 1024
    at = _import_page(big)
    assert "more than the import limit of 1 MB" in at.error[0].value and at.metric == []


def test_import_page_previews_only_the_head_of_a_large_file(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import formats.preview

    seen: list[int] = []
    real_read = formats.preview.read_file

    def spy(fmt, data, source, options):
        seen.append(len(data))
        return real_read(fmt, data, source, options)

    monkeypatch.setattr(formats.preview, "read_file", spy)
    long = "Two cats. " * 60
    rows = [
        {
            "id": f"r{k}",
            "prompt": "Count.",
            "test_solution": long,
            "hallucinated_solution": "<hallucination>Two</hallucination>" + long[3:],
        }
        for k in range(6000)
    ]
    big = _imports(tmp_path) / "processed_big.json"
    big.write_text(json.dumps(rows, indent=1))
    assert big.stat().st_size > 4 * formats.preview.PREVIEW_HEAD_BYTES
    at = _import_page(big)
    assert not at.exception
    assert seen and max(seen) <= formats.preview.PREVIEW_HEAD_BYTES
    items = int({m.label: m.value for m in at.metric}["Items"].replace(",", ""))
    assert 0 < items < len(rows)
    assert any("first 1,024 KB" in c.value for c in at.caption)
    at.button(key="import_go").click().run()
    assert not at.exception and "6000 new items" in at.success[0].value


def _long_first(length: int, lines: bool) -> tuple[str, bytes]:
    """A file (its name and bytes) whose first record holds ``length`` characters, then two short ones."""
    if lines:
        records: list[dict[str, object]] = [
            {"record": "dataset", "format_version": 1, "name": "long", "source_format": "canonical"},
            {"record": "item", "external_id": "long", "response": "A cat. " * (length // 7 + 1)},
            {"record": "item", "external_id": "x", "response": XSS},
            {"record": "item", "external_id": "y", "response": "Two cats."},
        ]
        return "long.jsonl", "".join(json.dumps(r) + "\n" for r in records).encode()
    records = [{**RECORDS[1], "id": "long", "prompt": "p" * length}, RECORDS[0], RECORDS[1]]
    return "long.json", json.dumps(records).encode()


@pytest.mark.parametrize("lines", [False, True], ids=["JSON list", "JSON lines"])
def test_a_preview_whose_first_record_is_longer_than_its_head_counts_no_zero(
    store: str, lines: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose first record is longer than the 1 MB the preview reads showed "Items 0", as if it were
    empty: the preview reads on (up to PREVIEW_LONG_BYTES) and shows its records, or says why it shows
    none; the import reads every record."""
    import formats.preview

    monkeypatch.setattr(formats.preview, "PREVIEW_LONG_BYTES", 3 * PREVIEW_HEAD_BYTES)
    name, data = _long_first(PREVIEW_HEAD_BYTES + 10, lines)
    _, more = _long_first(3 * PREVIEW_HEAD_BYTES, lines)
    at = AppTest.from_file(IMPORT_PAGE, default_timeout=TIMEOUT).run()
    at.file_uploader(key="import_upload").upload(name, data).run()
    assert not at.exception and not at.info
    assert {m.label: m.value for m in at.metric}["Items"] == "3"
    assert [t.value.split(" · ")[0] for t in at.text] == (["long", "x", "y"] if lines else ["long", "a", "b"])

    at.file_uploader(key="import_upload").upload(name, more).run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Items"] == "—"
    assert [i.value for i in at.info] == [
        f"The first 3,072 KB of {len(more) / 1024 / 1024:,.1f} MB, all the preview reads, hold no whole "
        "record: the first one is longer, so none is shown or counted here. Import reads and checks the "
        "whole file."
    ]
    at.button(key="import_go").click().run()
    assert not at.exception and "3 new items" in at.success[0].value


def test_a_long_text_is_previewed_by_its_beginning_and_imported_whole(store: str) -> None:
    """A first record of a few MB was drawn whole, spans and all, and the page sent every character to
    the browser. The preview now draws the beginning (PREVIEW_TEXT_CHARS) with the spans over it and says
    how much it leaves out; the import still takes the whole text."""
    response = "A cat sits. " * 200_000  # 2.4 MB: past the preview's first read, within its long read
    records = [
        {"record": "dataset", "format_version": 1, "name": "long", "source_format": "canonical"},
        {"record": "item", "external_id": "long", "response": response},
        {"record": "label_set", "kind": "gold", "name": "gold"},
        {
            "record": "annotations",
            "label_set": {"kind": "gold", "name": "gold"},
            "item": "long",
            "spans": [
                {"start": 2, "end": 5},  # drawn
                {"start": PREVIEW_TEXT_CHARS - 2, "end": PREVIEW_TEXT_CHARS + 7},  # drawn up to the cut
                {"start": len(response) - 6, "end": len(response) - 1},  # past it: counted
            ],
        },
    ]
    at = AppTest.from_file(IMPORT_PAGE, default_timeout=TIMEOUT).run()
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    at.file_uploader(key="import_upload").upload("long.jsonl", data).run()
    assert not at.exception
    (drawn,) = [e.proto.body for e in at.get("html") if "A cat sits." in e.proto.body]
    assert drawn.count("cat") == response[:PREVIEW_TEXT_CHARS].count("cat")  # the beginning only
    assert [c.value for c in at.caption if "more character" in c.value] == [
        f"… {len(response) - PREVIEW_TEXT_CHARS:,} more characters and 1 span over them, not shown here; "
        "the import takes the whole text."
    ]
    at.button(key="import_go").click().run()
    assert not at.exception and "1 new items" in at.success[0].value
    engine = make_engine(store)
    try:
        (gold,) = export_bundle(engine, "long", actor=OPERATOR).label_sets
        (item,) = export_bundle(engine, "long", actor=OPERATOR).items
    finally:
        engine.dispose()
    assert item.response == response and len(gold.annotations[0].spans) == 3


def test_import_page_refuses_uploads_above_the_cap(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPANLIGHT_MAX_IMPORT_MB", "1")
    at = AppTest.from_file(IMPORT_PAGE, default_timeout=TIMEOUT).run()
    at.file_uploader(key="import_upload").upload("big.json", json.dumps(RECORDS * 4000).encode()).run()
    assert not at.exception
    assert "more than the import limit of 1 MB" in at.error[0].value and at.metric == []
    at.file_uploader(key="import_upload").upload("small.json", json.dumps(RECORDS).encode()).run()
    assert {m.label: m.value for m in at.metric}["Items"] == "2"
    at.file_uploader(key="import_image_zip").upload("images.zip", bytes(1024 * 1024 + 1)).run()
    assert "images.zip" in at.error[0].value and "more than the import limit" in at.error[0].value


def test_import_page_offers_the_faithscore_polarity(store: str, tmp_path: Path) -> None:
    record = {
        "id": "000000000042",
        "answer": "A dog sits on a sofa, probably asleep.",
        "stage 1": {"A dog sits on a sofa": 1, " probably asleep": 0},
        "stage 2": {"There is a dog.": 1, "There is a sofa.": 0},
    }
    path = _imports(tmp_path) / "annotation.jsonl"
    path.write_text(json.dumps(record) + "\n")
    at = _import_page(path)
    assert not at.exception
    assert at.selectbox(key="import_format_benchmark").value == "faithscore"
    polarity = at.radio(key="import_faithscore_polarity")
    assert polarity.value == "data" and list(polarity.options) == [
        "as the annotations use them: 1 = faithful fact / descriptive sub-sentence",
        "as the README states: 1 = hallucinated fact / analytical sub-sentence",
    ]
    polarity.set_value("readme").run()
    at.button(key="import_go").click().run()
    assert not at.exception and at.success
    engine = make_engine(store)
    try:
        (gold,) = export_bundle(engine, "annotation", actor=OPERATOR).label_sets
    finally:
        engine.dispose()
    (said,) = gold.annotations
    assert [lab.label for lab in said.claim_labels] == ["hallucination", "non-hallucination"]
    assert [lab.index for lab in said.sentence_labels] == [0]


def test_import_page_takes_ratings_as_gold_and_exports_them_as_csv(store: str, tmp_path: Path) -> None:
    engine = make_engine(store)
    assert import_file(
        engine,
        sample_bytes(),
        source="mmhal.json",
        format_name="mmhal",
        options=ReadOptions(dataset="mm"),
        actor=OPERATOR,
    ).ok
    path = _imports(tmp_path) / "gold.csv"
    path.write_text(f"id,rating,hallucination\n{IDS[0]},0,yes\n{IDS[3]},3,no\n")
    at = AppTest.from_file(IMPORT_PAGE, default_timeout=TIMEOUT).run()
    at.radio(key="import_kind").set_value("Detector outputs").run()
    at.radio(key="import_mode").set_value("Path on the server").run()
    at.text_input(key="import_path").input(str(path)).run()
    assert at.selectbox(key="import_format_predictions").value == "mmhal-ratings"
    at.text_input(key="import_detector").input("gold").run()
    at.radio(key="import_ratings_kind").set_value("gold").run()
    assert any("Rated 0 of 0-6, hallucination: yes" in c.value for c in at.caption)
    at.button(key="import_go").click().run()
    assert not at.exception and at.success
    try:
        gold = next(ls for ls in export_bundle(engine, "mm", actor=OPERATOR).label_sets if ls.kind == "gold")
    finally:
        engine.dispose()
    assert [(a.item, a.response_score.score, a.response_score.hallucination) for a in gold.annotations] == [
        (IDS[0], 0.0, True),
        (IDS[3], 3.0, False),
    ]
    out = AppTest.from_file(EXPORT_PAGE, default_timeout=TIMEOUT).run()
    assert out.selectbox(key="export_format").value == "mmhal"
    out.selectbox(key="export_format").set_value("mmhal-ratings").run()
    out.radio(key="export_encoding").set_value(".csv").run()
    out.button(key="export_prepare").click().run()
    (download,) = out.get("download_button")
    assert "mm.csv" in download.label


def test_a_large_server_file_read_from_disk_imports_past_the_default_cap(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench.make_import_files import write_alignbench
    from db import import_folder

    monkeypatch.setattr(import_folder, "DEFAULT_MAX_IMPORT_MB", 0.01)  # 10 KB: both files are larger
    rows = _imports(tmp_path) / "rows.csv"
    write_alignbench(rows, 300)
    records = _imports(tmp_path) / "records.json"
    records.write_text(json.dumps(RECORDS[:2] * 40))
    assert min(rows.stat().st_size, records.stat().st_size) > 0.01 * 1024 * 1024

    at = _import_page(rows)  # AlignBench rows are read from disk as they are imported: no cap
    assert not at.exception and not at.error
    at.button(key="import_go").click().run()
    assert not at.exception and "50 new items" in at.success[0].value

    at = _import_page(records)  # a JSON document is read whole: the cap guards the server's memory
    assert not at.exception and not at.error
    at.button(key="import_go").click().run()
    assert not at.success
    assert "more than the import limit" in _html(at)  # the outcome's problem, below the preview's

    monkeypatch.setenv("SPANLIGHT_MAX_IMPORT_MB", "0.01")  # a cap the operator set holds for every file
    at = _import_page(rows)
    assert "more than the import limit" in at.error[0].value
    assert not [b for b in at.button if b.key == "import_go"]


def test_import_page_preview_counts_the_missing_images_the_import_will_report(
    store: str, tmp_path: Path
) -> None:
    """The image folder is checked in the preview as the import checks it: one warning per item whose
    image is missing, so the preview's counts are the import's (before, the preview said 0 and the
    import gave one warning per item of every missing image)."""
    from PIL import Image

    folder = _imports(tmp_path)
    images = folder / "images"
    images.mkdir()
    Image.new("RGB", (4, 4)).save(images / "1.jpg")
    entry = {"triplets": ["(cat, on, mat)"], "all_object": ["cat"], "object": ["cat"]}
    document = {
        "1": {"instance": [{"question": "Where?", "answer": "On a mat.", "triplet": []}], **entry},
        "2": {
            "instance": [
                {"question": "What?", "answer": "A cat.", "triplet": []},
                {"question": "Which?", "answer": "The cat.", "triplet": []},
            ],
            **entry,
        },
    }
    path = folder / "tri-he.json"
    path.write_text(json.dumps(document))
    at = _import_page(path)
    assert at.selectbox(key="import_format_benchmark").value == "trihe"
    assert {m.label: m.value for m in at.metric}["Warnings"] == "0"
    at.text_input(key="import_image_root").input(str(images)).run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Warnings"] == "2"
    report = problem_report(at)
    assert list(report["record"]) == ["id=2/0", "id=2/1"]
    assert set(report["reason"]) == {"image '2.jpg': not found under the image folder"}
    at.button(key="import_go").click().run()
    assert not at.exception and "3 new items" in at.success[0].value
    assert list(problem_report(at)["record"]) == ["id=2/0", "id=2/1"]  # what the import reported
    # The same file again, no folder chosen: the import checks the dataset's own folder, so does the preview.
    again = _import_page(path)
    assert {m.label: m.value for m in again.metric}["Warnings"] == "2"


def _import_outputs(engine: Engine, dataset: str, detector: str, outputs: list[dict[str, str]]) -> None:
    """A detector's tagged outputs (MHALO) on items of ``dataset``, imported; the engine disposed of."""
    ran = import_predictions(
        engine,
        json.dumps(outputs).encode(),
        source="o.json",
        dataset=dataset,
        detector=detector,
        format_name="mhalo-outputs",
        actor=OPERATOR,
    )
    assert ran.ok, ran.summary()
    engine.dispose()


def test_export_label_sets_are_the_picked_datasets_own(app_db: str) -> None:
    """After picking another dataset, the Label sets box kept the label sets the dataset before had (those
    both share): a detector run only the new dataset has was not chosen, and the file left it out."""
    add_small_dataset(app_db, "second")
    output = "A <hallucination>red</hallucination> cube number 1. The ball is blue."
    _import_outputs(make_engine(app_db), "second", "careful", [{"id": "item-1", "output": output}])
    at = AppTest.from_file(EXPORT_PAGE, default_timeout=TIMEOUT).run()
    at.selectbox(key="dataset_picker").set_value("pages-test").run()
    assert at.multiselect(key="export_label_sets").value == ["gold:gold", "detector:eager"]
    at.selectbox(key="dataset_picker").set_value("second").run()
    assert not at.exception
    box = at.multiselect(key="export_label_sets")
    assert sorted(box.value) == ["detector:careful", "detector:eager", "gold:gold"]


def test_export_page_says_what_the_format_leaves_out(store: str) -> None:
    outputs = [{"id": "b", "output": "<hallucination>Two</hallucination> cats."}]
    _import_outputs(_bench_store(store), "bench", "eager <b>", outputs)
    at = AppTest.from_file(EXPORT_PAGE, default_timeout=TIMEOUT).run()
    at.selectbox(key="dataset_picker").set_value("bench").run()
    assert at.multiselect(key="export_label_sets").value == ["gold:gold", "detector:eager <b>"]
    at.button(key="export_prepare").click().run()
    assert not at.exception and at.get("download_button")
    assert "does not keep everything chosen" in at.warning[0].value
    assert [t.value for t in at.text] == [
        "• detector:eager <b> is not in the file: MHALO (tagged JSON) writes one label set, gold:gold"
    ]


def test_a_large_json_object_file_previewed_by_its_head_can_still_be_imported(
    store: str, tmp_path: Path
) -> None:
    """A Tri-HE file is one JSON object: its first megabyte, all the preview reads, is no JSON at all. That
    is no refusal of the whole file, whose import reads all of it."""
    document = {
        str(1000 + k): {
            "instance": [
                {"question": f"What is {k}?", "answer": "A cat on a mat. " * 8, "triplet": ["(cat, on, mat)"]}
            ],
            "triplets": ["(cat, on, mat)"] * 8,
            "all_object": ["cat", "mat"],
            "object": ["cat"],
        }
        for k in range(3000)
    }
    path = _imports(tmp_path) / "tri-he.json"
    path.write_text(json.dumps(document))
    assert path.stat().st_size > PREVIEW_HEAD_BYTES
    at = _import_page(path)
    assert not at.exception
    assert not any("Nothing of this file can be imported" in w.value for w in at.warning)
    at.checkbox(key="import_allow_skip").check().run()
    assert not at.button(key="import_go").disabled
    at.button(key="import_go").click().run()
    assert not at.exception and "3000 new items" in at.success[0].value


def test_an_uploads_relative_image_folder_missing_from_the_import_folder_is_told(
    store: str, tmp_path: Path
) -> None:
    """An uploaded file naming "images/" has no folder of its own: the folder is looked for in the import
    folder, and when it is not there the preview and the import say so, naming the folder as the file
    wrote it and where it was looked for (the dataset was imported with every image missing, unsaid)."""
    lines = [
        {"record": "dataset", "format_version": 1, "name": "cats", "source_format": "canonical",
         "image_root": "images/"},
        {"record": "item", "external_id": "a", "response": "A cat.", "image_ref": "a.png"},
    ]  # fmt: skip
    looked = (_imports(tmp_path) / "images").resolve()
    told = (
        f"the image folder 'images/' named in the file (looked for at {looked}) does not exist, so none of "
        "the file's 1 image(s) was found"
    )
    at = AppTest.from_file(IMPORT_PAGE, default_timeout=TIMEOUT).run()
    upload = "".join(json.dumps(line) + "\n" for line in lines).encode()
    at.file_uploader(key="import_upload").upload("cats.jsonl", upload).run()
    assert not at.exception
    assert list(problem_report(at)[["file", "reason"]].itertuples(index=False, name=None)) == [
        ("cats.jsonl", told)
    ]
    at.button(key="import_go").click().run()
    assert not at.exception and "1 new items" in at.success[0].value
    assert list(problem_report(at)["reason"]) == [told]


def test_a_server_files_relative_image_folder_is_looked_for_beside_it(store: str, tmp_path: Path) -> None:
    """A file in a folder of the import folder naming "images/", its images beside it: the preview and
    the import find them there (they looked in the import folder itself and found none)."""
    from PIL import Image

    folder = _imports(tmp_path) / "cats"
    (folder / "images").mkdir(parents=True)
    Image.new("RGB", (4, 4)).save(folder / "images" / "a.png")
    lines = [
        {"record": "dataset", "format_version": 1, "name": "cats", "source_format": "canonical",
         "image_root": "images/"},
        {"record": "item", "external_id": "a", "response": "A cat.", "image_ref": "a.png"},
    ]  # fmt: skip
    path = folder / "cats.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    at = _import_page(path)
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Warnings"] == "0"
    at.button(key="import_go").click().run()
    assert not at.exception and "1 new items" in at.success[0].value
    engine = make_engine(store)
    try:
        cats = get_dataset(engine, "cats")
        assert cats is not None and cats.image_root == str((folder / "images").resolve())
    finally:
        engine.dispose()


def test_a_file_whose_first_record_is_longer_than_the_preview_is_recognised(
    store: str, tmp_path: Path
) -> None:
    """A MHALO file whose first response is 2 MB was "not recognised" and read as canonical: its keys
    after the response lay past the part of the file the page looked at."""
    record = {**RECORDS[1], "test_solution": "word " * 400_000 + "Two cats."}
    record["hallucinated_solution"] = "word " * 400_000 + "<hallucination>Two</hallucination> cats."
    path = _imports(tmp_path) / "huge.json"
    path.write_text(json.dumps([record]))
    at = _import_page(path)
    assert not at.exception and not at.warning
    assert at.selectbox(key="import_format_benchmark").value == "mhalo"
    assert "Recognised as **MHALO (tagged JSON)**." in [c.value for c in at.caption]


def test_an_unrecognised_file_is_not_read_as_a_format_nobody_chose(store: str, tmp_path: Path) -> None:
    """A JSON array of unknown columns was read as canonical, the first format, and the report blamed
    the file for not being JSON Lines; the command line said only "not recognised". Both now say the
    same: not recognised, and what each format looks for; the page waits for a format to be chosen."""
    path = _imports(tmp_path) / "wrongcols.json"
    path.write_text(json.dumps([{"foo": 1, "bar": "x"}, {"foo": 2, "bar": "y"}]))
    at = _import_page(path)
    assert not at.exception
    (warning,) = [w.value for w in at.warning]
    said = not_recognised(path.read_bytes(), "wrongcols.json", "benchmark", choose="choose it below")
    assert warning == literal(said[:1].upper() + said[1:]).replace("\n", "  \n")
    assert "MHALO" in warning and "hallucinated" in warning
    assert at.selectbox(key="import_format_benchmark").value is None
    assert not at.get("dataframe") and not at.button  # no report of a format nobody chose, no Import
    at.selectbox(key="import_format_benchmark").set_value("mhalo").run()
    assert not at.exception and at.button(key="import_go").disabled


@pytest.mark.parametrize(
    ("outputs", "reason"),
    [
        (
            [
                {
                    "id": f"t{k}",
                    "output": "<Tagged_Text>A <hallucination>red</hallucination> cube.</Tagged_Text>",
                }
                for k in range(1, 5)
            ],
            "none of the 4 outputs names an item of dataset 'bench': is this run over another dataset? "
            "Nothing of it was imported; import it into the dataset its outputs are of",
        ),
        ([{"id": k, "note": "no output"} for k in "abc"], None),
    ],
    ids=["ids of another dataset", "every output missing"],
)
def test_a_run_of_which_no_record_is_sound_offers_no_skipping(
    store: str, tmp_path: Path, outputs: list[dict[str, str]], reason: str | None
) -> None:
    """Outputs every one of which was in error showed "fix them, or allow skipping bad records", and
    skipping them imported nothing; outputs whose ids are another dataset's never said so."""
    _bench(store)
    path = _imports(tmp_path) / "outputs.json"
    path.write_text(json.dumps(outputs))
    at = _outputs_on_server(path)
    at.selectbox(key="import_format_predictions").set_value("mhalo-outputs").run()
    at.text_input(key="import_detector").input("det").run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Outputs"] == "0"
    said = [w.value for w in at.warning]
    assert "Nothing of this file can be imported as it is: see the report above." in said
    assert not any("skipping" in w for w in said)
    assert at.checkbox(key="import_allow_skip").disabled and at.button(key="import_go").disabled
    if reason is not None:
        assert problem_report(at)["reason"][0] == reason
