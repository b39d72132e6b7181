"""Linear (lexicographic) ranking functions, synthesised with Z3.

Template: ``f(s) = c . s + e . p + d`` over every slot `s` of the state and every
free parameter `p`, with integer coefficients. A *component* (a layer) is such
an f and a set S of actions such that, for every transition s -> s' that stays
in the region (both ends in it) and whose source satisfies the supplied
invariant:

    action in S:                  f(s) >= 0  and  f(s') <= f(s) - 1
    other actions still in play:  f(s') <= f(s)

Layers are found one after another, each removing its S from play, until no
action is left (a lexicographic ranking function: no infinite run stays in the
region) or no layer with a non-empty S exists (then nothing is claimed): the
layered method of multi-dimensional ranking functions (Alias, Darte, Feautrier
and Gonnord; Bradley, Manna and Sipma). Each layer is one linear programme
over rational coefficients, made exact by counterexample-guided sampling
(`layer.py`): the programme fits the transitions seen so far, maximising how
many actions decrease; a solver checks the candidate against each action's
full transition relation and returns a violating transition as a new sample.
`verify` re-checks every layer of the result with fresh solvers before it is
returned, so a ranking that comes back is a proof; the linear template and the
round cap only limit what can be found.
"""
from __future__ import annotations

from dataclasses import dataclass

import z3

from verifier.engines.symbolic.blocking import Change, Prove, unreachable_changes
from verifier.engines.symbolic.core import Effort
from verifier.engines.symbolic.encode import Encoding, Term, conj
from verifier.engines.symbolic.layer import TIMEOUT, Failure, Transitions, find_layer, linear
from verifier.engines.symbolic.render import Renderer
from verifier.engines.symbolic.seen import Seen
from verifier.engines.symbolic.strengthen import exclude, recheck

__all__ = ["TIMEOUT", "Component", "Ranking", "synthesize"]

REFINEMENTS = 6         # rounds of strengthening the support with invariants


@dataclass
class Component:
    coeffs: list[int]           # per slot, then per free parameter, then per guard term (`_Search.add_guards`)
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


def synthesize(enc: Encoding, actions: list[int], region: Term, support: Term, effort: Effort,
               prove: Prove | None = None, max_refinements: int = REFINEMENTS, seen: Seen | None = None) -> Ranking:
    """A lexicographic linear ranking function for the `actions` within `region` (over `enc.cur`),
    for source states satisfying `support` (over `enc.cur`, true in every reachable state:
    ranges, known invariants).

    When a layer cannot be found, the transitions that defeated the template may start in
    unreachable states. Invariants excluding them are proved (Houdini over short clauses,
    `strengthen.py`; where it finds none, `prove`, PDR on the transitions of an action that
    change a few slots as a blocking one does and no known reachable move does, `blocking.py`;
    `seen`: the reachable states both filter by, by default random runs' only), and the search
    goes on from that layer within the strengthened support. The layers found so far
    stay valid: a stronger support only removes transitions. A layer still missing then gets
    a 0/1 term per action left, 1 where it can fire, and the search goes on the same way."""
    search = _Search(enc, actions, region, Seen(enc) if seen is None else seen)
    learned: list[Term] = []
    notes: list[str] = []
    plain = _synthesize(search, enc, support, learned, notes, effort, prove, max_refinements)
    if plain.components is not None or effort.expired():
        return plain
    if search.remaining:        # a layer is missing: the guards of its actions become terms too
        search.add_guards()
    found = _synthesize(search, enc, support, learned, notes, effort, prove, max_refinements)
    if found.components is None and search.remaining:
        return Ranking(None, f"{plain.reason}; with the guards of the actions left as terms: {found.reason}")
    return found


def _synthesize(search: _Search, enc: Encoding, support: Term, learned: list[Term], notes: list[str],
                effort: Effort, prove: Prove | None, max_refinements: int) -> Ranking:
    """The layers `search` still lacks, within `support` and the invariants `learned` (each with
    its note; the list grows as invariants are proved)."""
    for _ in range(max_refinements + 1):
        ranking, failure = search.run(conj(support, *learned), effort)
        if ranking.components is not None and learned:
            failed = recheck(enc, support, conj(*learned), effort)
            if failed:
                return Ranking(None, failed)
            ranking.reason = "strengthened by invariants excluding unreachable states (" + ", ".join(notes) + ")"
        if ranking.components is not None or failure is None:
            return ranking
        found = _exclude(enc, search, conj(support, *learned), failure, effort, prove)
        if isinstance(found, str):
            return Ranking(None, found)
        if found is None:
            return ranking
        learned.append(found[0])
        notes.append(found[1])
    return ranking


