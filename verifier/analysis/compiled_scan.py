"""The analyses' scan of millions of states in compiled code: the visitors see only the states it names.

`Context.scan` hands each explored state with its firings to the explicit
analyses' visitors. Over the compact or compiled store's millions of states that
is Python work per state; here one Numba kernel walks the stored states in BFS
order, calling the model's `expand` (generated per model with
`numbagen.expand_source`, its sink writing every firing with its kind: a
successor, one a `forbid` policy blocks, or a gap with its slot), and answers
what the visitors ask of every state:

- each action's first state where it is tried, fires, or is blocked by a gap,
  and each phase's first state (dead rules);
- per phase, the first and the number of states with no legal move, not final
  and no gap (deadlocks);
- per action and slot, the first state of a gap, the gaps counted, and those in
  a state left without a move (gaps);
- per watched `must` with choices, the first state and the number of states
  where two of its firings lead to different states (nondeterministic musts);
- per `must` and prohibition that forbids it, the first state where the must
  fires and the prohibition's guard holds for some choice; per two musts, the
  first state where each rules the other out (conflicts);
- per Z3-witnessed pair, the first CONFIRM_TRIES states where both fire
  (order-dependence's confirmation tries).

The visitors then visit only the states named (re-expanded by the reference
expander, in BFS order) and take the totals the kernel counted: their first
states, traces and words are those of the scan of every state, because a
visitor records the first state of a kind and each such state is among those
named. Where the model cannot be compiled, or the kernel meets a model error,
`scan` says why and the caller scans in Python.

The kernel is model-independent (`kernel_source`: one module for states of one
word, one for several, compiled once per machine as the search loop is): it takes
the model's `expand` and `applies` as first-class functions and the phase's place
in a state as an array, so that a model's own scan module (`scan_source`) holds
only those two and compiles in about half the time.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from verifier.analysis.conflicts import Conflicts
from verifier.analysis.context import Context, Visitor
from verifier.analysis.dead_rules import DeadRules
from verifier.analysis.deadlock import Deadlocks
from verifier.analysis.gaps import Gaps
from verifier.analysis.nondeterministic_must import NondeterministicMust
from verifier.analysis.order_dependence import CONFIRM_TRIES, OrderDependence
from verifier.engines.actiongen import Sink
from verifier.engines.bfsgen import packing_of
from verifier.engines.compiled import cache
from verifier.engines.compiled.numbagen import (
    RUNTIME,
    SIGNATURES,
    action_body,
    action_function,
    expand_source,
    max_firings,
    opaque_literals,
    state_words,
    unfit,
    without_labels,
)
from verifier.ir.model import PHASE_VAR
from verifier.semantics import Layout

TARGET, BLOCKED, GAP = 0, 1, 2   # a firing's kind, in the low 2 bits of its code
CHUNK = 1 << 20             # states the kernel scans between two returns to Python
MAX_STATES = (1 << 31) - 1  # states it scans at most (it names them in 32 bits)
VISITORS = (DeadRules, Deadlocks, Gaps, Conflicts, NondeterministicMust, OrderDependence)
APPLIES = "types.boolean(INT, INT, STATES, STATES, STATES)"            # applies(p, s, out, acts, count)
APPLIES_ROWS = "types.boolean(INT, ROWS, INT, ROWS, STATES, STATES)"   # applies(p, keys, i, out, acts, count)


@dataclass(frozen=True)
class ScanSource:
    """The generated module's text and what its kernel's arrays are sized by."""

    text: str
    firings: int           # firings of one state, at most
    words: int             # 64-bit words of a state
    buckets: int           # phase values (one bucket where the model has no phase)


def scan_source(lay: Layout, bans: Sequence[int]) -> ScanSource:
    """The model's scan module: `expand` writing every firing (code: slot + 1 << 32 | action << 2 |
    kind) and `applies(p, ...)` for the prohibitions `bans` (their guard holds for some choice, a
    model error counting as not); the kernel that calls them is model-independent (`kernel_source`)."""
    p = packing_of(lay)
    rows = p.words > 1
    state = state_words(p.words)
    helpers: list[str] = []
    counter = itertools.count()

    def target(pad, a, _label, _choice, t):
        stores = "; ".join(f"out[n, {j}] = {t}[{j}]" for j in range(len(state))) if rows else f"out[n] = {t}"
        return [f"{pad}{stores}; acts[n] = {a << 2 | TARGET}; n += 1; count[0] = n"]

    def blocked(pad, a, _label, _choice):
        return [f"{pad}acts[n] = {a << 2 | BLOCKED}; n += 1; count[0] = n"]

    def gap(pad, a, _label, _choice, slot, _value, _lo, _hi):
        return [f"{pad}acts[n] = (({slot}) + 1 << 32) | {a << 2 | GAP}; n += 1; count[0] = n"]

    functions = expand_source(lay, Sink(target, blocked, gap), helpers, counter)
    holds = Sink(lambda pad, *_args: [f"{pad}return n + 1"], blocked, gap)
    tests = []
    for b in bans:
        guard_only = replace(lay.model.actions[b], effects=())
        body = action_body(lay, b, guard_only, holds, helpers, counter)
        if body:
            functions.append("\n".join(action_function(state, b, body, "holds")))
            tests += [f"        if p == {b}:", f"            r = holds_{b}({', '.join(state)}, out, acts, count, 0) > 0"]
    read = [f"    {name} = keys[i, {j}]" for j, name in enumerate(state)] if rows else []
    applies = ["@njit(APPLIES_SIGNATURE, **OPTIONS)",
               "def applies(p, keys, i, out, acts, count):" if rows else "def applies(p, s, out, acts, count):",
               *read, "    r = False", "    try:",
               *(tests or ["        r = False"]), "    except Exception:", "        r = False", "    return r"]
    head = (f"from numba import njit, types\n\nfrom {cache.module_name(RUNTIME)} import (INT, INNER, OPTIONS, "
            "STATES, ROWS, EXPAND_SIGNATURE, EXPAND_ROWS_SIGNATURE, _bad_index, _div, _mod, _opaque, _rd)\n\n"
            f"APPLIES_SIGNATURE = {APPLIES_ROWS if rows else APPLIES}\n"
            "# called from Python only as first-class functions (`kernel_source`): no CPython wrapper (a quarter\n"
            "# less compile time)\nOPTIONS = {**OPTIONS, \"no_cpython_wrapper\": True}\n")
    text = "\n\n".join([head, *helpers, *functions, "\n".join(applies)]) + "\n"
    return replace(scan_shape(lay), text=opaque_literals(without_labels(text)))


def kernel_source(words: int) -> str:
    """The model-independent scan kernel for states of `words` words (one module for one word,
    another for several: compiled once per machine each, as the search loop): `scan` (see
    `SCAN`) and `exclusive`, taking the model's `expand` and `applies` as first-class functions."""
    rows = words > 1
    fill = {"keys": "ROWS" if rows else "STATES",
            "expand": "EXPAND_ROWS_SIGNATURE" if rows else "EXPAND_SIGNATURE",
            "applies": APPLIES_ROWS if rows else APPLIES,
            "state": "keys, i" if rows else "keys[i]",
            "target": "out, j" if rows else "out[j]",
            "same": "_same_row(out, j, out, first_target[a])" if rows else "out[j] == out[first_target[a]]",
            "bucket": "(keys[i, phase[0]] >> phase[1]) & phase[2]" if rows else "(keys[i] >> phase[1]) & phase[2]",
            "same_row": SAME_ROW if rows else ""}
    return SIGNATURES + "\n" + SCAN.format(**fill)


