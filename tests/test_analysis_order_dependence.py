"""order-dependence: Z3 over all in-range states, confirmed on reached states."""
from __future__ import annotations

import itertools

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st
from test_analysis_support import analyse, fixture, of_kind
from test_symbolic_diff import models
from test_symbolic_exprs import ENC
from tiers import examples

from verifier.analysis.context import Context
from verifier.analysis.order_dependence import Commutation, by_players, candidate_pairs, exclusive, symbolic_pairs
from verifier.engines.symbolic.encode import Encoding, as_bool
from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Param, Var
from verifier.ir.model import Action, Choice, IntType, Model
from verifier.lang import load_model
from verifier.resources import Budget
from verifier.semantics import Layout, State, actor_of, choice_values, fire, holds


def test_double_then_add_differs_from_add_then_double():
    found = of_kind(analyse("order_yes"), "order-dependence")
    assert set(found) == {"double|add_one"}
    f = found["double|add_one"]
    assert f.evidence["double then add_one"] == {"x": 3} and f.evidence["add_one then double"] == {"x": 4}
    assert f.evidence["confirmed_on_reached_state"] and f.engine == "z3"
    assert "do not say which comes first" in f.message
    assert [[s.action for s in t.steps] for t in f.traces] == [["double", "add_one"], ["add_one", "double"]]
    assert f.rules == ("Double: the score doubles", "Bonus: one more point")


def test_declared_order_is_respected():
    assert of_kind(analyse("order_declared"), "order-dependence") == {}


def test_commuting_and_mutually_exclusive_pairs_are_fine():
    assert of_kind(analyse("order_no"), "order-dependence") == {}


def test_unreachable_witness_is_dropped_for_fixed_parameters():
    assert of_kind(analyse("order_unreached", {"N": 0}), "order-dependence") == {}


def test_free_parameters_report_the_z3_witness():
    found = of_kind(analyse("order_unreached", {"N": None}), "order-dependence")
    f = found["wipe|copy"]
    assert not f.evidence["confirmed_on_reached_state"] and not f.traces
    assert f.scope.startswith("searched over all parameter values")
    assert f.evidence["wipe then copy"] != f.evidence["copy then wipe"]


def test_confirmed_when_the_parameters_make_it_reachable():
    f = of_kind(analyse("order_unreached", {"N": 2}), "order-dependence")["wipe|copy"]
    assert f.evidence["confirmed_on_reached_state"] and len(f.traces) == 2
    assert f.evidence["wipe then copy"] == {"y": 2} and f.evidence["copy then wipe"] == {"y": 0}


def test_candidate_pairs_skip_implicit_phase_changes_and_declared_orders():
    model = load_model(fixture("order_declared")).instantiate()
    assert candidate_pairs(model) == []
    model = load_model(fixture("order_yes")).instantiate()
    assert [(model.actions[a].name, model.actions[b].name) for a, b in candidate_pairs(model)] \
        == [("double", "add_one")]


# ---- the Z3 query against brute force over every in-range state

def _legal(lay: Layout, action, state: State, env) -> State | None:
    if holds(lay, lay.model.end, state) or not holds(lay, action.guard, state, env):
        return None
    return fire(lay, action, state, env).target


def _brute(lay: Layout, a: int, b: int) -> bool:
    x, y = lay.model.actions[a], lay.model.actions[b]
    ranges = [range(s.lo, s.hi + 1) for s in lay.slots]
    for state in itertools.product(*ranges):
        for ea in choice_values(lay, x, state):
            for eb in choice_values(lay, y, state):
                if by_players(x, y) and actor_of(lay, x, state, ea) == actor_of(lay, y, state, eb):
                    continue        # one player takes both: the order is theirs
                sa, sb = _legal(lay, x, state, ea), _legal(lay, y, state, eb)
                if sa is None or sb is None:
                    continue
                ab, ba = _legal(lay, y, sa, eb), _legal(lay, x, sb, ea)
                if ab is not None and ba is not None and ab != ba:
                    return True
    return False


@pytest.mark.parametrize("name", ["order_yes", "order_no", "order_unreached", "dead_no", "conflict_yes",
                                  "deadlock_plain", "variants_yes", "order_mixed"])
