"""Ordering and bounded-response monitors searched over the model's recorded state graph.

A monitor product (`props.monitor.compile_together`) is the model with a few monitor variables
that every (not forbidden) action updates from which of the claims' events its move makes happen.
Those events are read from the action and the states before and after the move alone: an action
event, a passing turn, a phase entered or left (`phase` before and after), a round's end (the
round condition before), a state event (its predicate after); none reads a move's choice values
(`eligible` checks it statically: no choice local in an event's predicate). So the product's
successors of a state (model state s, monitor values m) are, in the model's firing order, each
model transition s -> t by action a with the monitor values the update gives from m, a and the
event bits of s and t: the model's own complete compiled search, its transitions recorded in
firing order (`arrays.EdgeArrays`: every firing, those to states already stored included),
determines the product without expanding a model state or hashing one.

`explore_over_graph` runs the product's breadth-first search over that graph in a model-independent
kernel (compiled once per machine): the product states in FIFO order, each one's successors read
from its model state's recorded transitions in order, a successor stored where it is new. That is
the order in which the product's own search (`search.explore_compiled` on the product model) expands
its states and looks each successor up: the same successors in the same order from the same states,
and the same decisions (new or not) since both ask the same question (was this (model state, monitor
values) stored before). By induction over the states expanded, both store the same states at the
same indices, with the same parents, levels, transitions counted, first deadlock (a product state is
stuck exactly where its model state is), first state where each watched predicate holds, and the same
stop where a state cap or depth cap or the run's `tick` cuts the search (asked at the same states:
every SLICE expanded). The product's keys are the model's packed state with the monitor fields added
(the product's packing keeps the model's slots: `_fits`), so traces, stats, depth and results read as
the product search's.

The visited set is keyed by the model state: a product state's index is found from its model state's
chain of product states (most model states have one: Aeon's End's products have the model's states,
WTactics' 1.2 times as many), compared by monitor code alone. Each monitor's update is a table over
(its events' bits, its local values), evaluated once from the monitor's own effects with the events
named (`props.monitor.compile_ordering(occurs_of=...)`); each event's bit on a transition is its
action's mask and one test of per-state predicate bits (computed once over the model's states with
numpy, `vecgen.compile_batch_predicate`). The monitor codes after a move depend on the events' bits
and the codes before alone: the kernel remembers the MEMO pairs last met (a slot each by their hash),
so most moves read one slot instead of every monitor's table (WTactics: 0.59 -> 0.44 s a reading).

`explore_over_graph` answers None (the caller runs the product's own search) where the product
does not fit this: a watched predicate that reads anything but one monitor's variables, an event
predicate that might raise a model error (vecgen's conservative check) or of more than 64 predicates,
a packing that does not keep the model's slots, or monitor codes wider than MAX_CODE_BITS.
"""
from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from verifier.engines.actiongen import Labels
from verifier.engines.bfsgen import packing_of
from verifier.engines.compiled import cache
from verifier.engines.compiled.arrays import EdgeArrays
from verifier.engines.compiled.numbagen import SIGNATURES, loop_source
from verifier.engines.compiled.search import SLICE, CompiledSpace
from verifier.engines.vecgen import NotVectorisable, compile_batch_predicate
from verifier.engines.words import as_rows
from verifier.ir.expr import FALSE, TRUE, Const, Expr, Index, Local, Quant, Var, free_locals, state_vars, walk
from verifier.ir.model import Action, ActionKind, BoolType, IntType, Modality, Model, in_phase
from verifier.ir.props import BoundedResponse, Event, Ordering, Property
from verifier.props.events import occurs
from verifier.props.monitor import LIVE_SCOPES, compile_bounded_response, compile_ordering
from verifier.resources import Budget, Stop
from verifier.semantics import EvalError, evaluate, initial_states, layout

MAX_CODE_BITS = 24          # the monitors' values of one product state, packed in one code
MAX_PREDICATES = 6          # the events' state predicates (the kernel's table by action and their bits before/after)
MAX_EVENTS = 31             # events of all the monitors (bits of one int32)
MAX_TABLE_BITS = 12         # a predicate read from a table by its slots' fields (`_slot_table`)
MAX_GROUP_BITS = 16         # predicates read from one table by their slots' fields together (`_grouped`)
CHUNK = 1 << 20             # model states whose event predicates numpy evaluates at once
MEMO = 4096                 # monitor updates the kernel remembers (a power of two)
EVENT = "#event"            # the local naming event k in a monitor's update (`_update_tables`)
ALWAYS, BEFORE, AFTER, ENTER, LEAVE = range(5)   # an event's test of the predicate bits (the kernel's `kind`)

