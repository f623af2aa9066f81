// Text-span selector for Streamlit's components v2 API: the DOM side (drawing, browser selection,
// mouse and keys). The logic without a DOM lives in the modules imported below, which Node tests;
// `__init__.py` joins them into the one script Streamlit takes.
//
// Streamlit calls the default export again whenever `data` changes, on the same shadow root; the
// cleanup function it returns runs only when the component leaves the page. Everything that must
// survive a rerun (the selected span, the active type, a drag, an action waiting for Python) lives
// in `instances`, keyed by that root; everything else lives in a `view` made afresh on each call.
// The text is only ever written with `textContent`, so model output such as `<b>` or `<script>` is
// shown literally and never parsed.

import { codePointStarts, excerpt, selectionToSpan } from "./offsets.js";
import { nextSelected, sameSpan } from "./spans.js";
import { abutsAt, assignLanes, coveringSpans, laneCount, segmentBackground, segmentBounds } from "./layout.js";
import { typeIndexOfKey, typeKeyLabel } from "./keys.js";
import { createState, drainQueue, pickType, readData, receive, request, shown, stopWaiting } from "./state.js";

const instances = new WeakMap();
const ACK_TIMEOUT_MS = 5000;
const HINT = "Drag across text or double-click a word to mark it · click a span to select it · the key on a type picks it";
const HINT_EXACT = "spans snap to whole words; hold Alt while dragging to mark exact characters";

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function colourOf(view, type) {
  return (type !== null && view.colours[type]) || "#888888";
}

// ---------------------------------------------------------------- drawing
function renderTypes(view) {
  const selected = view.ui.drawn.selected;
  const shownType = selected ? selected.type : view.ui.activeType;
  view.typesBar.setAttribute("aria-disabled", String(view.disabled));
  view.typesBar.title = view.disabled ? view.disabledWhy : "";
  view.typesBar.replaceChildren(
    ...view.types.map((type, index) => {
      const button = el("button", "hs-type");
      button.type = "button";
      button.disabled = view.disabled;
      button.dataset.index = String(index);
      button.style.setProperty("--c", colourOf(view, type));
      // Read-only: no type shows as picked, as no new span will get it.
      button.setAttribute("aria-pressed", String(!view.disabled && type === shownType));
      const key = typeKeyLabel(index);
      if (key) button.append(el("kbd", "hs-key", key));
      button.append(el("span", "hs-swatch"), el("span", "hs-type-name", type));
      if (view.disabled) button.title = view.disabledWhy || "The spans are shown read-only here.";
      else button.title = selected ? `Change the selected span to ${type}` : `New spans get ${type}`;
      return button;
    }),
  );
}

function renderText(view) {
  const spans = view.ui.drawn.spans;
  const lanes = assignLanes(spans);
  view.root.style.setProperty("--lanes", String(laneCount(lanes)));
  const layout = {
    spans,
    lanes,
    starts: spans.map((s) => view.toU16[s.start]),
    ends: spans.map((s) => view.toU16[s.end]),
  };
  const bounds = segmentBounds(view.text.length, layout.starts, layout.ends);
  const segments = [];
  for (let b = 0; b + 1 < bounds.length; b += 1) segments.push(segmentNode(view, layout, bounds[b], bounds[b + 1]));
  view.textEl.replaceChildren(...segments);
}

function segmentNode(view, { spans, lanes, starts, ends }, left, right) {
  // The text between two neighbouring bounds, underlined by the spans covering it.
  const seg = el("span", "hs-seg", view.text.slice(left, right));
  seg.dataset.start = String(left);
  const covering = coveringSpans(starts, ends, lanes, left, right);
  if (!covering.length) return seg;
  const bands = covering.map((i) => ({
    colour: colourOf(view, spans[i].type),
    lane: lanes[i],
    selected: Boolean(sameSpan(spans[i], view.ui.drawn.selected)),
    opens: starts[i] === left,
    closes: ends[i] === right,
  }));
  seg.classList.add("hs-marked");
  if (abutsAt(starts, ends, left)) seg.classList.add("hs-abuts");
  if (bands.some((band) => band.selected)) seg.classList.add("hs-selected");
  seg.dataset.spans = covering.join(" ");
  seg.style.background = segmentBackground(bands);
  seg.title = covering.map((i) => `${spans[i].type ?? "span"} · ${spans[i].start}–${spans[i].end}`).join("\n");
  return seg;
}

function renderStatus(view) {
  const parts = [];
  const selected = view.ui.drawn.selected;
  if (selected) {
    const label = el("span", "hs-selected-label");
    label.append(
      el("span", "hs-selected-type", `${selected.type ?? "span"} `),
      el("q", "hs-selected-text", excerpt(view.text, selected.start, selected.end)),
      el("span", "hs-offsets", ` ${selected.start}–${selected.end}`),
    );
    label.style.setProperty("--c", colourOf(view, selected.type));
    const remove = el("button", "hs-delete", "× Delete");
    remove.type = "button";
    remove.disabled = view.disabled;
    remove.title = "Delete this span (Delete or Backspace)";
    parts.push(label, remove);
  } else if (!view.disabled) {
    parts.push(el("span", "hs-hint", view.charPrecision ? `${HINT} · ${HINT_EXACT}` : HINT));
  } else if (view.disabledWhy) {
    parts.push(el("span", "hs-hint", view.disabledWhy)); // why the picker above is off
  }
  if (view.ui.pendingRev) parts.push(el("span", "hs-saving", "saving…"));
  view.statusEl.replaceChildren(...parts);
}

