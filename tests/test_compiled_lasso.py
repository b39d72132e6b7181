"""Termination and obligations on the compiled store (`engines/compiled/graph.py`) against the
python store on random models: the same verdicts, reasons, stops and lassos (each replays, its
loop closes), with weak and strong fairness, under budgets, by either way to the components
(`lasso.LARGE_REGION`); the state graph recorded by the compiled search and the one rebuilt in
compiled code after it are the python store's, edge for edge, with the same lassos (on the same draws,
with the module the engine compiled); a memory cut
while the graph is recorded leaves the claim UNKNOWN with its reason; a symmetric model of several
words (which the compiled store does not reduce) keeps them on the python store and says why."""
from __future__ import annotations

import re
from dataclasses import replace
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compact_store import counter, widened
from test_compiled_store import BUDGETS, MODELS
from test_explicit_differential import bools
from tiers import examples

from verifier.engines import lasso
from verifier.engines.compiled import search
from verifier.engines.compiled.graph import state_graph
from verifier.engines.compiled.search import explore_compiled
from verifier.engines.explicit import ExplicitEngine, explore
from verifier.ir.expr import App, Const, Op, Var
from verifier.ir.model import Action, Assign, IntType, Model, Variable
from verifier.ir.props import DeadlockFree, Obligation, Terminates
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import EvalError, layout
from verifier.trace import replay

SETTINGS = settings(max_examples=examples(5), deadline=None)
FAIRNESS = st.lists(st.sampled_from(["act0", "act1", "act2", "act3"]), max_size=2, unique=True).map(tuple)


@st.composite
def graph_claims(draw):
    """A termination claim and an obligation, each with its own fairness."""
    return [Terminates(id="t", scope=draw(st.sampled_from(["game", "turn"])), fairness=draw(FAIRNESS),
                       strong_fairness=draw(FAIRNESS)),
            Obligation(id="o", pending=draw(bools()), fairness=draw(FAIRNESS), strong_fairness=draw(FAIRNESS)),
            DeadlockFree(id="d")]


def same_results(model, claims, budget) -> None:
    try:
        want = ExplicitEngine().check(model, claims, budget)
    except EvalError as err:            # an obligation's predicate meets a model error: the same one
        with pytest.raises(EvalError, match=re.escape(str(err))):
            ExplicitEngine(store="compiled").check(model, claims, budget)
        return
    got = ExplicitEngine(store="compiled").check(model, claims, budget)
    for w, g in zip(want, got):
        assert (g.verdict, g.reason, g.stop, g.depth, g.stats.states, g.stats.transitions) == \
            (w.verdict, w.reason, w.stop, w.depth, w.stats.states, w.stats.transitions)
        assert (g.engine, g.evidence["store"]) == ("explicit/compiled", "compiled")
        assert g.trace == w.trace
        if g.trace is not None and g.verdict is Verdict.VIOLATED:
            states = replay(layout(model), g.trace)
            if g.trace.loop_start is not None:
                assert states[-1] == states[g.trace.loop_start]


@SETTINGS
@given(MODELS, graph_claims(), BUDGETS)
def test_termination_and_obligations_agree_with_the_python_store_by_either_way_to_the_components(model, claims,
                                                                                                  budget):
    """The components by the peeled core in Python, then by the arrays' search (compiled cycles): the same
    compiled modules both ways (compiled once). Each draw is a cold compile, so the state graph is compared
    on the same draw with the same module: the graph the engine's search recorded and the one rebuilt
    after a search that kept none, each the python store's (`same_graphs`)."""
    searched = []

    def recorded(*args, **kwargs):
        searched.append(explore_compiled(*args, **kwargs))
        return searched[-1]

    with patch.object(search, "explore_compiled", recorded):
        same_results(model, claims, budget)
    with patch.object(lasso, "LARGE_REGION", 0):
        same_results(model, claims, budget)
    (engines, *_again) = searched          # the engine decides the graph claims on the compiled store
    same_graphs(model, budget, engines, claims)


