// Text-span selector for Streamlit's components v2 API.
//
// Streamlit calls the default export again whenever `data` changes, on the same shadow root, after
// running the cleanup function the previous call returned. Everything that must survive a rerun (the
// selected span, the active type, an action waiting for Python) lives in `instances`, keyed by that
// root. The text is only ever written with `textContent`, so model output such as `<b>` or
// `<script>` is shown literally and never parsed.
//
// Offsets: the DOM counts UTF-16 code units, Python counts code points. Spans arrive and leave in
// code points; they are converted to UTF-16 only to cut the text into DOM segments.
//
// Python owns the span list. After each action the component sends the new list, the action and a
// revision number, and keeps showing its own list until Python answers with `data.rev` at least that
// revision; from then on it shows whatever Python passed (which may differ, e.g. after an undo).
// Actions made while waiting are queued and replayed once Python has answered.

const instances = new WeakMap();
const LANE_GAP_PX = 5;
const ACK_TIMEOUT_MS = 5000;
const WHITESPACE = /\s/u;

function codePointStarts(text) {
  // toU16[i] = UTF-16 offset of code point i; the last entry is text.length.
  const toU16 = [0];
  let u16 = 0;
  for (const ch of text) {
    u16 += ch.length;
    toU16.push(u16);
  }
  return toU16;
}

function codePointsBefore(text, u16) {
  return Array.from(text.slice(0, u16)).length;
}

function sameSpan(a, b) {
  return a && b && a.start === b.start && a.end === b.end && a.type === b.type;
}

function typeKeyLabel(index) {
  if (index < 9) return String(index + 1);
  return index === 9 ? "0" : "";
}

