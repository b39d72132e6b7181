"""The compact visited table (`visited.py`) against a dict: a tiny table grown many times (its old
slices' pages given back as it goes) and spilled to disk keeps every key and parent link, with
keys of one word and rows of two or three (many alike in word 0); hash links whose fingerprints
collide still name the recorded parent."""
from __future__ import annotations

import mmap
from contextlib import contextmanager
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from verifier.engines import visited
from verifier.engines.memory import give_back_pages
from verifier.engines.visited import VisitedTable, fingerprint, mix, unmix
from verifier.engines.words import as_rows

KEY = st.integers(0, (1 << 63) - 2)
WORD0 = st.one_of(st.integers(0, 3), KEY)             # rows alike in word 0 claim the same slots
WIDE_KEYS = {words: st.tuples(WORD0, st.lists(st.integers(0, (1 << 64) - 1), min_size=words - 1, max_size=words - 1))
             .map(lambda t: t[0] | sum(w << (64 * (j + 1)) for j, w in enumerate(t[1]))) for words in (2, 3)}


def graphs(key):
    """Batches of keys, each key with the index of its parent among the keys of earlier batches."""
    return st.lists(st.lists(st.tuples(key, st.integers(0, 1 << 16)), min_size=1, max_size=40), min_size=1, max_size=25)


# (links, words, batches)
TABLES = st.one_of(st.tuples(st.sampled_from(["hash", "key"]), st.just(1), graphs(KEY)),
                   *(st.tuples(st.just("hash"), st.just(w), graphs(WIDE_KEYS[w])) for w in (2, 3)))


