"""One item as gold and several detectors see it: the tracks the comparison page and its exports draw.

A *track* is the response text with one label set's spans. The gold track comes first; each detector
track colours its predictions by their fate under the matching F1_IoU counts (matched / false
positive, see :mod:`metrics.matching`) and, optionally, draws the gold spans that detector
missed. On the gold track a span is "matched" when at least one shown detector found it and "missed"
when none did. Every span carries an explanation (its type, the detector, the gold span it matched and
the IoU) that the page shows on hover and on click, and the exports keep.

A dataset without a gold label set has nothing to score against: its comparison has no gold track,
and each detector track holds its spans with no fate, no scores and no missed gold (an F1 of 0 and a
"false positive" for every span would only restate that no gold is there).

IoU is measured in whitespace tokens, as MHALO scores spans; spans are drawn at their character
offsets. A span that covers no token (only whitespace) is dropped by the measures and marked "not
scored" here. Nothing in this module touches Streamlit or the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from metrics import f1_m
from metrics.matching import Span, SpanMatching, match_spans, tokens_of_char_span

CharSpan = tuple[int, int, str | None]
QUOTE_CHARS = 60


@dataclass(frozen=True)
class TrackSpan:
    """One span of a track, with its fate and the explanation shown on hover or click."""

    number: int  # 1-based, as people read it: "gold #2", "pred #1"
    start: int
    end: int
    type: str | None
    tokens: Span | None  # None: covers no token, so the measures ignore it
    fate: str | None  # "matched", "false-positive", "missed" or None (not scored / nothing to compare)
    partner: int | None  # 0-based index of the matched span on the other side, else the closest one
    iou: float  # IoU with ``partner`` (0.0 when there is none)
    explanation: str


@dataclass(frozen=True)
class Track:
    name: str
    kind: Literal["gold", "detector"]
    spans: tuple[TrackSpan, ...]
    missed: tuple[TrackSpan, ...] = ()  # detector tracks: the gold spans this detector missed
    f1_iou: float | None = None
    f1_m: float | None = None
    follows_format: bool | None = None
    label_set_id: int | None = None
    given: bool = True  # detector tracks: whether the run was given this item (else it has no scores)
    graded: bool = True  # detector tracks: whether there was gold to score it against

    @property
    def n_matched(self) -> int:
        return sum(span.fate == "matched" for span in self.spans)

    @property
    def n_false_positives(self) -> int:
        return sum(span.fate == "false-positive" for span in self.spans)

    def summary(self) -> str:
        """One line: scores, format flag and counts (plain text, no Markdown)."""
        if self.kind == "gold":
            missed = sum(span.fate == "missed" for span in self.spans)
            found = f" · {missed} found by no detector shown" if missed else ""
            return f"{len(self.spans)} gold span(s){found}"
        if not self.given:
            return "not run on this item: left out of its scores" if self.graded else "not run on this item"
        if not self.graded:
            flag = "format ✓" if self.follows_format else "format ✗"
            return f"{len(self.spans)} span(s) · {flag}"
        parts = [f"F1_IoU {self.f1_iou:.2f}", f"F1_M {self.f1_m:.2f}"]
        parts.append("format ✓" if self.follows_format else "format ✗ (scored 0 in tables)")
        parts.append(
            f"{len(self.spans)} span(s): {self.n_matched} matched, {self.n_false_positives} false positive(s),"
            f" {len(self.missed)} gold missed"
        )
        return " · ".join(parts)


@dataclass(frozen=True)
class DetectorOutput:
    """What one detector said about the item: its character spans and whether it followed the format."""

    name: str
    spans: Sequence[CharSpan]
    follows_format: bool = True
    label_set_id: int | None = None
    given: bool = True  # whether the run was given the item (:meth:`DatasetSpans.ran_on`)


@dataclass(frozen=True)
class ItemComparison:
    dataset: str
    item: str
    prompt: str
    response: str
    threshold: float
    tracks: tuple[Track, ...] = field(default_factory=tuple)  # gold first, when there is gold
    graded: bool = True  # whether there is a gold label set (and so a gold track) to score against

    @property
    def gold(self) -> Track | None:
        return self.tracks[0] if self.graded else None

    @property
    def detectors(self) -> tuple[Track, ...]:
        return self.tracks[1:] if self.graded else self.tracks

    def track(self, name: str) -> Track:
        return next(t for t in self.detectors if t.name == name)


# ------------------------------------------------------------------------------------------- building


def quote(text: str, start: int, end: int) -> str:
    """The span's text on one line, shortened to :data:`QUOTE_CHARS` characters."""
    words = " ".join(text[start:end].split())
    return words if len(words) <= QUOTE_CHARS else words[: QUOTE_CHARS - 1] + "…"


