"""The compact store: breadth-first search level by level over numpy batches.

Each BFS level is a queue of uint64 arrays of packed states (rows of words for
states wider than 63 bits: `words.py`) in discovery order, each let go of once
expanded (the level being expanded shrinks as the next one grows). It is
expanded CHUNK states at a time: by the vectorised code of `vecgen` where the
model allows (and the batch is at least VECTOR_MIN states, none of which might
meet a model error), else by the generated-Python reference
`bfsgen.compile_expander`, state by state. The successors of a chunk are deduplicated keeping the first firing in the
reference order (state, then firing), looked up in the visited set
(`visited.VisitedTable`) and appended to the next level in that order, so the
states come out in exactly the order the reference search stores them: the
first witness, the first deadlock and the first firing of an action are the
reference engine's, and so are their (shortest) traces.

Stored per state: the packed state and a parent link, 32 bits of the parent's
hash (about 13 to 16 bytes, 8 more a word past the first; a trace tells apart
the parents that share them);
no transition labels (a trace re-expands its states to name the firings) and
no edges, so claims that need the state graph (termination, obligations) stay
with the reference store.
"""
from __future__ import annotations

import itertools
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verifier.engines.actiongen import Labels
from verifier.engines.base import ProgressFn, ProgressInfo
from verifier.engines.bfsgen import compile_expander, generated_expander, packed_predicate, packing_of
from verifier.engines.symmetry import Canon, lift
from verifier.engines.vecgen import MAX_BITS, BatchCode, NotVectorisable, compile_batch, compile_batch_predicate
from verifier.engines.visited import VisitedTable
from verifier.engines.words import as_ints, as_rows, differs_from_previous, key_at, no_states, rows_at, sort_keys
from verifier.ir.expr import Expr
from verifier.ir.model import Action, Model
from verifier.resources import Budget, Stop, StopKind, model_error
from verifier.resources.memory import give_back_freed
from verifier.semantics import EvalError, Layout, initial_states, iter_transitions, layout
from verifier.trace import Trace, build_trace

CHUNK = 8192
VECTOR_MIN = 256          # smaller batches (narrow BFS levels) go state by state: numpy's per-call cost
TRIM_FROM = 4 << 20       # bytes freed (levels expanded, chunks' firings) since the last heap trim that call for one
LEVEL_COST = 64           # a level costs the compact store about what this many states cost the python store ...
LEVELS = 100_000          # ... so where --max-depth sets no depth, it stops at this many levels (seconds of one core)
LEVEL_CAP = "the compact store's level cap"
SEMANTIC_MOVES = 64       # a layout's trace moves found by the reference semantics before its expander is generated
                          # (which costs about as many: 11-50 ms against 0.2-0.8 ms a move, shipped games)


class TooWide(Exception):
    """The packed state does not fit the compact store's words (a variable wider than one)."""


@dataclass
class Firings:
    """The successors of a chunk: lane (state in the chunk), position (firing order within the
    state), label, successor; `final` per lane; `error` (lane, message) stops the chunk there."""

    lanes: np.ndarray
    pos: np.ndarray
    labels: np.ndarray
    succ: np.ndarray
    final: np.ndarray
    error: tuple[int, str] | None = None


