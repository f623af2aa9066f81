"""The validation report table: every cell escaped, long reasons wrapped instead of cut."""

from __future__ import annotations

from render.problem_table import problems_html

LONG = "a closing tag looks malformed: '/hallucination>' at character 47 lacks its '<' " * 3


def test_cells_are_escaped_and_whole() -> None:
    out = problems_html(
        [{"severity": "error", "file": "<b>x</b>.json", "record": "#7", "field": "tagged", "reason": LONG}]
    )
    assert "<b>x</b>" not in out and "&lt;b&gt;x&lt;/b&gt;.json" in out
    assert LONG.replace("'", "&#x27;").replace("<", "&lt;").replace(">", "&gt;") in out  # never cut
    assert "overflow-wrap:anywhere" in out and "white-space:pre-wrap" in out  # wraps in its column
    assert out.count('<td data-column="reason">') == 1


def test_no_rows_still_draws_the_header() -> None:
    out = problems_html([])
    assert "<th>reason</th>" in out and "<tbody></tbody>" in out
