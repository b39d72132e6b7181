"""Step claims judged on the model's own complete compiled search (`compiled/moves.py`), against
today's way, the monitor product watched with the other monitored claims (in the python store):
random models, step claims mixed with ordering patterns and bounded responses, budgets that cut the
model's search short. The same verdicts, reasons, stops and traces (each replays on the designer's
model); a step claim judged without a product reports the model's search (states, transitions, depth)."""
from __future__ import annotations

from compiled_examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compiled_claims import STEPS, ordering
from test_compiled_store import MODELS

from verifier.engines.compiled.moves import first_breaks, judged_only
from verifier.engines.compiled.search import explore_compiled
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.ledger import Ledger
from verifier.ir.expr import FALSE, App, Const, Op, Var
from verifier.ir.model import Action, Assign, IntType, Model, Variable
from verifier.ir.props import BoundedResponse, DeadlockFree, Event, StepInvariant
from verifier.portfolio.plan import run_claims
from verifier.props.monitor import compile_together
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

ACTIONS = st.sampled_from(["act0", "act1", "act2", "act3"])


def counter(top: int) -> Model:
    """`n` from 0 to `top`: `step` adds one, `reset` (from 1 on) goes back to 0."""
    n = Var("n")
    return Model("counter", variables=(Variable("n", IntType(Const(0), Const(top)), init=(Const(0),)),),
                 actions=(Action("step", App(Op.LT, (n, Const(top))), (Assign(n, App(Op.ADD, (n, Const(1)))),)),
                          Action("reset", App(Op.GT, (n, Const(0))), (Assign(n, Const(0)),))))


@st.composite
def claims(draw) -> list:
    out: list = [draw(ordering(k)) for k in range(draw(st.integers(0, 1)))]
    for k in range(draw(st.integers(1, 3))):
        out.append(StepInvariant(id=f"step{k}", expr=draw(STEPS), actions=tuple(draw(st.lists(ACTIONS, max_size=2)))))
    if draw(st.booleans()):
        out.append(BoundedResponse(id="bounded", trigger=Event(action=draw(ACTIONS)),
                                   response=Event(action=draw(ACTIONS)), within=draw(st.integers(1, 3))))
    return out


@settings(max_examples=examples(6), deadline=None)
@given(MODELS, claims(), st.sampled_from([None, None, 3, 40]))
def test_step_claims_judged_on_the_models_search_find_what_the_product_finds(model, surface, max_states):
    """Against the product searched in the python store (the compiled store's product search is the
    same: test_compiled_store; compiling the product too would be another cold compile per draw)."""
    surface = [*surface, DeadlockFree(id="deadlock-free")]     # the model's own search, which the ledger keeps
    budget = Budget(max_states=max_states)
    want = run_claims(model, surface, ExplicitEngine(), budget)        # no ledger: the product
    ledger = Ledger.keeping([model.instantiate()])
    got = run_claims(model, surface, ExplicitEngine(store="compiled", ledger=ledger), budget, ledger=ledger)
    space = ledger.compiled_search_of(model.instantiate())
    errors = any("model error" in r.reason for r in want)
    for claim, w, g in zip(surface, want, got):
        assert (g.verdict, g.reason, g.stop) == (w.verdict, w.reason, w.stop), claim.id
        assert g.trace == w.trace, claim.id
        if g.trace is not None and not errors:
            replay(layout(model), g.trace)
        if "moves" in g.evidence:           # judged without a product: the model's complete search
            assert isinstance(claim, StepInvariant) and space is not None and space.complete
            assert (g.stats.states, g.stats.transitions, g.depth) == (len(space), space.transitions, space.max_depth)
    judged = space is not None and not errors and any(isinstance(c, StepInvariant) for c in surface)
    assert judged == any("moves" in g.evidence for g in got)


def test_the_first_breaking_move_is_the_first_in_bfs_order_and_firing_order():
    model = counter(6)
    claim = StepInvariant(id="small", expr=App(Op.LE, (Var("n"), Const(3))), actions=("step",))
    product, parts = compile_together(model, [claim])
    space = explore_compiled(model.instantiate())
    (first,) = first_breaks(space, product.instantiate(), [parts[0].monitor_vars[0]])
    assert first is not None
    i, label, target = first
    trace = space.trace_through(i, label, target)
    assert [dict(s)["n"] for s in trace.states] == [0, 1, 2, 3, 4]     # the shortest run past 3
    holding = StepInvariant(id="small", expr=App(Op.LE, (Var("n"), Const(6))), actions=("step",))
    product, parts = compile_together(model, [holding])
    assert first_breaks(space, product.instantiate(), [parts[0].monitor_vars[0]]) == [None]


def test_each_flag_keeps_its_own_first_break_while_the_others_are_looked_for():
    model = counter(6)
    early = StepInvariant(id="early", expr=App(Op.LE, (Var("n"), Const(2))), actions=("step",))   # from n = 2 on
    late = StepInvariant(id="late", expr=App(Op.LE, (Var("n"), Const(5))), actions=("step",))     # from n = 5
    never = StepInvariant(id="never", expr=App(Op.GE, (Var("n"), Const(0))))
    product, parts = compile_together(model, [early, late, never])
    space = explore_compiled(model.instantiate())
    found = first_breaks(space, product.instantiate(), [part.monitor_vars[0] for part in parts])
    assert found is not None and found[2] is None
    assert [dict(space.trace_through(*f).states[-2])["n"] for f in found[:2]] == [2, 5]


def test_flags_spread_over_several_words_each_keep_their_first_break():
    model = counter(80)             # 80 flags: the flags' product takes two words, the model one
    claims = [StepInvariant(id=f"below{k}", expr=App(Op.LE, (Var("n"), Const(k))), actions=("step",)) for k in range(80)]
    product, parts = compile_together(model, claims)
    space = explore_compiled(model.instantiate())
    found = first_breaks(space, product.instantiate(), [part.monitor_vars[0] for part in parts])
    assert found is not None and all(f is not None for f in found)
    assert [dict(space.trace_through(*f).states[-2])["n"] for f in found] == list(range(80))


def test_only_the_judged_actions_fire_in_the_flags_product():
    model = counter(6)
    claim = StepInvariant(id="small", expr=App(Op.LE, (Var("n"), Const(3))), actions=("step",))
    product, parts = compile_together(model, [claim])
    judged = judged_only(product.instantiate(), parts[0].monitor_vars)
    kept = [a.name for a in judged.actions if a.guard != FALSE]
    assert kept == ["step"]


def test_a_search_cut_short_leaves_the_step_claims_to_the_product():
    model = counter(50)
    claim = StepInvariant(id="small", expr=App(Op.LE, (Var("n"), Const(3))), actions=("step",))
    ledger = Ledger.keeping([model.instantiate()])
    (r,) = run_claims(model, [claim], ExplicitEngine(store="compiled", ledger=ledger), Budget(max_states=20),
                      ledger=ledger)
    assert "moves" not in r.evidence and ledger.compiled_search_of(model.instantiate()) is None
    assert r.verdict is Verdict.VIOLATED          # the product's search finds the break within its states
