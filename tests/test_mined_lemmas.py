"""Induction strengthened with lemmas mined from explored states (`symbolic/mined.py`).

A claim that is not k-inductive but is with one lemma; a wrong candidate fed to the proof is
never used; on random small models (Hypothesis), a claim proved with mined lemmas never meets
an explicit counterexample, and no lemma Houdini keeps is broken by a reachable state."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_symbolic_diff import claims, models

from verifier.engines.auto import AutoEngine
from verifier.engines.base import Budget
from verifier.engines.explicit import ExplicitEngine, explore
from verifier.engines.symbolic import SymbolicEngine
from verifier.engines.symbolic.core import Deadline, Safety
from verifier.engines.symbolic.encode import FALSE as NO_ERROR
from verifier.engines.symbolic.encode import Encoding, disj
from verifier.engines.symbolic.examples import add, gt, le, lt, rng, sub
from verifier.engines.symbolic.mined import MINED, Linear, Mined, mine, prove
from verifier.engines.symbolic.strengthen import Literal, excluded, houdini
from verifier.ir.expr import FALSE, Const, Var, conj, eq, neg
from verifier.ir.model import Action, Assign, BoolType, Model, Variable
from verifier.ir.props import DeadlockFree, Invariant
from verifier.result import Verdict

BUDGET = Budget(timeout=20)
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


CLAIM = Invariant(id="never-both", expr=neg(conj(Var("mode"), eq(Var("c"), Const(STEPS)))), expected="HOLDS")


def explored(model: Model, states: int) -> np.ndarray:
    return explore(model.instantiate(), Budget(max_states=states)).sample(10_000)


def test_a_claim_not_k_inductive_is_proved_with_one_lemma():
    model = hidden_mode()
    (plain,) = SymbolicEngine("kind").check(model, [CLAIM], Budget(timeout=20, max_depth=8))
    assert plain.verdict is Verdict.HOLDS_TO_DEPTH, plain.reason          # not k-inductive for k <= 8
    enc = Encoding(model)
    mode_never = (Literal(1, "==", 1),)
    outcome = prove(Safety(enc, enc.predicate(neg(CLAIM.expr), enc.cur), NO_ERROR),
                    Mined([mode_never], 1), Deadline(20))
    assert outcome.status == "safe", outcome.reason
    assert "1 mined lemma " in outcome.reason


def test_auto_mines_the_lemma_from_a_search_stopped_at_its_cap():
    (r,) = AutoEngine(explicit_states=5).check(hidden_mode(), [CLAIM], BUDGET)
    assert r.verdict is Verdict.PROVED and r.engine == MINED, (r.verdict, r.engine, r.reason)   # no parameters
    assert "mined lemma" in r.reason and "invariant" in r.evidence


def test_a_wrong_candidate_is_never_used():
    model = hidden_mode()
    enc = Encoding(model)
    wrong = (Literal(0, ">=", 7),)              # "c <= 6": false from the seventh step on
    bad = enc.predicate(neg(le(Var("c"), 6)), enc.cur)
    outcome = prove(Safety(enc, bad, NO_ERROR), Mined([wrong, (Literal(1, "==", 1),)], 1), Deadline(20))
    assert outcome.status != "safe", outcome.reason
    kept = houdini(enc, enc.ranges(enc.cur), [wrong, (Literal(1, "==", 1),)], Deadline(20))
    assert kept == [(Literal(1, "==", 1),)]


def test_mined_candidates_include_a_linear_equality():
    """x and y move together: x - y == 0 holds in every state, and the clauses alone cannot say it."""
    x, y = Var("x"), Var("y")
    model = Model(name="twins", variables=(Variable("x", rng(0, 6), init=(Const(0),)),
                                           Variable("y", rng(0, 6), init=(Const(0),))),
                  actions=(Action("up", guard=lt(x, 6), effects=(Assign(x, add(x, 1)), Assign(y, add(y, 1)))),),
                  end=FALSE)
    mined = mine(Encoding(model), explored(model, 3), seconds=0.0)
    assert any(isinstance(c, Linear) and c.op == "==" and {k for k, _ in c.coeffs} == {0, 1} for c in mined.every)


# ---------------------------------------------------------------- random small models

FIXED = models(param=False)
CLAIMS = claims().filter(lambda c: isinstance(c, (Invariant, DeadlockFree)))


def reachable(model: Model) -> np.ndarray:
    space = explore(model.instantiate())
    assert space.complete
    return space.sample(1 << 20)


def problem(enc: Encoding, claim) -> Safety:
    if isinstance(claim, DeadlockFree):
        return Safety(enc, enc.deadlock, enc.error)
    return Safety(enc, enc.predicate(neg(claim.expr), enc.cur), disj(enc.error, enc.claim_error(claim.expr)))


@settings(max_examples=40, deadline=None)
@given(FIXED, CLAIMS, st.integers(1, 6))
def test_a_proof_with_mined_lemmas_never_meets_a_counterexample(model, claim, cap):
    """The method alone (no plain k-induction before it), from the first `cap` states."""
    (ref,) = ExplicitEngine().check(model, [claim], BUDGET)
    assert ref.verdict in (Verdict.HOLDS, Verdict.VIOLATED), ref.reason
    enc = Encoding(model)
    outcome = prove(problem(enc, claim), mine(enc, explored(model, cap), seconds=0.0), Deadline(20))
    assert not outcome.reason.startswith("internal"), outcome.reason
    if outcome.status == "safe":
        assert ref.verdict is Verdict.HOLDS, outcome.reason
    elif outcome.status == "reached" and not outcome.error:     # a path to a model error is the engine's to report
        assert ref.verdict is Verdict.VIOLATED


@settings(max_examples=40, deadline=None)
@given(FIXED, st.integers(1, 6), st.data())
def test_houdini_keeps_no_lemma_a_reachable_state_breaks(model, cap, data):
    """Candidates mined from a few states, plus wrong ones (each excludes a reachable state)."""
    enc = Encoding(model)
    every = reachable(model)
    mined = mine(enc, explored(model, cap), seconds=0.0)
    rows = data.draw(st.lists(st.integers(0, len(every) - 1), max_size=3))
    wrong = [(Literal(k, "==", int(every[i, k])),) for i in rows for k in range(len(enc.slots))]
    kept = houdini(enc, enc.ranges(enc.cur), mined.every + wrong, Deadline(20), "the test")
    assert isinstance(kept, list), kept
    for lemma in kept:
        for row in every.tolist():
            assert not excluded(lemma, row) if isinstance(lemma, tuple) else lemma.holds(row), (lemma, row)
