"""A validation report as an HTML table whose long cells wrap: the reason is what the user reads.

The data grid shows each cell on one line, so a reason of two hundred characters was cut after the
first forty. Every cell comes from a file (names, record ids, field names, reasons quoting the file's
text) and is escaped here; nothing in it is read as HTML or Markdown.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

COLUMNS = ("severity", "file", "record", "field", "reason")
# Narrow columns for the short cells; the reason takes the rest of the width and wraps.
_WIDTHS = {"severity": "6em", "file": "13%", "record": "8em", "field": "19%"}

_STYLE = (
    "<style>"
    ".sl-problems{max-height:28rem;overflow-y:auto;border:1px solid rgba(49,51,63,.2);border-radius:.5rem}"
    ".sl-problems table{width:100%;border-collapse:collapse;table-layout:fixed;font-size:.875rem}"
    ".sl-problems th{position:sticky;top:0;background:#f7f7f9;text-align:left;font-weight:600}"
    ".sl-problems th,.sl-problems td{padding:.35rem .6rem;vertical-align:top;"
    "border-bottom:1px solid rgba(49,51,63,.1);overflow-wrap:anywhere;white-space:pre-wrap}"
    ".sl-problems td[data-column=severity]{white-space:nowrap}"
    "</style>"
)


def _cell(column: str, row: Mapping[str, str]) -> str:
    return html.escape(str(row.get(column, "")))


def problems_html(rows: Sequence[Mapping[str, str]], columns: Sequence[str] = COLUMNS) -> str:
    """The rows (``column -> text``) as an escaped, wrapping table with a sticky header."""
    head = "".join(
        f'<th style="width:{_WIDTHS[c]}">{html.escape(c)}</th>'
        if c in _WIDTHS
        else f"<th>{html.escape(c)}</th>"
        for c in columns
    )
    body = "".join(
        "<tr>"
        + "".join(f'<td data-column="{html.escape(c)}">{_cell(c, row)}</td>' for c in columns)
        + "</tr>"
        for row in rows
    )
    return f'{_STYLE}<div class="sl-problems"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