def test_z3_agrees_with_brute_force(name):
    model = load_model(fixture(name))
    ctx = Context.create(model, Budget())
    concrete = model.instantiate()
    pairs = candidate_pairs(concrete)
    witnesses = symbolic_pairs(ctx, pairs)
    lay = Layout(concrete)
    for a, b in pairs:
        assert ((a, b) in witnesses) == _brute(lay, a, b), (concrete.actions[a].name, concrete.actions[b].name)
    assert pairs


def test_a_pair_whose_choices_were_not_all_compared_is_confirmed_after_the_scan():
    """raise_x and reset_x differ only for their fifth choices, the 25th combination: more than
    a state's MAX_COMBOS, so the scan sets the state aside and compares every combination at the
    end, which confirms the pair on a reached state, with a trace for each order."""
    (found,) = of_kind(analyse("order_many"), "order-dependence").values()
    assert found.subject == "raise_x|reset_x" and found.evidence["confirmed_on_reached_state"] is True
    assert len(found.traces) == 2


@pytest.mark.parametrize("name", ["order_many", "order_no", "order_yes", "order_unreached", "order_declared"])
def test_states_set_aside_give_the_scans_findings(monkeypatch, name):
    """With every state set aside (no combination compared during the scan), the comparison at
    the end gives the scan's own findings: a pair whose set-aside states all commute is dropped,
    one that differs is confirmed on a reached state."""
    from verifier.analysis import order_dependence

    def found() -> dict:
        return {k: f.evidence["confirmed_on_reached_state"]
                for k, f in of_kind(analyse(name), "order-dependence").items()}
    want = found()
    monkeypatch.setattr(order_dependence, "MAX_COMBOS", 0)
    assert found() == want


# ---- answers shared by the readings of one rulebook (asked once, ahead of the readings)

def _witnesses(model, memo: dict) -> dict:
    ctx = Context.create(model, Budget(), memo)
    found = symbolic_pairs(ctx, candidate_pairs(model.instantiate()))
    return {pair: vars(w) for pair, w in found.items()}


def _readings(name: str):
    """The fixture as loaded, and a second reading where `score` adds one point fewer (a different
    query for each pair it is in) and `steal` is the same action."""
    from dataclasses import replace

    from verifier.ir.expr import App, Const, Op

    model = load_model(fixture(name))
    other = [replace(a, effects=tuple(replace(e, value=App(Op.SUB, (e.value, Const(1)))) for e in a.effects))
             if a.name == "score" else a for a in model.actions]
    return model, replace(model, actions=tuple(other))


def test_an_answer_asked_ahead_is_the_answer_a_reading_finds_alone(monkeypatch):
    """The readings' queries asked ahead, once each (`ask_ahead`), give each reading the pairs it
    finds with no answer given (the witness of each: the state Z3 picked asked ahead; which state
    Z3 picks of several may depend on what it was asked before); a reading given them asks Z3
    nothing more."""
    from verifier.analysis import order_dependence

    first, second = _readings("order_mixed")
    alone = [_witnesses(m, {}) for m in (first, second)]
    memo: dict = {}
    order_dependence.ask_ahead([first, second], Budget(), memo)

    def asked(*_args):
        raise AssertionError("a query asked again")
    monkeypatch.setattr(order_dependence._Asker, "ask", asked)
    shared = [_witnesses(m, memo) for m in (first, second)]
    assert [set(w) for w in shared] == [set(w) for w in alone] and set(alone[0])
    (answers,) = memo.values()
    for m, found in zip((first, second), shared):
        acts = m.instantiate().actions
        assert all(w == vars(answers[(acts[a], acts[b])].witness) for (a, b), w in found.items())


def test_different_queries_never_share_an_answer():
    """A pair whose action differs between readings is asked again for the reading where it
    differs (its answer differs: score adds one point fewer); the pairs of unchanged actions are
    asked once; a change of what every query shares (a variable's range) shares nothing."""
    from dataclasses import replace

    from verifier.analysis import order_dependence
    from verifier.ir.expr import Const
    from verifier.ir.model import IntType

    first, second = _readings("order_mixed")
    memo: dict = {}
    order_dependence.ask_ahead([first, second], Budget(), memo)
    (answers,) = memo.values()
    names = sorted(f"{a.name}|{b.name}" for a, b in answers)
    assert names == ["score|spend", "score|spend", "score|steal", "score|steal", "spend|steal", "steal|pass turn"]
    wider = replace(first, variables=tuple(replace(v, type=IntType(Const(0), Const(4))) if v.name == "tok" else v
                                           for v in first.variables))
    order_dependence.ask_ahead([wider], Budget(), memo)
    assert len(memo) == 2 and set(_witnesses(wider, memo)) == set(_witnesses(wider, {}))