function render(view) {
  // Redrawing the text replaces its nodes; under a drag that would leave the browser's selection
  // on detached nodes, so the redraw waits for the button to come up (`onMouseUp` draws then).
  if (view.ui.dragging) {
    view.ui.redrawAfterDrag = true;
    return;
  }
  view.ui.redrawAfterDrag = false;
  // What is drawn is what the user sees, queued actions included; the indices in `data-spans` are
  // into this list, kept on `ui` because the drawn nodes outlive a call.
  view.ui.drawn = shown(view.ui);
  view.root.classList.toggle("hs-disabled", view.disabled);
  view.root.classList.toggle("hs-pending", Boolean(view.ui.pendingRev));
  renderTypes(view);
  renderText(view);
  renderStatus(view);
}

// ---------------------------------------------------------------- exchange with Python
function post(ui, message) {
  const { setStateValue, setTriggerValue } = ui.api; // the latest setters
  // All three land in one rerun: the widget manager flushes on the next tick.
  setStateValue("spans", message.spans);
  setStateValue("rev", message.rev);
  setTriggerValue("event", message.event);
  clearTimeout(ui.timer);
  ui.timer = setTimeout(() => {
    stopWaiting(ui);
    ui.rerender?.();
  }, ACK_TIMEOUT_MS);
}

function replayQueue(ui) {
  const message = drainQueue(ui);
  if (message) post(ui, message);
}

function act(view, action) {
  // Every action, selecting included, goes through here, in the order the user made them.
  if (view.disabled) return;
  const message = request(view.ui, action);
  if (message) post(view.ui, message);
  render(view);
}

function selectedNow(view) {
  // The span selected as the user sees it: the newest mark even while its save still waits.
  return shown(view.ui).selected;
}

function chooseType(view, index) {
  const type = view.types[index];
  if (type === undefined || view.disabled) return;
  const message = pickType(view.ui, type);
  if (message) post(view.ui, message);
  render(view);
}

// ---------------------------------------------------------------- selection → span
function boundaryU16(view, node, offset, outside) {
  const textEl = view.textEl;
  if (node === textEl || textEl.contains(node)) {
    const range = document.createRange();
    range.setStart(textEl, 0);
    range.setEnd(node, offset);
    return range.toString().length;
  }
  if (!node.isConnected) return null; // drawn over since the selection began: nothing reliable to mark
  if (node.getRootNode() !== textEl.getRootNode()) return outside;
  const position = textEl.compareDocumentPosition(node);
  if (position & Node.DOCUMENT_POSITION_PRECEDING) return 0;
  if (position & Node.DOCUMENT_POSITION_FOLLOWING) return view.text.length;
  return outside;
}

function selectedRange(parentElement) {
  const selection = document.getSelection();
  if (!selection) return null;
  if (typeof selection.getComposedRanges === "function" && parentElement instanceof ShadowRoot) {
    const ranges = selection.getComposedRanges({ shadowRoots: [parentElement] });
    return ranges.length ? ranges[0] : null;
  }
  const scoped = typeof parentElement.getSelection === "function" ? parentElement.getSelection() : selection;
  return scoped && scoped.rangeCount ? scoped.getRangeAt(0) : null;
}

function spanFromSelection(view, exact) {
  // Whole words unless the dataset allows character precision and the user asks for it (`exact`).
  const range = selectedRange(view.parentElement);
  if (!range || range.collapsed) return null;
  const s = boundaryU16(view, range.startContainer, range.startOffset, 0);
  const e = boundaryU16(view, range.endContainer, range.endOffset, view.text.length);
  if (s === null || e === null) return null;
  const span = selectionToSpan(view.text, s, e, { wholeWords: !(exact && view.charPrecision) });
  return span && { ...span, type: view.ui.activeType };
}

function charAtPoint(view, x, y) {
  // The UTF-16 offset of the character drawn under (x, y) in the text, or null.
  const walker = document.createTreeWalker(view.textEl, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let seen = 0;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i += 1) {
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      for (const box of range.getClientRects()) {
        if (x >= box.left && x <= box.right && y >= box.top && y <= box.bottom) return seen + i;
      }
    }
    seen += node.data.length;
  }
  return null;
}

function spanAtPoint(view, event) {
  // The word under a double-click. The browser's own word selection is that word, except on an emoji
  // with a skin-tone modifier: Chromium selects the space after it, and nothing was marked.
  const at = charAtPoint(view, event.clientX, event.clientY);
  if (at === null || /\s/u.test(view.text[at])) return null;
  // The whole character as drawn (the emoji with its modifier), then the whole word.
  const { index, segment } = new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(view.text).containing(at);
  const span = selectionToSpan(view.text, index, index + segment.length, { wholeWords: true });
  return span && { ...span, type: view.ui.activeType };
}