class Expansion:
    """Expands chunks of packed states: vectorised where possible, else by the reference code."""

    def __init__(self, lay: Layout, labels: Labels):
        self.lay, self.labels = lay, labels
        self.words = packing_of(lay).words
        self.reference = compile_expander(lay)
        self.batch: BatchCode | None = None
        self.why_not = ""
        try:
            self.batch = compile_batch(lay, packing_of(lay), labels)
            self.block_labels = np.asarray(self.batch.block_labels, np.int64)
        except NotVectorisable as err:
            self.why_not = str(err)

    def __call__(self, S: np.ndarray) -> Firings:
        out = self.batch.expand(S) if self.batch is not None and S.shape[0] >= VECTOR_MIN else None
        if out is None:
            return self.one_by_one(S)
        final, firings = out
        if not firings:
            empty = np.zeros(0, np.int64)
            return Firings(empty, empty, empty, no_states(self.words), final)
        lanes = np.concatenate([f[1] for f in firings])
        pos = np.concatenate([np.full(f[1].shape[0], f[0], np.int64) for f in firings])
        succ = np.concatenate([f[2] for f in firings])
        return Firings(lanes, pos, self.block_labels[pos], succ, final)

    def first_firings(self, S: np.ndarray, f: Firings, track: Iterable[int]) -> dict[int, tuple[int, tuple, int]]:
        """A firing in the chunk `S` (expanded into `f`) of each action of `track`: the one
        with the smallest state, then the smallest successor: (state, (action, choice), successor)."""
        actions = np.asarray([a for a, _choice in self.labels.items], np.int64)[f.labels]
        out = {}
        for a in track:
            hits = np.flatnonzero(actions == a)
            if hits.size:
                j = int(hits[np.lexsort((f.succ[hits], S[f.lanes[hits]]))[0]])
                out[a] = (int(S[f.lanes[j]]), self.labels.items[int(f.labels[j])], int(f.succ[j]))
        return out

    def one_by_one(self, S: np.ndarray) -> Firings:
        expand, is_final, label = self.reference.expand, self.reference.is_final, self.labels
        lanes: list[int] = []
        pos: list[int] = []
        labs: list[int] = []
        succ: list[int] = []
        final = np.zeros(S.shape[0], bool)
        error = None
        for lane, x in enumerate(as_ints(S)):
            fired: list = []
            try:
                expand(x, fired)
                final[lane] = not fired and is_final(x)
            except EvalError as err:
                error = (lane, str(err))            # the firings before the error still count
            for k, (a, choice, t, _gap) in enumerate(fired):
                if t is not None:
                    lanes.append(lane)
                    pos.append(k)
                    labs.append(label(a, choice))
                    succ.append(t)
            if error is not None:
                break
        return Firings(np.asarray(lanes, np.int64), np.asarray(pos, np.int64), np.asarray(labs, np.int64),
                       as_rows(succ, self.words), final, error)


class Watch:
    """A watched predicate over chunks: vectorised where possible; the first lane where it
    holds, or raises a model error (reported as the error)."""

    def __init__(self, lay: Layout, e: Expr):
        self.reference = packed_predicate(lay, e)
        self.batch: Callable | None
        try:
            self.batch = compile_batch_predicate(lay, packing_of(lay), e).holds
        except NotVectorisable:
            self.batch = None

    def first(self, S: np.ndarray) -> tuple[int | None, str | None]:
        mask = self.batch(S) if self.batch is not None else None
        if mask is not None:
            hits = np.flatnonzero(mask)
            return (int(hits[0]) if hits.size else None), None
        for lane, x in enumerate(as_ints(S)):
            try:
                if self.reference(x):
                    return lane, None
            except EvalError as err:
                return lane, str(err)
        return None, None


@dataclass
class CompactSpace:
    """What a compact search found. States are named by their packed value (an int); `rank`
    gives the BFS index of the states the verdicts point at."""

    lay: Layout
    labels: Labels
    table: Any                  # VisitedTable, or the distributed search's ChainTable
    transitions: int = 0
    levels: int = 0
    complete: bool = True
    stop: Stop | None = None                   # why it stopped short (None: complete)
    error: tuple[int, str] | None = None
    seconds: float = 0.0
    vectorised: str = ""                       # "" when vectorised, else why not
    watch: list[int | None] = field(default_factory=list)
    watch_errors: dict[int, tuple[int, str]] = field(default_factory=dict)
    fired: dict[int, tuple[int, int, int] | None] = field(default_factory=dict)
    deadlocks: list[int] = field(default_factory=list)
    rank: dict[int, int] = field(default_factory=dict)
    reductions: tuple[str, ...] = ()           # the compact store applies none; the distributed search symmetry
    canon: Canon | None = None                 # then each state's canonical form (`symmetry.py`)
    worker_usage: list[tuple[int, int, float]] = field(default_factory=list)  # --workers: growth, peak, CPU s

    @property
    def reason(self) -> str:
        """Why the search stopped short, in words ("" when complete)."""
        return "" if self.stop is None else self.stop.words

    @property
    def model(self) -> Model:
        return self.lay.model

    def __len__(self) -> int:
        return len(self.table)

    @property
    def max_depth(self) -> int:
        return max(0, self.levels - 1)

    def chain(self, key: int) -> list[int]:
        """Packed states from an initial state to `key` along the parent links."""
        out = [key]
        parent = self.table.parent_of(key, self._reaches)
        while parent is not None:
            out.append(parent)
            parent = self.table.parent_of(parent, self._reaches)
        return out[::-1]

    def depth_of(self, key: int) -> int:
        return len(self.chain(key)) - 1

    def _reaches(self, source: int, target: int) -> bool:
        return any(t == target for _a, _choice, t, _gap in firings_of(self.lay, source))

    def trace_to(self, key: int) -> Trace:
        return trace_along(self.lay, self.chain(key), canon=self.canon)

    def trace_through(self, key: int, label: int, target: int) -> Trace:
        a, choice = self.labels.items[label]
        return trace_along(self.lay, self.chain(key), (self.model.actions[a], choice, target), self.canon)


