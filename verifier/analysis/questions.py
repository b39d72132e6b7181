"""The analyses' open questions, as Z3 state predicates over `Encoding.cur`.

Where the explicit search stopped short of the whole state space, every
candidate finding its scan has not settled is a reachability question "is
there a reachable state where P holds?":

- dead-rule: an action fires, or is blocked by a gap (then it is not dead:
  the gap finding says why); a leaf phase is entered. Unreachable: the rule
  or phase is dead.
- deadlock (per leaf phase, or ``play``): not over, no action fires, no
  firing is blocked by a gap.
- gap ``variable|action``: the action's guard holds and the first of its
  effects to leave its range writes the variable, which has no policy.
- conflict ``M|P``: the must M fires and the prohibition P's guard holds; ``M1|M2``:
  both musts fire, and every firing of either that does not end the game
  leaves the other without a firing (choice domains must be enumerable).
- nondeterministic-must: two choices of the must fire to different states.
- order-dependence: the pair's Z3 query (`order_dependence.Commutation`)
  in a reachable state.

Each target matches the explicit condition or over-approximates it (model
run-time errors are not excluded), so "unreachable" holds for the explicit
analysis too; a state that meets a target counts only once the explicit
visitors, handed that state, record the finding (`Question.settled`).
Choice values are existential: enumerated where the domain is small, else
free symbols (Z3 picks them).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import z3

from verifier.analysis.conflicts import Conflicts
from verifier.analysis.dead_rules import DeadRules
from verifier.analysis.deadlock import Deadlocks
from verifier.analysis.gaps import Gaps
from verifier.analysis.nondeterministic_must import NondeterministicMust
from verifier.analysis.order_dependence import Commutation, OrderDependence
from verifier.engines.symbolic.encode import FALSE, Encoding, Env, Term, as_int, conj, disj, implies, negate
from verifier.ir.expr import Expr
from verifier.ir.model import PHASE_VAR, ActionKind, EnumType, Modality, Overflow, in_phase


@dataclass
class Question:
    kind: str                       # the finding kind it decides
    subject: str                    # the finding's subject
    target: Term                    # over enc.cur; choice symbols existential
    settled: Callable[[], bool]     # the explicit visitors recorded it on a visited state
    answer: str = ""                # "reachable" | "unreachable" | "" (undecided)
    method: str = ""                # what decided it
    reason: str = ""                # why it is undecided

    def __getstate__(self) -> dict:
        """Pickled without the Z3 term and the visitors' hook (a reading analysed in another process)."""
        return {**self.__dict__, "target": None, "settled": _never}

    def words(self) -> str:
        return f"{self.kind} {self.subject}"


class Targets:
    """The encoding of one model and the per-action terms the questions share."""

    def __init__(self, enc: Encoding):
        self.enc = enc
        self.cur = enc.cur
        self._fires: dict[int, Term] = {}
        self._gaps: dict[int, dict[str, Term]] = {}

    def fires(self, a: int) -> Term:
        if a not in self._fires:
            self._fires[a] = self.enc.can_fire(a, self.cur)
        return self._fires[a]

    def gaps(self, a: int) -> dict[str, Term]:
        """Variable -> some choice makes the first out-of-range effect of `a` write it (no policy)."""
        if a not in self._gaps:
            enc = self.enc
            out: dict[str, Term] = {}
            for var in self._gap_vars(a):
                out[var] = enc.exists_choice(a, self.cur, partial(self._gap_of, a, var))
            self._gaps[a] = out
        return self._gaps[a]

    def any_gap(self, a: int) -> Term:
        return disj(*self.gaps(a).values())

    def _gap_vars(self, a: int) -> list[str]:
        enc = self.enc
        out = []
        for eff in enc.model.actions[a].effects:
            var = enc.variables[eff.target.name]
            if var.overflow not in (Overflow.CLAMP, Overflow.FORBID) and var.name not in out:
                out.append(var.name)
        return out

    def _gap_of(self, a: int, var: str, env: Env) -> Term:
        return self._gap(a, env).get(var, FALSE)

    def _gap(self, a: int, env: Env) -> dict[str, Term]:
        """Per unspecified variable: the guard holds (game not over, choices in range) and the
        first effect of `a` that leaves its range writes it."""
        enc, st = self.enc, self.cur
        action = enc.model.actions[a]
        inside, _ = enc.choice_ranges(a, st, env)
        live = conj(negate(enc.end), inside, enc.predicate(action.guard, st, env))
        prefix: list[Term] = []
        out: dict[str, list[Term]] = {}
        for eff in action.effects:
            value, _d = enc.encode(eff.value, st, env)
            var = enc.variables[eff.target.name]
            if var.overflow is Overflow.CLAMP:
                continue
            lo, hi = enc.bounds(var.type)
            ok = conj(lo <= as_int(value), as_int(value) <= hi)
            if var.overflow is not Overflow.FORBID:
                out.setdefault(var.name, []).append(conj(live, *prefix, negate(ok)))
            prefix.append(ok)
        return {k: disj(*v) for k, v in out.items()}

    def successor(self, a: int, env: Env) -> tuple[Term, Term]:
        """(a fires with these choices, its successor's slot terms as a substitution list)."""
        new, _ok, _d = self.enc.effects(a, self.cur, env)
        return self.enc.enabled(a, self.cur, env), [(x, y) for x, y in zip(self.cur.slots, new) if y is not x]


def _never() -> bool:
    return False


def member(*where: Any) -> Callable[[], bool]:
    """`member(c1, key)`: key in c1 now; `member(c1, key, c2)`: key in c1 or in c2."""
    key = where[1]
    places = (where[0],) + where[2:]
    return lambda: any(key in c for c in places)


