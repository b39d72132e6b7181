"""Linear (lexicographic) ranking functions, synthesised with Z3.

Template: ``f(s) = c . s + e . p + d`` over every slot `s` of the state and every
free parameter `p`, with integer coefficients. A *component* is such an f and
a set S of actions such that, for every transition s -> s' that stays in the
region (both ends in it) and whose source satisfies the supplied invariant:

    action in S:                  f(s) >= 0  and  f(s') <= f(s) - 1
    other actions still in play:  f(s') <= f(s)

Components are found one after another, each removing its S from play, until
no action is left (a lexicographic ranking function: no infinite run stays in
the region) or no component with a non-empty S exists in the template (then
nothing is claimed). Each component is found by counterexample-guided
synthesis: an optimiser picks coefficients (most strict actions first, then
the smallest coefficients) that fit the transitions seen so far; a solver
checks the candidate against the full transition relation of each action and
returns a violating transition as a new sample. Checking is exact, so a
component that passes is a proof; the template and the iteration cap only
limit what can be found.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import z3

from verifier.engines.memory import bound_z3
from verifier.engines.symbolic.core import Deadline
from verifier.engines.symbolic.encode import Encoding, Term, conj
from verifier.engines.symbolic.render import Renderer

COEFF_MAX = 16          # |coefficient| bound of the template
ROUNDS = 80             # counterexample rounds per component
TIMEOUT = "the time for this claim ran out while searching for a ranking function"
REFINEMENTS = 6         # rounds of strengthening the support with invariants


@dataclass
class Component:
    coeffs: list[int]           # per slot, then per free parameter
    constant: int
    strict: list[int]           # actions that strictly decrease it
    kept: list[int]             # actions that do not increase it
    text: str                   # the function in model terms


@dataclass
class Ranking:
    components: list[Component] | None
    reason: str

    def describe(self, enc: Encoding, scope_words: str) -> str:
        assert self.components is not None
        names = lambda acts: ", ".join(enc.model.actions[a].name for a in acts)  # noqa: E731
        if not self.components:
            return f"no transition stays within {scope_words}"
        if len(self.components) == 1 and not self.components[0].kept:
            c = self.components[0]
            return f"{c.text} decreases on every transition within {scope_words} and stays >= 0"
        parts = []
        for i, c in enumerate(self.components):
            head = "first" if i == 0 else "then"
            kept = f"; never increases on {names(c.kept)}" if c.kept else ""
            parts.append(f"{head} {c.text} decreases on {names(c.strict)}{kept}")
        return "lexicographic: " + "; ".join(parts)


Refine = Callable[[list[int]], "Term | None"]


def synthesize(enc: Encoding, actions: list[int], region: Term, support: Term, deadline: Deadline,
               refine: Refine | None = None, max_refinements: int = REFINEMENTS) -> Ranking:
    """A lexicographic linear ranking function for the `actions` within `region` (over `enc.cur`),
    for source states satisfying `support` (over `enc.cur`: ranges, known invariants).

    When no function fits, the transitions that defeated the template may start in unreachable
    states: `refine(values)` (values of the slots, then of the free parameters) returns an
    invariant excluding such a state, or None when it is reachable (or unknown); the search is
    then repeated within the strengthened support."""
    notes: list[str] = []
    for _ in range(max_refinements + 1):
        ranking, failure = _synthesize(enc, actions, region, support, deadline)
        if ranking.components is not None or failure is None or refine is None:
            if notes and ranking.components is not None:
                ranking.reason = "; ".join(notes)
            return ranking
        learned = []
        for values in failure[:3]:
            if deadline.expired():
                break
            inv = refine(values)
            if inv is not None:
                learned.append(inv)
        if not learned:
            return ranking
        notes.append(f"strengthened by {len(learned)} invariant(s) excluding unreachable states")
        support = conj(support, *learned)
    return ranking


def _synthesize(enc, actions, region, support, deadline) -> tuple[Ranking, list[list[int]] | None]:
    cur_x = list(enc.cur.slots) + list(enc.params.values())
    nxt_x = list(enc.nxt.slots) + list(enc.params.values())
    region_next = enc.rename(region, enc.cur, enc.nxt)
    relations = {a: conj(support, region, region_next, enc.action_relation(a)) for a in actions}
    feasible = []
    for a in actions:   # actions that never fire within the region need no rank
        bound_z3()
        s = z3.Solver()
        s.set("timeout", deadline.ms(cap=30.0))
        s.add(relations[a])
        r = s.check()
        if r == z3.unknown:
            return Ranking(None, TIMEOUT if deadline.expired() else
                           f"Z3 returned unknown on the transitions of {enc.model.actions[a].name}"), None
        if r == z3.sat:
            feasible.append(a)
    remaining = feasible
    components: list[Component] = []
    renderer = Renderer(enc)
    labels = [s.name for s in enc.slots] + list(enc.params)
    while remaining:
        if deadline.expired():
            return Ranking(None, TIMEOUT), None
        comp = _component(enc, remaining, relations, cur_x, nxt_x, deadline)
        if isinstance(comp, str):
            return Ranking(None, comp), None
        if isinstance(comp, _Failure):
            return Ranking(None, comp.reason), comp.sources
        coeffs, constant, strict = comp
        text = renderer.linear(list(zip(coeffs, labels)), constant)
        kept = [a for a in remaining if a not in strict]
        components.append(Component(coeffs, constant, strict, kept, text))
        remaining = kept
    return Ranking(components, ""), None


@dataclass
class _Failure:
    reason: str
    sources: list[list[int]]      # source states of the transitions that defeated the template, newest first


def _component(enc, remaining, relations, cur_x, nxt_x, deadline):
    n = len(cur_x)
    c = [z3.Int(f"rank!c{i}") for i in range(n)]
    d = z3.Int("rank!d")
    b = {a: z3.Bool(f"rank!b{a}") for a in remaining}
    samples: list[tuple[int, list[int], list[int]]] = []
    fitted: list[z3.BoolRef] = []      # what the samples ask of the coefficients, built once each
    bounds = [z3.And(ci >= -COEFF_MAX, ci <= COEFF_MAX) for ci in c]
    strict_count = z3.Sum(*[z3.If(v, 1, 0) for v in b.values()])
    size = z3.Sum(*[z3.If(ci >= 0, ci, -ci) for ci in c]) if n else z3.IntVal(0)
    for _ in range(ROUNDS):
        if deadline.expired():
            return TIMEOUT
        bound_z3()
        opt = z3.Optimize()
        opt.set("timeout", deadline.ms(cap=30.0))
        opt.add(*bounds, z3.Or(*b.values()), *fitted)
        opt.maximize(strict_count)
        opt.minimize(size)
        opt.minimize(z3.If(d >= 0, d, -d))
        r = opt.check()
        if r == z3.unsat:
            return _Failure("no linear ranking function exists in the template (coefficients within "
                            f"+-{COEFF_MAX}) for {', '.join(enc.model.actions[a].name for a in remaining)}",
                            [xs for _, xs, _ in reversed(samples)])
        if r != z3.sat:
            return TIMEOUT if deadline.expired() else "Z3 gave up while choosing ranking coefficients"
        m = opt.model()
        coeffs = [m.eval(ci, model_completion=True).as_long() for ci in c]
        constant = m.eval(d, model_completion=True).as_long()
        strict = [a for a in remaining if z3.is_true(m.eval(b[a], model_completion=True))]
        f_cur = z3.Sum(*[k * x for k, x in zip(coeffs, cur_x) if k]) + constant if any(coeffs) else z3.IntVal(constant)
        f_nxt = z3.Sum(*[k * x for k, x in zip(coeffs, nxt_x) if k]) + constant if any(coeffs) else z3.IntVal(constant)
        new = []
        for a in remaining:
            want = conj(f_cur - f_nxt >= 1, f_cur >= 0) if a in strict else f_cur - f_nxt >= 0
            bound_z3()
            s = z3.Solver()
            s.set("timeout", deadline.ms(cap=30.0))
            s.add(relations[a], z3.Not(want))
            r = s.check()
            if r == z3.unknown:
                return TIMEOUT if deadline.expired() else \
                    f"Z3 returned unknown checking a ranking candidate on {enc.model.actions[a].name}"
            if r == z3.sat:
                mm = s.model()
                new.append((a, [mm.eval(x, model_completion=True).as_long() for x in cur_x],
                            [mm.eval(y, model_completion=True).as_long() for y in nxt_x]))
        if not new:
            return coeffs, constant, strict
        samples.extend(new)
        fitted.extend(_fits(c, d, b[a], xs, ys) for a, xs, ys in new)
    return f"no ranking function found within {ROUNDS} refinement rounds"


def _fits(c: list, d, strict, xs: list[int], ys: list[int]) -> z3.BoolRef:
    """The candidate f = c . x + d does not increase from `xs` to `ys`, decreases when `strict`
    and then starts >= 0 (only the slots the transition changes enter the difference)."""
    drop = z3.Sum(*[ci * (x - y) for ci, x, y in zip(c, xs, ys) if x != y], z3.IntVal(0))
    start = z3.Sum(*[ci * x for ci, x in zip(c, xs) if x], d)
    return z3.And(drop >= z3.If(strict, 1, 0), z3.Implies(strict, start >= 0))
