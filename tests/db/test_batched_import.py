"""A large file is read and written in batches inside the import's one transaction: the store ends as
after a whole-file import, a flaw in a late batch still leaves it untouched, and a re-import adds
nothing. On SQLite and on PostgreSQL (where the rows go by COPY)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from db import models as m
from db import transfer
from db.access import OPERATOR
from db.exporter import export_bundle
from db.transfer import ImportOutcome, import_file, import_path, import_predictions
from formats import alignbench
from formats.base import ReadOptions
from formats.records import SentenceLabelRecord, SpanRecord

HEAD = "model,image_name,sentence_index,caption,annotation,error_type,error_words,n_correct,agreement_ratio\n"


def rows_csv(n_captions: int, *, bad_at: int | None = None, shuffled: bool = False) -> bytes:
    """Three sentences per caption; ``bad_at`` gives that caption a label no one knows."""
    lines = []
    for c in range(n_captions):
        for s in range(3):
            label = "wrong" if c == bad_at and s == 1 else ("incorrect" if s == 2 else "correct")
            words = '"[""dog""]"' if s == 2 else ""
            lines.append(f"m{c % 3},img{c}.jpg,{s},A dog sits here {s}.,{label},Object,{words},{s},0.5\n")
    if shuffled:  # a caption's rows apart from each other
        lines = lines[0::2] + lines[1::2]
    return (HEAD + "".join(lines)).encode()


def counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as connection:
        return {
            model.__tablename__: connection.scalar(select(func.count()).select_from(model)) or 0
            for model in (m.Item, m.Sentence, m.SentenceLabel, m.Span, m.EditLog)
        }


def run(engine: Engine, data: bytes, dataset: str = "ab") -> ImportOutcome:
    return import_file(
        engine,
        data,
        actor=OPERATOR,
        source="rows.csv",
        format_name="alignbench",
        options=ReadOptions(dataset=dataset),
    )


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(alignbench, "BATCH_ROWS", 7)  # 40 captions of 3 rows: 14 batches


def test_batches_store_what_a_whole_file_import_stores(engine: Engine, small_batches: None) -> None:
    data = rows_csv(40)
    read = alignbench.FORMAT.read_batches(data, source="rows.csv", options=ReadOptions(dataset="ab"))
    assert read.more is not None and read.bundle is not None
    assert len(read.bundle.items) == 3  # batches end between captions
    outcome = run(engine, data)
    assert outcome.ok and outcome.result is not None, outcome.problems
    assert outcome.items_read == 40 and outcome.result.items_created == 40
    assert outcome.result.rows == {
        "items": 40,
        "sentences": 120,
        "sentence_labels": 120,
        "spans": 40,
        "item_statuses": 40,  # gold covers every item it has a record for
    }
    assert outcome.result.label_sets == ["gold"]
    whole = alignbench.FORMAT.read(data, source="rows.csv", options=ReadOptions(dataset="ab")).bundle
    assert whole is not None
    stored = export_bundle(engine, "ab", actor=OPERATOR)
    assert [(i.external_id, i.response, i.sentences) for i in stored.items] == [
        (i.external_id, i.response, i.sentences) for i in whole.items
    ]
    got = [(a.item, a.spans, a.sentence_labels) for a in stored.label_sets[0].annotations]
    assert got == [(a.item, a.spans, a.sentence_labels) for a in whole.label_sets[0].annotations]
    with engine.connect() as connection:
        assert connection.scalar(select(func.count()).select_from(m.EditLog)) == 1  # one import, one entry

    again = run(engine, data)
    assert (
        again.ok
        and again.result is not None
        and again.result.items_created == 0
        and again.result.items_existing == 40
    )
    assert again.result.rows == {}
    assert counts(engine)["items"] == 40


@pytest.mark.parametrize("from_disk", [False, True])
def test_a_flaw_in_a_late_batch_leaves_the_store_untouched(
    engine: Engine, small_batches: None, tmp_path: Path, from_disk: bool
) -> None:
    before = counts(engine)
    path = tmp_path / "rows.csv"
    path.write_bytes(rows_csv(40, bad_at=37))
    outcome = run_from_disk(engine, path) if from_disk else run(engine, path.read_bytes())
    assert not outcome.ok
    (error,) = outcome.errors
    assert (error.file, error.record, error.field) == (
        "rows.csv",
        "row 112 (caption m1/img37.jpg)",
        "annotation",
    )
    assert counts(engine) == before


def test_rows_of_a_caption_apart_are_read_whole(engine: Engine, small_batches: None) -> None:
    data = rows_csv(10, shuffled=True)
    assert alignbench.caption_batches(data) is None
    outcome = run(engine, data)
    assert outcome.ok and outcome.result is not None and outcome.result.rows["sentence_labels"] == 30


def run_from_disk(
    engine: Engine, path: Path, dataset: str = "ab", format_name: str | None = "alignbench"
) -> ImportOutcome:
    return import_path(
        engine,
        path,
        actor=OPERATOR,
        source=path.name,
        format_name=format_name,
        options=ReadOptions(dataset=dataset),
    )


def stored_rows(engine: Engine, dataset: str) -> list[object]:
    bundle = export_bundle(engine, dataset, actor=OPERATOR)
    return [
        *((i.external_id, i.response, i.sentences, i.meta) for i in bundle.items),
        *((a.item, a.spans, a.sentence_labels) for a in bundle.label_sets[0].annotations),
    ]


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
@pytest.mark.parametrize("format_name", ["alignbench", None])
def test_a_file_on_disk_is_read_in_batches_and_stores_what_its_bytes_store(
    engine: Engine, small_batches: None, tmp_path: Path, bom: bytes, format_name: str | None
) -> None:
    data = bom + rows_csv(40)
    path = tmp_path / "rows.csv"
    path.write_bytes(data)
    read = alignbench.FORMAT.read_file_batches(path, data[:4096], source="rows.csv")
    assert read is not None and read.more is not None and read.bundle is not None
    assert len(read.bundle.items) == 3  # batches end between captions, as from the bytes

    from_disk = run_from_disk(engine, path, "disk", format_name)
    assert from_disk.ok and from_disk.result is not None, from_disk.problems
    assert from_disk.format == "alignbench"
    assert run(engine, data, "bytes").ok
    assert stored_rows(engine, "disk") == stored_rows(engine, "bytes")
    again = run_from_disk(engine, path, "disk", format_name)
    assert again.ok and again.result is not None and again.result.rows == {}


def test_a_file_on_disk_that_is_not_utf8_is_refused_naming_the_byte(engine: Engine, tmp_path: Path) -> None:
    data = rows_csv(5)
    at = data.index(b"img3.jpg")
    path = tmp_path / "rows.csv"
    path.write_bytes(data[:at] + b"\xff" + data[at + 1 :])
    before = counts(engine)
    outcome = run_from_disk(engine, path)
    assert not outcome.ok
    (error,) = outcome.errors
    assert error.reason.startswith(f"not valid UTF-8 text: byte {at} (0xff)")
    assert counts(engine) == before


def test_files_on_disk_a_batch_reader_cannot_take_are_imported_from_their_bytes(
    engine: Engine, small_batches: None, tmp_path: Path
) -> None:
    shuffled = tmp_path / "shuffled.csv"
    shuffled.write_bytes(rows_csv(10, shuffled=True))
    assert alignbench.FORMAT.read_file_batches(shuffled, shuffled.read_bytes(), source="shuffled.csv") is None
    outcome = run_from_disk(engine, shuffled, "shuffled")
    assert outcome.ok and outcome.result is not None and outcome.result.rows["sentence_labels"] == 30

    lines = tmp_path / "rows.jsonl"  # AlignBench rows as JSON lines: read from the file's bytes
    lines.write_text(
        "".join(
            json.dumps(
                {
                    "model": "m",
                    "image_name": f"i{c}.jpg",
                    "sentence_index": 0,
                    "caption": "A dog.",
                    "annotation": "correct",
                }
            )
            + "\n"
            for c in range(4)
        )
    )
    assert alignbench.FORMAT.read_file_batches(lines, lines.read_bytes(), source="rows.jsonl") is None
    outcome = run_from_disk(engine, lines, "lines", format_name=None)
    assert outcome.ok and outcome.result is not None and outcome.result.items_created == 4, outcome.problems


def test_a_canonical_file_in_batches_round_trips_and_refuses_whole(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from bench.make_import_files import write_canonical
    from formats import canonical

    monkeypatch.setattr(canonical, "BATCH_RECORDS", 50)  # 120 items and their 120 annotations: 5 batches
    path = tmp_path / "c.jsonl"
    write_canonical(path, 120)
    data = path.read_bytes()
    bad = data.replace(b'"label":"correct"', b'"label":"maybe"', 200)  # the last item's, 4 batches on
    before = counts(engine)
    refused = import_file(engine, bad, actor=OPERATOR, source="c.jsonl", format_name="canonical")
    assert not refused.ok and counts(engine) == before
    assert refused.errors[-1].record == "#99 (id=item-0000099)"  # numbered as in the whole file
    assert refused.errors[-1].field == "gold.sentence_labels[3].label"

    outcome = import_file(engine, data, actor=OPERATOR, source="c.jsonl", format_name="canonical")
    assert outcome.ok and outcome.result is not None, outcome.problems
    assert outcome.result.rows == {
        "items": 120,
        "sentences": 480,
        "sentence_labels": 480,
        "spans": 240,
        "item_statuses": 120,  # gold covers every item it has a record for
    }
    stored = export_bundle(engine, "bench", actor=OPERATOR)
    whole = canonical.FORMAT.read(data, source="c.jsonl").bundle
    assert whole is not None
    assert [i.response for i in stored.items] == [i.response for i in whole.items]
    assert [(a.item, a.spans, a.sentence_labels) for a in stored.label_sets[0].annotations] == [
        (a.item, a.spans, a.sentence_labels) for a in whole.label_sets[0].annotations
    ]
    again = import_file(engine, data, actor=OPERATOR, source="c.jsonl", format_name="canonical")
    assert again.ok and again.result is not None
    assert again.result.rows == {} and again.result.items_existing == 120


@pytest.mark.parametrize("kind", ["alignbench", "canonical"])
def test_a_file_read_in_batches_reports_how_much_of_it_is_read(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kind: str
) -> None:
    """The Import page's bar and the command line's progress line follow the share of the file read, from
    disk or uploaded: they stood at half way for the half minute a million rows take."""
    from bench.make_import_files import write_alignbench, write_canonical
    from formats import canonical

    monkeypatch.setattr(alignbench, "BATCH_ROWS", 60)  # 600 rows: 10 batches
    monkeypatch.setattr(canonical, "BATCH_RECORDS", 50)  # 120 items and 120 annotations: 5 batches
    path = tmp_path / ("rows.csv" if kind == "alignbench" else "rows.jsonl")
    write_alignbench(path, 600) if kind == "alignbench" else write_canonical(path, 120)
    seen: list[tuple[float, str]] = []
    options = ReadOptions(dataset="bench")
    told = {"actor": OPERATOR, "source": path.name, "format_name": kind, "options": options}

    def progress(fraction: float, message: str) -> None:
        seen.append((fraction, message))

    for run_import in (partial(import_path, engine, path), partial(import_file, engine, path.read_bytes())):
        seen.clear()
        outcome = run_import(**told, progress=progress, replace_existing=True)
        assert outcome.ok, outcome.problems
        batches = [(f, text) for f, text in seen if text.startswith("Checking and writing items")]
        assert len(batches) >= 5
        fractions = [f for f, _ in batches]
        assert fractions == sorted(fractions) and 0.1 < fractions[0] < 0.5 and fractions[-1] == 0.95
        shares = [int(text.split(", ")[1].split("%")[0]) for _, text in batches]
        assert shares[0] < 50 and shares[-1] == 100 and shares == sorted(shares)
        assert seen[-1][0] == 1.0  # the summary
        if kind == "alignbench":  # by the rows the first pass counted: 10 captions a batch
            assert batches[0][1] == "Checking and writing items (10 read, 10% of the file)…"


def split_item_file(last_label: str = "incorrect") -> bytes:
    """A canonical file whose item ``i00`` has its gold annotations on two lines far apart: its span
    right after the label set line, its sentence labels on the last line (``last_label`` the second's)."""
    response = "A dog sits. It is red."
    lines: list[dict[str, object]] = [
        {"record": "dataset", "format_version": 1, "name": "split", "source_format": "canonical"}
    ]
    lines += [
        {
            "record": "item",
            "external_id": f"i{k:02d}",
            "response": response,
            "sentences": [{"start": 0, "end": 11}, {"start": 12, "end": 22}],
        }
        for k in range(12)
    ]
    gold = {"kind": "gold", "name": "gold"}
    lines.append({"record": "label_set", **gold})
    lines.append(
        {"record": "annotations", "label_set": gold, "item": "i00", "spans": [{"start": 2, "end": 5}]}
    )
    lines += [
        {
            "record": "annotations",
            "label_set": gold,
            "item": f"i{k:02d}",
            "sentence_labels": [{"index": 0, "label": "correct"}],
        }
        for k in range(1, 12)
    ]
    lines.append(
        {
            "record": "annotations",
            "label_set": gold,
            "item": "i00",
            "sentence_labels": [{"index": 0, "label": "correct"}, {"index": 1, "label": last_label}],
        }
    )
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def import_split(
    engine: Engine, data: bytes, dataset: str, *, whole: bool = False, replace_existing: bool = False
) -> ImportOutcome:
    """Import ``data`` into ``dataset`` in batches, or (``whole``) as the whole-file reader reads it."""
    from formats import canonical

    with pytest.MonkeyPatch.context() as patch:
        if whole:
            patch.setattr(canonical.CanonicalFormat, "read_batches", canonical.CanonicalFormat.read)
        return import_file(
            engine,
            data,
            actor=OPERATOR,
            source="split.jsonl",
            format_name="canonical",
            options=ReadOptions(dataset=dataset),
            replace_existing=replace_existing,
        )


def last_log(engine: Engine, dataset: str) -> tuple[object, object]:
    """The ``before`` and ``after`` of the dataset's latest import entry (what undoing it relies on)."""
    with engine.connect() as connection:
        dataset_id = connection.scalar(select(m.Dataset.id).where(m.Dataset.name == dataset))
        entry = connection.execute(
            select(m.EditLog.before, m.EditLog.after)
            .where(m.EditLog.entity == "datasets", m.EditLog.entity_id == dataset_id)
            .order_by(m.EditLog.id.desc())
            .limit(1)
        ).one()
    return entry.before, entry.after


def stored_gold(engine: Engine, dataset: str) -> list[tuple[object, ...]]:
    (gold,) = export_bundle(engine, dataset, actor=OPERATOR).label_sets
    return [(a.item, a.spans, a.sentence_labels) for a in gold.annotations]


def test_an_items_annotations_on_lines_in_different_batches_import_as_a_whole_file_does(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from formats import canonical

    monkeypatch.setattr(canonical, "BATCH_RECORDS", 4)  # i00's two lines are 4 batches apart
    data = split_item_file()

    def same_as_whole(batched: ImportOutcome, whole: ImportOutcome) -> None:
        assert batched.ok == whole.ok, batched.problems
        assert batched.problems == whole.problems
        if whole.result is not None:
            assert batched.result is not None
            assert batched.result.to_dict() | {"dataset": ""} == whole.result.to_dict() | {"dataset": ""}
            assert last_log(engine, "batched") == last_log(engine, "whole")
        else:
            assert batched.refused_changes is not None and whole.refused_changes is not None
            assert batched.refused_changes.to_dict() == whole.refused_changes.to_dict()
        assert stored_gold(engine, "batched") == stored_gold(engine, "whole")

    # A first import: the two lines' rows are stored as one unit of the item.
    same_as_whole(import_split(engine, data, "batched"), import_split(engine, data, "whole", whole=True))
    assert stored_gold(engine, "batched")[0] == (
        "i00",
        [SpanRecord(2, 5)],
        [SentenceLabelRecord(0, "correct"), SentenceLabelRecord(1, "incorrect")],
    )

    # The same file again, into the label set now stored: nothing changes, nothing is refused.
    again = import_split(engine, data, "batched")
    assert again.ok and again.result is not None and again.result.rows == {}, again.problems
    same_as_whole(again, import_split(engine, data, "whole", whole=True))

    # One of i00's rows changed: refused as a whole file is, and replaced alike when asked to.
    changed = split_item_file(last_label="correct")
    refused = import_split(engine, changed, "batched")
    assert not refused.ok and refused.refused_changes is not None
    assert refused.refused_changes.counts == {
        "gold:gold": {"sentence_labels": {"removed": 0, "changed": 1, "added": 0}}
    }
    same_as_whole(refused, import_split(engine, changed, "whole", whole=True))
    replaced = import_split(engine, changed, "batched", replace_existing=True)
    same_as_whole(replaced, import_split(engine, changed, "whole", whole=True, replace_existing=True))
    assert stored_gold(engine, "batched")[0] == (
        "i00",
        [SpanRecord(2, 5)],
        [SentenceLabelRecord(0, "correct"), SentenceLabelRecord(1, "correct")],
    )


def test_a_file_giving_an_items_annotations_on_two_lines_is_read_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from formats import canonical

    monkeypatch.setattr(canonical, "BATCH_RECORDS", 4)
    lines = split_item_file().splitlines(keepends=True)
    one_line_each = b"".join(line for line in lines if b'"spans"' not in line)
    assert canonical.FORMAT.read_batches(one_line_each, source="s.jsonl").more is not None
    assert canonical.FORMAT.read_batches(b"".join(lines), source="s.jsonl").more is None
    # "annotations" spelt with an escape is still an annotations line
    lines[-1] = lines[-1].replace(b'"annotations"', b'"annot\\u0061tions"')
    read = canonical.FORMAT.read_batches(b"".join(lines), source="s.jsonl")
    assert read.more is None and read.bundle is not None and not read.problems
    assert [a.item for a in read.bundle.label_sets[0].annotations].count("i00") == 2


def test_a_canonical_file_on_disk_is_read_line_by_line_and_stores_what_its_bytes_store(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from bench.make_import_files import write_canonical
    from formats import canonical

    monkeypatch.setattr(canonical, "BATCH_RECORDS", 50)
    path = tmp_path / "c.jsonl"
    write_canonical(path, 120)
    data = b"\xef\xbb\xbf" + path.read_bytes()  # with a byte-order mark, as some editors save it
    path.write_bytes(data)
    read = canonical.FORMAT.read_file_batches(path, data[:4096], source="c.jsonl")
    assert read is not None and read.more is not None and read.bundle is not None
    from_bytes = canonical.FORMAT.read_batches(data, source="c.jsonl")
    assert from_bytes.bundle is not None and from_bytes.more is not None
    assert [b.items for b in [read.bundle, *read.more]] == [
        b.items for b in [from_bytes.bundle, *from_bytes.more]
    ]

    outcome = run_from_disk(engine, path, "bench", format_name=None)
    assert outcome.ok and outcome.format == "canonical", outcome.problems
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(data.replace(b'"label":"correct"', b'"label":"maybe"', 200))
    before = counts(engine)
    refused = run_from_disk(engine, bad, "other", format_name="canonical")
    assert not refused.ok and counts(engine) == before
    assert refused.errors[-1].record == "#99 (id=item-0000099)"  # numbered as in the whole file


def test_a_file_on_disk_whose_first_record_is_long_is_recognised_and_read_from_disk(
    engine: Engine, tmp_path: Path
) -> None:
    """A canonical file whose dataset line holds a 100,000-character description before its format
    version was recognised from its first 64 KB alone: no format was found there, so the import read it
    whole into memory, and refused it where the size cap applies (the Import page's server files). It is
    recognised from the view the page sniffs, and read from disk."""
    dataset = {
        "record": "dataset",
        "name": "long",
        "source_format": "canonical",
        "description": "d" * 100_000,
    }
    lines = [{**dataset, "format_version": 1}, {"record": "item", "external_id": "a", "response": "A cat."}]
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    outcome = import_path(
        engine, path, actor=OPERATOR, source=path.name, too_large=lambda size: f"{size:,} bytes is too large"
    )
    assert outcome.ok and outcome.format == "canonical", outcome.problems
    assert outcome.result is not None and outcome.result.items_created == 1


@pytest.mark.parametrize(
    "change",
    [
        # another line break than a newline: read whole, so lines are numbered as str.splitlines counts
        lambda lines: b"\r\n".join(line for line in lines if b'"spans"' not in line),
        lambda lines: b"\n".join(line for line in lines if b'"spans"' not in line).replace(
            b"A dog", b"A\xe2\x80\xa8dog"
        ),
        lambda lines: b"\n".join(lines),  # an item's annotations on two lines
    ],
)
def test_canonical_files_on_disk_the_batch_reader_cannot_take_are_read_whole(
    engine: Engine, tmp_path: Path, change: Callable[[list[bytes]], bytes]
) -> None:
    from formats import canonical

    data = change(split_item_file().splitlines())
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    assert canonical.FORMAT.read_file_batches(path, data[:4096], source="s.jsonl") is None
    outcome = run_from_disk(engine, path, "split", format_name="canonical")  # the file's own dataset
    whole = import_file(engine, data, actor=OPERATOR, source="s.jsonl", format_name="canonical")
    assert (outcome.ok, [p.reason for p in outcome.problems]) == (
        whole.ok,
        [p.reason for p in whole.problems],
    )


def test_a_row_longer_than_a_block_makes_the_file_read_whole(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(alignbench, "BLOCK_BYTES", 512)
    lines = rows_csv(6).split(b"\n")
    lines[4] = lines[4].replace(b"A dog sits here", b"A dog " + b"very " * 400 + b"sits here")
    path = tmp_path / "long.csv"
    path.write_bytes(b"\n".join(lines))
    assert alignbench.FORMAT.read_file_batches(path, path.read_bytes(), source="long.csv") is None
    outcome = run_from_disk(engine, path)
    assert outcome.ok and outcome.result is not None and outcome.result.items_created == 6
    stored = export_bundle(engine, "ab", actor=OPERATOR)
    assert any("very " * 400 in item.response for item in stored.items)


def test_a_postgresql_import_gives_the_planner_its_tables_sizes(engine: Engine, small_batches: None) -> None:
    """Without statistics PostgreSQL plans a new store's tables as empty; the import ANALYZEs them as
    they grow (see ``_Batches._refresh_statistics``), so their row estimates are known."""
    if engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL plans by table statistics; SQLite here has none to refresh")
    assert run(engine, rows_csv(40)).ok
    with engine.connect() as connection:
        estimates = dict(
            connection.exec_driver_sql(
                "SELECT relname, reltuples FROM pg_class WHERE relname IN ('items', 'sentence_labels') "
                "AND relnamespace = to_regnamespace(current_schema())::oid"
            ).all()
        )
    assert estimates["items"] > 0 and estimates["sentence_labels"] > 0


def _sentences_agree(engine: Engine) -> list[tuple[str, int, int]]:
    """Every sentence label and score whose sentence is not the one of its item and index, as
    (table, row id, sentence id): none, when the ids the writer took are the sentences' own."""
    wrong: list[tuple[str, int, int]] = []
    with engine.connect() as connection:
        for model in (m.SentenceLabel, m.SentenceScore):
            rows = connection.execute(
                select(model.id, model.sentence_id)
                .join(m.Sentence, m.Sentence.id == model.sentence_id)
                .where(m.Sentence.item_id != model.item_id)
            )
            wrong += [(model.__tablename__, row_id, sentence_id) for row_id, sentence_id in rows]
        orphans = connection.scalar(
            select(func.count())
            .select_from(m.SentenceLabel)
            .outerjoin(m.Sentence, m.Sentence.id == m.SentenceLabel.sentence_id)
            .where(m.Sentence.id.is_(None))
        )
    assert orphans == 0
    return wrong


def test_sentence_ids_taken_before_the_insert_are_the_sentences_own(
    engine: Engine, small_batches: None
) -> None:
    """The writer gives new sentences their ids before inserting them, and each label the id of its
    sentence without reading it back: after a dataset holding the newest ids was deleted, after another
    connection drew ids from PostgreSQL's sequence, in batches, and beside labels given to sentences
    stored before (a detector's scores of a stored dataset)."""
    assert run(engine, rows_csv(6), dataset="first").ok
    assert run(engine, rows_csv(6), dataset="gone").ok
    with engine.begin() as connection:  # the newest sentences go with their dataset
        connection.execute(m.Dataset.__table__.delete().where(m.Dataset.name == "gone"))
    if engine.dialect.name == "postgresql":  # another writer's draws: never ours to take
        with engine.begin() as connection:
            taken = (
                connection.exec_driver_sql(
                    "SELECT nextval(pg_get_serial_sequence('sentences', 'id')) FROM generate_series(1, 5)"
                )
                .scalars()
                .all()
            )
        assert len(taken) == 5
    outcome = run(engine, rows_csv(40), dataset="ab")
    assert outcome.ok and outcome.result is not None and outcome.result.rows["sentences"] == 120
    scores = "model,image_name,sentence_index,score\n" + "".join(
        f"m{c % 3},img{c}.jpg,{s},{10 * s}\n" for c in range(40) for s in range(3)
    )
    scored = import_predictions(
        engine,
        scores.encode(),
        actor=OPERATOR,
        source="scores.csv",
        dataset="ab",
        detector="scorer",
        format_name="alignbench-scores",
    )
    assert scored.ok, scored.problems
    assert _sentences_agree(engine) == []
    with (
        engine.begin() as connection
    ):  # a sentence added later, by the database's own ids, collides with none
        item_id = connection.scalar(select(func.min(m.Item.id)))
        connection.execute(
            m.Sentence.__table__.insert().values(item_id=item_id, index=99, start=0, end=1, source="splitter")
        )
    stored = export_bundle(engine, "ab", actor=OPERATOR)
    whole = alignbench.FORMAT.read(rows_csv(40), source="rows.csv", options=ReadOptions(dataset="ab")).bundle
    assert whole is not None
    gold = next(s for s in stored.label_sets if s.kind == "gold")
    assert [a.sentence_labels for a in gold.annotations] == [
        a.sentence_labels for a in whole.label_sets[0].annotations
    ]
    detector = next(s for s in stored.label_sets if s.name == "scorer")
    assert [[(s.index, s.score) for s in a.sentence_scores] for a in detector.annotations] == [
        [(s, 10.0 * s) for s in range(3)] for _ in range(40)
    ]


def test_items_named_in_other_batches_are_checked_as_in_a_whole_file(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stored items a batch's records name are read as the batch comes (not held for the whole
    import): an item the import wrote in an earlier batch, given again with other words, is refused as a
    repeat only; the records of a refused import's later batches are checked against the items of its
    earlier ones, which it did not write. The same problems as when the file is read whole, named alike
    (the reader named the importer's problems by the line it was reading) and with no follow-on error
    for a refused item's records in a later batch."""
    from formats import canonical

    monkeypatch.setattr(canonical, "BATCH_RECORDS", 4)
    gold = {"kind": "gold", "name": "gold"}
    lines: list[dict[str, object]] = [
        {"record": "dataset", "format_version": 1, "name": "d", "source_format": "canonical"},
        *(
            {
                "record": "item",
                "external_id": f"i{k:02d}",
                "response": "A dog sits. It is red.",
                "sentences": [{"start": 0, "end": 11}, {"start": 12, "end": 22}],
            }
            for k in range(12)
        ),
        {"record": "label_set", **gold},
        *(
            {
                "record": "annotations",
                "label_set": gold,
                "item": f"i{k:02d}",
                "sentence_labels": [{"index": 1, "label": "incorrect"}],
            }
            for k in range(12)
        ),
    ]
    repeated = [*lines[:13], {**lines[3], "response": "A cat sits. It is red."}, *lines[13:]]
    bad_first = [dict(line) for line in lines]
    bad_first[1]["sentences"] = [{"start": 0, "end": 99}]  # i00 refused; i01… are sound, not written
    expected = {
        "repeated": [("#12 (id=i02)", "external_id", "the same id appears twice in this input")],
        "bad_first": [("#0 (id=i00)", "sentences[0]", "offsets 0-99 outside 0-22")],
    }
    for name, file_lines in (("repeated", repeated), ("bad_first", bad_first)):
        data = "".join(json.dumps(line) + "\n" for line in file_lines).encode()
        assert canonical.FORMAT.read_batches(data, source="d.jsonl").more is not None  # read in batches
        batched = import_split(engine, data, f"{name}-batched")
        whole = import_split(engine, data, f"{name}-whole", whole=True)
        assert [(p.record, p.field, p.reason) for p in batched.errors] == expected[name]
        assert not batched.ok and batched.problems == whole.problems
        assert counts(engine)["items"] == 0  # nothing written by either
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    written = import_split(engine, data, "sound")
    assert written.ok and written.result is not None and written.result.rows["sentence_labels"] == 12


def _canonical_lines(lines: list[dict[str, object]]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _import_batched_skipping(engine: Engine, data: bytes) -> ImportOutcome:
    """Import a canonical file read in batches, skipping the records refused; it must succeed."""
    from formats import canonical

    assert canonical.FORMAT.read_batches(data, source="d.jsonl").more is not None
    outcome = import_file(
        engine, data, actor=OPERATOR, source="d.jsonl", format_name="canonical", allow_skip=True
    )
    assert outcome.ok, outcome.problems
    return outcome


def test_skipping_a_record_leaves_its_items_ratings_out_in_a_later_batch(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With skipping allowed, an item whose record is refused is not written; a rating of it in a later
    batch is left out with it (it failed the store's foreign key, and the import with it), the other
    item's rating is written."""
    from formats import canonical

    monkeypatch.setattr(canonical, "BATCH_RECORDS", 4)
    detector = {"kind": "detector", "name": "det"}
    data = _canonical_lines(
        [
            {"record": "dataset", "format_version": 1, "name": "d", "source_format": "canonical"},
            {"record": "item", "external_id": "x", "response": "A dog. A cat."},
            {"record": "item", "external_id": "y", "response": "A dog. A cat."},
            {"record": "label_set", **detector},
            {
                "record": "annotations",
                "label_set": detector,
                "item": "x",
                "sentence_labels": [{"index": 5, "label": "correct"}],
            },
            {"record": "rating_task", "name": "rt", "detector": "det", "granularity": "response"},
            {"record": "rating", "task": "rt", "item": "x", "rater": "r", "score": 3},
            {"record": "rating", "task": "rt", "item": "y", "rater": "r", "score": 2},
        ]
    )
    outcome = _import_batched_skipping(engine, data)
    assert outcome.result is not None
    assert outcome.result.rows == {"items": 1, "sentences": 2, "ratings": 1}
    assert [(p.record, p.reason) for p in outcome.problems] == [
        ("#0 (id=x)", "sentence 5 does not exist (2 sentences)")
    ]


def test_an_item_given_after_a_record_of_it_is_written_with_its_later_records(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record naming an item whose line comes in a later batch is refused (no such item yet); the
    item and its records in that later batch are written, with skipping allowed."""
    from formats import canonical

    monkeypatch.setattr(canonical, "BATCH_RECORDS", 3)
    gold, human = {"kind": "gold", "name": "g"}, {"kind": "human", "name": "h"}
    data = _canonical_lines(
        [
            {"record": "dataset", "format_version": 1, "name": "d", "source_format": "canonical"},
            {"record": "label_set", **gold},
            {"record": "label_set", **human},
            {"record": "annotations", "label_set": gold, "item": "x", "spans": [{"start": 0, "end": 3}]},
            {"record": "item", "external_id": "x", "response": "A dog. A cat."},
            {"record": "annotations", "label_set": human, "item": "x", "spans": [{"start": 2, "end": 5}]},
        ]
    )
    outcome = _import_batched_skipping(engine, data)
    assert outcome.result is not None
    assert outcome.result.rows == {"items": 1, "sentences": 2, "spans": 1}
    assert [(p.record, p.reason) for p in outcome.problems] == [
        ("#0 (id=x)", "no item with id 'x' in dataset 'd'")
    ]


def _long_first_record(tmp_path: Path, item: dict[str, object]) -> Path:
    """A canonical file whose dataset line holds a 100,000-character description, then ``item``."""
    dataset = {
        "record": "dataset",
        "name": "long",
        "source_format": "canonical",
        "description": "d" * 100_000,
    }
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in ({**dataset, "format_version": 1}, item)))
    return path


def test_a_file_on_disk_of_a_named_format_is_not_sniffed(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With its format named, a file is read as that format: the sniff view would read through a long
    first record (up to the whole file) for nothing."""
    path = _long_first_record(tmp_path, {"record": "item", "external_id": "a", "response": "A cat."})

    def no_sniffing(*_: object) -> bytes:
        raise AssertionError("a named format was sniffed")

    monkeypatch.setattr(transfer, "sniff_head", no_sniffing)
    outcome = import_path(engine, path, actor=OPERATOR, source=path.name, format_name="canonical")
    assert outcome.ok and outcome.format == "canonical", outcome.problems
