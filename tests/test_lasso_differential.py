"""Termination on random models against a direct check on the whole state graph.

"Every game ends" fails exactly when some reachable non-final state is stuck
or lies on a cycle of non-final states; the engine finds cycles on a pruned
core of the graph (`lasso._cyclic_core`), so this checks the pruning loses no
cycle and invents none, and that every lasso it prints replays. Large regions
are searched over numpy arrays and compiled code instead (`compiled/cycles.py`):
both ways give the same outcome, lasso included, with and without fairness."""
from __future__ import annotations

from unittest.mock import patch

import networkx as nx
from hypothesis import given
from hypothesis import strategies as st
from test_explicit_differential import SETTINGS, models

from verifier.engines import lasso
from verifier.engines.explicit import ExplicitEngine, explore
from verifier.ir.props import Terminates
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import evaluate, layout
from verifier.trace import replay


def direct_verdict(model) -> Verdict | None:
    space = explore(model, keep_edges=True)
    if not space.complete:
        return None
    lay = layout(model)
    region = {i for i, s in enumerate(space.states) if not evaluate(lay, model.end, s)}
    if region & set(space.deadlocks):
        return Verdict.VIOLATED
    graph = nx.DiGraph((s, d) for s, d, _a, _c in space.edges if s in region and d in region)
    return Verdict.HOLDS if nx.is_directed_acyclic_graph(graph) else Verdict.VIOLATED


@SETTINGS
@given(models())
def test_termination_matches_a_direct_cycle_check(model):
    want = direct_verdict(model)
    (r,) = ExplicitEngine().check(model, [Terminates(id="t", scope="game")], Budget())
    if want is None:
        return
    assert r.verdict is want
    if r.verdict is Verdict.VIOLATED:
        states = replay(layout(model), r.trace)
        if r.trace.loop_start is not None:
            assert states[-1] == states[r.trace.loop_start]


FAIRNESS = st.lists(st.sampled_from(["act0", "act1", "act2", "act3"]), max_size=2, unique=True).map(tuple)


@SETTINGS
@given(models(), st.sampled_from(["game", "turn"]), FAIRNESS, FAIRNESS)
def test_both_ways_to_the_components_give_one_outcome(model, scope, weak, strong):
    space = explore(model, keep_edges=True)
    claim = Terminates(id="t", scope=scope, fairness=weak, strong_fairness=strong)
    outcomes = []
    for large in (10**9, 0):                  # the peeled core in Python, then the arrays' search on every region
        with patch.object(lasso, "LARGE_REGION", large):
            outcomes.append(lasso.check_termination(space, claim))
    assert outcomes[0] == outcomes[1]
