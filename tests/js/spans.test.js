import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { applyAction, nextSelected, plainSpans, sameSpan } from "../../components/span_selector/spans.js";

const span = (start, end, type = "Object") => ({ start, end, type });

describe("plainSpans", () => {
  test("keeps offsets and type; a missing type is null", () => {
    assert.deepEqual(plainSpans([{ start: 1, end: 2, type: "OCR", extra: 1 }, { start: 3, end: 4 }]), [
      span(1, 2, "OCR"),
      span(3, 4, null),
    ]);
  });

  test("anything but a list is no spans", () => {
    assert.deepEqual(plainSpans(undefined), []);
    assert.deepEqual(plainSpans({ start: 1 }), []);
  });
});

describe("sameSpan", () => {
  test("compares offsets and type", () => {
    assert.ok(sameSpan(span(1, 2), span(1, 2)));
    assert.ok(!sameSpan(span(1, 2), span(1, 3)));
    assert.ok(!sameSpan(span(1, 2, "OCR"), span(1, 2, "Object")));
    assert.ok(!sameSpan(null, span(1, 2)));
  });
});

describe("applyAction", () => {
  const spans = [span(0, 3), span(4, 6, "OCR")];

  test("select selects the span in the list, or nothing when it is gone or not named", () => {
    assert.deepEqual(applyAction(spans, { kind: "select", target: span(4, 6, "OCR") }), { selected: spans[1] });
    assert.deepEqual(applyAction(spans, { kind: "select", target: span(4, 6) }), { selected: null });
    assert.deepEqual(applyAction(spans, { kind: "select", target: null }), { selected: null });
  });

  test("add appends the span and selects it", () => {
    const added = span(7, 9);
    assert.deepEqual(applyAction(spans, { kind: "add", span: added }), {
      selected: added,
      spans: [...spans, added],
      event: { action: "add", span: added },
    });
  });

  test("adding a span already there only selects it", () => {
    const result = applyAction(spans, { kind: "add", span: span(0, 3) });
    assert.deepEqual(result, { selected: spans[0] });
    assert.equal(result.selected, spans[0]);
  });

  test("retype replaces the span in place and reports the previous one", () => {
    assert.deepEqual(applyAction(spans, { kind: "retype", target: span(0, 3), type: "OCR" }), {
      selected: span(0, 3, "OCR"),
      spans: [span(0, 3, "OCR"), span(4, 6, "OCR")],
      event: { action: "retype", span: span(0, 3, "OCR"), previous: span(0, 3) },
    });
  });

  test("retype to the same type, or onto a span already there, does nothing", () => {
    assert.equal(applyAction(spans, { kind: "retype", target: span(0, 3), type: "Object" }), null);
    const twins = [span(0, 3), span(0, 3, "OCR")];
    assert.equal(applyAction(twins, { kind: "retype", target: twins[0], type: "OCR" }), null);
  });

  test("delete removes the span and clears the selection", () => {
    assert.deepEqual(applyAction(spans, { kind: "delete", target: span(4, 6, "OCR") }), {
      selected: null,
      spans: [span(0, 3)],
      event: { action: "delete", span: span(4, 6, "OCR") },
    });
  });

  test("an action on a span that is gone, or an unknown action, does nothing", () => {
    assert.equal(applyAction(spans, { kind: "delete", target: span(9, 10) }), null);
    assert.equal(applyAction(spans, { kind: "retype", target: span(9, 10), type: "OCR" }), null);
    assert.equal(applyAction(spans, { kind: "split", target: span(0, 3) }), null);
  });

  test("never changes the list it is given", () => {
    const before = structuredClone(spans);
    applyAction(spans, { kind: "add", span: span(7, 9) });
    applyAction(spans, { kind: "retype", target: span(0, 3), type: "OCR" });
    applyAction(spans, { kind: "delete", target: span(0, 3) });
    assert.deepEqual(spans, before);
  });
});

describe("nextSelected", () => {
  const nested = [span(0, 10), span(2, 4), span(2, 6)];

  test("a click selects the shortest span under it first", () => {
    assert.deepEqual(nextSelected(nested, [0, 1, 2], null), span(2, 4));
  });

  test("clicking again steps through the overlapping spans and wraps around", () => {
    assert.deepEqual(nextSelected(nested, [0, 1, 2], span(2, 4)), span(2, 6));
    assert.deepEqual(nextSelected(nested, [0, 1, 2], span(2, 6)), span(0, 10));
    assert.deepEqual(nextSelected(nested, [0, 1, 2], span(0, 10)), span(2, 4));
  });

  test("equally long spans: the earlier first", () => {
    const spans = [span(5, 7), span(4, 6)];
    assert.deepEqual(nextSelected(spans, [0, 1], null), span(4, 6));
  });
});
