"""Detector-output formats: spans placed on the stored responses, raw output and the IF flag kept, every
unparseable output stored and counted (never dropped), and import → export → import identical."""

from __future__ import annotations

import json

import pytest

from db.access import OPERATOR
from db.repositories.exchange import known_items, responses_by_external_id
from db.transfer import import_file, import_predictions
from formats.base import ReadOptions
from formats.fields import RecordError
from formats.mhalo_outputs import copy_check, find_tag, read_output
from formats.record_formats import TextCheck
from formats.registry import best_guess
from formats.trihe_judgments import verdict_of

RESPONSE = "The cat sits on a red mat.\n\nIt looks  happy 🐱."
BENCH = json.dumps(
    [
        {"id": "a", "test_solution": RESPONSE, "hallucinated_solution": RESPONSE},
        {"id": "b", "test_solution": "Two dogs run.", "hallucinated_solution": "Two dogs run."},
        {"id": "c", "test_solution": "A sign says OPEN.", "hallucinated_solution": "A sign says OPEN."},
    ]
).encode()


def jsonl(rows) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def test_read_output_places_spans_despite_whitespace_and_keeps_analysis():
    output = (
        "Here is my answer.\n<Analysis>The mat is blue.</Analysis>\n<Tagged_Text>\nThe cat sits on a "
        "<hallucination>red</hallucination> mat. It looks happy 🐱.\n</Tagged_Text>"
    )
    spans, raw = read_output(output, RESPONSE, None)
    assert [RESPONSE[s:e] for s, e in spans] == ["red"]
    assert raw.follows_format and raw.analysis == "The mat is blue." and raw.text == output


def test_read_output_with_another_tag_name_and_failures():
    spans, raw = read_output("<Tagged_Text>Two <A>dogs</A> run.</Tagged_Text>", "Two dogs run.", None)
    assert spans == [(4, 8)] and raw.follows_format
    assert find_tag("<Tagged_Text><A>x</A></Tagged_Text>") == "A"
    spans, raw = read_output(
        "<Tagged_Text>Two <hallucination>cats</hallucination> run.</Tagged_Text>", "Two dogs run.", None
    )
    assert spans == [] and not raw.follows_format and "not the response" in raw.parse_error
    spans, raw = read_output("<Tagged_Text>Two <hallucination>dogs run.</Tagged_Text>", "Two dogs run.", None)
    assert spans == [] and not raw.follows_format and "never closed" in raw.parse_error


def test_mhalo_outputs_round_trip_and_unparseable_kept(engine, prediction_round_trip):
    outputs = [
        {
            "id": "a",
            "output": "Vanilla\n<Tagged_Text>The cat sits on a <hallucination>red mat</hallucination>. It looks happy 🐱.</Tagged_Text>",
        },
        {"id": "b", "output": "I refuse to tag this."},
        {"id": "c", "output": "<Tagged_Text><A>A sign</A> says OPEN.</Tagged_Text>"},
    ]
    data = jsonl(outputs)
    assert best_guess(data, "o.jsonl").name == "mhalo-outputs"
    run, exported = prediction_round_trip("mhalo", BENCH, "mhalo-outputs", data, source="outputs.jsonl")
    annotations = run["annotations"]
    assert [RESPONSE[s["start"] : s["end"]] for s in annotations["a"]["spans"]] == ["red mat"]
    assert annotations["b"]["spans"] == [] and annotations["b"]["raw_output"]["follows_format"] is False
    assert annotations["b"]["raw_output"]["text"] == "I refuse to tag this."
    assert [(s["start"], s["end"]) for s in annotations["c"]["spans"]] == [(0, 6)]
    assert [json.loads(line)["output"] for line in exported.splitlines()] == [o["output"] for o in outputs]


