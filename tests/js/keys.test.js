import assert from "node:assert/strict";
import { test } from "node:test";

import { typeIndexOfKey, typeKeyLabel } from "../../components/span_selector/keys.js";

test("the first nine types are keys 1–9, the tenth is 0, the rest have none", () => {
  assert.deepEqual([0, 1, 8, 9, 10].map(typeKeyLabel), ["1", "2", "9", "0", ""]);
});

test("a digit key picks the type its label shows", () => {
  for (let index = 0; index < 10; index += 1) assert.equal(typeIndexOfKey(typeKeyLabel(index)), index);
});

test("other keys pick no type", () => {
  for (const key of ["a", "Delete", "10", "", " ", "٣"]) assert.equal(typeIndexOfKey(key), -1, key);
});
