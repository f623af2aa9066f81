// Keys typed while a page's code is still loading, before the keyboard of `unit_keys.js` is attached.
// On a first visit Streamlit loads the code of each kind of element only when it is first drawn; until
// then the element is a placeholder: the sentences may be read while their buttons, and the script that
// holds keys for them, are not there yet. A key typed then reached no handler and was lost without a
// word. This listener, drawn before the unit, notes each such key that nothing took; `unit_keys.js`
// takes them as held keys once it is attached, and presses them, in the order typed, once the page is
// drawn.
(() => {
  if (window.spanlightEarlyKeys) return;
  const early = (window.spanlightEarlyKeys = { keys: [] });
  const ARROWS = new Set(["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "PageUp", "PageDown"]);
  document.addEventListener(
    "keydown",
    (event) => {
      if (window.spanlightUnitKeys?.listening) return; // the page's keyboard is there: it decides
      if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
      if (!(event.key.length === 1 && event.key !== " ") && !ARROWS.has(event.key)) return;
      const target = event.composedPath()[0];
      if (target instanceof Element && target.closest("input, textarea, select, [contenteditable='true']")) return;
      // After the event has gone its way: a key some handler took (a button already drawn) is not held.
      setTimeout(() => {
        if (!event.defaultPrevented) early.keys.push({ key: event.key, shift: event.shiftKey });
      }, 0);
    },
    { capture: true },
  );
})();
