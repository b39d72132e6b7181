"""Termination on random small models: the symbolic ranking proof against the explicit lasso
search. A ranking function (with the invariants proved on the way) must never be found where
the explicit engine shows a run that never ends, and a stuck state Z3 reports must be one the
explicit search confirms; with the parameter left free, a proof for every value must hold in
each instance. The same on the turn-taking models of test_ranking_synthesis, whose ranking
needs invariants PDR proves about the changes a pass makes."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_ranking_synthesis import rounds
from test_symbolic_diff import P_HI, P_LO, models
from tiers import examples

from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic import SymbolicEngine
from verifier.ir.props import Terminates
from verifier.resources import Budget
from verifier.result import Verdict

GAME = Terminates(id="game-ends", scope="game")
BUDGET = Budget(rlimit=40_000_000)
FIXED = models(param=False)
FREE = models(param=True)
ENDS = (Verdict.HOLDS, Verdict.PROVED)


def explicit(model) -> Verdict:
    (r,) = ExplicitEngine().check(model, [GAME], BUDGET)
    assert r.verdict in (Verdict.HOLDS, Verdict.VIOLATED), r.reason   # tiny models: always complete
    return r.verdict


@settings(max_examples=examples(60), deadline=None)
@given(FIXED)
def test_a_ranking_proof_never_meets_a_lasso(model):
    (r,) = SymbolicEngine().check(model, [GAME], BUDGET)
    assert not r.reason.startswith("internal"), r.reason
    if r.verdict is Verdict.UNKNOWN:
        return
    want = explicit(model)
    assert (r.verdict in ENDS) == (want is Verdict.HOLDS), (r.verdict, r.engine, r.reason, r.evidence)


@settings(max_examples=examples(20), deadline=None)
@given(FREE)
def test_a_proof_for_every_value_holds_in_each_instance(model):
    (r,) = SymbolicEngine().check(model.instantiate({"P": None}), [GAME], BUDGET)
    assert not r.reason.startswith("internal"), r.reason
    if r.verdict is Verdict.PROVED:
        for value in range(P_LO, P_HI + 1):
            assert explicit(model.instantiate({"P": value})) is Verdict.HOLDS, (value, r.reason, r.evidence)
    elif r.verdict is Verdict.VIOLATED:
        assert explicit(model.instantiate({"P": dict(r.params)["P"]})) is Verdict.VIOLATED


@settings(max_examples=examples(8), deadline=None)
@given(st.integers(1, 3), st.booleans(), st.booleans())
def test_turn_taking_models_are_ranked_only_where_they_end(cards, second_may_skip, reset_each_turn):
    model = rounds(cards, second_may_skip, reset_each_turn)
    (r,) = SymbolicEngine().check(model, [GAME], BUDGET)
    assert not r.reason.startswith("internal"), r.reason
    if r.verdict is not Verdict.UNKNOWN:
        assert (r.verdict in ENDS) == (explicit(model) is Verdict.HOLDS), (r.verdict, r.reason, r.evidence)