def test_a_reading_given_answers_counts_their_units_against_its_total(monkeypatch):
    """A reading whose answers were asked ahead counts the units each spent against its own
    total: with a total of what its first two queries spent, it runs out after them, as it does
    asking them itself, and keeps only the pairs those two found."""
    from verifier.analysis import order_dependence

    model = load_model(fixture("order_mixed"))
    memo: dict = {}
    order_dependence.ask_ahead([model], Budget(), memo)
    (answers,) = memo.values()
    acts, pairs = model.instantiate().actions, candidate_pairs(model.instantiate())
    said = [answers[(acts[a], acts[b])] for a, b in pairs]
    monkeypatch.setattr(order_dependence, "TOTAL_UNITS", said[0].units + said[1].units)
    ctx = Context.create(model, Budget(), memo)
    found = symbolic_pairs(ctx, pairs)
    assert found == {pair: a.witness for pair, a in zip(pairs[:2], said) if a.witness is not None}
    assert f"ran out after 2 of {len(pairs)}" in ctx.cut_short and len(pairs) > 2


def test_a_query_z3_leaves_open_leaves_the_analyses_open(monkeypatch):
    """A pair whose query runs out of its units is not taken to commute: the analyses are cut
    short, naming the pair; a reading given an answer that spent more units than it may is cut
    the same way (asked there, the query would have run out)."""
    from verifier.analysis import order_dependence

    model = load_model(fixture("order_yes"))
    memo: dict = {}
    order_dependence.ask_ahead([model], Budget(), memo)
    monkeypatch.setattr(order_dependence, "QUERY_UNITS", 1)
    for answers in ({}, memo):
        ctx = Context.create(model, Budget(), answers)
        assert symbolic_pairs(ctx, candidate_pairs(model.instantiate())) == {}
        assert "Z3 did not decide whether double and add_one commute within 1 resource units" in ctx.cut_short


def test_two_actions_whose_guards_fix_a_variable_apart_are_answered_without_z3(monkeypatch):
    """Guards asking `x` for two different values (top-level conjuncts) are never both true: the
    pair is not asked, and Z3 asked all the same says unsat; guards asking `phase` for the same
    value are asked (and found order-dependent)."""
    from dataclasses import replace

    from verifier.analysis import order_dependence
    from verifier.ir.expr import Const, Var, conj, eq

    model = load_model(fixture("order_yes"))

    def fixing(var: str, values: dict) -> Model:
        return replace(model, actions=tuple(replace(a, guard=conj(eq(Var(var), Const(values[a.name])), a.guard))
                                            if a.name in values else a for a in model.actions))
    apart, same = fixing("x", {"double": 2, "add_one": 3}), fixing("phase", {"double": 0, "add_one": 0})
    assert order_dependence.exclusive(*(a for a in apart.actions if a.name in ("double", "add_one")))
    assert not order_dependence.exclusive(*(a for a in same.actions if a.name in ("double", "add_one")))
    assert _witnesses(same, {}) and _witnesses(apart, {}) == {}
    monkeypatch.setattr(order_dependence, "exclusive", lambda *_: False)
    assert _witnesses(apart, {}) == {}          # Z3's own answer: unsat



def _guards() -> st.SearchStrategy[Expr]:
    """Conjunctions of one to three bounds on a few terms of test_symbolic_exprs' model (values
    read as conditions, comparisons with constants and between terms, negated or not)."""
    terms = st.sampled_from([Var("x"), Var("b"), Index("arr", Const(1)), Index("arr", Var("x")),
                             App(Op.ADD, (Var("x"), Const(1))), App(Op.MIN, (Var("x"), Index("arr", Const(0))))])
    ops = st.sampled_from([Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE])
    values = st.integers(-1, 3).map(Const)
    compared = st.one_of(st.builds(lambda o, t, v: App(o, (t, v)), ops, terms, values),
                         st.builds(lambda o, v, t: App(o, (v, t)), ops, values, terms),
                         st.builds(lambda o, t, u: App(o, (t, u)), ops, terms, terms),
                         terms)
    atoms = st.one_of(compared, compared.map(lambda a: App(Op.NOT, (a,))))
    return st.lists(atoms, min_size=1, max_size=3).map(lambda xs: xs[0] if len(xs) == 1 else App(Op.AND, tuple(xs)))