def firings_of(lay: Layout, source: int) -> list:
    """The reference code's firings of a packed state (those before a model error, where one stops it)."""
    fired: list = []
    try:
        compile_expander(lay).expand(source, fired)
    except EvalError:
        pass                  # a state that raises still has the firings before the error
    return fired


def firings_along(lay: Layout, keys: list[int], canon: Canon | None = None) -> list[tuple[Action, tuple]]:
    """The moves between the packed states `keys` (each the parent of the next): each the first
    firing that reaches the next state (the one a search stored it by; with `canon`, whose target's
    canonical form is the next state: a search storing one state per symmetry orbit), in the order
    of the generated code's firings. Found by the reference semantics, stopping at the one sought,
    while the layout's traces have asked it at most SEMANTIC_MOVES moves, this one's included, and
    the layout has no expander generated (a trace of tens of states costs less than generating
    it: 0.1 to 0.6 s for a monitor product of a shipped game); otherwise by the expander, generated
    where needed (a WTactics or Shadow Era reading's 29-39 traces, 460-742 moves: 0.1-0.3 s of CPU
    by the semantics, 10-20 ms by the expander)."""
    packing = packing_of(lay)
    if generated_expander(lay) is not None or not _by_semantics(lay, len(keys) - 1):
        def firing(source: int, target: int) -> tuple[Action, tuple]:
            for a, choice, t, _gap in firings_of(lay, source):
                if t is not None and (t if canon is None else canon(t)) == target:
                    return lay.model.actions[a], choice
            raise AssertionError("a parent link without a firing")
    else:
        def firing(source: int, target: int) -> tuple[Action, tuple]:
            try:
                for t in iter_transitions(lay, packing.unpack(source)):
                    if t.target is not None and (packing.pack(t.target) if canon is None
                                                 else canon(packing.pack(t.target))) == target:
                        return t.action, t.choice
            except EvalError:
                pass              # the firings before a model error are the state's, as `firings_of` has them
            raise AssertionError("a parent link without a firing")

    return [firing(s, t) for s, t in itertools.pairwise(keys)]


_semantic_moves: dict[int, int] = {}     # id(layout) -> its trace moves found by the semantics; dropped with it


def _by_semantics(lay: Layout, moves: int) -> bool:
    """Whether the semantics finds these `moves` of the layout's traces (counted if so): while its
    traces have asked it at most SEMANTIC_MOVES, these included."""
    done = _semantic_moves.get(id(lay))
    if done is None:
        done = _semantic_moves[id(lay)] = 0
        weakref.finalize(lay, _semantic_moves.pop, id(lay), None)
    if done + moves > SEMANTIC_MOVES:
        return False
    _semantic_moves[id(lay)] = done + moves
    return True


def trace_along(lay: Layout, keys: list[int], last: tuple[Action, tuple, int] | None = None,
                canon: Canon | None = None) -> Trace:
    """The trace through the packed states `keys` (`firings_along`), with `last` one more move
    (action, choice, target); with `canon`, the states are canonical forms and the trace is the
    model path they stand for (`symmetry.lift`)."""
    firings = firings_along(lay, keys, canon)
    if last is not None:
        action, choice, target = last
        firings.append((action, choice))
        keys = keys + [target]
    packing = packing_of(lay)
    states = [packing.unpack(k) for k in keys]
    if canon is not None:
        states, firings, _ = lift(lay, canon, packing.pack, states, firings)
    return build_trace(lay, states, firings)


def fits(model: Model) -> bool:
    """Whether the compact store can hold this (instantiated) model's states: in one word, or in
    several where no variable is wider than a word."""
    return packing_of(layout(model)).words >= 1


def pays_off(states: int, depth: int) -> bool:
    """Whether a search that found `states` states in `depth` levels would go faster in the compact
    store than in the python one: a level costs it about LEVEL_COST states' worth (numpy calls, the
    visited table's lookups) however few states it holds, so a deep and narrow search (one variable
    counting up through a wide range, a level per value) stays in the python store."""
    return states >= LEVEL_COST * max(1, depth)


def depth_cap(budget: Budget) -> tuple[int, Stop]:
    """The deepest level a compact search goes to, and its stop there: --max-depth, else LEVELS."""
    if budget.max_depth is not None:
        return budget.max_depth, budget.depth_stop()
    return LEVELS, Stop(StopKind.DEPTH, LEVEL_CAP, f"the search stopped at depth {LEVELS:,} ({LEVEL_CAP}: a level "
                                                   f"costs it as much however few states it holds)")


