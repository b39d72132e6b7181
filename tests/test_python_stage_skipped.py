"""The store plan that leaves the python stage out (`stores.passes_switch`): a search of a model
checked above its declared defaults, whose slots allow more states than the switch, starts in the
compiled store. The rule's decisions case by case (above the defaults, at them, a model the
compiled store cannot hold, a store named, too few states possible, a cap at the switch); the
shipped games: every printed reading above its defaults leaves it out, none at the defaults (the
main job compiles nothing); and the direct plan decides as the staged one: the same verdicts,
reasons, depths and traces on random models (Hypothesis), and the states Z3 mines where a search
stops are those the python stage would have stored (a sample, and end to end through the auto engine)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from test_auto_compiled import TINY
from test_auto_store import _wide, order_model
from test_compiled_store import CLAIMS, MODELS
from tiers import examples

from verifier.engines.compiled.numbagen import MAX_WORDS
from verifier.engines.compiled.search import explore_compiled
from verifier.engines.explicit import explore
from verifier.ir.expr import App, Const, Op, Var
from verifier.ir.model import IntType, Model, ParamDecl, Variable
from verifier.ir.props import Invariant, Obligation, Terminates
from verifier.portfolio import stores
from verifier.portfolio.auto import MINE_STATES, AutoEngine, FirstStates
from verifier.portfolio.stores import COMPACT_STATES, COMPILED_STATES, SWITCH_STATES, Caps, Stage, Store, choose_store
from verifier.resources import Budget
from verifier.runner import RunOptions, claims_for, load_variants

ROOT = Path(__file__).resolve().parent.parent
PYTHON, COMPACT, COMPILED = Store.PYTHON, Store.COMPACT, Store.COMPILED
GAMES = ["aeons_end", "alice", "alpha_clash", "shadow_era", "wtactics"]


def above(model: Model, value: int = 2) -> Model:
    """`model` with a parameter (read nowhere) declared with default 1, at `value`."""
    return replace(model, params=(ParamDecl("P", 1),), param_values=(("P", value),))


def test_above_the_defaults_a_search_starts_in_the_compiled_store():
    wide = above(_wide(None))                  # five counters of 0..10000: far more states than the switch
    plan = choose_store(wide, Budget())
    assert plan.stages == (Stage(COMPILED, COMPILED_STATES),) and plan.skipped == SWITCH_STATES
    assert choose_store(wide, Budget(max_states=10**6)).stages == (Stage(COMPILED, 10**6),)


def test_at_or_below_the_defaults_the_python_stage_stays():
    for model in (_wide(None), above(_wide(None), 1), above(_wide(None), 0)):
        plan = choose_store(model, Budget())
        assert plan.stages == (Stage(PYTHON, SWITCH_STATES), Stage(COMPILED, COMPILED_STATES)) and not plan.skipped


def test_a_model_the_compiled_store_cannot_hold_keeps_the_python_stage():
    many = above(Model("many", variables=tuple(Variable(f"v{i}", IntType(Const(0), Const(2**62)), init=(Const(0),))
                                               for i in range(MAX_WORDS + 1))))
    assert choose_store(many, Budget()).stages == (Stage(PYTHON, SWITCH_STATES), Stage(COMPACT, COMPACT_STATES))
    assert choose_store(above(_wide(IntType(Const(0), Const(4)))), Budget()).stages == (Stage(PYTHON, 2_000_000),)


def test_a_named_store_is_used_as_given():
    wide = above(_wide(None))
    assert choose_store(wide, Budget(), named=PYTHON).stages == (Stage(PYTHON, 2_000_000),)
    assert choose_store(wide, Budget(), named=COMPILED) == stores.StorePlan((Stage(COMPILED, COMPILED_STATES),))


def test_a_model_with_too_few_states_or_a_cap_at_the_switch_keeps_the_python_stage():
    small = above(Model("small", variables=(Variable("x", IntType(Const(0), Const(499)), init=(Const(0),)),
                                            Variable("y", IntType(Const(0), Const(499)), init=(Const(0),)))))
    assert stores.states_bound(small.instantiate(), SWITCH_STATES) == 250_000 and not stores.passes_switch(small)
    assert [s.store for s in choose_store(small, Budget()).stages] == [PYTHON, COMPILED]
    wide = above(_wide(None))
    assert choose_store(wide, Budget(max_states=SWITCH_STATES)).stages == (Stage(PYTHON, SWITCH_STATES),)
    assert choose_store(wide, Budget(), caps=Caps(switch=2_000_000)).stages == (Stage(PYTHON, 2_000_000),)


def test_a_monitor_product_of_a_search_past_the_python_store_starts_where_it_ended():
    wide = above(_wide(None))
    plan = choose_store(wide, Budget(), extends=COMPILED, caps=Caps().for_product(10**7))
    assert plan.stages == (Stage(COMPILED, 3 * 10**7),) and not plan.skipped


@pytest.mark.parametrize("game", GAMES)
def test_the_shipped_games_leave_the_python_stage_out_at_their_printed_numbers_only(game):
    """At the defaults (the main job's) every search keeps the python stage, so nothing new is
    compiled; at the printed numbers each reading above its defaults leaves it out (Alpha Clash
    prints none)."""
    path = str(ROOT / "models" / f"{game}.yaml")
    for printed in (False, True):
        options = RunOptions(printed=printed)
        for model in load_variants(path, options)[0]:
            claims_for(path, model, options)
            plan = choose_store(model.instantiate(), Budget())
            assert bool(plan.skipped) == (printed and game != "alpha_clash"), (game, printed, model.variant)


GRAPH_CLAIMS = [Terminates(id="t", scope="game"), Obligation(id="o", pending=App(Op.LE, (Var("x"), Const(1))))]


@settings(max_examples=examples(3), deadline=None)
@given(MODELS)
def test_the_direct_plan_decides_as_the_staged_plan(model):
    """The same claims with the python stage (up to two states, then the compiled store) and without
    it: the same verdicts, reasons, depths and traces; the direct plan's verdicts all the compiled
    store's, with the evidence saying why."""
    claims = CLAIMS + GRAPH_CLAIMS
    staged = AutoEngine(caps=TINY).check_explicit(model, claims, Budget())
    with mock.patch.object(stores, "passes_switch", lambda concrete, switch: True):
        direct = AutoEngine(caps=TINY).check_explicit(model, claims, Budget())
    errors = any("model error" in r.reason for r in staged + direct)
    for s, d in zip(staged, direct):
        assert (d.verdict, d.reason, d.depth, d.trace) == (s.verdict, s.reason, s.depth, s.trace), s.property.id
        if not errors:
            assert d.engine == "explicit/compiled" and "no python stage" in d.evidence["auto"], s.property.id


def test_z3_mines_the_states_the_python_stage_would_have_stored():
    """Where the search stops (here the compiled store's first states of order.yaml, the python
    stage's cap lowered), the sample Z3 mines is the python stage's own."""
    model, _ = order_model()
    concrete = model.instantiate()
    whole = explore_compiled(concrete, Budget())
    for switch in (1, 7, len(whole) // 2, len(whole)):
        want = explore(concrete, Budget(max_states=switch), symmetric=True).sample(MINE_STATES)
        got = FirstStates(whole, switch).sample(MINE_STATES)
        assert np.array_equal(got, want), switch
        assert np.array_equal(FirstStates(whole, switch).sample(3),
                              explore(concrete, Budget(max_states=switch), symmetric=True).sample(3))


def test_a_stopped_direct_search_gives_z3_the_python_stages_states():
    """order.yaml's 41 states, the switch at 7 and the compiled store's cap at 20: the staged search
    stops in the compiled store, and so does the direct one; Z3 is handed the same states to mine
    and the claims end alike."""
    model, _ = order_model()
    claims = [Invariant(id="holds", expr=App(Op.LE, (Const(0), Const(1)))),
              Invariant(id="few-rounds", expr=App(Op.LE, (Var("rounds"), Const(1))))]
    caps = Caps(switch=7, compiled=20)
    staged = AutoEngine(caps=caps)
    want = staged.check(model, claims, Budget())
    direct = AutoEngine(caps=caps)
    with mock.patch.object(stores, "passes_switch", lambda concrete, switch: True):
        got = direct.check(model, claims, Budget())
    assert [(r.verdict, r.reason, r.trace) for r in got] == [(r.verdict, r.reason, r.trace) for r in want]
    ((shape, (mined, _memo)),) = staged._explored.items()
    assert len(mined) == 7 and np.array_equal(direct._explored[shape][0], mined)
