"""The compiled search's visited table as it grows (`arrays.SearchArrays`): after every growth, by
the search's own steps or to any larger size, small ones included, every stored state is found
at its index and no other state is found, and the table holds the same slots as one of its size
filled afresh from the states; states of one word and of several, held in memory or in a file
(spilled). The growth's steps: doubling while small, then at once the table of the state cap's
states, by GROWTH without a cap; the search's states, order and parents the same whatever the steps
(the searches' own differentials, `test_compiled_store.py`, compare searches grown from one
state's room with ones sized past their states)."""
from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compact_store import counter
from tiers import examples

from verifier.engines.compiled import cache
from verifier.engines.compiled.arrays import (
    CAPPED_GROWTH,
    CAPPED_LOAD,
    FIRST_LOAD,
    GROWTH,
    JUMP,
    SearchArrays,
    table_size,
)
from verifier.engines.compiled.numbagen import RUNTIME, loop_source
from verifier.engines.compiled.search import explore_compiled
from verifier.resources import Budget


def _loop(words: int):
    cache.load(RUNTIME)
    return cache.load(loop_source(words))[0]


def _rows(rng: np.random.Generator, n: int, words: int, spread: int) -> np.ndarray:
    """`n` distinct states of `words` words (as many as there are, at most), values below `spread`
    (small: states that differ in few bits, whose hashes the table must still tell apart)."""
    rows = np.unique(rng.integers(0, spread, (2 * n + 8, words)), axis=0)
    rng.shuffle(rows)
    return rows[:n] if words > 1 else rows[:n, 0].copy()


def _assert_finds_exactly(loop, grown: SearchArrays, stored: np.ndarray, absent: np.ndarray) -> None:
    keys, table, bits = grown.keys, grown.table, grown.bits
    for j in range(len(stored)):
        assert loop.find(keys, table, bits, stored, j) == j
    for j in range(len(absent)):
        assert loop.find(keys, table, bits, absent, j) == -1
    fresh = np.zeros_like(table)
    loop.fill(keys, 0, len(stored), fresh, bits)
    assert np.array_equal(np.sort(table), np.sort(fresh))          # the same slots, only their places may differ


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from([1, 2, 3]), st.integers(0, 2**32 - 1), st.integers(1, 3000),
       st.sampled_from([4, 64, 1 << 40]), st.lists(st.tuples(st.integers(1, 400), st.integers(0, 300)), max_size=12),
       st.booleans(), st.sampled_from([None, 1, 500, 10**6]))
def test_a_grown_table_finds_every_stored_state_and_no_other(words, seed, n, spread, steps, spilled, max_states):
    """States added in batches as the search adds them (`grow` makes room, growing the table by
    its own steps), and after some batches the table grown at once to a drawn larger size (by
    one slot to several times)."""
    rng = np.random.default_rng(seed)
    every = _rows(rng, n, words, spread)
    stored_rows, absent = every[:len(every) * 3 // 4], every[len(every) * 3 // 4:]
    loop = _loop(words)
    grown = SearchArrays(words, 1, spill_bytes=0 if spilled else None, max_states=max_states)
    stored = 0
    for batch, extra in steps or [(len(stored_rows), 0)]:
        batch = min(batch, len(stored_rows) - stored)
        grown.grow(loop, 0, stored, 0, 1, batch)
        grown.keys[stored:stored + batch] = stored_rows[stored:stored + batch]
        loop.fill(grown.keys, stored, stored + batch, grown.table, grown.bits)
        stored += batch
        if extra:
            grown._regrow(loop, grown.table.shape[0] + max(1, extra * grown.table.shape[0] // 100), stored)
        assert grown.room >= stored
        _assert_finds_exactly(loop, grown, stored_rows[:stored], absent)
    assert grown.spilled == spilled


def test_the_table_doubles_while_small_then_grows_to_the_cap_s_table_and_by_growth_without_a_cap():
    """The steps a search's table takes (counter(300): 90,000 states): without a cap by GROWTH
    (at most 16 bytes a state at the peak, MAX_LOAD full); with a cap from a first table FIRST_LOAD
    full, doubling once CAPPED_LOAD full while the states are fewer than 1/JUMP of the cap, then
    at once the cap's table (and one state's successors), which fills up to MAX_LOAD: with a cap
    of 60,000 the first growth already, with 200,000 the second, with 4,000,000 never (doubling
    only). The same search in all, and the arrays never past 16 bytes a state of the cap."""
    model = counter(300)
    sizes: dict[int | None, list[int]] = {}
    searches = {}
    regrow = SearchArrays._regrow
    caps = (None, 60_000, 200_000, 4_000_000)
    for cap in caps:
        sizes[cap] = []
        with mock.patch.object(SearchArrays, "_regrow",
                               new=lambda self, loop, size, stored, steps=sizes[cap]: (steps.append(size),
                                                                                     regrow(self, loop, size, stored))):
            searches[cap] = explore_compiled(model, Budget(max_states=cap))
    plain, low = searches[None], searches[60_000]
    assert len(plain) == 90_000 and len(low) == 60_000 and not low.complete
    assert np.array_equal(low.keys, plain.keys[:60_000]) and np.array_equal(low.parent, plain.parent[:60_000])
    for cap in caps[2:]:
        assert searches[cap].complete
        assert np.array_equal(searches[cap].keys, plain.keys) and np.array_equal(searches[cap].parent, plain.parent)
    first = table_size(4096)
    assert sizes[None] == [int(s * GROWTH) for s in [first, *sizes[None][:-1]]]
    assert plain.peak_bytes <= 16 * len(plain)
    doubled = [table_size(4096, FIRST_LOAD) * CAPPED_GROWTH ** k for k in range(1, 5)]
    room = int(table_size(4096, FIRST_LOAD) * CAPPED_LOAD)             # the first table's states
    assert room * JUMP < 200_000 < 2 * room * JUMP
    assert sizes[60_000] == [table_size(60_000 + low.firings)]
    assert sizes[200_000] == [doubled[0], table_size(200_000 + low.firings)]
    assert sizes[4_000_000] == doubled[:4]
    assert int(doubled[3] * CAPPED_LOAD) >= 90_000
    assert len(sizes[4_000_000]) < len(sizes[None])
    for cap in caps[1:]:
        assert searches[cap].peak_bytes <= 16 * cap


def test_the_tables_of_a_long_search_hold_its_states():
    """Past the small sizes: 200,000 states of two words grown from one state's room."""
    rng = np.random.default_rng(7)
    rows = _rows(rng, 200_000, 2, 1 << 40)
    loop = _loop(2)
    grown = SearchArrays(2, 1)
    for stored in range(0, len(rows), 1000):
        grown.grow(loop, 0, stored, 0, 1, 1000)
        grown.keys[stored:stored + 1000] = rows[stored:stored + 1000]
        loop.fill(grown.keys, stored, stored + 1000, grown.table, grown.bits)
    assert table_size(len(rows)) <= grown.table.shape[0]
    _assert_finds_exactly(loop, grown, rows, _rows(np.random.default_rng(8), 1000, 2, 1 << 40) + (1 << 41))
