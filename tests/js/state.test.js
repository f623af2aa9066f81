import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  createState,
  drainQueue,
  perform,
  pickType,
  readData,
  receive,
  request,
  shown,
  stopWaiting,
  typeQueuedSpan,
} from "../../components/span_selector/state.js";

const TYPES = ["Object", "OCR"];
const span = (start, end, type = "Object") => ({ start, end, type });

function fromPython(overrides = {}) {
  return readData({ text: "two red balls", spans: [], types: TYPES, active_type: null, rev: 0, ...overrides });
}

function started(overrides) {
  const ui = createState();
  receive(ui, fromPython(overrides));
  return ui;
}

describe("readData", () => {
  test("fills in what Python left out", () => {
    assert.deepEqual(readData({}), {
      text: "",
      spans: [],
      types: [],
      colours: {},
      activeType: undefined,
      disabled: false,
      disabledWhy: "",
      charPrecision: false,
      rev: 0,
    });
  });
});

describe("receive", () => {
  test("shows Python's spans; new spans get the first type unless Python names one", () => {
    const ui = started({ spans: [span(0, 3)] });
    assert.deepEqual(ui.spans, [span(0, 3)]);
    assert.equal(ui.activeType, "Object");
    receive(ui, fromPython({ active_type: "OCR" }));
    assert.equal(ui.activeType, "OCR");
  });

  test("keeps the user's type choice until Python names another one", () => {
    const ui = started({ active_type: "Object" });
    ui.activeType = "OCR";
    receive(ui, fromPython({ active_type: "Object" }));
    assert.equal(ui.activeType, "OCR");
  });

  test("a type that is no longer offered falls back to the first", () => {
    const ui = started();
    ui.activeType = "OCR";
    receive(ui, fromPython({ types: ["Object"] }));
    assert.equal(ui.activeType, "Object");
  });

  test("drops the selection when the selected span is gone", () => {
    const ui = started({ spans: [span(0, 3)] });
    ui.selected = span(0, 3);
    receive(ui, fromPython({ spans: [span(0, 3)] }));
    assert.deepEqual(ui.selected, span(0, 3));
    receive(ui, fromPython({ spans: [] }));
    assert.equal(ui.selected, null);
  });

  test("another text forgets the selection and anything in flight", () => {
    const ui = started();
    perform(ui, { kind: "add", span: span(0, 3) });
    ui.queue.push({ kind: "add", span: span(4, 7) });
    receive(ui, fromPython({ text: "another text" }));
    assert.equal(ui.pendingRev, 0);
    assert.deepEqual(ui.queue, []);
    assert.equal(ui.selected, null);
    assert.deepEqual(ui.spans, []);
  });

  test("a drag survives a new run on the same text but not another text", () => {
    const ui = started();
    ui.dragging = true;
    receive(ui, fromPython({ spans: [span(0, 3)], rev: 1 }));
    assert.equal(ui.dragging, true, "the button is still down on the same words");
    receive(ui, fromPython({ text: "another text" }));
    assert.equal(ui.dragging, false);
  });
});

describe("the exchange with Python", () => {
  test("an action sends the new list with the next revision and waits for it", () => {
    const ui = started({ rev: 4 });
    const message = perform(ui, { kind: "add", span: span(0, 3) });
    assert.deepEqual(message, {
      spans: [span(0, 3)],
      rev: 5,
      event: { action: "add", span: span(0, 3), rev: 5 },
    });
    assert.equal(ui.pendingRev, 5);
    assert.deepEqual(ui.spans, [span(0, 3)]);
  });

  test("until Python answers, its older list does not replace the user's", () => {
    const ui = started({ rev: 4 });
    perform(ui, { kind: "add", span: span(0, 3) });
    receive(ui, fromPython({ rev: 4 }));
    assert.deepEqual(ui.spans, [span(0, 3)]);
    assert.equal(ui.pendingRev, 5);
  });

  test("once Python answers, its list is shown, even when it differs (an undo)", () => {
    const ui = started({ rev: 4 });
    perform(ui, { kind: "add", span: span(0, 3) });
    receive(ui, fromPython({ rev: 5, spans: [span(8, 13)] }));
    assert.equal(ui.pendingRev, 0);
    assert.deepEqual(ui.spans, [span(8, 13)]);
  });

  test("an action that changes nothing sends nothing", () => {
    const ui = started({ spans: [span(0, 3)] });
    assert.equal(perform(ui, { kind: "add", span: span(0, 3) }), null);
    assert.deepEqual(ui.selected, span(0, 3), "it selects the span that is already there");
    assert.equal(perform(ui, { kind: "delete", target: span(4, 7) }), null);
    assert.equal(ui.pendingRev, 0);
  });

  test("queued actions replay after the answer, one message at a time", () => {
    const ui = started({ rev: 1 });
    perform(ui, { kind: "add", span: span(0, 3) });
    ui.queue.push({ kind: "add", span: span(0, 3) }, { kind: "add", span: span(4, 7) }, { kind: "add", span: span(8, 13) });
    assert.equal(drainQueue(ui), null, "nothing replays while waiting");
    receive(ui, fromPython({ rev: 2, spans: [span(0, 3)] }));
    const message = drainQueue(ui);
    assert.deepEqual(message.spans, [span(0, 3), span(4, 7)], "the duplicate add was skipped");
    assert.equal(message.rev, 3);
    assert.equal(ui.queue.length, 1);
    assert.equal(drainQueue(ui), null);
  });

  test("giving up on an answer shows Python's last list again", () => {
    const ui = started({ spans: [span(8, 13)] });
    perform(ui, { kind: "delete", target: span(8, 13) });
    assert.deepEqual(ui.spans, []);
    stopWaiting(ui);
    assert.equal(ui.pendingRev, 0);
    assert.deepEqual(ui.spans, [span(8, 13)]);
  });
});

