"""The compiled store's search: breadth-first, state by state, in Numba-compiled code.

`explore_compiled` loads the model's module (`numbagen`) from the disk cache (`cache`: found by
a digest of the model and the watched predicates, the text generated only where it is not
there) and runs its `search` loop a slice of SLICE states at a time; between slices Python
grows the arrays (`arrays.py`: at most 16 bytes a state of one word of the search's state cap,
the states spilled to a file past a memory share), asks `tick` (time, memory) and reports progress.
The states live in numpy arrays in BFS order (8 bytes a word), with their parent links as a bit
string (a state's parent never comes before an earlier state's: 2 bits a state), found through
an open-addressing table of 4-byte slots (index and hash tag) at most MAX_LOAD full.
States are named by their BFS index, as the python store names them, and come out in its
order: the first witness of each watched predicate, the first deadlock and the first firing
of a tracked action are the reference's, and so are their shortest traces, which the
reference code rebuilds by re-expanding the states along the parent links. A model error
stops the search at its state; the reference code replays that state for the message.
"""
from __future__ import annotations

import re
import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType

import numpy as np

from verifier.engines.actiongen import Labels
from verifier.engines.base import ProgressFn, ProgressInfo
from verifier.engines.bfsgen import compile_expander, packed_predicate, packing_of
from verifier.engines.compact import firings_of, trace_along
from verifier.engines.compiled import cache
from verifier.engines.compiled.arrays import EdgeArrays, SearchArrays
from verifier.engines.compiled.numbagen import (
    RUNTIME,
    ModuleSource,
    Status,
    loop_source,
    module_shape,
    module_source,
    unbounded_predicate,
    unfit,
)
from verifier.engines.compiled.symmetry import reduction
from verifier.engines.symmetry import NAME as SYMMETRY
from verifier.engines.symmetry import Canon
from verifier.engines.words import as_ints, as_rows
from verifier.ir.expr import Expr
from verifier.ir.model import Model
from verifier.resources import Budget, Stop, model_error
from verifier.semantics import EvalError, Layout, initial_states, layout
from verifier.trace import Trace

SLICE = 1 << 16                # states expanded between two calls of `tick`
FIRST_CAPACITY = 1 << 12       # states the arrays hold at first (`arrays.py`: how they grow)
BATCH = 16                     # states the search expands ahead, their successors' table slots fetched together
BUFFER = 4096                  # successors of the states expanded ahead, at most (fewer states where one has more)


class CompileError(Exception):
    """Numba could not compile the generated module (or it could not be written anywhere): the
    caller searches in another store, saying why."""


