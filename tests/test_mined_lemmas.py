"""Induction strengthened with lemmas mined from explored states (`symbolic/mined.py`).

A claim that is not k-inductive but is with one lemma; a wrong candidate fed to the proof is
never used; a claim that needs context lemmas (a fact over two counters that holds in one
phase only) is proved with them, also for every value of a free parameter; on random small
models (Hypothesis), a claim proved with mined lemmas never meets an explicit
counterexample, no lemma Houdini keeps is broken by a reachable state, and the context
lemmas mined from every reachable state hold in each."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import z3
from hypothesis import given, settings
from hypothesis import strategies as st
from test_symbolic_diff import claims, models
from tiers import examples

from verifier.engines.explicit import ExplicitEngine, explore
from verifier.engines.symbolic import SymbolicEngine, mined
from verifier.engines.symbolic.core import Effort, Safety
from verifier.engines.symbolic.encode import FALSE as NO_ERROR
from verifier.engines.symbolic.encode import Encoding, disj
from verifier.engines.symbolic.examples import add, gt, le, lt, rng, sub
from verifier.engines.symbolic.mined import MINED, Goal, Implied, Linear, Mined, context_lemmas, mine, prove
from verifier.engines.symbolic.strengthen import Literal, excluded, houdini, lemma_term
from verifier.ir.expr import FALSE, TRUE, Const, Op, Param, Var, app, conj, eq, neg
from verifier.ir.model import Action, Assign, BoolType, IntType, Model, ParamDecl, Variable
from verifier.ir.props import DeadlockFree, Invariant
from verifier.portfolio.auto import AutoEngine
from verifier.portfolio.stores import Caps
from verifier.resources import Budget
from verifier.result import Verdict

BUDGET = Budget(rlimit=40_000_000)
STEPS = 20          # longer than any k the engine tries alone


def hidden_mode() -> Model:
    """c counts up to STEPS; `mode` is never set. The claim "not (mode and c == STEPS)" has a
    run of STEPS good states in the unreachable half (mode set) that ends in a bad one, so it is
    not k-inductive for k < STEPS; with the lemma "not mode" it is 1-inductive."""
    c = Var("c")
    return Model(name="hidden", variables=(Variable("c", rng(0, STEPS), init=(Const(0),)),
                                           Variable("mode", BoolType(), init=(FALSE,))),
                 actions=(Action("step", guard=lt(c, STEPS), effects=(Assign(c, add(c, 1)),)),
                          Action("back", guard=gt(c, 0), effects=(Assign(c, sub(c, 1)),))),
                 end=FALSE)


CLAIM = Invariant(id="never-both", expr=neg(conj(Var("mode"), eq(Var("c"), Const(STEPS)))), expected=Verdict.HOLDS)


def explored(model: Model, states: int) -> np.ndarray:
    return explore(model.instantiate(), Budget(max_states=states)).sample(10_000)


def test_a_claim_not_k_inductive_is_proved_with_one_lemma():
    model = hidden_mode()
    (plain,) = SymbolicEngine("kind").check(model, [CLAIM], Budget(rlimit=40_000_000, max_depth=8))
    assert plain.verdict is Verdict.HOLDS_TO_DEPTH, plain.reason          # not k-inductive for k <= 8
    enc = Encoding(model)
    mode_never = (Literal(1, "==", 1),)
    outcome = prove(Safety(enc, enc.predicate(neg(CLAIM.expr), enc.cur), NO_ERROR),
                    Mined([mode_never], 1), Effort(40_000_000))
    assert outcome.status == "safe", outcome.reason
    assert "1 mined lemma " in outcome.reason


def test_auto_mines_the_lemma_from_a_search_stopped_at_its_cap():
    (r,) = AutoEngine(caps=Caps.every_store(5)).check(hidden_mode(), [CLAIM], BUDGET)
    assert r.verdict is Verdict.PROVED and r.engine == MINED, (r.verdict, r.engine, r.reason)   # no parameters
    assert "mined lemma" in r.reason and "invariant" in r.evidence


def test_a_wrong_candidate_is_never_used():
    model = hidden_mode()
    enc = Encoding(model)
    wrong = (Literal(0, ">=", 7),)              # "c <= 6": false from the seventh step on
    bad = enc.predicate(neg(le(Var("c"), 6)), enc.cur)
    outcome = prove(Safety(enc, bad, NO_ERROR), Mined([wrong, (Literal(1, "==", 1),)], 1), Effort(40_000_000))
    assert outcome.status != "safe", outcome.reason
    kept = houdini(enc, enc.ranges(enc.cur), [wrong, (Literal(1, "==", 1),)], Effort(40_000_000))
    assert kept == [(Literal(1, "==", 1),)]


def test_only_the_lemmas_rechecked_before_skip_the_recheck():
    """A claim proved with the lemmas a claim before it was proved with (`Mined.rechecked`) is not
    checked again; other lemmas are: a wrong one is never reported as an invariant."""
    model = hidden_mode()
    enc = Encoding(model)
    mode_never, wrong = (Literal(1, "==", 1),), (Literal(0, ">=", 7),)
    found = Mined([mode_never], 1)
    outcome = prove(Safety(enc, enc.predicate(neg(CLAIM.expr), enc.cur), NO_ERROR), found, Effort(40_000_000))
    assert outcome.status == "safe" and found.rechecked == [mode_never], outcome.reason
    problem = Safety(enc, enc.predicate(neg(le(Var("c"), 6)), enc.cur), NO_ERROR)
    assert mined._checked(problem, found, [mode_never], None, Effort(40_000_000), "", 1).status == "safe"
    assert mined._checked(problem, found, [wrong], None, Effort(40_000_000), "", 1).status == "unknown"
    assert found.rechecked == [mode_never]


def test_the_recheck_is_skipped_only_on_the_same_transitions(monkeypatch):
    """A memo's lemmas serve every model of one shape (variables, parameter values): lemmas fresh
    solvers showed inductive on one encoding are not checked again on another of the same model
    (its terms are the same ASTs), and are on a model of the same shape that moves otherwise
    (planted: `mode` set at c == 3, where "mode never" is no invariant)."""
    mode_never = (Literal(1, "==", 1),)
    found = Mined([mode_never], 1)
    first = Encoding(hidden_mode())
    bad = first.predicate(neg(le(Var("c"), 6)), first.cur)
    assert mined._checked(Safety(first, bad, NO_ERROR), found, [mode_never], None, Effort(40_000_000), "", 1).status == "safe"
    calls = []
    real = mined.recheck
    monkeypatch.setattr(mined, "recheck", lambda *args, **kwargs: calls.append(1) or real(*args, **kwargs))
    again = Encoding(hidden_mode())
    assert mined._checked(Safety(again, again.predicate(neg(le(Var("c"), 6)), again.cur), NO_ERROR), found,
                          [mode_never], None, Effort(40_000_000), "", 1).status == "safe"
    assert calls == []
    model = hidden_mode()
    flips = Action("flip", guard=eq(Var("c"), Const(3)), effects=(Assign(Var("mode"), TRUE),))
    other = Encoding(replace(model, actions=model.actions + (flips,)))
    outcome = mined._checked(Safety(other, other.predicate(neg(le(Var("c"), 6)), other.cur), NO_ERROR), found,
                             [mode_never], None, Effort(40_000_000), "", 1)
    assert calls == [1] and outcome.status == "unknown", outcome.reason


def test_a_goal_holds_where_its_term_does():
    """`Goal.holds` (the values put in through Z3's C API) agrees with the term evaluated in Z3."""
    enc = Encoding(hidden_mode())
    goal = Goal(enc.predicate(CLAIM.expr, enc.cur), enc.cur.slots)
    for c, mode in [(0, 0), (STEPS, 0), (STEPS, 1), (3, 1)]:
        at = z3.substitute(goal.good, (enc.cur.slots[0], z3.IntVal(c)), (enc.cur.slots[1], z3.IntVal(mode)))
        assert goal.holds([c, mode]) == z3.is_true(z3.simplify(at)) == (not (mode and c == STEPS))


def test_mined_candidates_include_a_linear_equality():
    """x and y move together: x - y == 0 holds in every state, and the clauses alone cannot say it."""
    x, y = Var("x"), Var("y")
    model = Model(name="twins", variables=(Variable("x", rng(0, 6), init=(Const(0),)),
                                           Variable("y", rng(0, 6), init=(Const(0),))),
                  actions=(Action("up", guard=lt(x, 6), effects=(Assign(x, add(x, 1)), Assign(y, add(y, 1)))),),
                  end=FALSE)
    mined = mine(Encoding(model), explored(model, 3))
    assert any(isinstance(c, Linear) and c.op == "==" and {k for k, _ in c.coeffs} == {0, 1} for c in mined.every)


def freeze(clock: int | None = 20) -> Model:
    """Shadow Era's freeze, alone. `frozen` turns left (2 when frozen), `count` the frozen
    turns begun (a monitor), `turn` whether a turn is under way: a turn begun while frozen
    counts, and a turn ended uses one up. `clock` ticks up and down beside them, which
    makes the unreachable paths as long as it is (free when None: its bound is the parameter
    N). The claim "count <= 2" needs "frozen >= 1 -> frozen + count == 2" between turns and
    "== 3" during one: context lemmas (three literals and more, beyond the clauses)."""
    frozen, count, turn, tick = Var("frozen"), Var("count"), Var("turn"), Var("tick")
    top = Param("N") if clock is None else Const(clock)
    return Model(
        name="freeze", params=(ParamDecl("N", 20, lo=1, hi=1000),),
        param_values=(("N", clock),),
        variables=(Variable("turn", BoolType(), init=(FALSE,)), Variable("frozen", rng(0, 2), init=(Const(0),)),
                   Variable("count", rng(0, 3), init=(Const(0),)), Variable("tick", IntType(Const(0), top),
                                                                            init=(Const(0),))),
        actions=(Action("freeze", guard=conj(eq(frozen, 0), neg(turn)),
                        effects=(Assign(frozen, Const(2)), Assign(count, Const(0)))),
                 Action("begin", guard=neg(turn),
                        effects=(Assign(turn, TRUE), Assign(count, app(Op.ITE, gt(frozen, 0),
                                                                       app(Op.MIN, add(count, 1), Const(3)),
                                                                       count)))),
                 Action("end", guard=turn, effects=(Assign(turn, FALSE),
                                                    Assign(frozen, app(Op.MAX, sub(frozen, 1), Const(0))))),
                 Action("tick", guard=lt(tick, top), effects=(Assign(tick, add(tick, 1)),)),
                 Action("untick", guard=gt(tick, 0), effects=(Assign(tick, sub(tick, 1)),))),
        end=FALSE)


NEVER_TOO_LONG = Invariant(id="never-too-long", expr=le(Var("count"), 2), expected=Verdict.HOLDS)


def freeze_problem(enc: Encoding) -> Safety:
    return Safety(enc, enc.predicate(neg(NEVER_TOO_LONG.expr), enc.cur), NO_ERROR)


def test_a_claim_that_needs_context_lemmas_is_proved_with_them(monkeypatch):
    model = freeze()
    enc = Encoding(model)
    states = explored(model, 2_000)
    goal = Goal(enc.predicate(NEVER_TOO_LONG.expr, enc.cur), enc.cur.slots)
    found = mine(enc, states)
    assert any(isinstance(c, Implied) and len(c.context) >= 2 for c in found.every)
    assert goal in houdini(enc, enc.ranges(enc.cur), [goal, *found.every], Effort(40_000_000))     # 1-inductive with them
    assert prove(freeze_problem(enc), found, Effort(40_000_000)).status == "safe"
    monkeypatch.setattr(mined, "CONTEXT_LEMMAS", 0)             # the clauses and equalities alone do not do
    alone = mine(enc, states)
    assert goal not in houdini(enc, enc.ranges(enc.cur), [goal, *alone.every], Effort(40_000_000))


def test_lemmas_mined_at_the_defaults_prove_a_claim_for_every_value():
    (plain,) = SymbolicEngine("kind").check(freeze(None), [NEVER_TOO_LONG], Budget(rlimit=40_000_000, max_depth=8))
    assert plain.verdict is not Verdict.PROVED, plain.reason
    (r,) = SymbolicEngine().check(freeze(None), [NEVER_TOO_LONG], BUDGET)
    assert r.verdict is Verdict.PROVED and r.engine == MINED, (r.verdict, r.engine, r.reason)
    assert "every value of N" in r.reason


# ---------------------------------------------------------------- random small models

FIXED = models(param=False)
FREEZES = st.builds(freeze, st.integers(1, 3))        # random models seldom have two related counters
CLAIMS = claims().filter(lambda c: isinstance(c, (Invariant, DeadlockFree)))


def reachable(model: Model) -> np.ndarray:
    space = explore(model.instantiate())
    assert space.complete
    return space.sample(1 << 20)


def problem(enc: Encoding, claim) -> Safety:
    if isinstance(claim, DeadlockFree):
        return Safety(enc, enc.deadlock, enc.error)
    return Safety(enc, enc.predicate(neg(claim.expr), enc.cur), disj(enc.error, enc.claim_error(claim.expr)))


@settings(max_examples=examples(40), deadline=None)
@given(FIXED, CLAIMS, st.integers(1, 6))
def test_a_proof_with_mined_lemmas_never_meets_a_counterexample(model, claim, cap):
    """The method alone (no plain k-induction before it), from the first `cap` states."""
    (ref,) = ExplicitEngine().check(model, [claim], BUDGET)
    assert ref.verdict in (Verdict.HOLDS, Verdict.VIOLATED), ref.reason
    enc = Encoding(model)
    outcome = prove(problem(enc, claim), mine(enc, explored(model, cap)), Effort(40_000_000))
    assert not outcome.reason.startswith("internal"), outcome.reason
    if outcome.status == "safe":
        assert ref.verdict is Verdict.HOLDS, outcome.reason
    elif outcome.status == "reached" and not outcome.error:     # a path to a model error is the engine's to report
        assert ref.verdict is Verdict.VIOLATED


@settings(max_examples=examples(40), deadline=None)
@given(FIXED, st.integers(1, 6), st.data())
def test_houdini_keeps_no_lemma_a_reachable_state_breaks(model, cap, data):
    """Candidates mined from a few states, plus wrong ones (each excludes a reachable state)."""
    enc = Encoding(model)
    every = reachable(model)
    mined = mine(enc, explored(model, cap))
    rows = data.draw(st.lists(st.integers(0, len(every) - 1), max_size=3))
    wrong = [(Literal(k, "==", int(every[i, k])),) for i in rows for k in range(len(enc.slots))]
    kept = houdini(enc, enc.ranges(enc.cur), mined.every + wrong, Effort(40_000_000), "the test")
    assert isinstance(kept, list), kept
    for lemma in kept:
        for row in every.tolist():
            assert not excluded(lemma, row) if isinstance(lemma, tuple) else lemma.holds(row), (lemma, row)


@settings(max_examples=examples(40), deadline=None)
@given(FIXED | FREEZES, st.data())
def test_context_lemmas_hold_in_every_state_they_are_mined_from(model, data):
    """From reachable states (a few, or all of them), no context lemma has an exception among
    them: its context was widened only where no state breaks the fact (no filter after
    mining); from all of them, it holds in every reachable state."""
    every = reachable(model)
    rows = data.draw(st.lists(st.integers(0, len(every) - 1), min_size=1, max_size=8) | st.just(list(range(len(every)))))
    table = every[rows]
    for lemma in context_lemmas(Encoding(model), table):
        assert lemma.column(table).all(), lemma


LITERALS = st.builds(Literal, st.integers(0, 2), st.sampled_from(["==", "<=", ">="]), st.integers(-1, 3))
LINEARS = st.builds(Linear, st.lists(st.tuples(st.integers(0, 2), st.integers(-2, 2).filter(bool)), min_size=1,
                                     max_size=3, unique_by=lambda t: t[0]).map(tuple),
                    st.sampled_from(["==", "<=", ">="]), st.integers(-3, 4))
CANDIDATES = st.lists(st.one_of(st.lists(LITERALS, min_size=1, max_size=2).map(tuple), LINEARS,
                                st.builds(Implied, st.lists(LITERALS, min_size=1, max_size=3).map(tuple), LINEARS)),
                      max_size=12)
TABLES = st.lists(st.tuples(*[st.integers(-1, 3)] * 3), min_size=1, max_size=30).map(lambda rows: np.array(rows))


@settings(max_examples=examples(200), deadline=None)
@given(CANDIDATES, TABLES)
def test_the_candidates_kept_are_those_no_row_breaks(candidates, table):
    """`_unbroken` (columns, each literal's once) against the candidates judged row by row."""
    def holds(c, row) -> bool:
        return not excluded(c, row) if isinstance(c, tuple) else c.holds(row)

    assert mined._unbroken(candidates, table) == [c for c in candidates if all(holds(c, r) for r in table.tolist())]


def largest_inductive(enc: Encoding, support, lemmas: list) -> list:
    """The reference: the lemmas that hold initially, then, until none is dropped, those that a step
    from a state where the support and every lemma left hold keeps true, each asked of Z3 alone."""
    def sat(*terms) -> bool:
        s = z3.Solver()
        s.add(*terms)
        result = s.check()
        assert result != z3.unknown
        return result == z3.sat

    alive = [c for c in lemmas if not sat(enc.init(enc.cur), z3.Not(lemma_term(c, enc.cur.slots)))]
    while True:
        left = [lemma_term(c, enc.cur.slots) for c in alive]
        kept = [c for c in alive if not sat(support, enc.relation, enc.ranges(enc.nxt), *left,
                                             z3.Not(lemma_term(c, enc.nxt.slots)))]
        if kept == alive:
            return alive
        alive = kept


@settings(max_examples=examples(40), deadline=None)
@given(models(), st.booleans(), st.integers(1, 6), st.data())
def test_houdini_keeps_the_largest_inductive_subset(model, free, cap, data):
    """Mined candidates plus wrong ones (each excludes a reachable state), with the parameter P
    left free or not: Houdini against the lemmas judged one at a time."""
    states = explored(model, cap)             # at P's value, before it is left free
    if free and model.params:
        model = replace(model, param_values=(("P", None),))
    enc = Encoding(model)
    found = mine(enc, states, {p.name: p.default for p in model.params} if enc.free else None)
    rows = data.draw(st.lists(st.integers(0, len(states) - 1), max_size=2))
    wrong = [(Literal(k, "==", int(states[i, k])),) for i in rows for k in range(len(enc.slots))]
    candidates = found.every + wrong
    kept = houdini(enc, enc.ranges(enc.cur), candidates, Effort(40_000_000), "the test")
    assert kept == largest_inductive(enc, enc.ranges(enc.cur), candidates)
