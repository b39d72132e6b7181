"""A search's states masked to some of their fields, looked up and compared in numpy.

`analysis.variants` compares two readings of the rules on the variables both declare, where
those sit at the same bits of both packings: a state of one reading is matched in the other
by masking its packed words to those fields. `MaskedStates` holds the other reading's states
masked, as numpy word columns in BFS order (a compact- or compiled-store search's rows, the
python store's ints converted), with a lookup by sorted value (one word) or sorted hash (several:
the states of a hash compared word by word), and finds the nearest of them to a state by the
fields apart, counted in numpy. Its answers are those of the Python-int code it replaces, but
for the nearest state among several equally near: the shallowest (the first in the search's
order), as `variants._nearest` picks it where the readings' packings differ.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from verifier.engines.visited import hash_rows
from verifier.engines.words import WORD_MASK, as_ints, as_rows, popcount

FIRST_CHUNK = 1 << 12    # states masked and looked up at first (the first one outside usually comes early),
MASK_CHUNK = 1 << 20     # twice as many each time after, up to this many
MERGE_AFTER = 16         # a 1/this of the states scanned, the rest merged (`first_outside`): merging all their sorted
                         # values costs about what scanning that many does (7 M states: 0.07 s)


class MaskedStates:
    """A search's states masked to the fields of `mask`: `columns[j]` holds word j of each (`words`
    of them) in BFS order; `sorted` the values of the one word sorted, or for several words each
    state's hash with its index in the low `index_bits` bits, sorted (a plain sort: several times
    faster than sorting the indices by hash)."""

    def __init__(self, space, mask: int):
        self.space, self.mask = space, mask
        self.words = max(1, -(-mask.bit_length() // 64))
        self.mask_words = np.array([(mask >> (64 * j)) & WORD_MASK for j in range(self.words)], np.uint64)
        bare = self._bare(space)
        if bare is not None:
            self.columns = bare
        else:
            parts = [columns for _first, columns in self._states(space, 0, len(space.packed), None)]
            self.columns = np.concatenate(parts, axis=1) if parts else np.zeros((self.words, 0), np.uint64)
        if self.words == 1:
            self.sorted = np.sort(self.columns[0])
        else:
            self.index = np.uint64((1 << max(1, len(self).bit_length())) - 1)
            keys = hash_rows(self.columns.T)       # a new array: masked and sorted in place
            keys &= ~self.index
            keys |= np.arange(len(self), dtype=np.uint64)
            keys.sort()
            self.sorted = keys

    def __len__(self) -> int:
        return int(self.columns.shape[1])

    def _bare(self, space) -> np.ndarray | None:
        """The masked columns of `space`'s states as a view of its rows of words (no copy), where
        every state is in them and the mask keeps every bit of its packing (readings that declare
        the same variables at the same bits: masking changes no state); else None."""
        order, packing = getattr(space, "order", None), getattr(space, "packing", None)
        if order is None or packing is None or space.extra:
            return None
        if sum(((1 << w) - 1) << sh for sh, w in zip(packing.shifts, packing.widths)) & ~self.mask:
            return None
        if order.ndim == 1:
            return order[np.newaxis] if self.words == 1 else None
        return order.T if order.shape[1] == self.words else None

    def _masked(self, rows: np.ndarray) -> np.ndarray:
        """Rows of a search's words (its own number of them) masked, as `self.words` columns."""
        if rows.ndim == 1:           # states of one word: the mask, inside their packing, is one word too
            return (rows & self.mask_words[0])[np.newaxis]
        columns = np.empty((self.words, rows.shape[0]), np.uint64)
        for j in range(self.words):      # column by column: several times faster than masking rows and transposing
            np.bitwise_and(rows[:, j], self.mask_words[j], out=columns[j])
        return columns

    def _ints(self, x: list[int]) -> np.ndarray:
        """Packed ints masked, as `self.words` columns."""
        return self._masked(as_rows([v & self.mask for v in x], self.words))

    def _states(self, space, start: int, stop: int, chunk: int | None) -> Iterator[tuple[int, np.ndarray]]:
        """(index of the first, their masked columns) of `space`'s states `start` to `stop`, `chunk` at a
        time, twice as many each time up to MASK_CHUNK (None: all at once): a compact- or compiled-store
        search's rows of words, then the states stored beyond it; the python store's ints."""
        order = getattr(space, "order", None)
        stored, ints = (0, space.packed) if order is None else (space.n, space.extra)
        first = start
        while first < stop:
            step = stop - first if chunk is None else chunk
            if first < stored:
                assert order is not None
                upto = min(stop, stored, first + step)
                yield first, self._masked(order[first:upto])
            else:
                upto = min(stop, first + step)
                yield first, self._ints(ints[first - stored:upto - stored])
            first = upto
            chunk = None if chunk is None else min(2 * chunk, MASK_CHUNK)

    def holds(self, columns: np.ndarray) -> np.ndarray:
        """Whether each of these masked states (as columns) is one of the states."""
        n = len(self)
        if not n:
            return np.zeros(columns.shape[1], bool)
        keys = columns[0] if self.words == 1 else hash_rows(columns.T) & ~self.index
        by_key = np.argsort(keys)           # looked up in order: several times faster than at random
        at = np.empty_like(by_key)
        at[by_key] = np.minimum(np.searchsorted(self.sorted, keys[by_key]), n - 1)
        if self.words == 1:
            return self.sorted[at] == keys
        found = self.sorted[at] & ~self.index == keys
        same = (self.columns[:, (self.sorted[at] & self.index).astype(np.int64)] == columns).all(axis=0)
        for k in np.flatnonzero(found & ~same):     # another state of the same hash came first (rare)
            same[k] = self._later_in_run(int(at[k]) + 1, keys[k], columns[:, k])
        return found & same

    def _later_in_run(self, p: int, key: np.uint64, state: np.ndarray) -> bool:
        """Whether `state` (its words) is one of the states from sorted place `p` on whose hash is `key`."""
        while p < len(self) and self.sorted[p] & ~self.index == key:
            if (self.columns[:, int(self.sorted[p] & self.index)] == state).all():
                return True
            p += 1
        return False

    def first_outside(self, space, limit: int, mine: MaskedStates | None = None) -> int | None:
        """The index of the first of `space`'s first `limit` states whose masked value is not among these.
        `mine`: all of `space`'s states masked alike, where at hand: once the first 1/MERGE_AFTER of
        them are among these, whether all of them are is answered at once (`holds_all`), the
        scan going on only where some are not."""
        merging = mine if mine is not None and self.words == mine.words == 1 else None
        for first, columns in self._states(space, 0, limit, FIRST_CHUNK):
            if merging is not None and first >= len(merging) // MERGE_AFTER:
                if self.holds_all(merging):
                    return None
                merging = None
            outside = np.flatnonzero(~self.holds(columns))
            if outside.shape[0]:
                return first + int(outside[0])
        return None

    def holds_all(self, other: MaskedStates) -> bool:
        """Whether every state of `other` (masked alike, one word each) is one of these: each block of
        its sorted values merged with the run of these that spans it (a stable sort merges two sorted
        runs in one pass), the distinct values counted."""
        assert self.words == 1 and other.words == 1, "one word a state"
        for first in range(0, len(other), MASK_CHUNK):
            block = other.sorted[first:first + MASK_CHUNK]
            run = self.sorted[np.searchsorted(self.sorted, block[0]):np.searchsorted(self.sorted, block[-1], "right")]
            merged = np.concatenate((run, block))
            merged.sort(kind="stable")
            if _distinct(merged) != _distinct(run):
                return False
        return True

    def nearest(self, x: int, fields: list[tuple[int, int]]) -> int:
        """The state differing from masked state `x` (none of them) in the fewest `fields` (shift, width),
        as the Python-int code found it: one field away, the first field's of the lowest value; else the
        first of the fewest in the search's order. `x` where there are none."""
        if not len(self):
            return x
        if sum((1 << w) - 1 for _sh, w in fields) <= len(self):     # fewer to look up than states to count
            for sh, w in fields:
                values = np.arange(1 << w, dtype=np.uint64)
                values = values[values != (x >> sh) & ((1 << w) - 1)]
                hits = np.flatnonzero(self.holds(self._with_field(x, sh, w, values)))
                if hits.shape[0]:
                    return _with_value(x, sh, w, int(values[hits[0]]))
            at = self._first_two_apart(x, fields)      # none is one field away: two is the fewest there can be
            if at is not None:
                return as_ints(_rows(self.columns[:, at:at + 1]))[0]
        apart = self.fields_apart(x, fields)
        near = self.columns[:, np.flatnonzero(apart == apart.min())]
        if apart.min() == 1:            # counted, not looked up: the first field's, of the lowest value
            for sh, w in fields:
                values = _field(near, sh, w)
                moved = values[values != (x >> sh) & ((1 << w) - 1)]
                if moved.shape[0]:
                    return _with_value(x, sh, w, int(moved.min()))
        return as_ints(_rows(near[:, :1]))[0]     # the first of the fewest: the shallowest

    def _with_field(self, x: int, sh: int, w: int, values: np.ndarray) -> np.ndarray:
        """Masked state `x` with field (`sh`, `w`) set to each of `values`, as columns."""
        j, at = divmod(sh, 64)
        columns = np.repeat(self._ints([x]), values.shape[0], axis=1)
        columns[j] &= np.uint64(~(((1 << w) - 1) << at) & WORD_MASK)
        columns[j] |= values << np.uint64(at)
        return columns

    def _first_two_apart(self, x: int, fields: list[tuple[int, int]]) -> int | None:
        """The index of the first state differing from masked state `x` in two of `fields`, counted
        FIRST_CHUNK states at a time, twice as many each time after (the nearest usually comes early),
        up to MASK_CHUNK; None where none does."""
        first, chunk = 0, FIRST_CHUNK
        while first < len(self):
            two = np.flatnonzero(self.fields_apart(x, fields, self.columns[:, first:first + chunk]) == 2)
            if two.shape[0]:
                return first + int(two[0])
            first, chunk = first + chunk, min(2 * chunk, MASK_CHUNK)
        return None

    def fields_apart(self, x: int, fields: list[tuple[int, int]], columns: np.ndarray | None = None) -> np.ndarray:
        """For each state (of `columns`, some of the states' columns; all of them where None), in how
        many of `fields` it differs from masked state `x`: per word, each field's bits ORed into its
        lowest bit, those bits counted."""
        columns = self.columns if columns is None else columns
        apart = np.zeros(columns.shape[1], np.int64)
        for j in range(self.words):
            mine = [(sh - 64 * j, w) for sh, w in fields if sh // 64 == j]
            if not mine:
                continue
            z = columns[j] ^ np.uint64((x >> (64 * j)) & WORD_MASK)
            lowest = z & np.uint64(sum(1 << at for at, _w in mine))
            for k in range(1, max(w for _at, w in mine)):
                lowest |= (z >> np.uint64(k)) & np.uint64(sum(1 << at for at, w in mine if w > k))
            apart += popcount(lowest)
        return apart

def _distinct(values: np.ndarray) -> int:
    """How many distinct values sorted `values` hold."""
    return int(np.count_nonzero(values[1:] != values[:-1])) + 1 if values.shape[0] else 0


def _rows(columns: np.ndarray) -> np.ndarray:
    """Word columns as `words.py`'s batch of states (one-dimensional for one word)."""
    return columns[0] if columns.shape[0] == 1 else columns.T


def _field(columns: np.ndarray, sh: int, w: int) -> np.ndarray:
    """The value of field (`sh`, `w`) of each of these states (no field straddles two words)."""
    j, at = divmod(sh, 64)
    return (columns[j] >> np.uint64(at)) & np.uint64((1 << w) - 1)


def _with_value(x: int, sh: int, w: int, v: int) -> int:
    """Packed state `x` with field (`sh`, `w`) set to `v`."""
    return x & ~(((1 << w) - 1) << sh) | v << sh
