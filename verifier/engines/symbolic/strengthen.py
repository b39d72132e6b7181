"""Invariants that exclude given states, for the ranking search: Houdini over short clauses.

The states to exclude are the sources of transitions that defeated a ranking template.
Candidates are, per state, the clauses ``not l`` and ``not (l1 and l2)`` over the literals
it satisfies (per slot: ``x == v`` for booleans and enums; ``x <= v``, ``x >= v`` and
``x >= lo + 1`` for integers), so each candidate excludes a state it was made from.
Reachable states at the states' parameter values (`seen.py`: an explicit search's and seeded
random runs' on the generated successor code) first discard every candidate that one of them
breaks (cheap, vectorised). The rest go
through Houdini: drop the candidates an initial state breaks, then, until nothing changes,
those broken by a step of some action from a state that satisfies the support and every
candidate left. What survives holds initially and is preserved by every action from every
state where the support holds; the support being true in every reachable state, the
conjunction is an invariant. `recheck` proves that again with fresh solvers.
"""
from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations
from weakref import WeakKeyDictionary

import numpy as np
import z3

from verifier.engines.bfsgen import compile_expander, packing_of
from verifier.engines.codegen import Packing
from verifier.engines.symbolic.core import Effort
from verifier.engines.symbolic.encode import Encoding, Term, conj, negate, numeral
from verifier.engines.symbolic.units import UNITS_PER_SECOND
from verifier.engines.walk import random_runs
from verifier.ir.model import BoolType, EnumType
from verifier.resources.memory import bound_z3
from verifier.semantics import EvalError, layout

WALK_STEPS = 20_000     # steps of random runs per call, at most
WALK_LENGTH = 2_000     # steps of one run before it restarts
WALK_STALE = 200        # steps without a new state after which the runs stop
DEEP_STARTS = 256       # deepest explored states the runs beside a search start from, at most ...
DEEP_STEPS = 100_000    # ... and their steps, at most
INITIAL_STATES = 3      # initial states the runs start from, at most
FILTER_STATES = 8_192   # reachable states the candidates are filtered by, at most (memory: states x literals)
SAMPLES = 24            # blocking states taken per call, at most (the newest)
CHECK_CAP = 30 * UNITS_PER_SECOND   # Z3 resource units at most per solver call


@dataclass(frozen=True)
class Literal:
    slot: int
    op: str             # "==", "<=" or ">="
    value: int

    def holds(self, xs) -> bool:
        x = xs[self.slot]
        return x == self.value if self.op == "==" else x <= self.value if self.op == "<=" else x >= self.value

    def column(self, states: np.ndarray) -> np.ndarray:
        x = states[:, self.slot]
        return x == self.value if self.op == "==" else x <= self.value if self.op == "<=" else x >= self.value

    def term(self, xs) -> Term:
        x = xs[self.slot]
        return x == self.value if self.op == "==" else x <= self.value if self.op == "<=" else x >= self.value


Clause = tuple[Literal, ...]     # not (l1 and ...): one or two literals


def excluded(clause: Clause, values) -> bool:
    """The clause is false in the state with these slot values."""
    return all(lit.holds(values) for lit in clause)


def clause_term(clause: Clause, xs) -> Term:
    return negate(conj(*(lit.term(xs) for lit in clause)))


@dataclass
class Lemmas:
    clauses: list[Clause]       # jointly inductive relative to the support
    term: Term                  # their conjunction over enc.cur


def exclude(enc: Encoding, support: Term, samples: list[list[int]], effort: Effort,
            reachable: Callable[[tuple[int, ...]], np.ndarray]) -> Lemmas | str:
    """The Houdini invariant from the samples' candidate clauses (possibly empty), or why the
    solver could not finish. `reachable`: reachable states at given values of `enc.params`
    (`seen.Seen.states`), which discard candidates first."""
    n = len(enc.slots)
    samples = samples[:SAMPLES]
    literals = {s: _literals(enc, values[:n]) for s, values in enumerate(samples)}
    candidates: dict[Clause, None] = {}
    for lits in literals.values():
        for lit in lits:
            candidates[(lit,)] = None
        for a, b in combinations(lits, 2):
            if a.slot != b.slot:
                candidates[(a, b)] = None
    if not candidates:
        return Lemmas([], conj())
    clauses = _unbroken(list(candidates), samples, n, reachable)
    alive = houdini(enc, support, clauses, effort)
    if isinstance(alive, str):
        return alive
    return Lemmas(alive, conj(*(clause_term(c, enc.cur.slots) for c in alive)))


