"""Random runs as witnesses: reachability and violations deeper than a capped search goes.

On a model whose state space is far too large to enumerate (the games at their
printed numbers), breadth-first search stops at its state cap long before the
end of a game, so a claim whose witness lies deep (a game can end; a finished
game can have no winner) stays UNKNOWN. A run from an initial state that picks
an enabled firing at random reaches such states quickly, and any run that
reaches one is a proof: a trace that replays. So `check` answers only with
evidence, never from absence: HOLDS for a reachability claim a run reaches,
VIOLATED for an invariant a run breaks or a step claim one of its moves breaks;
everything else stays UNKNOWN. Runs are seeded, so the same model gives the same
traces; `Runs` keeps a model's runs as they are made, so that the checks of one
reading (its claims', then its step claims') read one set of runs, not each its own.
`check` reads them a span of positions at a time, each claim tested over the
span's states or moves at once (numpy); the position that decides a claim is the
one a reading one position after the other meets first.

A step claim is judged on the model itself, without its monitor product: each
move a run takes is one transition, and the claim's expression is read over the
pair (its `prev(x)` from the state before, the rest from the state after), for
the moves of the actions it judges. A break is a reachable transition that the
claim forbids: the run up to that move is the counterexample, and replays.
"""
from __future__ import annotations

import random
import time
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from verifier.engines.bfsgen import compile_expander, packed_predicate, packing_of
from verifier.engines.codegen import Packing
from verifier.engines.statespace import slot_columns
from verifier.ir import batch
from verifier.ir.expr import TRUE, Expr, neg
from verifier.ir.model import Model
from verifier.ir.props import PREV_MARK, Event, Invariant, Property, Reachable, StepInvariant, map_claim
from verifier.props.events import occurs
from verifier.props.moves import Choice, chose, named
from verifier.result import CheckResult, Stats, Verdict
from verifier.semantics import EvalError, Layout, holds, initial_states, layout
from verifier.trace import build_trace

NAME = "walk"
MAX_STEPS = 100_000      # one run stops here if it has not ended (a model with endless plays)
STEPS = 400_000          # steps of all the runs of one call, by default (about 5 s of one core on the games)
FIRST_SPAN = 1 << 10     # positions of the runs a check tests at once first, doubling up to MAX_SPAN
MAX_SPAN = 1 << 16


class Runs:
    """The seeded random runs of one model (`random_runs` from its initial states, seed 0), kept
    as they are made, one position a state: a run's first state, then one per move. Every `check`
    of the model that is handed them reads the same runs; a position is made once, by the first
    check that reads that far (`made`), so checks in turn give the verdicts and traces each would
    give walking on its own. A position takes 16 bytes where a state packs into one word (its
    state, action and the number of its choice values, each distinct tuple of which is kept once)."""

    def __init__(self, model: Model):
        self.concrete = model.instantiate()
        self.lay = layout(self.concrete)
        self.packing = packing_of(self.lay)
        inits = [self.packing.pack(s) for s in initial_states(self.lay)]
        self._made = random_runs(compile_expander(self.lay).expand, inits, random.Random(0), MAX_STEPS)
        self._states: array | list[int] = array("q") if self.packing.words == 1 else []
        self._actions = array("i")               # each position's action, -1 where a run starts
        self._choices = array("i")               # its choice values, numbered in `choice_values`
        self.choice_values: list[Choice] = []
        self._numbers: dict[Choice, int] = {}
        self._ended = False                      # no initial state: no run

    def made(self, n: int) -> int:
        """The positions made, `n` where the runs go on that far."""
        while len(self._actions) < n and not self._ended:
            made = next(self._made, None)
            if made is None:
                self._ended = True
                break
            state, move = made
            self._states.append(state)
            self._actions.append(-1 if move is None else move[0])
            choice = () if move is None else move[1]
            self._choices.append(self._numbers.setdefault(choice, len(self._numbers)))
            if len(self._numbers) > len(self.choice_values):
                self.choice_values.append(choice)
        return min(n, len(self._actions))

    def state(self, k: int) -> int:
        return self._states[k]

    def choice(self, k: int) -> Choice:
        return self.choice_values[self._choices[k]]

    def span(self, lo: int, hi: int) -> Span:
        """Positions `lo` to `hi` as arrays (made already)."""
        states = self._states
        packed = np.frombuffer(states[max(lo - 1, 0):hi], dtype=np.uint64) if isinstance(states, array) else None
        return Span(lo, hi, np.frombuffer(self._actions[lo:hi], dtype=np.int32),
                    np.frombuffer(self._choices[lo:hi], dtype=np.int32), self.packing, packed)

    def run_to(self, k: int) -> tuple[list[int], list[tuple[int, Choice]]]:
        """The states and moves of the run of position `k`, from its first state to `k`'s."""
        first = k
        while self._actions[first] >= 0:
            first -= 1
        return ([self._states[j] for j in range(first, k + 1)],
                [(self._actions[j], self.choice(j)) for j in range(first + 1, k + 1)])


