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

from dataclasses import dataclass, field, replace
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


@njit(types.int64(OFFSETS, IDX, IDX, BYTES, BYTES, IDX, types.boolean, IDX, IDX, IDX, OFFSETS, IDX, IDX),
      **OPTIONS)
def cyclic_components(offsets, dst, lab, kept, inside, states, whole, rindex, path, flags, cursor, members, starts):
    """The strongly connected components with a cycle (more than one state, or a kept self-loop)
    of the kept transitions among the states walked: those `inside` marks where `whole`, else
    `states` (ascending); numbered in order of their first state: their states ascending in
    `members`, component k from starts[k] to starts[k + 1]. Returns their number. Pearce's one-array
    variant of Tarjan's algorithm, without recursion: `rindex` (a slot per state of the graph, DONE
    in every state but those walked, and again in those after the walk) holds a state's visit number,
    then its lowest reachable one while its component is open, then the component's number counted
    down from DONE - 1 (DONE: a component without a cycle, or a state not walked), so one read tells
    what an edge's target is: no mask is read per transition, nor a label where every one is kept.
    The walk's frames are `path` (its states), `cursor` (each one's next transition) and `flags`
    (1: still a root, 2: a self-loop); `members` holds the finished states whose component is open
    while it runs."""
    done = 2147483647
    every = True                   # every label kept: no label read per transition
    for x in range(kept.shape[0]):
        if kept[x] == 0:
            every = False
    walked = inside.shape[0] if whole else states.shape[0]
    for t in range(walked):
        v = t if whole else states[t]
        if not whole or inside[v]:
            rindex[v] = 0
    counter = 1
    c = done - 1
    top = 0
    for t in range(walked):
        root = t if whole else states[t]
        if rindex[root] != 0:
            continue
        rindex[root] = counter
        counter += 1
        path[0] = root
        cursor[0] = offsets[root]
        flags[0] = 1
        depth = 1
        while depth > 0:
            d = depth - 1
            v = path[d]
            rv = rindex[v]
            e = cursor[d]
            end = offsets[v + 1]
            descended = False
            while e < end:
                if every or kept[lab[e]]:
                    w = dst[e]
                    rw = rindex[w]
                    if rw == 0:
                        cursor[d] = e + 1
                        rindex[v] = rv
                        rindex[w] = counter
                        counter += 1
                        path[depth] = w
                        cursor[depth] = offsets[w]
                        flags[depth] = 1
                        depth += 1
                        descended = True
                        break
                    if rw < rv:
                        rv = rw
                        flags[d] &= 2
                    elif w == v:
                        flags[d] |= 2
                e += 1
            if descended:
                continue
            if flags[d] & 1:               # v's component closes: v and the finished states above it
                size = 1
                while top > 0 and rindex[members[top - 1]] >= rv:
                    top -= 1
                    rindex[members[top]] = c
                    size += 1
                if size > 1 or flags[d] & 2:
                    rindex[v] = c
                    c -= 1
                else:
                    rindex[v] = done
            else:
                rindex[v] = rv
                members[top] = v
                top += 1
            depth -= 1
            if depth > 0 and rindex[v] < rindex[path[depth - 1]]:
                rindex[path[depth - 1]] = rindex[v]
                flags[depth - 1] &= 2
    # the components with a cycle renumbered in order of their first state (`flags`: old number -> new)
    k = done - 1 - c
    for j in range(k):
        flags[j] = -1
    order = 0
    for j in range(k + 1):
        starts[j] = 0
    if k > 0:
        for t in range(walked):
            v = t if whole else states[t]
            r = rindex[v]
            if r != done and flags[done - 1 - r] < 0:
                flags[done - 1 - r] = order
                order += 1
        for t in range(walked):
            v = t if whole else states[t]
            r = rindex[v]
            if r != done:
                starts[flags[done - 1 - r] + 1] += 1
        for j in range(k):
            starts[j + 1] += starts[j]
        for t in range(walked):
            v = t if whole else states[t]
            r = rindex[v]
            if r != done:
                j = flags[done - 1 - r]
                members[starts[j]] = v
                starts[j] += 1
                rindex[v] = done
        for j in range(k, 0, -1):
            starts[j] = starts[j - 1]
        starts[0] = 0
    return k


