// The selector's memory between Streamlit's calls, and its exchange with Python.
//
// Python owns the span list. After each action the component sends the new list, the action and a
// revision number, and keeps showing its own list until Python answers with `data.rev` at least that
// revision; from then on it shows whatever Python passed (which may differ, e.g. after an undo).
// Actions made while waiting are queued and replayed once Python has answered.

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

export function typeQueuedSpan(ui, type) {
  // A type key right after a span was marked, while that mark still waits in the queue (the save
  // before it not answered yet): the key is for that span, which takes the type before it is sent.
  // Returns whether there was one. (Else the key found no span selected, and only changed the type of
  // the next span marked.)
  const last = ui.queue[ui.queue.length - 1];
  if (last?.kind !== "add") return false;
  last.span = { ...last.span, type };
  return true;
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
