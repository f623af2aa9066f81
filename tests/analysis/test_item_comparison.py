"""Tracks of one item (fates, explanations, escaping), the grids, and the HTML and PNG exports."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime

import pandas as pd
import pytest
from PIL import Image

from analysis.item_comparison import (
    AGREES,
    DISAGREES,
    DetectorOutput,
    claim_grid,
    compare_item,
    matching_table,
    sentence_cell_styles,
    sentence_grid,
)
from metrics import f1_iou, f1_m, token_spans
from render.comparison_export import comparison_html, comparison_png, png_bytes, thumbnail
from render.comparison_tracks import GOLD_COLOUR, GOLD_LABEL, legend_html, track_html
from render.span_html import FATES

# MHALO appendix E, Table 18.
TEXT = "A toothbrush is being washed in the sink."
GOLD = [(0, 12, "Object")]
DETECTORS = [
    DetectorOutput("HALODET-4B", [(0, 12, None)]),
    DetectorOutput("GPT-4o", [(2, 12, None), (22, 28, None)]),
    DetectorOutput("CLAUDE-3.5-SONNET", [(0, 28, None)]),
]


def table_18(detectors=DETECTORS, **kwargs):
    return compare_item(
        dataset="MHALO",
        item="case-18",
        prompt="What is being washed in the sink?",
        response=TEXT,
        detectors=detectors,
        **{"gold": GOLD, **kwargs},
    )


def test_tracks_follow_the_matching_and_the_metrics_library() -> None:
    comparison = table_18()
    assert [t.name for t in comparison.tracks] == ["Gold", "HALODET-4B", "GPT-4o", "CLAUDE-3.5-SONNET"]
    gold_tokens = token_spans(TEXT, [(s, e) for s, e, _ in GOLD])
    for detector, track in zip(DETECTORS, comparison.detectors, strict=True):
        pred_tokens = token_spans(TEXT, [(s, e) for s, e, _ in detector.spans])
        assert track.f1_iou == pytest.approx(f1_iou(pred_tokens, gold_tokens))
        assert track.f1_m == pytest.approx(f1_m(pred_tokens, gold_tokens))
        m = round(f1_iou(pred_tokens, gold_tokens) * (len(pred_tokens) + len(gold_tokens)) / 2)
        assert track.n_matched == m and track.n_false_positives == len(pred_tokens) - m
    gpt = comparison.track("GPT-4o")
    assert [s.fate for s in gpt.spans] == ["matched", "false-positive"]
    assert gpt.spans[0].iou == 0.5 and gpt.spans[0].partner == 0
    assert gpt.missed == ()
    claude = comparison.track("CLAUDE-3.5-SONNET")
    assert [s.fate for s in claude.spans] == ["false-positive"] and claude.spans[0].iou == pytest.approx(0.4)
    assert [s.fate for s in claude.missed] == ["missed"]


def test_explanations_name_type_detector_gold_span_and_iou() -> None:
    comparison = table_18()
    matched = comparison.track("GPT-4o").spans[0].explanation
    assert "GPT-4o" in matched and "type: untyped" in matched
    assert "gold #1 «A toothbrush» (Object)" in matched and "IoU 0.50 ≥ 0.50" in matched
    fp = comparison.track("GPT-4o").spans[1].explanation
    assert "false positive: overlaps no gold span" in fp
    near = comparison.track("CLAUDE-3.5-SONNET").spans[0].explanation
    assert "closest gold #1" in near and "IoU 0.40 < 0.50" in near
    missed = comparison.track("CLAUDE-3.5-SONNET").missed[0].explanation
    assert "missed by CLAUDE-3.5-SONNET" in missed and "IoU 0.40" in missed
    gold = comparison.gold.spans[0]
    assert gold.fate == "matched" and "found by HALODET-4B (IoU 1.00), GPT-4o (IoU 0.50)" in gold.explanation


def test_gold_spans_no_detector_found_are_missed_on_the_gold_track() -> None:
    comparison = table_18(detectors=DETECTORS[2:])
    assert comparison.gold.spans[0].fate == "missed"
    assert "found by no detector shown" in comparison.gold.spans[0].explanation
    assert "1 found by no detector shown" in comparison.gold.summary()
    alone = table_18(detectors=[])
    assert alone.gold.spans[0].fate is None and alone.detectors == ()


def test_a_contested_gold_span_and_a_span_on_whitespace() -> None:
    comparison = table_18(detectors=[DetectorOutput("twice", [(0, 12, None), (2, 12, None), (12, 13, None)])])
    track = comparison.track("twice")
    assert [s.fate for s in track.spans] == ["matched", "false-positive", None]
    assert "but gold #1 went to pred #1" in track.spans[1].explanation
    assert "not scored: covers no token" in track.spans[2].explanation
    assert track.f1_iou == pytest.approx(f1_iou([(0, 2), (1, 2)], [(0, 2)]))


def test_threshold_changes_the_fates() -> None:
    loose = table_18(threshold=0.4)
    assert [s.fate for s in loose.track("CLAUDE-3.5-SONNET").spans] == ["matched"]
    strict = table_18(threshold=1.0)
    assert [s.fate for s in strict.track("GPT-4o").spans] == ["false-positive", "false-positive"]


def test_summary_flags_format_failures() -> None:
    comparison = table_18(detectors=[DetectorOutput("broken", [], follows_format=False)])
    summary = comparison.track("broken").summary()
    assert "format ✗" in summary and "F1_IoU 0.00" in summary and "1 gold missed" in summary


XSS = 'Look: <script>alert(1)</script> and <img src=x onerror="alert(2)"> **bold** <mark class="x">'


def test_track_html_escapes_model_text_and_names() -> None:
    comparison = compare_item(
        dataset="d",
        item="x",
        prompt="p",
        response=XSS,
        gold=[(6, 31, "OCR")],
        detectors=[DetectorOutput('<b onmouseover="x">det</b>', [(6, 31, None), (36, 62, None)])],
    )
    body = track_html(comparison, comparison.detectors[0])
    assert "<script>" not in body and "<img" not in body and "<b " not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "**bold**" in body
    assert 'data-track="&lt;b onmouseover=&quot;x&quot;&gt;det&lt;/b&gt;"' in body
    # Explanations quote the text with its angle brackets as ‹ ›, so the sanitizer keeps them.
    assert (
        "«‹script›alert(1)‹/script›»" in body
        and 'title="‹b onmouseover=&quot;x&quot;›det‹/b› · pred #1' in body
    )
    assert "«<script>" in comparison.detectors[0].spans[0].explanation  # the model's text, unchanged
    # Only the span tags became focusable, never text that merely looks like a mark tag.
    assert body.count('<mark tabindex="0"') == len(re.findall(r"<mark ", body)) == 2
    assert "&lt;mark class=&quot;x&quot;&gt;" in body


def test_without_a_detector_gold_is_drawn_in_gold_under_a_legend_of_gold() -> None:
    """With no detector to compare with, a gold span has no fate: it was drawn in its type's colour (a
    pink like "False positive") under the legend of fates, which applied to nothing drawn."""
    alone = table_18(detectors=[])
    drawn = track_html(alone, alone.gold)
    assert f"border-bottom:2px solid {GOLD_COLOUR}" in drawn
    assert not any(colour in drawn for _, colour, _ in FATES.values())
    legend = legend_html(alone)
    assert GOLD_LABEL in legend and GOLD_COLOUR in legend
    assert "False positive" not in legend and "Matched" not in legend and "missed" not in legend
    # With detectors the legend is the fates', and gold spans wear their fates.
    compared = table_18()
    legend = legend_html(compared)
    assert "False positive" in legend and "Gold span missed" in legend and GOLD_LABEL not in legend
    assert GOLD_COLOUR not in track_html(compared, compared.gold)
    # The HTML export says the same.
    exported = comparison_html(alone)
    assert GOLD_LABEL in exported and "False positive" not in exported


def test_track_html_draws_missed_gold_spans_on_demand() -> None:
    comparison = table_18()
    claude = comparison.track("CLAUDE-3.5-SONNET")
    with_missed = track_html(comparison, claude)
    assert "hs-missed-gold" in with_missed and "hs-fate-missed" in with_missed
    assert "hs-missed-gold" not in track_html(comparison, claude, show_missed=False)
    assert 'data-kind="detector"' in with_missed


def test_matching_table() -> None:
    comparison = table_18()
    table = matching_table(comparison, comparison.track("CLAUDE-3.5-SONNET"))
    assert list(table["span"]) == ["pred #1", "gold #1"]
    assert list(table["fate"]) == ["false positive", "missed"]
    assert table["IoU"].tolist() == [0.4, 0.4]
    assert table.loc[0, "matched / closest"] == "gold #1 «A toothbrush»"
    assert table.loc[0, "tokens"] == "0–5"


def test_sentence_grid_and_its_colours() -> None:
    grid = sentence_grid(
        [(0, "First."), (1, "Second."), (2, "Third.")],
        {0: "correct", 1: "incorrect"},
        {"a": {0: (90.0, True), 1: (80.0, True), 2: (10.0, True)}, "b": {0: (50.0, False), 1: (5.0, True)}},
    )
    assert list(grid.columns) == ["#", "sentence", "gold", "a", "b"]
    assert list(grid["gold"]) == ["✓ correct", "✗ incorrect", "—"]
    assert pd.isna(grid.loc[0, "b"]) and pd.isna(grid.loc[2, "b"])
    styles = sentence_cell_styles(grid, ["a", "b"])
    assert list(styles["a"]) == [AGREES, DISAGREES, ""]
    assert list(styles["b"]) == ["", AGREES, ""]


def test_claim_grid_with_reasons() -> None:
    grid, reasons = claim_grid(
        [(0, "There is a cat."), (1, "It is red.")],
        {0: "hallucination", 1: "non-hallucination"},
        {"a": {0: ("hallucination", 'Tagged "cat".'), 1: ("non-hallucination", None)}, "b": {}},
    )
    assert list(grid["a"]) == ["✗ hallucination", "✓ non-hallucination"]
    assert list(grid["b"]) == ["—", "—"]
    assert reasons.to_dict("records") == [
        {"#": 1, "detector": "a", "verdict": "hallucination", "reason": 'Tagged "cat".'}
    ]


# -------------------------------------------------------------------------------------------- export

WHEN = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def test_html_export_is_a_standalone_escaped_document() -> None:
    comparison = compare_item(
        dataset="d <x>",
        item="i&1",
        prompt="<b>prompt</b>",
        response=XSS,
        gold=[(6, 31, "OCR")],
        detectors=[DetectorOutput("det", [(6, 31, None)])],
    )
    image = png_bytes(Image.new("RGB", (8, 6), "red"))
    document = comparison_html(comparison, image_png=image, generated=WHEN)
    assert document.startswith("<!DOCTYPE html>") and document.rstrip().endswith("</html>")
    assert "<script>" not in document and "<b>prompt" not in document
    assert "&lt;b&gt;prompt&lt;/b&gt;" in document and "Item i&amp;1" in document
    assert 'src="data:image/png;base64,' in document
    assert "Exported from Spanlight · dataset d &lt;x&gt; · item i&amp;1" in document
    assert "2026-11-20 12:00 UTC" in document
    assert document.count('class="hs-track"') == 2
    assert "http://" not in document and "https://" not in document  # nothing fetched from elsewhere


def test_png_export_draws_every_track_in_fate_colours() -> None:
    data = comparison_png(table_18(), image=Image.new("RGB", (400, 300), "#3366CC"), generated=WHEN)
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG" and image.width == 1600 and image.height > 600
    colours = {colour for _, colour in image.convert("RGB").getcolors(maxcolors=1 << 20)}
    assert (0x22, 0x88, 0x33) in colours  # matched underline
    assert (0xEE, 0x66, 0x77) in colours  # false positive underline
    assert (0x44, 0x77, 0xAA) in colours  # missed gold span
    assert (0x33, 0x66, 0xCC) in colours  # the item's image


def test_png_export_without_a_detector_draws_gold_in_gold() -> None:
    """The slide of a comparison with no detector drew its gold span grey under the fates' legend."""
    image = Image.open(io.BytesIO(comparison_png(table_18(detectors=[]), generated=WHEN)))
    colours = {colour for _, colour in image.convert("RGB").getcolors(maxcolors=1 << 20)}
    assert (0xB8, 0x86, 0x0B) in colours  # gold, in the track and the legend
    assert not colours & {(0x22, 0x88, 0x33), (0xEE, 0x66, 0x77), (0x44, 0x77, 0xAA)}  # no fate's colour