def _literals(enc: Encoding, values: list[int]) -> list[Literal]:
    out = []
    for i, (slot, v, (lo, hi)) in enumerate(zip(enc.slots, values, enc.slot_bounds)):
        if isinstance(slot.type, (BoolType, EnumType)):
            out.append(Literal(i, "==", v))
            continue
        out += integer_literals(i, v, numeral(lo), numeral(hi))
    return out


def integer_literals(slot: int, v: int, low: int | None, high: int | None) -> list[Literal]:
    """`x >= v` and `x <= v` where they exclude something, and `x >= low + 1`."""
    out = []
    if low is None or v > low:
        out.append(Literal(slot, ">=", v))
    if high is None or v < high:
        out.append(Literal(slot, "<=", v))
    if low is not None and v > low + 1:
        out.append(Literal(slot, ">=", low + 1))
    return out


def _unbroken(clauses: list[Clause], samples: list[list[int]], n: int,
              reachable: Callable[[tuple[int, ...]], np.ndarray]) -> list[Clause]:
    """The clauses that no `reachable` state (at each sample's parameter values; FILTER_STATES of
    them at most, spread over them) breaks."""
    tables = [reachable(params) for params in sorted({tuple(s[n:]) for s in samples})]
    table = np.concatenate(tables) if tables else np.zeros((0, n), dtype=np.int64)
    if not len(table):
        return clauses
    if len(table) > FILTER_STATES:
        table = table[np.linspace(0, len(table) - 1, FILTER_STATES).astype(np.int64)]
    literals = sorted({lit for c in clauses for lit in c}, key=lambda lit: (lit.slot, lit.op, lit.value))
    index = {lit: k for k, lit in enumerate(literals)}
    truth = np.stack([lit.column(table) for lit in literals], axis=1).astype(np.float32)
    together = truth.T @ truth      # together[i, j] > 0: some state satisfies literals i and j
    return [c for c in clauses if together[index[c[0]], index[c[-1]]] == 0]


# ---------------------------------------------------------------- random runs

def random_states(enc: Encoding, params: dict[str, int], starts: list[tuple[int, ...]] | None = None,
                  most: int = WALK_STEPS) -> set[tuple[int, ...]]:
    """The states of seeded random runs (at most `most` steps) from `starts` (reachable states;
    by default a few initial states), at these parameter values."""
    packing, expand = expander(enc, params)
    froms = [packing.pack(s) for s in (_initial_states(enc, params) if starts is None else starts)]
    seen: set[int] = set(froms)
    steps = last_new = 0
    length = WALK_LENGTH          # the moves of the run before
    for state, move in random_runs(expand, froms, random.Random(0), WALK_LENGTH):
        if move is None:                 # a run starts
            if length < WALK_LENGTH:     # the last run ended at a dead end: finding it took a step
                steps += 1
            if steps >= most or steps - last_new >= WALK_STALE:
                break
            length = 0
            continue
        steps += 1
        length += 1
        if state not in seen:
            seen.add(state)
            last_new = steps
        if steps >= most or steps - last_new >= WALK_STALE:
            break
    return {packing.unpack(x) for x in seen}


def deep_runs(enc: Encoding, params: dict[str, int], explored: np.ndarray) -> set[tuple[int, ...]]:
    """The states of seeded random runs (DEEP_STEPS at most) from the deepest DEEP_STARTS rows of
    `explored` (reachable states in BFS order, the deepest last, a column per slot first); from the
    initial states where it has none."""
    starts = [tuple(int(v) for v in row) for row in explored[-DEEP_STARTS:, :len(enc.slots)]]
    return random_states(enc, params, starts or None, DEEP_STEPS)