def test_new_detector_run_adds_a_label_set_and_reimport_replaces(engine):
    import_file(
        engine, BENCH, source="b.json", format_name="mhalo", options=ReadOptions(dataset="d"), actor=OPERATOR
    )
    first = [{"id": "b", "output": "<Tagged_Text><hallucination>Two</hallucination> dogs run.</Tagged_Text>"}]
    second = [
        {"id": "b", "output": "<Tagged_Text>Two dogs <hallucination>run</hallucination>.</Tagged_Text>"}
    ]
    for detector, rows in (("x", first), ("y", first), ("x", second)):
        outcome = import_predictions(
            engine,
            jsonl(rows),
            source="o.jsonl",
            dataset="d",
            detector=detector,
            replace_existing=True,
            actor=OPERATOR,
        )
        assert outcome.ok, outcome.problems
    from db.exporter import export_bundle

    sets = {
        ls.name: ls.annotations
        for ls in export_bundle(engine, "d", actor=OPERATOR).label_sets
        if ls.kind == "detector"
    }
    assert set(sets) == {"x", "y"}
    assert [(s.start, s.end) for s in sets["x"][0].spans] == [(9, 12)]
    assert [(s.start, s.end) for s in sets["y"][0].spans] == [(0, 3)]


def test_prediction_problems_name_the_record(engine):
    import_file(
        engine, BENCH, source="b.json", format_name="mhalo", options=ReadOptions(dataset="d"), actor=OPERATOR
    )
    rows = [{"id": "zzz", "output": "x"}, {"output": "no id"}, {"id": "a", "output": 5}]
    outcome = import_predictions(
        engine,
        jsonl(rows),
        source="o.jsonl",
        dataset="d",
        detector="x",
        format_name="mhalo-outputs",
        actor=OPERATOR,
    )
    assert not outcome.ok
    assert [(p.record, p.field) for p in outcome.errors] == [
        ("#0 (id=zzz)", "id"),
        ("#1", "id"),
        ("#2 (id=a)", "output"),
    ]
    missing = import_predictions(
        engine, jsonl(rows), source="o.jsonl", dataset="nope", detector="x", actor=OPERATOR
    )
    assert not missing.ok and "no dataset" in missing.errors[0].reason


def test_exchange_reads_stored_items(engine):
    import_file(
        engine, BENCH, source="b.json", format_name="mhalo", options=ReadOptions(dataset="d"), actor=OPERATOR
    )
    assert responses_by_external_id(engine, "d") == {
        "a": RESPONSE,
        "b": "Two dogs run.",
        "c": "A sign says OPEN.",
    }
    known = known_items(engine, "d")
    assert known["b"].sentences == ((0, 13),)
    assert responses_by_external_id(engine, "nope") == {}


def test_word_index_round_trip_and_misplaced_spans_kept(prediction_round_trip):
    rows = [
        {"id": "a", "spans": [{"start": 4, "end": 6, "text": "a red"}, {"start": 8, "end": 10}]},
        {"id": "b", "spans": [{"start": 1, "end": 9}]},
        {"id": "c", "spans": [{"start": 0, "end": 1, "text": "The"}]},
    ]
    data = jsonl(rows)
    assert best_guess(data, "w.jsonl").name == "word-index"
    run, exported = prediction_round_trip("mhalo", BENCH, "word-index", data, source="w.jsonl")
    a = run["annotations"]["a"]
    assert [RESPONSE[s["start"] : s["end"]] for s in a["spans"]] == ["a red", "looks  happy"]
    assert run["annotations"]["b"]["raw_output"]["follows_format"] is False
    assert (
        run["annotations"]["c"]["spans"] == []
        and "is not words" in run["annotations"]["c"]["raw_output"]["parse_error"]
    )


