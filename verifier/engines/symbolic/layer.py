"""One layer of a lexicographic ranking function: a linear programme refined by counterexamples.

The programme, over rational coefficients `c` and one `delta[a]` in [0, 1] per action,
asks for every sampled transition (a, x, y) that ``c . (x - y) >= delta[a]`` and
maximises the sum of the deltas (how many actions decrease), then minimises the sum
of ``|c|`` (small functions generalise to unsampled transitions). Its optimum is
scaled to the smallest integer vector; the actions with ``delta > 0`` are the strict
ones, and on integer states they then decrease by at least 1. A solver checks the
candidate against each action's full transition relation (strict: decreases by 1 or
more; the others: does not increase); a violating transition becomes a sample and the
programme is solved again. Sampling cannot show that two actions are never strict
together (over an unbounded parameter the coefficients just keep growing), so a
programme that has not settled after JOINT_ROUNDS makes each action in turn the only
strict one. Boundedness (``f >= 0`` on the sources of strict transitions) is given by a
constant: minus the least value of ``c . x`` over the declared ranges (or, where those
leave it unbounded, over the strict transitions).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import gcd, lcm

import z3

from verifier.engines.symbolic.core import Effort
from verifier.engines.symbolic.encode import Term
from verifier.engines.symbolic.units import UNITS_PER_SECOND
from verifier.resources.memory import bound_z3

JOINT_ROUNDS = 60       # counterexample rounds of a layer making as many actions strict as it can
SINGLE_ROUNDS = 10      # then, per action, rounds making it the only strict one
CHECK_CAP = 30 * UNITS_PER_SECOND   # Z3 resource units at most per solver call
TIMEOUT = "the Z3 resource units (rlimit) for this claim ran out while searching for a ranking function"


@dataclass
class Layer:
    coeffs: list[int]           # per slot, then per free parameter
    constant: int
    strict: list[int]           # actions that strictly decrease it


@dataclass(frozen=True)
class Sample:
    """A transition of `action`: the values of `Transitions.cur_x` before it and of `nxt_x` after."""

    action: int
    source: list[int]
    target: list[int]


@dataclass
class Failure:
    reason: str
    samples: list[Sample]       # every transition the programme sampled
    core: list[int]             # those that together defeated the template (indices), newest first

    @property
    def sources(self) -> list[list[int]]:
        return [self.samples[i].source for i in self.core]


class Transitions:
    """Each action's transition relation in an incremental solver of its own (asserted once)."""

    def __init__(self, relations: dict[int, Term], cur_x: list, nxt_x: list, names: dict[int, str]):
        self.cur_x, self.nxt_x, self.names = cur_x, nxt_x, names
        self.relations = relations
        self._solvers: dict[int, z3.Solver] = {}

    def solver(self, a: int) -> z3.Solver:
        if a not in self._solvers:
            bound_z3()
            s = z3.Solver()
            s.add(self.relations[a])
            self._solvers[a] = s
        return self._solvers[a]

    def counterexample(self, a: int, want: Term, effort: Effort) -> tuple[list[int], list[int]] | str | None:
        """A transition of `a` violating `want` (source and target values), None when there is
        none, or why the solver could not tell."""
        s = self.solver(a)
        s.set("rlimit", effort.rlimit(cap=CHECK_CAP))
        s.push()
        try:
            s.add(z3.Not(want))
            r = s.check()
            if r == z3.unknown:
                return TIMEOUT if effort.expired() else f"Z3 returned unknown on the transitions of {self.names[a]}"
            if r == z3.unsat:
                return None
            m = s.model()
            return ([m.eval(x, model_completion=True).as_long() for x in self.cur_x],
                    [m.eval(y, model_completion=True).as_long() for y in self.nxt_x])
        finally:
            s.pop()


def linear(coeffs: list[int], xs: list, constant: int = 0) -> Term:
    terms = [k * x for k, x in zip(coeffs, xs) if k]
    return z3.Sum(*terms) + constant if terms else z3.IntVal(constant)


def find_layer(trans: Transitions, remaining: list[int], box: Term, effort: Effort) -> Layer | Failure | str:
    """A layer for the `remaining` actions with at least one strict action, a Failure when the
    linear template has none, or why the search stopped (time, solver).

    The programme first makes as many actions strict as it can. When that does not settle
    within JOINT_ROUNDS (a strict action whose decrease needs ever larger coefficients, as when
    a lexicographic order over an unbounded parameter is needed), each action in turn is made
    the only strict one, the others only kept, for SINGLE_ROUNDS each."""
    lp = _Programme(trans, remaining)
    found = lp.refine(box, effort, JOINT_ROUNDS)
    for a in remaining:
        if found is not None:
            return found
        found = lp.refine(box, effort, SINGLE_ROUNDS, only=a)
    return found or f"no ranking function found within {JOINT_ROUNDS} + {SINGLE_ROUNDS} refinement rounds per action"


