"""The analyses' explored states when there are millions: a compact- or compiled-store search, read in BFS order.

`explore_big` runs the compact store (`engines.compact`) keeping its BFS levels,
and wraps the result in `CompactStates`, which reads like the reference
`StateSpace` where the analyses read it: `packed[i]` is the i-th state in the
reference search's order (so the shortest witness is found first, as with the
python store), `states[i]` its tuple, `path_to(i)` the shortest path to it
(the table's parent links; each firing found again by re-expanding its source).
Per stored state it keeps 8 bytes of BFS order beside the visited table's 13 to
16 (8 bytes more of each for each word of a wider state); no Python object.
`explore_compiled_states` does the same with the compiled store (`engines.compiled`),
whose states come in BFS order with their parents' indices (12 bytes a state of one
word), as `CompiledStates`.

When a budget stops the search, the questions left open are decided `beyond`
it: the states its random runs and witnesses add (`store`) are kept apart, in
Python, with parent index and label as in the reference store.
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from verifier.engines.bfsgen import packing_of
from verifier.engines.compact import CompactSpace, explore_compact, firings_along
from verifier.engines.statespace import StatesView, slot_columns
from verifier.engines.visited import hash_rows
from verifier.engines.words import as_ints, as_rows, key_at, no_states
from verifier.ir.model import Action, Model
from verifier.resources import Budget, Stop, StopKind
from verifier.resources.memory import limit_words, over_soft
from verifier.semantics import State

if TYPE_CHECKING:
    from verifier.engines.compiled.search import CompiledSpace

CHUNK = 1 << 16          # states converted to Python ints at a time when the scan iterates


def explore_big(model: Model, budget: Budget, cap: int | None) -> CompactStates:
    """A compact-store search of `model`, capped by `cap` states, `budget`'s depth and the memory
    guard."""
    levels: list[np.ndarray] = []
    space = explore_compact(model, Budget(max_states=cap, max_depth=budget.max_depth, owner=budget.owner),
                            tick=_memory_guard(budget), order=levels)
    return CompactStates(space, levels)


def _memory_guard(budget: Budget) -> Callable[[int, int], Stop | None]:
    """A search's `tick`: its stop once the process passes the memory guard's soft limit."""
    memory = Stop(StopKind.MEMORY, "the memory guard" if budget.max_memory_mb is None else
                  f"--max-memory {budget.max_memory_mb}", limit_words(budget.max_memory_mb))
    return lambda _states, _depth: memory if over_soft(budget.max_memory_mb) else None


class _Packed(Sequence):
    """`space.packed[i]`: the i-th stored state as a packed int."""

    def __init__(self, space: CompactStates):
        self._space = space

    def __len__(self) -> int:
        return self._space.n + len(self._space.extra)

    def __getitem__(self, i):
        space = self._space
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        if i < 0:
            i += len(self)
        return key_at(space.order, i) if i < space.n else space.extra[i - space.n]

    def __iter__(self) -> Iterator[int]:
        order = self._space.order
        for first in range(0, self._space.n, CHUNK):
            yield from as_ints(order[first:first + CHUNK])
        yield from self._space.extra


class _Parents(Sequence):
    """`space.parent[i]`: the index of the state `i` was first reached from, -1 for an initial state."""

    def __init__(self, space: CompactStates):
        self._space = space

    def __len__(self) -> int:
        return len(self._space.packed)

    def __getitem__(self, i):
        space = self._space
        if i >= space.n:
            return space.extra_parent[i - space.n]
        if i < space.roots:
            return -1
        return space.parent_of(i)


class _Seen:
    """`x in space.seen`: whether packed state `x` is stored."""

    def __init__(self, space: CompactStates):
        self._space = space

    def __contains__(self, x: int) -> bool:
        space = self._space
        return x in space.extra_index or space.stored(x)


class CompactStates:
    """A compact-store search as the analyses read a `StateSpace` (see the module docstring)."""

    def __init__(self, compact: CompactSpace, levels: list[np.ndarray]):
        self.compact = compact
        error = None if compact.error is None else (compact.rank[compact.error[0]], compact.error[1])
        order = np.concatenate(levels) if levels else no_states(packing_of(compact.lay).words)
        self._hold(compact, order, int(levels[0].shape[0]) if levels else 0, error)

    def _hold(self, space: CompactSpace | CompiledSpace, order: np.ndarray, roots: int,
              error: tuple[int, str] | None) -> None:
        """Hold a search's states in BFS order (`order`, the first `roots` of them initial) and what it says."""
        self.lay = space.lay
        self.packing = packing_of(space.lay)
        self.labels = space.labels
        self.order = order
        self.n = int(order.shape[0])
        self.roots = roots
        self.complete, self.stop, self.error = space.complete, space.stop, error
        self.extra: list[int] = []                 # states stored beyond the search (`store`)
        self.extra_parent = array("i")
        self.extra_via = array("I")
        self.extra_index: dict[int, int] = {}
        self._sorted: np.ndarray | None = None     # argsort of `order` (of its hashes for rows), for `index_of`
        self._hashes: np.ndarray | None = None     # the rows' hashes in that order
        self._keys: np.ndarray | None = None       # `order` sorted (one word a state), for `stored`
        self.packed = _Packed(self)
        self.parent = _Parents(self)
        self.states = StatesView(self)
        self.seen = _Seen(self)

    def __getstate__(self) -> dict:
        """Pickled (a reading analysed in another process sends its context back) without the
        generated packing, the lookup index (both rebuilt when asked for) and the views."""
        dropped = ("packing", "_sorted", "_hashes", "_keys", "packed", "parent", "states", "seen")
        return {k: v for k, v in self.__dict__.items() if k not in dropped}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.packing, self._sorted, self._hashes, self._keys = packing_of(self.lay), None, None, None
        self.packed, self.parent, self.states, self.seen = _Packed(self), _Parents(self), StatesView(self), _Seen(self)

    @property
    def model(self) -> Model:
        return self.lay.model

    @property
    def reason(self) -> str:
        """Why the search stopped short, in words ("" when complete)."""
        return "" if self.stop is None else self.stop.words

    def __len__(self) -> int:
        return len(self.packed)

    def unpack(self, i: int) -> State:
        return self.packing.unpack(self.packed[i])

    def store(self, packed: int, parent: int, label: int) -> int:
        """Store a state reached beyond the search from state `parent` by the firing `label`; its index."""
        i = len(self.packed)
        self.extra.append(packed)
        self.extra_parent.append(parent)
        self.extra_via.append(label)
        self.extra_index[packed] = i
        return i

    def index_of(self, state: State | int) -> int | None:
        """The index of a state (tuple or packed int), None when it is not stored."""
        x = state if isinstance(state, int) else self.packing.pack(state)
        if x in self.extra_index:
            return self.extra_index[x]
        if self.order.ndim > 1:
            return self._index_of_row(x)
        if self._sorted is None:
            self._sorted = np.argsort(self.order, kind="stable")
        key = np.uint64(x)
        at = int(np.searchsorted(self.order, key, sorter=self._sorted))
        if at < self.n and int(self.order[self._sorted[at]]) == x:
            return int(self._sorted[at])
        return None

    def _index_of_row(self, x: int) -> int | None:
        """`index_of` where states are rows of words: looked up by hash, then compared."""
        if self._sorted is None:
            hashes = hash_rows(self.order)
            self._sorted = np.argsort(hashes, kind="stable")
            self._hashes = hashes[self._sorted]
        assert self._hashes is not None
        h = hash_rows(as_rows([x], self.packing.words))[0]
        at = int(np.searchsorted(self._hashes, h))
        while at < self.n and self._hashes[at] == h:
            if key_at(self.order, int(self._sorted[at])) == x:
                return int(self._sorted[at])
            at += 1
        return None

    def release_lookups(self) -> None:
        self._sorted = self._hashes = self._keys = None

    def sample(self, n: int, first: int | None = None) -> np.ndarray:
        """At most `n` stored states of the search (of its `first` states, if given) spread evenly over
        it, one row each, one column per slot."""
        p = self.packing
        stored = self.n if first is None else min(first, self.n)
        if not stored:
            return np.zeros((0, len(self.lay.slots)), dtype=np.int64)
        picks = np.unique(np.linspace(0, stored - 1, min(n, stored)).astype(np.int64))
        return slot_columns(p, self.order[picks])

    def parent_of(self, i: int) -> int:
        """The index of the state stored state `i` (of the search) was first reached from."""
        found = self.index_of(self.compact.chain(key_at(self.order, i))[-2])
        assert found is not None, "a stored state's parent is stored"
        return found

    def stored(self, x: int) -> bool:
        """Whether the search stored packed state `x`."""
        table = self.compact.table
        return bool(table.find(as_rows([x], table.words))[0] >= 0)

    def chain(self, i: int) -> list[int]:
        """Packed states from an initial state to stored state `i` of the search."""
        return self.compact.chain(key_at(self.order, i))

    def path_to(self, i: int) -> tuple[list[State], list[tuple[Action, tuple]]]:
        """States and firings from an initial state to state `i` (a shortest path within the search)."""
        tail: list[tuple[int, int]] = []          # (packed, label) of the stored-beyond states, last first
        while i >= self.n:
            tail.append((self.extra[i - self.n], self.extra_via[i - self.n]))
            i = self.extra_parent[i - self.n]
        keys = self.chain(i)
        firings = firings_along(self.lay, keys)
        for x, label in reversed(tail):
            keys.append(x)
            a, choice = self.labels.items[label]
            firings.append((self.model.actions[a], choice))
        return [self.packing.unpack(k) for k in keys], firings


