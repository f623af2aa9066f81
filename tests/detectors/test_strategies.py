"""Each strategy's calls carry the paper's wording and the item, and its parser reads answers as the
file formats do: spans, scores, verdicts, and a kept raw output with the reason when the format broke."""

from __future__ import annotations

import json

import pytest

from detectors import alignbench, mhalo, mhalubench, trihe
from detectors.base import RunItem, fill
from detectors.ensemble import combine
from detectors.strategies import STRATEGIES, UnknownStrategy, get_strategy
from formats.mhalo_outputs import read_output
from formats.records import Annotations, RawOutputRecord, SpanRecord

RESPONSE = "The bright red sports car is parked near a lake."
ITEM = RunItem("car", RESPONSE, prompt="describe the image", sentences=((0, len(RESPONSE)),))


def spans(annotations: Annotations) -> list[str]:
    return [RESPONSE[s.start : s.end] for s in annotations.spans]


def test_every_strategy_is_listed_once_with_its_own_prompt_hash():
    assert list(STRATEGIES) == [
        "mhalo-vanilla",
        "mhalo-2-shot",
        "mhalo-criteria",
        "mhalo-analyze-then-judge",
        "mhalo-json-index",
        "alignbench-score",
        "alignbench-cot-score",
        "alignbench-localization",
        "mhalubench-claims",
        "trihe-triplets",
    ]
    hashes = {s.prompt_hash for s in STRATEGIES.values()}
    assert len(hashes) == len(STRATEGIES) and all(len(h) == 12 for h in hashes)
    with pytest.raises(UnknownStrategy, match="mhalo-vanilla"):
        get_strategy("nope")


def test_the_prompt_hash_follows_the_wording():
    class Reworded(mhalo.Vanilla):
        template = mhalo.VANILLA.replace("EXACTLY", "exactly")

    assert Reworded().prompt_hash != mhalo.Vanilla().prompt_hash
    assert mhalo.Vanilla().prompt_hash == mhalo.Vanilla().prompt_hash


def test_filling_is_one_pass_so_item_text_with_braces_stays_as_written():
    filled = fill("P: {prompt} R: {response} {json}", prompt="say {response}", response="x")
    assert filled == "P: say {response} R: x {json}"


@pytest.mark.parametrize(
    ("strategy", "phrases"),
    [
        (
            mhalo.Vanilla(),
            ["Here is the response with hallucinated content tagged:", "ANY OTHER FORMAT WILL BE REJECTED"],
        ),
        (
            mhalo.TwoShot(),
            ["Remember to tag each hallucinated content separately!", "holding a black umbrella"],
        ),
        (mhalo.Criteria(), ["DEFINITION OF 12 HALLUCINATION TYPES", "**Query Misunderstanding**"]),
        (mhalo.AnalyzeThenJudge(), ["<Analysis>...</Analysis>", "It's a regular sedan, not a sports car"]),
        (
            mhalo.JsonWordIndex(),
            ["Here is the hallucination analysis:", "Y is the ending word index (exclusive)"],
        ),
    ],
)
def test_mhalo_calls_carry_the_appendix_wording_the_item_and_the_image(strategy, phrases):
    (call,) = strategy.calls(ITEM, 0, {})
    assert call.image and call.system and call.system.startswith("You are a hallucination detector")
    for phrase in phrases:
        assert phrase in call.user
    assert f"model's response: {RESPONSE}" in call.user or f"\n\n{RESPONSE}\n\n" in call.user
    assert "describe the image" in call.user


def test_tagged_answers_are_read_by_the_mhalo_outputs_reader():
    answer = (
        "Here is the response with hallucinated content tagged:\n<Tagged_Text>\nThe <hallucination>bright red"
        "</hallucination> sports car is <hallucination>parked near a lake</hallucination>.\n</Tagged_Text>"
    )
    got = mhalo.Vanilla().parse(ITEM, {"item": answer})
    assert spans(got) == ["bright red", "parked near a lake"]
    assert got.raw_output == read_output(answer, RESPONSE, "hallucination")[1]
    assert got.raw_output is not None and got.raw_output.follows_format

    analysed = mhalo.AnalyzeThenJudge().parse(
        ITEM,
        {
            "item": "<Analysis>It is blue.</Analysis><Tagged_Text>The <hallucination>bright red</hallucination> sports car is parked near a lake.</Tagged_Text>"
        },
    )
    assert spans(analysed) == ["bright red"] and analysed.raw_output.analysis == "It is blue."


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            "<Tagged_Text>The <hallucination>bright red sports car is parked near a lake.</Tagged_Text>",
            "tags do not parse",
        ),
        (
            "<Tagged_Text>The <hallucination>blue</hallucination> sports car is parked.</Tagged_Text>",
            "not the response",
        ),
    ],
)
def test_a_broken_tagged_answer_is_kept_without_spans(answer, reason):
    got = mhalo.Criteria().parse(ITEM, {"item": answer})
    assert got.spans == [] and got.raw_output.text == answer
    assert not got.raw_output.follows_format and reason in got.raw_output.parse_error