describe("typeQueuedSpan", () => {
  test("a type key right after a mark that waits in the queue types that span, not the next one", () => {
    const ui = started();
    perform(ui, { kind: "add", span: span(0, 3) }); // sent; its answer not in yet
    ui.selected = null; // the double-click's first click on plain text deselected
    ui.queue.push({ kind: "add", span: span(4, 7) });
    assert.equal(typeQueuedSpan(ui, "OCR"), true);
    assert.equal(ui.activeType, "Object"); // the next span's type is unchanged
    receive(ui, fromPython({ spans: [span(0, 3)], rev: 1 }));
    const message = drainQueue(ui);
    assert.deepEqual(message.spans, [span(0, 3), span(4, 7, "OCR")]);
  });

  test("with nothing queued the key is not taken here", () => {
    const ui = started();
    assert.equal(typeQueuedSpan(ui, "OCR"), false);
    ui.queue.push({ kind: "delete", target: span(0, 3) });
    assert.equal(typeQueuedSpan(ui, "OCR"), false);
  });
});

describe("keys pressed before a save is answered act on what the user sees", () => {
  // "yellow" and "blue" of "a yellow star and a blue circle"; types by key: 1 Object, 2 OCR.
  const TEXT = "a yellow star and a blue circle";
  const yellow = (type = "Object") => span(2, 8, type);
  const blue = (type = "Object") => span(20, 24, type);
  const answer = (ui, spans) => receive(ui, fromPython({ text: TEXT, spans, rev: ui.pendingRev }));

  function quickBurst() {
    // Mark yellow (sent, not answered), type it, click plain text and mark blue (the double-click),
    // type blue, Delete: all before the first answer.
    const ui = started({ text: TEXT });
    const sent = [request(ui, { kind: "add", span: yellow() })];
    sent.push(pickType(ui, "OCR"));
    sent.push(request(ui, { kind: "select", target: null }));
    sent.push(request(ui, { kind: "add", span: blue() }));
    sent.push(pickType(ui, "OCR"));
    assert.deepEqual(shown(ui), { spans: [yellow("OCR"), blue("OCR")], selected: blue("OCR") });
    sent.push(request(ui, { kind: "delete", target: shown(ui).selected }));
    return { ui, sent: sent.filter(Boolean) };
  }

  test("the newest mark is shown selected, and Delete removes it, not the span selected before", () => {
    const { ui, sent } = quickBurst();
    assert.deepEqual(shown(ui), { spans: [yellow("OCR")], selected: null });
    // Python answers each save in turn; the queue replays one message at a time.
    let stored = sent.length === 1 ? sent[0].spans : null;
    assert.deepEqual(stored, [yellow()]);
    const events = [sent[0].event.action];
    for (;;) {
      answer(ui, stored);
      const message = drainQueue(ui);
      if (!message) break;
      stored = message.spans;
      events.push(`${message.event.action} ${message.event.span.start}-${message.event.span.type}`);
    }
    assert.deepEqual(events, ["add", "retype 2-OCR", "add 20-OCR", "delete 20-OCR"]);
    assert.deepEqual(ui.spans, [yellow("OCR")]);
    assert.equal(ui.selected, null);
  });

  test("a click that selects another span while a save waits moves what the next key acts on", () => {
    const ui = started({ text: TEXT, spans: [yellow()] });
    perform(ui, { kind: "add", span: blue() }); // sent; blue selected
    request(ui, { kind: "select", target: yellow() });
    assert.equal(typeQueuedSpan(ui, "OCR"), false, "the key is for yellow, not the mark before the click");
    pickType(ui, "OCR");
    assert.deepEqual(shown(ui), { spans: [yellow("OCR"), blue()], selected: yellow("OCR") });
    request(ui, { kind: "select", target: null }); // Escape
    assert.equal(shown(ui).selected, null);
    pickType(ui, "OCR"); // nothing selected: new spans get the type
    assert.equal(ui.activeType, "OCR");
    answer(ui, [yellow(), blue()]);
    const message = drainQueue(ui);
    assert.deepEqual(message.event, { action: "retype", span: yellow("OCR"), previous: yellow(), rev: 2 });
    answer(ui, message.spans);
    assert.equal(drainQueue(ui), null);
    assert.equal(ui.selected, null, "the Escape replayed after the retype");
  });

  test("Backspace on a mark of a span already there deletes that span, and a type key retypes it", () => {
    const ui = started({ text: TEXT, spans: [blue()] });
    perform(ui, { kind: "add", span: yellow() }); // sent
    request(ui, { kind: "add", span: blue() }); // marking blue again selects the one stored
    assert.equal(typeQueuedSpan(ui, "OCR"), false, "no new span to type: a retype instead");
    pickType(ui, "OCR");
    assert.deepEqual(shown(ui).selected, blue("OCR"));
    request(ui, { kind: "delete", target: shown(ui).selected });
    assert.deepEqual(shown(ui), { spans: [yellow()], selected: null });
  });
});
