"""The symbolic engine's contract, claim by claim: verdict strength, evidence in model terms,
model errors, internal errors, unsupported claims, and the auto policy."""
from __future__ import annotations

import z3

from verifier.engines import walk
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic import SymbolicEngine
from verifier.engines.symbolic import engine as engine_module
from verifier.engines.symbolic.encode import Encoding
from verifier.engines.symbolic.examples import DRAW, HAND_LIMIT, counter, deck_game, le, param_model, passive_hand_limit
from verifier.engines.symbolic.render import render
from verifier.engines.symbolic.witness import InternalError
from verifier.ir.expr import FALSE, Const, Index, Local, Op, Param, Quant, QuantKind, Var, app, conj, eq, neg
from verifier.ir.model import Action, Assign, IntType, Model, ParamDecl, Variable
from verifier.ir.props import DeadlockFree, Event, Invariant, Obligation, Ordering, Reachable, Terminates
from verifier.portfolio.auto import AutoEngine
from verifier.portfolio.stores import Caps
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

BUDGET = Budget(rlimit=60_000_000, max_depth=20)


def check(model, claim, strategy="all", budget=BUDGET):
    (r,) = SymbolicEngine(strategy).check(model, [claim], budget)
    return r


def test_free_deck_proved_for_every_value_with_evidence():
    r = check(deck_game(None), passive_hand_limit(), "pdr")
    assert r.verdict is Verdict.PROVED and r.engine == "pdr"
    assert dict(r.params) == {"DECK": None}
    assert "every value of DECK" in r.reason
    assert r.evidence["free_params"] == ["DECK"]
    assert "hand[" in r.evidence["invariant"] or r.evidence["invariant"].startswith("true")
    r = check(deck_game(None), passive_hand_limit(), "kind")
    assert r.verdict is Verdict.PROVED and r.engine == "k-induction" and r.evidence["k"] == 1


def test_fixed_parameters_give_holds_not_proved():
    r = check(deck_game(10), passive_hand_limit(), "kind")
    assert r.verdict is Verdict.HOLDS and r.engine == "k-induction"
    assert "these parameter values" in r.reason


def test_pdr_invariant_reads_in_model_terms():
    turn_start = Invariant(id="turn-start", expr=app(Op.IMPLIES, conj(eq(Var("phase"), DRAW), neg(Var("drawn"))),
                                                     le(Index("hand", Var("active")), HAND_LIMIT)))
    r = check(deck_game(None), turn_start, "pdr")
    assert r.verdict is Verdict.PROVED
    text = r.evidence["invariant"]
    assert "@" not in text and "Var(" not in text
    assert "hand[0]" in text or "hand[1]" in text


def test_render_uses_slot_and_enum_names():
    enc = Encoding(deck_game(None))
    c = {s.name: x for s, x in zip(enc.slots, enc.cur.slots)}
    deck = enc.params["DECK"]
    f = z3.And(z3.Not(c["hand[0]"] >= 8), z3.Or(c["phase"] >= 1, c["active"] <= 0), c["pile"] - deck <= 0)
    assert render(enc, f, drop_implied=False) == \
        "(active == 0 or phase != Draw) and hand[0] <= 7 and pile <= DECK"
    assert render(enc, c["pile"] <= deck) == "true (the declared ranges suffice)"


def test_render_leaves_out_exactly_the_conjuncts_the_ranges_imply():
    """The conjuncts the declared ranges imply are left out, the others kept (each asked under an
    assumption of its own in one solver; checked here against a fresh solver per conjunct)."""
    enc = Encoding(deck_game(None))
    c = {s.name: x for s, x in zip(enc.slots, enc.cur.slots)}
    parts = [c["hand[0]"] >= 0, c["hand[0]"] <= 7, c["active"] <= 1, c["pile"] <= enc.params["DECK"],
             z3.Or(c["active"] == 0, c["active"] == 1), c["hand[1]"] != c["hand[0]"]]
    background = z3.And(enc.param_constraints(), enc.ranges(enc.cur))

    def implied(p) -> bool:
        s = z3.Solver()
        s.add(background, z3.Not(p))
        return s.check() == z3.unsat
    kept = [p for p in parts if not implied(p)]
    assert 0 < len(kept) < len(parts)
    assert render(enc, z3.And(*parts)) == render(enc, z3.And(*kept), drop_implied=False)