def explore_compact(model: Model, budget: Budget = Budget(), progress: ProgressFn | None = None,
                    watch: Sequence[Expr] = (), track: Sequence[int] = (),
                    tick: Callable[[int, int], Stop | None] | None = None,
                    visited_budget: int | None = None, order: list[np.ndarray] | None = None) -> CompactSpace:
    """Breadth-first search of an instantiated model with the compact store.

    As `explicit.explore` without edges: `space.watch[k]` is the first state (packed value) where
    `watch[k]` holds, `space.fired[a]` the first firing (state, label, target) of each tracked
    action, `space.deadlocks` the first deadlock. `tick(states, depth)` is called between chunks and
    may stop the search with a reason; `visited_budget` (bytes) makes the visited set spill to
    disk instead of growing past it. `order`, when given, receives the stored states in BFS order
    (the reference store's order), one array per level, the last one possibly not expanded."""
    start = time.perf_counter()
    lay = layout(model)
    packing = packing_of(lay)
    if not packing.words:
        raise TooWide(f"{packing.bits} bits of state with a variable wider than a {MAX_BITS}-bit word")
    labels = Labels()
    table = VisitedTable(links="hash", budget_bytes=visited_budget, words=packing.words)
    space = CompactSpace(lay, labels, table, watch=[None] * len(watch), fired=dict.fromkeys(track))
    expansion = Expansion(lay, labels)
    space.vectorised = expansion.why_not
    watches = [Watch(lay, e) for e in watch]
    state_limit = budget.max_states
    depth_limit, depth_stop = depth_cap(budget)
    try:
        inits = list(dict.fromkeys(packing.pack(s) for s in initial_states(lay)))
    except EvalError as err:
        space.complete, space.stop = False, model_error(f"model error in the initial states: {err}")
        return space
    if state_limit is not None and len(inits) > state_limit:
        inits = inits[:state_limit]
        space.complete, space.stop = False, budget.states_stop()
    first_level = as_rows(inits, packing.words)
    table.reserve(first_level.shape[0])
    table.insert(first_level, np.zeros(first_level.shape[0], table.refs.dtype))
    if order is not None:
        order.append(first_level)
    level = deque([first_level]) if first_level.shape[0] else deque()
    del first_level
    search = _Search(space, expansion, watches, state_limit, tick, budget.states_stop())
    unexpanded = [] if space.complete else list(level)     # stored, not expanded when the search stops
    last_report = start
    while space.complete and level:
        if space.levels >= depth_limit:
            space.complete, space.stop = False, depth_stop
            unexpanded = list(level)
            break
        space.levels += 1
        search.freed += sum(piece.nbytes for piece in level)
        nxt: deque[np.ndarray] = deque()
        for S in level_chunks(level):
            status = search.chunk(S, nxt)
            if status is not None:
                space.complete, space.stop = False, status
                unexpanded = [S[search.expanded:], *level, *nxt]
                break
            if progress is not None and time.perf_counter() - last_report >= 0.5:
                last_report = time.perf_counter()
                progress(ProgressInfo(len(table), space.levels - 1, last_report - start))
        if order is not None and nxt:
            order.append(np.concatenate(nxt))
        level = nxt
        del nxt
        if search.freed >= TRIM_FROM:       # narrow levels free little, and a trim costs milliseconds
            give_back_freed()               # the expanded levels and the chunks' arrays
            search.freed = 0
    if unexpanded:
        search.watch(np.concatenate(unexpanded))
    if search.freed:
        give_back_freed()
    space.seconds = time.perf_counter() - start
    if progress is not None:
        progress(ProgressInfo(len(table), space.max_depth, space.seconds))
    return space


def level_chunks(level: deque[np.ndarray]) -> Iterator[np.ndarray]:
    """CHUNK states at a time from a level's arrays, in order, taking each array out of the level
    once it is used up (the level shrinks as it is expanded)."""
    while level:
        taken: list[np.ndarray] = []
        size = 0
        while level and size < CHUNK:
            piece = level.popleft()
            if size + piece.shape[0] > CHUNK:
                level.appendleft(piece[CHUNK - size:])
                piece = piece[:CHUNK - size]
            taken.append(piece)
            size += piece.shape[0]
        if size:
            yield taken[0] if len(taken) == 1 else np.concatenate(taken)


