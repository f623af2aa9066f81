"""Untrusted text made safe to pass to Streamlit's Markdown elements.

Dataset names, item ids, detector output, notes and URL parameters come from files, links and people.
Streamlit renders the body of ``st.markdown``/``st.caption``/``st.error``…, titles, and widget, tab and
expander labels as Markdown, so such text could otherwise become bold, a live link, or an image the
browser fetches from an outside address. ``literal`` rewrites text so that Markdown shows exactly its
characters.

Two kinds of Markdown syntax need two remedies:

* Syntax the parser reads from the source is disarmed with CommonMark's backslash escape: emphasis
  (``*``, and ``_`` where it is not inside a word), links and images (``[``/``]``), code (backticks), raw
  HTML and entities (``<``, ``&``), tables (``|``), strikethrough (``~``), maths (``$``), and at the start
  of a line headings, quotes, list markers, numbered lists and rules. Leading spaces of a line become
  character references, so an indented line stays text instead of turning into a code block.
* Rewrites that Streamlit's renderer applies to the text after escapes are resolved cannot be escaped:
  bare web and mail addresses turned into links (``https://…``, ``www.…``, ``a@b.c``), ``:emoji:`` and
  ``:material/icon:`` shortcodes, ``:colour[…]`` directives, and typographic arrows and dashes (``->``,
  ``--``, ``>=``…, standing between spaces). Those get an invisible word joiner (U+2060) inside them,
  which changes nothing on the screen but keeps the pattern from matching (and which a copy from the
  page leaves out: :mod:`components.clean_copy`).

Characters outside these constructs (CJK, emoji, other punctuation) pass unchanged, so the text stays
readable where it is shown as the Markdown source (tests, tooltips of some widgets).

``literal_code`` shows text as an inline code span instead (file names, paths): a fence longer than any
run of backticks in the text, so nothing inside is Markdown.
"""

from __future__ import annotations

import re

WORD_JOINER = "\u2060"

# Rewrites of the rendered text, each broken by a word joiner after its first group.
_JOINED = (
    # A colon before a word or a slash: shortcodes, directives, ``:material/``, ``scheme://``.
    re.compile(r"(:)(?=[\w+\-/])"),
    # ``www.`` addresses and ``user@host`` mail addresses.
    re.compile(r"(www)(?=\.)", re.IGNORECASE),
    re.compile(r"(@)(?=[\w\-])"),
    # Typographic replacements: these tokens between whitespace (or the ends of the text).
    re.compile(r"(?<!\S)([<\->~])(?=(?<=<)->(?!\S)|(?<=<)[-=](?!\S)|(?<=-)[->](?!\S)|(?<=[>~])=(?!\S))"),
)
# Always active: escapes, emphasis, links, code, HTML, entities, tables, strikethrough, maths.
_ALWAYS = re.compile(r"([\\*\[\]`<&|~$])")
# ``_`` opens or closes emphasis only where it is not between two letters or digits.
_UNDERSCORE = re.compile(r"_(?![^\W_])|(?<![^\W_])_")
# Block syntax at the start of a line (after indentation): headings, quotes, bullets, rules, setext
# underlines, and the ``1.``/``1)`` of numbered lists.
_LINE_START = re.compile(r"^([ \t]*)(?:([#>+\-=])|(\d+)([.)]))", re.MULTILINE)
_LEADING_SPACE = re.compile(r"^[ \t]+", re.MULTILINE)
_BACKTICKS = re.compile(r"`+")


def _leading_space(match: re.Match[str]) -> str:
    return "".join("&#9;" if c == "\t" else "&#32;" for c in match.group(0))


def _line_start(match: re.Match[str]) -> str:
    indent, marker, digits, delimiter = match.groups()
    return f"{indent}\\{marker}" if marker else f"{indent}{digits}\\{delimiter}"


def literal(text: object) -> str:
    """Markdown source that Streamlit displays as exactly the characters of ``text``."""
    value = str(text).replace("\r\n", "\n").replace("\r", "\n")
    for pattern in _JOINED:
        value = pattern.sub(lambda m: m.group(1) + WORD_JOINER, value)
    value = _ALWAYS.sub(r"\\\1", value)
    value = _UNDERSCORE.sub(r"\\_", value)
    value = _LINE_START.sub(_line_start, value)
    return _LEADING_SPACE.sub(_leading_space, value)


def literal_code(text: str) -> str:
    """An inline code span that Streamlit displays as exactly ``text`` (line breaks become spaces)."""
    value = " ".join(text.splitlines())
    if not value:
        return ""
    # Streamlit rewrites ``:material/`` in the whole source, code spans included.
    value = value.replace(":material/", ":" + WORD_JOINER + "material/")
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(value)), default=0) + 1)
    # CommonMark strips one space from each end when both ends are spaces; padding keeps edge backticks
    # apart from the fence and is what gets stripped.
    if value.strip(" ") and (value[0] in "` " or value[-1] in "` "):
        value = f" {value} "
    return f"{fence}{value}{fence}"


# A line break inside a figure label, written by our own code (see ``plotly_literal``).
LINE_BREAK = "\u2028"


def plotly_literal(text: str) -> str:
    """``text`` for a plotly figure (title, legend, tick, hover): its characters, never markup.

    Plotly draws a small HTML subset (``<b>``, ``<a href>``, ``<br>``…) and resolves entities in every
    label, so ``&``, ``<`` and ``>`` become entities, which it shows as the characters themselves. The
    Unicode line separator (:data:`LINE_BREAK`) is how our code asks for a break: it becomes ``<br>``.
    """
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace(LINE_BREAK, "<br>")
