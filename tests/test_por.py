"""Partial-order reduction (`engines/por.py`): the static independence relation and the
necessary enabling sets hold state by state on random models; the engine's verdicts are those
of the full search with and without --por, and every trace found under POR replays on the
unreduced model; the reduction reduces where actions are independent (dining philosophers) and
is named in the results."""
from __future__ import annotations

import json
from pathlib import Path
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st
from test_explicit_differential import bools, models
from tiers import examples

from verifier.cli import main as cli_main
from verifier.engines import por
from verifier.engines.bfsgen import packing_of
from verifier.engines.explicit import ExplicitEngine, explore
from verifier.engines.por import NAME, Stubborn, independence
from verifier.ir.expr import App, Const, Index, Local, Op, Var
from verifier.ir.model import Action, Assign, Choice, IntType, Model, Overflow, Variable
from verifier.ir.props import DeadlockFree, Invariant, Property, Reachable, Terminates
from verifier.lang import load_model
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import EvalError, Transition, layout, transitions
from verifier.trace import replay

ROOT = Path(__file__).resolve().parent.parent
PHILS = ROOT / "bench" / "models" / "phils12.yaml"
SETTINGS = settings(max_examples=examples(40), deadline=None)
STATES = st.data()

# Loosely coupled components (where the reduction has something to reduce): K counters a[j], each
# moved by its own actions, which now and then read or write a shared x, index a by x (may be out of
# range) or choose a value; claims compare one slot with a constant.
K = 3
CMP = st.sampled_from([Op.EQ, Op.NE, Op.LT, Op.GE])
SLOT = st.one_of(st.integers(0, K - 1).map(lambda j: Index("a", Const(j))), st.just(Var("x")))
ATOM = st.builds(lambda op, v, k: App(op, (v, Const(k))), CMP, SLOT, st.integers(0, 3))
POLICY = st.sampled_from(list(Overflow))


@st.composite
def component_action(draw, i: int) -> Action:
    """Counts a[i mod K] up to a bound (or, one in four, down to 0: cycles for the proviso)."""
    own = Index("a", Var("x")) if draw(st.integers(0, 5)) == 5 else Index("a", Const(i % K))
    choices = (Choice("n", IntType(Const(0), Const(1))),) if draw(st.integers(0, 3)) == 3 else ()
    down = draw(st.integers(0, 3)) == 3
    guard = [App(Op.GT, (own, Const(0))) if down else App(Op.LT, (own, Const(draw(st.integers(1, 3)))))]
    if draw(st.integers(0, 3)) == 3:
        guard.append(draw(ATOM))
    step = App(Op.SUB if down else Op.ADD, (own, Local("n") if choices else Const(1)))
    effects = [Assign(own, step)]
    if draw(st.integers(0, 3)) == 3:
        effects.append(Assign(Var("x"), draw(st.sampled_from([Const(0), Const(2), App(Op.ADD, (Var("x"), Const(1)))]))))
    return Action(f"c{i}", guard[0] if len(guard) == 1 else App(Op.AND, tuple(guard)), tuple(effects), choices)


@st.composite
def component_models(draw) -> Model:
    acts = tuple(draw(component_action(i)) for i in range(draw(st.integers(2, 6))))
    variables = (Variable("a", IntType(Const(0), Const(3)), index=IntType(Const(0), Const(K - 1)),
                          init=tuple(Const(draw(st.integers(0, 1))) for _ in range(K)), overflow=draw(POLICY)),
                 Variable("x", IntType(Const(0), Const(3)), init=(Const(0),), overflow=draw(POLICY)))
    end = draw(st.one_of(st.just(Const(0, is_bool=True)), ATOM))
    return Model("components", variables=variables, actions=acts, end=end)


COMPONENT_MODELS = component_models()
COMPONENT_CLAIMS = st.lists(ATOM, max_size=2)
RANDOM_MODELS = models()
ANY_MODELS = st.one_of(RANDOM_MODELS, COMPONENT_MODELS)


def _firings(lay, state) -> list[Transition] | None:
    try:
        return transitions(lay, state)
    except EvalError:
        return None


def _key(model: Model, ind, t: Transition) -> int:
    return ind.of(model.actions.index(t.action), t.choice)