@contextmanager
def small_slices():
    """Growths that move (and give back the pages of) two pages of keys at a time."""
    with mock.patch.object(visited, "REHASH_SLOTS", 2 * mmap.PAGESIZE // 8):
        yield


def _build(batches, links: str, words: int, spill_every: int = 0):
    """Insert the batches into a table of 8 slots; returns (table, parent of each key, edges)."""
    table = VisitedTable(capacity=8, links=links, words=words)
    parents: dict[int, int | None] = {}
    edges: set[tuple[int, int]] = set()
    for n, batch in enumerate(batches):
        earlier = list(parents)
        keys, refs = [], []
        for key, pick in batch:
            if key in parents or key in keys:
                continue
            parent = earlier[pick % len(earlier)] if earlier else None
            parents_ref = 0 if parent is None else int(table.refs_of(as_rows([parent], words))[0])
            keys.append(key)
            refs.append(parents_ref)
            parents[key] = parent
            if parent is not None:
                edges.add((parent, key))
        if spill_every and n % spill_every == spill_every - 1 and table.count:
            table.spill()
        table.reserve(len(keys))
        new = table.insert(as_rows(keys, words), np.asarray(refs, table.refs.dtype))
        assert new.all()
    return table, parents, edges


@settings(max_examples=examples(40), deadline=None)
@given(TABLES)
def test_a_table_grown_many_times_keeps_every_key_and_parent(drawn):
    links, words, batches = drawn
    with small_slices():
        table, parents, edges = _build(batches, links, words)
    assert table.capacity > 8 or len(parents) <= 7
    keys = as_rows(list(parents), words)
    assert len(table) == len(parents) and (table.find(keys) >= 0).all()
    flip = 1 << (64 * (words - 1) + 62)
    absent = as_rows([k ^ flip for k in parents if k ^ flip not in parents], words)
    assert (table.find(absent) < 0).all()
    again = table.insert(keys, np.zeros(keys.shape[0], table.refs.dtype))
    assert not again.any() and len(table) == len(parents)
    for key, parent in parents.items():
        assert table.parent_of(key, lambda s, t: (s, t) in edges) == parent


@settings(max_examples=examples(20), deadline=None)
@given(TABLES)
def test_a_table_spilled_to_disk_keeps_every_key_and_parent(drawn):
    links, words, batches = drawn
    table, parents, edges = _build(batches, links, words, spill_every=3)
    keys = as_rows(list(parents), words)
    in_table = table.find(keys) >= 0
    assert (in_table | table.in_runs(keys)).all() and not (in_table & table.in_runs(keys)).any()
    assert len(table) == len(parents)
    for key, parent in parents.items():
        assert table.parent_of(key, lambda s, t: (s, t) in edges) == parent
    table.close()


@settings(max_examples=examples(15), deadline=None)
@given(graphs(WIDE_KEYS[2]))
def test_rows_whose_hashes_collide_stay_apart_in_the_table_and_the_disk_runs(batches):
    weak = lambda keys: mix(keys[:, 0]) if keys.ndim > 1 else mix(keys)      # noqa: E731 (rows alike in word 0 collide)
    with mock.patch.object(visited, "hash_rows", weak), mock.patch.object(visited, "fingerprint",
                                                                          lambda k: _weak_fingerprint(weak, k)):
        table, parents, edges = _build(batches, "hash", 2, spill_every=2)
        keys = as_rows(list(parents), 2)
        in_table = table.find(keys) >= 0
        assert (in_table | table.in_runs(keys)).all() and not (in_table & table.in_runs(keys)).any()
        absent = as_rows([k ^ (1 << 64) for k in parents if k ^ (1 << 64) not in parents], 2)
        assert not (table.find(absent) >= 0).any() and not table.in_runs(absent).any()
        for key, parent in parents.items():
            assert table.parent_of(key, lambda s, t: (s, t) in edges) == parent
    table.close()


def _weak_fingerprint(weak, keys):
    return np.maximum(weak(keys) >> np.uint64(32), np.uint64(1)).astype(np.uint32)


def test_mix_is_undone_by_unmix():
    keys = np.random.default_rng(3).integers(0, 1 << 63, 1000, dtype=np.uint64)
    assert (unmix(mix(keys)) == keys).all()


def _sharing(fp: int, n: int) -> list[int]:
    """`n` keys below 2^63 whose fingerprint is `fp`."""
    lows = np.arange(1, 64 * n, dtype=np.uint64)
    keys = unmix((np.uint64(fp) << np.uint64(32)) | lows)
    keys = keys[keys < np.uint64(1 << 63)][:n]
    assert (fingerprint(keys) == fp).all()
    return [int(k) for k in keys]


def test_colliding_fingerprints_resolve_to_the_recorded_parent():
    init, x, y = 11, 13, 14
    a, b = _sharing(0x5EED, 2)
    edges = {(init, a), (a, b), (a, x), (b, y), (b, x), (b, b)}
    table = VisitedTable(capacity=8, links="hash")
    for key, parent in [(init, None), (a, init), (b, a), (x, a), (y, b)]:
        ref = 0 if parent is None else int(fingerprint(np.asarray([parent], np.uint64))[0])
        table.reserve(1)
        table.insert(np.asarray([key], np.uint64), np.asarray([ref], np.uint32))
    reaches = lambda s, t: (s, t) in edges      # noqa: E731
    assert table.parent_of(y, reaches) == b     # only b has a firing to y
    assert table.parent_of(x, reaches) == a     # both do: a's chain is the shorter
    assert table.parent_of(b, reaches) == a     # b's own chain would come back to b
    table.spill()                               # the holders of a fingerprint in a disk run
    assert table.parent_of(y, reaches) == b and table.parent_of(x, reaches) == a


def test_given_back_pages_read_as_zero():
    page = mmap.PAGESIZE // 8
    flat = np.full(16 * page, 7, np.uint64)
    first = -(-flat.ctypes.data // mmap.PAGESIZE) * mmap.PAGESIZE      # the first whole page
    skip = (first - flat.ctypes.data) // 8
    give_back_pages(flat, 0, 8 * page + 5)
    assert (flat[:skip] == 7).all() and not flat[skip:skip + 7 * page].any() and (flat[8 * page:] == 7).all()