def _exclude(enc: Encoding, search: _Search, support: Term, failure: Failure, effort: Effort,
             prove: Prove | None) -> tuple[Term, str] | str | None:
    """An invariant excluding some of the transitions that blocked the layer, with a note saying
    how it was proved: Houdini's clauses excluding their sources, or where it finds none, PDR's
    invariants excluding the changes they make that no known reachable move makes (`blocking.py`)."""
    lemmas = exclude(enc, support, [x[:search.values] for x in failure.sources], effort, search.seen.states)
    if isinstance(lemmas, str):
        return lemmas
    if lemmas.clauses:
        return lemmas.term, f"{len(lemmas.clauses)} clause(s) by Houdini"
    if prove is None:
        return None
    found = unreachable_changes(enc, search.region, search.steps, failure, prove, effort, search.seen.changes,
                                search.asked)
    return None if found is None else (found, "1 by PDR")


class _Search:
    """The layers found so far, the actions none of them decreases yet, and the reachable states
    a blocked layer's strengthening filters by."""

    def __init__(self, enc: Encoding, actions: list[int], region: Term, seen: Seen):
        self.enc, self.actions, self.region, self.seen = enc, actions, region, seen
        self.asked: dict[Change, float] = {}       # the questions PDR was asked (`blocking.unreachable_changes`)
        self.remaining: list[int] | None = None         # None: feasibility not yet known
        self.components: list[Component] = []
        self.box = conj(enc.param_constraints(), enc.ranges(enc.cur))
        self.labels = [s.name for s in enc.slots] + list(enc.params)
        self.steps = {a: enc.action_relation(a) for a in actions}
        self.cur_x = list(enc.cur.slots) + list(enc.params.values())
        self.nxt_x = list(enc.nxt.slots) + list(enc.params.values())
        self.values = len(self.cur_x)       # a sampled state's slot and parameter values come first

    def add_guards(self) -> None:
        """For the layers still to find, a 0/1 term per action left, 1 where it can fire: "the
        refill can fire" falls from 1 to 0 when the one refill of a Draw phase fires. The
        layers found keep their coefficients (the new terms come last)."""
        enc = self.enc
        for a in self.remaining or []:
            self.cur_x.append(z3.If(enc.can_fire(a, enc.cur), 1, 0))
            self.nxt_x.append(z3.If(enc.can_fire(a, enc.nxt), 1, 0))
            self.labels.append(f"[{enc.model.actions[a].name} enabled]")

    def run(self, support: Term, effort: Effort) -> tuple[Ranking, Failure | None]:
        """Layers for the actions left, within `support`: a ranking (re-checked), or why not and
        the sampled transitions that blocked the last layer."""
        enc = self.enc
        within = conj(support, self.region, enc.rename(self.region, enc.cur, enc.nxt))
        relations = {a: z3.And(within, self.steps[a]) for a in self.actions}
        trans = Transitions(relations, self.cur_x, self.nxt_x, {a: enc.model.actions[a].name for a in self.actions})
        if self.remaining is None:
            feasible = []
            for a in self.actions:   # actions that never fire within the region need no rank
                found = trans.counterexample(a, z3.BoolVal(False), effort)
                if isinstance(found, str):
                    return Ranking(None, found), None
                if found is not None:
                    feasible.append(a)
            self.remaining = feasible
        renderer = Renderer(enc)
        while self.remaining:
            layer = find_layer(trans, self.remaining, self.box, effort)
            if isinstance(layer, str):
                return Ranking(None, layer), None
            if isinstance(layer, Failure):
                return Ranking(None, layer.reason), layer
            text = renderer.linear(list(zip(layer.coeffs, self.labels)), layer.constant)
            kept = [a for a in self.remaining if a not in layer.strict]
            self.components.append(Component(layer.coeffs, layer.constant, layer.strict, kept, text))
            self.remaining = kept
        failed = verify(trans, self.components, effort)
        if failed:
            return Ranking(None, failed), None
        return Ranking(list(self.components), ""), None


def verify(trans: Transitions, components: list[Component], effort: Effort) -> str:
    """Every layer's conditions, re-checked by fresh solvers on the full transition relations:
    "" when all hold, else what failed."""
    fresh = Transitions(trans.relations, trans.cur_x, trans.nxt_x, trans.names)
    for i, comp in enumerate(components):
        f_cur = linear(comp.coeffs, trans.cur_x, comp.constant)
        f_nxt = linear(comp.coeffs, trans.nxt_x, comp.constant)
        for a in comp.strict + comp.kept:
            want = z3.And(f_cur >= 0, f_cur - f_nxt >= 1) if a in comp.strict else f_cur - f_nxt >= 0
            found = fresh.counterexample(a, want, effort)
            if isinstance(found, str):
                return found
            if found is not None:
                return f"layer {i + 1} ({comp.text}) failed its re-check on {trans.names[a]}"
    return ""