def scan_shape(lay: Layout) -> ScanSource:
    """`scan_source`'s sizes without its text (empty): known without writing the module."""
    p = packing_of(lay)
    phase = lay.offsets[PHASE_VAR][0] if PHASE_VAR in lay.offsets else None
    return ScanSource("", max(1, max_firings(lay)), p.words, 1 if phase is None else 1 << p.widths[phase])


def scan(ctx: Context, visitors: Sequence[Visitor], n: int) -> str:
    """Scan the first `n` explored states in compiled code, then have the visitors visit the
    states the kernel names and take its totals (the module docstring); "" once done, else why
    it was not (nothing visited: the caller scans in Python)."""
    by_type = {type(v): v for v in visitors}
    if len(by_type) != len(visitors) or not set(by_type) <= set(VISITORS):
        return "a visitor the compiled scan does not know"
    lay = ctx.layout
    why = unfit(lay) or (f"{n:,} states, more than its {MAX_STATES:,}" if n > MAX_STATES else "")
    if why:
        return why
    questions = _Questions.of(by_type)
    from numba.core.errors import NumbaError
    bans = tuple(p for _m, p in questions.bans)
    source = scan_shape(lay)
    try:
        cache.load(RUNTIME)
        kernel, _ = cache.load(kernel_source(source.words))
        module, _known, _name = cache.load_generated(_digest(lay, bans), lambda: _source(lay, bans).text)
    except (NumbaError, OSError) as err:
        from verifier.engines.compiled.search import compile_error_words
        return f"Numba could not compile the scan: {compile_error_words(err)}"
    answers = _Answers(lay, source, questions, n)
    keys = _keys(ctx.space, n, source.words)
    phase = _phase(lay)
    for lo in range(0, n, CHUNK):
        failed = kernel.scan(module.expand, module.applies, keys, lo, min(n, lo + CHUNK), phase, *answers.arrays())
        if failed >= 0:
            return f"the compiled scan met a model error in state {failed:,}"
    _visit(ctx, visitors, answers.named())
    answers.totals(ctx, by_type)
    return ""


