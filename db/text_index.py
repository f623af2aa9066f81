"""A dataset's texts held in memory for substring search, with a trigram filter per block of items.

A search for a word found in no item must read every text: 47 MB for the 143 K captions of a million
AlignBench sentences, 30 ms for the fastest byte search Python has, 76 ms for SQLite's ``LIKE``. So the
items are cut into blocks of about :data:`BLOCK_BYTES` of text, and each block keeps a Bloom filter of
the trigrams (three bytes in a row) its texts hold: a block lacking any trigram of the word cannot hold
it and is not searched. A word of no item is then answered in well under a millisecond, and a common
word is found in the first blocks, as before.

Texts are matched as SQLite's ``LIKE`` matches them: ASCII letters in either case, every other
character as it is. Each item's texts are lowered as UTF-8 bytes (which folds exactly the ASCII
letters) and joined by NUL, a character no store holds and so no search asks for: a match never runs
from one text into the next. A byte search of UTF-8 finds a text exactly where a search of its
characters does.

PostgreSQL's ``ILIKE`` folds every letter, by the database's locale, so the index cannot answer it
exactly; it can still say which items may hold the word (:meth:`TextIndex.candidates`). Of all
characters, only two fold into ASCII other than the ASCII letters' own cases: the Kelvin sign into "k",
and the dotted capital I into "i"; and only one ASCII letter folds out of ASCII, the I into the dotless
ı in a Turkish locale. An index made ``every_case`` holds those three as "k", "i" and "i": then each run
of the word's ASCII characters, lowered, is held by every text that ILIKE finds the word in, whatever
the locale.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt

#: About this much text per block. A block of English text of this size holds a few thousand distinct
#: trigrams, under a tenth of the filter's bits: a word of three trigrams passes a block lacking it
#: once in a thousand blocks, of five once in a hundred thousand.
BLOCK_BYTES = 32 * 1024
FILTER_BITS = 1 << 16
_FILTER_BYTES = FILTER_BITS // 8
_HASH = np.uint32(0x9E3779B1)  # Knuth's multiplicative hash: the product's top 16 bits pick the bit
_SEPARATOR = b"\x00"
# The characters other than ASCII that some locale folds into, or from, an ASCII letter (module doc).
_INTO_ASCII = str.maketrans({"\u212a": "k", "\u0130": "i", "\u0131": "i"})


def folded(text: str) -> bytes:
    """``text`` as the index holds and searches it: UTF-8, ASCII letters lowered."""
    return text.encode("utf-8", "surrogatepass").lower()


def _folded_every_case(text: str) -> bytes:
    """:func:`folded`, with the characters some locale folds into ASCII letters held as those."""
    return folded(text.translate(_INTO_ASCII))


def _ascii_runs(needle: str) -> list[bytes]:
    """The runs of ``needle``'s ASCII characters, lowered; the longest first."""
    runs: list[bytes] = []
    run: list[str] = []
    for char in [*needle, "\x80"]:  # the last, not ASCII, ends the last run
        if char < "\x80":
            run.append(char)
        elif run:
            runs.append("".join(run).lower().encode("ascii"))
            run = []
    return sorted(runs, key=len, reverse=True)


def _trigram_bits(data: npt.NDArray[np.uint8]) -> npt.NDArray[np.int64]:
    """The filter bit of each trigram of ``data`` (one per byte but the last two)."""
    wide = data.astype(np.uint32)
    codes = (wide[:-2] << np.uint32(16)) | (wide[1:-1] << np.uint32(8)) | wide[2:]
    return ((codes * _HASH) >> np.uint32(16)).astype(np.int64)


def _filters(haystack: bytes, block_starts: list[int]) -> npt.NDArray[np.uint8]:
    """One filter per block, ``block_starts`` giving where each block begins (and, last, ends)."""
    n_blocks = len(block_starts) - 1
    out = np.zeros((n_blocks, _FILTER_BYTES), np.uint8)
    data = np.frombuffer(haystack, np.uint8)
    group = 32  # blocks set at once: a boolean of 2 MB, not one of the whole index
    for first in range(0, n_blocks, group):
        last = min(n_blocks, first + group)
        start, end = block_starts[first], block_starts[last]
        if end - start < 3:
            continue
        bits = _trigram_bits(data[start:end])
        sizes = [b - a for a, b in pairwise(block_starts[first : last + 1])]
        block = np.repeat(np.arange(last - first, dtype=np.int64), sizes)[: len(bits)]
        flags = np.zeros((last - first) * FILTER_BITS, np.bool_)
        flags[block * FILTER_BITS + bits] = True
        out[first:last] = np.packbits(flags.reshape(last - first, FILTER_BITS), axis=1)
    return out


