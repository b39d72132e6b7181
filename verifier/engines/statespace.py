"""The explored state space: packed states in BFS order with compact parent links.

State `i` is `packed[i]` (an int, see `codegen.Packing`); `parent[i]` is the
index of the state it was first reached from (-1 for an initial state) and
`via[i]` the label of that firing (`labels.items[via[i]]` is (action index,
choice)). `levels[d]` is the index of the first state at BFS depth d. With
`keep_edges`, every transition is kept in three arrays (`esrc`, `edst`,
`elab`); otherwise the graph is rebuilt on demand by re-expanding states.
"""
from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import compress
from typing import TYPE_CHECKING, Any, Protocol

from verifier.engines import symmetry
from verifier.engines.actiongen import Labels
from verifier.engines.bfsgen import Expander, compile_expander, packed_predicate, packing_of
from verifier.engines.codegen import Packing
from verifier.engines.symmetry import Canon, canonicalizer
from verifier.ir.expr import Expr
from verifier.ir.model import Action, Model
from verifier.resources import Stop
from verifier.semantics import EvalError, Gap, Layout, State
from verifier.trace import Trace, build_trace

if TYPE_CHECKING:                  # networkx and numpy are imported where used: 0.5 s a check does not need
    import networkx as nx
    import numpy as np


def spread_sample(p: Packing, slots: int, stored: int, n: int, packed_at: Callable[[int], int]) -> np.ndarray:
    """At most `n` of the first `stored` states (`packed_at(i)`: the i-th, packed) spread evenly
    over them (the last one last), one row each, one column per slot."""
    import numpy as np

    if not stored:
        return np.zeros((0, slots), dtype=np.int64)
    picks = np.unique(np.linspace(0, stored - 1, min(n, stored)).astype(np.int64))
    if p.bits > 62:
        return np.array([p.unpack(packed_at(int(i))) for i in picks], dtype=np.int64).reshape(len(picks), -1)
    return slot_columns(p, np.array([packed_at(int(i)) for i in picks], dtype=np.uint64))


