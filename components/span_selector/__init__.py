"""A text-span selector: mark, retype and delete typed spans in untrusted model text.

Built on Streamlit's components v2 API (no build step, no iframe); the markup, style and script are
``selector.html``, ``selector.css`` and ``selector.js`` next to this file, read once at import.
``selector.js`` imports its DOM-free logic from sibling modules (``offsets.js``, ``spans.js``, …) so
Node can test that logic; Streamlit takes one inline script, which :func:`assemble_script` joins.

The page owns the span list: pass it in ``spans`` on every run and the selector shows exactly that.
Each user action (add, retype, delete) reaches Python once, as :attr:`SpanSelection.event`, together
with the full list after the action. Save it in the ``on_change`` callback, which runs before the page
script, so the page passes the saved list back on the same run::

    def save_action():
        selection = selection_from_state("spans-42")
        repo.apply_span_action(item_id, selection.event)   # one transaction per action

    span_selector(text, repo.spans(item_id), taxonomy, key="spans-42", on_change=save_action)

An undo button simply passes the previous list; the selector redraws it. Without a callback, read the
return value, save, and call ``st.rerun()`` (otherwise the selector shows the list passed in, which
does not have the new span yet).

Offsets are Python code-point indices (the script converts from the browser's UTF-16 units).

In ``AppTest`` the script never runs. :func:`components.span_selector.apptest.simulate_action`
sends what the browser would send for one action, so the page's ``on_change`` runs as in a real
session. To only preset the state (no event, no callback), assign it and rerun::

    at.session_state["spans-42"] = {"spans": [{"start": 2, "end": 5, "type": "Object"}], "rev": 1}
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st

from render.span_html import PALETTE, colour_for, type_colours

_HERE = Path(__file__).parent
COMPONENT_NAME = "spanlight_span_selector"
ACTIONS = ("add", "retype", "delete")

_LOCAL_IMPORT = re.compile(r'^import \{[^}]*\} from "\./([\w-]+\.js)";\n', re.MULTILINE)
_ANY_IMPORT = re.compile(r"^import\b", re.MULTILINE)
_NAMED_EXPORT = re.compile(r"^export (?!default\b)", re.MULTILINE)


def assemble_script(entry: Path) -> str:
    """Join ``entry`` and the sibling modules it imports into one module script.

    Streamlit loads inline JavaScript from a blob URL, where ``import "./x.js"`` cannot resolve. Each
    module imported with ``import { … } from "./x.js";`` is inlined once, before its importers, with
    its ``export`` keywords dropped; the entry keeps its ``export default``. All modules then share
    one scope, so their top-level names must not clash (a clash is a syntax error in the browser).
    """
    parts: list[str] = []
    seen: set[Path] = set()

    def add(path: Path) -> None:
        if path in seen:
            return
        seen.add(path)
        source = path.read_text(encoding="utf-8")
        for name in _LOCAL_IMPORT.findall(source):
            add(path.parent / name)
        body = _LOCAL_IMPORT.sub("", source)
        if _ANY_IMPORT.search(body):
            raise ValueError(f'{path.name}: only `import {{ … }} from "./module.js";` can be assembled')
        parts.append(body if path == entry else _NAMED_EXPORT.sub("", body))

    add(entry)
    return "\n".join(parts)


_mount = st.components.v2.component(
    COMPONENT_NAME,
    html=(_HERE / "selector.html").read_text(encoding="utf-8"),
    css=(_HERE / "selector.css").read_text(encoding="utf-8"),
    js=assemble_script(_HERE / "selector.js"),
)


@dataclass(frozen=True)
class SpanSelection:
    """What the selector reports on one run.

    ``spans``: the full list ``[{"start": int, "end": int, "type": str | None}]`` in code points —
    after the user's action on a run with an ``event``, else the list the page passed in.

    ``event``: ``None``, or the one action that caused this run::

        {"action": "add" | "retype" | "delete", "span": {...}, "rev": int}

    ``span`` is the added span, the retyped span with its new type, or the deleted span; a retype
    also carries ``"previous"`` (the span before). ``rev`` increases by one per action.
    """

    spans: list[dict[str, Any]] = field(default_factory=list)
    event: dict[str, Any] | None = None


def _plain_span(span: Any, text_length: int) -> dict[str, Any]:
    if isinstance(span, Mapping):
        start, end, type_ = span.get("start"), span.get("end"), span.get("type")
    else:
        start, end, type_ = span.start, span.end, getattr(span, "type", None)
    if not (isinstance(start, int) and isinstance(end, int)):
        raise TypeError(f"span offsets must be integers, got {start!r}, {end!r}")
    if not 0 <= start < end <= text_length:
        raise ValueError(f"span {start}–{end} is empty or outside a text of length {text_length}")
    if type_ is not None and not isinstance(type_, str):
        raise TypeError(f"span type must be a string or None, got {type_!r}")
    return {"start": start, "end": end, "type": type_}


def _event(raw: Any) -> dict[str, Any] | None:
    if isinstance(raw, Mapping) and raw.get("action") in ACTIONS and isinstance(raw.get("span"), Mapping):
        return dict(raw)
    return None


def selection_from_state(key: str) -> SpanSelection | None:
    """Read the selector's last report from ``st.session_state[key]``; for ``on_change`` callbacks.

    Returns ``None`` before the user's first action.
    """
    state = st.session_state.get(key)
    if not isinstance(state, Mapping) or not isinstance(state.get("spans"), list):
        return None
    return SpanSelection(spans=[dict(s) for s in state["spans"]], event=_event(state.get("event")))


def _noop() -> None:
    return None


def span_selector(
    text: str,
    spans: Sequence[Any],
    types: Sequence[str],
    *,
    key: str,
    on_change: Callable[[], None] | None = None,
    active_type: str | None = None,
    disabled: bool = False,
    disabled_why: str = "",
    colours: Mapping[str, str] | None = None,
    char_precision: bool = False,
) -> SpanSelection:
    """Show ``text`` with ``spans`` and let the user add, retype and delete typed spans.

    Parameters
    ----------
    text : the untrusted text; shown literally (never parsed as HTML or Markdown).
    spans : the current spans — mappings with ``start``/``end``/``type`` or records with those
        attributes; code-point offsets, ``start < end``.
    types : the span types offered, in taxonomy order; keys 1–9, 0, then Q, W, E … pick them.
    key : the widget key (required); the browser's state is ``st.session_state[key]``.
    on_change : called once per user action, before the script reruns; read the action with
        :func:`selection_from_state`.
    active_type : the type new spans get (default: the first type). The user can switch it.
    disabled : show the spans read-only: no type shows as picked, and the type buttons are drawn off.
    disabled_why : with ``disabled``, why (said on each type button): the picker otherwise still looked
        as if new spans would get the picked type.
    colours : type → ``#RRGGBB``; default :func:`render.span_html.type_colours` of ``types``.
    char_precision : a selection made with Alt held keeps its exact characters; otherwise (and by
        default) every selection snaps to the whole words it touches, as MHALO scores them.
    """
    plain = [_plain_span(span, len(text)) for span in spans]
    types = list(types)
    if active_type is not None and active_type not in types:
        raise ValueError(f"active_type {active_type!r} is not one of the types")
    palette = type_colours(types)
    if colours:
        palette.update({name: value for name, value in colours.items() if _is_hex_colour(value)})
    for span in plain:
        if span["type"] is not None and span["type"] not in palette:
            palette[span["type"]] = colour_for(span["type"])
    stored = st.session_state.get(key)
    rev = stored.get("rev") if isinstance(stored, Mapping) else None
    data = {
        "text": text,
        "spans": plain,
        "types": types,
        "colours": palette,
        "active_type": active_type,
        "disabled": bool(disabled),
        "disabled_why": str(disabled_why) if disabled else "",
        "char_precision": bool(char_precision),
        "rev": rev if isinstance(rev, int) else 0,
    }
    result = _mount(
        key=key,
        data=data,
        on_spans_change=_noop,
        on_rev_change=_noop,
        on_event_change=on_change or _noop,
    )
    event = _event(result.get("event"))
    if event is not None and isinstance(result.get("spans"), list):
        return SpanSelection(spans=[dict(s) for s in result["spans"]], event=event)
    return SpanSelection(spans=plain, event=None)


_TYPE_KEY_LETTERS = "qwertyiop"  # keys.js: after 1–9 and 0, the row below the digits, U (Undo) left out


def type_keys(count: int) -> list[str]:
    """The keys that pick the first ``count`` span types, as ``keys.js`` reads them ("1" … "9", "0",
    "q", "w" …): for a page to say why they do nothing while the selector is disabled."""
    keys = [str(n) for n in range(1, 10)] + ["0"] + list(_TYPE_KEY_LETTERS)
    return keys[: max(count, 0)]


def _is_hex_colour(value: Any) -> bool:
    return (
        isinstance(value, str)
        and len(value) == 7
        and value[0] == "#"
        and all(c in "0123456789abcdefABCDEF" for c in value[1:])
    )


__all__ = ["ACTIONS", "PALETTE", "SpanSelection", "selection_from_state", "span_selector", "type_keys"]
