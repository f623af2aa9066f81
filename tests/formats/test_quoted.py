"""A value from a file, a link or a person, quoted in a message: its characters as written, with only
those that would not show as themselves escaped."""

import pytest

from formats.problems import quoted


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("MHALO", "'MHALO'"),
        ("", "''"),
        ("back\\slash", "'back\\slash'"),  # repr: 'back\\\\slash', a name nobody wrote
        ("it's", '"it\'s"'),  # a single quote inside: double quotes, as repr chooses
        ('say "hi"', "'say \"hi\"'"),
        ("both ' and \"", "'both ' and \"'"),  # repr: 'both \\' and "'
        ("C:\\data\\it's", '"C:\\data\\it\'s"'),
    ],
)
def test_the_characters_stay_as_written(text: str, shown: str) -> None:
    assert quoted(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("t2\n", "'t2\\n'"),
        ("a\tb\r", "'a\\tb\\r'"),
        ("nul\x00", "'nul\\x00'"),
        ("esc\x1b[31m", "'esc\\x1b[31m'"),
        ("join\u2060ed", "'join\\u2060ed'"),  # invisible: would read as "joined"
        ("no\u00a0break", "'no\\xa0break'"),
        ("tag\U000e0041", "'tag\\U000e0041'"),
    ],
)
def test_characters_that_would_not_show_are_escaped_as_repr_escapes_them(text: str, shown: str) -> None:
    assert quoted(text) == shown
    assert quoted(text) == repr(text)  # nothing else in these to tell the two apart


def test_names_differing_only_in_an_invisible_character_read_apart() -> None:
    assert quoted("name") != quoted("name\u200b") != quoted("name\n")


def test_printable_text_beyond_ascii_stays_as_it_is() -> None:
    assert quoted("数据集 ✓ ñ") == "'数据集 ✓ ñ'"