def test_json_word_indices_are_placed_by_the_word_index_reader():
    answer = (
        'Here is the hallucination analysis: ```json\n{"hallucinations": [{"start": 1, "end": 3, "text": "bright red"},'
        ' {"start": 6, "end": 10, "text": "parked near a lake."}]}\n```'
    )
    got = mhalo.JsonWordIndex().parse(ITEM, {"item": answer})
    assert spans(got) == ["bright red", "parked near a lake."]
    assert got.raw_output.follows_format and got.raw_output.text == answer


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("I think the car is red.", "no JSON object"),
        ('Here is the hallucination analysis: {"hallucinations": [{"start": 1,}]}', "does not parse"),
        ('{"spans": []}', "no hallucinations list"),
        ('{"hallucinations": [{"start": 1, "end": 3, "text": "sports car"}]}', "is not words 1-3"),
        ('{"hallucinations": [{"start": 8, "end": 12}]}', "outside the response's 10 words"),
    ],
)
def test_a_broken_json_answer_is_kept_with_the_reason(answer, reason):
    got = mhalo.JsonWordIndex().parse(ITEM, {"item": answer})
    assert got.spans == [] and not got.raw_output.follows_format and reason in got.raw_output.parse_error


TWO = RunItem(
    "caption",
    "A cat sits. The dog is blue.",
    sentences=((0, 11), (12, 28)),
    sentence_numbers=(4, 5),
)


def test_alignbench_scores_one_call_per_sentence_and_scores_unreadable_answers_50():
    strategy = alignbench.SentenceScore()
    calls = strategy.calls(TWO, 0, {})
    assert [c.unit for c in calls] == ["sentence 0", "sentence 1"]
    assert (
        calls[1].user.endswith("Caption: The dog is blue.")
        and "Judge the correctness from 0-100 points" in calls[1].user
    )
    got = strategy.parse(
        TWO, {"sentence 0": '{"score": 85} The cat is there.', "sentence 1": "I cannot tell."}
    )
    assert [(s.index, s.score, s.parsed) for s in got.sentence_scores] == [(0, 85.0, True), (1, 50.0, False)]
    assert json.loads(got.raw_output.text) == {"4": '{"score": 85} The cat is there.', "5": "I cannot tell."}
    assert not got.raw_output.follows_format and got.raw_output.parse_error.startswith("sentence 5:")
    cot = alignbench.ChainOfThoughtScore().calls(TWO, 0, {})[0].user
    assert "Please first explain the reason of scoring in two or three sentences" in cot
    assert strategy.unsuitable(RunItem("empty", "")) == "the item has no sentences to judge"


def test_alignbench_localization_places_red_words_in_their_sentence():
    strategy = alignbench.Localization()
    assert "marking the incorrect parts by [red]" in strategy.calls(TWO, 0, {})[0].user
    got = strategy.parse(
        TWO,
        {
            "sentence 0": '{"output": "A cat sits."}',
            "sentence 1": '```json\n{"output": "The dog is [red] blue."}\n```',
        },
    )
    assert [TWO.response[s.start : s.end] for s in got.spans] == ["blue."]
    assert got.raw_output.follows_format
    broken = strategy.parse(TWO, {"sentence 0": "A dog sits.", "sentence 1": "The dog is blue."})
    assert (
        not broken.raw_output.follows_format
        and "sentence 4: the marked text differs" in broken.raw_output.parse_error
    )


CLAIMS = RunItem("claims", "x", claims=("There are three bikes.", "The bikes are outside."))


def test_claim_verification_lists_the_claims_and_reads_the_papers_answer_shape():
    strategy = mhalubench.ClaimVerification()
    (call,) = strategy.calls(CLAIMS, 0, {})
    assert "claim1: There are three bikes.\nclaim2: The bikes are outside." in call.user
    assert (
        call.system == "You are a brilliant hallucination judge."
        and "YOU MUST RETURN THE JUDGMENT RESULTS" in call.user
    )
    t2i = strategy.calls(RunItem("t", "x", task_type="text-to-image", claims=("A cat.",)), 0, {})[0]
    assert t2i.system == "You are a brilliant hallucination judger." and "text-to-image model" in t2i.user
    answer = (
        '["claim1": "hallucination", "reason": "There are five bikes, not \\"three\\".", '
        '"claim2": "non-hallucination", "reason": "They are outside."]'
    )
    got = strategy.parse(CLAIMS, {"item": answer})
    assert [(c.index, c.label, c.reason) for c in got.claim_labels] == [
        (0, "hallucination", 'There are five bikes, not "three".'),
        (1, "non-hallucination", "They are outside."),
    ]
    as_json = strategy.parse(
        CLAIMS, {"item": json.dumps([{"claim1": "Non-Hallucination"}, {"claim2": "hallucination"}])}
    )
    assert [c.label for c in as_json.claim_labels] == ["non-hallucination", "hallucination"]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ('["claim1": "hallucination"]', "1 predictions for the item's 2 claims"),
        ('["claim1": "hallucination", "claim3": "hallucination"]', "claim2 is not judged"),
        ('["claim1": "hallucination", "claim1": "non-hallucination"]', "judged twice"),
        ("All fine.", "no claim verdict"),
    ],
)
def test_a_verdict_list_that_does_not_match_the_claims_is_kept_without_labels(answer, reason):
    got = mhalubench.ClaimVerification().parse(CLAIMS, {"item": answer})
    assert (
        got.claim_labels == [] and not got.raw_output.follows_format and reason in got.raw_output.parse_error
    )