def test_render_answers_each_encoding_for_its_own_ranges():
    """The same Z3 term (slot `x` of two models) is implied by one model's ranges, not by the other's:
    what `render` remembers of a conjunct is its encoding's alone."""
    def one_counter(top: int) -> Encoding:
        x = Var("x")
        step = Action("step", app(Op.LT, x, Const(top)), (Assign(x, app(Op.ADD, x, Const(1))),))
        return Encoding(Model(f"upto{top}", variables=(Variable("x", IntType(Const(0), Const(top)), init=(Const(0),)),),
                              actions=(step,)))
    small, large = one_counter(5), one_counter(9)
    assert small.cur.slots[0].eq(large.cur.slots[0])
    at_most_five = small.cur.slots[0] <= 5
    for _ in range(2):
        assert render(small, at_most_five) == "true (the declared ranges suffice)"
        assert render(large, at_most_five) == "x <= 5"


def test_violation_with_free_parameter_names_the_value_and_replays():
    claim = Invariant(id="active", expr=le(Index("hand", Var("active")), HAND_LIMIT))
    r = check(deck_game(None), claim, "bmc", Budget(rlimit=120_000_000, max_depth=30))
    assert r.verdict is Verdict.VIOLATED
    deck = dict(r.params)["DECK"]
    assert deck is not None and deck >= 1
    replay(layout(deck_game(deck).instantiate()), r.trace)
    # the same instance, explicitly: also violated, with a counterexample of the same length
    (ref,) = ExplicitEngine().check(deck_game(deck), [claim], Budget(rlimit=60_000_000))
    assert ref.verdict is Verdict.VIOLATED and len(ref.trace) == len(r.trace)


def test_reachability_proved_unreachable_for_all_values():
    claim = Reachable(id="hand-10", expr=eq(Index("hand", Const(0)), 10))   # outside 0..9: never
    r = check(deck_game(None), Reachable(id="passive-8", expr=conj(
        app(Op.NE, Var("active"), 0), app(Op.GE, Index("hand", Const(0)), 8))), "pdr")
    assert r.verdict is Verdict.VIOLATED and "for every value of DECK" in r.reason
    assert r.trace is None
    r = check(deck_game(None), claim, "kind")
    assert r.verdict is Verdict.VIOLATED


def test_termination_ranking_function_in_model_terms():
    r = check(deck_game(None), Terminates(id="turn", scope="turn"))
    assert r.verdict is Verdict.PROVED and r.engine == "ranking"
    text = r.evidence["ranking"]
    assert "phase" in text and "decreases" in text
    assert r.evidence["ranking_components"]


def test_game_termination_needs_an_invariant_and_finds_it():
    r = check(deck_game(None), Terminates(id="game", scope="game"))
    # "pass turn" only decreases the rank when a card was drawn this turn, which the declared
    # ranges alone do not say: the search strengthens its support with invariants from PDR, or
    # ranks with the draw's guard ("a card can be drawn" is 1 until the turn's draw), or takes the
    # invariant of the proof that no state is stuck (lemmas mined at the default DECK: "drawn or
    # phase == Draw", ...)
    assert r.verdict is Verdict.PROVED and r.engine == "ranking", r.reason
    assert "pile" in r.evidence["ranking"]
    assert "strengthened" in r.evidence.get("ranking_support", "") or " enabled]" in r.evidence["ranking"] \
        or "drawn" in r.evidence.get("invariant", ""), r.evidence


def test_no_ranking_function_is_unknown_and_auto_falls_back_to_a_lasso():
    claim = Terminates(id="game", scope="game")
    r = check(counter(), claim)
    assert r.verdict is Verdict.UNKNOWN and "ranking" in r.reason
    (a,) = AutoEngine().check(counter(), [claim], BUDGET)
    assert a.verdict is Verdict.VIOLATED and a.engine == "explicit/python" and a.trace.loop_start is not None


def test_auto_free_parameter_uses_symbolic_then_explicit_at_defaults():
    model = deck_game(None)
    results = AutoEngine().check(model, [passive_hand_limit(), Terminates(id="t", scope="turn")], BUDGET)
    assert [r.engine for r in results] == ["k-induction", "ranking"]
    assert all(r.verdict is Verdict.PROVED for r in results)
    assert "symbolic" in results[0].evidence["auto"]
    lasso = Terminates(id="g", scope="game")
    (r,) = AutoEngine().check(counter(), [lasso], BUDGET)
    assert r.engine == "explicit/python"


def test_auto_concrete_uses_explicit(monkeypatch):
    """Below the cap explicit search decides; beyond it Z3 proves the claim. The random runs in
    between cannot decide a claim that holds, and would spend their whole bound: fewer steps."""
    monkeypatch.setattr(walk, "STEPS", 16_000)
    budget = Budget(rlimit=60_000_000)
    (r,) = AutoEngine().check(deck_game(6), [passive_hand_limit()], budget)
    assert r.engine == "explicit/python" and r.verdict is Verdict.HOLDS
    (r,) = AutoEngine(caps=Caps.every_store(50)).check(deck_game(6), [passive_hand_limit()], budget)
    assert r.engine in ("k-induction", "pdr") and r.verdict is Verdict.HOLDS
    assert "explicit search stopped" in r.evidence["auto"]