@dataclass
class Span:
    """Positions `lo` to `hi` of some runs, read once for every claim tested over them."""

    lo: int
    hi: int
    actions: np.ndarray                          # each position's action, -1 where a run starts
    choices: np.ndarray                          # the numbers of its choice values (`Runs.choice_values`)
    packing: Packing
    packed: np.ndarray | None                    # the states from position lo - 1 (0 at the start of the runs)
                                                 # on, where each packs into one word

    @cached_property
    def columns(self) -> np.ndarray | None:
        """`packed` as one row each, one column per slot (row `k - first`: position k's state)."""
        return None if self.packed is None else slot_columns(self.packing, self.packed)

    @property
    def first(self) -> int:
        """The position of the first row of `columns`."""
        return max(self.lo - 1, 0)


Tester = Callable[[Runs, Span], "int | None"]   # the first position of the span that decides a claim


def check(model: Model, properties: Sequence[Property], steps_at_most: int | None = None,
          runs: Runs | None = None) -> list[CheckResult]:
    """Seeded random runs of `steps_at_most` steps in all (STEPS by default; a run that cannot move
    counts as one, so a model stuck in its initial states ends them too); a result per claim
    (UNKNOWN where no run decided it). `runs`: those of `model` another check read already. The
    runs are read a span of positions at a time (`FIRST_SPAN`, doubling), each claim tested over it
    at once (`_testers`): the first position deciding a claim is the one a run reading one
    position after the other meets first."""
    start = time.perf_counter()
    steps_at_most = STEPS if steps_at_most is None else steps_at_most
    runs = Runs(model) if runs is None else runs
    assert runs.concrete == model.instantiate(), "the runs of another model"
    testers = _testers(runs, [map_claim(p, runs.concrete.fix_params) for p in properties])
    found: dict[int, int] = {}                   # claim -> the position that decided it
    pos = started = steps = 0
    span = FIRST_SPAN
    while True:
        hi = runs.made(pos + span)
        if hi == pos:
            break
        span_of = runs.span(pos, hi)
        hits = sorted((at, k) for k, first in testers.items() if k not in found
                      and (at := first(runs, span_of)) is not None)
        acts = span_of.actions
        stop, moves = hi, np.flatnonzero(acts >= 0)
        left = steps_at_most - steps             # moves left: past the last one the runs stop
        if 0 < left <= len(moves):
            stop = pos + int(moves[left - 1]) + 1
        for at in (pos + np.flatnonzero(acts < 0)).tolist():   # a run starts
            if at >= stop:
                break
            decided = len(found) + bisect_left(hits, (at, -1))
            if decided >= len(testers) or steps + started + at - pos >= steps_at_most:
                stop = at                        # a run that cannot move costs a step too
                break
        found.update((k, at) for at, k in hits if at < stop)
        begun = int(np.count_nonzero(acts[:stop - pos] < 0))
        started, steps = started + begun, steps + stop - pos - begun
        if stop < hi:
            break
        pos, span = hi, min(2 * span, MAX_SPAN)
    stats = Stats(steps, steps, time.perf_counter() - start)
    out = []
    for k, p in enumerate(properties):
        if k not in found:
            out.append(CheckResult(p, Verdict.UNKNOWN, NAME, None, stats, None,
                                   f"no random run decided it ({started:,} runs, {steps:,} steps)",
                                   model.param_values, model.variant))
            continue
        path, fired = runs.run_to(found[k])
        trace = build_trace(runs.lay, [runs.packing.unpack(x) for x in path],
                            [(runs.concrete.actions[a], choice) for a, choice in fired])
        verdict = Verdict.VIOLATED if isinstance(p, (Invariant, StepInvariant)) else Verdict.HOLDS
        what = ("'s last move breaks it" if isinstance(p, StepInvariant) else
                " breaks it" if verdict is Verdict.VIOLATED else " reaches it")
        out.append(CheckResult(p, verdict, NAME, len(fired), stats, trace, f"a random run{what}",
                               model.param_values, model.variant))
    return out