def test_word_index_names_what_it_writes_otherwise_than_a_run_says(engine):
    """A run read from another format was written as word-index spans without a word: a span inside a
    word came back widened, every output came back replaced by those spans, and an output that had
    failed its format came back as one that followed it and flagged nothing."""
    import io

    from db.export_files import export_to

    import_file(
        engine, BENCH, source="b.json", format_name="mhalo", options=ReadOptions(dataset="d"), actor=OPERATOR
    )
    outputs = [
        {
            "id": "a",
            "output": "<Tagged_Text>The cat sits on a <h>re</h>d mat. It looks happy 🐱.</Tagged_Text>",
        },
        {"id": "b", "output": "I refuse to tag this."},
        {"id": "c", "output": "<Tagged_Text><A>A sign</A> says OPEN.</Tagged_Text>"},
    ]
    assert import_predictions(
        engine, jsonl(outputs), source="o.jsonl", dataset="d", detector="run1", actor=OPERATOR
    ).ok
    notes: list[str] = []
    out = io.BytesIO()
    export_to(engine, "d", "word-index", out, actor=OPERATOR, label_sets=["detector:run1"], left_out=notes)
    assert notes == [
        "detector:run1: 2 raw outputs are replaced by the word-index spans of their spans",
        "detector:run1: 1 spans are widened to whole words",
        "detector:run1: 1 outputs that failed their format are written as their text (read back, they fail still)",
    ]
    again = import_predictions(
        engine,
        out.getvalue(),
        source="w.jsonl",
        dataset="d",
        detector="run2",
        format_name="word-index",
        actor=OPERATOR,
    )
    assert again.ok, again.summary()
    from tests.formats.conftest import comparable

    run2 = comparable(engine, "d")["label_sets"][("detector", "run2")]["annotations"]
    assert [RESPONSE[s["start"] : s["end"]] for s in run2["a"]["spans"]] == ["red"]
    assert run2["b"]["spans"] == [] and run2["b"]["raw_output"]["follows_format"] is False
    assert json.loads(run2["b"]["raw_output"]["text"]) == "I refuse to tag this."


MHALUBENCH = json.dumps(
    [
        {
            "id": 1,
            "image_path": "a.jpg",
            "claim_list": ["The laptop is a Toshiba", "Toshiba was founded in 1885"],
            "ref_claim_label": ["hallucination", "non-hallucination"],
            "ref_reason": [
                {"claim1": "hallucination", "reason": "r1"},
                {"claim2": "non-hallucination", "reason": "r2"},
            ],
        },
        {
            "id": 2,
            "image_path": "b.jpg",
            "claim_list": ["A dog runs"],
            "ref_claim_label": ["non-hallucination"],
            "ref_reason": [{"claim1": "non-hallucination", "reason": "ok"}],
        },
    ]
).encode()


def test_mhalubench_predictions_round_trip(prediction_round_trip):
    rows = [
        {
            "id": 1,
            "claims": [
                {"claim": "The laptop is a  Toshiba", "label": "Hallucination", "reason": "brand"},
                {"label": "non-hallucination"},
            ],
        },
        {"id": 2, "claim_label": ["maybe"], "reason": ["unsure"]},
    ]
    data = jsonl(rows)
    assert best_guess(data, "p.jsonl").name == "mhalubench-predictions"
    run, _ = prediction_round_trip("mhalubench", MHALUBENCH, "mhalubench-predictions", data, source="p.jsonl")
    first = run["annotations"]["1"]
    assert [(c["index"], c["label"], c["reason"]) for c in first["claim_labels"]] == [
        (0, "hallucination", "brand"),
        (1, "non-hallucination", None),
    ]
    second = run["annotations"]["2"]
    assert second["claim_labels"] == [] and second["raw_output"]["follows_format"] is False


