// The span list as data: identity of a span, what an action does to the list, and which span a
// click selects. Spans are `{ start, end, type }` in code points; `type` may be null.

export function plainSpans(raw) {
  return (Array.isArray(raw) ? raw : []).map((s) => ({ start: s.start, end: s.end, type: s.type ?? null }));
}

export function sameSpan(a, b) {
  return a && b && a.start === b.start && a.end === b.end && a.type === b.type;
}

export function applyAction(spans, action) {
  // What one action (`{ kind: "add", span }`, `{ kind: "retype", target, type }`,
  // `{ kind: "delete", target }` or `{ kind: "select", target }`, target null to unselect) does:
  // `{ selected, spans, event }` when the list changes, `{ selected }` when it only selects a span,
  // null when it does nothing.
  if (action.kind === "select") {
    // A span gone by the time the click is replayed (Python refused its add) leaves nothing selected.
    return { selected: (action.target && spans.find((s) => sameSpan(s, action.target))) || null };
  }
  if (action.kind === "add") {
    const span = action.span;
    const existing = spans.find((s) => sameSpan(s, span));
    if (existing) return { selected: existing };
    return { selected: span, spans: [...spans, span], event: { action: "add", span } };
  }
  const index = spans.findIndex((s) => sameSpan(s, action.target));
  if (index === -1) return null;
  const old = spans[index];
  if (action.kind === "retype") {
    const span = { ...old, type: action.type };
    if (old.type === action.type || spans.some((s) => sameSpan(s, span))) return null;
    const next = spans.map((s, i) => (i === index ? span : s));
    return { selected: span, spans: next, event: { action: "retype", span, previous: old } };
  }
  if (action.kind === "delete") {
    return { selected: null, spans: spans.filter((_, i) => i !== index), event: { action: "delete", span: old } };
  }
  return null;
}

export function nextSelected(spans, covering, selected) {
  // The span a click on text covered by `covering` (indices into `spans`, at least one) selects:
  // the shortest first; clicking again on the same place steps through the overlapping spans.
  const candidates = covering
    .map((i) => spans[i])
    .sort((a, b) => a.end - a.start - (b.end - b.start) || a.start - b.start);
  const current = candidates.findIndex((s) => sameSpan(s, selected));
  return candidates[(current + 1) % candidates.length];
}