@dataclass
class CompiledSpace:
    """What a compiled search found; states are BFS indices into `keys`."""

    lay: Layout
    keys: np.ndarray                       # packed states (int64; a row of words each where they take several), BFS order
    links: np.ndarray                      # the parent links (`numbagen.loop_source`): a bit string
    marks: np.ndarray                      # where every 2^MARK_BITS-th one of it lies
    inits: int                             # the initial states (the first ones; their parent is -1)
    levels: list[int]                      # first index of each level begun
    labels: Labels = field(default_factory=Labels)
    transitions: int = 0
    complete: bool = True
    stop: Stop | None = None               # why it stopped short (None: complete)
    error: tuple[int, str] | None = None
    seconds: float = 0.0
    compile_seconds: float = 0.0           # generating and loading (or compiling) the module
    cached: bool = False                   # the module was on disk already
    peak_bytes: int = 0                    # the arrays' largest bytes during the search, the table's included
    spilled: bool = False                  # the states were kept in a file (`arrays.py`)
    nlinks: int = 0                        # bits of `links`
    watch: list[int | None] = field(default_factory=list)
    watch_errors: dict[int, tuple[int, str]] = field(default_factory=dict)
    fired: dict[int, tuple[int, int, int] | None] = field(default_factory=dict)
    deadlocks: list[int] = field(default_factory=list)
    reductions: tuple[str, ...] = ()       # the symmetry reduction, where the search applied it
    canon: Canon | None = None             # then each state's canonical form (`symmetry.py`)
    head: int = 0                          # states below it were expanded
    module: ModuleType | None = None       # the model's generated module (`expand`, `watched`: `graph.py`)
    expand: Callable | None = None         # the successor function the search ran (the module's, or `symmetry`'s)
    watched: tuple[Expr, ...] = ()         # the predicates its `watch_all` and `watched` evaluate
    firings: int = 1                       # firings of one state, at most
    edges: EdgeArrays | None = None        # the state graph, where the search recorded it (`graph.state_graph` takes it)

    @property
    def reason(self) -> str:
        """Why the search stopped short, in words ("" when complete)."""
        return "" if self.stop is None else self.stop.words

    @property
    def model(self) -> Model:
        return self.lay.model

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes the search's states and parent links take once it is over (8.25 a state of one word)."""
        return int(self.keys.nbytes + self.links.nbytes + self.marks.nbytes)

    @property
    def parent(self) -> np.ndarray:
        """Every state's parent index (int32), -1 for an initial state (decoded from the links)."""
        out = np.empty(len(self), np.int32)
        self._loop().parents(self.links, self.nlinks, self.inits, out)
        return out

    def parent_of(self, i: int) -> int:
        """The index of state `i`'s parent, -1 for an initial state."""
        return int(self._loop().parent_of(self.links, self.marks, self.inits, i))

    def _loop(self) -> ModuleType:
        return cache.load(loop_source(self.words))[0]

    @property
    def max_depth(self) -> int:
        return len(self.levels) - 1 if len(self) else 0

    def depth_of(self, i: int) -> int:
        return bisect_right(self.levels, i) - 1

    def key(self, i: int) -> int:
        """State `i` as the reference code's packed int."""
        return int(self.keys[i]) if self.keys.ndim == 1 else as_ints(self.keys[i:i + 1])[0]

    @property
    def words(self) -> int:
        """64-bit words a state takes."""
        return 1 if self.keys.ndim == 1 else int(self.keys.shape[1])

    def packed(self) -> list[int]:
        """Every state as the reference code's packed int, in BFS order."""
        return as_ints(self.keys)

    def chain(self, i: int) -> list[int]:
        """Packed states from an initial state to state `i` along the parent links."""
        out = []
        while i != -1:
            out.append(self.key(i))
            i = self.parent_of(i)
        return out[::-1]

    def trace_to(self, i: int) -> Trace:
        return trace_along(self.lay, self.chain(i), canon=self.canon)

    def trace_through(self, i: int, label: int, target: int) -> Trace:
        a, choice = self.labels.items[label]
        return trace_along(self.lay, self.chain(i), (self.model.actions[a], choice, target), self.canon)


def compile_error_words(err: Exception) -> str:
    """The first line of a compile error, without the colours Numba gives its messages."""
    words = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", str(err)).strip()
    return words.splitlines()[0] if words else type(err).__name__


def why_not(model: Model, watch: Sequence[Expr] = ()) -> str:
    """Why the compiled store cannot search this (instantiated) model for these predicates
    ("" where it can)."""
    lay = layout(model)
    why = unfit(lay)
    for e in watch:
        why = why or unbounded_predicate(lay, e)
    return why


