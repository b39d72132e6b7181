"""The compiled store's state graph, for termination and obligations (`lasso.py`).

A compiled search keeps no edges (8.25 bytes a state) unless asked to record them
(`explore_compiled(edges=True)`, as the explicit engine asks where termination or obligation claims
are decided on it): the search then keeps each expanded state's transitions as it looks its
successors up (`arrays.EdgeArrays`), and `state_graph` takes them. Without them `state_graph`
rebuilds them once the search is over: the visited table is rebuilt from the states, and compiled
code re-expands every expanded state with the model's `expand`, looking each successor up. Either
way the graph is numpy arrays in the python store's order (by source, each source's in firing
order), with the stuck states (deadlocks). The region predicates of the graph claims (`lasso.region_predicates`)
were watched by the search, so the model's module holds them compiled: `expanded_where` runs them
over the stored states in compiled code as well. `lasso.py` then decides on this graph exactly as
on the python store's: the same verdicts, the same components, the same lassos.

The compiled code reports a firing's action, not its choice: the graph's labels name actions
(`labels.items[a] == (a, ())`), and `trace` finds each step's choice by re-expanding its
source with the reference code (the first firing of that action reaching the next state, which
is the edge the reference's order puts first).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from verifier.engines.actiongen import Labels
from verifier.engines.bfsgen import packed_predicate, packing_of
from verifier.engines.compact import firings_along, firings_of
from verifier.engines.compiled import cache
from verifier.engines.compiled.arrays import index_bits, table_size
from verifier.engines.compiled.numbagen import SIGNATURES, loop_source
from verifier.engines.compiled.search import BATCH, BUFFER, CompiledSpace
from verifier.engines.symmetry import lift
from verifier.ir.expr import Expr
from verifier.ir.model import Action, Model
from verifier.semantics import Layout, State
from verifier.trace import Trace, build_trace

_GRAPH = """\
import numpy as np
from numba import njit

from {loop} import EXPAND, KEYS, TABLE, _home, _prefetch, _tag{row_helpers}

PREDICATE = types.FunctionType({predicate})
EDGES = types.int32[::1]


@njit(types.int64(EXPAND, KEYS, types.int64, TABLE, types.int64, STATES, EDGES, EDGES, types.uint8[::1], KEYS,
                  STATES, STATES, STATES, STATES), **OPTIONS)
def edges(expand, keys, head, table, bits, offsets, dst, act, stuck, out, acts, count, ends, homes):
    # a batch of states expanded ahead and their successors' table slots fetched together (as the
    # search does: the lookups' cache misses overlap), then each successor looked up in order
    e = 0
    offsets[0] = 0
    size = table.shape[0]
    low = (1 << bits) - 1
    batch = ends.shape[0]
    firings = out.shape[0] // batch
    i = 0
    while i < head:
        ahead = min(head, i + batch) - i
        for b in range(ahead):
            lo = b * firings
            count[0] = lo
            final = expand({state_ahead}, out, acts, count, lo)
            ends[b] = count[0]
            stuck[i + b] = 1 if ends[b] == lo and not final else 0
            for j in range(lo, ends[b]):
                h = {hash_out}
                p = _home(h, size)
                homes[j] = (_tag(h, bits) << 32) | p
                _prefetch(table, p)
        for b in range(ahead):
            for j in range(b * firings, ends[b]):
                p = homes[j] & 0xFFFFFFFF
                t = homes[j] >> 32
                while True:
                    x = np.int64(table[p])
                    if x == 0:
                        break
                    if (x >> bits) == t and {same}:
                        dst[e] = (x & low) - 1
                        act[e] = acts[j]
                        e += 1
                        break
                    p += 1
                    if p == size:
                        p = 0
            offsets[i + b + 1] = e
        i += ahead
    return e


@njit(types.int64(PREDICATE, types.int64, KEYS, types.int64, types.uint8[::1]), **OPTIONS)
def where(pred, k, keys, head, mask):
    for i in range(head):
        try:
            mask[i] = 1 if pred(k, {state}) else 0
        except Exception:
            return i
    return -1