class _Search:
    """The work on one chunk: watches, expansion, deduplication, insertion."""

    def __init__(self, space: CompactSpace, expansion: Expansion, watches: list[Watch],
                 state_limit: int | None, tick: Callable[[int, int], Stop | None] | None, full: Stop | None = None):
        """`full`: why a search stopped at `state_limit` (`Budget.states_stop`)."""
        self.space, self.expansion, self.watches = space, expansion, watches
        self.state_limit, self.tick, self.full = state_limit, tick, full
        self.base = 0                  # BFS index of the chunk's first state
        self.expanded = 0              # states of the last chunk expanded
        self.full_at: int | None = None    # the lane where the state limit was reached
        self.freed = 0                 # bytes of the levels and firings let go of since the last heap trim

    def watch(self, S: np.ndarray) -> None:
        space = self.space
        for k, w in enumerate(self.watches):
            if space.watch[k] is not None or k in space.watch_errors or not S.shape[0]:
                continue
            lane, message = w.first(S)
            if lane is None:
                continue
            key = key_at(S, lane)
            space.rank.setdefault(key, self.base + lane)
            if message is None:
                space.watch[k] = key
            else:
                space.watch_errors[k] = (key, message)

    def chunk(self, S: np.ndarray, nxt: deque[np.ndarray]) -> Stop | None:
        space, table = self.space, self.space.table
        self.expanded = 0
        if self.tick is not None:
            status = self.tick(len(table), space.levels - 1)
            if status is not None:
                return status
        self.watch(S)
        f = self.expansion(S)
        self.freed += f.lanes.nbytes + f.pos.nbytes + f.labels.nbytes + f.succ.nbytes
        live = S.shape[0] if f.error is None else f.error[0]
        space.transitions += int(f.lanes.shape[0])
        if not space.deadlocks:
            moved = np.bincount(f.lanes, minlength=S.shape[0])[:live] > 0
            stuck = np.flatnonzero(~moved & ~f.final[:live])
            if stuck.size:
                key = key_at(S, int(stuck[0]))
                space.deadlocks.append(key)
                space.rank.setdefault(key, self.base + int(stuck[0]))
        self._track(S, f)
        self.full_at = None
        status = self._insert(S, f, nxt)
        self.expanded = live
        self.base += live
        if f.error is not None and (self.full_at is None or self.full_at > f.error[0]):
            key = key_at(S, f.error[0])
            space.error = (key, f.error[1])
            space.rank.setdefault(key, self.base)
            return model_error(f"model error: {f.error[1]}")
        return status

    def _track(self, S: np.ndarray, f: Firings) -> None:
        space = self.space
        for a, hit in space.fired.items():
            if hit is not None or not f.lanes.shape[0]:
                continue
            actions = np.asarray([space.labels.items[x][0] for x in range(len(space.labels.items))], np.int64)
            mine = np.flatnonzero(actions[f.labels] == a)
            if mine.size:
                j = mine[np.lexsort((f.pos[mine], f.lanes[mine]))[0]]
                key = key_at(S, int(f.lanes[j]))
                space.fired[a] = (key, int(f.labels[j]), key_at(f.succ, int(j)))
                space.rank.setdefault(key, self.base + int(f.lanes[j]))

    def _insert(self, S: np.ndarray, f: Firings, nxt: deque[np.ndarray]) -> Stop | None:
        table = self.space.table
        if not f.succ.shape[0]:
            return None
        order = np.lexsort((f.pos, f.lanes, *sort_keys(f.succ)))     # by successor, then first firing
        succ = rows_at(f.succ, order)
        first = np.ones(succ.shape[0], bool)
        first[1:] = differs_from_previous(succ)
        first = np.flatnonzero(first)
        order, cand = order[first], rows_at(succ, first)         # distinct, sorted successors
        table.reserve(cand.shape[0])                             # may spill the table to a disk run
        if table.runs:
            fresh = np.flatnonzero(~table.in_runs(cand))
            order, cand = order[fresh], rows_at(cand, fresh)
        status = None
        if self.state_limit is not None and len(table) + cand.shape[0] > self.state_limit:
            unseen = np.flatnonzero(table.find(cand) < 0)
            order, cand = order[unseen], rows_at(cand, unseen)
            ranked = np.lexsort((f.pos[order], f.lanes[order]))
            room = self.state_limit - len(table)
            if room < cand.shape[0]:
                status = self.full
                self.full_at = int(f.lanes[order[ranked[room]]])     # the reference stops in this state
            keep = np.sort(ranked[:room])
            order, cand = order[keep], rows_at(cand, keep)
        new = table.insert(cand, table.refs_of(S)[f.lanes[order]])
        ranked = np.lexsort((f.pos[order[new]], f.lanes[order[new]]))
        if ranked.shape[0]:
            nxt.append(rows_at(f.succ, order[new][ranked]))
        return status