def test_png_export_wraps_long_text_and_keeps_growing() -> None:
    short = Image.open(io.BytesIO(comparison_png(table_18(), generated=WHEN)))
    long_text = (TEXT + " ") * 30 + "\n\n" + "x" * 300
    comparison = compare_item(
        dataset="d", item="i", prompt="p", response=long_text, gold=GOLD, detectors=DETECTORS
    )
    tall = Image.open(io.BytesIO(comparison_png(comparison, generated=WHEN)))
    assert tall.width == short.width and tall.height > short.height * 1.5


def test_thumbnail(tmp_path) -> None:
    path = tmp_path / "big.png"
    Image.new("RGB", (2000, 1000), "green").save(path)
    small = thumbnail(path, size=200)
    assert small is not None and small.size == (200, 100)
    assert thumbnail(tmp_path / "missing.png") is None
    (tmp_path / "broken.png").write_bytes(b"not an image")
    assert thumbnail(tmp_path / "broken.png") is None
    assert thumbnail(None) is None and png_bytes(None) is None


def test_the_exports_draw_no_text_for_a_run_not_given_the_item() -> None:
    """As on the page: the track of a run not given the item says so, without the response under it."""
    from analysis.item_comparison import DetectorOutput, compare_item

    comparison = compare_item(
        dataset="d",
        item="b",
        prompt="",
        response="A red bench.",
        gold=[(2, 5, None)],
        detectors=[DetectorOutput("partial", [], given=False)],
    )
    document = comparison_html(comparison, generated=WHEN)
    section = document.split("<h2>partial</h2>", 1)[1].split("</section>", 1)[0]
    assert "not run on this item" in section and "bench" not in section
    given = compare_item(
        dataset="d",
        item="b",
        prompt="",
        response="A red bench.",
        gold=[(2, 5, None)],
        detectors=[DetectorOutput("partial", [])],
    )
    assert len(comparison_png(comparison, generated=WHEN)) < len(comparison_png(given, generated=WHEN))


