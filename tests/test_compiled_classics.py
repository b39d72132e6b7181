"""The BEEM known answers (Pelánek 2007) on the compiled store: the same state and transition
counts as `test_classics.py` pins for the python store, the same verdicts, and (`--slow`) the
benchmark sizes of bench/models."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_classics import MODELS

from verifier.engines.compiled.search import explore_compiled
from verifier.engines.explicit import ExplicitEngine
from verifier.ir.props import DeadlockFree, Invariant
from verifier.lang import load_model, parse_expression
from verifier.lang.properties import model_scope
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

BENCH = Path(__file__).parent.parent / "bench" / "models"


@pytest.mark.parametrize("path,params,states,transitions", [
    (MODELS / "hanoi.yaml", {}, 6_561, 19_680),          # hanoi.1: 8 discs
    (MODELS / "phils.yaml", {}, 80, 212),                # phils.1: 4 philosophers
    (MODELS / "peterson.yaml", {}, 12_498, 33_369),      # peterson.1: 3 processes
    pytest.param(BENCH / "hanoi13.yaml", {}, 1_594_323, 4_782_966, marks=pytest.mark.slow),   # 3^13 states
    pytest.param(BENCH / "phils19.yaml", {}, 18_738_638, None, marks=pytest.mark.slow),
])
def test_the_compiled_store_counts_the_beem_models(path, params, states, transitions):
    space = explore_compiled(load_model(str(path), params or None).instantiate())
    assert space.complete
    assert len(space) == states
    if transitions is not None:
        assert space.transitions == transitions


def test_peterson_mutual_exclusion_holds_on_the_compiled_store():
    model = load_model(str(MODELS / "peterson.yaml"))
    mutex = parse_expression("count(p in 0..N-1: pc[p] == CS) <= 1", model_scope(model))
    (r,) = ExplicitEngine(store="compiled").check(model, [Invariant(id="mutex", expr=mutex)], Budget())
    assert (r.verdict, r.stats.states, r.engine) == (Verdict.HOLDS, 12_498, "explicit/compiled")


def test_phils_deadlock_is_found_and_replays_on_the_compiled_store():
    model = load_model(str(MODELS / "phils.yaml"))
    (r,) = ExplicitEngine(store="compiled").check(model, [DeadlockFree(id="dl")], Budget())
    assert (r.verdict, len(r.trace), r.engine) == (Verdict.VIOLATED, 4, "explicit/compiled")
    states = replay(layout(model.instantiate()), r.trace)
    assert all(v == "one" for k, v in dict(r.trace.states[-1]).items() if k.startswith("ph["))
    assert len(states) == 5
