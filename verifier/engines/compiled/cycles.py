"""Cyclic components, fairness witnesses and shortest paths of a state graph held in numpy arrays,
in compiled code: the search `lasso.py` runs on large graphs.

The graph is in CSR form: the transitions of state `s` are `offsets[s]` to `offsets[s + 1]` of
`dst` (targets) and `lab` (labels), in firing order. A transition is *kept* when its label is
(`kept[lab[e]]`, not a cut action) and *inside* a set of states when both its ends are
(`inside`, a byte per state). The Numba module (`SOURCE`) does not depend on the model: it is
compiled once per machine and kept in the disk cache (`cache.py`). Each function answers what
`lasso.py`'s dict-of-lists search answers, in the same order (states ascending, each state's
transitions in firing order, breadth first), so both find the same components, witnesses and
lassos.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np

from verifier.engines.compiled import cache

SOURCE = '''\
import numpy as np
from numba import njit, types

# nothing here allocates an array: no reference counting of those passed in
OPTIONS = {"cache": True, "_nrt": False}
IDX = types.int32[::1]
OFFSETS = types.int64[::1]
BYTES = types.uint8[::1]


@njit(types.int64(OFFSETS, IDX, IDX, BYTES, BYTES, IDX, IDX, IDX, IDX, IDX, OFFSETS, IDX, IDX), **OPTIONS)
def cyclic_components(offsets, dst, lab, inside, kept, states, comp, index, low, stack, cursor, members, starts):
    """The strongly connected components with a cycle (more than one state, or a kept self-loop)
    of the kept transitions inside `inside`, whose states are `states` (ascending), numbered in
    order of their first state: their states ascending in `members`, component k from starts[k]
    to starts[k + 1]. Returns their number. Tarjan's algorithm without recursion (its walk kept
    in `members` while it runs); `comp`, `index`, `low`, `stack` and `cursor` (a state's next
    transition) are work arrays of a slot per state of the graph, only those of `states` used."""
    for v in states:
        index[v] = -1
        comp[v] = -1
    counter = 0
    top = 0          # of `stack`: the states visited whose component is still open
    ncomp = 0
    for root in states:
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack[top] = root
        top += 1
        members[0] = root
        cursor[root] = offsets[root]
        depth = 1
        while depth > 0:
            v = members[depth - 1]
            e = cursor[v]
            end = offsets[v + 1]
            descended = False
            while e < end:
                w = dst[e]
                if inside[w] and kept[lab[e]]:
                    if index[w] < 0:
                        cursor[v] = e + 1
                        index[w] = low[w] = counter
                        counter += 1
                        stack[top] = w
                        top += 1
                        members[depth] = w
                        cursor[w] = offsets[w]
                        depth += 1
                        descended = True
                        break
                    if comp[w] < 0 and index[w] < low[v]:      # on the stack
                        low[v] = index[w]
                e += 1
            if descended:
                continue
            if low[v] == index[v]:
                while True:
                    top -= 1
                    w = stack[top]
                    comp[w] = ncomp
                    if w == v:
                        break
                ncomp += 1
            depth -= 1
            if depth > 0:
                u = members[depth - 1]
                if low[v] < low[u]:
                    low[u] = low[v]
    # per component (numbered below len(states)): `low` its size, `stack` 1 where it has a self-loop
    for c in range(ncomp):
        low[c] = 0
        stack[c] = 0
    for v in states:
        low[comp[v]] += 1
        for e in range(offsets[v], offsets[v + 1]):
            if dst[e] == v and kept[lab[e]]:
                stack[comp[v]] = 1
    # `index`: a component's number in order of its first state, -1 without a cycle
    for c in range(ncomp):
        index[c] = -1
    k = 0
    for v in states:
        c = comp[v]
        if index[c] < 0 and (low[c] > 1 or stack[c] == 1):
            index[c] = k
            k += 1
    for j in range(k + 1):
        starts[j] = 0
    for v in states:
        if index[comp[v]] >= 0:
            starts[index[comp[v]] + 1] += 1
    for j in range(k):
        starts[j + 1] += starts[j]
    for v in states:
        j = index[comp[v]]
        if j >= 0:
            members[starts[j]] = v
            starts[j] += 1
    for j in range(k, 0, -1):
        starts[j] = starts[j - 1]
    starts[0] = 0
    return k


@njit(types.int64(OFFSETS, IDX, IDX, BYTES, BYTES, BYTES, IDX), **OPTIONS)
def first_transition(offsets, dst, lab, kept, inside, wanted, states):
    """The first kept transition inside `inside` with a `wanted` label, from `states` in their
    order, each state's in firing order; -1 where there is none."""
    for s in states:
        for e in range(offsets[s], offsets[s + 1]):
            if wanted[lab[e]] and kept[lab[e]] and inside[dst[e]]:
                return e
    return -1


@njit(types.int64(OFFSETS, IDX, BYTES, IDX), **OPTIONS)
def first_without(offsets, lab, wanted, states):
    """The first of `states` with no transition of a `wanted` label (any target); -1 where none."""
    for s in states:
        found = False
        for e in range(offsets[s], offsets[s + 1]):
            if wanted[lab[e]]:
                found = True
                break
        if not found:
            return s
    return -1


@njit(types.void(OFFSETS, IDX, BYTES, IDX, BYTES), **OPTIONS)
def mark_with(offsets, lab, wanted, states, out):
    """out[j] = 1 where states[j] has a transition of a `wanted` label (any target)."""
    for j in range(states.shape[0]):
        s = states[j]
        for e in range(offsets[s], offsets[s + 1]):
            if wanted[lab[e]]:
                out[j] = 1
                break


@njit(types.int64(OFFSETS, IDX, IDX, BYTES, BYTES, types.int64, types.int64, IDX, IDX, IDX, IDX, IDX),
      **OPTIONS)