def _phase(lay: Layout) -> np.ndarray:
    """The phase's word, shift and mask in a packed state, the kernel's buckets (mask 0: one bucket)."""
    p = packing_of(lay)
    phase = lay.offsets[PHASE_VAR][0] if PHASE_VAR in lay.offsets else None
    if phase is None or not p.widths[phase]:
        return np.zeros(3, np.int64)
    return np.array([*p.word(phase), p.mask(phase)], np.int64)


@lru_cache(maxsize=4)
def _source(lay: Layout, bans: tuple[int, ...]) -> ScanSource:
    return scan_source(lay, bans)


def _digest(lay: Layout, bans: tuple[int, ...]) -> str | None:
    """What the scan module is found by in the cache, its text unwritten (`cache.digest_of`)."""
    return cache.digest_of("scan", lay.model, bans)


@dataclass(frozen=True)
class _Questions:
    """What the visitors ask of every state, beyond what each asks of all of them."""

    watched: tuple[int, ...]                  # musts whose choice is unstated
    pairs: tuple[tuple[int, int], ...]        # order-dependence: the Z3 witnesses' pairs
    bans: tuple[tuple[int, int], ...]         # (must, prohibition that forbids it)
    exclusives: tuple[tuple[int, int], ...]   # two musts

    @classmethod
    def of(cls, by_type: dict) -> _Questions:
        ndm, od, conflicts = by_type.get(NondeterministicMust), by_type.get(OrderDependence), by_type.get(Conflicts)
        musts = sorted(conflicts.musts) if conflicts is not None else []
        return cls(tuple(sorted(ndm.watched)) if ndm is not None else (),
                   tuple(od.witness) if od is not None else (),
                   tuple((m, p) for m in musts for p in conflicts.banned_by[m]) if conflicts is not None else (),
                   tuple(itertools.combinations(musts, 2)))