GUARDS = _guards()


def test_guards_said_exclusive_are_never_both_true():
    """Hypothesis: where `exclusive` says two guards' top-level conjuncts cannot all hold, Z3 finds
    no state (in range or not) where both guards are true."""
    said = []

    @settings(max_examples=examples(400), deadline=None)
    @given(GUARDS, GUARDS)
    def check(g1, g2):
        if exclusive(Action("a", guard=g1), Action("b", guard=g2)):
            said.append((g1, g2))
            s = z3.Solver()
            s.add(as_bool(ENC.value(g1, ENC.cur)), as_bool(ENC.value(g2, ENC.cur)))
            assert s.check() == z3.unsat, (g1, g2)

    check()
    assert len(said) > examples(400) // 10          # the strategy makes exclusive pairs


def test_exclusive_reads_bounds_on_one_term_and_nothing_chosen():
    hand, deck, done, limit = Index("hand", Var("active")), Index("deck", Var("active")), Var("done"), Param("MAX")

    def apart(g1, g2, *choices) -> bool:
        return exclusive(Action("a", guard=g1, choices=choices), Action("b", guard=g2, choices=choices))

    assert apart(App(Op.LT, (hand, limit)), App(Op.GE, (hand, limit)))
    assert apart(App(Op.LT, (hand, limit)), App(Op.LE, (limit, hand)))
    assert apart(done, App(Op.NOT, (done,)))
    assert apart(App(Op.GT, (deck, Const(0))), App(Op.EQ, (deck, Const(0))))
    assert apart(App(Op.LT, (deck, Const(2))), App(Op.NOT, (App(Op.LE, (deck, Const(1))),)))
    assert apart(App(Op.AND, (App(Op.GE, (deck, Const(2))), App(Op.LE, (deck, Const(3))))),
                 App(Op.AND, (App(Op.NE, (deck, Const(2))), App(Op.NE, (deck, Const(5))), App(Op.GE, (Const(2), deck)))))
    assert not apart(App(Op.GT, (deck, Const(0))), App(Op.GE, (deck, Const(1))))
    assert not apart(deck, App(Op.EQ, (deck, Const(2))))                 # a count read as a condition: != 0
    assert not apart(App(Op.LT, (hand, limit)), App(Op.GE, (hand, Param("OTHER"))))
    k = Choice("k", IntType(Const(0), Const(3)))
    assert not apart(App(Op.EQ, (Local("k"), Const(0))), App(Op.EQ, (Local("k"), Const(1))), k)   # each its own k
    assert not apart(App(Op.EQ, (Index("arr", Local("k")), Const(0))), App(Op.EQ, (Index("arr", Local("k")), Const(1))), k)


def _noncommuting(model: Model) -> set:
    """The reference: each candidate pair's query asked of a fresh usual solver."""
    enc = Encoding(model)
    commutation = Commutation(enc)
    out = set()
    for a, b in candidate_pairs(model.instantiate()):
        s = z3.Solver()
        s.add(enc.param_constraints(), enc.ranges(enc.cur), commutation.noncommuting(a, b))
        said = s.check()
        assert said != z3.unknown
        if said == z3.sat:
            out.add((a, b))
    return out


@settings(max_examples=examples(60), deadline=None)
@given(models())
def test_the_pairs_found_are_those_the_usual_solver_finds(model):
    """Hypothesis on random models (free parameter or not): the pairs answered without Z3
    (`exclusive`), or by a `z3.SimpleSolver` first and the usual solver where it does not say
    unsat, are the pairs whose query the usual solver alone finds satisfiable."""
    ctx = Context.create(model, Budget(), {})
    assert set(symbolic_pairs(ctx, candidate_pairs(model.instantiate()))) == _noncommuting(model)
    assert not ctx.cut_short
