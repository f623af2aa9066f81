import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  LANE_GAP_PX,
  abutsAt,
  assignLanes,
  coveringSpans,
  laneCount,
  segmentBackground,
  segmentBounds,
} from "../../components/span_selector/layout.js";

const span = (start, end, type = "Object") => ({ start, end, type });

function overlaps(a, b) {
  return a.start < b.end && b.start < a.end;
}

describe("assignLanes", () => {
  test("no spans, no lanes", () => {
    assert.deepEqual(assignLanes([]), []);
    assert.equal(laneCount([]), 0);
  });

  test("separate spans share the first lane", () => {
    assert.deepEqual(assignLanes([span(0, 3), span(5, 8), span(10, 12)]), [0, 0, 0]);
  });

  test("adjacent spans share a lane", () => {
    assert.deepEqual(assignLanes([span(0, 3), span(3, 5)]), [0, 0]);
  });

  test("overlapping spans get different lanes", () => {
    const lanes = assignLanes([span(0, 5), span(3, 8)]);
    assert.deepEqual(lanes, [0, 1]);
    assert.equal(laneCount(lanes), 2);
  });

  test("a nested span sits above the one containing it, whatever the input order", () => {
    assert.deepEqual(assignLanes([span(0, 10), span(2, 4)]), [0, 1]);
    assert.deepEqual(assignLanes([span(2, 4), span(0, 10)]), [1, 0]);
  });

  test("the same range with two types takes two lanes", () => {
    assert.deepEqual(assignLanes([span(2, 6, "Object"), span(2, 6, "OCR")]), [0, 1]);
  });

  test("a freed lane is reused", () => {
    assert.deepEqual(assignLanes([span(0, 5), span(3, 8), span(6, 9)]), [0, 1, 0]);
  });

  test("a chain of overlaps stacks up", () => {
    const lanes = assignLanes([span(0, 4), span(1, 5), span(2, 6)]);
    assert.deepEqual(lanes, [0, 1, 2]);
    assert.equal(laneCount(lanes), 3);
  });

  test("overlapping spans never share a lane, and each takes the lowest free one", () => {
    let seed = 7;
    const random = (n) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 200; round += 1) {
      const spans = Array.from({ length: 1 + random(8) }, () => {
        const start = random(20);
        return span(start, start + 1 + random(8));
      });
      const lanes = assignLanes(spans);
      spans.forEach((a, i) =>
        spans.forEach((b, j) => {
          if (i !== j && overlaps(a, b)) assert.notEqual(lanes[i], lanes[j], JSON.stringify(spans));
        }),
      );
      assert.ok(laneCount(lanes) <= spans.length);
    }
  });
});

describe("segments", () => {
  test("bounds are both text ends and every span edge, ascending, once each", () => {
    assert.deepEqual(segmentBounds(10, [4, 0, 4], [6, 2, 8]), [0, 2, 4, 6, 8, 10]);
    assert.deepEqual(segmentBounds(0, [], []), [0]);
  });

  test("covering spans are listed lowest lane first", () => {
    const starts = [0, 2];
    const ends = [10, 4];
    const lanes = [1, 0];
    assert.deepEqual(coveringSpans(starts, ends, lanes, 2, 4), [1, 0]);
    assert.deepEqual(coveringSpans(starts, ends, lanes, 4, 10), [0]);
    assert.deepEqual(coveringSpans(starts, ends, lanes, 10, 12), []);
  });

  test("abutting spans are told apart only where one ends and another starts", () => {
    assert.equal(abutsAt([0, 3], [3, 5], 3), true);
    assert.equal(abutsAt([0, 3], [3, 5], 0), false);
    assert.equal(abutsAt([0, 4], [3, 5], 3), false);
    assert.equal(abutsAt([0, 0], [0, 5], 0), false, "never at the start of the text");
  });
});

describe("segmentBackground", () => {
  test("a segment inside one span: an underline and a tint", () => {
    const background = segmentBackground([{ colour: "#112233", lane: 0, selected: false, opens: false, closes: false }]);
    assert.equal(
      background,
      "linear-gradient(#112233, #112233) left 0 bottom 0px / 100% 2px no-repeat, linear-gradient(#1122332E, #1122332E)",
    );
  });

  test("brackets where a span opens and closes; a selected span is thicker and darker", () => {
    const background = segmentBackground([{ colour: "#abcdef", lane: 1, selected: true, opens: true, closes: true }]);
    const layers = background.split(", linear-gradient").length;
    assert.equal(layers, 4);
    assert.match(background, new RegExp(`left 0 bottom ${LANE_GAP_PX}px / 100% 4px`));
    assert.match(background, /left 0 bottom 5px \/ 2px calc\(0\.55em \+ 4px\)/);
    assert.match(background, /right 0 bottom 5px \/ 2px calc\(0\.55em \+ 4px\)/);
    assert.ok(background.endsWith("linear-gradient(#abcdef59, #abcdef59)"));
  });

  test("tints come after every line, so they are drawn below", () => {
    const background = segmentBackground([
      { colour: "#000001", lane: 0, selected: false, opens: true, closes: false },
      { colour: "#000002", lane: 1, selected: false, opens: false, closes: true },
    ]);
    const parts = background.split(/, (?=linear-gradient)/);
    assert.deepEqual(
      parts.map((part) => part.includes("no-repeat")),
      [true, true, true, true, false, false],
    );
    assert.equal(parts[4], "linear-gradient(#0000012E, #0000012E)");
  });
});
