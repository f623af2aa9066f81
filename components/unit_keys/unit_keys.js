// The keyboard around an annotation page's current unit: keep it in view, reach its fields by key,
// list the page's keys on `?`, and hold a key pressed while the page still answers the one before.
//
// Streamlit mounts this once per page run of the unit (no iframe): `data.current` is the CSS class of
// the current unit's container, `data.fields` maps a key to the accessible name of a field inside it
// (an "Error type" box, a claim's "Type"), looked for first in `data.recent` (the unit labeled by the
// last key, which the cursor has left), `data.keys` lists [key, what it does, why it does nothing now
// or ""] for the overlay, `data.release` names boxes that give the keys back after Enter,
// `data.openers` maps a key to the label of a popover it opens (its first field then takes the keys),
// `data.unavailable` maps a key to why it does nothing now ("*": any key whose button is disabled),
// said when it is pressed; `data.settled` is false on a unit's run that a run of the whole page follows.
// A key of the page never goes unanswered: one that finds no field, no popover or no enabled button
// says why in a notice at the foot of the window.
// Every text is written with `textContent`, never parsed as HTML.

const OVERLAY_ID = "spanlight-keys-overlay";
const NOTICE_ID = "spanlight-key-notice";
const NOTICE_MS = 8000; // how long a notice stays up to be read (nothing waits for it)
const ANY_KEY = "*";
const SETTLE_FRAMES = 120; // ~2 s of frames: the current unit is drawn, and rows above it settle
const MARGIN_PX = 16; // room kept between the current unit and the window's edges

function typing(event) {
  // A key typed into a field belongs to the field.
  const target = event.composedPath()[0];
  if (!(target instanceof Element)) return false;
  return target.closest("input, textarea, select, [contenteditable='true'], [role='combobox']") !== null;
}

function unitOf(className) {
  // The container of that class drawn by the newest run (not a stale element of the run before).
  if (!className) return null;
  const found = [...document.getElementsByClassName(className)].filter(
    (element) => !element.closest('[data-stale="true"]'),
  );
  return found.length ? found[found.length - 1] : null;
}

function currentUnit(data) {
  return unitOf(data.current);
}

function outOfView(unit) {
  // Whether part of the unit lies outside the window, or under the app's fixed header.
  const box = unit.getBoundingClientRect();
  const header = document.querySelector('[data-testid="stHeader"]')?.getBoundingClientRect().bottom ?? 0;
  return box.top < header || box.bottom > window.innerHeight;
}

