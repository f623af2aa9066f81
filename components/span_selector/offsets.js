// Offsets: the DOM counts UTF-16 code units, Python counts code points. Spans arrive and leave in
// code points; they are converted to UTF-16 only to cut the text into DOM segments, and a browser
// selection (UTF-16) is converted back before it becomes a span.

const WHITESPACE = /\s/u;
const LOW_SURROGATE = /[\uDC00-\uDFFF]/u;
const PUNCTUATION = /^[\p{P}\p{S}]$/u; // Python's unicodedata categories P* and S*
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

function onlyPunctuation(part) {
  return Array.from(part).every((ch) => PUNCTUATION.test(ch));
}

export function snapToWords(text, s, e) {
  // Widen UTF-16 offsets [s, e) (outer whitespace already dropped) to the whole whitespace tokens
  // they touch; what the selection left out of a token on one side stays out when it is all
  // punctuation. The same rule as the server's `formats.word_spans.snap_to_words`, which stores it.
  let start = s;
  let end = e;
  while (start > 0 && !WHITESPACE.test(text[start - 1])) start -= 1;
  while (end < text.length && !WHITESPACE.test(text[end])) end += 1;
  if (onlyPunctuation(text.slice(start, s))) start = s;
  if (onlyPunctuation(text.slice(e, end))) end = e;
  return [start, end];
}

export function selectionToSpan(text, anchorU16, focusU16, { wholeWords = false } = {}) {
  // The code points a selection of UTF-16 offsets marks: outer whitespace dropped, never half an
  // emoji (a surrogate pair), and with `wholeWords` never half a word. Null when nothing but
  // whitespace was selected.
  let s = Math.min(anchorU16, focusU16);
  let e = Math.max(anchorU16, focusU16);
  while (s < e && WHITESPACE.test(text[s])) s += 1;
  while (e > s && WHITESPACE.test(text[e - 1])) e -= 1;
  if (s > 0 && s < text.length && LOW_SURROGATE.test(text[s])) s -= 1;
  if (e > 0 && e < text.length && LOW_SURROGATE.test(text[e])) e += 1;
  if (s >= e) return null;
  if (wholeWords) [s, e] = snapToWords(text, s, e);
  return { start: codePointsBefore(text, s), end: codePointsBefore(text, e) };
}

export function excerpt(text, start, end) {
  // The text of code points [start, end), shortened with an ellipsis past EXCERPT_MAX UTF-16 units.
  const marked = Array.from(text).slice(start, end).join("");
  return marked.length > EXCERPT_MAX ? `${marked.slice(0, EXCERPT_MAX - 3)}…` : marked;
}