SCENE = RunItem(
    "scene",
    "A man rides a horse on the beach.",
    reference_triplets=(("man", "riding", "horse"), ("horse", "on", "sand")),
    objects=("man", "horse", "sand"),
)


def test_trihe_extracts_then_judges_each_triplet_as_text_only_calls():
    strategy = trihe.TripletJudge()
    (extract,) = strategy.calls(SCENE, 0, {})
    assert (
        not extract.image
        and not extract.sampled
        and extract.user.endswith(f"### Input:\n{SCENE.response}\n\n### KG:")
    )
    extraction = (
        '("man", "rides", "horse")\n("horse", "on", "beach, sunny")\n<Done>\n("ignored", "after", "done")'
    )
    judges = strategy.calls(SCENE, 1, {"extraction": extraction})
    assert [c.unit for c in judges] == ["triplet 0", "triplet 1"] and not any(c.image for c in judges)
    assert '("man", "riding", "horse")\n("horse", "on", "sand")' in judges[0].user
    assert "List of Objects:\nman, horse, sand" in judges[0].user
    assert judges[1].user.endswith('Claim:\n("horse", "on", "beach, sunny")')
    got = strategy.parse(
        SCENE,
        {
            "extraction": extraction,
            "triplet 0": 'The reference says riding. My answer is "yes".',
            "triplet 1": 'Sand, not beach. My answer is "no". The error is related to "object2".',
        },
    )
    assert [(t.subject, t.relation, t.object, t.verdict, t.wrong_part) for t in got.triplets] == [
        ("man", "rides", "horse", "yes", None),
        ("horse", "on", "beach, sunny", "no", "object2"),
    ]
    raw = json.loads(got.raw_output.text)
    assert raw["triplets"] == [["man", "rides", "horse"], ["horse", "on", "beach, sunny"]]
    assert got.raw_output.follows_format and len(raw["judgements"]) == 2


def test_trihe_keeps_an_unreadable_judgment_without_verdicts():
    got = trihe.TripletJudge().parse(
        SCENE, {"extraction": '("man", "rides", "horse")', "triplet 0": "Probably fine."}
    )
    assert got.triplets == [] and not got.raw_output.follows_format
    assert "judgements[0]" in got.raw_output.parse_error
    assert (
        trihe.TripletJudge().unsuitable(RunItem("x", "y"))
        == "the item has no reference scene graph to judge against"
    )


def test_self_ensemble_votes_words_averages_scores_and_takes_the_majority_verdict():
    def tagged(*words: str) -> Annotations:
        found = [SpanRecord(RESPONSE.index(w), RESPONSE.index(w) + len(w)) for w in words]
        return Annotations("car", found, raw_output=RawOutputRecord("x", True))

    voted = combine("spans", ITEM, [tagged("bright red"), tagged("red sports"), tagged("lake")])
    assert spans(voted) == ["red"]
    broken = Annotations("car", raw_output=RawOutputRecord("y", False, parse_error="tags do not parse"))
    voted = combine("spans", ITEM, [tagged("bright red sports"), tagged("red sports car"), broken])
    assert spans(voted) == ["red sports"]
    assert json.loads(voted.raw_output.text) == {"samples": ["x", "x", "y"]}
    assert voted.raw_output.follows_format and voted.raw_output.parse_error == "sample 3: tags do not parse"
    # A word holds its punctuation ("lake."): the span is what the samples flagged, not the whole word.
    assert spans(combine("spans", ITEM, [tagged("near a lake"), tagged("near a lake")])) == ["near a lake"]
    assert spans(combine("spans", ITEM, [tagged("lak"), tagged("lake"), tagged("car")])) == ["lak"]
    # Samples flagging different parts of one word, none of its characters by a majority: the word.
    halves = [tagged("spo"), tagged("rts"), tagged("car")]
    assert spans(combine("spans", ITEM, halves)) == ["sports"]

    strategy = alignbench.SentenceScore()
    scores = [
        strategy.parse(TWO, {"sentence 0": '"score": 80', "sentence 1": '"score": 10'}),
        strategy.parse(TWO, {"sentence 0": '"score": 90', "sentence 1": "no idea"}),
    ]
    assert [(s.score, s.parsed) for s in combine("sentence scores", TWO, scores).sentence_scores] == [
        (85.0, True),
        (10.0, True),
    ]
    claims = mhalubench.ClaimVerification()
    votes = [
        claims.parse(CLAIMS, {"item": '["claim1": "hallucination", "claim2": "non-hallucination"]'}),
        claims.parse(CLAIMS, {"item": '["claim1": "non-hallucination", "claim2": "hallucination"]'}),
    ]
    assert [c.label for c in combine("claim labels", CLAIMS, votes).claim_labels] == [
        "hallucination",
        "hallucination",
    ]