def slot_columns(p: Packing, packed: np.ndarray) -> np.ndarray:
    """Packed states (uint64, or rows of `p.words` words: `words.py`) as one row each, one int64
    column per slot."""
    import numpy as np
    if not p.widths:
        return np.zeros((len(packed), 0), dtype=np.int64)
    words = [packed] if packed.ndim == 1 else [packed[:, j] for j in range(packed.shape[1])]
    return np.stack([((words[sh // 64] >> np.uint64(sh % 64)) & np.uint64((1 << w) - 1)).astype(np.int64) + lo
                     for lo, w, sh in zip(p.los, p.widths, p.shifts)], axis=1)


class Stored(Protocol):
    """What `StatesView` reads of a store: its packing, its packed states in order, and a lookup."""

    packing: Packing

    @property
    def packed(self) -> Sequence[int]: ...

    def index_of(self, state: Any) -> int | None: ...


class StatesView(Sequence):
    """`space.states[i]`: the state tuple of index i, unpacked on access."""

    def __init__(self, space: Stored):
        self._space = space

    def __len__(self) -> int:
        return len(self._space.packed)

    def __getitem__(self, i):
        unpack = self._space.packing.unpack
        if isinstance(i, slice):
            return [unpack(x) for x in self._space.packed[i]]
        return unpack(self._space.packed[i])

    def __iter__(self) -> Iterator[State]:
        return map(self._space.packing.unpack, self._space.packed)

    def __contains__(self, state) -> bool:
        return self._space.index_of(state) is not None


class DepthView(Sequence):
    """`space.depth[i]`: the BFS depth of state i."""

    def __init__(self, space: StateSpace):
        self._space = space

    def __len__(self) -> int:
        return len(self._space.packed)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._space.depth_of(j) for j in range(len(self))[i]]
        return self._space.depth_of(i)


class LazyState(Mapping):
    """Slot name -> display value of one state, computed on first use."""

    def __init__(self, space: StateSpace, i: int):
        self._space, self._i = space, i
        self._values: dict[str, Any] | None = None

    def _get(self) -> dict[str, Any]:
        if self._values is None:
            self._values = self._space.lay.as_dict(self._space.unpack(self._i))
        return self._values

    def __getitem__(self, key):
        return self._get()[key]

    def __iter__(self):
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __repr__(self) -> str:
        return repr(self._get())


class StateSpace:
    """What a search found (see the module docstring for the storage)."""

    def __init__(self, lay: Layout, packing: Packing, labels: Labels, keep_edges: bool = False):
        self.lay = lay
        self.packing = packing
        self.labels = labels
        self.packed: list[int] = []
        self.seen: set[int] | dict[int, int] = {} if keep_edges else set()
        self.parent = array("i")
        self.via = array("I")
        self.levels: list[int] = [0]
        self.deadlocks: list[int] = []            # non-final states with no successor
        self.slot_gaps: dict[tuple[int, int], tuple[int, int, Gap]] = {}   # (action, slot) -> (state, label, gap)
        self.esrc = array("i") if keep_edges else None
        self.edst = array("i") if keep_edges else None
        self.elab = array("I") if keep_edges else None
        self.transitions = 0
        self.complete = True
        self.stop: Stop | None = None             # why the search stopped short (None: complete)
        self.error: tuple[int, str] | None = None   # (state, message): a model run-time error stopped the search
        self.seconds = 0.0
        self.head = 0                 # states below `head` are fully expanded
        self.depth = DepthView(self)
        self.states = StatesView(self)
        self.found: list[int | None] = []               # first state satisfying each watched predicate
        self.watch: list[int | None] = []
        self.watch_errors: dict[int, tuple[int, str]] = {}
        self.fired: dict[int, tuple[int, int, int] | None] = {}   # action -> first (state, label, target)
        # set by the search
        self.level_end = 0
        self.cur_depth = 0
        self.state_limit = -1
        self.depth_limit = 1 << 62
        self.tick: Callable[[int, int, int], Stop | None] | None = None   # budgets and progress, between states
        self._index: dict[int, int] | None = None
        self._expander: Expander | None = None
        self.canon: Canon | None = None               # set when states are stored one per symmetry orbit
        self.reductions: tuple[str, ...] = ()         # the reductions the search used, for the verdicts
        self.reduced = 0                              # states partial-order reduction did not fully expand

    @property
    def reason(self) -> str:
        """Why the search stopped short, in words ("" when complete)."""
        return "" if self.stop is None else self.stop.words

    # ---- pickling (a reading checked in another process sends its space back)
    def __getstate__(self) -> dict[str, Any]:
        """Everything but the generated code and the search's working sets: the states, parent
        links, labels and verdict data travel; the visited set and the kept edges do not (a
        copy rebuilds them on demand, as a search that kept no edges does)."""
        dropped = {"packing", "seen", "esrc", "edst", "elab", "tick", "depth", "states", "_index", "_expander",
                   "canon"}
        return {k: v for k, v in self.__dict__.items() if k not in dropped}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.packing = packing_of(self.lay)
        self.seen, self.esrc, self.edst, self.elab, self.tick = set(), None, None, None, None
        self._index, self._expander = None, None
        self.canon = canonicalizer(self.lay, self.packing) if symmetry.NAME in self.reductions else None
        self.depth, self.states = DepthView(self), StatesView(self)

    def store(self, packed: int, parent: int, label: int) -> int:
        """Store a state reached from state `parent` (-1: an initial state) by the firing
        `label`; its index."""
        i = len(self.packed)
        if isinstance(self.seen, dict):
            self.seen[packed] = i
        else:
            self.seen.add(packed)
        self.packed.append(packed)
        self.parent.append(parent)
        self.via.append(label)
        return i

    def watch_unexpanded(self, k: int, pred: Callable[[Any], bool]) -> None:
        """Watched predicate `k` on the states stored but not expanded: the first that satisfies
        it, or -1 and the error where evaluating it raised."""
        for i in range(self.head, len(self.packed)):
            try:
                if pred(self.packed[i]):
                    self.watch[k] = i
                    return
            except EvalError as err:
                self.watch[k] = -1
                self.watch_errors[k] = (i, str(err))
                return

    def expanded_where(self, e: Expr, among: Sequence[int] | None = None) -> list[int]:
        """The fully expanded states (indices, BFS order; only those of `among` where given) where
        the state predicate `e` holds."""
        pred = packed_predicate(self.lay, e)
        if among is None:
            return list(compress(range(self.head), map(pred, self.packed[:self.head])))
        return list(compress(among, map(pred, map(self.packed.__getitem__, among))))

    def release_lookups(self) -> None:
        """Free the visited set and the state index of a finished search (`index_of`
        rebuilds an index from `packed` when it is asked again)."""
        self.seen, self._index = set(), None

    # ---- the search loop's callbacks
    def record_gap(self, action: int, slot: int, value: int, i: int, label: int) -> None:
        key = (action, slot)
        if key not in self.slot_gaps:
            p = self.packing
            self.slot_gaps[key] = (i, label, Gap(p.names[slot], int(value), p.los[slot], p.his[slot]))

    # ---- lookups
    @property
    def model(self) -> Model:
        return self.lay.model

    def __len__(self) -> int:
        return len(self.packed)

    @property
    def max_depth(self) -> int:
        """The deepest BFS level stored."""
        return len(self.levels) - 1 if self.packed else 0

    def depth_of(self, i: int) -> int:
        if not 0 <= i < len(self.packed):
            raise IndexError(i)
        return bisect_right(self.levels, i) - 1

    def unpack(self, i: int) -> State:
        """State `i` as a `semantics` state tuple."""
        return self.packing.unpack(self.packed[i])

    def sample(self, n: int) -> np.ndarray:
        """At most `n` stored states spread evenly over the search (the deepest last), one row
        each, one column per slot."""
        return spread_sample(self.packing, len(self.lay.slots), len(self.packed), n, self.packed.__getitem__)

    def index_of(self, state: State | int) -> int | None:
        """Index of a state (tuple or packed int), or None when it was not explored."""
        x = state if isinstance(state, int) else self.packing.pack(state)
        if self.canon is not None:
            x = self.canon(x)
        if isinstance(self.seen, dict):
            return self.seen.get(x)
        if self._index is None:
            self._index = {s: i for i, s in enumerate(self.packed)}
        return self._index.get(x)

    def firing(self, label: int) -> tuple[Action, tuple]:
        a, choice = self.labels.items[label]
        return self.model.actions[a], choice

    @property
    def gaps(self) -> dict[tuple[int, str], tuple[int, tuple, Gap]]:
        """The first gap per (action index, variable name): (state, choice, gap)."""
        out: dict[tuple[int, str], tuple[int, tuple, Gap]] = {}
        for (a, slot), (i, label, gap) in sorted(self.slot_gaps.items(), key=lambda kv: kv[1][0]):
            key = (a, self.lay.slots[slot].var)
            if key not in out:
                out[key] = (i, self.labels.items[label][1], gap)
        return out

    # ---- paths and traces
    def path_to(self, i: int) -> tuple[list[State], list[tuple[Action, tuple]]]:
        """States and firings from an initial state to state `i` (a shortest path)."""
        chain = []
        while i != -1:
            chain.append(i)
            i = self.parent[i]
        chain.reverse()
        return [self.unpack(j) for j in chain], [self.firing(self.via[j]) for j in chain[1:]]

    def trace_to(self, i: int) -> Trace:
        """A shortest trace from an initial state to state `i`."""
        return self.trace(*self.path_to(i))

    def trace_through(self, i: int, label: int, target: int) -> Trace:
        """A shortest trace to state `i`, then the firing `label` to the packed state `target`."""
        states, firings = self.path_to(i)
        return self.trace(states + [self.packing.unpack(target)], firings + [self.firing(label)])

    def trace(self, states: list[State], firings: list[tuple[Action, tuple]], loop_start: int | None = None) -> Trace:
        """The trace of a path of stored states; under symmetry, the model path it stands for."""
        if self.canon is not None:
            states, firings, loop_start = symmetry.lift(self.lay, self.canon, self.packing.pack, states, firings,
                                                        loop_start)
        return build_trace(self.lay, states, firings, loop_start)

    # ---- the graph
    def expander(self) -> Expander:
        if self._expander is None:
            self._expander = compile_expander(self.lay)
        return self._expander

    def edge_arrays(self) -> tuple[array, array, array]:
        """(sources, targets, labels) of every transition of the expanded states."""
        if self.esrc is not None and self.edst is not None and self.elab is not None:
            return self.esrc, self.edst, self.elab
        src, dst, lab = array("i"), array("i"), array("I")
        expand = self.expander().expand
        for i in range(self.head):
            for a, choice, t, _gap in expand(self.packed[i]):
                if t is not None:
                    j = self.index_of(t)
                    if j is not None:
                        src.append(i)
                        dst.append(j)
                        lab.append(self.labels(a, choice))
        self.esrc, self.edst, self.elab = src, dst, lab
        return src, dst, lab

    @property
    def edges(self) -> Iterator[tuple[int, int, int, tuple]]:
        """Every transition as (source, target, action index, choice)."""
        items = self.labels.items
        src, dst, lab = self.edge_arrays()
        return ((s, d, items[x][0], items[x][1]) for s, d, x in zip(src, dst, lab))

    def to_networkx(self) -> nx.MultiDiGraph:
        """The state graph: nodes are state indices with attributes `depth`, `initial`,
        `phase` (models with phases) and `state` (a lazy mapping slot -> value); one edge per
        transition with attributes `action` (name) and `choice`. A MultiDiGraph (a DiGraph
        subclass), so that two firings between the same states stay two edges."""
        import networkx as nx

        g = nx.MultiDiGraph()
        phase_slot = self.lay.offsets["phase"][0] if "phase" in self.lay.offsets else None
        for d, first in enumerate(self.levels):
            last = self.levels[d + 1] if d + 1 < len(self.levels) else len(self.packed)
            for i in range(first, last):
                attrs: dict[str, Any] = {"depth": d, "initial": self.parent[i] == -1,
                                         "state": LazyState(self, i)}
                if phase_slot is not None:
                    raw = self.packing.field(self.packed[i], phase_slot)
                    attrs["phase"] = self.lay.display(self.lay.slots[phase_slot], raw)
                g.add_node(i, **attrs)
        actions = self.model.actions
        for src, dst, a, choice in self.edges:
            g.add_edge(src, dst, action=actions[a].name, choice=choice)
        return g