def explore_compiled_states(model: Model, budget: Budget, cap: int | None) -> CompiledStates:
    """A compiled-store search of `model` (`compiled.search.why_not` says it fits), capped by `cap`
    states, `budget`'s depth and the memory guard; `CompileError` where Numba cannot compile it."""
    from verifier.engines.compiled.search import explore_compiled

    space = explore_compiled(model, _capped(budget, cap), tick=_memory_guard(budget))
    return CompiledStates(space)


def stops_at(searched: CompiledSpace | None, cap: int) -> bool:
    """Whether `searched`, another compiled search of the model (None: none), stored exactly the states
    the analyses' own search capped at `cap` stores: unreduced, stopped by its state cap at `cap` (every
    compiled search stores the same states in the same order, so both stop after the same one)."""
    return searched is not None and not searched.reductions and searched.stop is not None and \
        searched.stop.kind is StopKind.STATES and len(searched) == cap


def _capped(budget: Budget, cap: int | None) -> Budget:
    """The budget of the analyses' own compiled search: `cap` states, `budget`'s depth and owner."""
    return Budget(max_states=cap, max_depth=budget.max_depth, owner=budget.owner)


class CompiledStates(CompactStates):
    """A compiled-store search as the analyses read a `StateSpace`: its states are in BFS order
    already, each with its parent's index (the module docstring); the compiled module itself is
    not kept (a context travels between processes pickled)."""

    def __init__(self, compiled: CompiledSpace):
        order = compiled.keys.view(np.uint64)       # packed states are below 2^63: the same values
        roots = compiled.levels[1] if len(compiled.levels) > 1 else len(compiled)
        self.parents = compiled.parent
        self._hold(compiled, order, roots, compiled.error)

    @classmethod
    def stopped(cls, searched: CompiledSpace, budget: Budget, cap: int) -> CompiledStates:
        """Another search's states where the analyses' own would stop at the same ones (`stops_at`),
        stopped as theirs (`budget`'s owner, at `cap`)."""
        out = cls(searched)
        out.stop = _capped(budget, cap).states_stop()
        return out

    def parent_of(self, i: int) -> int:
        return int(self.parents[i])

    def stored(self, x: int) -> bool:
        """Looked up in the states sorted, where each is one word (on 16 M states a sort costs a sixth of
        the argsort `index_of` keeps: the random runs of `beyond` ask only this)."""
        if self.order.ndim > 1:
            return self.index_of(x) is not None
        if self._keys is None:
            self._keys = np.sort(self.order)
        at = int(np.searchsorted(self._keys, np.uint64(x)))
        return at < self.n and int(self._keys[at]) == x

    def chain(self, i: int) -> list[int]:
        out = []
        while i != -1:
            out.append(key_at(self.order, i))
            i = int(self.parents[i])
        return out[::-1]