def test_trihe_judgments_round_trip(prediction_round_trip):
    bench = {
        "42": {
            "instance": [
                {"question": "Why bright?", "answer": "A lamp is on.", "triplet": ["(lamp, is, on)"]},
                {"question": "What is there?", "answer": "A desk.", "triplet": []},
            ],
            "triplets": ["(lamp, is, on)", "(laptop, on, desk)"],
            "all_object": ["lamp", "laptop", "desk"],
            "object": ["lamp"],
        }
    }
    run_file = json.loads(json.dumps(bench))
    run_file["42"]["instance"][0].update(
        {
            "llava_answer": "The lamp is on and a cat sleeps.",
            "llava_triplets": ["(lamp, is, on)", ["cat", "sleeps on", "desk"]],
            "llava_triplets_judgements": ["yes", "My answer is 'no'. The error is related to 'object1'."],
        }
    )
    run_file["42"]["instance"][1].update(
        {"llava_triplets": ["(desk, is, brown)"], "llava_triplets_judgements": ["maybe"]}
    )
    data = json.dumps(run_file).encode()
    assert best_guess(data, "j.json").name == "trihe-judgments"
    run, _ = prediction_round_trip(
        "trihe", json.dumps(bench).encode(), "trihe-judgments", data, source="j.json"
    )
    first = run["annotations"]["42/0"]
    assert [(t["subject"], t["verdict"], t["wrong_part"]) for t in first["triplets"]] == [
        ("lamp", "yes", None),
        ("cat", "no", "object1"),
    ]
    assert json.loads(first["raw_output"]["text"])["answer"] == "The lamp is on and a cat sleeps."
    second = run["annotations"]["42/1"]
    assert second["triplets"] == [] and second["raw_output"]["follows_format"] is False


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("yes", ("yes", None)),
        ("null", (None, None)),
        (None, (None, None)),
        ("My answer is \"no\". The error is related to 'relation'", ("no", "relation")),
        ({"verdict": "no", "wrong_part": "object2"}, ("no", "object2")),
        ("No. The error is related to 'object2'.", ("no", "object2")),  # the answer first, then why
        ("Yes, the triplet matches the image.", ("yes", None)),
        ("No\nThe error is related to 'relation'", ("no", "relation")),  # the answer on a line of its own
        ("No, the dog cannot be seen in the image.", ("no", None)),  # "cannot" of the image, not the judge
        ("My answer is no. I cannot tell which part is wrong.", ("no", None)),  # its own verdict line
        # The words of a reason about the image are no hedge of the judge's.
        ("No. The man is standing, so we cannot say he is sitting.", ("no", None)),
        ("No, the image cannot be verified to show a cat; related to 'object2'.", ("no", "object2")),
        ("Yes, the woman looks unsure of herself.", ("yes", None)),
    ],
)
def test_trihe_verdicts(value, expected):
    assert verdict_of(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "No idea, sorry",
        "Nothing is wrong",
        "maybe",
        # An answer the judge takes back is no verdict (it read as "no").
        "No, I cannot tell.",
        "Yes, but I am not sure.",
        "No.\nI can't determine it from the image.",
        "No, it is impossible to tell.",
        "No, there is not enough information to determine this.",
    ],
)
def test_trihe_verdicts_not_guessed_from_a_leading_word(value):
    with pytest.raises(RecordError):
        verdict_of(value)


def test_halloc_probabilities_round_trip(prediction_round_trip):
    rows = [
        {"id": "a", "probabilities": [0.1, 0.2, 0.3, 0.4, 0.5, 0.9, 0.6, 0.0, 0.1, 1.0, 0.5]},
        {
            "id": "b",
            "tokens": [{"token": "dogs", "start": 4, "end": 8, "probability": 0.7, "type": "object"}],
        },
        {"id": "c", "probabilities": [0.5, 2.0, 0.1, 0.1]},
    ]
    data = jsonl(rows)
    assert best_guess(data, "p.jsonl").name == "halloc-probs"
    run, _ = prediction_round_trip("mhalo", BENCH, "halloc-probs", data, source="p.jsonl")
    a = run["annotations"]["a"]["token_probabilities"]
    assert len(a) == 11 and RESPONSE[a[6]["start"] : a[6]["end"]] == "mat."
    assert run["annotations"]["b"]["token_probabilities"][0]["type"] == "object"
    c = run["annotations"]["c"]
    assert c["token_probabilities"] == [] and "not in [0, 1]" in c["raw_output"]["parse_error"]


# ------------------------------------------------------------------- the span tag is guessed, not taken


@pytest.mark.parametrize(
    ("response", "output"),
    [
        ("It is <strong>red</strong>.", "<Tagged_Text>It is <strong>red</strong>.</Tagged_Text>"),
        ("Use <code>ls</code> here.", "<Tagged_Text>Use <code>ls</code> here.</Tagged_Text>"),
        ("A <b>bold</b> claim.", "<Tagged_Text>A <b>bold</b> claim.</Tagged_Text>"),
    ],
)
def test_markup_copied_from_the_response_is_not_taken_for_the_span_tag(response, output):
    """An untagged output that copies markup of the response follows the format and has no spans."""
    spans, raw = read_output(output, response, None)
    assert raw.follows_format, raw.parse_error
    assert spans == []


