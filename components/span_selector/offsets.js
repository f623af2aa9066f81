// Offsets: the DOM counts UTF-16 code units, Python counts code points. Spans arrive and leave in
// code points; they are converted to UTF-16 only to cut the text into DOM segments, and a browser
// selection (UTF-16) is converted back before it becomes a span.

const WHITESPACE = /\s/u;
const LOW_SURROGATE = /[\uDC00-\uDFFF]/u;
const EXCERPT_MAX = 60;

export function codePointStarts(text) {
  // toU16[i] = UTF-16 offset of code point i; the last entry is text.length.
  const toU16 = [0];
  let u16 = 0;
  for (const ch of text) {
    u16 += ch.length;
    toU16.push(u16);
  }
  return toU16;
}

export function codePointsBefore(text, u16) {
  return Array.from(text.slice(0, u16)).length;
}

export function selectionToSpan(text, anchorU16, focusU16) {
  // The code points a selection of UTF-16 offsets marks: outer whitespace dropped, never half an
  // emoji (a surrogate pair). Null when nothing but whitespace was selected.
  let s = Math.min(anchorU16, focusU16);
  let e = Math.max(anchorU16, focusU16);
  while (s < e && WHITESPACE.test(text[s])) s += 1;
  while (e > s && WHITESPACE.test(text[e - 1])) e -= 1;
  if (s > 0 && s < text.length && LOW_SURROGATE.test(text[s])) s -= 1;
  if (e > 0 && e < text.length && LOW_SURROGATE.test(text[e])) e += 1;
  if (s >= e) return null;
  return { start: codePointsBefore(text, s), end: codePointsBefore(text, e) };
}

export function excerpt(text, start, end) {
  // The text of code points [start, end), shortened with an ellipsis past EXCERPT_MAX UTF-16 units.
  const marked = Array.from(text).slice(start, end).join("");
  return marked.length > EXCERPT_MAX ? `${marked.slice(0, EXCERPT_MAX - 3)}…` : marked;
}
