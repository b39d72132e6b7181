"""The correctness yardstick: exact BEEM state and transition counts (Pelánek 2007)."""
from __future__ import annotations

from pathlib import Path

import pytest

from verifier.engines.explicit import ExplicitEngine, explore
from verifier.ir.props import DeadlockFree, Invariant
from verifier.lang import load_model, parse_expression
from verifier.lang.properties import model_scope
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

MODELS = Path(__file__).parent / "models"


@pytest.mark.parametrize("name,states,transitions", [
    ("hanoi", 6_561, 19_680),       # hanoi.1: 8 discs
    ("phils", 80, 212),             # phils.1: 4 philosophers
    ("peterson", 12_498, 33_369),   # peterson.1: 3 processes
])
def test_beem_counts(name, states, transitions):
    model = load_model(str(MODELS / f"{name}.yaml")).instantiate()
    space = explore(model)
    assert space.complete
    assert (len(space.states), space.transitions) == (states, transitions)


def test_peterson_mutual_exclusion_holds():
    model = load_model(str(MODELS / "peterson.yaml"))
    mutex = parse_expression("count(p in 0..N-1: pc[p] == CS) <= 1", model_scope(model))
    (r,) = ExplicitEngine().check(model, [Invariant(id="mutex", expr=mutex)], Budget())
    assert r.verdict is Verdict.HOLDS and r.stats.states == 12_498


def test_phils_deadlock_is_found_and_replays():
    model = load_model(str(MODELS / "phils.yaml"))
    (r,) = ExplicitEngine().check(model, [DeadlockFree(id="dl")], Budget())
    assert r.verdict is Verdict.VIOLATED and len(r.trace) == 4   # everybody takes the left fork
    states = replay(layout(model.instantiate()), r.trace)
    assert all(v == "one" for k, v in dict(r.trace.states[-1]).items() if k.startswith("ph["))
    assert len(states) == 5
