"""Deciding the analyses beyond the explored states, when a budget stopped the search.

The explicit analyses see the states a breadth-first search stored; at a
game's printed numbers the search stops long before the last one, and every
candidate finding the scan has not settled is an open question
(`questions.questions`): "is there a reachable state where P holds?". They are
decided in two steps, within the analyses' time:

0. Z3 over the variables' ranges: a question no in-range state meets is
   unreachable. Then Houdini over the claims' invariants, lemmas mined from the
   states the claims' Z3 mines (`symbolic.mined`; what it mined and proved there,
   reused where the claims ran first here) and the negations of the open questions
   (`_inductive`: the largest subset that holds initially and that every action
   keeps from every state where all of it holds, so each holds in every
   reachable state): a question whose negation is kept is unreachable (a gap of
   a card count, with a claim or a mined sum that bounds the cards owned).
1. Random runs (as `engines.walk`): each new state a run meets is added to the
   state space, with its parent link, and handed to the explicit visitors, so a
   finding there is recorded by the same code and carries a trace that replays.
2. Z3 (k-induction with a small k, then PDR, as the symbolic engine): one
   query per finding kind, the disjunction of its open targets. Unreachable:
   every open question of the kind is answered (an inductive invariant holds
   for every reachable state). Reached: the witness path is re-run on the
   concrete semantics (`witness.concretise`), added to the space and handed
   to the visitors; the questions they settle are answered, and the query is
   asked again for the rest.

What neither step decides stays UNKNOWN, per question, with the reason
(`Beyond.undecided`). `Beyond.method` names what decided each question.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import z3

from verifier.analysis.context import Context, Visitor
from verifier.analysis.questions import Question, questions
from verifier.engines.statespace import StateSpace
from verifier.engines.symbolic.core import Effort, Outcome, Safety
from verifier.engines.symbolic.encode import FALSE, Encoding, Term, Unsupported, as_bool, conj, disj, negate
from verifier.engines.symbolic.kinduction import kinduction
from verifier.engines.symbolic.mined import Goal, Linear, mine
from verifier.engines.symbolic.pdr import pdr
from verifier.engines.symbolic.strengthen import excluded, houdini, lemma_term
from verifier.engines.symbolic.witness import InternalError, concretise
from verifier.ir.expr import App, Const, Expr, Index, Op
from verifier.ir.props import Invariant, Property, map_claim
from verifier.portfolio.stores import Store, choose_store
from verifier.resources.memory import bound_z3, z3_out_of_memory
from verifier.semantics import EvalError, initial_states

BEYOND_UNITS = 120_000_000   # Z3 resource units for the questions of one model (about a minute of one core)
WALK_RUNS = 2_000        # random runs, at most
STATIC_UNITS = 2_000_000     # Z3 units per question for "no in-range state at all meets it"
LEMMA_SHARE = 0.3        # of the units, at most, for Houdini over the lemmas (two thirds for the first round)
MINE_STATES = 40_000     # explored states the lemmas are mined from, at most (as the claims': `portfolio.auto`)
MINE_LEAST = 8_000_000   # Z3 units left at least for mining lemmas to be worth it
MAX_POOL = 6             # counters in one pool, at most, for its parts to be candidates too
WALK_STEPS = 100_000     # one run stops here if the game has not ended
STALE_RUNS = 64          # the runs stop after this many in a row found no new state
MAX_K = 4                # k-induction's bound before PDR takes over
KINDS = ("deadlock", "gap", "dead-rule", "nondeterministic-must", "conflict", "order-dependence")


@dataclass
class Beyond:
    """The questions asked beyond the explored states and their answers."""

    explored: int                                  # states the search stored
    questions: list[Question] = field(default_factory=list)
    cannot: list[str] = field(default_factory=list)   # candidates no question could be asked for
    walked: int = 0                                # states the random runs added
    lemmas: int = 0                                # the claims' invariants proved inductive and used

    @property
    def undecided(self) -> list[str]:
        return [f"{q.words()} ({q.reason or 'not reached'})" for q in self.questions if not q.answer] + self.cannot

    def method(self, kind: str, subject: str) -> str | None:
        for q in self.questions:
            if q.kind == kind and q.subject == subject and q.answer:
                return q.method
        return None

    def summary(self) -> str:
        """One line: how many questions each method decided."""
        counts: dict[tuple[str, str], int] = {}
        for q in self.questions:
            if q.answer:
                key = (q.method, q.answer)
                counts[key] = counts.get(key, 0) + 1
        parts = [f"{n} {answer} by {method}" for (method, answer), n in sorted(counts.items())]
        head = f"beyond the {self.explored:,} explored states, {len(self.questions) + len(self.cannot)} questions"
        return head + (": " + ", ".join(parts) if parts else "")


def decide(ctx: Context, visitors: Sequence[Visitor], claims: Sequence[Property] = ()) -> Beyond:
    """Answer the open questions of an incomplete scan (see the module doc); the invariants among
    `claims` are candidate lemmas (only those proved inductive are used)."""
    space = ctx.space
    report = Beyond(len(space.packed))
    by_type = {type(v): v for v in visitors}
    try:
        bound_z3()
        enc = Encoding(ctx.instance)
        report.questions, report.cannot = questions(enc, by_type)
    except (Unsupported, z3.Z3Exception) as err:
        why = z3_out_of_memory(err) or f"the symbolic engine cannot encode this model: {err}"
        report.cannot = [f"every open question ({why})"]
        enc = None
    mine = Effort(BEYOND_UNITS)
    if enc is not None:
        _static(enc, report.questions, mine)
        _with_lemmas(ctx, enc, claims, report, mine)
    try:
        roots = _roots(ctx, visitors)
    except EvalError as err:
        report.cannot.append(f"every open question (a model error in an initial state: {err})")
        return report
    _settle(report.questions, "walk")
    report.walked = _walk(ctx, visitors, report.questions, roots)
    _settle(report.questions, "walk")
    if enc is not None:
        _symbolic(ctx, enc, visitors, report.questions, mine, roots)
    return report


def _static(enc: Encoding, qs: Sequence[Question], effort: Effort) -> None:
    """Answer "unreachable" the questions no state within the variables' ranges meets (an
    effect that cannot leave its range, an action whose guard contradicts itself)."""
    base = conj(enc.param_constraints(), enc.ranges(enc.cur))
    for q in qs:
        if effort.expired():
            return
        bound_z3()
        solver = z3.Solver()
        solver.set("rlimit", effort.rlimit(cap=STATIC_UNITS))
        solver.add(base, q.target)
        if solver.check() == z3.unsat:
            q.answer, q.method = "unreachable", "z3 (ranges)"


def _with_lemmas(ctx: Context, enc: Encoding, claims: Sequence[Property], report: Beyond, effort: Effort) -> None:
    """The open questions whose negation is inductive together with some of the claims' invariants
    and, for those still open, of the lemmas mined from the explored states (`_mined`; Houdini over both; the
    first round has two thirds of the units, as many mined candidates can make the second run out of
    them): no reachable state meets them."""
    share = effort.share(LEMMA_SHARE)
    claimed = _candidates(ctx, enc, claims)
    if claimed:
        _by_induction(enc, report, claimed, share.share(2 / 3))
    if any(not q.answer for q in report.questions):
        mined, proven = _mined(ctx, enc) if (share.left() or 0) >= MINE_LEAST else ([], [])
        _by_induction(enc, report, claimed, share, mined, proven)


def _by_induction(enc: Encoding, report: Beyond, claimed: list[Goal], effort: Effort,
                  mined: Sequence[object] = (), proven: Sequence[object] = ()) -> None:
    """Houdini over the claims' invariants, the `mined` lemmas and the open questions' negations,
    with the `proven` lemmas (mined, inductive) assumed: those it keeps and the proven ones are
    the largest inductive subset of all of them (the proven ones in it), as if asked together."""
    open_ = [q for q in report.questions if not q.answer]
    lemmas = claimed + list(mined)
    kept = _inductive(enc, lemmas + [Goal(negate(q.target), enc.cur.slots) for q in open_], effort,
                      [lemma_term(c, enc.cur.slots) for c in proven])
    used = [k for k in kept if k < len(lemmas)]
    report.lemmas = max(report.lemmas, len(used) + len(proven))
    from_claims = sum(1 for k in used if k < len(claimed))
    rest = len(used) - from_claims + len(proven)
    parts = [f"{n} {what}" for n, what in ((from_claims, "of the claims' invariants"),
                                            (rest, "mined lemma" + "s" * (rest != 1))) if n]
    words = f"z3 (induction with {' and '.join(parts)})" if parts else "z3 (induction)"
    for k in kept:
        if k >= len(lemmas):
            q = open_[k - len(lemmas)]
            q.answer, q.method = "unreachable", words


def _mined(ctx: Context, enc: Encoding) -> tuple[list[object], list[object]]:
    """Candidate lemmas mined from the states the claims' Z3 mines from (`_claims_states`) and seeded
    random runs (`symbolic.mined`: clauses, linear equalities, bounds of the model's own sums), and
    those of them the claims' Z3 proved inductive (Houdini kept them, alone): where it mined these
    very states of this very model (`Context.mined`: the ledger's, keyed by the model), its
    candidates are the ones mining them here would give, and its proof stands."""
    table = _claims_states(ctx)
    shared = ctx.mined
    found = shared[1].get("mined") if shared is not None and np.array_equal(shared[0], table) else None
    if found is None:
        return mine(enc, table).every + _pool_bounds(enc, table), []
    proven = list(found.alone or [])
    known = set(proven)
    return [c for c in found.every if c not in known] + _pool_bounds(enc, table), proven


def _claims_states(ctx: Context) -> np.ndarray:
    """MINE_STATES of the states the python stage of the store plan stores, spread evenly over them:
    those the claims' Z3 mines lemmas from where their search stopped (`portfolio.auto`; every store
    finds the same states in the same order, so the first ones of a later stage's search are those)."""
    space = ctx.space
    if isinstance(space, StateSpace):
        return space.sample(MINE_STATES)
    plan = choose_store(ctx.instance, ctx.budget)
    return space.sample(MINE_STATES, plan.cap if plan.first is Store.PYTHON else plan.skipped or None)


def _pool_bounds(enc: Encoding, table) -> list[Linear]:
    """`sum <= most` and `sum >= least` over the sampled states, for each pool of counters that
    the model's actions move between (cards from deck to hand to resources): a lemma mining
    from the model's own sums does not propose, as no guard or effect adds them up."""
    out: list[Linear] = []
    if not len(table):
        return out
    for coeffs in _pools(enc):
        values = table[:, [k for k, _ in coeffs]].sum(axis=1)
        out += [Linear(coeffs, "<=", int(values.max())), Linear(coeffs, ">=", int(values.min()))]
    return out


def _pools(enc: Encoding) -> list[tuple[tuple[int, int], ...]]:
    """Sets of counters one action raises and lowers at once by constants, at the same index
    expression (or none), joined across actions; per value of the index, the sums of their slots
    and of each part of them (two counters at least)."""
    joined: dict[str, str] = {}

    def root(name: str) -> str:
        while joined.setdefault(name, name) != name:
            name = joined[name]
        return name

    for action in enc.model.actions:
        moved: dict[object, dict[int, list[str]]] = {}
        for effect in action.effects:
            sign = _step(effect.value, effect.target)
            if sign:
                index = effect.target.index if isinstance(effect.target, Index) else None
                moved.setdefault(index, {}).setdefault(sign, []).append(effect.target.name)
        for signs in moved.values():
            if len(signs) == 2:
                names = signs[1] + signs[-1]
                for name in names[1:]:
                    joined[root(name)] = root(names[0])
    pools: dict[str, list[str]] = {}
    for name in joined:
        pools.setdefault(root(name), []).append(name)
    out = []
    for names in pools.values():
        shapes = {enc.offsets[n][1:] for n in names if n in enc.offsets}
        if not 2 <= len(names) <= MAX_POOL or len(shapes) != 1 or not all(n in enc.offsets for n in names):
            continue
        (_lo, size), = shapes
        for part in (c for r in range(2, len(names) + 1) for c in combinations(sorted(names), r)):
            for k in range(size):           # the pool and each part of it (a hand and this turn's table)
                out.append(tuple(sorted((enc.offsets[n][0] + k, 1) for n in part)))
    return out


def _step(value: Expr, target: Expr) -> int:
    """+1 / -1 when `value` is `target` plus / minus a positive constant, else 0."""
    if isinstance(value, App) and value.op in (Op.ADD, Op.SUB) and len(value.args) == 2 and \
            value.args[0] == target and isinstance(value.args[1], Const) and value.args[1].value:
        up = value.args[1].value > 0
        return 1 if up == (value.op is Op.ADD) else -1
    return 0


def _candidates(ctx: Context, enc: Encoding, claims: Sequence[Property]) -> list[Goal]:
    """The claims' invariants over `enc.cur`, at the model's parameter values (defined and true)."""
    out = []
    for claim in claims:
        if not isinstance(claim, Invariant):
            continue
        mapped = map_claim(claim, ctx.instance.fix_params)
        assert isinstance(mapped, Invariant)
        try:
            value, defined = enc.encode(mapped.expr, enc.cur, {})
        except (Unsupported, z3.Z3Exception):
            continue
        out.append(Goal(conj(defined, as_bool(value)), enc.cur.slots))
    return out


def _inductive(enc: Encoding, candidates: list, effort: Effort, proven: Sequence[Term] = ()) -> list[int]:
    """Houdini (`strengthen.houdini`): the indices of the greatest subset of `candidates` that holds
    in every initial state and that every action keeps from every in-range state where all of it
    and the `proven` invariants hold: then each holds in every reachable state. [] when Z3 cannot
    finish within `effort` (an unanswered check proves nothing)."""
    marked = [_Candidate(c) for c in candidates]       # one key each, duplicates too
    kept = houdini(enc, conj(enc.param_constraints(), enc.ranges(enc.cur), *proven), marked, effort,
                   "the questions beyond the explored states")
    if isinstance(kept, str):
        return []
    alive = set(kept)
    return [k for k, c in enumerate(marked) if c in alive]


@dataclass(frozen=True, eq=False)
class _Candidate:
    """A Houdini candidate (a clause, a mined lemma or a `Goal`) with a key of its own."""

    lemma: object

    def term(self, xs) -> Term:
        return lemma_term(self.lemma, xs)

    def holds(self, values) -> bool:
        c = self.lemma
        return not excluded(c, values) if isinstance(c, tuple) else bool(c.holds(values))  # type: ignore[attr-defined]


def _settle(qs: Sequence[Question], method: str) -> None:
    for q in qs:
        if not q.answer and q.settled():
            q.answer, q.method = "reachable", method


# ---------------------------------------------------------------- the space, extended

def _visit(ctx: Context, visitors: Sequence[Visitor], i: int, firings: list) -> None:
    for v in visitors:
        v.visit(i, ctx.space.packed[i], firings)


def _roots(ctx: Context, visitors: Sequence[Visitor]) -> dict[int, int]:
    """Packed initial state -> its index; those a search cut short did not store are added."""
    space = ctx.space
    out: dict[int, int] = {}
    for i in range(len(space.packed)):
        if space.parent[i] != -1:
            break
        out[space.packed[i]] = i
    for state in initial_states(ctx.layout):
        x = space.packing.pack(state)
        if x not in out:
            out[x] = space.store(x, -1, 0)
            _visit(ctx, visitors, out[x], ctx.expand_uncached(x))
    return out


# ---------------------------------------------------------------- random runs

def _walk(ctx: Context, visitors: Sequence[Visitor], qs: Sequence[Question], roots: dict[int, int]) -> int:
    """Seeded random runs (WALK_RUNS at most), until every question is settled; new states are
    added to the space and visited. The number of states added."""
    space = ctx.space
    inits = list(roots.values())
    if not inits or not qs:
        return 0
    rng = random.Random(0)
    expand = ctx.expand_uncached
    added = stale = runs = 0
    while runs < WALK_RUNS and stale < STALE_RUNS and not all(q.answer or q.settled() for q in qs):
        runs += 1
        before = added
        here = rng.choice(inits)
        path: list[tuple[int, int]] = []          # (packed, label) since the last stored state
        anchor = here                             # index of the last state stored on this run
        s = space.packed[here]
        firings = None                            # those of `s`, when its visit already expanded it
        for _step in range(WALK_STEPS):
            try:
                firings = expand(s) if firings is None else firings
            except EvalError:           # a model error: the claims report it
                break
            options = [(a, c, t) for a, c, t, _g in firings if t is not None]
            if not options:
                break
            a, c, t = rng.choice(options)
            label = space.labels(a, c)
            s, firings = t, None
            if t in space.seen:
                path.append((t, label))
                continue
            for x, lab in path:                   # store the run up to here, so the trace is whole
                anchor = space.store(x, anchor, lab)
            path.clear()
            anchor = space.store(t, anchor, label)
            added += 1
            try:
                firings = expand(t)
            except EvalError:
                break
            _visit(ctx, visitors, anchor, firings)
        stale = 0 if added > before else stale + 1
    return added


# ---------------------------------------------------------------- Z3

def _symbolic(ctx: Context, enc: Encoding, visitors: Sequence[Visitor], qs: Sequence[Question],
              effort: Effort, roots: dict[int, int]) -> None:
    kinds = [k for k in KINDS if any(q.kind == k and not q.answer for q in qs)]
    for n, kind in enumerate(kinds):
        mine = effort.share(1 / (len(kinds) - n))
        while True:
            open_ = [q for q in qs if q.kind == kind and not q.answer]
            if not open_:
                break
            if mine.expired():
                for q in open_:
                    q.reason = q.reason or f"no Z3 units left (of {BEYOND_UNITS:,} for the questions)"
                break
            try:
                outcome = _solve(Safety(enc, disj(*(q.target for q in open_)), FALSE), mine)
            except z3.Z3Exception as err:
                outcome = Outcome("unknown", "z3", reason=z3_out_of_memory(err) or f"Z3 failed: {err}")
            if outcome.status == "safe":
                for q in open_:
                    q.answer, q.method = "unreachable", outcome.method
                break
            if outcome.status != "reached":
                for q in open_:
                    q.reason = outcome.reason or f"{outcome.method}: undecided"
                break
            if not _witness(ctx, enc, visitors, outcome, open_, roots):
                break
            _settle(qs, outcome.method)


def _solve(problem: Safety, effort: Effort) -> Outcome:
    first = kinduction(problem, MAX_K, effort.share(0.3))
    if first.status in ("reached", "safe"):
        return first
    second = pdr(problem, effort)
    if second.status in ("reached", "safe"):
        return second
    second.reason = f"k-induction: {first.reason}; PDR: {second.reason}"
    return second


def _witness(ctx: Context, enc: Encoding, visitors: Sequence[Visitor], outcome: Outcome,
             open_: Sequence[Question], roots: dict[int, int]) -> bool:
    """Add the witness path to the space and visit its states; False when it settles no open
    question (they are left undecided with the reason)."""
    assert outcome.path is not None, "a reached outcome has a path"
    try:
        concrete = concretise(enc, outcome.path)
    except InternalError as err:
        for q in open_:
            q.reason = f"internal: a symbolic witness did not replay ({err})"
        return False
    space = ctx.space
    pack = space.packing.pack
    first = pack(concrete.states[0])
    anchor = roots.get(first)
    if anchor is None:
        for q in open_:
            q.reason = "internal: a symbolic witness starts outside the initial states"
        return False
    try:
        firings = ctx.expand_uncached(first)
        for state in concrete.states[1:]:
            x = pack(state)
            a, choice = next((a, c) for a, c, t, _g in firings if t == x)
            anchor = space.store(x, anchor, space.labels(a, choice))
            firings = ctx.expand_uncached(x)
            _visit(ctx, visitors, anchor, firings)
    except (EvalError, StopIteration):
        for q in open_:
            q.reason = "internal: a symbolic witness does not follow the explicit engine's firings"
        return False
    _settle(open_, outcome.method)
    if any(q.answer for q in open_):
        return True
    for q in open_:
        q.reason = f"{outcome.method} met its condition in a state the explicit analysis does not confirm"
    return False