_KERNEL = SIGNATURES + """
import numpy as np
from numba import njit

from {loop} import _prefetch

I32 = types.int32[::1]
U8 = types.uint8[::1]
MARK_BITS = 16
AHEAD = 8                     # states whose successors' records are fetched ahead


@njit(types.int64(STATES, I32, I32, U8, STATES, U8, I32, types.int64, STATES, STATES, STATES, STATES, STATES, STATES,
                  STATES, I32, I32, I32, types.uint64[::1], STATES, STATES, STATES, STATES, STATES), **OPTIONS)
def search(offsets, dst, lab, stuck, rec, judged, occurs, fbits, coff, cmask, cbits, celo, cemask, ctab, table,
           pidx, pcode, nxt, links, marks, levels, ctl, memo_key, memo_code):
    # the product's BFS over the model's recorded graph (see `product.py`); ctl and the statuses as
    # `numbagen`'s search loop (0 done, 1 tick, 2 grow, 3 state cap, 4 depth cap). rec[s]: model state
    # s's first product state + 1 << 32 | its monitor code << 8 | s's predicate bits. The monitor codes
    # after a move are a function of (events, code before) alone: those last met are remembered at a
    # slot by that pair's hash (memo_key: the pair, -1 where none; memo_code: the code after)
    i = ctl[0]
    n = ctl[1]
    trans = ctl[2]
    depth = ctl[3]
    level_end = ctl[4]
    nlevels = ctl[5]
    max_states = ctl[6]
    max_depth = ctl[7]
    deadlock = ctl[8]
    stop = i + ctl[9]
    nlinks = ctl[10]
    inits = ctl[11]
    degree = ctl[12]
    cap = pidx.shape[0]
    link_room = 64 * links.shape[0]
    mark_room = marks.shape[0] << MARK_BITS
    mark_mask = (1 << MARK_BITS) - 1
    claims = coff.shape[0]
    fmask = (1 << fbits) - 1
    status = 0
    while i < n:
        if i == level_end:
            if depth + 1 >= max_depth:
                status = 4
                break
            if nlevels == levels.shape[0]:
                status = 2
                break
            depth += 1
            levels[nlevels] = i
            nlevels += 1
            level_end = n
        if i >= stop:
            status = 1
            break
        if n + degree > cap or nlinks + degree + 1 > link_room or n - inits + degree >= mark_room:
            status = 2
            break
        if i + AHEAD < n:
            s2 = pidx[i + AHEAD]
            for e in range(offsets[s2], offsets[s2 + 1]):
                _prefetch(rec, dst[e])
        s = pidx[i]
        m = pcode[i]
        fs = (rec[s] & fmask) << fbits
        full = False
        for e in range(offsets[s], offsets[s + 1]):
            t = dst[e]
            a = lab[e]
            trans += 1
            r = rec[t]
            m2 = m
            if judged[a]:
                occ = occurs[(a << (2 * fbits)) | fs | (r & fmask)]
                key = (np.int64(occ) << 24) | m
                slot = ((key * 0x5851F42D4C957F2D) >> 40) & (memo_key.shape[0] - 1)
                if memo_key[slot] == key:
                    m2 = memo_code[slot]
                else:
                    m2 = 0
                    for c in range(claims):
                        local = (m >> coff[c]) & cmask[c]
                        m2 |= table[ctab[c] + ((((occ >> celo[c]) & cemask[c]) << cbits[c]) | local)] << coff[c]
                    memo_key[slot] = key
                    memo_code[slot] = m2
            first = (r >> 32) - 1
            if first >= 0 and (r >> 8) & 0xffffff == m2:
                continue
            p = -1 if first < 0 else nxt[first]
            while p >= 0 and pcode[p] != m2:
                p = nxt[p]
            if p >= 0:
                continue
            if n == max_states:
                full = True
                break
            pidx[n] = t
            pcode[n] = m2
            if first < 0:
                rec[t] = ((n + 1) << 32) | (m2 << 8) | (r & 0xff)
                nxt[n] = -1
            else:
                nxt[n] = nxt[first]
                nxt[first] = n
            links[nlinks >> 6] |= np.uint64(1) << np.uint64(nlinks & 63)
            if (n - inits) & mark_mask == 0:
                marks[(n - inits) >> MARK_BITS] = nlinks
            nlinks += 1
            n += 1
        if full:
            status = 3
            break
        if stuck[s] and deadlock < 0:
            deadlock = i
        nlinks += 1
        i += 1
    ctl[0] = i
    ctl[1] = n
    ctl[2] = trans
    ctl[3] = depth
    ctl[4] = level_end
    ctl[5] = nlevels
    ctl[8] = deadlock
    ctl[10] = nlinks
    return status


@njit(types.void(ROWS, STATES, STATES, STATES, STATES, STATES, STATES, U8, STATES), **OPTIONS)
def predicates(keys, first, word, shift, mask, at, table_at, table, out):
    # out[i] |= the bits of the predicates of each group g that hold in state i: its table (from
    # table_at[g]) at the fields of its slots first[g]..first[g + 1] (each slot's word, shift, mask and
    # place in the index)
    for i in range(keys.shape[0]):
        bits = out[i]
        for g in range(table_at.shape[0]):
            index = 0
            for j in range(first[g], first[g + 1]):
                index |= ((keys[i, word[j]] >> shift[j]) & mask[j]) << at[j]
            bits |= table[table_at[g] + index]
        out[i] = bits


@njit(types.void(ROWS, I32, I32, ROWS, STATES, STATES, STATES, ROWS, STATES, U8, STATES, STATES, ROWS), **OPTIONS)
def keys(model, pidx, pcode, adds, coff, cmask, ctab, out, watched, holds, first, memo_key, memo_add):
    # each product state's packed key: its model state's words, each monitor's fields added (a row of
    # `adds` each: the monitor code's fields, remembered at a slot by the code's hash; memo_key: the
    # code there, -1 where none); first[k]: the first state where watched predicate k holds (of
    # monitor watched[k]: at holds[k * rows + ctab + its local code]), looked at where the code is not
    # remembered (so at each code's first state)
    words = model.shape[1]
    width = out.shape[1]
    for i in range(pidx.shape[0]):
        m = np.int64(pcode[i])
        slot = ((m * 0x5851F42D4C957F2D) >> 40) & (memo_key.shape[0] - 1)
        if memo_key[slot] != m:
            memo_key[slot] = m
            for w in range(width):
                memo_add[slot, w] = 0
            for c in range(coff.shape[0]):
                row = ctab[c] + ((m >> coff[c]) & cmask[c])
                for w in range(width):
                    memo_add[slot, w] |= adds[row, w]
            for k in range(watched.shape[0]):
                c = watched[k]
                if first[k] < 0 and holds[k * adds.shape[0] + ctab[c] + ((m >> coff[c]) & cmask[c])]:
                    first[k] = i
        s = pidx[i]
        for w in range(words):
            out[i, w] = model[s, w] | memo_add[slot, w]
        for w in range(words, width):
            out[i, w] = memo_add[slot, w]
"""