@pytest.mark.parametrize("tag", ["hallucination", "A", "c", "Bb", "aA", "@", "#", "&"])
def test_the_tags_mhalo_tried_are_found(tag):
    response = "It is <strong>red</strong> and round."
    output = f"<Tagged_Text>It is <strong>red</strong> and <{tag}>round</{tag}>.</Tagged_Text>"
    assert find_tag(output, response) == tag
    spans, raw = read_output(output, response, None)
    assert raw.follows_format and [response[s:e] for s, e in spans] == ["round"]


def test_an_unknown_tag_name_is_not_guessed():
    """``<strong>`` is no span tag MHALO knows: the output is read with the run's tag and, since the
    tagged text then keeps the markers, it does not follow the format."""
    assert find_tag("<Tagged_Text>It is <strong>red</strong>.</Tagged_Text>") == "hallucination"
    spans, raw = read_output("<Tagged_Text>It is <strong>red</strong>.</Tagged_Text>", "It is red.", None)
    assert spans == [] and not raw.follows_format
    spans, raw = read_output("<Tagged_Text>It is <strong>red</strong>.</Tagged_Text>", "It is red.", "strong")
    assert spans == [(6, 9)] and raw.follows_format


# ------------------------------------------ gold copies up to whitespace, detector outputs word for word

COPIES = [
    # (stored response, the tagged copy without its tags, a gold file's copy accepted, an output follows)
    ("there is a window visible.", "there is awindow visible.", True, False),  # processed_test #54
    ("A red\n\ncube.", "A red cube.", True, True),
    ("A red cube.", "A  red\tcube. ", True, True),
    ("A red cube.", "A red cube!", False, False),
    ("A red cube.", "A rod cube.", False, False),
]


@pytest.mark.parametrize(("response", "copy", "gold_accepted", "follows"), COPIES)
def test_gold_files_accept_copies_up_to_whitespace_and_outputs_follow_word_for_word(
    response, copy, gold_accepted, follows
):
    """A benchmark's own tags are placed wherever its copy holds the response's characters; a detector's
    output follows MHALO's format only with the response's words (the metrics contract's IF), and then
    its spans land where a gold file's would."""
    from formats.fields import RecordError
    from formats.mhalo import gold_spans_on
    from metrics import follows_format

    word = "red" if "red" in copy else "window"
    tagged = copy.replace(word, f"<hallucination>{word}</hallucination>", 1)
    try:
        gold, _ = gold_spans_on(response, tagged)
    except RecordError:
        gold = None
    output = f"<Tagged_Text>{tagged}</Tagged_Text>"
    spans, raw = read_output(output, response, None)
    assert (gold is not None) is gold_accepted
    assert raw.follows_format is follows is follows_format(output, response), raw.parse_error
    assert spans == (gold if follows else [])


@pytest.mark.parametrize(
    ("output", "where"),
    [
        (
            "A man is<hallucination>sitting</hallucination> on it.",
            "at word 3: 'man issitting on' vs 'man is sitting'",
        ),
        ("<hallucination>Two</hallucination>bikes stand.", "at word 1: 'Twobikes stand.' vs 'Two bikes'"),
    ],
)
def test_an_output_that_joins_words_at_a_tag_is_kept_without_spans_and_says_where(output, where):
    response = "A man is sitting on it." if output.startswith("A man") else "Two bikes stand."
    spans, raw = read_output(f"<Tagged_Text>{output}</Tagged_Text>", response, None)
    assert spans == [] and not raw.follows_format
    assert raw.parse_error == f"the tagged text joins or splits words of the response {where}"


def test_a_detector_output_with_a_malformed_closing_tag_says_which():
    output = "<Tagged_Text>It is <hallucination>red<hallucination>.</Tagged_Text>"
    spans, raw = read_output(output, "It is red.", None)
    assert spans == [] and not raw.follows_format
    assert "a closing tag looks malformed: '<hallucination>' at character 37, after 'red'" in raw.parse_error
    assert output[37:].startswith("<hallucination>.")


# Three MHALO-style outputs whose tagged texts are another dataset's responses, under this one's ids.
OTHER_DATASET_RUN = [
    {"id": "a", "output": "<Tagged_Text>Extend ED to <hallucination>N</hallucination>.</Tagged_Text>"},
    {"id": "b", "output": "<Tagged_Text>Angle AOC is 120°.</Tagged_Text>"},
    {"id": "c", "output": "<Tagged_Text>Hence <hallucination>AM = CM</hallucination>.</Tagged_Text>"},
]


