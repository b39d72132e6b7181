"""deadlock: reachable non-final states with no legal move."""
from __future__ import annotations

from test_analysis_support import analyse, fixture, of_kind

from verifier.engines.explicit import explore
from verifier.lang import load_model
from verifier.semantics import holds, layout, successors
from verifier.trace import replay


def _last_state(name, trace):
    model = load_model(fixture(name)).instantiate()
    lay = layout(model)
    return lay, replay(lay, trace)[-1]


def test_forbidden_upkeep_leaves_the_player_stuck():
    found = of_kind(analyse("deadlock_yes"), "deadlock")
    assert set(found) == {"Upkeep"}
    f = found["Upkeep"]
    assert "in Upkeep" in f.message and "gold = 0" in f.message and "forbidden by the policy on gold" in f.message
    assert f.rules == ("Upkeep: pay one gold each turn",) and f.evidence["forbidden_moves"] == ["pay_upkeep"]
    (trace,) = f.traces
    lay, last = _last_state("deadlock_yes", trace)
    assert successors(lay, last) == [] and not holds(lay, lay.model.end, last)
    assert len(trace) == 3      # pay, end Upkeep, end Main -> pass turn: shortest


def test_clamp_policy_means_no_deadlock():
    assert of_kind(analyse("deadlock_no"), "deadlock") == {}


def test_plain_guarded_commands():
    findings = analyse("deadlock_plain")
    found = of_kind(findings, "deadlock")
    assert set(found) == {"play"}
    assert "when x = 2" in found["play"].message
    assert len(found["play"].traces[0]) == 2
    assert set(of_kind(findings, "gap")) == {"z|bump"}


def test_states_stuck_on_a_gap_are_reported_as_gaps_only():
    model = load_model(fixture("gap_yes")).instantiate()
    space = explore(model)
    assert space.deadlocks            # the engine sees stuck states...
    findings = analyse("gap_yes")
    assert of_kind(findings, "deadlock") == {}                  # ...the analysis blames the gap
    assert "play cannot go on there" in of_kind(findings, "gap")["hand|draw"].message
