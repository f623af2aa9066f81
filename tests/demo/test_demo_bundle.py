"""The synthetic demo: deterministic, internally consistent, and true to its documented behaviours."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from db.access import OPERATOR
from demo.build import DEMO_DATASET_NAME, build_demo_bundle
from formats.records import Annotations, Bundle, ItemRecord, LabelSetRecord
from formats.sentences import split_sentences
from formats.taxonomies import MHALO
from metrics import auroc, ece, f1_iou, follows_format, parse_tagged, segment_labels, token_spans


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Bundle, Path]:
    image_dir = tmp_path_factory.mktemp("demo") / "images"
    return build_demo_bundle(image_dir), image_dir


@pytest.fixture(scope="module")
def bundle(built: tuple[Bundle, Path]) -> Bundle:
    return built[0]


@pytest.fixture(scope="module")
def items(bundle: Bundle) -> dict[str, ItemRecord]:
    return {item.external_id: item for item in bundle.items}


def label_set(bundle: Bundle, name: str) -> LabelSetRecord:
    return next(s for s in bundle.label_sets if s.name == name)


@pytest.fixture(scope="module")
def gold(bundle: Bundle) -> dict[str, Annotations]:
    return {a.item: a for a in label_set(bundle, "gold").annotations}


def spans_of(ann: Annotations) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in ann.spans]


def token_iou(text: str, a: tuple[int, int], b: tuple[int, int]) -> float:
    (ta,), (tb,) = token_spans(text, [a]), token_spans(text, [b])
    inter = max(0, min(ta[1], tb[1]) - max(ta[0], tb[0]))
    return inter / ((ta[1] - ta[0]) + (tb[1] - tb[0]) - inter)


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


# ------------------------------------------------------------------------------------ shape and identity


def test_dataset_record(built: tuple[Bundle, Path]) -> None:
    bundle, image_dir = built
    d = bundle.dataset
    assert d.name == DEMO_DATASET_NAME == "Spanlight demo (synthetic)"
    assert d.source_format == "demo" and d.is_synthetic
    assert d.taxonomy == list(MHALO)
    assert d.label_kinds == ["span", "sentence", "claim", "triplet"]
    assert d.image_root == str(image_dir)
    assert "synthetic" in d.description.lower()


def test_content_counts(bundle: Bundle, items: dict[str, ItemRecord], gold: dict[str, Annotations]) -> None:
    assert len(bundle.items) == 60
    assert bundle.items[-1].external_id == "demo-xss"
    assert Counter(i.subset for i in bundle.items) == {"shapes": 20, "counting": 20, "signs": 20}
    assert {i.source_model for i in bundle.items} == {
        "captioner-a",
        "captioner-b",
        "captioner-c",
        "painter-a",
    }
    clean = [k for k, a in gold.items() if not a.spans]
    assert len(clean) == 9
    assert sum(1 for i in bundle.items if i.claims) == 15
    assert sum(1 for i in bundle.items if i.reference_triplets) == 15
    assert sum(1 for a in gold.values() if a.triplets) == 15
    assert {s.name for s in bundle.label_sets} == {"gold", "cautious", "eager", "sloppy", "alice", "bob"}
    assert len({s.type for a in gold.values() for s in a.spans}) >= 8


def test_same_seed_same_bundle_and_bytes(built: tuple[Bundle, Path], tmp_path: Path) -> None:
    bundle, image_dir = built
    again = build_demo_bundle(tmp_path / "again")
    first, second = bundle.to_dict(), again.to_dict()
    first["dataset"].pop("image_root"), second["dataset"].pop("image_root")
    assert first == second
    for item in bundle.items:
        assert (image_dir / item.image_ref).read_bytes() == (tmp_path / "again" / item.image_ref).read_bytes()


def test_other_seed_differs(bundle: Bundle, tmp_path: Path) -> None:
    other = build_demo_bundle(tmp_path, seed=8)
    assert [i.response for i in other.items] != [i.response for i in bundle.items]


def test_too_few_scenes_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        build_demo_bundle(tmp_path, n_scenes=5)


def test_images_exist_and_open(built: tuple[Bundle, Path]) -> None:
    bundle, image_dir = built
    for n, item in enumerate(bundle.items, 1):
        assert item.image_ref == f"scene_{n:03d}.png"
        with Image.open(image_dir / item.image_ref) as image:
            assert image.format == "PNG" and image.size == (512, 384)


# ---------------------------------------------------------------------------------------- offsets


def test_offsets_are_valid(bundle: Bundle, items: dict[str, ItemRecord]) -> None:
    for item in bundle.items:
        assert item.sentences and item.response == item.response.strip()
        assert [(s.start, s.end) for s in item.sentences] == split_sentences(item.response)
    for ls in bundle.label_sets:
        for ann in ls.annotations:
            item = items[ann.item]
            n, n_sent = len(item.response), len(item.sentences or [])
            assert all(0 <= s.start < s.end <= n for s in ann.spans)
            assert all(0 <= x.index < n_sent for x in ann.sentence_labels)
            assert all(0 <= x.index < n_sent for x in ann.sentence_scores)
            assert all(0 <= x.index < len(item.claims) for x in ann.claim_labels)
            assert all(0 <= x.start < x.end <= n for x in ann.token_probabilities)
    for task in bundle.rating_tasks:
        for r in task.ratings:
            assert r.segment_start == r.segment_end == -1 or (
                0 <= r.segment_start < r.segment_end <= len(items[r.item].response)
            )


def test_unicode_item_counts_code_points(items: dict[str, ItemRecord], gold: dict[str, Annotations]) -> None:
    item = items["demo-004"]
    assert "🙂" in item.response and "\u0301" in item.response and "看" in item.response
    assert gold["demo-004"].spans and all(s.start > item.response.index("🙂") for s in gold["demo-004"].spans)
    for span in gold["demo-004"].spans:
        assert span.note and item.response[span.start : span.end] not in span.note


def test_xss_item_is_literal_and_spanned(items: dict[str, ItemRecord], gold: dict[str, Annotations]) -> None:
    text = items["demo-xss"].response
    for needle in ("<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "**bold**"):
        assert needle in text
    spanned = [text[s.start : s.end] for s in gold["demo-xss"].spans]
    assert "<script>alert(1)</script>" in spanned


# ----------------------------------------------------------------------------------------- gold


def test_sentence_labels_follow_gold_spans(bundle: Bundle, gold: dict[str, Annotations]) -> None:
    n_unknown = 0
    for item in bundle.items:
        ann = gold[item.external_id]
        assert [x.index for x in ann.sentence_labels] == list(range(len(item.sentences or [])))
        for sentence, label in zip(item.sentences or [], ann.sentence_labels, strict=True):
            inside = [s for s in ann.spans if overlaps((s.start, s.end), (sentence.start, sentence.end))]
            if inside:
                assert label.label == "incorrect" and label.error_type == inside[0].type
            else:
                assert label.label in ("correct", "unknown") and label.error_type is None
            n_unknown += label.label == "unknown"
        assert all(s.type in MHALO for s in ann.spans)
    assert 3 <= n_unknown <= 40


def test_gold_spans_are_minimal_words(bundle: Bundle, gold: dict[str, Annotations]) -> None:
    for item in bundle.items:
        for s in gold[item.external_id].spans:
            piece = item.response[s.start : s.end]
            assert piece == piece.strip() and len(piece.split()) <= 3


def test_claims_agree_with_sentences(bundle: Bundle, gold: dict[str, Annotations]) -> None:
    t2i = [i for i in bundle.items if i.task_type == "text-to-image"]
    assert len(t2i) >= 2
    for item in t2i:
        assert item.prompt == item.response and item.claims
        assert all(c.source == "prompt" for c in item.claims)
    for item in bundle.items:
        if not item.claims:
            continue
        labels = gold[item.external_id].claim_labels
        assert [x.index for x in labels] == list(range(len(item.claims)))
        assert all(x.type in ("object", "attribute", "scene-text", "fact") and x.reason for x in labels)
        by_segment: dict[int, list[str]] = {}
        for claim, label in zip(item.claims, labels, strict=True):
            sentence = item.sentences[claim.segment]
            assert claim.segment_text == item.response[sentence.start : sentence.end]
            by_segment.setdefault(claim.segment, []).append(label.label)
        segments = sorted(by_segment)
        sentence_labels = gold[item.external_id].sentence_labels
        expected = [
            "hallucination" if sentence_labels[k].label == "incorrect" else "non-hallucination"
            for k in segments
        ]
        assert segment_labels([by_segment[k] for k in segments]) == expected


def test_triplets(bundle: Bundle, gold: dict[str, Annotations]) -> None:
    for item in bundle.items:
        triplets = gold[item.external_id].triplets
        assert bool(triplets) == bool(item.reference_triplets)
        for t in triplets:
            assert t.verdict in ("yes", "no")
            assert (t.verdict == "no") == (t.wrong_part in ("object1", "object2", "relation"))
        if triplets:
            n_wrong = sum(t.verdict == "no" for t in triplets)
            assert n_wrong == len(gold[item.external_id].spans)
    for name in ("cautious", "eager"):
        judged = [a for a in label_set(bundle, name).annotations if a.triplets]
        assert len(judged) == 15
    assert not any(a.triplets or a.claim_labels for a in label_set(bundle, "sloppy").annotations)


# -------------------------------------------------------------------------------------- detectors


def test_raw_outputs_parse_back(bundle: Bundle, items: dict[str, ItemRecord]) -> None:
    for name in ("cautious", "eager", "sloppy"):
        for ann in label_set(bundle, name).annotations:
            raw, text = ann.raw_output, items[ann.item].response
            assert raw is not None
            assert (
                raw.text.count("Here is the response with hallucinated content tagged:\n<Tagged_Text>") == 1
            )
            if raw.follows_format:
                assert raw.parse_error is None
                assert follows_format(raw.text, text)
                assert parse_tagged(raw.text) == (text, spans_of(ann))
            else:
                assert raw.parse_error and not ann.spans
                assert not follows_format(raw.text, text)


def test_cautious(bundle: Bundle, items: dict[str, ItemRecord], gold: dict[str, Annotations]) -> None:
    found = total = 0
    for ann in label_set(bundle, "cautious").annotations:
        g = spans_of(gold[ann.item])
        assert set(spans_of(ann)) <= set(g)
        assert g or not ann.spans
        assert ann.raw_output and ann.raw_output.follows_format and ann.raw_output.analysis is None
        found, total = found + len(ann.spans), total + len(g)
    assert 0.5 <= found / total <= 0.8


def test_eager(bundle: Bundle, items: dict[str, ItemRecord], gold: dict[str, Annotations]) -> None:
    order = [i.external_id for i in bundle.items]
    clean = [k for k in order if not gold[k].spans]
    single = next(k for k in order if len(gold[k].spans) == 1)
    hit = total = false_positives = 0
    silent = set()
    for ann in label_set(bundle, "eager").annotations:
        text, g = items[ann.item].response, spans_of(gold[ann.item])
        assert ann.raw_output and ann.raw_output.follows_format and ann.raw_output.analysis
        assert ann.raw_output.text.startswith("<Analysis>")
        if not ann.spans:
            silent.add(ann.item)
        for p in spans_of(ann):
            touched = [x for x in g if overlaps(token_spans(text, [p])[0], token_spans(text, [x])[0])]
            assert len(touched) <= 1
            if touched:
                assert token_iou(text, p, touched[0]) >= 0.5
            else:
                false_positives += 1
        total += len(g)
        hit += sum(1 for x in g if any(overlaps(p, x) for p in spans_of(ann)))
    assert silent == {clean[0], clean[1], single}
    assert hit / total >= 0.8 and false_positives >= 15


def test_sloppy(bundle: Bundle, items: dict[str, ItemRecord], gold: dict[str, Annotations]) -> None:
    anns = label_set(bundle, "sloppy").annotations
    for ann in anns:
        text, g = items[ann.item].response, spans_of(gold[ann.item])
        assert g or not ann.spans
        for p in spans_of(ann):
            touched = [x for x in g if overlaps(token_spans(text, [p])[0], token_spans(text, [x])[0])]
            assert len(touched) == 1
            assert 0.2 <= token_iou(text, p, touched[0]) < 0.5
        in_tokens = f1_iou(token_spans(text, spans_of(ann)), token_spans(text, g))
        assert in_tokens == (1.0 if not g and not ann.spans else 0.0)
    broken = [a for a in anns if not a.raw_output.follows_format]
    assert len(broken) == 2
    with pytest.raises(ValueError):
        parse_tagged(broken[0].raw_output.text)
    text, _ = parse_tagged(broken[1].raw_output.text)
    assert text != items[broken[1].item].response
    unparsed = [s for a in anns for s in a.sentence_scores if not s.parsed]
    assert len(unparsed) == 3 and all(s.score == 50 for s in unparsed)


BANDS = {
    "cautious": ((3, 25), (62, 98), (45, 75), (50, 85)),
    "eager": ((2, 30), (60, 95), (40, 70), (40, 75)),
    "sloppy": ((15, 65), (35, 95), (30, 80), (30, 85)),
}


@pytest.mark.parametrize("name", BANDS)
def test_sentence_scores(
    bundle: Bundle, items: dict[str, ItemRecord], gold: dict[str, Annotations], name: str
) -> None:
    flagged_r, correct_r, unknown_r, missed_r = BANDS[name]
    labels, scores = [], []
    for ann in label_set(bundle, name).annotations:
        item = items[ann.item]
        assert [s.index for s in ann.sentence_scores] == list(range(len(item.sentences or [])))
        for sentence, score, label in zip(
            item.sentences or [], ann.sentence_scores, gold[ann.item].sentence_labels, strict=True
        ):
            if not score.parsed:
                continue
            if any(overlaps(p, (sentence.start, sentence.end)) for p in spans_of(ann)):
                band = flagged_r
            else:
                band = {"correct": correct_r, "unknown": unknown_r, "incorrect": missed_r}[label.label]
            assert band[0] <= score.score <= band[1]
            if label.label != "unknown":
                labels.append(int(label.label == "incorrect"))
                scores.append(100 - score.score)
    value = auroc(labels, scores)
    assert value > 0.85 if name != "sloppy" else 0.7 < value < 0.88


def test_token_probabilities(
    bundle: Bundle, items: dict[str, ItemRecord], gold: dict[str, Annotations]
) -> None:
    by_name: dict[str, tuple[list[float], list[int]]] = {}
    for name in ("cautious", "eager", "sloppy"):
        probs, labels = [], []
        for ann in label_set(bundle, name).annotations:
            text = items[ann.item].response
            tokens = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
            assert [(t.token_index, t.start, t.end) for t in ann.token_probabilities] == [
                (k, s, e) for k, (s, e) in enumerate(tokens)
            ]
            for t in ann.token_probabilities:
                inside = any(overlaps((t.start, t.end), p) for p in spans_of(ann))
                if name == "eager":
                    assert (0.90 <= t.probability <= 0.99) if inside else (0.01 <= t.probability <= 0.06)
                elif name == "sloppy":
                    assert (0.55 <= t.probability <= 0.85) if inside else (0.05 <= t.probability <= 0.35)
                else:
                    assert 0.001 <= t.probability <= 0.999
                probs.append(t.probability)
                labels.append(int(any(overlaps((t.start, t.end), g) for g in spans_of(gold[ann.item]))))
        by_name[name] = (probs, labels)
    assert ece(*by_name["cautious"]) < 0.03
    assert ece(*by_name["sloppy"]) > 0.15
    top = [label for p, label in zip(*by_name["eager"], strict=True) if p >= 0.9]
    assert sum(top) / len(top) < 0.75


def test_detector_claims_follow_spans(bundle: Bundle, items: dict[str, ItemRecord]) -> None:
    for name in ("cautious", "eager"):
        for ann in label_set(bundle, name).annotations:
            item = items[ann.item]
            assert len(ann.claim_labels) == len(item.claims)
            if not ann.spans:
                assert all(x.label == "non-hallucination" for x in ann.claim_labels)
                assert all(t.verdict == "yes" for t in ann.triplets)


# ---------------------------------------------------------------------------------- people


def test_human_annotators(bundle: Bundle, items: dict[str, ItemRecord], gold: dict[str, Annotations]) -> None:
    alice, bob = label_set(bundle, "alice"), label_set(bundle, "bob")
    assert alice.kind == bob.kind == "human" and (alice.annotator, bob.annotator) == ("alice", "bob")
    assert [a.item for a in alice.annotations] == [a.item for a in bob.annotations]
    assert len(alice.annotations) == 20
    widened = missed = added = retyped = 0
    for a, b in zip(alice.annotations, bob.annotations, strict=True):
        g = gold[a.item].spans
        ga = {(s.start, s.end) for s in g}
        widened += sum(1 for s in a.spans if (s.start, s.end) not in ga)
        missed += len(g) - sum(1 for s in a.spans if any(overlaps((s.start, s.end), x) for x in ga))
        added += sum(1 for s in b.spans if (s.start, s.end) not in ga)
        retyped += sum(
            1 for s in b.spans for x in g if (s.start, s.end) == (x.start, x.end) and s.type != x.type
        )
        for ann in (a, b):
            item = items[ann.item]
            for sentence, label in zip(item.sentences or [], ann.sentence_labels, strict=True):
                hits = [s for s in ann.spans if overlaps((s.start, s.end), (sentence.start, sentence.end))]
                assert (label.label == "incorrect") == bool(hits)
                if hits:
                    assert label.error_type == hits[0].type
    assert (widened, missed, added, retyped) == (3, 1, 2, 2)
    gold_unknown = sum(x.label == "unknown" for a in alice.annotations for x in gold[a.item].sentence_labels)
    assert gold_unknown > 0
    assert not any(x.label == "unknown" for a in alice.annotations for x in a.sentence_labels)


def test_rating_task(bundle: Bundle, items: dict[str, ItemRecord], gold: dict[str, Annotations]) -> None:
    (task,) = bundle.rating_tasks
    assert (task.name, task.detector, task.granularity, task.scale_min, task.scale_max) == (
        "MHALO segment ratings",
        "eager",
        "segment",
        1,
        4,
    )
    assert sorted(task.rubric) == ["1", "2", "3", "4"]
    assert {r.rater for r in task.ratings} == {"rater-1", "rater-2", "rater-3"}
    assert len({r.item for r in task.ratings}) == 30
    eager = {a.item: spans_of(a) for a in label_set(bundle, "eager").annotations}
    nothing = [r for r in task.ratings if r.nothing_flagged_correct is not None]
    assert {r.item for r in nothing} == {k for k, v in eager.items() if not v}
    for r in task.ratings:
        g = spans_of(gold[r.item])
        if r.nothing_flagged_correct is not None:
            assert r.score is None and r.segment_start == -1 and r.nothing_flagged_correct == (not g)
            continue
        assert (r.segment_start, r.segment_end) in eager[r.item]
        assert r.score is not None and 1 <= r.score <= 4
        span = (r.segment_start, r.segment_end)
        if span in g:
            assert r.score >= 3
        elif not any(overlaps(span, x) for x in g):
            assert r.score <= 2
    per_rater = Counter((r.item, r.segment_start, r.segment_end) for r in task.ratings)
    assert set(per_rater.values()) == {3}


def test_imports_into_the_store(bundle: Bundle, sqlite_url: str) -> None:
    from db.engine import make_engine
    from db.importer import import_bundle

    engine = make_engine(sqlite_url)
    try:
        result = import_bundle(engine, dataclasses.replace(bundle), source="demo", actor=OPERATOR)
    finally:
        engine.dispose()
    assert result.items_created == 60 and not result.skipped
