"""A monitored claim proved on its product by lemmas that tie the monitor to the game.

An ordering or bounded-response claim reaches Z3 as the invariant "the monitor's
error flag stays false" on a product model (`props/monitor.py`). That invariant is
rarely inductive on its own: a state where the monitor is open, has not seen what it
waits for, and the game already did it, breaks it in one step, though no run reaches
it. Such states are excluded by short clauses over the monitor's and the game's
variables, for instance "in the Start phase, an open monitor that has not seen the SE
gain means the SE is not given yet" (three literals), or "an open monitor means Free
mode" (two).

The proof is Houdini driven by counterexamples to induction (CTIs):

1. Houdini (`strengthen`) keeps the candidate clauses that hold initially and are
   preserved by every action from every state where the claim and every candidate
   left hold.
2. If the claim is then preserved from the states where it and those clauses hold,
   their conjunction with the claim is an inductive invariant: `strengthen.recheck`
   proves that again with fresh solvers, and the claim holds.
3. Otherwise the solver's state that breaks the claim in one step (a CTI) gives new
   candidates: the clauses over the literals it satisfies (one or two literals, or
   three with at least one over a monitor variable), so each excludes it. Those that
   a state of seeded random runs of the product breaks are dropped first; the rest
   join the pool and Houdini runs again.

A CTI no new candidate excludes, or the rounds or the time running out, leaves the
claim open (the caller goes on with k-induction, PDR and BMC). Nothing but the final
check by fresh solvers makes a claim hold, so the candidates and the random runs only
decide how often a proof is found.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import z3

from verifier.engines.symbolic import strengthen
from verifier.engines.symbolic.core import Effort
from verifier.engines.symbolic.encode import Encoding, Term, conj, negate, numeral
from verifier.engines.symbolic.strengthen import Clause, Literal, clause_term, excluded
from verifier.engines.symbolic.units import UNITS_PER_SECOND
from verifier.ir.model import BoolType, EnumType
from verifier.resources.memory import bound_z3

ROUNDS = 12             # rounds of CTIs turned into candidates, at most
CTIS = 4                # CTIs per round, at most
CANDIDATES = 20_000     # candidates kept from one CTI, at most (the shortest first)
CHECK_CAP = 30 * UNITS_PER_SECOND   # Z3 resource units at most per solver call
PURPOSE = "the lemmas of a monitored claim"


@dataclass
class Proof:
    lemmas: list[Clause]     # with the claim, an inductive invariant (re-checked)
    rounds: int              # rounds of CTIs it took

    def term(self, enc: Encoding) -> Term:
        return conj(*(clause_term(c, enc.cur.slots) for c in self.lemmas))


def prove(enc: Encoding, bad: Term, focus: set[int], effort: Effort, most: int = ROUNDS) -> Proof | str:
    """Show that no reachable state of `enc` satisfies `bad` with lemmas whose third
    literal, if any, is over a `focus` slot (the monitor's), in `most` rounds of CTIs at most
    (0: the claim inductive as it stands); or why not."""
    support = conj(enc.param_constraints(), enc.ranges(enc.cur))
    good = negate(bad)
    base = _solver(conj(enc.init(enc.cur), bad))
    base.set("rlimit", effort.rlimit(cap=CHECK_CAP))
    r = base.check()
    if r != z3.unsat:
        return "an initial state breaks the claim" if r == z3.sat else "Z3 could not decide the initial states"
    states: np.ndarray | None = None     # the random runs' states, made at the first CTI (none where the claim
    pool: list[Clause] = []              # is inductive as it stands)
    seen: set[Clause] = set()
    last: list[list[int]] = []
    for rounds in range(most + 1):
        alive = strengthen.houdini(enc, conj(support, good), pool, effort, PURPOSE) if pool else []
        if isinstance(alive, str):
            return alive
        lemmas = conj(*(clause_term(c, enc.cur.slots) for c in alive))
        here = conj(support, good, lemmas)
        ctis = _breaking_states(enc, here, bad, effort)
        if isinstance(ctis, str):
            return ctis
        if not ctis:
            why = strengthen.recheck(enc, support, conj(good, lemmas), effort, PURPOSE)
            return why if why else Proof(alive, rounds)
        if rounds == most:
            break
        kept = set(alive)
        for lost in _wanted([c for c in pool if c not in kept], last):
            more = _breaking_states(enc, conj(here, clause_term(lost, enc.cur.slots)),
                                    negate(clause_term(lost, enc.cur.slots)), effort, 1)
            if isinstance(more, str):
                return more
            ctis += more
        last = ctis
        states = _run_states(enc) if states is None else states
        fresh = list(dict.fromkeys(c for cti in ctis for c in _candidates(enc, cti, focus, states)
                                   if c not in seen))
        if not fresh:
            return "a state that breaks the claim in one step is excluded by no short clause " \
                   "that the random runs leave standing"
        seen.update(fresh)
        pool = alive + fresh
    return f"still not inductive after {most} rounds of lemmas"


def _solver(fact: Term) -> z3.Solver:
    bound_z3()
    s = z3.Solver()
    s.add(fact)
    return s


def _breaking_states(enc: Encoding, here: Term, bad: Term, effort: Effort,
                     most: int = 0) -> list[list[int]] | str:
    """Up to CTIS states satisfying `here` with a step to a `bad` state (none: `here` is
    preserved... as far as `bad` goes)."""
    s = _solver(z3.And(here, enc.relation, enc.ranges(enc.nxt), enc.rename(bad, enc.cur, enc.nxt)))
    out: list[list[int]] = []
    while len(out) < (most or CTIS):
        if effort.expired():
            return "the Z3 resource units (rlimit) for this claim ran out while strengthening it with lemmas"
        s.set("rlimit", effort.rlimit(cap=CHECK_CAP))
        r = s.check()
        if r == z3.unsat:
            break
        if r == z3.unknown:
            if out:
                break
            return "the Z3 units (rlimit) for this claim ran out while strengthening it with lemmas" if effort.expired() \
                else "Z3 could not decide a step of the strengthened claim"
        m = s.model()
        values = [m.eval(x, model_completion=True).as_long() for x in enc.cur.slots]
        out.append(values)
        s.add(z3.Or(*(x != v for x, v in zip(enc.cur.slots, values))))
    return out


def _wanted(lost: list[Clause], last: list[list[int]]) -> list[Clause]:
    """The lemmas Houdini dropped whose own CTIs come next: those excluding a CTI of the last
    round (the chain from the claim to what it needs), the shortest first, CTIS at most."""
    useful = [c for c in lost if any(excluded(c, values) for values in last)]
    return sorted(useful, key=len)[:CTIS]


def _run_states(enc: Encoding) -> np.ndarray:
    """States of seeded random runs of the (concrete) product, one row each."""
    found = set() if enc.free else strengthen.random_states(enc, {})
    if not found:
        return np.zeros((0, len(enc.slots)), dtype=np.int64)
    return np.array(sorted(found), dtype=np.int64)


def _candidates(enc: Encoding, cti: list[int], focus: set[int], states: np.ndarray) -> list[Clause]:
    """Clauses false in `cti` that no run state breaks: one or two literals, or three with one
    over a focus slot."""
    lits = _literals(enc, cti)
    if len(states):
        truth = np.stack([lit.column(states) for lit in lits], axis=1)
    else:
        truth = np.zeros((0, len(lits)), dtype=bool)
    t = truth.astype(np.float32)
    once = t.sum(axis=0)
    twice = t.T @ t
    out: list[Clause] = [(a,) for k, a in enumerate(lits) if once[k] == 0]
    out += [(lits[i], lits[j]) for i, j in combinations(range(len(lits)), 2)
            if lits[i].slot != lits[j].slot and twice[i, j] == 0 and once[i] and once[j]]
    for m, lit in enumerate(lits):
        if lit.slot not in focus or once[m] == 0:
            continue
        rows = t[truth[:, m]]
        thrice = rows.T @ rows
        for i, j in combinations(range(len(lits)), 2):
            if len({lit.slot, lits[i].slot, lits[j].slot}) < 3 or thrice[i, j] or not twice[m, i] or \
                    not twice[m, j] or not twice[i, j]:
                continue
            out.append(_ordered((lit, lits[i], lits[j])))
        if len(out) >= CANDIDATES:
            break
    return out[:CANDIDATES]


def _literals(enc: Encoding, values: list[int]) -> list[Literal]:
    """The literals a state satisfies, per slot: `x == v` for booleans and enums; `x <= v`,
    `x >= v` and `x >= lo + 1` for integers, and for enums too (phases are in turn order:
    "past the Start phase" is one literal)."""
    out = []
    for i, (slot, v, (lo, hi)) in enumerate(zip(enc.slots, values, enc.slot_bounds)):
        if isinstance(slot.type, BoolType):
            out.append(Literal(i, "==", v))
            continue
        if isinstance(slot.type, EnumType):      # every threshold: "past the Draw phase", "before End"
            top = len(slot.type.values) - 1           # at the ends, a threshold is an equality
            out.append(Literal(i, "==", v))
            out += [Literal(i, ">=", w) for w in range(1, min(v, top - 1) + 1)]
            out += [Literal(i, "<=", w) for w in range(max(v, 1), top)]
        else:
            out += _ordered_literals(i, v, numeral(lo), numeral(hi))
    return out


def _ordered_literals(slot: int, v: int, low: int | None, high: int | None) -> list[Literal]:
    """`strengthen.integer_literals`, and `x <= high - 1`."""
    out = strengthen.integer_literals(slot, v, low, high)
    if high is not None and v < high - 1:
        out.append(Literal(slot, "<=", high - 1))
    return out


def _ordered(clause: tuple[Literal, ...]) -> Clause:
    return tuple(sorted(clause, key=lambda lit: (lit.slot, lit.op, lit.value)))


def describe(enc: Encoding, clause: Clause) -> str:
    """A clause in the model's words: not (hand[0] >= 3 and phase == Draw)."""
    return "not (" + " and ".join(f"{enc.slots[lit.slot].name} {lit.op} {lit.value}" for lit in clause) + ")"