function clearBrowserSelection() {
  const selection = document.getSelection();
  if (selection) selection.removeAllRanges();
}

function selectAt(view, target) {
  // Select the span under a click (drawn from `ui.drawn`); returns whether the selection changed.
  const seg = target instanceof Element ? target.closest(".hs-seg") : null;
  const covering = seg?.dataset.spans ? seg.dataset.spans.split(" ").map(Number) : [];
  const selected = selectedNow(view);
  if (!covering.length && !selected) return false;
  const next = covering.length ? nextSelected(view.ui.drawn.spans, covering, selected) : null;
  act(view, { kind: "select", target: next });
  return true;
}

// ---------------------------------------------------------------- events
function onMouseUp(view, event) {
  const ui = view.ui;
  if (!ui.dragging) return;
  ui.dragging = false;
  const span = spanFromSelection(view, event.altKey) ?? (event.detail >= 2 ? spanAtPoint(view, event) : null);
  if (span) {
    clearBrowserSelection();
    act(view, { kind: "add", span });
  } else {
    const target = event.composedPath()[0];
    // Re-draw only on a change (or one held back by the drag), so the first click of a
    // double-click keeps its text nodes.
    const changed = view.textEl.contains(target) && selectAt(view, target);
    if (!changed && ui.redrawAfterDrag) render(view);
  }
  view.root.focus({ preventScroll: true });
}

function onKeyDown(view, event) {
  // Returns whether the key was the selector's.
  const typeIndex = typeIndexOfKey(event.key);
  const selected = selectedNow(view);
  if (typeIndex !== -1) {
    if (typeIndex >= view.types.length) return false;
    chooseType(view, typeIndex);
  } else if ((event.key === "Delete" || event.key === "Backspace") && selected) {
    act(view, { kind: "delete", target: selected });
  } else if (event.key === "Escape" && selected) {
    act(view, { kind: "select", target: null });
  } else {
    return false;
  }
  return true;
}

function listen(view, signal) {
  const { root, textEl, typesBar, statusEl } = view;
  const options = { signal };
  textEl.addEventListener(
    "mousedown",
    (event) => {
      view.ui.dragging = event.button === 0 && !view.disabled;
    },
    options,
  );
  window.addEventListener("mouseup", (event) => onMouseUp(view, event), options);
  window.addEventListener(
    "blur",
    () => {
      // The button came up where this page cannot see it: no drag, and draw what it held back.
      if (!view.ui.dragging) return;
      view.ui.dragging = false;
      if (view.ui.redrawAfterDrag) render(view);
    },
    options,
  );
  typesBar.addEventListener(
    "click",
    (event) => {
      const button = event.target instanceof Element ? event.target.closest(".hs-type") : null;
      if (button && !view.disabled) chooseType(view, Number(button.dataset.index));
    },
    options,
  );
  statusEl.addEventListener(
    "click",
    (event) => {
      const selected = selectedNow(view);
      if (event.target instanceof Element && event.target.closest(".hs-delete") && selected) {
        act(view, { kind: "delete", target: selected });
        root.focus({ preventScroll: true });
      }
    },
    options,
  );
  root.addEventListener(
    "keydown",
    (event) => {
      if (view.disabled || event.ctrlKey || event.metaKey || event.altKey) return;
      if (onKeyDown(view, event)) {
        // Keep the key from page-level shortcuts (a page may bind 1/2/3 to buttons).
        event.preventDefault();
        event.stopPropagation();
      }
    },
    options,
  );
}

export default function (component) {
  const { data, parentElement } = component;
  const root = parentElement.querySelector(".hs-sel");
  if (!root || !data) return undefined;
  const props = readData(data);

  let ui = instances.get(parentElement);
  if (!ui) {
    ui = createState();
    instances.set(parentElement, ui);
  }
  ui.api = component; // the latest setters, for timers started by an earlier call
  receive(ui, props);

  const view = {
    ui,
    parentElement,
    root,
    typesBar: root.querySelector(".hs-types"),
    textEl: root.querySelector(".hs-text"),
    statusEl: root.querySelector(".hs-status"),
    text: props.text,
    types: props.types,
    colours: props.colours,
    disabled: props.disabled,
    disabledWhy: props.disabledWhy, // said on the type buttons of a read-only selector
    charPrecision: props.charPrecision, // Alt may mark exact characters (the dataset allows it)
    toU16: codePointStarts(props.text),
  };
  // Streamlit runs the returned cleanup only when the component leaves the page, not before calling
  // again: the listeners of the previous call are dropped here, so each event is handled once.
  ui.controller?.abort();
  const controller = new AbortController();
  ui.controller = controller;
  const { signal } = controller;
  listen(view, signal);

  ui.rerender = () => {
    if (signal.aborted) return;
    replayQueue(ui);
    render(view);
  };
  if (!ui.pendingRev) clearTimeout(ui.timer);
  replayQueue(ui);
  render(view);

  return () => controller.abort();
}