@pytest.mark.parametrize("allow_skip", [False, True])
def test_a_run_over_another_dataset_is_refused_whole(engine, allow_skip):
    """Ids of one MHALO file collide with another's (``processed_test-3``): a run whose outputs copy
    none of the stored responses is refused with one error for the file, skipping or not, and nothing of
    it is written (it used to import as a detector that failed every item)."""
    import_file(
        engine, BENCH, source="b.json", format_name="mhalo", options=ReadOptions(dataset="d"), actor=OPERATOR
    )
    outcome = import_predictions(
        engine,
        jsonl(OTHER_DATASET_RUN),
        source="o.jsonl",
        dataset="d",
        detector="wrongdata",
        allow_skip=allow_skip,
        actor=OPERATOR,
    )
    assert not outcome.ok and outcome.result is None
    assert [str(p) for p in outcome.problems] == [
        "o.jsonl: none of the 3 outputs matches its item's response (first that does not: record #0 (id=a): "
        "the tagged text is not the response at character 0: 'Extend ED to N.' vs 'The cat sits on a red mat'"
        "): is this run over another dataset? Nothing of it was imported; import it into the dataset "
        "its outputs are of"
    ]
    from db.exporter import export_bundle

    assert [
        ls.name for ls in export_bundle(engine, "d", actor=OPERATOR).label_sets if ls.kind == "detector"
    ] == []


def test_broken_outputs_of_the_right_dataset_are_kept_not_refused(engine):
    """The run check is no IF: outputs of this dataset that break the format (tags never closed, a copy
    cut short, words joined, a header around the copy) hold its responses and are kept without spans,
    counted against the detector; one output of another text among them does not refuse the run."""
    import_file(
        engine, BENCH, source="b.json", format_name="mhalo", options=ReadOptions(dataset="d"), actor=OPERATOR
    )
    rows = [
        {"id": "a", "output": "Sure! The cat sits on a red mat.\n\nIt looks <hallucination>happy 🐱."},
        {"id": "b", "output": "<Tagged_Text>Twodogs <hallucination>run</hallucination>.</Tagged_Text>"},
        {"id": "c", "output": "<Tagged_Text>Hence <hallucination>AM = CM</hallucination>.</Tagged_Text>"},
    ]
    outcome = import_predictions(
        engine, jsonl(rows), source="o.jsonl", dataset="d", detector="sloppy", actor=OPERATOR
    )
    assert outcome.ok, outcome.problems
    assert [p.record for p in outcome.warnings] == ["#0 (id=a)", "#1 (id=b)", "#2 (id=c)"]
    assert all("kept without spans" in p.reason for p in outcome.warnings)
    assert outcome.result is not None and outcome.result.rows["raw_outputs"] == 3
    cut = [
        {"id": "a", "output": "<Tagged_Text>The cat sits on a red mat. It"},
        {"id": "b", "output": "<Tagged_Text>Two dogs</Tagged_Text>"},
        {"id": "c", "output": "<Tagged_Text>A sign says <hallucination>OPEN</hallucination>"},
    ]
    outcome = import_predictions(
        engine, jsonl(cut), source="o.jsonl", dataset="d", detector="cut", actor=OPERATOR
    )
    assert outcome.ok, outcome.problems


def test_the_run_check_needs_three_outputs_and_refuses_below_one_in_twenty():
    """Fewer than three compared outputs never refuse a run (a broken output cannot be told from another
    dataset); from three on a run is refused when fewer than 5 % of its outputs match (none, below 20)."""
    from formats.record_formats import RunTextChecks, TextCheck

    def checks(matched: int, compared: int, empty: int = 0) -> RunTextChecks:
        found = RunTextChecks()
        for k in range(compared):
            found.add(f"#{k}", TextCheck(k < matched, "at character 0: 'x' vs 'y'"))
        for k in range(empty):
            found.add(f"#{compared + k}", None)
        return found

    assert checks(0, 2, empty=5).refusal("f") is None
    assert "none of the 3 outputs" in getattr(checks(0, 3).refusal("f"), "reason", "")
    assert checks(1, 19).refusal("f") is None
    assert checks(1, 20).refusal("f") is None
    refused = checks(1, 21).refusal("f")
    assert refused is not None and refused.severity == "error" and refused.record == "-"
    assert refused.reason.startswith(
        "only 1 of the 21 outputs match their item's response (first that does not: record #1:"
    )