def explore_compiled(model: Model, budget: Budget = Budget(), progress: ProgressFn | None = None,
                     watch: Sequence[Expr] = (), track: Sequence[int] = (),
                     tick: Callable[[int, int], Stop | None] | None = None, symmetric: bool = False,
                     spill_bytes: int | None = None, edges: bool = False, at_least: int = 0) -> CompiledSpace:
    """Breadth-first search of an instantiated model (`why_not` says it fits) in compiled code.

    As `explicit.explore` without edges: `space.watch[k]` is the first state index where
    `watch[k]` holds, `space.fired[a]` the first firing (state, label, target) of each tracked
    action, `space.deadlocks` the first deadlock. `tick(states, depth)` is called between slices
    and may stop the search (its `Stop`). `symmetric`: store one state per orbit of the player
    rotations where the model declares `symmetry: players` (`symmetry.py`). `spill_bytes`: the
    states' and table's bytes past which the states are kept in a file (`arrays.py`). `edges`: record
    the state graph as the search goes (`space.edges`, for `graph.state_graph`: no second pass).
    `at_least`: states the search is known to store at least (a monitor product: its model's), its
    arrays sized for them (up to the state cap) from the start rather than grown to them (`first_capacity`)."""
    start = time.perf_counter()
    lay = layout(model)
    watch = tuple(watch)
    source = module_shape(lay)
    from numba.core.errors import NumbaError
    try:
        cache.load(RUNTIME)
        loop, _ = cache.load(loop_source(source.words))
        module, known, name = cache.load_generated(cache.digest_of("search", lay.model, watch),
                                                   lambda: _source(lay, watch).text)
        reduced = reduction(lay, module, name) if symmetric else None
    except (NumbaError, OSError) as err:
        raise CompileError(compile_error_words(err)) from err
    compiled_at = time.perf_counter()
    row = () if source.words == 1 else (source.words,)
    arrays = SearchArrays(source.words, first_capacity(at_least, budget), spill_bytes, edges, budget.max_states)
    space = CompiledSpace(lay, np.empty((0, *row), np.int64), np.zeros(1, np.uint64), np.zeros(1, np.int64), 0, [0],
                          cached=known,
                          watch=[None] * len(watch), fired=dict.fromkeys(track), module=module,
                          watched=tuple(watch), firings=source.firings)
    space.expand = expand = module.expand if reduced is None else reduced.expand
    if reduced is not None:
        space.canon, space.reductions = reduced.canon, (SYMMETRY,)
    try:
        pack = packing_of(lay).pack if reduced is None else lambda s: reduced.canon(packing_of(lay).pack(s))
        inits = list(dict.fromkeys(pack(s) for s in initial_states(lay)))
    except EvalError as err:
        space.complete, space.stop = False, model_error(f"model error in the initial states: {err}")
        return space
    if budget.max_states is not None and len(inits) > budget.max_states:
        inits = inits[:budget.max_states]
        space.complete, space.stop = False, budget.states_stop()
    arrays.grow(loop, 0, 0, 0, 1, len(inits))
    arrays.keys[:len(inits)] = as_rows(inits, source.words).astype(np.int64)
    arrays.levels[0] = 0
    loop.fill(arrays.keys, 0, len(inits), arrays.table, arrays.bits)
    max_depth = budget.max_depth if budget.max_depth is not None else 1 << 62
    ctl = np.array([0, len(inits), 0, 0, len(inits), 1, -1 if budget.max_states is None else budget.max_states,
                    max_depth, -1, SLICE, 1 if watch else 0, 0, len(inits), 0, 0, 1 if edges else 0], np.int64)
    wfound = np.full(max(1, len(watch)), -1, np.int64)
    werr = np.full(max(1, len(watch)), -1, np.int64)
    track_mask = np.zeros(max(1, len(model.actions)), np.uint8)
    track_mask[list(track)] = 1
    fired = np.full(track_mask.shape[0], -1, np.int64)
    batch = max(1, min(BATCH, BUFFER // source.firings))
    out = np.empty((batch * source.firings, *row), np.int64)
    acts = np.empty(batch * source.firings, np.int64)
    homes = np.empty(batch * source.firings, np.int64)
    tags = np.empty(batch * source.firings, np.int64)
    count = np.zeros(1, np.int64)
    no_offsets, no_edges, no_stuck = np.zeros(1, np.int64), np.zeros(1, np.int32), np.zeros(1, np.uint8)
    status: Status | None = None
    if not space.complete:
        status = Status.STATES            # the initial states alone passed the cap
    elif not inits:
        status = Status.DONE
    elif max_depth <= 0:
        status = Status.DEPTH
    last_report = start
    tick_at = SLICE                       # the head at which `tick` is asked next (the arrays' growth between)
    while status is None or status in (Status.TICK, Status.GROW):
        if status == Status.TICK:
            tick_at = int(ctl[0]) + SLICE
            stop = None if tick is None else tick(int(ctl[1]), int(ctl[3]))
            if stop is not None:
                space.complete, space.stop = False, stop
                break
        arrays.grow(loop, int(ctl[0]), int(ctl[1]), int(ctl[11]), int(ctl[5]), source.firings)
        ctl[9], ctl[13], ctl[14] = max(1, tick_at - int(ctl[0])), arrays.bits, arrays.room
        g = arrays.graph
        status = Status(loop.search(expand, module.watch_all, arrays.keys, arrays.links, arrays.marks, arrays.table,
                                    arrays.levels, ctl, wfound, werr, track_mask, fired, out, acts, count, homes, tags,
                                    np.empty(batch, np.int64), np.empty(batch, np.int64),
                                    *((no_offsets, no_edges, no_edges, no_stuck) if g is None else
                                      (g.offsets, g.dst, g.lab, g.stuck))))
        del g
        if progress is not None and time.perf_counter() - last_report >= 0.5:
            last_report = time.perf_counter()
            progress(ProgressInfo(int(ctl[1]), int(ctl[3]), last_report - start))
    head, stored = int(ctl[0]), int(ctl[1])
    if status == Status.STATES and space.complete:
        space.complete, space.stop = False, budget.states_stop()
    elif status == Status.DEPTH and space.complete:
        space.complete, space.stop = False, budget.depth_stop()
    elif status == Status.ERROR:
        message = error_message(lay, as_ints(arrays.keys[head:head + 1])[0])
        space.complete, space.error, space.stop = False, (head, message), model_error(f"model error: {message}")
    if head < stored:
        loop.scan(module.watch_all, arrays.keys, head, stored, wfound, werr)
    space.peak_bytes, space.spilled = arrays.peak, arrays.spilled
    space.edges = arrays.edges(head, stored)
    space.keys = arrays.finish(stored)                     # the table is let go of; the states and links stay
    space.links, space.marks, space.inits, space.nlinks = arrays.links, arrays.marks, len(inits), int(ctl[11])
    space.levels = arrays.levels[:int(ctl[5])].tolist()
    space.transitions = int(ctl[2])
    space.head = head
    if ctl[8] >= 0:
        space.deadlocks.append(int(ctl[8]))
    _watches(space, watch, wfound, werr)
    _firings(space, fired)
    space.compile_seconds = compiled_at - start
    space.seconds = time.perf_counter() - start
    if progress is not None:
        progress(ProgressInfo(stored, space.max_depth, space.seconds))
    return space


KEEP_SOURCES = 16        # generated modules' texts kept in the process (where a module is generated again)


def first_capacity(at_least: int, budget: Budget) -> int:
    """States a search's arrays hold at first: FIRST_CAPACITY, or the `at_least` states it is known
    to store, never past its state cap (which --max-memory bounds): the states, their order and the
    traces do not depend on it, only how often the arrays grow (each growth of the visited table
    fills it again from every state stored)."""
    cap = at_least if budget.max_states is None else min(at_least, budget.max_states)
    return max(FIRST_CAPACITY, cap)


@lru_cache(maxsize=KEEP_SOURCES)
def _source(lay: Layout, watch: tuple[Expr, ...]) -> ModuleSource:
    return module_source(lay, watch)


def error_message(lay: Layout, key: int) -> str:
    """The words of the model error the compiled code met in state `key` (the reference's)."""
    try:
        compile_expander(lay).expand(key)
    except EvalError as err:
        return str(err)
    raise AssertionError("the compiled code met a model error the reference code does not meet")


def _watches(space: CompiledSpace, watch: Sequence[Expr], wfound: np.ndarray, werr: np.ndarray) -> None:
    for k, e in enumerate(watch):
        if werr[k] >= 0 and (wfound[k] < 0 or werr[k] < wfound[k]):
            at = int(werr[k])
            try:
                packed_predicate(space.lay, e)(space.key(at))
            except EvalError as err:
                space.watch_errors[k] = (at, str(err))
                continue
            raise AssertionError("the compiled code met a model error the reference code does not meet")
        elif wfound[k] >= 0:
            space.watch[k] = int(wfound[k])


def _firings(space: CompiledSpace, fired: np.ndarray) -> None:
    """Each tracked action's first firing: the state the search saw it in, re-expanded for the
    choice and successor."""
    for a in space.fired:
        i = int(fired[a])
        if i < 0:
            continue
        first = next((a2, choice, t) for a2, choice, t, _gap in firings_of(space.lay, space.key(i))
                     if a2 == a and t is not None)
        target = first[2] if space.canon is None else space.canon(first[2])
        space.fired[a] = (i, space.labels(a, first[1]), target)