"""


def graph_source(words: int) -> str:
    """The compiled code that rebuilds the edges and runs a predicate over the stored states, for
    states of `words` words (one module for one word, another for several)."""
    loop = cache.module_name(loop_source(words))
    if words == 1:
        fill = {"loop": loop, "predicate": "WATCHED_SIGNATURE", "state": "keys[i]", "state_ahead": "keys[i + b]",
                "row_helpers": ", _hash", "hash_out": "_hash(out[j])", "same": "keys[(x & low) - 1] == out[j]"}
    else:
        fill = {"loop": loop, "predicate": "WATCHED_ROWS_SIGNATURE", "state": "keys, i", "state_ahead": "keys, i + b",
                "row_helpers": ", _hash_row, _same_row", "hash_out": "_hash_row(out, j)",
                "same": "_same_row(keys, (x & low) - 1, out, j)"}
    return SIGNATURES + _GRAPH.format(**fill)


@dataclass
class CompiledGraph:
    """A compiled search's state graph, read by `lasso.py` as the python store's `StateSpace`."""

    space: CompiledSpace
    offsets: np.ndarray          # int64, a slot per state and one more: state i's transitions are offsets[i] to
    # offsets[i + 1] of dst and lab (none for the states past the head)
    dst: np.ndarray              # transitions of the expanded states (int32): target, action
    lab: np.ndarray
    deadlocks: list[int]         # every stuck state among the expanded ones, in BFS order
    labels: Labels

    @property
    def lay(self) -> Layout:
        return self.space.lay

    @property
    def model(self) -> Model:
        return self.space.model

    @property
    def head(self) -> int:
        return self.space.head

    def __len__(self) -> int:
        return len(self.space)

    @property
    def src(self) -> np.ndarray:
        """Each transition's source (int32; made when asked: `lasso.py` reads `edge_csr`)."""
        return np.repeat(np.arange(len(self), dtype=np.int32), np.diff(self.offsets))

    def edge_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.src, self.dst, self.lab

    def edge_csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The transitions by source: (offsets, a slot per state and one more; targets; actions)."""
        return self.offsets, self.dst, self.lab

    def expanded_where(self, e: Expr, among: Sequence[int] | None = None) -> list[int]:
        """The expanded states (indices, BFS order; only those of `among` where given) where `e`
        holds, by its compiled predicate when the search watched it. A model error raises the
        reference's `EvalError` (of the first state that raises)."""
        return self.expanded_array(e, among).tolist()

    def expanded_array(self, e: Expr, among: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """`expanded_where` as a numpy array (int64)."""
        space = self.space
        if e not in space.watched or space.module is None:
            pred = packed_predicate(self.lay, e)
            return np.array([i for i in (range(self.head) if among is None else among) if pred(space.key(i))],
                            np.int64)
        runtime, _known = cache.load(graph_source(space.words))
        mask = np.zeros(self.head, np.uint8)
        failed = runtime.where(space.module.watched, space.watched.index(e), space.keys, self.head, mask)
        if failed >= 0:
            packed_predicate(self.lay, e)(space.key(failed))
            raise AssertionError("the compiled code met a model error the reference code does not meet")
        if among is None:
            return np.flatnonzero(mask)
        among = np.asarray(among, np.int64)
        return among[mask[among] != 0]

    def unpack(self, i: int) -> State:
        return packing_of(self.lay).unpack(self.space.key(i))

    def firing(self, label: int) -> tuple[Action, tuple]:
        """The action of a label (its choice is found by `trace`)."""
        return self.model.actions[label], ()

    def path_to(self, i: int) -> tuple[list[State], list[tuple[Action, tuple]]]:
        """States and firings from an initial state to state `i` along the parent links."""
        chain = self.space.chain(i)
        unpack = packing_of(self.lay).unpack
        return [unpack(k) for k in chain], firings_along(self.lay, chain, self.space.canon)

    def trace_to(self, i: int) -> Trace:
        return self.space.trace_to(i)

    def trace(self, states: list[State], firings: list[tuple[Action, tuple]], loop_start: int | None = None) -> Trace:
        """The trace of a path of states, each step's choice that of the first firing of its action
        that reaches the next state; under symmetry, the model path it stands for."""
        pack = packing_of(self.lay).pack
        canon = self.space.canon or (lambda x: x)
        actions = {id(action): a for a, action in enumerate(self.model.actions)}
        chosen = []
        for (action, _choice), before, after in zip(firings, states, states[1:]):
            want, target = actions[id(action)], pack(after)
            choice = next(c for a, c, t, _gap in firings_of(self.lay, pack(before))
                          if a == want and t is not None and canon(t) == target)
            chosen.append((action, choice))
        if self.space.canon is not None:
            states, chosen, loop_start = lift(self.lay, self.space.canon, pack, states, chosen, loop_start)
        return build_trace(self.lay, states, chosen, loop_start)


def state_graph(space: CompiledSpace) -> CompiledGraph:
    """The graph of `space`'s expanded states: the one its search recorded (taken from it: a search
    kept for later passes does not keep it), else rebuilt in compiled code (see the module docstring)."""
    labels = Labels()
    for a in range(len(space.model.actions)):
        labels(a, ())
    if space.edges is not None:
        edges, space.edges = space.edges, None
        return CompiledGraph(space, edges.offsets, edges.dst, edges.lab, np.flatnonzero(edges.stuck).tolist(), labels)
    return _rebuilt(space, labels)


def _rebuilt(space: CompiledSpace, labels: Labels) -> CompiledGraph:
    """The graph of `space`'s expanded states, rebuilt in compiled code."""
    assert space.module is not None and space.expand is not None, "a compiled search keeps its code"
    loop, _known = cache.load(loop_source(space.words))
    runtime, _known = cache.load(graph_source(space.words))
    stored, head = len(space), space.head
    table = np.zeros(table_size(stored), np.uint32)
    bits = index_bits(table.shape[0])
    loop.fill(space.keys, 0, stored, table, bits)
    offsets = np.zeros(stored + 1, np.int64)
    dst = np.empty(max(1, space.transitions), np.int32)
    act = np.empty(max(1, space.transitions), np.int32)
    stuck = np.zeros(max(1, head), np.uint8)
    firings = space.firings
    batch = max(1, min(BATCH, BUFFER // firings))
    edges = runtime.edges(space.expand, space.keys, head, table, bits, offsets, dst, act, stuck,
                          np.empty((batch * firings, *space.keys.shape[1:]), np.int64),
                          np.empty(batch * firings, np.int64), np.zeros(1, np.int64), np.empty(batch, np.int64),
                          np.empty(batch * firings, np.int64))
    del table
    offsets[head + 1:] = edges
    return CompiledGraph(space, offsets, dst[:edges], act[:edges], np.flatnonzero(stuck[:head]).tolist(), labels)
