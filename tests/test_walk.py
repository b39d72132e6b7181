"""Random runs as witnesses: they only ever answer with a trace that replays, and never
contradict the complete explicit search; `auto` uses them where its capped search stops."""
from __future__ import annotations

from dataclasses import replace

from hypothesis import event, given, settings
from hypothesis import strategies as st
from test_reduce_symmetry import MODELS, claims
from tiers import examples

from verifier.engines import walk
from verifier.engines.explicit import ExplicitEngine
from verifier.portfolio.auto import AutoEngine
from verifier.portfolio.stores import Caps
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

RUN_STEPS = 4_000   # per drawn case; the runs stop once every claim is decided, and on the CI sample
                    # 0.05 s decides what 0.1 s decided

@settings(max_examples=examples(30), deadline=None)
@given(MODELS, st.data())
def test_random_runs_agree_with_the_complete_search(model, data):
    model = replace(model, symmetry=None)
    props = [p for p in data.draw(claims(model.players)) if p.kind in ("invariant", "reachable")]
    exact = {r.property.id: r.verdict for r in ExplicitEngine().check(model, props, Budget())}
    lay = layout(model)
    for r in walk.check(model, props, RUN_STEPS):
        event(f"{r.property.kind}: {r.verdict.value}")
        assert r.verdict in (Verdict.UNKNOWN, exact[r.property.id])
        if r.verdict is not Verdict.UNKNOWN:
            assert r.verdict in (Verdict.VIOLATED, Verdict.HOLDS) and r.trace is not None
            replay(lay, r.trace)


def test_auto_uses_random_runs_beyond_its_state_cap(monkeypatch):
    """The runs reach x = 40 and x = 50 at once; "in-range" holds, which no run can show, so they
    would go on for their whole time bound (5 s): 1 s keeps the step (the first run takes 50 steps)."""
    from verifier.ir.expr import App, Const, Op, Var
    from verifier.ir.model import Action, Assign, IntType, Model, Variable
    from verifier.ir.props import Invariant, Reachable

    x = Var("x")
    model = Model("counter", variables=(Variable("x", IntType(Const(0), Const(50)), init=(Const(0),)),),
                  actions=(Action("up", App(Op.LT, (x, Const(50))), (Assign(x, App(Op.ADD, (x, Const(1)))),)),))
    props = [Reachable(id="top", expr=App(Op.EQ, (x, Const(50)))),
             Invariant(id="below", expr=App(Op.LT, (x, Const(40)))),
             Invariant(id="in-range", expr=App(Op.LE, (x, Const(50))))]
    monkeypatch.setattr(walk, "STEPS", 80_000)
    results = AutoEngine(caps=Caps.every_store(10)).check(model, props, Budget())
    by_id = {r.property.id: r for r in results}
    assert (by_id["top"].verdict, by_id["top"].engine) == (Verdict.HOLDS, "walk")
    assert (by_id["below"].verdict, by_id["below"].engine) == (Verdict.VIOLATED, "walk")
    assert by_id["in-range"].engine != "walk"          # holding needs a proof, not a run
    for r in results:
        if r.trace is not None:
            replay(layout(model), r.trace)