class _Programme:
    """The linear programme of one layer: coefficients, one delta per action, one row per
    sampled transition."""

    def __init__(self, trans: Transitions, remaining: list[int]):
        self.trans, self.remaining = trans, remaining
        n = len(trans.cur_x)
        self.c = [z3.Real(f"rank!c{i}") for i in range(n)]
        self.size = [z3.Real(f"rank!t{i}") for i in range(n)]
        self.delta = {a: z3.Real(f"rank!delta{a}") for a in remaining}
        self.rows: list[z3.BoolRef] = [z3.And(d >= 0, d <= 1) for d in self.delta.values()]
        self.rows += [z3.And(t >= ci, t >= -ci) for ci, t in zip(self.c, self.size)]
        self.samples: list[Sample] = []      # the transition behind rows[len(rows) - len(samples) + i]

    def refine(self, box: Term, effort: Effort, rounds: int, only: int | None = None) -> Layer | Failure | str | None:
        """Solve, check the candidate, add the violations as rows, until a candidate holds (a
        Layer), none is strict (a Failure; with `only`: None), or the rounds run out (None).
        `only`: that action strict, every other one kept."""
        trans, c, delta = self.trans, self.c, self.delta
        fixed = [] if only is None else [d == (1 if a == only else 0) for a, d in delta.items()]
        for _ in range(rounds):
            if effort.expired():
                return TIMEOUT
            bound_z3()
            lp = z3.Optimize()
            lp.set("rlimit", effort.rlimit(cap=CHECK_CAP))
            lp.add(*self.rows, *fixed)
            lp.maximize(z3.Sum(*delta.values()))
            lp.minimize(z3.Sum(*self.size) if self.size else z3.RealVal(0))
            r = lp.check()
            if r == z3.unsat and only is not None:
                return None
            if r != z3.sat:
                return TIMEOUT if effort.expired() else "Z3 gave up on the linear programme of a ranking layer"
            m = lp.model()
            strict = [a for a in self.remaining if _value(m, delta[a]) > 0]
            if not strict:
                return Failure("no linear function decreases on any of "
                               f"{', '.join(trans.names[a] for a in self.remaining)} without increasing on another",
                               self.samples, _blocking(self.rows, len(self.samples), delta, effort))
            coeffs = _integers([_value(m, ci) for ci in c])
            f_cur, f_nxt = linear(coeffs, trans.cur_x), linear(coeffs, trans.nxt_x)
            new = False
            for a in self.remaining:
                found = trans.counterexample(a, f_cur - f_nxt >= (1 if a in strict else 0), effort)
                if isinstance(found, str):
                    return found
                if found is not None:
                    xs, ys = found
                    diff = [x - y for x, y in zip(xs, ys)]
                    self.rows.append(z3.Sum(*[ci * d for ci, d in zip(c, diff) if d], z3.RealVal(0)) >= delta[a])
                    self.samples.append(Sample(a, xs, ys))
                    new = True
            if not new:
                constant = _lowest(coeffs, trans, strict, box, effort)
                if isinstance(constant, str):
                    return constant
                return Layer(coeffs, -constant, strict)
        return None


def _blocking(rows: list[z3.BoolRef], samples: int, delta: dict, effort: Effort) -> list[int]:
    """The sampled transitions (the last `samples` rows) that together leave no action strict
    (a minimised unsat core of "some delta is positive"; their indices, newest first): if they
    are unreachable, invariants excluding them let the search go on."""
    first = len(rows) - samples
    bound_z3()
    s = z3.Solver()
    s.set("rlimit", effort.rlimit(cap=CHECK_CAP))
    s.set("core.minimize", True)
    s.add(*rows[:first], z3.Sum(*delta.values()) >= 1)     # the rows are homogeneous: > 0 iff >= 1
    marks = [z3.Bool(f"rank!sample{i}") for i in range(samples)]
    s.add(*(z3.Implies(m, row) for m, row in zip(marks, rows[first:])))
    if s.check(*marks) != z3.unsat:
        return list(reversed(range(samples)))
    core = {str(m) for m in s.unsat_core()}
    return [i for i in reversed(range(samples)) if str(marks[i]) in core]


def _value(m: z3.ModelRef, x) -> Fraction:
    v = m.eval(x, model_completion=True)
    return Fraction(v.numerator_as_long(), v.denominator_as_long())


def _integers(values: list[Fraction]) -> list[int]:
    """The smallest integer multiple of a rational vector (same direction)."""
    scale = lcm(*(v.denominator for v in values)) if values else 1
    ints = [int(v * scale) for v in values]
    common = gcd(*ints) if any(ints) else 1
    return [k // common for k in ints]


def _lowest(coeffs: list[int], trans: Transitions, strict: list[int], box: Term, effort: Effort) -> int | str:
    """A lower bound of ``coeffs . x`` over the sources of the strict transitions: its least
    value within the declared ranges, else within those transitions."""
    f = linear(coeffs, trans.cur_x)
    for scope in (box, z3.Or(*[trans.relations[a] for a in strict])):
        bound_z3()
        opt = z3.Optimize()
        opt.set("rlimit", effort.rlimit(cap=CHECK_CAP))
        opt.add(scope)
        low = opt.minimize(f)
        r = opt.check()
        if r == z3.unknown:
            return TIMEOUT if effort.expired() else "Z3 gave up bounding a ranking layer"
        if r == z3.unsat:
            return 0
        value = low.value()
        if z3.is_int_value(value):
            return value.as_long()
    return "a ranking layer decreases but is unbounded below (a free parameter without bounds)"