# ------------------------------------------------------------------------------------- without gold


def test_without_gold_tracks_hold_the_spans_and_no_scores() -> None:
    """Against an empty gold every run scored F1 0 and every span was a false positive; without a gold
    label set the comparison now has no gold track, and each track only its spans, plainly."""
    broken = DetectorOutput("broken", [], follows_format=False)
    absent = DetectorOutput("absent", [(0, 12, None)], given=False)
    comparison = table_18([*DETECTORS, broken, absent], gold=None)
    assert comparison.gold is None and not comparison.graded
    assert [t.name for t in comparison.tracks] == [*(d.name for d in DETECTORS), "broken", "absent"]
    assert comparison.detectors == comparison.tracks
    gpt = comparison.track("GPT-4o")
    assert [(s.start, s.end) for s in gpt.spans] == [(2, 12), (22, 28)]
    assert all(s.fate is None and s.partner is None for t in comparison.tracks for s in t.spans)
    assert gpt.f1_iou is None and gpt.f1_m is None and gpt.missed == ()
    assert gpt.summary() == "2 span(s) · format ✓"
    assert comparison.track("broken").summary() == "0 span(s) · format ✗"
    assert comparison.track("absent").summary() == "not run on this item"
    assert gpt.spans[1].explanation == "GPT-4o · pred #2 «washed» · type: untyped"
    assert "hs-fate-" not in track_html(comparison, gpt)
    document = comparison_html(comparison, generated=WHEN)
    assert "F1" not in document and "False positive" not in document and "Matched" not in document
    assert "no gold label set: spans not scored" in document
    assert comparison_png(comparison, generated=WHEN).startswith(b"\x89PNG")


def test_without_gold_the_grids_have_no_gold_column_and_no_colours() -> None:
    grid = sentence_grid([(0, "First."), (1, "Second.")], None, {"a": {0: (90.0, True), 1: (10.0, True)}})
    assert list(grid.columns) == ["#", "sentence", "a"] and list(grid["a"]) == [90.0, 10.0]
    assert (sentence_cell_styles(grid, ["a"]) == "").all().all()
    claims, _ = claim_grid([(0, "There is a cat.")], None, {"a": {0: ("hallucination", None)}})
    assert list(claims.columns) == ["#", "claim", "a"] and list(claims["a"]) == ["✗ hallucination"]