function keepInView(data, signal) {
  // While the page settles (rows above the unit may still grow), scroll the current unit into view
  // whenever part of it is outside; never when it is fully visible.
  let frames = 0;
  const step = () => {
    if (signal.aborted) return;
    const unit = currentUnit(data);
    if (unit && outOfView(unit)) {
      const header = document.querySelector('[data-testid="stHeader"]')?.getBoundingClientRect().height ?? 0;
      unit.style.scrollMarginTop = `${header + MARGIN_PX}px`;
      unit.style.scrollMarginBottom = `${MARGIN_PX}px`;
      unit.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
    frames += 1;
    if (frames < SETTLE_FRAMES) requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
}

function fieldIn(unit, name) {
  if (!unit) return undefined;
  return [...unit.querySelectorAll("input, textarea")].find(
    (input) => input.getAttribute("aria-label")?.includes(name) || input.closest("[data-testid]")?.textContent?.startsWith(name),
  );
}

function focusField(data, name) {
  // Open the field named `name` of the unit just labeled, else of the current unit: a select box opens
  // its list (type to filter). The field, or null when the unit has none.
  const field = fieldIn(unitOf(data.recent), name) ?? fieldIn(currentUnit(data), name);
  if (!field) return null;
  field.scrollIntoView({ block: "nearest" });
  field.focus();
  field.select(); // what is typed replaces the shown value (and filters a select box's list)
  // Enter (pick, save) or Esc hands the keys back to the page, so labeling goes on by keyboard.
  const done = (event) => {
    if (event.key !== "Enter" && event.key !== "Escape") return;
    field.removeEventListener("keydown", done);
    setTimeout(() => field.blur(), 0);
  };
  field.addEventListener("keydown", done);
  return field;
}

function typeInto(field, typed) {
  // What was typed for a field while it could not open yet, given to it as typing (the list filters),
  // then its Enter, a frame later, once the list has followed the text.
  if (typed.text) document.execCommand("insertText", false, typed.text);
  if (!typed.enter) return;
  requestAnimationFrame(() =>
    requestAnimationFrame(() =>
      field.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", code: "Enter", keyCode: 13, bubbles: true })),
    ),
  );
}

function openPopover(label) {
  // Open the popover whose button reads `label` and put the cursor in its first field (once drawn).
  const button = [...document.querySelectorAll('[data-testid="stPopover"] button')].find(
    (found) => !found.disabled && !found.closest('[data-stale="true"]') && found.textContent.includes(label),
  );
  if (!button) return false;
  if (button.getAttribute("aria-expanded") !== "true") button.click();
  let frames = 0;
  const step = () => {
    const field = document.querySelector('[data-testid="stPopoverBody"] input, [data-testid="stPopoverBody"] textarea');
    if (field) field.focus();
    else if (++frames < SETTLE_FRAMES) requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
  return true;
}

function notice(text) {
  // Say why a key did nothing, in a live region (read out by screen readers), until the next notice or
  // NOTICE_MS later.
  let box = document.getElementById(NOTICE_ID);
  if (!box) {
    box = document.createElement("div");
    box.id = NOTICE_ID;
    box.setAttribute("role", "status");
    box.setAttribute("aria-live", "polite");
    box.style.cssText =
      "position:fixed;left:50%;bottom:1.5rem;transform:translateX(-50%);z-index:1000000;" +
      "max-width:min(42rem,90vw);padding:0.6rem 1rem;border-radius:0.5rem;background:#1f2937;color:#fff;" +
      "font-family:sans-serif;font-size:0.95rem;line-height:1.4;box-shadow:0 0.3rem 1rem rgba(0,0,0,0.25)";
    document.body.append(box);
  }
  box.textContent = text;
  box.hidden = false;
  clearTimeout(shared.noticeTimer);
  shared.noticeTimer = setTimeout(() => {
    box.hidden = true;
  }, NOTICE_MS);
}

function fieldReason(data, key, name) {
  // Why a field key found no field: the page's reason, else the field's name.
  return data?.unavailable?.[key] ?? `There is no ${name} field to open here now.`;
}

function buttonName(button) {
  return button.querySelector('[data-testid="stMarkdownContainer"]')?.textContent.trim() ?? "";
}

function keyReason(data, key) {
  // Why a key that names no enabled button does nothing: the page's reason for it, else for any disabled
  // button (an item someone else labels), else the disabled button's name.
  const own = data?.unavailable?.[key.toLowerCase()];
  if (own) return own;
  const disabled = shortcutKeys(key).map((kbd) => kbd.closest("button"));
  if (disabled.length && data?.unavailable?.[ANY_KEY]) return data.unavailable[ANY_KEY];
  const name = disabled.map(buttonName).find((found) => found);
  const shown = key.length === 1 ? key.toUpperCase() : key;
  return name ? `“${name}” (${shown}) is not available now.` : `${shown} does nothing here now.`;
}

function unanswered(data, key) {
  // A key of the page (a button's shortcut, or one the page names) that no enabled button takes now.
  if (shortcutButton(key)) return false;
  return shortcutKeys(key).length > 0 || Object.hasOwn(data.unavailable ?? {}, key.toLowerCase());
}

function closeOverlay() {
  document.getElementById(OVERLAY_ID)?.remove();
}

function showOverlay(data) {
  closeOverlay();
  const overlay = document.createElement("div");
  overlay.id = OVERLAY_ID;
  overlay.setAttribute("role", "dialog");
  overlay.setAttribute("aria-label", "Keys of this page");
  overlay.style.cssText =
    "position:fixed;inset:0;z-index:1000000;display:flex;align-items:center;justify-content:center;" +
    "background:rgba(0,0,0,0.35)";
  const panel = document.createElement("div");
  panel.style.cssText =
    "background:#fff;color:#222;border-radius:0.6rem;padding:1.2rem 1.6rem;max-height:80vh;overflow:auto;" +
    "box-shadow:0 0.5rem 2rem rgba(0,0,0,0.3);font-family:sans-serif;min-width:22rem";
  const title = document.createElement("h3");
  title.textContent = "Keys of this page";
  title.style.margin = "0 0 0.6rem 0";
  const table = document.createElement("table");
  table.style.borderCollapse = "collapse";
  const reasons = [];
  for (const [key, what, off] of data.keys) {
    const row = table.insertRow();
    if (off) {
      // A key that does nothing on this unit now (a read-only item): greyed, its reason said once below.
      row.style.opacity = "0.5";
      row.dataset.off = "true";
      if (!reasons.includes(off)) reasons.push(off);
    }
    const keyCell = row.insertCell();
    const kbd = document.createElement("kbd");
    kbd.textContent = key;
    kbd.style.cssText =
      "display:inline-block;min-width:1.4em;text-align:center;border:1px solid #bbb;border-radius:0.25rem;" +
      "padding:0 0.3em;background:#f4f4f4;font-family:monospace";
    keyCell.append(kbd);
    keyCell.style.padding = "0.15rem 0.8rem 0.15rem 0";
    row.insertCell().textContent = off ? `${what} (not available now)` : what;
  }
  const why = reasons.map((reason) => {
    const line = document.createElement("p");
    line.textContent = `Not available now: ${reason}`;
    line.style.cssText = "margin:0.8rem 0 0 0;max-width:32rem;color:#8a5a00";
    return line;
  });
  const hint = document.createElement("p");
  hint.textContent = "Esc or ? closes this list.";
  hint.style.cssText = "margin:0.8rem 0 0 0;color:#666;font-size:0.85em";
  panel.append(title, table, ...why, hint);
  overlay.append(panel);
  overlay.addEventListener("click", (event) => {
    if (event.target === overlay) closeOverlay();
  });
  document.body.append(overlay);
}

// One listener for the page's life, reading the data of the newest call: a key pressed while the
// unit is being redrawn (between one mount's end and the next) still finds it. `mounts` holds the
// mounted instances (Streamlit may call an instance again with new data before its cleanup runs,
// which it does only when the instance leaves the page).
const shared = (window.spanlightUnitKeys ??= {
  data: null,
  mounts: new Map(), // parent element -> aborts that instance's scrolling
  closing: undefined,
  listening: false,
});

function releaseBox(data, target) {
  // The box that only leads elsewhere (the jump box, presenter mode's slide list) `target` is, or null.
  if (!(target instanceof HTMLInputElement)) return null;
  return data.release?.includes(target.getAttribute("aria-label")) ? target : null;
}

function releaseAfterEnter(data, event) {
  // Enter in a box that only leads elsewhere is done with it: blur it once Streamlit has taken the
  // value, so the next key reaches the page instead of the box. Esc while such a box's list is open
  // closes the list and gives the keys back too, and goes no further: it was the page's Esc (presenter
  // mode's "Leave"), so closing the slide list left the presentation.
  const box = releaseBox(data, event.composedPath()[0]);
  if (box === null) return false;
  if (event.key === "Escape" && box.getAttribute("aria-expanded") === "true") {
    event.stopPropagation();
    event.preventDefault();
    box.blur();
    return true;
  }
  if (event.key === "Enter") setTimeout(() => box.blur(), 0);
  return false;
}

function releaseAfterPick(event) {
  // An option of such a box's list picked with the mouse leaves the cursor in the box, where → and
  // PageDown move in the box rather than step the page: blur it, so the keys are the page's again.
  const data = shared.data;
  if (!data || !(event.target instanceof Element) || !event.target.closest('[role="option"]')) return;
  const box = releaseBox(data, document.activeElement);
  if (box !== null) setTimeout(() => box.blur(), 0);
}

// Keys pressed while the page is still answering an earlier key. Streamlit merges two presses of one
// button that reach the server before its run starts into a single click, so a quick second "1" was
// lost without a word. Such a key is held here and pressed (as a click on the button it names) once
// the page is drawn again, in the order typed.
const ARROWS = { ArrowUp: "↑", ArrowDown: "↓", ArrowLeft: "←", ArrowRight: "→" };
const queue = (window.spanlightKeyQueue ??= {
  keys: [],
  awaiting: false,
  since: 0,
  draining: false,
  watching: false,
  started: false, // a run has started since the key `awaiting` stands for was let through (`watchRuns`)
});

function scriptState() {
  return document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState;
}

function shortcutKeys(key) {
  // The <kbd> hints of the buttons whose shortcut is `key` (Streamlit labels them "Shortcut 1").
  const label = `shortcut ${ARROWS[key] ?? key}`.toLowerCase();
  return [...document.querySelectorAll("kbd[aria-label]")].filter(
    (kbd) => kbd.getAttribute("aria-label").toLowerCase() === label && kbd.closest("button"),
  );
}

function shortcutButton(key) {
  // The enabled button on the page now (not a stale element of the run before) whose shortcut is `key`.
  const kbd = shortcutKeys(key).find(
    (found) => !found.closest("button").disabled && !found.closest('[data-stale="true"]'),
  );
  return kbd ? kbd.closest("button") : null;
}

// How long a key let through to its button may go unanswered before the keys behind it stop waiting.
// A click always asks for a run; on a busy machine the run has been seen to start more than a second
// later, and a key behind it then acted on the page from before (T said why on the claim before). Only
// a click whose run never draws this page's keys (one that reached no server) waits this long; a key no
// button took waits not at all (see `holdIfBusy`).
const NO_RUN_GIVE_UP_MS = 15000;

function loading() {
  // Elements whose code is still loading (a first visit): placeholders, not yet the buttons they will be.
  return document.querySelector('[data-testid="stSkeleton"]') !== null;
}

function busy() {
  // Still answering: a run goes on, an element is still loading, or the key just let through is not
  // answered yet — its run has not started, or has not handed this script its data (it may do so a frame
  // after its end). Another run meanwhile, such as a live page's poll every second, draws no keys, and
  // does not count as the answer: taken for it, the next key's click reached the server before the
  // awaited run began and Streamlit merged the two (four quick → went three slides on).
  if (scriptState() === "running" || loading()) return true;
  if (queue.awaiting && performance.now() - queue.since > NO_RUN_GIVE_UP_MS) queue.awaiting = false;
  return queue.awaiting;
}

function awaitAnswer() {
  // A key goes to its button now: the keys behind it wait for its answer (`busy`).
  queue.awaiting = true;
  queue.started = false;
  queue.since = performance.now();
}

function answered(data) {
  // This script got a run's data: that answers the awaited key when a run started after the key, and
  // the run is the page's last for now. A unit's run that asks for a run of the whole page next (the
  // item became done) says it is not settled: between the two runs the page looks idle, and a key let
  // through then merged with the run asked for, which drew the item before (N right after D).
  if (queue.started && data.settled !== false) queue.awaiting = false;
}

function watchRuns() {
  // Note each run that starts while a key waits for its answer. Every change of the state is among the
  // records, a run's start too when it ended before this looks (each record holds the value before it;
  // the next one, or the state now, the value after).
  if (queue.watching) return;
  queue.watching = true;
  new MutationObserver((records) => {
    const started = records.some((record, k) => {
      const after = k + 1 < records.length ? records[k + 1].oldValue : scriptState();
      return record.oldValue !== "running" && after === "running";
    });
    if (started && queue.awaiting) queue.started = true;
  }).observe(document.body, {
    attributes: true,
    attributeOldValue: true,
    subtree: true,
    attributeFilter: ["data-test-script-state"],
  });
}

function drain() {
  if (queue.draining) return;
  queue.draining = true;
  let idleFrames = 0;
  const step = () => {
    if (!queue.keys.length) {
      queue.draining = false;
      return;
    }
    const settled = !busy() && !document.querySelector('[data-stale="true"]');
    idleFrames = settled ? idleFrames + 1 : 0;
    if (idleFrames >= 2) {
      // the page is drawn: its buttons now act on the unit the key would have found
      idleFrames = 0;
      const next = queue.keys.shift();
      if (typeof next === "object" && next.click) {
        // a click: on the button of that name in the unit it was made in, as that unit is drawn now
        const button = buttonIn(next.click);
        if (button) {
          awaitAnswer();
          button.click();
        } else {
          notice(`“${next.click.name}” was clicked while the page was redrawn and is gone now: nothing was done.`);
        }
      } else if (typeof next === "object" && next.early) {
        // a key typed before this script was attached: a key of the page acts or says why; another
        // key (a letter the page has no use for) does nothing, as it would have
        const button = shortcutButton(next.early);
        if (button) {
          awaitAnswer();
          button.click();
        } else if (shared.data && unanswered(shared.data, next.early)) {
          notice(keyReason(shared.data, next.early));
        }
      } else if (typeof next === "object") {
        // a field key: open the field now drawn, and give it what was typed meanwhile (never to the page)
        const field = shared.data ? focusField(shared.data, next.field) : null;
        if (field) typeInto(field, next);
        else notice(fieldReason(shared.data, next.key, next.field));
      } else {
        const button = shortcutButton(next);
        if (button) {
          awaitAnswer();
          button.click();
        } else {
          notice(keyReason(shared.data, next));
        }
      }
    }
    requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
}

function listedKey(data, key) {
  // Whether the page's list of keys names `key` ("J / ↓", "E"; not a range such as "1–9").
  const shown = (ARROWS[key] ?? key).toLowerCase();
  return data.keys.some(([listed]) => listed.toLowerCase().split(/[\s,/]+/).includes(shown));
}

function adoptEarlyKeys(data) {
  // The keys typed before this script was attached, which nothing took (`early_keys.js`): held as if
  // typed now, a field key for its field. A key with Shift is no button's shortcut here.
  const early = window.spanlightEarlyKeys?.keys.splice(0) ?? [];
  for (const { key, shift } of early) {
    if (shift) continue;
    const lower = key.toLowerCase();
    if (Object.hasOwn(data.fields, lower)) queue.keys.push({ field: data.fields[lower], key: lower, text: "", enter: false });
    else queue.keys.push({ early: key });
  }
  if (queue.keys.length) {
    watchRuns();
    drain();
  }
}

function typingAhead(event) {
  // True when the key is typing for a field key still waiting in the queue (E right after 2, and then
  // "Query"): kept for that field. Without this the letters acted as the page's keys (U undid the label).
  const last = queue.keys[queue.keys.length - 1];
  if (typeof last !== "object" || !last.field || last.enter) return false;
  if (event.key === "Enter") last.enter = true;
  else if (event.key === "Escape") queue.keys.pop();
  else if (event.key === "Backspace") last.text = last.text.slice(0, -1);
  else if (event.key.length === 1) last.text += event.key;
  else return false;
  event.preventDefault();
  event.stopPropagation();
  return true;
}

function holdIfBusy(event, data) {
  // True when the key was held for later (the page is busy with an earlier one). A key with Shift is
  // no button's shortcut here: it goes its own way, as before. A field key (E) waits too: the field it
  // opens may be drawn only by the run the key before asked for.
  if (typingAhead(event)) return true;
  const key = event.key.toLowerCase();
  const field = !event.shiftKey && Object.hasOwn(data.fields, key);
  if (field && (busy() || queue.keys.length)) {
    watchRuns();
    queue.keys.push({ field: data.fields[key], key, text: "", enter: false });
    event.preventDefault();
    event.stopPropagation();
    drain();
    return true;
  }
  // A key the page names waits too, though its button is not drawn yet (3 right after 2 on triplets),
  // and so does a key the page lists while its buttons are still loading.
  const named =
    shortcutKeys(event.key).length > 0 ||
    Object.hasOwn(data.unavailable ?? {}, key) ||
    (loading() && listedKey(data, event.key));
  if (event.shiftKey || !named) return false;
  watchRuns();
  if (busy() || queue.keys.length) {
    queue.keys.push(event.key);
    event.preventDefault();
    event.stopPropagation();
    drain();
    return true;
  }
  // Let it through to its button; until its run starts, the next key waits behind it. A shortcut the
  // button took is prevented; one nothing took once the key has gone its way asks for no run.
  if (shortcutButton(event.key)) {
    awaitAnswer();
    setTimeout(() => {
      if (!event.defaultPrevented) queue.awaiting = false;
    }, 0);
  }
  return false;
}

// Clicks on the buttons that have a shortcut (the current unit's labels, Next, Undo …) wait their
// turn as keys do. The current unit's buttons label the unit current when their click arrives (what a
// key pressed before the redraw needs), so a second click on "Correct" before the page answered the
// first, as a quick double-click makes, labeled the next sentence. Held, it is made once the page is
// drawn again, on the button of the same name in the unit it was made in.
function unitClass(button) {
  // The class of the keyed container the button was drawn in ("st-key-sentence_row_0"), not the
  // button's own (its key moves from unit to unit), or null.
  const own = button.closest('[data-testid="stElementContainer"]');
  for (let node = own?.parentElement; node; node = node.parentElement) {
    const found = [...node.classList].find((name) => name.startsWith("st-key-"));
    if (found) return found;
  }
  return null;
}

function clickedName(button) {
  // What the button reads, or its key when that is its whole label (a rating scale's "3").
  const kbd = button.querySelector("kbd[aria-label]");
  return buttonName(button) || kbd.getAttribute("aria-label").replace(/^shortcut\s*/i, "");
}

function buttonIn({ unit, name }) {
  // The enabled button named `name` in the newest drawing of `unit` (the whole page when null).
  const scope = unit ? unitOf(unit) : document;
  if (!scope) return null;
  return (
    [...scope.querySelectorAll("button")].find(
      (button) => !button.disabled && !button.closest('[data-stale="true"]') && buttonName(button) === name,
    ) ?? null
  );
}

function onClick(event) {
  // A person's click (not one this script makes) on an enabled button with a shortcut: held while the
  // page answers an earlier key or click, else let through, the keys and clicks behind it waiting.
  if (!event.isTrusted || !shared.data) return;
  const target = event.composedPath()[0];
  const button = target instanceof Element ? target.closest("button") : null;
  if (!button || button.disabled || !button.querySelector("kbd[aria-label]")) return;
  watchRuns();
  if (busy() || queue.keys.length) {
    queue.keys.push({ click: { unit: unitClass(button), name: clickedName(button) } });
    event.preventDefault();
    event.stopPropagation();
    drain();
    return;
  }
  awaitAnswer();
}

function onKeyDown(event) {
  const data = shared.data;
  if (data && releaseAfterEnter(data, event)) return;
  if (!data || event.ctrlKey || event.metaKey || event.altKey || typing(event)) return;
  if (document.getElementById(OVERLAY_ID) === null && holdIfBusy(event, data)) return;
  const open = document.getElementById(OVERLAY_ID) !== null;
  const key = event.key.toLowerCase();
  if (event.key === "?" || (open && event.key === "Escape")) {
    if (open) closeOverlay();
    else showOverlay(data);
  } else if (!open && Object.hasOwn(data.fields, key)) {
    if (focusField(data, data.fields[key]) === null) notice(fieldReason(data, key, data.fields[key]));
  } else if (!open && !event.shiftKey && Object.hasOwn(data.openers ?? {}, key)) {
    if (!openPopover(data.openers[key])) notice(`“${data.openers[key]}” is not available here now.`);
  } else if (!open && !event.shiftKey && unanswered(data, event.key)) {
    notice(keyReason(data, event.key));
  } else {
    return;
  }
  event.preventDefault();
  event.stopPropagation();
}

export default function (component) {
  const { data, parentElement } = component;
  if (!data) return undefined;
  shared.data = data;
  answered(data);
  clearTimeout(shared.closing);
  if (!shared.listening) {
    // Capture phase: the page's button shortcuts must not see a key this takes.
    document.addEventListener("keydown", onKeyDown, { capture: true });
    document.addEventListener("click", releaseAfterPick, { capture: true });
    document.addEventListener("click", onClick, { capture: true });
    shared.listening = true;
  }
  adoptEarlyKeys(data);
  if (document.getElementById(OVERLAY_ID)) showOverlay(data); // an open list follows the new run
  shared.mounts.get(parentElement)?.abort(); // the previous call's scrolling gives way to this one
  const controller = new AbortController();
  shared.mounts.set(parentElement, controller);
  keepInView(data, controller.signal);
  return () => {
    controller.abort();
    if (shared.mounts.get(parentElement) === controller) shared.mounts.delete(parentElement);
    clearTimeout(shared.closing);
    // A new run of the unit mounts this again at once; a page without it lets the keys go.
    shared.closing = setTimeout(() => {
      if (shared.mounts.size > 0) return;
      shared.data = null;
      closeOverlay();
    }, 1000);
  };
}