def kernel_source(words: int) -> str:
    """The product search's model-independent module, for a model of `words` words: it takes the
    prefetch from that model's search loop (`loop_source(words)`, loaded already by the model's search
    and the readings' parent: one module for one word, another for several, each compiled once per
    machine), not loading a loop it does not use (Shadow Era's two-word readings: 0.045 s each)."""
    return _KERNEL.replace("{loop}", cache.module_name(loop_source(words)))


@dataclass
class GraphProduct:
    """A monitor product the portfolio offers to search over its model's graph (`Ledger.products`):
    the (uninstantiated) model, the surface claims in `compile_together`'s order, and whether the
    product was searched so (`used`)."""

    model: Model
    claims: tuple[Property, ...]
    tags: tuple[str, ...]                  # each claim's monitor variables' tag (`compile_claim`)
    used: bool = field(default=False)
    why: str = ""                          # why it was not, where it was tried


def eligible(claim: Property) -> bool:
    """Whether `claim`'s monitor can be searched over the model's graph: an ordering or bounded
    response claim whose product has only its invariant (no obligation, which needs the product's
    own graph) and whose events read no choice value."""
    events: tuple[Event | None, ...]
    if isinstance(claim, Ordering):
        if claim.pattern in ("existence", "response") and claim.scope in LIVE_SCOPES:
            return False
        events = (claim.p, claim.s, claim.q, claim.r)
    elif isinstance(claim, BoundedResponse):
        events = (claim.trigger, claim.response)
    else:
        return False
    return not any(ev is not None and ev.expr is not None and free_locals(ev.expr) for ev in events)


@dataclass
class _Monitor:
    """One claim's monitor: its variables and their values, its events, its update table."""

    names: tuple[str, ...]
    values: list[tuple[int, ...]]          # local code -> the variables' values
    events: list[Event]
    table: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def bits(self) -> int:
        return max(1, (len(self.values) - 1).bit_length())


