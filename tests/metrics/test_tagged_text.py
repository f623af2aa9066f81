"""Parsing tagged detector output, the format check (MHALO IF) and character-to-token spans."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import follows_format, parse_tagged, token_spans

H, EH = "<hallucination>", "</hallucination>"


class TestParseTagged:
    def test_plain_tags(self):
        assert parse_tagged(f"The cap is {H}red{EH}.") == ("The cap is red.", [(11, 14)])

    def test_no_tags_means_no_spans_and_nothing_stripped(self):
        assert parse_tagged("  all fine \n") == ("  all fine \n", [])

    def test_wrapper_inner_text_is_stripped_before_markers_are_removed(self):
        output = f"Analysis: the cap is yellow.\n<Tagged_Text>\n  {H}A{EH} cap {H} is{EH} red \n</Tagged_Text>\nbye"
        text, spans = parse_tagged(output)
        assert text == "A cap  is red"
        assert spans == [(0, 1), (6, 9)]  # the span keeps its leading space: only the raw inner is stripped

    def test_only_the_first_wrapper_and_its_next_closing_are_read(self):
        output = f"{H}x{EH} <Tagged_Text>a {H}b{EH}</Tagged_Text> <Tagged_Text>c</Tagged_Text>"
        assert parse_tagged(output) == ("a b", [(2, 3)])

    def test_unclosed_wrapper_raises(self):
        with pytest.raises(ValueError, match="Tagged_Text"):
            parse_tagged(f"<Tagged_Text>{H}a{EH}")

    def test_empty_pairs_are_dropped_whitespace_pairs_are_kept(self):
        assert parse_tagged(f"a{H}{EH}b{H} {EH}c") == ("ab c", [(2, 3)])

    def test_adjacent_spans_stay_separate(self):
        assert parse_tagged(f"{H}ab{EH}{H}cd{EH}") == ("abcd", [(0, 2), (2, 4)])

    @pytest.mark.parametrize(
        ("output", "message"),
        [
            (f"{H}a {H}b{EH}{EH}", "nested"),
            (f"{H}a", "never closed"),
            (f"a{EH}", "without an opening"),
            (f"{H}a{EH} b{EH}", "without an opening"),
        ],
    )
    def test_malformed_markers_raise(self, output, message):
        with pytest.raises(ValueError, match=message):
            parse_tagged(output)

    def test_other_tag_names(self):
        assert parse_tagged("There are <A>three</A> cats, <hallucination>x</hallucination>", tag="A") == (
            "There are three cats, <hallucination>x</hallucination>",
            [(10, 15)],
        )
        assert parse_tagged("a <a.b>c</a.b>", tag="a.b") == ("a c", [(2, 3)])

    def test_markers_are_exact_strings(self):
        # A marker with extra spaces or another case is text, not a marker.
        assert parse_tagged("<hallucination >x</Hallucination>") == ("<hallucination >x</Hallucination>", [])

    def test_offsets_are_code_points(self):
        text, spans = parse_tagged(f"😀 {H}café{EH} 日本")
        assert spans == [(2, 6)]
        assert text[2:6] == "café"

    def test_non_string_output_raises(self):
        with pytest.raises(ValueError):
            parse_tagged(None)

    @settings(max_examples=200, deadline=None)
    @given(st.text(alphabet="ab <>/\n", max_size=30), st.data())
    def test_tagging_then_parsing_round_trips(self, text, data):
        cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
        spans = [(s, e) for s, e in zip(cuts[::2], cuts[1::2], strict=False) if s < e]
        # Text that already contains a marker cannot round-trip; skip it.
        if "<hallucination>" in text or "</hallucination>" in text or "<Tagged_Text>" in text:
            return
        tagged, last = [], 0
        for s, e in spans:
            tagged += [text[last:s], H, text[s:e], EH]
            last = e
        tagged.append(text[last:])
        assert parse_tagged("".join(tagged)) == (text, spans)


class TestFollowsFormat:
    ORIGINAL = "The fire hydrant cap is red.\n\nIt is round."

    def test_whitespace_differences_are_tolerated(self):
        assert follows_format(f"The fire {H}hydrant{EH} cap  is red. It is\tround.", self.ORIGINAL)

    def test_wrapped_output(self):
        output = (
            f"Analysis...\n<Tagged_Text>\nThe fire hydrant cap is {H}red.{EH}\n\nIt is round.\n</Tagged_Text>"
        )
        assert follows_format(output, self.ORIGINAL)

    def test_changed_words_fail(self):
        assert not follows_format(f"Fire hydrant cap is {H}red{EH}. It is round.", self.ORIGINAL)

    def test_broken_markers_fail(self):
        assert not follows_format(f"The fire hydrant cap is {H}red. It is round.", self.ORIGINAL)
        assert not follows_format(f"The fire hydrant cap is <Tagged_Text>{H}red.{EH}", self.ORIGINAL)

    def test_missing_output_fails(self):
        assert not follows_format(None, self.ORIGINAL)

    def test_unicode_whitespace_counts_as_whitespace(self):
        assert follows_format("a\u3000b\u00a0c", "a b c")

    def test_original_must_be_text(self):
        with pytest.raises(ValueError):
            follows_format("a", None)


class TestTokenSpans:
    def test_mhalo_example(self):
        text = "A toothbrush is being washed in the sink."
        assert token_spans(text, [(0, 12), (2, 12), (22, 28), (0, 28)]) == [(0, 2), (1, 2), (4, 5), (0, 5)]

    def test_partial_tokens_and_whitespace(self):
        text = "ab  cd\tef"
        assert token_spans(text, [(1, 2)]) == [(0, 1)]  # inside a token
        assert token_spans(text, [(1, 5)]) == [(0, 2)]  # "b  c"
        assert token_spans(text, [(2, 4)]) == []  # only spaces
        assert token_spans(text, [(6, 7), (20, 30)]) == []  # a tab; past the end
        assert token_spans(text, [(8, 30)]) == [(2, 3)]  # runs past the end

    def test_order_and_duplicates_follow_the_input(self):
        assert token_spans("a b c", [(4, 5), (0, 1), (4, 5)]) == [(2, 3), (0, 1), (2, 3)]

    def test_unicode_whitespace_separates_tokens(self):
        assert token_spans("日本\u3000語 x\u00a0y", [(3, 4), (7, 8)]) == [(1, 2), (3, 4)]

    def test_invalid_spans_raise(self):
        with pytest.raises(ValueError):
            token_spans("a b", [(1, 1)])
        with pytest.raises(ValueError):
            token_spans(None, [])

    @settings(max_examples=200, deadline=None)
    @given(
        st.text(alphabet="ab \n\u3000", max_size=25),
        st.lists(st.tuples(st.integers(0, 30), st.integers(1, 8)), max_size=5),
    )
    def test_equals_per_character_definition(self, text, raw):
        token_of = []
        token = -1
        for i, ch in enumerate(text):
            if not ch.isspace() and (i == 0 or text[i - 1].isspace()):
                token += 1
            token_of.append(None if ch.isspace() else token)
        expected = []
        for s, n in raw:
            touched = [token_of[i] for i in range(s, min(s + n, len(text))) if token_of[i] is not None]
            if touched:
                expected.append((min(touched), max(touched) + 1))
        assert token_spans(text, [(s, s + n) for s, n in raw]) == expected
