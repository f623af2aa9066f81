import assert from "node:assert/strict";
import { test } from "node:test";

import { typeIndexOfKey, typeKeyLabel } from "../../components/span_selector/keys.js";

test("the first nine types are keys 1–9, the tenth is 0, the next ones letters", () => {
  assert.deepEqual([0, 1, 8, 9, 10, 11].map(typeKeyLabel), ["1", "2", "9", "0", "Q", "W"]);
});

test("every one of MHALO's twelve types, and up to nineteen, has a key of its own", () => {
  const labels = Array.from({ length: 19 }, (_, index) => typeKeyLabel(index));
  assert.ok(labels.every((label) => label !== ""));
  assert.equal(new Set(labels).size, labels.length);
  assert.equal(typeKeyLabel(19), "");
});

test("the key a type's label shows picks that type, in either case", () => {
  for (let index = 0; index < 19; index += 1) {
    assert.equal(typeIndexOfKey(typeKeyLabel(index)), index);
    assert.equal(typeIndexOfKey(typeKeyLabel(index).toLowerCase()), index);
  }
});

test("other keys pick no type; U stays the page's Undo", () => {
  for (const key of ["a", "u", "U", "Delete", "10", "", " ", "٣"]) assert.equal(typeIndexOfKey(key), -1, key);
});
