// The selector's memory between Streamlit's calls, and its exchange with Python.
//
// Python owns the span list. After each action the component sends the new list, the action and a
// revision number, and keeps showing its own list until Python answers with `data.rev` at least that
// revision; from then on it shows whatever Python passed (which may differ, e.g. after an undo).
// Actions made while waiting are queued and replayed once Python has answered.
//
// What the user sees while actions wait is `shown(ui)`: the list and selection with the queued actions
// applied in order. Every key and click acts on that (the newest mark, whose save may still be
// waiting), never on the older `ui.selected`; otherwise a Delete pressed right after a quick mark
// was dropped, or deleted the span selected before. Selecting and unselecting are queued actions
// too, so a click between two keys applies between them when replayed.

import { applyAction, plainSpans, sameSpan } from "./spans.js";

export function readData(data) {
  // What Python passed, with defaults for anything missing.
  return {
    text: String(data.text ?? ""),
    spans: plainSpans(data.spans),
    types: Array.isArray(data.types) ? data.types : [],
    colours: data.colours ?? {},
    activeType: data.active_type,
    disabled: Boolean(data.disabled),
    disabledWhy: String(data.disabled_why ?? ""),
    charPrecision: Boolean(data.char_precision),
    rev: Number(data.rev ?? 0),
  };
}

export function createState() {
  return {
    text: null,
    spans: [], // the list shown
    dataSpans: [], // the list Python passed last
    selected: null,
    activeType: null,
    pythonActiveType: undefined,
    rev: 0,
    pendingRev: 0, // the revision sent and not yet answered; 0 when not waiting
    queue: [],
    timer: null,
    api: null,
    rerender: null,
    // A left button went down on the text and is not up yet. Kept here, not in a view, so a drag
    // begun before Streamlit calls the component again still ends in a span.
    dragging: false,
    redrawAfterDrag: false, // a redraw was held back by the drag
    controller: null, // aborts the listeners of the latest call
    drawn: { spans: [], selected: null }, // `shown(ui)` as last drawn: what a click lands on
  };
}

export function receive(ui, props) {
  // Take in what Python passed on this run (`props` from `readData`).
  ui.rev = props.rev;
  if (ui.text !== props.text) {
    // Another text (or the first render): forget selection and anything in flight.
    ui.text = props.text;
    ui.selected = null;
    ui.queue = [];
    ui.pendingRev = 0;
    ui.dragging = false; // a drag over the old text marks nothing in the new one
  }
  ui.dataSpans = props.spans;
  if (!ui.pendingRev || props.rev >= ui.pendingRev) {
    ui.pendingRev = 0;
    ui.spans = ui.dataSpans;
  }
  if (props.activeType !== ui.pythonActiveType) {
    ui.pythonActiveType = props.activeType;
    ui.activeType = props.activeType ?? null;
  }
  if (!props.types.includes(ui.activeType)) ui.activeType = props.types.length ? props.types[0] : null;
  if (ui.selected && !ui.spans.some((s) => sameSpan(s, ui.selected))) ui.selected = null;
}

export function perform(ui, action) {
  // Apply one action. Returns what to send to Python, `{ spans, rev, event }`, when the list
  // changed (and then waits for that revision), else null.
  const result = applyAction(ui.spans, action);
  if (!result) return null;
  ui.selected = result.selected;
  if (!result.spans) return null;
  const rev = Math.max(ui.rev, ui.pendingRev) + 1;
  ui.spans = result.spans;
  ui.pendingRev = rev;
  return { spans: result.spans, rev, event: { ...result.event, rev } };
}

function replay(spans, selected, actions) {
  for (const action of actions) {
    const result = applyAction(spans, action);
    if (!result) continue;
    selected = result.selected;
    if (result.spans) spans = result.spans;
  }
  return { spans, selected };
}

export function shown(ui) {
  // The list and the selected span as the user sees them: `ui.spans` (Python's, or the one in flight)
  // with the queued actions applied in order.
  return replay(ui.spans, ui.selected, ui.queue);
}

export function request(ui, action) {
  // The user's action on what they see: performed now, returning the message to send (or null), or
  // queued behind the save that waits for Python's answer (null).
  if (ui.pendingRev) {
    ui.queue.push(action);
    return null;
  }
  return perform(ui, action);
}

export function typeQueuedSpan(ui, type) {
  // A type key right after a span was marked, while that mark still waits in the queue (the save
  // before it not answered yet): the key is for that span, which takes the type before it is sent,
  // so it is saved once, typed. Returns whether there was one; only when that mark is the newest
  // action and adds a span (a mark of a span already there only selects it: a retype, not this).
  const last = ui.queue[ui.queue.length - 1];
  if (last?.kind !== "add") return false;
  const before = replay(ui.spans, ui.selected, ui.queue.slice(0, -1));
  if (!applyAction(before.spans, last)?.spans) return false;
  if (before.spans.some((s) => sameSpan(s, { ...last.span, type }))) return false;
  last.span = { ...last.span, type };
  return true;
}

export function pickType(ui, type) {
  // A type key (or type button): the span selected as the user sees it takes the type, else new spans
  // get it. Returns the message to send, or null.
  if (typeQueuedSpan(ui, type)) return null;
  const { selected } = shown(ui);
  if (selected) return request(ui, { kind: "retype", target: selected, type });
  ui.activeType = type;
  return null;
}

export function drainQueue(ui) {
  // Perform queued actions while not waiting; returns the first message to send, or null.
  while (!ui.pendingRev && ui.queue.length) {
    const message = perform(ui, ui.queue.shift());
    if (message) return message;
  }
  return null;
}

export function stopWaiting(ui) {
  // Python never answered (the page failed?): show its last list so the annotator is not stuck.
  ui.pendingRev = 0;
  ui.spans = ui.dataSpans;
}