# the packing and generated successors of an encoding's model, per parameter values
_EXPANDERS: WeakKeyDictionary[Encoding, dict[tuple[tuple[str, int], ...], tuple[Packing, Callable]]] = \
    WeakKeyDictionary()


def expander(enc: Encoding, params: dict[str, int]) -> tuple[Packing, Callable]:
    """The packing and successor function of `enc`'s model at `params`, generated once."""
    per = _EXPANDERS.setdefault(enc, {})
    key = tuple(sorted(params.items()))
    if key not in per:
        lay = layout(enc.source.instantiate(dict[str, int | None](params)))
        per[key] = packing_of(lay), compile_expander(lay).expand
    return per[key]


def _initial_states(enc: Encoding, params: dict[str, int]) -> list[tuple[int, ...]]:
    bound_z3()
    s = z3.Solver()
    s.set("rlimit", 5 * UNITS_PER_SECOND)
    s.add(enc.init(enc.cur), *(enc.params[k] == v for k, v in params.items()))
    out: list[tuple[int, ...]] = []
    while len(out) < INITIAL_STATES and s.check() == z3.sat:
        m = s.model()
        state = tuple(m.eval(x, model_completion=True).as_long() for x in enc.cur.slots)
        out.append(state)
        s.add(z3.Or(*(x != v for x, v in zip(enc.cur.slots, state))))
    return out


# ---------------------------------------------------------------- Houdini

def houdini(enc: Encoding, support: Term, lemmas: list, effort: Effort,
            purpose: str = "the ranking search", narrowed: list | None = None) -> list | str:
    """The largest subset of `lemmas` (clauses, or objects with `term(xs)` and `holds(values)`)
    that holds initially and is preserved by every action from the states where `support` and
    every lemma left hold; or why the solver could not finish (`purpose` names what it was for).
    Each state the solver finds that satisfies them all is also expanded concretely (a concrete
    model, no free parameter): every successor breaks lemmas too, at no solver cost. When it
    cannot finish, `narrowed` (if given) is set to the lemmas not yet dropped: what is dropped
    is in no inductive subset, so a later run may start from them."""
    alive = _drop_broken(_solver(enc.init(enc.cur)), lemmas, enc.cur.slots, [], effort, purpose,
                         narrowed=narrowed)
    if isinstance(alive, str):
        return alive
    step = _solver(conj(support, enc.relation, enc.ranges(enc.nxt)))
    marks = [z3.Bool(f"houdini!{k}") for k in range(len(alive))]
    step.add(*(z3.Implies(m, lemma_term(c, enc.cur.slots)) for m, c in zip(marks, alive)))
    return _drop_broken(step, alive, enc.nxt.slots, marks, effort, purpose,
                        None if enc.free else (enc.cur.slots, _successors(enc)), narrowed)


def _successors(enc: Encoding):
    """The concrete successors of a state of a concrete model (none where the model errs)."""
    lay = layout(enc.model)
    packing = packing_of(lay)
    expand = compile_expander(lay).expand

    def successors(values: list[int]) -> list[tuple[int, ...]]:
        try:
            return [packing.unpack(t) for _a, _c, t, _gap in expand(packing.pack(tuple(values))) if t is not None]
        except (EvalError, ValueError, OverflowError):
            return []

    return successors


def lemma_term(lemma, xs) -> Term:
    """A clause's or another lemma's term over the slot terms `xs`."""
    return clause_term(lemma, xs) if isinstance(lemma, tuple) else lemma.term(xs)


def _broken(lemma, values) -> bool:
    return excluded(lemma, values) if isinstance(lemma, tuple) else not lemma.holds(values)


def _solver(fact: Term) -> z3.Solver:
    bound_z3()
    s = z3.Solver()
    s.add(fact)
    return s


