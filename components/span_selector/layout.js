// Where spans are drawn: the lane under the text each span's underline sits in, the segments the
// text is cut into, and each segment's background (underlines, brackets and tints).

export const LANE_GAP_PX = 5;

export function assignLanes(spans) {
  // The lowest lane free of overlapping spans; adjacent spans may share a lane (edges show the cut).
  const order = spans.map((_, i) => i).sort((a, b) => spans[a].start - spans[b].start || spans[b].end - spans[a].end);
  const laneEnds = [];
  const lanes = new Array(spans.length).fill(0);
  for (const i of order) {
    let lane = laneEnds.findIndex((end) => end <= spans[i].start);
    if (lane === -1) lane = laneEnds.length;
    laneEnds[lane] = spans[i].end;
    lanes[i] = lane;
  }
  return lanes;
}

export function laneCount(lanes) {
  return lanes.length ? Math.max(...lanes) + 1 : 0;
}

export function segmentBounds(length, starts, ends) {
  // Both ends of the text and every offset where a span starts or ends, ascending, once each.
  return [...new Set([0, length, ...starts, ...ends])].sort((a, b) => a - b);
}

export function coveringSpans(starts, ends, lanes, left, right) {
  // Indices of the spans that cover the segment [left, right), lowest lane first.
  return starts
    .map((_, i) => i)
    .filter((i) => starts[i] <= left && right <= ends[i])
    .sort((x, y) => lanes[x] - lanes[y]);
}

export function abutsAt(starts, ends, offset) {
  // One span ends exactly where another begins (a small gap keeps them apart).
  return offset > 0 && starts.includes(offset) && ends.includes(offset);
}

export function segmentBackground(bands) {
  // `bands`: per covering span, lowest lane first, `{ colour, lane, selected, opens, closes }`.
  // Per span, bottom to top of its lane: an underline, and a short bracket where it opens or
  // closes. Brackets are short so a span nested inside a longer one does not cut the longer one's
  // band in two; the longer one's underline runs on underneath. Tints go below all lines.
  const layers = [];
  const tints = [];
  for (const { colour: c, lane, selected, opens, closes } of bands) {
    const line = selected ? 4 : 2;
    const bottom = lane * LANE_GAP_PX;
    const bracket = `2px calc(0.55em + ${line}px)`;
    layers.push(`linear-gradient(${c}, ${c}) left 0 bottom ${bottom}px / 100% ${line}px no-repeat`);
    if (opens) layers.push(`linear-gradient(${c}, ${c}) left 0 bottom ${bottom}px / ${bracket} no-repeat`);
    if (closes) layers.push(`linear-gradient(${c}, ${c}) right 0 bottom ${bottom}px / ${bracket} no-repeat`);
    const tint = `${c}${selected ? "59" : "2E"}`;
    tints.push(`linear-gradient(${tint}, ${tint})`);
  }
  return [...layers, ...tints].join(", ");
}