def explore_over_graph(offered: GraphProduct, space: CompiledSpace, edges: EdgeArrays, product: Model,
                       budget: Budget, watch: Sequence[Expr], tick: Callable[[int, int], Stop | None] | None
                       ) -> CompiledSpace | None:
    """The search of the instantiated `product` (of `offered`) over the recorded graph `edges` of
    its model's complete, unreduced compiled search `space`, watching `watch`: as
    `explore_compiled(product, budget, watch=watch, tick=tick)` would find it (module doc), or None
    where it does not fit."""
    start = time.perf_counter()
    base = space.model
    lay = layout(product)
    if not space.complete or space.reductions or space.head != len(space):
        return _refused(offered, "the model's search is not complete and unreduced")
    if not _fits(base, product):
        return _refused(offered, "the product's packing moves the model's slots")
    monitors = _monitors(offered, product)
    if monitors is None:
        return _refused(offered, "a monitor variable's range is not constant")
    features: list[Expr] = []
    events: list[tuple[np.ndarray, int, int]] = []       # (action mask, kind, predicate bit)
    for mon in monitors:
        for ev in mon.events:
            test = _event_test(base, ev, features)
            if test is None:
                return _refused(offered, "an action event that depends on the state")
            events.append(test)
    offsets, bits = [], 0
    for mon in monitors:
        offsets.append(bits)
        bits += mon.bits
    if bits > MAX_CODE_BITS or len(events) > MAX_EVENTS:
        return _refused(offered, f"the monitors take more than {MAX_CODE_BITS} bits or {MAX_EVENTS} events")
    if len(features) > MAX_PREDICATES:
        return _refused(offered, f"the events read more than {MAX_PREDICATES} state predicates")
    hits = _watch_tables(lay, monitors, watch)
    if hits is None:
        return _refused(offered, "a watched predicate reads more than one monitor's variables")
    inits = _initial(space, lay, monitors, offsets)
    try:
        tables = [_update_table(lay, offered, mon, k) for k, mon in enumerate(monitors)]
    except EvalError:
        tables = []
    if inits is None or len(tables) < len(monitors):
        return _refused(offered, "a model error in the product's initial states or a monitor's update")
    cache.load(loop_source(space.words))
    kernel, _known = cache.load(kernel_source(space.words))
    compiled_at = time.perf_counter()
    rec = _predicate_bits(kernel, space, features)       # becomes each model state's record (the kernel's `rec`)
    if rec is None:
        return _refused(offered, "an event predicate might meet a model error")
    judged = np.array([a.modality is not Modality.MUST_NOT for a in base.actions] or [False], np.uint8)
    occurs_at = _occurrences(events, len(base.actions), len(features))
    lo = np.cumsum([0] + [len(m.events) for m in monitors])
    table_lo = np.cumsum([0] + [len(t) for t in tables])[:-1]
    claims = (np.array(offsets, np.int64), np.array([(1 << m.bits) - 1 for m in monitors], np.int64),
              np.array([m.bits for m in monitors], np.int64), lo[:-1].astype(np.int64),
              np.array([(1 << len(m.events)) - 1 for m in monitors], np.int64), table_lo.astype(np.int64),
              np.concatenate(tables).astype(np.int64))
    state_cap = budget.max_states
    complete, stop = True, None
    if state_cap is not None and len(inits) > state_cap:
        inits, complete, stop = inits[:state_cap], False, budget.states_stop()
    degree = max(1, space.firings)                 # a state's transitions, at most
    at_least = len(space) + len(space) // 4        # the model's states and some (their products: 1-1.2 times)
    arrays = _Arrays(max(len(inits), min(at_least, state_cap or at_least)) + degree)
    for j, (i, code) in enumerate(inits):
        arrays.pidx[j], arrays.pcode[j] = i, code
        first = int(rec[i] >> 32) - 1
        if first < 0:
            rec[i] = (j + 1) << 32 | code << 8 | int(rec[i] & 0xff)
            arrays.nxt[j] = -1
        else:
            arrays.nxt[j], arrays.nxt[first] = arrays.nxt[first], j
    max_depth = budget.max_depth if budget.max_depth is not None else 1 << 62
    ctl = np.array([0, len(inits), 0, 0, len(inits), 1, -1 if state_cap is None else state_cap, max_depth, -1,
                    SLICE, 0, len(inits), degree], np.int64)
    arrays.levels[0] = 0
    status = 3 if not complete else 0 if not inits else 4 if max_depth <= 0 else None
    tick_at = SLICE
    memo_key, memo_code = np.full(MEMO, -1, np.int64), np.zeros(MEMO, np.int64)
    while status is None or status in (1, 2):
        if status == 1:
            tick_at = int(ctl[0]) + SLICE
            cut = None if tick is None else tick(int(ctl[1]), int(ctl[3]))
            if cut is not None:
                complete, stop = False, cut
                break
        arrays.room(int(ctl[1]), int(ctl[10]), int(ctl[5]), degree, state_cap)
        ctl[9] = max(1, tick_at - int(ctl[0]))
        status = int(kernel.search(edges.offsets, edges.dst, edges.lab, edges.stuck, rec, judged, occurs_at,
                                   len(features), *claims, arrays.pidx, arrays.pcode, arrays.nxt, arrays.links,
                                   arrays.marks, arrays.levels, ctl, memo_key, memo_code))
    if status == 3 and complete:
        complete, stop = False, budget.states_stop()
    elif status == 4 and complete:
        complete, stop = False, budget.depth_stop()
    peak = arrays.nbytes + int(rec.nbytes)
    del rec
    head, stored = int(ctl[0]), int(ctl[1])
    pidx, codes = arrays.pidx[:stored], arrays.pcode[:stored]
    del arrays.nxt
    keys, watched = _keys(kernel, space, lay, monitors, offsets, pidx, codes, hits)
    out = CompiledSpace(lay, keys, arrays.links[:(int(ctl[10]) >> 6) + 1].copy(), arrays.marks.copy(), len(inits),
                        arrays.levels[:int(ctl[5])].tolist(), Labels(), int(ctl[2]), complete, stop,
                        cached=True, firings=space.firings, watched=tuple(watch))
    out.nlinks, out.head = int(ctl[10]), head
    out.peak_bytes = peak + int(keys.nbytes)
    if ctl[8] >= 0:
        out.deadlocks.append(int(ctl[8]))
    out.watch = watched
    out.compile_seconds = compiled_at - start
    out.seconds = time.perf_counter() - start
    return out