def _type(value: str | None) -> str:
    return value or "untyped"


def _scored(text: str, spans: Sequence[CharSpan]) -> tuple[list[Span | None], list[int]]:
    """Token span of each char span, and the indices of those that take part in the measures."""
    tokens = [tokens_of_char_span(text, s, e) for s, e, _ in spans]
    return tokens, [k for k, t in enumerate(tokens) if t is not None]


def _pred_spans(
    name: str,
    text: str,
    preds: Sequence[CharSpan],
    pred_tokens: list[Span | None],
    gold: Sequence[CharSpan],
    matching: SpanMatching,
    pred_index: list[int],
    gold_index: list[int],
) -> tuple[TrackSpan, ...]:
    out = []
    position = {k: n for n, k in enumerate(pred_index)}  # char-span index -> row of the matching
    for k, (start, end, type_) in enumerate(preds):
        head = f"{name} · pred #{k + 1} «{quote(text, start, end)}» · type: {_type(type_)}"
        if k not in position:
            out.append(
                TrackSpan(
                    k + 1, start, end, type_, None, None, None, 0.0, f"{head}\nnot scored: covers no token"
                )
            )
            continue
        row = position[k]
        pair = matching.partner_of_pred(row)
        if pair is not None:
            g = gold_index[pair.gold]
            gs, ge, gt = gold[g]
            why = f"matched gold #{g + 1} «{quote(text, gs, ge)}» ({_type(gt)})\nIoU {pair.iou:.2f} ≥ {matching.threshold:.2f}"
            out.append(
                TrackSpan(k + 1, start, end, type_, pred_tokens[k], "matched", g, pair.iou, f"{head}\n{why}")
            )
            continue
        best, iou = matching.best_for_pred[row]
        if best is None:
            why = "false positive: overlaps no gold span"
            partner = None
        else:
            partner = gold_index[best]
            gs, ge, gt = gold[partner]
            taken = matching.partner_of_gold(best)
            if iou < matching.threshold or taken is None:
                reason = f"IoU {iou:.2f} < {matching.threshold:.2f}"
            else:  # close enough, but a one-to-one matching gave that gold span to another prediction
                reason = f"IoU {iou:.2f}, but gold #{partner + 1} went to pred #{pred_index[taken.pred] + 1}"
            why = (
                f"false positive: closest gold #{partner + 1} «{quote(text, gs, ge)}» ({_type(gt)}), {reason}"
            )
        out.append(
            TrackSpan(
                k + 1, start, end, type_, pred_tokens[k], "false-positive", partner, iou, f"{head}\n{why}"
            )
        )
    return tuple(out)


def _plain_spans(name: str, text: str, preds: Sequence[CharSpan]) -> tuple[TrackSpan, ...]:
    """A detector's spans where there is no gold: what each says, with no fate to explain."""
    return tuple(
        TrackSpan(
            k + 1,
            start,
            end,
            type_,
            tokens_of_char_span(text, start, end),
            None,
            None,
            0.0,
            f"{name} · pred #{k + 1} «{quote(text, start, end)}» · type: {_type(type_)}",
        )
        for k, (start, end, type_) in enumerate(preds)
    )


def _missed_spans(
    name: str,
    text: str,
    gold: Sequence[CharSpan],
    gold_tokens: list[Span | None],
    matching: SpanMatching,
    pred_index: list[int],
    gold_index: list[int],
) -> tuple[TrackSpan, ...]:
    out = []
    for row in matching.missed:
        g = gold_index[row]
        start, end, type_ = gold[g]
        best, iou = matching.best_for_gold[row]
        if best is None:
            why = "no prediction overlaps it"
            partner = None
        else:
            partner = pred_index[best]
            why = f"closest pred #{partner + 1}, IoU {iou:.2f}"
        explanation = (
            f"gold #{g + 1} «{quote(text, start, end)}» · type: {_type(type_)}\nmissed by {name}: {why}"
        )
        out.append(TrackSpan(g + 1, start, end, type_, gold_tokens[g], "missed", partner, iou, explanation))
    return tuple(out)