@SETTINGS
@given(ANY_MODELS, STATES)
def test_independent_firings_commute_and_stay_enabled(model, data):
    lay = layout(model)
    ind = independence(lay)
    state = tuple(data.draw(st.integers(s.lo, s.hi)) for s in lay.slots)
    here = _firings(lay, state)
    if here is None:
        return
    moves = [t for t in here if t.target is not None]
    for f in moves:
        for g in moves:
            if ind.dependent[_key(model, ind, f)] >> _key(model, ind, g) & 1:
                continue
            after_f, after_g = _firings(lay, f.target), _firings(lay, g.target)
            if after_f is None or after_g is None:
                continue
            fg = [t.target for t in after_f if t.action == g.action and t.choice == g.choice]
            gf = [t.target for t in after_g if t.action == f.action and t.choice == f.choice]
            assert fg and gf and fg == gf, (f, g)


@SETTINGS
@given(ANY_MODELS, STATES)
def test_a_disabled_transition_stays_disabled_outside_its_enabling_set(model, data):
    lay = layout(model)
    ind = independence(lay)
    chooser = Stubborn(ind, 0)
    state = tuple(data.draw(st.integers(s.lo, s.hi)) for s in lay.slots)
    here = _firings(lay, state)
    if here is None or not here:
        return
    packed = packing_of(lay).pack(state)
    enabled = {_key(model, ind, t) for t in here if t.target is not None}
    for t in range(len(ind.transitions)):
        if t in enabled:
            continue
        try:
            nes = chooser._nes(t, packed)
        except EvalError:
            continue
        for u in here:
            if u.target is None or nes >> _key(model, ind, u) & 1:
                continue
            later = _firings(lay, u.target)
            if later is not None:
                assert all(_key(model, ind, x) != t or x.target is None for x in later), (t, u)


CLAIM_EXPRS = st.lists(bools(), min_size=1, max_size=2)

@SETTINGS
@given(COMPONENT_MODELS, COMPONENT_CLAIMS, st.integers(-1, 1))
def test_verdicts_on_loosely_coupled_models(model, exprs, fired):
    claims = _claims(model, exprs, fired)
    full = ExplicitEngine().check(model, claims, Budget())
    reduced = ExplicitEngine(por=True).check(model, claims, Budget())
    _same_verdicts(model, full, reduced)


def _claims(model: Model, exprs, fired: int | None = None) -> list[Property]:
    """Deadlock freedom, each expression as an invariant and as a reachable state, and the firing
    of each action (only of action number `fired` when given, -1: of none)."""
    out: list[Property] = [DeadlockFree(id="deadlock-free")]
    for k, e in enumerate(exprs):
        out += [Invariant(id=f"inv{k}", expr=e), Reachable(id=f"reach{k}", expr=e)]
    out += [Reachable(id=f"fires-{a.name}", action=a.name) for i, a in enumerate(model.actions)
            if fired is None or i == fired]
    return out


@SETTINGS
@given(RANDOM_MODELS, CLAIM_EXPRS)
def test_verdicts_are_those_of_the_full_search_and_traces_replay(model, exprs):
    claims = _claims(model, exprs)
    full = ExplicitEngine().check(model, claims, Budget())
    reduced = ExplicitEngine(por=True).check(model, claims, Budget())
    _same_verdicts(model, full, reduced)


def _same_verdicts(model: Model, full: list, reduced: list) -> None:
    errors = any("model error" in r.reason for r in full + reduced)
    for want, got in zip(full, reduced):
        if errors:          # each search stops at the first model error it meets: no contradiction
            assert {want.verdict, got.verdict} != {Verdict.HOLDS, Verdict.VIOLATED}, (want, got)
            continue
        assert got.verdict == want.verdict, (got.property.id, got.reason, want.reason)
        assert got.stats.states <= want.stats.states
        if got.trace is not None:
            replay(layout(model), got.trace)


@settings(max_examples=examples(25), deadline=None)
@given(COMPONENT_MODELS, COMPONENT_CLAIMS, st.integers(-1, 1), st.integers(0, 12))
def test_handing_over_to_the_full_search_keeps_the_verdicts(model, exprs, fired, after):
    """A search that reduces too little goes on with the generated full search; forced here after
    `after` states, whatever it reduced."""
    claims = _claims(model, exprs, fired)
    full = ExplicitEngine().check(model, claims, Budget())
    with patch.object(por, "TRIAL_STATES", after), patch.object(por, "TRIAL_SHARE", 2.0):
        reduced = ExplicitEngine(por=True).check(model, claims, Budget())
    _same_verdicts(model, full, reduced)


