"""Untrusted text in Markdown: every construct is disarmed, and the characters shown are the text's own."""

from __future__ import annotations

import re

import pytest

from render.literal_text import WORD_JOINER, literal, literal_code
from tests.hostile_store import HOSTILE, shown


def unescaped(source: str, chars: str) -> list[str]:
    """The characters of ``chars`` in ``source`` not preceded by an escaping backslash."""
    return re.findall(r"(?<!\\)(?:\\\\)*([" + re.escape(chars) + "])", source)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("**b**", r"\*\*b\*\*"),
        ("_i_", r"\_i\_"),
        ("[l](https://x)", "\\[l\\](https:" + WORD_JOINER + "//x)"),
        ("![p](https://x/p.png)", "!\\[p\\](https:" + WORD_JOINER + "//x/p.png)"),
        ("# h", r"\# h"),
        ("> q", r"\> q"),
        ("- l", r"\- l"),
        ("+ l", r"\+ l"),
        ("1. l", r"1\. l"),
        ("2) l", r"2\) l"),
        ("`code`", r"\`code\`"),
        ("<b>x</b>", r"\<b>x\</b>"),
        ("&amp;", r"\&amp;"),
        (":smile:", ":" + WORD_JOINER + "smile:"),
        (":material/home:", ":" + WORD_JOINER + "material/home:"),
        (":red[x]", ":" + WORD_JOINER + r"red\[x\]"),
        ("$x$", r"\$x\$"),
        ("~~s~~", r"\~\~s\~\~"),
        ("|a|b|", r"\|a\|b\|"),
        ("a\\b", r"a\\b"),
        ("    indented", "&#32;&#32;&#32;&#32;indented"),
        ("title\n===", "title\n\\==="),
        ("---", r"\---"),
    ],
)
def test_each_markdown_construct_is_escaped(text: str, expected: str) -> None:
    assert literal(text) == expected
    assert shown(literal(text)) == text


@pytest.mark.parametrize(
    "text",
    [
        "www.evil.example",
        "see https://evil.example/x and http://b.example",
        "mail me@evil.example",
        "a -> b <-> c <- d -- e >= f <= g ~= h",
        "the :streamlit: logo",
    ],
)
def test_rewrites_of_the_rendered_text_are_broken_invisibly(text: str) -> None:
    source = literal(text)
    assert WORD_JOINER in source
    assert shown(source) == text
    for pattern in (
        r"https?://",
        r"www\.",
        r"@[\w-]",
        r"(^|\s)(<->|->|<-|--|>=|<=|~=)(\s|$)",
        r":[\w+-][\w_+-]*:",
    ):
        assert not re.search(pattern, source)


def test_hostile_text_keeps_no_live_link_or_image() -> None:
    source = literal(HOSTILE)
    assert "](https://" not in source and "](" not in source.replace("\\](", "")
    assert unescaped(source, "*[]") == []
    assert shown(source) == HOSTILE


def test_ordinary_text_stays_readable() -> None:
    for text in (
        "pages-test",
        "F1_IoU and F1_M (%)",
        "Fleiss' kappa",
        "subset: shapes",
        "Spanlight demo (synthetic)",
    ):
        assert literal(text) == text


def test_emoji_cjk_and_other_scripts_pass_unchanged() -> None:
    text = "猫が好き 😀 Ünïcödé — ½ · “quoted”"
    assert literal(text) == text


def test_shortcodes_never_meet_streamlits_source_checks() -> None:
    # Streamlit loads its emoji plugin when the source holds ``:word:`` and rewrites ``:material/``.
    source = literal("a :smile: b :material/home: c :+1:")
    assert not re.search(r":(?!material\/|streamlit:)[\w+-][\w_+-]*:", source)
    assert ":material/" not in source


def test_every_line_is_protected() -> None:
    text = "first\n# second\n  - third\n\t4. fourth\r\n> fifth"
    source = literal(text)
    assert source.splitlines()[1:] == [r"\# second", r"&#32;&#32;\- third", r"&#9;4\. fourth", r"\> fifth"]
    assert shown(source) == text.replace("\r\n", "\n")


def test_non_strings_are_shown_as_their_text() -> None:
    assert literal(ValueError("bad *value*")) == r"bad \*value\*"
    assert literal(3) == "3"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("missing-4.png", "`missing-4.png`"),
        ("a`b", "``a`b``"),
        ("`x`", "`` `x` ``"),
        ("**b** [l](https://x)", "`**b** [l](https://x)`"),
        (" lead", "`  lead `"),
        ("two\nlines", "`two lines`"),
        (":material/home:", "`:" + WORD_JOINER + "material/home:`"),
        ("", ""),
    ],
)
def test_literal_code_fences_the_text(text: str, expected: str) -> None:
    assert literal_code(text) == expected