def compare_item(
    *,
    dataset: str,
    item: str,
    prompt: str,
    response: str,
    gold: Sequence[CharSpan] | None,
    detectors: Sequence[DetectorOutput],
    threshold: float = 0.5,
) -> ItemComparison:
    """The gold track and one track per detector (in the given order) for one item. A detector whose run
    was not given the item has an empty track without scores, and finds no gold span. ``gold`` None:
    the dataset has no gold label set, so there is no gold track and nothing is scored."""
    if gold is None:
        tracks = tuple(
            Track(
                detector.name,
                "detector",
                _plain_spans(detector.name, response, detector.spans) if detector.given else (),
                follows_format=detector.follows_format,
                label_set_id=detector.label_set_id,
                given=detector.given,
                graded=False,
            )
            for detector in detectors
        )
        return ItemComparison(dataset, item, prompt, response, float(threshold), tracks, graded=False)
    gold = [(s, e, t) for s, e, t in gold]
    gold_tokens, gold_index = _scored(response, gold)
    scored_gold = [t for t in gold_tokens if t is not None]
    detector_tracks = []
    found_by: dict[int, list[str]] = {}
    for detector in detectors:
        if not detector.given:
            detector_tracks.append(
                Track(detector.name, "detector", (), label_set_id=detector.label_set_id, given=False)
            )
            continue
        preds = [(s, e, t) for s, e, t in detector.spans]
        pred_tokens, pred_index = _scored(response, preds)
        scored_preds = [t for t in pred_tokens if t is not None]
        matching = match_spans(scored_preds, scored_gold, threshold)
        for pair in matching.pairs:
            found_by.setdefault(gold_index[pair.gold], []).append(f"{detector.name} (IoU {pair.iou:.2f})")
        detector_tracks.append(
            Track(
                name=detector.name,
                kind="detector",
                spans=_pred_spans(
                    detector.name, response, preds, pred_tokens, gold, matching, pred_index, gold_index
                ),
                missed=_missed_spans(
                    detector.name, response, gold, gold_tokens, matching, pred_index, gold_index
                ),
                f1_iou=matching.f1,
                f1_m=f1_m(scored_preds, scored_gold),
                follows_format=detector.follows_format,
                label_set_id=detector.label_set_id,
            )
        )
    gold_spans = []
    for g, (start, end, type_) in enumerate(gold):
        head = f"gold #{g + 1} «{quote(response, start, end)}» · type: {_type(type_)}"
        if gold_tokens[g] is None:
            fate, why = None, "not scored: covers no token"
        elif not any(d.given for d in detectors):
            fate, why = (
                None,
                "no detector shown" if not detectors else "no detector shown was run on this item",
            )
        elif g in found_by:
            fate, why = "matched", "found by " + ", ".join(found_by[g])
        else:
            fate, why = "missed", "found by no detector shown"
        gold_spans.append(
            TrackSpan(g + 1, start, end, type_, gold_tokens[g], fate, None, 0.0, f"{head}\n{why}")
        )
    gold_track = Track(name="Gold", kind="gold", spans=tuple(gold_spans))
    return ItemComparison(dataset, item, prompt, response, float(threshold), (gold_track, *detector_tracks))


# ------------------------------------------------------------------------- sentence and claim grids

SENTENCE_MARKS = {"correct": "✓ correct", "incorrect": "✗ incorrect", "unknown": "? unknown"}
CLAIM_MARKS = {"hallucination": "✗ hallucination", "non-hallucination": "✓ non-hallucination"}