def _occurrences(events: Sequence[tuple[np.ndarray, int, int]], actions: int, features: int) -> np.ndarray:
    """Which events a transition makes happen, by (action, predicate bits before, after): bit k of
    entry (a << 2F) | (before << F) | after is event k's."""
    grid = np.arange(1 << (2 * features), dtype=np.int64)
    before, after = grid >> features, grid & ((1 << features) - 1)
    out = np.zeros((max(1, actions), grid.shape[0]), np.int32)
    for k, (mask, kind, bit) in enumerate(events):
        b, t = (before >> bit) & 1, (after >> bit) & 1
        test = {ALWAYS: np.ones_like(grid), BEFORE: b, AFTER: t, ENTER: (1 - b) & t, LEAVE: b & (1 - t)}[kind]
        out[:actions] |= (mask.astype(np.int32)[:, None] & test.astype(np.int32)[None, :]) << k
    return out.reshape(-1)


def _refused(offered: GraphProduct, why: str) -> CompiledSpace | None:
    """None, the search over the graph refused, saying `why` (the product searches its own)."""
    offered.why = why
    return None


class _Arrays:
    """The product search's growing arrays (doubled as it needs, never past the state cap and one
    state's successors)."""

    def __init__(self, capacity: int):
        self.pidx = np.zeros(capacity, np.int32)
        self.pcode = np.zeros(capacity, np.int32)
        self.nxt = np.zeros(capacity, np.int32)
        self.links = np.zeros(2 * capacity // 64 + 2, np.uint64)
        self.marks = np.zeros((capacity >> 16) + 2, np.int64)
        self.levels = np.zeros(1024, np.int64)

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in (self.pidx, self.pcode, self.nxt, self.links, self.marks))

    def room(self, stored: int, nlinks: int, nlevels: int, degree: int, cap: int | None) -> None:
        if stored + degree > self.pidx.shape[0]:
            size = max(self.pidx.shape[0] * 3 // 2, stored + degree)
            if cap is not None:
                size = max(min(size, cap + degree), stored + degree)
            self.pidx, self.pcode, self.nxt = (_grown(a, size) for a in (self.pidx, self.pcode, self.nxt))
        if nlinks + degree + 1 > 64 * self.links.shape[0]:
            self.links = _grown(self.links, max(2 * self.links.shape[0], (nlinks + degree) // 64 + 2))
        if stored + degree >= self.marks.shape[0] << 16:
            self.marks = _grown(self.marks, 2 * self.marks.shape[0])
        if nlevels == self.levels.shape[0]:
            self.levels = _grown(self.levels, 2 * nlevels)


def _grown(a: np.ndarray, size: int) -> np.ndarray:
    out = np.empty(size, a.dtype)
    out[:a.shape[0]] = a
    out[a.shape[0]:] = 0
    return out


def _fits(model: Model, product: Model) -> bool:
    """Whether the product's packing keeps the model's slots where the model's packing has them."""
    pm, pp = packing_of(layout(model)), packing_of(layout(product))
    n = len(pm.shifts)
    return bool(pm.words) and bool(pp.words) and pp.words >= pm.words and \
        pp.shifts[:n] == pm.shifts and pp.widths[:n] == pm.widths and pp.los[:n] == pm.los


def _monitors(offered: GraphProduct, product: Model) -> list[_Monitor] | None:
    """Each claim's monitor as the product names it: its variables' values (every combination of
    their ranges) and its events, in the order its update reads them."""
    out: list[_Monitor] = []
    for claim in offered.claims:
        events: list[Event] = []

        def named(_model: Model, _action: Action, event: Event, events: list[Event] = events) -> Expr:
            if event not in events:
                events.append(event)
            return Local(f"{EVENT}{events.index(event)}")

        part = _compiled(offered.model, claim, offered.tags[len(out)], named)
        if part is None:
            return None
        ranges = []
        for name in part.monitor_vars:
            t = product.var(name).type
            if isinstance(t, BoolType):
                ranges.append(range(2))
            elif isinstance(t, IntType) and isinstance(t.lo, Const) and isinstance(t.hi, Const):
                ranges.append(range(t.lo.value, t.hi.value + 1))
            else:
                return None
        out.append(_Monitor(part.monitor_vars, list(itertools.product(*ranges)), events))
    return out


def _compiled(model: Model, claim: Property, tag: str, occurs_of):
    if isinstance(claim, Ordering):
        return compile_ordering(model, claim, tag, occurs_of)
    if isinstance(claim, BoundedResponse):
        return compile_bounded_response(model, claim, tag, occurs_of)
    return None


def _update_table(lay, offered: GraphProduct, mon: _Monitor, k: int) -> np.ndarray:
    """Monitor `mon`'s update as a table: at (events' bits << bits) | local code, the local code after
    (its effects evaluated with each event named by its bit; the state's other slots are not read)."""
    claim = offered.claims[k]
    part = _compiled(offered.model, claim, offered.tags[k], lambda _m, _a, ev: Local(f"{EVENT}{mon.events.index(ev)}"))
    action = next((a for a in part.model.actions if a.modality is not Modality.MUST_NOT), None)
    size = 1 << (len(mon.events) + mon.bits)
    table = np.zeros(size, np.int64)
    if action is None:
        return table
    writes = action.effects[-len(mon.names):]
    assert [w.target.name for w in writes] == list(mon.names), "a monitor writes each of its variables once"
    slots = [lay.slot_of(name, None) for name in mon.names]
    template = [0] * len(lay.slots)
    index = {values: code for code, values in enumerate(mon.values)}
    for occ in range(1 << len(mon.events)):
        env = {f"{EVENT}{e}": (occ >> e) & 1 for e in range(len(mon.events))}
        for code, values in enumerate(mon.values):
            state = list(template)
            for slot, v in zip(slots, values):
                state[slot] = v
            after = tuple(evaluate(lay, w.value, tuple(state), env) for w in writes)
            table[(occ << mon.bits) | code] = index[after]
    return table


def _event_test(model: Model, ev: Event, features: list[Expr]) -> tuple[np.ndarray, int, int] | None:
    """Event `ev` of the instantiated `model` as (the actions whose firing may make it happen, the test of the predicate bits,
    the predicate's bit in `features`, added there where new), as `events.occurs` defines it."""
    concrete = model
    actions = concrete.actions

    def bit(e: Expr) -> int:
        e = concrete.fix_params(e)
        if e not in features:
            features.append(e)
        return features.index(e)

    if ev.action is not None or ev.actions or ev.turn_end:
        mask = np.array([occurs(concrete, a, ev) == TRUE for a in actions], np.uint8)
        if any(occurs(concrete, a, ev) not in (TRUE, FALSE) for a in actions):
            return None
        return mask, ALWAYS, 0
    every = np.ones(len(actions), np.uint8)
    if ev.round_end:
        mask = np.array([a.kind is ActionKind.TURN_END for a in actions], np.uint8)
        return mask, BEFORE, bit(concrete.round_condition())
    if ev.enter is not None:
        return every, ENTER, bit(in_phase(concrete, ev.enter))
    if ev.leave is not None:
        return every, LEAVE, bit(in_phase(concrete, ev.leave))
    assert ev.expr is not None
    return every, AFTER, bit(ev.expr)


def _predicate_bits(kernel, space: CompiledSpace, features: Sequence[Expr]) -> np.ndarray | None:
    """Each stored model state's predicate bits (bit k: `features[k]` holds there), or None where a
    predicate might raise a model error in some state (vecgen's check) or numpy cannot evaluate it.
    A predicate of a few slots (as `phase == Draw`) is read from a table by the slots' fields, in
    compiled code, those of a few slots together from one table (`_grouped`: Shadow Era's six, of
    six slots, 0.13 -> 0.02 s a reading); the others are evaluated by numpy (`vecgen`)."""
    lay, packing = space.lay, packing_of(space.lay)
    out = np.zeros(max(1, len(space)), np.int64)
    tabled: list[tuple[int, list[int], np.ndarray]] = []
    others: list[int] = []
    for k, e in enumerate(features):
        read = _slot_table(lay, packing, e)
        if read is None:
            others.append(k)
        else:
            tabled.append((k, *read))
    groups = _grouped(packing, tabled)
    if groups:
        flat = [slot for slots, _table in groups for slot in slots]
        at = [sum(packing.widths[g] for g in slots[:j]) for slots, _table in groups for j in range(len(slots))]
        kernel.predicates(space.keys.reshape(len(space), -1), np.cumsum([0] + [len(s) for s, _t in groups]),
                          np.array([packing.word(j)[0] for j in flat], np.int64),
                          np.array([packing.word(j)[1] for j in flat], np.int64),
                          np.array([packing.mask(j) for j in flat], np.int64), np.array(at, np.int64),
                          np.cumsum([0] + [t.shape[0] for _s, t in groups])[:-1].astype(np.int64),
                          np.concatenate([t for _s, t in groups]), out)
    try:
        batches = [(k, compile_batch_predicate(lay, packing, features[k]).holds) for k in others]
    except NotVectorisable:
        return None
    keys = space.keys.view(np.uint64)
    for lo in range(0, len(space), CHUNK):
        chunk = keys[lo:lo + CHUNK]
        for k, holds in batches:
            mask = holds(chunk)
            if mask is None:
                return None
            out[lo:lo + chunk.shape[0]] |= mask.astype(np.int64) << k
    return out


def _grouped(packing, tabled: Sequence[tuple[int, list[int], np.ndarray]]) -> list[tuple[list[int], np.ndarray]]:
    """The tabled predicates (bit, slots, table by the slots' fields as `_slot_table`'s) in groups of
    at most MAX_GROUP_BITS bits of slots together, each group's table the bits of its predicates
    that hold at each value of its slots' fields (the first slot's field lowest), in order."""
    groups: list[tuple[list[int], list[tuple[int, list[int], np.ndarray]]]] = []
    for k, slots, table in tabled:
        if groups:
            union = groups[-1][0] + [s for s in slots if s not in groups[-1][0]]
            if sum(packing.widths[s] for s in union) <= MAX_GROUP_BITS:
                groups[-1] = (union, groups[-1][1] + [(k, slots, table)])
                continue
        groups.append((list(slots), [(k, slots, table)]))
    out = []
    for union, members in groups:
        at = dict(zip(union, np.cumsum([0] + [packing.widths[s] for s in union]).tolist()))
        grid = np.arange(1 << sum(packing.widths[s] for s in union), dtype=np.int64)
        bits = np.zeros(grid.shape[0], np.uint8)
        for k, slots, table in members:
            index, shift = np.zeros_like(grid), 0
            for s in slots:
                index |= ((grid >> at[s]) & ((1 << packing.widths[s]) - 1)) << shift
                shift += packing.widths[s]
            bits |= table[index] << k
        out.append((union, bits))
    return out


def _slot_table(lay, packing, e: Expr) -> tuple[list[int], np.ndarray] | None:
    """Where `e` reads a few slots (scalars, array elements at constant indices) of at most
    MAX_TABLE_BITS bits together: (the slots, its value at each of their fields' values, the first
    slot's field lowest); None where it reads others or raises at a value in the slots' ranges."""
    if free_locals(e):
        return None
    slots: list[int] = []
    for x in walk(e):
        if isinstance(x, Var):
            if x.name not in lay.offsets:
                return None
            slot = lay.slot_of(x.name, None)
        elif isinstance(x, Index) and isinstance(x.index, Const):
            try:
                slot = lay.slot_of(x.name, x.index.value)
            except EvalError:
                return None
        elif isinstance(x, (Index, Quant)):
            return None
        else:
            continue
        if slot not in slots:
            slots.append(slot)
    widths = [packing.widths[slot] for slot in slots]
    if sum(widths) > MAX_TABLE_BITS:
        return None
    out = np.zeros(1 << sum(widths), np.uint8)
    state = list(packing.los)
    for fields in itertools.product(*(range(packing.his[slot] - packing.los[slot] + 1) for slot in slots)):
        index, at = 0, 0
        for slot, width, field_value in zip(slots, widths, fields):
            state[slot] = packing.los[slot] + field_value
            index |= field_value << at
            at += width
        try:
            out[index] = bool(evaluate(lay, e, tuple(state)))
        except EvalError:
            return None
    return slots, out


def _watch_tables(lay, monitors: Sequence[_Monitor], watch: Sequence[Expr]) -> list[tuple[int, np.ndarray]] | None:
    """Each watched predicate as (its monitor, the local codes where it holds), or None where one reads
    anything but one monitor's variables (or might raise)."""
    out: list[tuple[int, np.ndarray]] = []
    for e in watch:
        names = state_vars(e)
        if free_locals(e):
            return None
        k = next((k for k, m in enumerate(monitors) if names <= set(m.names)), None)
        if k is None:
            return None
        mon = monitors[k]
        slots = [lay.slot_of(name, None) for name in mon.names]
        hold = np.zeros(1 << mon.bits, np.uint8)
        for code, values in enumerate(mon.values):
            state = [0] * len(lay.slots)
            for slot, v in zip(slots, values):
                state[slot] = v
            try:
                hold[code] = bool(evaluate(lay, e, tuple(state)))
            except EvalError:
                return None
        out.append((k, hold))
    return out


def _initial(space: CompiledSpace, lay, monitors: Sequence[_Monitor], offsets: Sequence[int]
             ) -> list[tuple[int, int]] | None:
    """The product's initial states in its search's order, as (model state, monitor code)."""
    model_lay = space.lay
    index = {space.key(i): i for i in range(space.inits)}
    pack = packing_of(model_lay).pack
    model_slots = len(model_lay.slots)
    out: list[tuple[int, int]] = []
    try:
        states = initial_states(lay)
    except EvalError:
        return None
    seen = set()
    for state in states:
        i = index.get(pack(state[:model_slots]))
        if i is None:
            return None
        code = 0
        for mon, off in zip(monitors, offsets):
            values = tuple(state[lay.slot_of(name, None)] for name in mon.names)
            code |= mon.values.index(values) << off
        if (i, code) not in seen:
            seen.add((i, code))
            out.append((i, code))
    return out


def _keys(kernel, space: CompiledSpace, lay, monitors: Sequence[_Monitor], offsets: Sequence[int],
          pidx: np.ndarray, codes: np.ndarray, hits: Sequence[tuple[int, np.ndarray]]
          ) -> tuple[np.ndarray, list[int | None]]:
    """The product states' packed keys (the model state's with each monitor's fields added: the
    packed difference its values make to a state whose every slot is at its lowest value), and the
    first state where each watched predicate holds (the search's watch and its scan of the states
    left unexpanded together find the first one)."""
    packing = packing_of(lay)
    empty = list(packing.los)          # every slot at its lowest value: its fields 0
    zero = packing.pack(tuple(empty))
    adds: list[int] = []
    rows = []
    for mon in monitors:
        rows.append(len(adds))
        slots = [lay.slot_of(name, None) for name in mon.names]
        state = list(empty)
        for values in mon.values:
            for slot, v in zip(slots, values):
                state[slot] = v
            adds.append(packing.pack(tuple(state)) - zero)
        adds += [0] * ((1 << mon.bits) - len(mon.values))
    table = as_rows(adds, packing.words).view(np.int64).reshape(len(adds), packing.words)
    holds = np.zeros(max(1, len(hits) * len(adds)), np.uint8)
    for k, (c, hold) in enumerate(hits):
        holds[k * len(adds) + rows[c]:k * len(adds) + rows[c] + hold.shape[0]] = hold
    first = np.full(max(1, len(hits)), -1, np.int64)
    out = np.empty((len(pidx), packing.words), np.int64)
    kernel.keys(space.keys.reshape(len(space), -1), pidx, codes, table, np.array(offsets, np.int64),
                np.array([(1 << m.bits) - 1 for m in monitors], np.int64), np.array(rows, np.int64), out,
                np.array([c for c, _h in hits] or [0], np.int64)[:len(hits)], holds, first, np.full(MEMO, -1, np.int64),
                np.zeros((MEMO, packing.words), np.int64))
    return (out.reshape(-1) if packing.words == 1 else out), [None if f < 0 else int(f) for f in first[:len(hits)]]