def _drop_broken(s: z3.Solver, lemmas: list, at, marks: list[Term], effort: Effort, purpose: str,
                 successors: tuple | None = None, narrowed: list | None = None) -> list | str:
    """The lemmas that no model of `s` breaks in the state `at`, found by asking for a broken one
    until none is left. With `marks` (one per lemma), the marks of the lemmas left are assumed:
    Houdini's consecution, when `s` implies each lemma in the source state under its mark; then
    `successors` (if given: the source state's slots and a function listing a state's concrete
    successors) adds the source state's successors, each of which breaks lemmas as the model's
    own target state does. Each round's "some lemma left is broken" is asserted under an assumption
    of its own, not between push and pop, which keeps Z3 in its faster mode (WTactics' 288 mined
    candidates: 84 rounds in 0.72 s of CPU, then 59 in 0.50 s); which lemmas are left at the end does
    not depend on the states Z3 picks (the largest inductive subset is one set)."""
    broken = {c: negate(lemma_term(c, at)) for c in lemmas}
    mark = dict(zip(lemmas, marks))
    alive = list(lemmas)
    rounds = itertools.count()
    while alive:
        if effort.expired():
            if narrowed is not None:
                narrowed[:] = alive
            return f"the Z3 resource units (rlimit) for this claim ran out while proving invariants for {purpose}"
        s.set("rlimit", effort.rlimit(cap=CHECK_CAP))
        asked = z3.Bool(f"houdini-round!{next(rounds)}")
        s.add(z3.Implies(asked, _any([broken[c] for c in alive])))
        r = _check(s, [asked, *(mark[c] for c in alive if c in mark)])
        states = []
        if r == z3.sat:
            m = s.model()
            states.append([m.eval(x, model_completion=True).as_long() for x in at])
            if successors is not None:
                source, expand = successors
                states += expand([m.eval(x, model_completion=True).as_long() for x in source])
        if r == z3.unknown:
            if narrowed is not None:
                narrowed[:] = alive
            return ("the Z3 resource units (rlimit) for this claim ran out while proving invariants for " if effort.expired()
                    else "Z3 could not decide an invariant candidate for ") + purpose
        if r == z3.unsat:
            break
        alive = [c for c in alive if not any(_broken(c, values) for values in states)]
    return alive


def _any(terms: list[Term]) -> Term:
    """The disjunction of Boolean terms, built at once (z3.Or casts each one: Houdini's
    disjunction of hundreds of broken lemmas, once per round)."""
    ctx = terms[0].ctx
    return z3.BoolRef(z3.Z3_mk_or(ctx.ref(), len(terms), (z3.Ast * len(terms))(*(t.as_ast() for t in terms))), ctx)


def _check(s: z3.Solver, assumptions: list[Term]) -> z3.CheckSatResult:
    """`s.check(*assumptions)` without casting each Boolean assumption again."""
    arr = (z3.Ast * len(assumptions))(*(a.as_ast() for a in assumptions))
    return z3.CheckSatResult(z3.Z3_solver_check_assumptions(s.ctx.ref(), s.solver, len(assumptions), arr))


def recheck(enc: Encoding, support: Term, invariant: Term, effort: Effort,
            purpose: str = "the ranking search") -> str:
    """"" when `invariant` holds initially and every action preserves it from the states where
    it and `support` hold (fresh solvers), else what fails."""
    checks = (("does not hold initially", conj(enc.init(enc.cur), negate(invariant))),
              ("is not preserved by every action", z3.And(support, invariant, enc.relation, enc.ranges(enc.nxt),
                                                           z3.Not(enc.rename(invariant, enc.cur, enc.nxt)))))
    for what, query in checks:
        s = _solver(query)
        s.set("rlimit", effort.rlimit(cap=CHECK_CAP))
        r = s.check()
        if r == z3.sat:
            return f"internal: an invariant of {purpose} {what}"
        if r == z3.unknown:
            return f"the Z3 resource units (rlimit) for this claim ran out while re-checking the invariants of {purpose}" \
                if effort.expired() else f"Z3 could not re-check an invariant of {purpose} ({what})"
    return ""