function assignLanes(spans) {
  // The lowest lane free of overlapping spans; adjacent spans may share a lane (edges show the cut).
  const order = spans.map((_, i) => i).sort((a, b) => spans[a].start - spans[b].start || spans[b].end - spans[a].end);
  const laneEnds = [];
  const lanes = new Array(spans.length).fill(0);
  for (const i of order) {
    let lane = laneEnds.findIndex((end) => end <= spans[i].start);
    if (lane === -1) lane = laneEnds.length;
    laneEnds[lane] = spans[i].end;
    lanes[i] = lane;
  }
  return lanes;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export default function (component) {
  const { data, parentElement } = component;
  const root = parentElement.querySelector(".hs-sel");
  if (!root || !data) return undefined;
  const typesBar = root.querySelector(".hs-types");
  const textEl = root.querySelector(".hs-text");
  const statusEl = root.querySelector(".hs-status");

  const text = String(data.text ?? "");
  const types = Array.isArray(data.types) ? data.types : [];
  const colours = data.colours ?? {};
  const disabled = Boolean(data.disabled);
  const rev = Number(data.rev ?? 0);

  let ui = instances.get(parentElement);
  if (!ui) {
    ui = { text: null, spans: [], selected: null, activeType: null, pythonActiveType: undefined, pendingRev: 0, queue: [], timer: null };
    instances.set(parentElement, ui);
  }
  ui.api = component; // the latest setters, for timers started by an earlier call
  ui.rev = rev;

  if (ui.text !== text) {
    // Another text (or the first render): forget selection and anything in flight.
    ui.text = text;
    ui.selected = null;
    ui.queue = [];
    ui.pendingRev = 0;
  }
  ui.dataSpans = (Array.isArray(data.spans) ? data.spans : []).map((s) => ({ start: s.start, end: s.end, type: s.type ?? null }));
  if (!ui.pendingRev || rev >= ui.pendingRev) {
    ui.pendingRev = 0;
    ui.spans = ui.dataSpans;
  }
  if (data.active_type !== ui.pythonActiveType) {
    ui.pythonActiveType = data.active_type;
    ui.activeType = data.active_type ?? null;
  }
  if (!types.includes(ui.activeType)) ui.activeType = types.length ? types[0] : null;
  if (ui.selected && !ui.spans.some((s) => sameSpan(s, ui.selected))) ui.selected = null;

  const toU16 = codePointStarts(text);
  const controller = new AbortController();
  const { signal } = controller;
  let armed = false;

  const colourOf = (type) => (type !== null && colours[type]) || "#888888";

  // ---------------------------------------------------------------- drawing
  function renderTypes() {
    const selected = ui.selected;
    const shownType = selected ? selected.type : ui.activeType;
    typesBar.replaceChildren(
      ...types.map((type, index) => {
        const button = el("button", "hs-type");
        button.type = "button";
        button.disabled = disabled;
        button.dataset.index = String(index);
        button.style.setProperty("--c", colourOf(type));
        button.setAttribute("aria-pressed", String(type === shownType));
        const key = typeKeyLabel(index);
        if (key) button.append(el("kbd", "hs-key", key));
        button.append(el("span", "hs-swatch"), el("span", "hs-type-name", type));
        button.title = selected ? `Change the selected span to ${type}` : `New spans get ${type}`;
        return button;
      }),
    );
  }

  function renderText() {
    const spans = ui.spans;
    const lanes = assignLanes(spans);
    const depth = lanes.length ? Math.max(...lanes) + 1 : 0;
    root.style.setProperty("--lanes", String(depth));
    const starts = spans.map((s) => toU16[s.start]);
    const ends = spans.map((s) => toU16[s.end]);
    const bounds = [...new Set([0, text.length, ...starts, ...ends])].sort((a, b) => a - b);
    const segments = [];
    for (let b = 0; b + 1 < bounds.length; b += 1) {
      const left = bounds[b];
      const right = bounds[b + 1];
      const seg = el("span", "hs-seg", text.slice(left, right));
      seg.dataset.start = String(left);
      const covering = spans
        .map((_, i) => i)
        .filter((i) => starts[i] <= left && right <= ends[i])
        .sort((x, y) => lanes[x] - lanes[y]);
      if (covering.length) {
        // Per span, bottom to top of its lane: an underline, and a short bracket where it starts or
        // ends. Brackets are short so a span nested inside a longer one does not cut the longer one's
        // band in two; the longer one's underline runs on underneath.
        const layers = [];
        const tints = [];
        for (const i of covering) {
          const c = colourOf(spans[i].type);
          const isSelected = sameSpan(spans[i], ui.selected);
          const line = isSelected ? 4 : 2;
          const bottom = lanes[i] * LANE_GAP_PX;
          const bracket = `${2}px calc(0.55em + ${line}px)`;
          layers.push(`linear-gradient(${c}, ${c}) left 0 bottom ${bottom}px / 100% ${line}px no-repeat`);
          if (starts[i] === left) layers.push(`linear-gradient(${c}, ${c}) left 0 bottom ${bottom}px / ${bracket} no-repeat`);
          if (ends[i] === right) layers.push(`linear-gradient(${c}, ${c}) right 0 bottom ${bottom}px / ${bracket} no-repeat`);
          const tint = `${c}${isSelected ? "59" : "2E"}`;
          tints.push(`linear-gradient(${tint}, ${tint})`);
        }
        seg.classList.add("hs-marked");
        // Where one span ends exactly where another begins, a small gap keeps them apart.
        if (left > 0 && starts.includes(left) && ends.includes(left)) seg.classList.add("hs-abuts");
        if (covering.some((i) => sameSpan(spans[i], ui.selected))) seg.classList.add("hs-selected");
        seg.dataset.spans = covering.join(" ");
        seg.style.background = [...layers, ...tints].join(", ");
        seg.title = covering.map((i) => `${spans[i].type ?? "span"} · ${spans[i].start}–${spans[i].end}`).join("\n");
      }
      segments.push(seg);
    }
    textEl.replaceChildren(...segments);
  }

  function renderStatus() {
    const parts = [];
    const selected = ui.selected;
    if (selected) {
      const excerpt = Array.from(text).slice(selected.start, selected.end).join("");
      const label = el("span", "hs-selected-label");
      label.append(
        el("span", "hs-selected-type", `${selected.type ?? "span"} `),
        el("q", "hs-selected-text", excerpt.length > 60 ? `${excerpt.slice(0, 57)}…` : excerpt),
        el("span", "hs-offsets", ` ${selected.start}–${selected.end}`),
      );
      label.style.setProperty("--c", colourOf(selected.type));
      const remove = el("button", "hs-delete", "× Delete");
      remove.type = "button";
      remove.disabled = disabled;
      remove.title = "Delete this span (Delete or Backspace)";
      parts.push(label, remove);
    } else if (!disabled) {
      parts.push(el("span", "hs-hint", "Drag across text or double-click a word to mark it · click a span to select it · keys 1–9, 0 pick a type"));
    }
    if (ui.pendingRev) parts.push(el("span", "hs-saving", "saving…"));
    statusEl.replaceChildren(...parts);
  }

  function render() {
    root.classList.toggle("hs-disabled", disabled);
    root.classList.toggle("hs-pending", Boolean(ui.pendingRev));
    renderTypes();
    renderText();
    renderStatus();
  }

  // ---------------------------------------------------------------- actions
  function send(spans, event) {
    const next = Math.max(ui.rev, ui.pendingRev) + 1;
    ui.spans = spans;
    ui.pendingRev = next;
    const { setStateValue, setTriggerValue } = ui.api;
    // All three land in one rerun: the widget manager flushes on the next tick.
    setStateValue("spans", spans);
    setStateValue("rev", next);
    setTriggerValue("event", { ...event, rev: next });
    clearTimeout(ui.timer);
    ui.timer = setTimeout(() => {
      // Python never answered (the page failed?): stop waiting so the annotator is not stuck.
      ui.pendingRev = 0;
      ui.spans = ui.dataSpans;
      ui.rerender?.();
    }, ACK_TIMEOUT_MS);
  }

  function perform(action) {
    // Returns true when something was sent to Python.
    const spans = ui.spans;
    if (action.kind === "add") {
      const span = action.span;
      const existing = spans.find((s) => sameSpan(s, span));
      if (existing) {
        ui.selected = existing;
        return false;
      }
      ui.selected = span;
      send([...spans, span], { action: "add", span });
      return true;
    }
    const index = spans.findIndex((s) => sameSpan(s, action.target));
    if (index === -1) return false;
    const old = spans[index];
    if (action.kind === "retype") {
      const span = { ...old, type: action.type };
      if (old.type === action.type || spans.some((s) => sameSpan(s, span))) return false;
      ui.selected = span;
      send(spans.map((s, i) => (i === index ? span : s)), { action: "retype", span, previous: old });
      return true;
    }
    if (action.kind === "delete") {
      ui.selected = null;
      send(spans.filter((_, i) => i !== index), { action: "delete", span: old });
      return true;
    }
    return false;
  }

  function act(action) {
    if (disabled) return;
    if (ui.pendingRev) {
      ui.queue.push(action);
      return;
    }
    perform(action);
    render();
  }

  function drainQueue() {
    while (!ui.pendingRev && ui.queue.length) perform(ui.queue.shift());
  }

  // ---------------------------------------------------------------- selection → span
  function boundaryU16(node, offset, outside) {
    if (node === textEl || textEl.contains(node)) {
      const range = document.createRange();
      range.setStart(textEl, 0);
      range.setEnd(node, offset);
      return range.toString().length;
    }
    if (node.getRootNode() !== textEl.getRootNode()) return outside;
    const position = textEl.compareDocumentPosition(node);
    if (position & Node.DOCUMENT_POSITION_PRECEDING) return 0;
    if (position & Node.DOCUMENT_POSITION_FOLLOWING) return text.length;
    return outside;
  }

  function selectedRange() {
    const selection = document.getSelection();
    if (!selection) return null;
    if (typeof selection.getComposedRanges === "function" && parentElement instanceof ShadowRoot) {
      const ranges = selection.getComposedRanges({ shadowRoots: [parentElement] });
      return ranges.length ? ranges[0] : null;
    }
    const scoped = typeof parentElement.getSelection === "function" ? parentElement.getSelection() : selection;
    return scoped && scoped.rangeCount ? scoped.getRangeAt(0) : null;
  }

  function spanFromSelection() {
    const range = selectedRange();
    if (!range || range.collapsed) return null;
    let s = boundaryU16(range.startContainer, range.startOffset, 0);
    let e = boundaryU16(range.endContainer, range.endOffset, text.length);
    if (s > e) [s, e] = [e, s];
    while (s < e && WHITESPACE.test(text[s])) s += 1;
    while (e > s && WHITESPACE.test(text[e - 1])) e -= 1;
    // Never cut an emoji (a surrogate pair) in half.
    if (s > 0 && s < text.length && /[\uDC00-\uDFFF]/u.test(text[s])) s -= 1;
    if (e > 0 && e < text.length && /[\uDC00-\uDFFF]/u.test(text[e])) e += 1;
    if (s >= e) return null;
    return { start: codePointsBefore(text, s), end: codePointsBefore(text, e), type: ui.activeType };
  }

  function clearBrowserSelection() {
    const selection = document.getSelection();
    if (selection) selection.removeAllRanges();
  }

  function selectAt(target) {
    const seg = target instanceof Element ? target.closest(".hs-seg") : null;
    const covering = seg?.dataset.spans ? seg.dataset.spans.split(" ").map(Number) : [];
    if (!covering.length) {
      const changed = ui.selected !== null;
      ui.selected = null;
      return changed;
    }
    // Shortest first; clicking again on the same place steps through the overlapping spans.
    const candidates = covering.map((i) => ui.spans[i]).sort((a, b) => a.end - a.start - (b.end - b.start) || a.start - b.start);
    const current = candidates.findIndex((s) => sameSpan(s, ui.selected));
    ui.selected = candidates[(current + 1) % candidates.length];
    return true;
  }

  // ---------------------------------------------------------------- events
  textEl.addEventListener(
    "mousedown",
    (event) => {
      armed = event.button === 0 && !disabled;
    },
    { signal },
  );

  window.addEventListener(
    "mouseup",
    (event) => {
      if (!armed) return;
      armed = false;
      const span = spanFromSelection();
      if (span) {
        clearBrowserSelection();
        act({ kind: "add", span });
      } else {
        const target = event.composedPath()[0];
        // Re-draw only on a change, so the first click of a double-click keeps its text nodes.
        if (textEl.contains(target) && selectAt(target)) render();
      }
      root.focus({ preventScroll: true });
    },
    { signal },
  );

  typesBar.addEventListener(
    "click",
    (event) => {
      const button = event.target instanceof Element ? event.target.closest(".hs-type") : null;
      if (!button || disabled) return;
      chooseType(Number(button.dataset.index));
    },
    { signal },
  );

  statusEl.addEventListener(
    "click",
    (event) => {
      if (event.target instanceof Element && event.target.closest(".hs-delete") && ui.selected) {
        act({ kind: "delete", target: ui.selected });
        root.focus({ preventScroll: true });
      }
    },
    { signal },
  );

  function chooseType(index) {
    const type = types[index];
    if (type === undefined) return;
    if (ui.selected) {
      act({ kind: "retype", target: ui.selected, type });
    } else {
      ui.activeType = type;
      render();
    }
  }

  root.addEventListener(
    "keydown",
    (event) => {
      if (disabled || event.ctrlKey || event.metaKey || event.altKey) return;
      let handled = true;
      if (/^[0-9]$/.test(event.key)) {
        const index = event.key === "0" ? 9 : Number(event.key) - 1;
        if (index < types.length) chooseType(index);
        else handled = false;
      } else if ((event.key === "Delete" || event.key === "Backspace") && ui.selected) {
        act({ kind: "delete", target: ui.selected });
      } else if (event.key === "Escape" && ui.selected) {
        ui.selected = null;
        render();
      } else {
        handled = false;
      }
      if (handled) {
        // Keep the key from page-level shortcuts (a page may bind 1/2/3 to buttons).
        event.preventDefault();
        event.stopPropagation();
      }
    },
    { signal },
  );

  ui.rerender = () => {
    if (signal.aborted) return;
    drainQueue();
    render();
  };
  if (!ui.pendingRev) clearTimeout(ui.timer);
  drainQueue();
  render();

  return () => controller.abort();
}