def _indexed_model() -> Model:
    """x counts 0..3; reading a[x] is fine for x <= 2, a model error at x = 3."""
    x = Var("x")
    return Model(name="index-error", variables=(
        Variable("x", IntType(Const(0), Const(3)), init=(Const(0),)),
        Variable("a", IntType(Const(0), Const(1)), index=IntType(Const(0), Const(2)), init=(Const(0),))),
        actions=(Action("inc", guard=app(Op.LT, x, 3), effects=(Assign(x, app(Op.ADD, x, 1)),)),
                 Action("read", guard=eq(Index("a", x), 0), effects=(Assign(Index("a", Const(0)), Const(1)),))))


def test_model_error_is_unknown_with_a_trace():
    r = check(_indexed_model(), Invariant(id="x", expr=le(Var("x"), 3)), "bmc")
    assert r.verdict is Verdict.UNKNOWN and r.reason.startswith("model error")
    assert "out of range" in r.reason and len(r.trace) == 3
    (ref,) = ExplicitEngine().check(_indexed_model(), [Invariant(id="x", expr=le(Var("x"), 3))], BUDGET)
    assert ref.verdict is Verdict.UNKNOWN


def test_initial_value_outside_range_for_some_parameter_value():
    N = Param("N")
    model = Model(name="init-error", params=(ParamDecl("N", 5, lo=0, hi=9),), param_values=(("N", None),),
                  variables=(Variable("x", IntType(Const(0), N), init=(Const(3),)),),
                  actions=(Action("stay"),))
    r = check(model, Invariant(id="x", expr=le(Var("x"), 3)))
    assert r.verdict is Verdict.UNKNOWN and "initial states" in r.reason and "N=" in r.reason


def test_unsupported_claims_are_unknown():
    N = Param("N")
    body = le(Var("tokens"), Local("i"))
    q = Quant(QuantKind.EXISTS, "i", Const(0), N, body)        # a domain that grows with a free parameter
    r = check(param_model(None), Invariant(id="q", expr=q))
    assert r.verdict is Verdict.UNKNOWN and "cannot encode" in r.reason
    r = check(param_model(4), Ordering(id="o", pattern="absence", p=Event(action="earn")))
    assert r.verdict is Verdict.UNKNOWN and "does not decide" in r.reason


def test_obligation_proved_and_violated():
    # pending while x < 5 in the clamp counter: inc always makes progress... but flip loops forever
    r = check(counter(), Obligation(id="ob", pending=app(Op.LT, Var("x"), 5)))
    assert r.verdict is Verdict.UNKNOWN
    r = check(deck_game(None), Obligation(id="drawn", pending=conj(eq(Var("phase"), DRAW), neg(Var("drawn")),
                                                                   app(Op.GT, Var("pile"), 0))))
    assert r.verdict is Verdict.PROVED and r.engine == "ranking"


def test_a_trace_that_does_not_replay_is_an_internal_error(monkeypatch):
    def broken(enc, path):
        raise InternalError("the trace does not replay: step 1 is not enabled")
    monkeypatch.setattr(engine_module, "concretise", broken)
    r = check(counter(), Invariant(id="x", expr=le(Var("x"), 2)), "bmc")
    assert r.verdict is Verdict.UNKNOWN and r.reason.startswith("internal:")
    assert r.trace is None


def test_deadlock_claim_and_must_not_never_fires():
    from verifier.engines.symbolic.examples import stuck_model
    r = check(stuck_model(), DeadlockFree(id="dl"), "pdr")
    assert r.verdict is Verdict.VIOLATED and len(r.trace) == 2
    r = check(stuck_model(), Reachable(id="f", action="forbidden"), "kind")
    assert r.verdict is Verdict.VIOLATED and "never fires" in r.reason


def test_empty_end_and_final_states_have_no_successor():
    model = counter()
    final = Model(name="final", variables=model.variables, actions=model.actions, end=eq(Var("x"), 2))
    r = check(final, Reachable(id="x3", expr=eq(Var("x"), 3)), "pdr")
    assert r.verdict is Verdict.VIOLATED   # x stops at 2: the end of the game
    r = check(final, DeadlockFree(id="dl"), "kind")
    assert r.verdict is Verdict.PROVED     # the final state is not a deadlock
    assert FALSE is not None


def test_a_ranking_search_out_of_time_says_so():
    from verifier.engines.symbolic.core import Effort
    from verifier.engines.symbolic.encode import negate
    from verifier.engines.symbolic.ranking import TIMEOUT, synthesize

    enc = Encoding(deck_game(3).instantiate())
    ranking = synthesize(enc, list(enc.actions), negate(enc.end), enc.ranges(enc.cur), Effort(0))
    assert ranking.components is None and ranking.reason == TIMEOUT
