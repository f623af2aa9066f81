"""AlignBench sentence rows (CSV, JSONL, Parquet) and its detector outputs (scores, [red] localization).

No public copy of AlignBench is available offline, so the rows here are hand-made after its dataset card.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from db.access import OPERATOR
from formats.alignbench import FORMAT, error_word_list, locate
from formats.alignbench_scores import localized_spans, parse_score
from formats.registry import best_guess

ROWS = [
    {
        "model": "llava",
        "image_source": "coco",
        "image_name": "000001.jpg",
        "image_type": "street",
        "sentence_index": 1,
        "caption": "Two red cars are parked.",
        "annotation": "incorrect",
        "error_type": "Number",
        "error_words": ["Two"],
        "agreement_ratio": 0.67,
        "fleiss_Pi": 0.5,
        "n_correct": 1,
        "n_incorrect": 2,
        "n_unknown": 0,
        "image_url": "https://example.org/1.jpg",
    },
    {
        "model": "llava",
        "image_source": "coco",
        "image_name": "000001.jpg",
        "image_type": "street",
        "sentence_index": 0,
        "caption": "A street with a 🐱 sign <b>OPEN</b>.",
        "annotation": "correct",
        "error_type": None,
        "error_words": None,
        "agreement_ratio": 1.0,
        "fleiss_Pi": 1.0,
        "n_correct": 3,
        "n_incorrect": 0,
        "n_unknown": 0,
        "image_url": "https://example.org/1.jpg",
    },
    {
        "model": "sd",
        "image_source": "cc12m",
        "image_name": "000001.jpg",
        "image_type": "street",
        "sentence_index": 0,
        "caption": "A blue bus drives left.",
        "annotation": "unknown",
        "error_type": "Direction",
        "error_words": "drives left",
        "agreement_ratio": 0.33,
        "fleiss_Pi": -0.1,
        "n_correct": 1,
        "n_incorrect": 1,
        "n_unknown": 1,
        "image_url": None,
    },
]


def jsonl(rows):
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def test_rows_become_captions_with_sentence_labels_and_error_spans():
    result = FORMAT.read(jsonl(ROWS), source="alignbench.jsonl")
    assert not result.problems
    first, second = result.bundle.items
    assert first.external_id == "llava/000001.jpg"
    assert first.response == "A street with a 🐱 sign <b>OPEN</b>. Two red cars are parked."
    assert [first.response[s.start : s.end] for s in first.sentences] == [
        "A street with a 🐱 sign <b>OPEN</b>.",
        "Two red cars are parked.",
    ]
    assert first.meta["sentence_index"] == [0, 1]
    gold = {a.item: a for a in result.bundle.label_sets[0].annotations}
    labels = gold[first.external_id].sentence_labels
    assert [(lab.index, lab.label, lab.error_type) for lab in labels] == [
        (0, "correct", None),
        (1, "incorrect", "Number"),
    ]
    assert labels[1].meta == {
        "error_words": ["Two"],
        "agreement_ratio": 0.67,
        "fleiss_Pi": 0.5,
        "n_correct": 1,
        "n_incorrect": 2,
        "n_unknown": 0,
    }
    spans = gold[first.external_id].spans
    assert [(first.response[s.start : s.end], s.type) for s in spans] == [("Two", "Number")]
    bus = gold[second.external_id].spans
    assert [second.response[s.start : s.end] for s in bus] == ["drives left"]


@pytest.mark.parametrize("filename", ["alignbench.jsonl", "alignbench.csv", "alignbench.parquet"])
def test_round_trip_in_each_encoding(round_trip, filename):
    first = FORMAT.write(FORMAT.read(jsonl(ROWS), source="a.jsonl").bundle, filename=filename)
    assert best_guess(first, filename) is FORMAT
    content, exported = round_trip("alignbench", first, source=filename)
    assert len(content["items"]) == 2
    gold = content["label_sets"][("gold", "gold")]["annotations"]
    assert gold["llava/000001.jpg"]["sentence_labels"][1]["meta"]["n_incorrect"] == 2


def test_csv_cells_are_typed_and_python_lists_understood():
    csv_text = (
        "model,image_name,sentence_index,caption,annotation,error_type,error_words,n_correct,agreement_ratio\n"
        "m,i.jpg,0,A cat sits.,incorrect,Object,\"['cat']\",2,0.5\n"
        "m,i.jpg,1,A mat.,correct,,,3,1\n"
    )
    result = FORMAT.read(csv_text.encode(), source="a.csv")
    assert not result.problems
    gold = result.bundle.label_sets[0].annotations[0]
    assert gold.sentence_labels[0].meta == {"error_words": "['cat']", "n_correct": 2, "agreement_ratio": 0.5}
    assert [(s.start, s.end) for s in gold.spans] == [(2, 5)]


@pytest.mark.parametrize(
    ("rows", "record", "field", "reason"),
    [
        (
            [{**ROWS[0], "annotation": "wrong"}],
            "row 1 (caption llava/000001.jpg)",
            "annotation",
            "not one of",
        ),
        ([{**ROWS[0], "sentence_index": "x"}], "row 1", "sentence_index", "expected an integer"),
        (
            [ROWS[1], {**ROWS[1], "caption": "Again."}],
            "row 2 (caption llava/000001.jpg)",
            "sentence_index",
            "twice",
        ),
        ([{**ROWS[0], "caption": ""}], "row 1 (caption llava/000001.jpg)", "caption", "missing or empty"),
        ([{**ROWS[0], "n_correct": "many"}], "row 1 (caption llava/000001.jpg)", "n_correct", "integer"),
        ([{k: v for k, v in ROWS[0].items() if k != "model"}], "row 1", "model", "missing"),
    ],
)
def test_bad_rows_reject_their_caption(rows, record, field, reason):
    result = FORMAT.read(jsonl([ROWS[2], *rows]), source="a.jsonl")
    errors = result.errors
    assert len(errors) == 1, errors
    assert (errors[0].record, errors[0].field) == (record, field)
    assert reason in errors[0].reason
    assert [i.external_id for i in result.bundle.items] == ["sd/000001.jpg"]


def test_error_words_not_in_the_sentence_are_a_warning():
    result = FORMAT.read(jsonl([{**ROWS[0], "error_words": ["purple"]}]), source="a.jsonl")
    (problem,) = result.problems
    assert problem.severity == "warning" and "'purple' does not occur" in problem.reason
    assert result.bundle.label_sets[0].annotations[0].spans == []


def test_error_words_helpers():
    assert error_word_list('["a", "b"]') == ["a", "b"]
    assert error_word_list("['a']") == ["a"]
    assert error_word_list("red car") == ["red car"]
    assert locate("car", "A scar and a car.") == (13, 16)
    assert locate("CAR", "A car.") == (2, 5)


def test_score_parsing_follows_alignbench():
    assert parse_score('{"score": 85}. The caption is right.') == 85
    assert parse_score("Score: 12.5 because") == 12.5
    assert parse_score("I think 70 points") == 70
    assert parse_score("no idea") is None
    assert parse_score('"score": 150') is None


def test_scores_round_trip_and_unparsed_count_as_50(engine, prediction_round_trip):
    outputs = [
        {"model": "llava", "image_name": "000001.jpg", "sentence_index": 0, "score": 90},
        {"model": "llava", "image_name": "000001.jpg", "sentence_index": 1, "output": '{"score": 20} wrong'},
        {"model": "sd", "image_name": "000001.jpg", "sentence_index": 0, "output": "I cannot tell."},
    ]
    run, exported = prediction_round_trip(
        "alignbench", jsonl(ROWS), "alignbench-scores", jsonl(outputs), source="scores.jsonl"
    )
    llava = run["annotations"]["llava/000001.jpg"]
    assert [(s["index"], s["score"], s["parsed"]) for s in llava["sentence_scores"]] == [
        (0, 90, True),
        (1, 20, True),
    ]
    sd = run["annotations"]["sd/000001.jpg"]
    assert sd["sentence_scores"] == [{"index": 0, "score": 50.0, "parsed": False}]
    assert sd["raw_output"]["follows_format"] is False
    assert json.loads(sd["raw_output"]["text"]) == {"0": "I cannot tell."}


def test_score_rows_for_unknown_captions_are_reported(engine):
    from db.transfer import import_file, import_predictions
    from formats.base import ReadOptions

    import_file(
        engine,
        jsonl(ROWS),
        source="a.jsonl",
        format_name="alignbench",
        options=ReadOptions(dataset="d"),
        actor=OPERATOR,
    )
    outputs = [
        {"model": "llava", "image_name": "000001.jpg", "sentence_index": 7, "score": 90},
        {"model": "nobody", "image_name": "x.jpg", "sentence_index": 0, "score": 90},
        {"model": "llava", "image_name": "000001.jpg", "sentence_index": 0, "score": 190},
    ]
    outcome = import_predictions(
        engine, jsonl(outputs), source="s.jsonl", dataset="d", detector="x", actor=OPERATOR
    )
    assert not outcome.ok
    assert [(p.record, p.field) for p in outcome.errors] == [
        ("row 0", "sentence_index"),
        ("row 1", "image_name"),
        ("row 2", "score"),
    ]


def test_red_markers_become_word_spans():
    sentence = "A small bird singing in a tree."
    assert localized_spans("A [red] bird singing in a tree.", "A bird singing in a tree.") == ([(2, 6)], None)
    spans, failure = localized_spans(
        '{"output": "A [red] small [red] bird singing in a [red] tree."}', sentence
    )
    assert failure is None
    assert [sentence[s:e] for s, e in spans] == ["small bird", "tree."]
    assert localized_spans("A [red] dog.", "A cat.")[1].startswith("the marked text differs")


def test_localization_round_trip(prediction_round_trip):
    outputs = [
        {
            "model": "llava",
            "image_name": "000001.jpg",
            "sentence_index": 1,
            "output": "[red] Two red cars are parked.",
        },
        {
            "model": "sd",
            "image_name": "000001.jpg",
            "sentence_index": 0,
            "output": "A blue bus [red]  flies left.",
        },
    ]
    run, _ = prediction_round_trip(
        "alignbench", jsonl(ROWS), "alignbench-localization", jsonl(outputs), source="loc.jsonl"
    )
    llava = run["annotations"]["llava/000001.jpg"]
    response = "A street with a 🐱 sign <b>OPEN</b>. Two red cars are parked."
    assert [response[s["start"] : s["end"]] for s in llava["spans"]] == ["Two"]
    assert llava["raw_output"]["follows_format"] is True
    sd = run["annotations"]["sd/000001.jpg"]
    assert sd["spans"] == [] and sd["raw_output"]["follows_format"] is False


CSV_HEAD = "model,image_name,sentence_index,caption,annotation,n_correct,agreement_ratio\n"


@pytest.mark.parametrize(
    ("bad_row", "record", "field", "reason"),
    [
        ("m,i.jpg,x,A dog.,correct,1,0.5", "row 1", "sentence_index", "expected an integer, got 'x'"),
        ("m,i.jpg,1,A dog.,correct,many,0.5", "row 1 (caption m/i.jpg)", "n_correct", "got 'many'"),
        ("m,i.jpg,1,A dog.,correct,1,inf", "row 1 (caption m/i.jpg)", "agreement_ratio", "finite number"),
        ("m,i.jpg,1,A dog.,correct,1.5,0.5", "row 1 (caption m/i.jpg)", "n_correct", "integer"),
    ],
)
def test_csv_cells_that_do_not_convert_are_named(bad_row, record, field, reason):
    """A column is typed at once when every cell converts; one that does not is named with its row."""
    data = (CSV_HEAD + "m,i.jpg,0,A cat.,correct,2,0.25\n" + bad_row + "\n").encode()
    result = FORMAT.read(data, source="a.csv")
    (error,) = result.errors
    assert (error.record, error.field) == (record, field) and reason in error.reason, error


def test_csv_quoted_newlines_and_more_cells_than_columns():
    data = (CSV_HEAD + 'm,i.jpg,0,"A cat\nsits.",correct,2,0.25\n').encode()
    result = FORMAT.read(data, source="a.csv")
    assert not result.problems and result.bundle.items[0].response == "A cat\nsits."
    assert result.bundle.label_sets[0].annotations[0].sentence_labels[0].meta == {
        "n_correct": 2,
        "agreement_ratio": 0.25,
    }
    result = FORMAT.read((CSV_HEAD + "m,i.jpg,0,A cat.,correct,2,0.25,extra\n").encode(), source="a.csv")
    (error,) = result.errors
    assert (error.record, error.reason) == ("row 2", "more cells than header columns")


def _caption_rows(captions: list[tuple[str, int]]) -> bytes:
    """A CSV file with ``n`` sentence rows for each ``(image, n)``, in the order given."""
    lines = ["model,image_name,sentence_index,caption,annotation\n"]
    for image, n in captions:
        lines += [f"m,{image},{k},The sentence {k} of {image} is here.,correct\n" for k in range(n)]
    return "".join(lines).encode()


@pytest.mark.parametrize("block", [64, 256, 1 << 19])
def test_captions_across_blocks_are_read_in_batches(monkeypatch, block):
    """The first pass finds each caption's rows together even where a caption's run of rows goes on from
    one block into the next, and finds a caption that comes back later in the file, in any block."""
    import formats.alignbench as alignbench

    monkeypatch.setattr(alignbench, "BLOCK_BYTES", block)
    together = _caption_rows([(f"img{c}.jpg", 7) for c in range(30)])
    batches = alignbench.caption_batches(together, rows=20)
    assert batches is not None
    assert batches.total == 210 and batches.share() == 0.0  # the first pass counted the rows
    read, shares = [], []
    for batch in batches:
        read.append([(row["image_name"], row["sentence_index"]) for _, row in batch.rows()])
        shares.append(batches.share())
    assert sum(len(batch) for batch in read) == 210
    # How far the batches taken reach, for an import's progress: 21 rows (3 captions) a batch.
    assert shares == [k * 21 / 210 for k in range(1, 11)]
    for batch in read:  # no caption split between batches
        assert batch[0][1] == 0 and batch[-1][1] == 6
    apart = _caption_rows([*((f"img{c}.jpg", 7) for c in range(30)), ("img3.jpg", 1)])
    assert alignbench.caption_batches(apart) is None
    again = _caption_rows([("img0.jpg", 3), ("img1.jpg", 3), ("img0.jpg", 3)])
    assert alignbench.caption_batches(again) is None
    assert alignbench.caption_batches(_caption_rows([])) is None


def test_outputs_without_a_score_are_named_by_row():
    from formats.alignbench_scores import AlignBenchScores
    from formats.base import KnownItem, ReadOptions

    known = {"m/i.jpg": KnownItem("A. B. C.", ((0, 2), (3, 5), (6, 8)), (), {"sentence_index": [0, 1, 2]})}
    rows = [
        {"model": "m", "image_name": "i.jpg", "sentence_index": 0, "output": "Score: 80"},
        {"model": "m", "image_name": "i.jpg", "sentence_index": 1, "output": "I cannot tell."},
        {"model": "m", "image_name": "i.jpg", "sentence_index": 2, "output": "no idea"},
    ]
    read = AlignBenchScores().read(jsonl(rows), source="s.jsonl", options=ReadOptions(known=known))
    [warning] = read.problems
    assert (warning.record, warning.field, warning.severity) == ("rows 1, 2", "output", "warning")
    assert warning.reason.startswith("2 output(s) held no score from 0 to 100")


def _score_rows(rows: list[dict]) -> Any:
    from formats.alignbench_scores import AlignBenchScores
    from formats.base import KnownItem, ReadOptions

    known = {"m/i.jpg": KnownItem("A. B.", ((0, 2), (3, 5)), (), {"sentence_index": [0, 1]})}
    return AlignBenchScores().read(jsonl(rows), source="s.jsonl", options=ReadOptions(known=known))


@pytest.mark.parametrize("bad", ["inf", "NaN", "1e400", 101, -5, "101"])
def test_a_score_that_is_no_number_from_0_to_100_is_an_error_on_that_field(bad):
    """Before, non-finite numbers in the score column were scored 50 with a warning on a field the file
    did not have ('output'); numbers out of range were errors."""
    read = _score_rows([{"model": "m", "image_name": "i.jpg", "sentence_index": 0, "score": bad}])
    [problem] = read.problems
    assert (problem.field, problem.severity) == ("score", "error")
    assert problem.reason == f"{bad!r} is not a number from 0 to 100"


@pytest.mark.parametrize(
    ("output", "score"),
    [
        ("Score: 80", 80.0),
        ('{"score": 20} wrong', 20.0),
        ("I give it 85", 85.0),
        ("Sentence 1 is fine, I give it 85", None),  # two numbers, no score field: not guessed (was 1)
        ("score = 1e2", None),  # was read as 1
        ("Score: 85.", 85.0),  # a sentence's full stop ends the number
        ("Rating: 85/100", 85.0),
        ("85 out of 100", 85.0),
    ],
)
def test_a_score_is_read_from_an_output_only_where_it_is_unambiguous(output, score):
    from formats.alignbench_scores import parse_score

    assert parse_score(output) == score


def test_text_in_the_score_column_is_read_as_the_detectors_output():
    read = _score_rows(
        [
            {"model": "m", "image_name": "i.jpg", "sentence_index": 0, "score": "85/100"},
            {
                "model": "m",
                "image_name": "i.jpg",
                "sentence_index": 1,
                "score": "N/A",
                "output": "Score: 70.",
            },
        ]
    )
    assert not read.problems
    [run] = read.bundle.label_sets
    assert [(s.index, s.score, s.parsed) for s in run.annotations[0].sentence_scores] == [
        (0, 85.0, True),
        (1, 70.0, True),
    ]


@pytest.mark.parametrize("filename", ["d.jsonl", "d.csv"])
def test_an_item_no_caption_key_can_name_is_refused_not_written_unreadable(filename):
    """AlignBench names a caption by its model and image. An M-HalDetect dataset (no model) was written
    with an empty model column, refused on every row when read back; two answers of one model for one
    image were written as a single caption."""
    import io

    from formats.base import FormatError
    from formats.records import Bundle, DatasetRecord, ItemRecord

    def written(*items: ItemRecord) -> None:
        bundle = Bundle(DatasetRecord("d", "mhaldetect"), items=list(items))
        FORMAT.write_stream([bundle], io.BytesIO(), filename=filename)

    with pytest.raises(FormatError, match="item 'a' has no source model"):
        written(ItemRecord("a", "A cat.", image_ref="1.jpg"))
    with pytest.raises(FormatError, match="item 'b' is a second caption of model 'm' for image '1.jpg'"):
        written(
            ItemRecord("a", "A cat.", image_ref="1.jpg", source_model="m"),
            ItemRecord("b", "A dog.", image_ref="1.jpg", source_model="m"),
        )
    written(  # another model's caption of the same image is another caption
        ItemRecord("a", "A cat.", image_ref="1.jpg", source_model="m"),
        ItemRecord("b", "A dog.", image_ref="1.jpg", source_model="n"),
    )


@pytest.mark.parametrize("filename", ["outputs.csv", "outputs.jsonl", "outputs.parquet"])
def test_a_file_of_outputs_alone_is_recognised_as_scores_or_as_localization(engine, filename):
    """A scores file of the detector's outputs alone, without a score column, was recognised as no
    format (unless an output happened to spell 'score'): its import needed the format named."""
    from db.transfer import import_file, import_predictions
    from formats.alignbench import rows_to_bytes
    from formats.base import ReadOptions

    assert import_file(
        engine,
        jsonl(ROWS),
        source="a.jsonl",
        format_name="alignbench",
        options=ReadOptions(dataset="d"),
        actor=OPERATOR,
    ).ok
    columns = ("model", "image_name", "sentence_index", "output")
    said = [("llava", 0, "I would give it 85/100."), ("sd", 0, "20 out of 100: the bus drives right.")]
    rows = [{"model": m, "image_name": "000001.jpg", "sentence_index": k, "output": o} for m, k, o in said]
    data = rows_to_bytes(rows, filename, columns)
    assert best_guess(data, filename, "predictions").name == "alignbench-scores"
    outcome = import_predictions(engine, data, source=filename, dataset="d", detector="x", actor=OPERATOR)
    assert outcome.ok and outcome.format == "alignbench-scores", outcome.summary()
    marked = [{**rows[0], "output": "A street with a 🐱 sign <b>[red] OPEN</b>."}]
    assert best_guess(rows_to_bytes(marked, filename, columns), filename, "predictions").name == (
        "alignbench-localization"
    )