def _testers(runs: Runs, claims: Sequence[Property]) -> dict[int, Tester]:
    """A tester per claim a run can decide (by position in `claims`): a state a run meets breaks an
    invariant or reaches a reachability claim; a move fires a named action; a move breaks a step claim."""
    concrete, lay = runs.concrete, runs.lay
    out: dict[int, Tester] = {}
    pair: Layout | None = None
    for k, p in enumerate(claims):
        if isinstance(p, Invariant):
            out[k] = _state_tester(lay, neg(p.expr))
        elif isinstance(p, Reachable) and p.expr is not None:
            out[k] = _state_tester(lay, p.expr)
        elif isinstance(p, Reachable) and p.action:
            out[k] = _action_tester([i for i, a in enumerate(concrete.actions) if named(a, p.action)], p.choice)
        elif isinstance(p, StepInvariant):
            pair = pair or _pair_layout(concrete)
            out[k] = _step_tester(concrete, lay, pair, p)
    return out


def _state_tester(lay: Layout, e: Expr) -> Tester:
    """The first position whose state meets `e` (a state where it raises a model error does not):
    over the span's states at once (`batch.values`), else where that is unsure one by one."""
    pred = packed_predicate(lay, e)

    def first(runs: Runs, span: Span) -> int | None:
        cols = span.columns
        if cols is not None:
            try:
                met = np.flatnonzero(batch.values(lay, e, cols[span.lo - span.first:]))
                return span.lo + int(met[0]) if len(met) else None
            except batch.Unsure:
                pass
        for k in range(span.lo, span.hi):
            try:
                if pred(runs.state(k)):
                    return k
            except EvalError:
                continue
        return None

    return first


def _action_tester(judged: Sequence[int], with_values: Choice) -> Tester:
    """The first position whose move fires one of the `judged` actions with the choice values asked."""
    def first(runs: Runs, span: Span) -> int | None:
        chosen = np.array([chose(c, with_values) for c in runs.choice_values], dtype=bool)
        met = np.flatnonzero(np.isin(span.actions, judged) & chosen[span.choices])
        return span.lo + int(met[0]) if len(met) else None

    return first