def test_a_search_with_nothing_to_reduce_is_the_full_search():
    n = 80                                           # 6,400 states: beyond the trial
    inc = [Action(f"inc_{v}", App(Op.LT, (Var(v), Const(n - 1))), (Assign(Var(v), App(Op.ADD, (Var(v), Const(1)))),))
           for v in ("x", "y")]
    model = Model("counters", variables=tuple(Variable(v, IntType(Const(0), Const(n - 1)), init=(Const(0),))
                                              for v in ("x", "y")), actions=tuple(inc))
    total = App(Op.ADD, (Var("x"), Var("y")))
    claims = [DeadlockFree(id="stuck"), Invariant(id="below", expr=App(Op.LT, (total, Const(2 * n - 3)))),
              Reachable(id="fires", action="inc_x")]
    for budget in (Budget(), Budget(max_states=5000)):
        full = ExplicitEngine().check(model, claims, budget)
        got = ExplicitEngine(por=True).check(model, claims, budget)
        assert [(r.verdict, r.stats.states, r.reductions) for r in got] == \
            [(r.verdict, r.stats.states, ()) for r in full]
        for r in got:
            if r.trace is not None:
                replay(layout(model), r.trace)


def test_philosophers_deadlock_is_found_in_fewer_states_and_replays():
    model = load_model(str(PHILS)).instantiate()
    claim = [DeadlockFree(id="deadlock-free")]
    full = ExplicitEngine().check(model, claim, Budget())[0]
    got = ExplicitEngine(por=True).check(model, claim, Budget())[0]
    assert got.verdict == full.verdict == Verdict.VIOLATED
    assert got.reductions == (NAME,) and full.reductions == ()
    assert got.stats.states < full.stats.states / 4
    assert got.trace is not None
    replay(layout(model), got.trace)


def test_a_claim_on_a_philosopher_makes_its_actions_visible():
    model = load_model(str(PHILS)).instantiate()
    eats = App(Op.EQ, (Index("ph", Const(0)), Const(2, enum="Ph")))
    claims = [Reachable(id="zero-eats", expr=eats), Invariant(id="never", expr=App(Op.NOT, (eats,)))]
    got = ExplicitEngine(por=True).check(model, claims, Budget())
    assert [r.verdict for r in got] == [Verdict.HOLDS, Verdict.VIOLATED]
    lay = layout(model)
    for r in got:
        assert r.trace is not None
        assert replay(lay, r.trace)[-1][lay.offsets["ph"][0]] == 2
    ind = independence(lay)
    visible = Stubborn(ind, 1 << lay.offsets["ph"][0]).visible
    assert {ind.transitions[t].choice for t in range(len(ind.transitions)) if visible >> t & 1} == {(("p", 0),)}


def test_graph_claims_are_not_reduced():
    model = load_model(str(PHILS)).instantiate()
    claims = [DeadlockFree(id="deadlock-free"), Terminates(id="ends", scope="game")]
    got = ExplicitEngine(por=True).check(model, claims, Budget())
    assert all(r.reductions == () for r in got)
    assert got[0].stats.states == len(explore(model))


def test_the_cli_names_the_reduction(tmp_path, capsys):
    claims = tmp_path / "phils.yaml"
    claims.write_text("model: phils\nclaims:\n  - id: stuck\n    says: Someone can always move.\n"
                      "    deadlock_free: true\n    expected: VIOLATED\n    why: All hold their left fork.\n")
    out = tmp_path / "out.json"
    for flags, want in ((["--por"], [NAME]), (["--por", "--no-reduce"], []), ([], [])):
        code = cli_main(["check", str(PHILS), "-p", str(claims), "--engine", "explicit", "--no-consistency",
                         "-q", "-f", "json", "-o", str(out), *flags])
        assert code == 0
        text = json.loads(out.read_text())
        assert _reductions(text) == [want], flags
    capsys.readouterr()


def _reductions(doc) -> list:
    found = []

    def walk(o):
        if isinstance(o, dict):
            if "verdict" in o and "reductions" in o:
                found.append(o["reductions"])
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(doc)
    return found