class _Answers:
    """The kernel's arrays: its buffers and what it found (`scan`'s parameters, in order)."""

    def __init__(self, lay: Layout, source: ScanSource, questions: _Questions, n: int):
        actions, slots, f = len(lay.model.actions), len(lay.slots), source.firings
        row = () if source.words == 1 else (source.words,)
        self.lay = lay
        self.out, self.acts, self.count = np.empty((f, *row), np.int64), np.empty(f, np.int64), np.zeros(1, np.int64)
        self.out2, self.acts2, self.count2 = np.empty((f, *row), np.int64), np.empty(f, np.int64), np.zeros(1, np.int64)
        self.fired_at, self.first_target = np.full(actions, -1, np.int64), np.zeros(actions, np.int64)
        self.differ_at = np.full(actions, -1, np.int64)
        self.first = np.full((3, actions), -1, np.int64)            # tried, fired, blocked by a gap
        self.phase_first = np.full(source.buckets, -1, np.int64)
        self.stuck_first, self.stuck_count = np.full(source.buckets, -1, np.int64), np.zeros(source.buckets, np.int64)
        self.gap_first = np.full((actions, slots), -1, np.int64)
        self.gap_count, self.gap_stuck = np.zeros((actions, slots), np.int64), np.zeros((actions, slots), np.int64)
        self.watched = np.zeros(actions, np.uint8)
        self.watched[list(questions.watched)] = 1
        self.nd_first, self.nd_count = np.full(actions, -1, np.int64), np.zeros(actions, np.int64)
        self.pairs = _matrix(questions.pairs)
        self.pair_states = np.empty((len(questions.pairs), min(CONFIRM_TRIES, n)), np.int32)   # < 2^31 states
        self.pair_n = np.zeros(len(questions.pairs), np.int64)
        self.bans, self.ban_first = _matrix(questions.bans), np.full(len(questions.bans), -1, np.int64)
        self.exclusives = _matrix(questions.exclusives)
        self.exclusive_first = np.full(len(questions.exclusives), -1, np.int64)

    def arrays(self) -> tuple:
        return (self.out, self.acts, self.count, self.out2, self.acts2, self.count2, self.fired_at, self.first_target,
                self.differ_at, self.first, self.phase_first, self.stuck_first, self.stuck_count, self.gap_first,
                self.gap_count, self.gap_stuck, self.watched, self.nd_first, self.nd_count, self.pairs,
                self.pair_states, self.pair_n, self.bans, self.ban_first, self.exclusives, self.exclusive_first)

    def named(self) -> np.ndarray:
        """Every state some visitor records as a first (sorted: BFS order)."""
        parts: list[np.ndarray] = [self.first.ravel(), self.phase_first, self.stuck_first, self.gap_first.ravel(), self.nd_first,
                 self.ban_first, self.exclusive_first]
        parts += [self.pair_states[q, :self.pair_n[q]] for q in range(self.pair_n.shape[0])]
        found = np.concatenate(parts)
        return np.unique(found[found >= 0])

    def totals(self, ctx: Context, by_type: dict) -> None:
        """The counts over every state, in place of those the visits of the named states made."""
        gaps, deadlocks, ndm = by_type.get(Gaps), by_type.get(Deadlocks), by_type.get(NondeterministicMust)
        if gaps is not None:
            names = packing_of(self.lay).names
            gaps.count, gaps.stuck = {}, {}
            for a, k in zip(*np.nonzero(self.gap_count)):
                key = (int(a), names[k].split("[")[0])
                gaps.count[key] = gaps.count.get(key, 0) + int(self.gap_count[a, k])
                if self.gap_stuck[a, k]:
                    gaps.stuck[key] = gaps.stuck.get(key, 0) + int(self.gap_stuck[a, k])
        if deadlocks is not None:
            deadlocks.count = {}
            for b in np.nonzero(self.stuck_count)[0]:
                subject = ctx.phase_of(ctx.unpack(ctx.space.packed[int(self.stuck_first[b])])) or "play"
                deadlocks.count[subject] = deadlocks.count.get(subject, 0) + int(self.stuck_count[b])
        if ndm is not None:
            ndm.count = {int(a): int(self.nd_count[a]) for a in np.nonzero(self.nd_count)[0]}


