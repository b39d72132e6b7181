"""Step claims, ordering patterns and bounded responses on the compiled store against the python
store: their monitor products (`props/monitor.py`) are models the compiled store searches like any
other, the liveness parts of the patterns decided on its state graph (`compiled/graph.py`). Random
models and claims through `portfolio.plan.run_claims`: the same verdicts, reasons, depths, states and
traces (each replays on the designer's model), every product's verdict decided by the compiled store."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_compiled_store import MODELS
from tiers import examples

from verifier.engines.explicit import ExplicitEngine
from verifier.ir.expr import App, Const, Op, Var
from verifier.ir.props import BoundedResponse, Event, Ordering, StepInvariant
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.semantics import layout
from verifier.trace import replay

ACTIONS = st.sampled_from(["act0", "act1", "act2", "act3"])
PATTERNS = st.sampled_from(["absence", "existence", "universality", "precedence", "response", "bounded-existence"])
SCOPES = st.sampled_from(["globally", "before", "after", "between", "after-until"])
STEPS = st.sampled_from([App(Op.LE, (Var("x"), App(Op.ADD, (Var("prev:x"), Const(1))))),
                         App(Op.NE, (Var("y"), Var("prev:y"))),
                         App(Op.GE, (Var("x"), Var("prev:x")))])


@st.composite
def ordering(draw, k: int) -> Ordering:
    pattern = draw(PATTERNS)
    p = Event(expr=App(Op.LE, (Var("x"), Const(draw(st.integers(0, 2)))))) if pattern == "universality" \
        else Event(action=draw(ACTIONS))
    return Ordering(id=f"o{k}", pattern=pattern, scope=draw(SCOPES), p=p, s=Event(action=draw(ACTIONS)),
                    q=Event(action=draw(ACTIONS)), r=Event(action=draw(ACTIONS)),
                    bound=draw(st.integers(0, 2)) if pattern == "bounded-existence" else None,
                    fairness=draw(st.lists(ACTIONS, max_size=1).map(tuple)))


@st.composite
def claims(draw) -> list:
    out: list = [ordering(k) for k in range(draw(st.integers(1, 2)))]
    out = [draw(o) for o in out]
    out.append(StepInvariant(id="step", expr=draw(STEPS), actions=tuple(draw(st.lists(ACTIONS, max_size=1)))))
    if draw(st.booleans()):
        out.append(BoundedResponse(id="bounded", trigger=Event(action=draw(ACTIONS)),
                                   response=Event(action=draw(ACTIONS)), within=draw(st.integers(1, 3))))
    return out


@settings(max_examples=examples(4), deadline=None)
@given(MODELS, claims())
def test_monitored_claims_agree_with_the_python_store(model, surface):
    want = run_claims(model, surface, ExplicitEngine(), Budget())
    got = run_claims(model, surface, ExplicitEngine(store="compiled"), Budget())
    errors = any("model error" in r.reason for r in want)
    for w, g in zip(want, got):
        assert (g.verdict, g.reason, g.stop, g.depth, g.stats.states) == (w.verdict, w.reason, w.stop, w.depth,
                                                                           w.stats.states)
        assert g.trace == w.trace
        assert g.engine == "explicit/compiled", g.evidence
        if g.trace is not None and not errors:
            replay(layout(model), g.trace)