def sentence_grid(
    sentences: Sequence[tuple[int, str]],
    gold_labels: dict[int, str] | None,
    scores: dict[str, dict[int, tuple[float, bool]]],
) -> pd.DataFrame:
    """Sentence × detector: the gold label and each detector's 0–100 score (100 = surely correct).

    ``sentences`` are (index, text); ``gold_labels`` index → label, None when the dataset has no gold
    label set (no gold column: a column of dashes would read as gold left blank); ``scores`` detector →
    index → (score, parsed). An unparsed output (AlignBench scores it 50) shows as missing, not as 50.
    """
    rows = []
    for index, text in sentences:
        row: dict[str, object] = {"#": index + 1, "sentence": text}
        if gold_labels is not None:
            row["gold"] = SENTENCE_MARKS.get(gold_labels.get(index, ""), "—")
        for detector, by_sentence in scores.items():
            score, parsed = by_sentence.get(index, (None, True))
            row[detector] = score if parsed else None
        rows.append(row)
    gold = ["gold"] if gold_labels is not None else []
    return pd.DataFrame(rows, columns=["#", "sentence", *gold, *scores])


AGREES, DISAGREES = "background-color: #22883333", "background-color: #EE667740"


def sentence_cell_styles(grid: pd.DataFrame, detectors: Sequence[str]) -> pd.DataFrame:
    """CSS for each cell of :func:`sentence_grid`: a detector's score is tinted green when it sides with
    the gold label (below 50 for an incorrect sentence, 50 or more for a correct one) and red when it
    does not; unknown or unlabelled sentences, unparsed scores and a grid without gold stay plain."""
    styles = pd.DataFrame("", index=grid.index, columns=grid.columns)
    if "gold" not in grid.columns:
        return styles
    position = {name: k for k, name in enumerate(styles.columns)}
    for detector in detectors:
        for row, (score, gold) in enumerate(zip(grid[detector], grid["gold"], strict=True)):
            if (
                score is None
                or pd.isna(score)
                or gold not in (SENTENCE_MARKS["correct"], SENTENCE_MARKS["incorrect"])
            ):
                continue
            says_wrong = score < 50
            is_wrong = gold == SENTENCE_MARKS["incorrect"]
            styles.iloc[row, position[detector]] = AGREES if says_wrong == is_wrong else DISAGREES
    return styles


def claim_grid(
    claims: Sequence[tuple[int, str]],
    gold_labels: dict[int, str] | None,
    verdicts: dict[str, dict[int, tuple[str, str | None]]],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Claim × detector verdicts, and the detectors' reasons as a long table.

    ``claims`` are (index, text); ``gold_labels`` index → label, None when the dataset has no gold
    label set (no gold column); ``verdicts`` detector → claim index → (label, reason).
    """
    grid, reasons = [], []
    for index, text in claims:
        row: dict[str, object] = {"#": index + 1, "claim": text}
        if gold_labels is not None:
            row["gold"] = CLAIM_MARKS.get(gold_labels.get(index, ""), "—")
        for detector, by_claim in verdicts.items():
            label, reason = by_claim.get(index, ("", None))
            row[detector] = CLAIM_MARKS.get(label, label or "—")
            if reason:
                reasons.append({"#": index + 1, "detector": detector, "verdict": label, "reason": reason})
        grid.append(row)
    gold = ["gold"] if gold_labels is not None else []
    return (
        pd.DataFrame(grid, columns=["#", "claim", *gold, *verdicts]),
        pd.DataFrame(reasons, columns=["#", "detector", "verdict", "reason"]),
    )


def matching_table(comparison: ItemComparison, track: Track) -> pd.DataFrame:
    """A track's spans as rows: which gold span each matched (or came closest to) and the IoU."""
    rows = []
    text = comparison.response
    gold = comparison.gold.spans if comparison.gold else ()
    for span in (*track.spans, *track.missed):
        is_gold = track.kind == "gold" or span in track.missed
        if is_gold:
            other = f"pred #{span.partner + 1}" if span.partner is not None else ""
        else:
            other = (
                f"gold #{span.partner + 1} «{quote(text, gold[span.partner].start, gold[span.partner].end)}»"
                if span.partner is not None
                else ""
            )
        rows.append(
            {
                "span": f"{'gold' if is_gold else 'pred'} #{span.number}",
                "text": quote(text, span.start, span.end),
                "type": _type(span.type),
                "fate": (span.fate or "not scored").replace("-", " "),
                "matched / closest": other,
                "IoU": round(span.iou, 3) if span.partner is not None else None,
                "tokens": f"{span.tokens[0]}–{span.tokens[1]}" if span.tokens else "—",
            }
        )
    return pd.DataFrame(rows, columns=["span", "text", "type", "fate", "matched / closest", "IoU", "tokens"])