def _step_tester(concrete: Model, lay: Layout, pair: Layout, claim: StepInvariant) -> Tester:
    """The first position whose move (from the state before it, in the same run) breaks `claim`:
    over the span's moves of the actions it judges at once, as rows of the pair model (`_pair_layout`:
    the state after, then the state before), else (a claim reading the move's choices, a span where
    that is unsure) one by one (`_move_check`)."""
    judged, breaks = _move_check(concrete, pair, _joiner(packing_of(lay), packing_of(pair)), claim)
    actions = sorted(judged)
    whole = not claim.reads_choices()

    def first(runs: Runs, span: Span) -> int | None:
        at = span.lo + np.flatnonzero(np.isin(span.actions, actions))    # moves: the state before is in the run
        if not len(at):
            return None
        cols = span.columns if whole else None
        if cols is not None:
            rows = at - span.first
            try:
                kept = batch.values(pair, claim.expr, np.hstack([cols[rows], cols[rows - 1]]))
                broken = np.flatnonzero(kept == 0)
                return int(at[broken[0]]) if len(broken) else None
            except batch.Unsure:
                pass
        for j in at.tolist():
            if breaks(runs.state(j - 1), runs.state(j), runs.choice(j)):
                return j
        return None

    return first


def random_runs(expand: Callable, starts: Sequence[int], rng: random.Random,
                length: int) -> Iterator[tuple[int, tuple[int, tuple] | None]]:
    """Seeded random runs on generated successor code (`expand` of packed states), one after
    the other for as long as the caller takes them: each run starts in one of `starts` and takes
    up to `length` moves, each an enabled firing drawn alike. Yields ``(state, None)`` as a run
    starts, then ``(target, (action, choice))`` per move; a run ends early where no firing is
    enabled or the model errs (the explicit engine reports that)."""
    while starts:
        state = rng.choice(starts)
        yield state, None
        for _ in range(length):
            try:
                options = [(a, choice, t) for a, choice, t, _gap in expand(state) if t is not None]
            except EvalError:
                break
            if not options:
                break
            a, choice, state = rng.choice(options)
            yield state, (a, choice)


def _pair_layout(concrete: Model) -> Layout:
    """The layout of a pair model: the plain variables followed by a `prev:` copy of each
    (`_joiner` packs a move into it)."""
    return layout(replace(concrete, variables=concrete.variables +
                          tuple(replace(v, name=PREV_MARK + v.name) for v in concrete.variables)))


def _joiner(packing: Packing, pair: Packing) -> Callable[[int, int], int]:
    """`join(before, after)`: a move's packed state in the pair model. Where the pair model packs
    the `prev:` copies as the plain slots moved up by the same number of bits (slots pack in
    order), that is `after | before << offset`; else (wide states packed by words) slot by slot."""
    n = len(packing.shifts)
    used = [k for k in range(n) if packing.widths[k]]
    offset = pair.shifts[used[0] + n] - packing.shifts[used[0]] if used else 0
    if all(pair.shifts[k] == packing.shifts[k] and pair.shifts[k + n] == packing.shifts[k] + offset for k in used):
        return lambda before, after: after | before << offset
    unpack, pack = packing.unpack, pair.pack
    return lambda before, after: pack(unpack(after) + unpack(before))


def _move_check(concrete: Model, pair: Layout, join: Callable[[int, int], int],
                claim: StepInvariant) -> tuple[frozenset[int], Callable[[int, int, Choice], bool]]:
    """The actions `claim` judges (by index) and `breaks(before, after, choice)` over packed states and
    the move's choice values: the expression is compiled over the pair model's layout (`_pair_layout`),
    `join` packs a move; a claim that reads the move's choices is evaluated with them (slower: no code)."""
    judged = frozenset(i for i, a in enumerate(concrete.actions) if not claim.actions or
                       TRUE in (occurs(concrete, a, Event(action=name)) for name in claim.actions))
    compiled = None if claim.reads_choices() else packed_predicate(pair, claim.expr)
    unpack = packing_of(pair).unpack

    def breaks(before: int, after: int, choice: Choice) -> bool:
        if not chose(choice, claim.choice):
            return False
        try:
            if compiled is not None:
                return not compiled(join(before, after))
            return not holds(pair, claim.expr, unpack(join(before, after)), dict(choice))
        except EvalError:        # a run-time error of the claim: the product's search reports it
            return False

    return judged, breaks