def _matrix(pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    return np.array(pairs, np.int64).reshape(len(pairs), 2)


def _keys(space, n: int, words: int) -> np.ndarray:
    """The first `n` stored states as the kernel reads them: int64, a row of words each for several."""
    order = getattr(space, "order", None)
    if order is None:                       # the python store: packed ints
        from verifier.engines.words import as_rows
        rows = as_rows(list(space.packed[:n]), words)
    else:
        rows = order[:n]
    rows = np.ascontiguousarray(rows).view(np.int64)
    return rows.reshape(n) if words == 1 else rows


def _visit(ctx: Context, visitors: Sequence[Visitor], named: np.ndarray) -> None:
    """The named states, in BFS order, with their reference firings, to each visitor not done."""
    packed = ctx.space.packed
    active = [v for v in visitors if not v.done]
    for i in named.tolist():
        s = packed[i]
        firings = ctx.expand_uncached(s)
        for v in active:
            v.visit(i, s, firings)
        active = [v for v in active if not v.done]


SAME_ROW = """

@njit(types.boolean(ROWS, INT, ROWS, INT), **INNER)
def _same_row(a, i, b, j):
    for w in range(a.shape[1]):
        if a[i, w] != b[j, w]:
            return False
    return True
"""

SCAN = """\
from numba import njit

INT = types.int64
KEYS = {keys}
MATRIX = types.int64[:, ::1]
EXPAND = types.FunctionType({expand})
APPLIES = types.FunctionType({applies})
{same_row}

@njit(types.boolean(EXPAND, INT, INT, KEYS, STATES, INT, KEYS, STATES, STATES), **INNER)
def exclusive(expand, x, y, out, acts, m, out2, acts2, count2):
    # every firing of x here that does not end the game leads where y has no legal firing (and one does not end it)
    live = 0
    for j in range(m):
        c = acts[j]
        if c & 3 != 0 or (c >> 2) & 0x3fffffff != x:
            continue
        count2[0] = 0
        final = False
        try:
            final = expand({target}, out2, acts2, count2, 0)
        except Exception:
            return False
        if final:
            continue
        live += 1
        for k in range(count2[0]):
            c2 = acts2[k]
            if c2 & 3 == 0 and (c2 >> 2) & 0x3fffffff == y:
                return False
    return live > 0


@njit(types.int64(EXPAND, APPLIES, KEYS, INT, INT, STATES, KEYS, STATES, STATES, KEYS, STATES, STATES, STATES,
                  STATES, STATES, MATRIX, STATES, STATES, STATES, MATRIX, MATRIX, MATRIX, types.uint8[::1], STATES,
                  STATES, MATRIX, types.int32[:, ::1], STATES, MATRIX, STATES, MATRIX, STATES), **OPTIONS)
def scan(expand, applies, keys, lo, hi, phase, out, acts, count, out2, acts2, count2, fired_at, first_target,
         differ_at, first, phase_first, stuck_first, stuck_count, gap_first, gap_count, gap_stuck, watched, nd_first,
         nd_count, pairs, pair_states, pair_n, bans, ban_first, exclusives, exclusive_first):
    # the states lo..hi-1 (see the Python module's docstring); -1, or the first state where expand raised;
    # phase: the phase's word, shift and mask in a state (its bucket)
    for i in range(lo, hi):
        count[0] = 0
        final = False
        failed = False
        try:
            final = expand({state}, out, acts, count, 0)
        except Exception:
            failed = True
        if failed:
            return i
        m = count[0]
        targets = 0
        gaps = 0
        for j in range(m):
            c = acts[j]
            a = (c >> 2) & 0x3fffffff
            kind = c & 3
            if first[0, a] < 0:
                first[0, a] = i
            if kind == 0:
                targets += 1
                if first[1, a] < 0:
                    first[1, a] = i
                if fired_at[a] != i:
                    fired_at[a] = i
                    first_target[a] = j
                elif watched[a] and differ_at[a] != i and not ({same}):
                    differ_at[a] = i
                    nd_count[a] += 1
                    if nd_first[a] < 0:
                        nd_first[a] = i
            elif kind == 2:
                gaps += 1
                if first[2, a] < 0:
                    first[2, a] = i
        b = {bucket}
        if phase_first[b] < 0:
            phase_first[b] = i
        if gaps:
            for j in range(m):
                c = acts[j]
                if c & 3 == 2:
                    a = (c >> 2) & 0x3fffffff
                    k = (c >> 32) - 1
                    gap_count[a, k] += 1
                    if gap_first[a, k] < 0:
                        gap_first[a, k] = i
                    if targets == 0:
                        gap_stuck[a, k] += 1
        elif targets == 0 and not final:
            stuck_count[b] += 1
            if stuck_first[b] < 0:
                stuck_first[b] = i
        if targets == 0:
            continue
        for q in range(pairs.shape[0]):
            if fired_at[pairs[q, 0]] == i and fired_at[pairs[q, 1]] == i and pair_n[q] < pair_states.shape[1]:
                pair_states[q, pair_n[q]] = i
                pair_n[q] += 1
        for q in range(bans.shape[0]):
            if ban_first[q] < 0 and fired_at[bans[q, 0]] == i and applies(bans[q, 1], {state}, out2, acts2, count2):
                ban_first[q] = i
        for q in range(exclusives.shape[0]):
            x = exclusives[q, 0]
            y = exclusives[q, 1]
            if exclusive_first[q] < 0 and fired_at[x] == i and fired_at[y] == i \\
                    and exclusive(expand, x, y, out, acts, m, out2, acts2, count2) \\
                    and exclusive(expand, y, x, out, acts, m, out2, acts2, count2):
                exclusive_first[q] = i
    return -1
"""
