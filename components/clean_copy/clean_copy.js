// Copying from the page gives the characters the page shows.
//
// Untrusted text is shown through Streamlit's Markdown with an invisible word joiner (U+2060) inside
// the patterns its renderer would rewrite (`render/literal_text.py`): an item id "model:v2/img" is
// drawn as "model:\u2060v2/img". A copy of it carried that joiner along, so the id pasted into a jump
// or search box found nothing, and a sentence pasted into a paper held a character nobody can see.
// This listener copies the selection without word joiners, as plain text and as HTML; a selection
// holding none is left to the browser. Mounted by every page; the listener is added once.

const JOINER = "\u2060";

function withoutJoiners(event) {
  const selection = document.getSelection();
  if (!selection || selection.isCollapsed || !event.clipboardData) return;
  const text = selection.toString();
  if (!text.includes(JOINER)) return;
  const holder = document.createElement("div");
  for (let k = 0; k < selection.rangeCount; k += 1) holder.append(selection.getRangeAt(k).cloneContents());
  event.clipboardData.setData("text/plain", text.replaceAll(JOINER, ""));
  event.clipboardData.setData("text/html", holder.innerHTML.replaceAll(JOINER, ""));
  event.preventDefault();
}

export default function () {
  if (window.__spanlightCleanCopy) return undefined;
  window.__spanlightCleanCopy = true;
  document.addEventListener("copy", withoutJoiners);
  return undefined;
}
