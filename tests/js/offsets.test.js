import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  codePointStarts,
  codePointsBefore,
  excerpt,
  selectionToSpan,
  snapToWords,
} from "../../components/span_selector/offsets.js";

// Code points:  🙂 0 · ' ' 1 · 红 2 · 色 3 · ' ' 4 · c 5 · a 6 · f 7 · e 8 · U+0301 9 · ' ' 10 · x 11
// UTF-16 units: 🙂 0–1 · ' ' 2 · 红 3 · 色 4 · ' ' 5 · c 6 · a 7 · f 8 · e 9 · U+0301 10 · ' ' 11 · x 12
const TEXT = "🙂 红色 cafe\u0301 x";

describe("codePointStarts", () => {
  test("an emoji takes two UTF-16 units", () => {
    assert.deepEqual(codePointStarts("a🙂b"), [0, 1, 3, 4]);
  });

  test("CJK characters and a combining accent take one unit each", () => {
    assert.deepEqual(codePointStarts("红色"), [0, 1, 2]);
    assert.deepEqual(codePointStarts("e\u0301"), [0, 1, 2]);
  });

  test("has one entry per code point plus the text's UTF-16 length", () => {
    const starts = codePointStarts(TEXT);
    assert.equal(starts.length, 12 + 1);
    assert.equal(starts.at(-1), TEXT.length);
    assert.deepEqual(starts.slice(0, 4), [0, 2, 3, 4]);
  });

  test("empty text", () => {
    assert.deepEqual(codePointStarts(""), [0]);
  });
});

describe("codePointsBefore", () => {
  test("inverts codePointStarts at every code point", () => {
    const text = "x🙂👍🏽 红色 cafe\u0301 🇩🇪!";
    codePointStarts(text).forEach((u16, index) => assert.equal(codePointsBefore(text, u16), index));
  });

  test("counts an emoji as one code point, like Python's len", () => {
    assert.equal(codePointsBefore(TEXT, 2), 1);
    assert.equal(codePointsBefore(TEXT, 5), 4);
  });

  test("counts a combining accent as a code point of its own", () => {
    assert.equal(codePointsBefore(TEXT, 10), 9);
    assert.equal(codePointsBefore(TEXT, 11), 10);
  });
});

describe("selectionToSpan", () => {
  test("converts a CJK word", () => {
    assert.deepEqual(selectionToSpan(TEXT, 3, 5), { start: 2, end: 4 });
  });

  test("keeps a combining accent with its word", () => {
    assert.deepEqual(selectionToSpan(TEXT, 6, 11), { start: 5, end: 10 });
  });

  test("drops whitespace at both ends", () => {
    assert.deepEqual(selectionToSpan(TEXT, 2, 6), { start: 2, end: 4 });
  });

  test("accepts a selection made backwards", () => {
    assert.deepEqual(selectionToSpan(TEXT, 5, 3), { start: 2, end: 4 });
  });

  test("never cuts an emoji in half", () => {
    assert.deepEqual(selectionToSpan(TEXT, 1, 3), { start: 0, end: 1 }, "start inside the emoji");
    assert.deepEqual(selectionToSpan(TEXT, 0, 1), { start: 0, end: 1 }, "end inside the emoji");
    assert.deepEqual(selectionToSpan("a🙂b", 0, 2), { start: 0, end: 2 });
  });

  test("returns null for whitespace only or nothing", () => {
    assert.equal(selectionToSpan(TEXT, 2, 3), null);
    assert.equal(selectionToSpan(TEXT, 4, 4), null);
    assert.equal(selectionToSpan("", 0, 0), null);
  });

  test("a selection of the whole text ends at its last code point", () => {
    assert.deepEqual(selectionToSpan(TEXT, 0, TEXT.length), { start: 0, end: 12 });
  });
});

describe("whole words", () => {
  const SITS = "A cat sits in the bottom left. It is 2.5cm; I don't see 🙂x.";
  const at = (part) => [SITS.indexOf(part), SITS.indexOf(part) + part.length];
  const marked = (part, options = { wholeWords: true }) => {
    const span = selectionToSpan(SITS, ...at(part), options);
    return span && Array.from(SITS).slice(span.start, span.end).join("");
  };

  test("a drag from mid-word to mid-word marks the whole words", () => {
    assert.equal(marked("ts in th"), "sits in the");
    assert.equal(marked("n't"), "don't");
    assert.equal(marked("5c"), "2.5cm;");
  });

  test("whole words stay as they are; an emoji counts as a symbol, like punctuation", () => {
    assert.equal(marked("sits"), "sits");
    assert.equal(marked("x"), "x");
  });

  test("punctuation the selection did not reach stays out; what it reached stays in", () => {
    assert.equal(marked("lef"), "left.");
    assert.equal(marked("left."), "left.");
    assert.equal(marked("5cm"), "2.5cm");
  });

  test("exact characters without wholeWords (Alt held, where the dataset allows it)", () => {
    assert.equal(marked("ts in th", {}), "ts in th");
  });

  test("snapToWords works in UTF-16 units", () => {
    assert.deepEqual(snapToWords("a🙂b c", 3, 4), [0, 4]);
  });
});

describe("excerpt", () => {
  test("cuts by code points", () => {
    assert.equal(excerpt(TEXT, 0, 1), "🙂");
    assert.equal(excerpt(TEXT, 2, 4), "红色");
    assert.equal(excerpt(TEXT, 5, 10), "cafe\u0301");
  });

  test("shortens long text to 57 units and an ellipsis", () => {
    const long = "a".repeat(61);
    assert.equal(excerpt(long, 0, 60), "a".repeat(60));
    assert.equal(excerpt(long, 0, 61), `${"a".repeat(57)}…`);
  });
});