def shortest_path(offsets, dst, lab, kept, inside, a, b, back, via, queue, path, labels):
    """The shortest path a -> b of kept transitions inside `inside`, breadth first from `a`, each
    state's transitions in firing order (the first found reaching a state is its way there): its
    states after `a` in `path`, the labels taken in `labels`; returns its length (0 when a == b,
    -1 when b cannot be reached). `back` (a slot per state, all -1) holds each reached state's
    predecessor while it runs (`via`: the label) and is all -1 again after."""
    if a == b:
        return 0
    back[a] = a
    queue[0] = a
    head = 0
    tail = 1
    while head < tail and back[b] < 0:
        u = queue[head]
        head += 1
        for e in range(offsets[u], offsets[u + 1]):
            v = dst[e]
            if inside[v] and kept[lab[e]] and back[v] < 0:
                back[v] = u
                via[v] = lab[e]
                queue[tail] = v
                tail += 1
                if v == b:
                    break
    length = -1
    if back[b] >= 0:
        length = 0
        v = b
        while v != a:
            length += 1
            v = back[v]
        v = b
        for j in range(length - 1, -1, -1):
            path[j] = v
            labels[j] = via[v]
            v = back[v]
    for j in range(tail):
        back[queue[j]] = -1
    return length
'''


def kernels() -> ModuleType:
    """The compiled module (compiled once per machine, then loaded from the disk cache)."""
    return cache.load(SOURCE)[0]


@dataclass
class ArrayGraph:
    """A state graph in CSR form (see the module docstring), with the byte masks of the kept labels
    and of the states inside the region searched."""

    offsets: np.ndarray         # int64, a slot per state and one more
    dst: np.ndarray             # int32
    lab: np.ndarray             # int32
    kept: np.ndarray            # uint8, a slot per label
    inside: np.ndarray          # uint8, a slot per state

    @classmethod
    def of(cls, offsets, dst, lab, kept: np.ndarray, region) -> ArrayGraph:
        """The graph of the transitions `offsets`, `dst`, `lab` (numpy arrays, or Python arrays), restricted
        to the states of `region`."""
        dst, lab = (np.asarray(a) if isinstance(a, np.ndarray) else np.frombuffer(a, dtype=np.dtype(a.typecode))
                    for a in (dst, lab))
        inside = np.zeros(len(offsets) - 1, np.uint8)
        inside[np.asarray(region, dtype=np.intp)] = 1
        return cls(offsets, _int32(dst), _int32(lab), kept.astype(np.uint8), inside)

    def __len__(self) -> int:
        return int(self.inside.shape[0])

    def components(self, states: np.ndarray, inside: np.ndarray) -> list[np.ndarray]:
        """The components with a cycle of the kept transitions inside `inside`, whose states are
        `states` (ascending), in order of their first state, each its states ascending."""
        n, m = len(self), len(states)
        work = [np.empty(n, np.int32) for _ in range(4)]
        members, starts = np.empty(max(m, 1), np.int32), np.empty(m + 1, np.int32)
        k = kernels().cyclic_components(self.offsets, self.dst, self.lab, inside, self.kept, _int32(states), *work,
                                        np.empty(n, np.int64), members, starts)
        return [members[starts[j]:starts[j + 1]] for j in range(k)]

    def first_transition(self, inside: np.ndarray, wanted: np.ndarray, states: np.ndarray) -> int:
        return int(kernels().first_transition(self.offsets, self.dst, self.lab, self.kept, inside, wanted,
                                              _int32(states)))

    def first_without(self, wanted: np.ndarray, states: np.ndarray) -> int:
        return int(kernels().first_without(self.offsets, self.lab, wanted, _int32(states)))

    def with_any(self, wanted: np.ndarray, states: np.ndarray) -> np.ndarray:
        """A byte per state of `states`, 1 where it has a transition of a `wanted` label."""
        out = np.zeros(len(states), np.uint8)
        kernels().mark_with(self.offsets, self.lab, wanted, _int32(states), out)
        return out

    def source(self, e: int) -> int:
        """The state transition `e` leaves."""
        return int(np.searchsorted(self.offsets, e, side="right")) - 1


class Paths:
    """Shortest paths inside one set of states (`ArrayGraph.inside`-like mask), with the work
    arrays allocated once."""

    def __init__(self, graph: ArrayGraph, inside: np.ndarray) -> None:
        n = len(graph)
        self.graph, self.inside = graph, inside
        self.back = np.full(n, -1, np.int32)
        self.via, self.queue, self.path, self.labels = (np.empty(n, np.int32) for _ in range(4))

    def __call__(self, a: int, b: int) -> list[tuple[int, int]]:
        """The shortest path a -> b as [(state, label)] after `a` ([] when a == b)."""
        g = self.graph
        length = kernels().shortest_path(g.offsets, g.dst, g.lab, g.kept, self.inside, a, b, self.back, self.via,
                                         self.queue, self.path, self.labels)
        assert length >= 0, "a strongly connected component is strongly connected"
        return list(zip(self.path[:length].tolist(), self.labels[:length].tolist()))


def offsets_of(n: int, src) -> np.ndarray:
    """The CSR offsets (a slot per state of `n` and one more) of transitions sorted by source `src`
    (a numpy array, or a Python array)."""
    src = src if isinstance(src, np.ndarray) else np.frombuffer(src, dtype=np.dtype(src.typecode))
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=offsets[1:])
    return offsets


def _int32(a: np.ndarray) -> np.ndarray:
    """`a` as a contiguous int32 array (a view where it is one of 32 bits already)."""
    if a.dtype == np.uint32:
        a = a.view(np.int32)
    return np.ascontiguousarray(a, dtype=np.int32)