@njit(types.int64(OFFSETS, IDX, IDX, BYTES, BYTES), **OPTIONS)
def on_no_cycle(offsets, dst, lab, kept, alive):
    """Clears in `alive` (a byte per state, 1 for those walked) states that lie on no cycle of the
    kept transitions among them, by sweeps in index order: a transition to a state of no larger index
    closes every cycle it is on (a *back* transition), so a state on a cycle is reached from a back
    transition's target by transitions to larger indices (one sweep up) and reaches a back
    transition's source so (one sweep down). Round after round, while a round clears at least half
    of the states left (else `met_cycle` and the components' walk take what is left as it is).
    Returns the states left. A round's marks are bits of `alive` (4 and 2 beside the state's 1): one
    byte read per transition."""
    n = offsets.shape[0] - 1
    every = True
    for x in range(kept.shape[0]):
        if kept[x] == 0:
            every = False
    left = 0
    for v in range(n):
        left += alive[v]
    while left > 0:
        for v in range(n - 1, -1, -1):        # down: 4 where v reaches a back transition's source; 2 its targets
            if alive[v]:
                reaches = 0
                for e in range(offsets[v], offsets[v + 1]):
                    if every or kept[lab[e]]:
                        w = dst[e]
                        a = alive[w]
                        if a:
                            if w <= v:
                                alive[w] = a | 2
                                reaches = 4
                            elif a & 4:
                                reaches = 4
                alive[v] |= reaches
        now = 0
        for v in range(n):                    # up: 2 where a back transition's target reaches v (known at v)
            a = alive[v]
            if a:
                if a & 2:
                    for e in range(offsets[v], offsets[v + 1]):
                        w = dst[e]
                        if w > v and alive[w] and (every or kept[lab[e]]):
                            alive[w] |= 2
                if a == 7:
                    now += 1
                    alive[v] = 1
                else:
                    alive[v] = 0
        cleared = left - now
        left = now
        if 2 * cleared < left + cleared:
            break
    return left


@njit(types.boolean(OFFSETS, IDX, IDX, BYTES, BYTES, IDX, OFFSETS), **OPTIONS)
def met_cycle(offsets, dst, lab, kept, alive, path, cursor):
    """Clears in `alive` (a byte per state, 1 for those walked) the states a depth-first walk of the kept
    transitions among them finishes before it meets a cycle (roots ascending, each state's transitions
    in firing order): until then every state a finished one reaches is finished, so none lies on a
    cycle. Returns whether it met one (its path and the states not reached are left alive). Where
    there is none, one walk in place of the sweeps' many rounds and the components' walk, with a byte
    read per transition. `path` and `cursor` (each state's next transition) are the walk's frames; a
    state on the path is 2 in `alive` while it runs."""
    every = True
    for x in range(kept.shape[0]):
        if kept[x] == 0:
            every = False
    for root in range(alive.shape[0]):
        if alive[root] != 1:
            continue
        alive[root] = 2
        path[0] = root
        cursor[0] = offsets[root]
        depth = 1
        while depth > 0:
            d = depth - 1
            v = path[d]
            e = cursor[d]
            end = offsets[v + 1]
            descended = False
            while e < end:
                if every or kept[lab[e]]:
                    w = dst[e]
                    a = alive[w]
                    if a == 1:
                        cursor[d] = e + 1
                        alive[w] = 2
                        path[depth] = w
                        cursor[depth] = offsets[w]
                        depth += 1
                        descended = True
                        break
                    if a == 2:
                        for j in range(depth):
                            alive[path[j]] = 1
                        return True
                e += 1
            if not descended:
                alive[v] = 0
                depth -= 1
    return False


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


DONE = 2**31 - 1       # `cyclic_components`' mark of a state it does not walk


@dataclass
class ArrayGraph:
    """A state graph in CSR form (see the module docstring), with the byte masks of the kept labels
    and of the states inside the region searched."""

    offsets: np.ndarray         # int64, a slot per state and one more
    dst: np.ndarray             # int32
    lab: np.ndarray             # int32
    kept: np.ndarray            # uint8, a slot per label
    inside: np.ndarray          # uint8, a slot per state
    walk: np.ndarray | None = field(default=None, repr=False)   # `cyclic_components`' rindex, DONE between walks

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

    def cutting(self, kept: np.ndarray) -> ArrayGraph:
        """The same graph and region with other kept labels (`kept`, a byte per label)."""
        if self.walk is None:
            self.walk = np.full(len(self), DONE, np.int32)
        return replace(self, kept=kept.astype(np.uint8))

    def components(self, states: np.ndarray | None, inside: np.ndarray) -> list[np.ndarray]:
        """The components with a cycle of the kept transitions inside `inside`, whose states are
        `states` (ascending; None: every state `inside` marks, walked without a list of them, after
        `on_no_cycle` and `met_cycle` cleared those on no cycle: the same components), in order of
        their first state, each its states ascending."""
        if self.walk is None:
            self.walk = np.full(len(self), DONE, np.int32)
        whole = states is None
        listed = np.empty(0, np.int32) if states is None else _int32(states)
        if whole:           # the states on no cycle cleared first: by sweeps (`on_no_cycle`), then a walk (`met_cycle`)
            inside = inside.copy()
            left = kernels().on_no_cycle(self.offsets, self.dst, self.lab, self.kept, inside)
            if left == 0 or not kernels().met_cycle(self.offsets, self.dst, self.lab, self.kept, inside,
                                                    np.empty(left, np.int32), np.empty(left, np.int64)):
                return []
        m = max(int(left) if whole else len(listed), 1)
        members, starts = np.empty(m, np.int32), np.empty(m + 1, np.int32)
        k = kernels().cyclic_components(self.offsets, self.dst, self.lab, self.kept, inside, listed, whole, self.walk,
                                        np.empty(m, np.int32), np.empty(m, np.int32), np.empty(m, np.int64),
                                        members, starts)
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