def test_a_run_in_tags_of_its_own_is_kept_not_refused(engine):
    """Every output marks spans with a tag the reader does not guess (``<Hallucination>``, attributes):
    each breaks the format and counts against IF, but they copy this dataset's responses, and the run was
    refused as one over another dataset."""
    import_file(
        engine, BENCH, source="b.json", format_name="mhalo", options=ReadOptions(dataset="d"), actor=OPERATOR
    )
    rows = [
        {
            "id": "a",
            "output": f"<Tagged_Text>{RESPONSE.replace('red', '<Hallucination>red</Hallucination>')}</Tagged_Text>",
        },
        {"id": "b", "output": '<Tagged_Text>Two dogs <error type="x">run</error>.</Tagged_Text>'},
        {"id": "c", "output": "<Tagged_Text>A sign says <Hallucination>OPEN</Hallucination>.</Tagged_Text>"},
    ]
    outcome = import_predictions(
        engine, jsonl(rows), source="o.jsonl", dataset="d", detector="own-tags", actor=OPERATOR
    )
    assert outcome.ok, outcome.problems
    assert outcome.result is not None and outcome.result.rows["raw_outputs"] == 3


def test_word_index_spans_are_recognised_beside_an_output_written_back_as_its_tagged_text():
    """A word-index export writes an output that failed its format as its text; an MHALO output there
    (``<Tagged_Text>``) sent the whole file to the MHALO reader, which found no output in any record."""
    failed = "<Tagged_Text>Two <Hallucination>dogs</Hallucination> run.</Tagged_Text>"
    data = jsonl([{"id": "b", "spans": failed}, {"id": "c", "spans": []}])
    assert best_guess(data, "w.jsonl").name == "word-index"
    data = jsonl([{"id": "a", "spans": [{"start": 0, "end": 1}]}, {"id": "b", "spans": failed}])
    assert best_guess(data, "w.jsonl").name == "word-index"
    # An MHALO output whose text holds a word-index record is still an MHALO output.
    quoted = '<Tagged_Text>{"spans": [{"start": 0, "end": 1}]}</Tagged_Text>'
    assert best_guess(jsonl([{"id": "b", "output": quoted}]), "o.jsonl").name == "mhalo-outputs"


def test_another_formats_outputs_written_as_their_text_say_nothing_of_the_dataset(engine):
    """Word indices that could not be placed, written into MHALO's output field as their JSON text, hold
    no response of any dataset: a run of them is recognised, kept and counted as failed, where it was
    recognised as no format and, named, refused as a run over another dataset."""
    import_file(
        engine, BENCH, source="b.json", format_name="mhalo", options=ReadOptions(dataset="d"), actor=OPERATOR
    )
    rows = [{"id": ext, "output": json.dumps([{"start": 0, "end": 99}])} for ext in "abc"]
    assert best_guess(jsonl(rows), "o.jsonl").name == "mhalo-outputs"
    outcome = import_predictions(
        engine, jsonl(rows), source="o.jsonl", dataset="d", detector="x", actor=OPERATOR
    )
    assert outcome.ok, outcome.problems
    assert [p.record for p in outcome.warnings] == ["#0 (id=a)", "#1 (id=b)", "#2 (id=c)"]
    assert all("kept without spans" in p.reason for p in outcome.warnings)
    # Only a JSON list or object as a whole is another format's output; prose still says which dataset.
    assert copy_check('{"spans": []}', RESPONSE, "hallucination") is None
    assert copy_check("[Extend ED to N.]", RESPONSE, "hallucination") == TextCheck(
        False,
        "the tagged text is not the response at character 0: '[Extend ED to N.]' vs 'The cat sits on a red mat'",
    )