def _holds(enc: Encoding, guard: Expr, env: Env) -> Term:
    return conj(enc.defined(guard, enc.cur, env), enc.predicate(guard, enc.cur, env))


def after(term: Term, subst: list) -> Term:
    return z3.substitute(term, *subst) if subst else term


def questions(enc: Encoding, visitors: dict[type, Any]) -> tuple[list[Question], list[str]]:
    """The open questions of the visitors' scan, and the candidates that cannot be asked (why)."""
    t = Targets(enc)
    model = enc.model
    out: list[Question] = []
    cannot: list[str] = []
    dead = visitors.get(DeadRules)
    if isinstance(dead, DeadRules):
        out += _dead(t, dead)
    stuck = visitors.get(Deadlocks)
    if isinstance(stuck, Deadlocks):
        out += _deadlocks(t, stuck)
    gaps = visitors.get(Gaps)
    if isinstance(gaps, Gaps):
        for a in enc.actions:
            for var, term in t.gaps(a).items():
                if (a, var) not in gaps.first and not z3.is_false(term):
                    out.append(Question("gap", f"{var}|{model.actions[a].name}", term, member(gaps.first, (a, var))))
    conflicts = visitors.get(Conflicts)
    if isinstance(conflicts, Conflicts):
        qs, why = _conflicts(t, conflicts)
        out += qs
        cannot += why
    nondet = visitors.get(NondeterministicMust)
    if isinstance(nondet, NondeterministicMust):
        for a in sorted(nondet.watched):
            if a in nondet.first:
                continue
            e1, e2 = enc.choices(a, "n1"), enc.choices(a, "n2")
            f1, s1 = t.successor(a, e1)
            f2, s2 = t.successor(a, e2)
            differ = disj(*(after(x, s1) != after(x, s2) for x in t.cur.slots))
            out.append(Question("nondeterministic-must", model.actions[a].name, conj(f1, f2, differ),
                                member(nondet.first, a)))
    order = visitors.get(OrderDependence)
    if isinstance(order, OrderDependence):
        commutation = Commutation(enc)
        for (a, b) in order.witness:
            if (a, b) in order.confirmed:
                continue
            x, y = model.actions[a], model.actions[b]
            out.append(Question("order-dependence", f"{x.name}|{y.name}", commutation.noncommuting(a, b),
                                member(order.confirmed, (a, b))))
    return out, cannot


def _dead(t: Targets, v: DeadRules) -> list[Question]:
    enc = t.enc
    model = enc.model
    out = []
    if v.phase_slot is not None:
        enum = model.var(PHASE_VAR).type
        assert isinstance(enum, EnumType), "the phase variable is an enum of the leaf phases"
        for k, name in enumerate(enum.values):
            if k not in v.phases:
                out.append(Question("dead-rule", name, enc.predicate(in_phase(model, name), t.cur),
                                    member(v.phases, k)))
    for a in enc.actions:
        action = model.actions[a]
        if action.kind is not ActionKind.RULE or action.modality is Modality.MUST_NOT:
            continue
        if a in v.fired or a in v.gapped:
            continue
        out.append(Question("dead-rule", action.name, disj(t.fires(a), t.any_gap(a)),
                            member(v.fired, a, v.gapped)))
    return out


def _deadlocks(t: Targets, v: Deadlocks) -> list[Question]:
    enc = t.enc
    model = enc.model
    none = conj(negate(enc.end), *(negate(t.fires(a)) for a in enc.actions),
                *(negate(t.any_gap(a)) for a in enc.actions))
    if PHASE_VAR not in enc.offsets:
        return [] if "play" in v.first else [Question("deadlock", "play", none, member(v.first, "play"))]
    enum = model.var(PHASE_VAR).type
    assert isinstance(enum, EnumType), "the phase variable is an enum of the leaf phases"
    return [Question("deadlock", name, conj(enc.predicate(in_phase(model, name), t.cur), none),
                     member(v.first, name))
            for name in enum.values if name not in v.first]


def _conflicts(t: Targets, v: Conflicts) -> tuple[list[Question], list[str]]:
    enc = t.enc
    model = enc.model
    out: list[Question] = []
    cannot: list[str] = []
    for m in sorted(v.musts):
        for p in v.banned_by[m]:
            if (m, p) in v.prohibited:
                continue
            ban = model.actions[p]
            applies = enc.exists_choice(p, t.cur, partial(_holds, enc, ban.guard))
            out.append(Question("conflict", f"{model.actions[m].name}|{ban.name}", conj(t.fires(m), applies),
                                member(v.prohibited, (m, p))))
    musts = sorted(v.musts)
    for x in range(len(musts)):
        for y in range(x + 1, len(musts)):
            m1, m2 = musts[x], musts[y]
            if (m1, m2) in v.exclusive:
                continue
            subject = f"{model.actions[m1].name}|{model.actions[m2].name}"
            one, two = _excludes(t, m1, m2), _excludes(t, m2, m1)
            if one is None or two is None:
                cannot.append(f"conflict {subject} (a choice domain too large or not constant to enumerate)")
                continue
            out.append(Question("conflict", subject, conj(t.fires(m1), t.fires(m2), one, two),
                                member(v.exclusive, (m1, m2))))
    return out, cannot


def _excludes(t: Targets, m: int, other: int) -> Term | None:
    """Every firing of `m` that does not end the game leaves `other` no firing, and one exists."""
    enc = t.enc
    domain = enc.choice_domain(m, t.cur)
    if domain is None:
        return None
    every, some = [], []
    for env in domain:
        fires, subst = t.successor(m, env)
        live = conj(fires, negate(after(enc.end, subst)))
        every.append(implies(live, negate(after(t.fires(other), subst))))
        some.append(live)
    return conj(*every, disj(*some))