@dataclass(frozen=True)
class Hits:
    """The ids, in order, of the items a search found: all those among the first ``read`` items of the
    index (every item, unless the search stopped early) that hold the word, or may (:meth:`candidates`)."""

    ids: list[int]
    read: int


@dataclass(frozen=True)
class TextIndex:
    """Items' texts in order: item ``ids[k]`` is ``haystack[starts[k]:starts[k + 1]]``; block ``b`` is
    items ``blocks[b]`` to ``blocks[b + 1]`` (``blocks`` ends with the item count). Never changed once
    made: :meth:`extended` makes a new one, so a search may run while the next is being made."""

    haystack: bytes
    starts: list[int]
    ids: list[int]
    blocks: list[int]
    filters: npt.NDArray[np.uint8]
    every_case: bool  # for a store folding every letter's case: :meth:`candidates`, not :meth:`matching`

    @property
    def n_bytes(self) -> int:
        """About the memory it takes."""
        return len(self.haystack) + self.filters.nbytes + 40 * len(self.ids)

    @classmethod
    def empty(cls, *, every_case: bool = False) -> TextIndex:
        return cls(b"", [0], [], [0], np.zeros((0, _FILTER_BYTES), np.uint8), every_case)

    def extended(self, items: Iterable[tuple[int, Iterable[str]]]) -> TextIndex:
        """This index and ``items`` after it: (id, texts) in order. The new items make new blocks."""
        parts: list[bytes] = [self.haystack]
        starts, ids = list(self.starts), list(self.ids)
        blocks = list(self.blocks)
        end = starts[-1]
        block_start = end
        fold = _folded_every_case if self.every_case else folded
        for item_id, texts in items:
            part = b"".join(fold(t) + _SEPARATOR for t in texts)
            parts.append(part)
            end += len(part)
            starts.append(end)
            ids.append(item_id)
            if end - block_start >= BLOCK_BYTES:
                blocks.append(len(ids))
                block_start = end
        if blocks[-1] != len(ids):
            blocks.append(len(ids))
        haystack = b"".join(parts)
        new = _filters(haystack, [starts[k] for k in blocks[len(self.blocks) - 1 :]])
        filters = np.concatenate([self.filters, new])
        return TextIndex(haystack, starts, ids, blocks, filters, self.every_case)

    def _candidate_blocks(self, needles: list[bytes]) -> Iterable[int]:
        """The blocks whose filters hold every trigram of every one of ``needles``."""
        long = [n for n in needles if len(n) >= 3]
        if not long:
            return range(len(self.blocks) - 1)
        bits = np.unique(np.concatenate([_trigram_bits(np.frombuffer(n, np.uint8)) for n in long]))
        held = (self.filters[:, bits >> 3] >> (7 - (bits & 7)).astype(np.uint8)) & 1
        return np.flatnonzero(held.all(axis=1)).tolist()

    def matching(self, needle: str, at_most: int) -> Hits:
        """The items whose texts hold ``needle`` (ASCII case ignored): all of them, or the first
        ``at_most + 1`` when more than ``at_most`` do (the search stops there)."""
        if self.every_case:
            raise ValueError("an index made every_case says which items may match: see candidates")
        wanted = folded(needle)
        if not wanted:  # held by every text
            shown = self.ids[: at_most + 1]
            return Hits(list(shown), len(shown))
        if _SEPARATOR in wanted:
            return Hits([], len(self.ids))
        return self._holding([wanted], at_most)

    def candidates(self, needle: str, at_most: int) -> Hits | None:
        """The items whose texts may hold ``needle`` with every letter's case ignored, by any locale (an
        index made ``every_case``): among them are all that do. All of them, or the first
        ``at_most + 1`` when more than ``at_most`` may. None when the word has no ASCII character to look
        for."""
        if not self.every_case:
            raise ValueError("only an index made every_case holds what every locale folds")
        if _SEPARATOR.decode() in needle:  # no store holds it
            return Hits([], len(self.ids))
        runs = _ascii_runs(needle)
        return self._holding(runs, at_most) if runs else None

    def _holding(self, wanted: list[bytes], at_most: int) -> Hits:
        """The items whose texts hold every one of ``wanted`` (the first looked for first): all of them,
        or the first ``at_most + 1``."""
        first, rest = wanted[0], wanted[1:]
        haystack, starts, ids, blocks = self.haystack, self.starts, self.ids, self.blocks
        found: list[int] = []
        for block in self._candidate_blocks(wanted):
            at, end = starts[blocks[block]], starts[blocks[block + 1]]
            while (hit := haystack.find(first, at, end)) >= 0:
                k = bisect_right(starts, hit) - 1
                at = starts[k + 1]  # the item's other texts need not be searched
                if all(haystack.find(run, starts[k], at) >= 0 for run in rest):
                    found.append(ids[k])
                    if len(found) > at_most:
                        return Hits(found, k + 1)
        return Hits(found, len(ids))
