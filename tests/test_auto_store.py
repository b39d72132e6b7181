"""The auto engine's choice of store (`portfolio.stores`) for a model the compiled store cannot hold:
past the switch its python-store search hands the state claims to the compact store (and the
monitor products of that model go there directly), with the verdicts and shortest traces of the
python store; termination and obligation claims stay with the python store; a store the user
names is used as given; a compact search that stops leaves its claims UNKNOWN. The switch is
lowered here so that it happens on tiny models (and their levels count as wide enough for the
compact store), and the compiled store cannot hold them (`compiles` says no: a model it can hold
goes on in it, `test_auto_compiled.py`)."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from test_compact_store import CLAIMS
from test_explicit_differential import models
from tiers import examples

from verifier.engines import compact
from verifier.engines.base import SearchOptions
from verifier.engines.explicit import ExplicitEngine
from verifier.ir.expr import App, Const, Index, Op, Var
from verifier.ir.model import Action, Assign, IntType, Model, Variable
from verifier.ir.props import Invariant
from verifier.lang import load_model, load_properties
from verifier.portfolio import stores
from verifier.portfolio.auto import AutoEngine
from verifier.portfolio.plan import run_claims
from verifier.portfolio.stores import Caps
from verifier.props.monitor import compile_together
from verifier.resources import Budget, StopKind
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

FIX = Path(__file__).parent / "fixtures" / "props"
SWITCH = 5           # far below the fixture's 41 reachable states


@pytest.fixture(autouse=True)
def compact_past_the_switch(monkeypatch):
    """Narrow levels pay off in the compact store, and the compiled store holds no model."""
    monkeypatch.setattr(compact, "LEVEL_COST", 0)
    monkeypatch.setattr(stores, "compiles", lambda model: False)


def decide(model, claims, engine, budget=Budget()):
    """The claims as the runner decides them (monitored claims on their products, the capped
    search of a product shared by several)."""
    return run_claims(model, claims, engine, budget)


def order_model():
    model = load_model(str(FIX / "order.yaml"), variant="strict")
    return model, load_properties(str(FIX / "order_props.yaml"), model)


def test_past_the_switch_the_compact_store_decides_as_the_python_store_does():
    model, claims = order_model()
    want = {r.property.id: r for r in decide(model, claims, ExplicitEngine())}
    lay = layout(model.instantiate())
    for r in decide(model, claims, AutoEngine(caps=Caps(switch=SWITCH))):
        w = want[r.property.id]
        assert (r.verdict, r.trace) == (w.verdict, w.trace) and r.engine.startswith("explicit/"), r.property.id
        if r.trace is not None:
            replay(lay, r.trace)
        if r.property.kind == "termination":       # the lasso search needs the python store's edges
            assert "store" not in r.evidence and "python store" in r.evidence["auto"]
        elif r.property.id != "reap-answered":     # (a response: its liveness part is an obligation)
            assert r.evidence["store"] == "compact", r.property.id   # monitor products go there directly
            assert "compact store" in r.evidence["auto"], r.property.id


def test_below_the_switch_nothing_changes():
    model, claims = order_model()
    for r in decide(model, claims, AutoEngine()):
        assert "store" not in r.evidence and r.evidence["auto"] == "explicit: concrete instance", r.property.id


def test_a_store_the_user_names_is_used_as_given():
    model, claims = order_model()
    engine = AutoEngine(caps=Caps(switch=SWITCH), search=SearchOptions(store="python"))
    for r in decide(model, claims, engine):
        assert "store" not in r.evidence, r.property.id


def holds() -> Invariant:
    return Invariant(id="holds", expr=App(Op.LE, (Const(0), Const(1))))


def test_a_stopped_compact_search_leaves_its_claims_unknown():
    model, _ = order_model()
    (r,) = AutoEngine(caps=Caps(switch=SWITCH)).check_explicit(model, [holds()], Budget(max_states=SWITCH + 3))
    assert (r.verdict, r.evidence["store"]) == (Verdict.UNKNOWN, "compact")
    assert r.reason == f"exploration incomplete: the search stopped at {SWITCH + 3:,} states (--max-states {SWITCH + 3})"
    assert r.stop is not None and r.stop.kind is StopKind.STATES


def test_a_cap_the_engine_chose_is_not_called_max_states():
    model, _ = order_model()
    (r,) = AutoEngine(caps=Caps(python=SWITCH + 3, switch=SWITCH, compact=SWITCH + 3)).check_explicit(model, [holds()], Budget())
    assert r.verdict is Verdict.UNKNOWN
    assert r.reason == f"exploration incomplete: the search stopped at {SWITCH + 3:,} states (the compact store's cap)"


@settings(max_examples=examples(10), deadline=None)
@given(models())
def test_the_switch_gives_the_python_stores_verdicts_and_traces(model):
    """Differential on random models (the compact store's own strategy): the auto engine's
    explicit search, switching at two states, against the python store's complete search."""
    want = ExplicitEngine().check(model, CLAIMS, Budget())
    got = AutoEngine(caps=Caps(switch=2)).check_explicit(model, CLAIMS, Budget())
    errors = any("model error" in r.reason for r in want + got)   # each store stops where it meets one
    lay = layout(model.instantiate())
    for w, g in zip(want, got):
        if not errors:
            assert (g.verdict, g.reason, g.stats.states) == (w.verdict, w.reason, w.stats.states), g.property.id
            replay(lay, g.trace) if g.trace is not None else None
        if g.trace is not None and w.trace is not None:
            assert g.trace == w.trace


def test_a_shared_product_stopped_short_sends_each_claims_product_to_the_symbolic_engine():
    model, claims = order_model()
    shared = [c for c in claims if c.kind == "ordering"]
    product, parts = compile_together(model, shared)
    engine = AutoEngine(caps=Caps.every_store(5))         # the store's own cap, not the runner's, stops it
    out = engine.check_explicit(product, [c for part in parts for c in part.claims], Budget())
    assert {r.verdict for r in out} == {Verdict.UNKNOWN}
    assert engine.stopped_at_cap(model)
    (r,) = engine.check(model, shared[:1], Budget())
    assert r.evidence["auto"].startswith("symbolic first: an explicit search of the model it extends stopped after")


def test_no_python_search_of_the_termination_claims_that_cannot_finish():
    model, claims = order_model()
    ends = [c for c in claims if c.kind == "termination"]
    python_cap = 20                                        # the python store's cap, below the 41 states
    for r in AutoEngine(caps=Caps(python=python_cap, switch=SWITCH)).check_explicit(model, ends + [holds()], Budget()):
        if r.property.kind == "termination":               # the first search's results stand
            assert r.verdict is Verdict.UNKNOWN and "the compact store found 41 states, past its cap of 20" in r.reason
        else:
            assert (r.verdict, r.evidence["store"]) == (Verdict.HOLDS, "compact")


def _wide(index: IntType | None) -> Model:
    """Five 14-bit counters (70 bits): as five variables, or as one array variable."""
    up = Action("up", App(Op.LT, (Index("v", Const(0)) if index else Var("v0"), Const(3))),
                (Assign(Index("v", Const(0)) if index else Var("v0"),
                        App(Op.ADD, (Index("v", Const(0)) if index else Var("v0"), Const(1)))),))
    if index is not None:
        return Model("wide", variables=(Variable("v", IntType(Const(0), Const(10_000)), index=index,
                                                 init=(Const(0),)),), actions=(up,))
    return Model("wide", variables=tuple(Variable(f"v{i}", IntType(Const(0), Const(10_000)), init=(Const(0),))
                                         for i in range(5)), actions=(up,))


def test_a_state_of_two_words_goes_to_the_compact_store_but_not_to_workers():
    wide = _wide(None)
    (asked,) = ExplicitEngine(store="compact").check(wide, [holds()], Budget())
    assert (asked.verdict, asked.evidence["store"]) == (Verdict.HOLDS, "compact")
    (chosen,) = AutoEngine(caps=Caps(switch=2)).check_explicit(wide, [holds()], Budget())
    assert (chosen.verdict, chosen.evidence["store"]) == (Verdict.HOLDS, "compact")
    (workers,) = ExplicitEngine(workers=2).check(wide, [holds()], Budget())
    assert workers.verdict is Verdict.HOLDS and workers.evidence["store"].startswith("python: the state is wider")


def test_a_variable_wider_than_a_word_stays_in_the_python_store_and_says_so():
    wide = _wide(IntType(Const(0), Const(4)))
    (asked,) = ExplicitEngine(store="compact").check(wide, [holds()], Budget())
    assert asked.verdict is Verdict.HOLDS and asked.evidence["store"].startswith("python: the state does not fit")
    (chosen,) = AutoEngine(caps=Caps(switch=2)).check_explicit(wide, [holds()], Budget())
    assert chosen.verdict is Verdict.HOLDS and "store" not in chosen.evidence


class _Probe(list):
    seconds = 1.0