def same_graphs(model, budget, engines, claims) -> None:
    """The graph the search records (`edges=True`) and the one rebuilt after a search that kept none,
    both with the predicates the engine's search watched (its module, compiled once): each the python
    store's, edge for edge, the same expanded states where each predicate holds, and the same outcomes
    (lassos, traces) on both, by both ways to the components."""
    predicates = list(engines.watched)
    ref = explore(model, budget, keep_edges=True)
    recorded = explore_compiled(model, budget, watch=predicates, edges=True)
    assert recorded.edges is not None and recorded.module is engines.module
    graphs = [state_graph(recorded), state_graph(explore_compiled(model, budget, watch=predicates))]
    assert recorded.edges is None                    # taken by the graph: a search kept for later does not hold it
    src, dst, lab = ref.edge_arrays()
    expanded = [k for k, s in enumerate(src) if s < ref.head]      # the head's edges before a state cap
    for graph in graphs:
        assert graph.head == ref.head and len(graph) == len(ref) and len(graph.offsets) == len(ref) + 1
        assert list(graph.src) == [src[k] for k in expanded]
        assert list(graph.dst) == [dst[k] for k in expanded]
        assert list(graph.lab) == [ref.labels.items[lab[k]][0] for k in expanded]
        assert graph.deadlocks == ref.deadlocks
        for e in predicates:
            try:
                want = ref.expanded_where(e)
            except EvalError as err:                     # a model error: the same one, from the same state
                with pytest.raises(EvalError, match=re.escape(str(err))):
                    graph.expanded_where(e)
                continue
            assert graph.expanded_where(e) == want
            assert graph.expanded_where(e, among=want[::2]) == want[::2]
    terminates, obligation, _deadlock = claims
    for large in (lasso.LARGE_REGION, 0):
        with patch.object(lasso, "LARGE_REGION", large):
            try:
                outcomes = [(lasso.check_termination(g, terminates), lasso.check_obligation(g, obligation))
                            for g in graphs]
            except EvalError:                            # the obligation's predicate meets a model error
                continue
            assert outcomes[0] == outcomes[1]


def test_a_lasso_through_a_cycle_replays():
    model = replace(counter(3), actions=counter(3).actions + (Action("reset", App(Op.EQ, (Var("x"), Const(2))),
                                                                        (Assign(Var("x"), Const(0)),)),))
    claims = [Terminates(id="t", scope="game"), Obligation(id="o", pending=App(Op.LE, (Var("y"), Const(1))))]
    same_results(model, claims, Budget())
    for r in ExplicitEngine(store="compiled").check(model, claims, Budget()):    # both a loop: x counts 0, 1, 2, 0
        assert r.verdict is Verdict.VIOLATED and r.reason.endswith("the loop can repeat forever")
        assert r.trace is not None and r.trace.loop_start == 0 and len(r.trace.steps) == 3


def test_a_symmetric_model_of_several_words_has_its_graph_claims_decided_on_the_compiled_store():
    wide = Model("wide", variables=(Variable("x", IntType(Const(0), Const((1 << 40) - 1)), init=(Const(0),)),
                                    Variable("y", IntType(Const(0), Const((1 << 40) - 1)), init=(Const(0),))),
                 actions=(Action("step", App(Op.LT, (Var("x"), Const(3))),
                                 (Assign(Var("x"), App(Op.ADD, (Var("x"), Const(1)))),)),), symmetry="players")
    claims = [DeadlockFree(id="d"), Terminates(id="t", scope="game")]
    same_results(wide, claims, Budget())
    for r in ExplicitEngine(store="compiled").check(wide, claims, Budget()):
        assert (r.engine, r.evidence["store"], r.verdict) == ("explicit/compiled", "compiled", Verdict.VIOLATED)


def test_a_memory_cut_while_the_graph_is_recorded_leaves_the_claim_unknown_with_its_reason(monkeypatch):
    """The recorded edges count against the memory guard like the states: where it stops the search (here
    told the memory is past its share at the first slice), the graph claim is UNKNOWN naming the option,
    decided on the states expanded so far (no crash, no silent pass)."""
    from verifier.engines import explicit
    from verifier.resources import StopKind

    monkeypatch.setattr(explicit, "over_soft", lambda *args, **kwargs: True)
    (r,) = ExplicitEngine(store="compiled").check(counter(300), [Terminates(id="t", scope="game")],
                                                  Budget(max_memory_mb=100))
    assert (r.verdict, r.engine) == (Verdict.UNKNOWN, "explicit/compiled")
    assert r.stop is not None and r.stop.kind is StopKind.MEMORY and "--max-memory 100" in r.stop.words
    assert 0 < r.stats.states < 300 * 300


@pytest.mark.parametrize("model", [counter(23), widened(counter(23), 55, 20, steps=True)], ids=["one word", "two words"])
def test_a_watched_predicate_alone_is_compiled_at_its_first_use_and_holds_where_the_python_stores_does(model):
    """The search runs `watch_all` only; `watched(k, ...)` (one predicate, for the graph's `where`) is
    compiled when the graph first asks for it: a search whose claims never ask does not pay for it."""
    predicates = [App(Op.EQ, (App(Op.ADD, (Var("x"), Var("y"))), Const(17))), App(Op.LT, (Var("x"), Const(3)))]
    searched = explore_compiled(model, Budget(), watch=predicates, edges=True)
    assert searched.module is not None and searched.module.watched.signatures == []
    graph = state_graph(searched)
    ref = explore(model, Budget(), keep_edges=True)
    for e in predicates:
        assert graph.expanded_where(e) == ref.expanded_where(e)
    assert len(searched.module.watched.signatures) == 1
