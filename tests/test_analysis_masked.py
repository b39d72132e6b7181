"""analysis.masked against the Python-int code it replaced in analysis.variants: the same
lookups, the same first state outside, the same nearest state (among several equally near, the
shallowest: the first in the search's order)."""
from __future__ import annotations

from types import SimpleNamespace
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from verifier.analysis import masked
from verifier.analysis.masked import MaskedStates
from verifier.engines.visited import hash_rows
from verifier.engines.words import as_rows


def _weak_hash(rows: np.ndarray) -> np.ndarray:
    """A hash of four values: most states share theirs with others (the lookup's rare case, made common)."""
    return rows[:, 0] & np.uint64(3)


@st.composite
def _cases(draw, far: bool = False):
    """A search's states (fields of 1-3 bits over 1-3 words, none straddling two; the python store's
    ints or rows of words, their packing, and states beyond them), the fields both readings share
    (shift, width) in their order (often all of them), and a masked state none of the masked states
    is. `far`: none of the states is one shared field away from it, and there are at least as many
    states as values one field away (so that the nearest is looked up one field away, then counted
    from two)."""
    room = draw(st.integers(1, 3))              # words the fields may take
    fields, sh = [], 0
    for _ in range(draw(st.integers(2, 9))):
        w = draw(st.integers(1, 3))
        sh += draw(st.sampled_from([0, 0, 1, 20]))
        if sh // 64 != (sh + w - 1) // 64:         # no field straddles two words
            sh = 64 * ((sh + w - 1) // 64)
        if sh + w > (63 if room == 1 else 64 * room):
            break
        fields.append((sh, w))
        sh += w
    shared = [f for f, keep in zip(fields, draw(st.lists(st.booleans(), min_size=len(fields),
                                                         max_size=len(fields)))) if keep] or fields[:1]
    words = -(-(max(s + w for s, w in fields) + 1) // 64)    # as many as the fields take (below 2^63 in one)
    if (far and len(shared) < 2) or draw(st.booleans()):     # every field shared: the rows are the masked states
        shared = fields
    shared = draw(st.permutations(shared))
    value = st.builds(lambda parts: sum(v << s for v, (s, _w) in zip(parts, fields)),
                      st.tuples(*(st.integers(0, (1 << w) - 1) for _s, w in fields)))
    mask = sum(((1 << w) - 1) << s for s, w in shared)
    if far:
        x = draw(value) & mask
        one_away = sum((1 << w) - 1 for _s, w in shared)
        states = draw(st.lists(value.filter(lambda y: _apart(x, y, shared) >= 2), min_size=min(one_away, 60),
                               max_size=60))
    else:
        states = draw(st.lists(value, max_size=40))
        seen = {y & mask for y in states}
        x = draw(value.map(lambda y: y & mask).filter(lambda y: y not in seen))
    beyond = draw(st.one_of(st.just(len(states)), st.integers(0, len(states))))
    packing = SimpleNamespace(shifts=[s for s, _w in fields], widths=[w for _s, w in fields])
    space = SimpleNamespace(packed=states) if draw(st.booleans()) else \
        SimpleNamespace(order=as_rows(states[:beyond], words), n=beyond, extra=states[beyond:], packed=states,
                        packing=packing)
    return space, shared, mask, x, draw(st.sampled_from([hash_rows, _weak_hash]))


def _apart(x: int, y: int, fields: list[tuple[int, int]]) -> int:
    """In how many of `fields` states `x` and `y` differ."""
    return sum(1 for sh, w in fields if (x ^ y) >> sh & ((1 << w) - 1))


CASES, FAR_CASES = _cases(), _cases(far=True)


def _nearest_by_python_ints(x: int, states: list[int], fields: list[tuple[int, int]]) -> int:
    """variants._nearest_packed as it was: the states one field away looked up in the fields' order, by
    value; else the first of the fewest fields apart, in the search's order (`states`, masked)."""
    for sh, w in fields:
        base = x & ~(((1 << w) - 1) << sh)
        for v in range(1 << w):
            y = base | (v << sh)
            if y != x and y in states:
                return y
    if not states:
        return x
    return min(states, key=lambda y: _apart(x, y, fields))


@settings(max_examples=examples(300), deadline=None)
@given(CASES)
def test_the_nearest_state_is_the_one_the_python_ints_found(case):
    space, fields, mask, x, hashing = case
    with mock.patch.object(masked, "hash_rows", hashing):
        theirs = MaskedStates(space, mask)
        assert theirs.nearest(x, fields) == _nearest_by_python_ints(x, [y & mask for y in space.packed], fields)


@settings(max_examples=examples(150), deadline=None)
@given(FAR_CASES)
def test_the_nearest_state_two_fields_away_or_more_is_the_one_the_python_ints_found(case):
    """Counted a state, then two, at a time (the first two fields away is the nearest, where one is)."""
    space, fields, mask, x, hashing = case
    with mock.patch.multiple(masked, hash_rows=hashing, FIRST_CHUNK=1, MASK_CHUNK=2):
        theirs = MaskedStates(space, mask)
        assert theirs.nearest(x, fields) == _nearest_by_python_ints(x, [y & mask for y in space.packed], fields)


@settings(max_examples=examples(200), deadline=None)
@given(CASES, st.lists(st.integers(0, (1 << 192) - 1), max_size=12))
def test_lookups_and_the_first_state_outside_are_the_python_sets(case, others):
    space, _fields, mask, _x, hashing = case
    with mock.patch.object(masked, "hash_rows", hashing):
        theirs = MaskedStates(space, mask)
        asked = [y & mask for y in list(space.packed) + others]
        want = {y & mask for y in space.packed}
        assert theirs.holds(theirs._ints(asked)).tolist() == [y in want for y in asked]
        mine = SimpleNamespace(packed=asked)
        for limit in (0, len(asked) // 2, len(asked)):
            assert theirs.first_outside(mine, limit) == \
                next((i for i, y in enumerate(asked[:limit]) if y not in want), None)


@settings(max_examples=examples(200), deadline=None)
@given(CASES, st.lists(st.integers(0, (1 << 192) - 1), max_size=12), st.sampled_from([1, 2, 1 << 20]))
def test_the_first_state_outside_is_the_same_with_the_states_merged(case, others, chunk):
    """Given the other states masked too (`mine`), past the first of them the rest are merged
    (`holds_all`, a block of `chunk` sorted values at a time): the same answer as the scan's."""
    space, _fields, mask, _x, hashing = case
    with mock.patch.multiple(masked, hash_rows=hashing, FIRST_CHUNK=1, MASK_CHUNK=chunk):
        theirs = MaskedStates(space, mask)
        asked = [y & mask for y in list(space.packed) + others]
        want = {y & mask for y in space.packed}
        space_asked = SimpleNamespace(packed=asked)
        mine = MaskedStates(space_asked, mask)
        if theirs.words == mine.words == 1:
            assert theirs.holds_all(mine) == all(y in want for y in asked)
        for limit in (0, len(asked) // 2, len(asked)):
            assert theirs.first_outside(space_asked, limit, mine) == \
                next((i for i, y in enumerate(asked[:limit]) if y not in want), None)
