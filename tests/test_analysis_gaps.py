"""gap: an effect leaves a variable's range and the rules state no policy."""
from __future__ import annotations

from test_analysis_support import analyse, fixture, of_kind

from verifier.analysis import acknowledgement
from verifier.ir.model import Acknowledgement
from verifier.lang import load_model
from verifier.result import Finding
from verifier.semantics import layout, transitions
from verifier.trace import replay


def test_each_action_and_variable_once():
    gaps = of_kind(analyse("gap_yes"), "gap")
    assert set(gaps) == {"hand|draw", "hand|play"}
    draw, play = gaps["hand|draw"], gaps["hand|play"]
    assert (draw.evidence["value"], draw.evidence["range"]) == (3, [0, 2])
    assert play.evidence["value"] == -1 and "below its least value 0" in play.message
    assert "above its greatest value 2" in draw.message and "(Draw)" in draw.message
    assert draw.rules == ("Draw: take a card",) and draw.acknowledged is None
    model = load_model(fixture("gap_yes")).instantiate()
    lay = layout(model)
    for f in gaps.values():
        (trace,) = f.traces
        last = replay(lay, trace)[-1]
        blocked = [t for t in transitions(lay, last) if t.action.name == f.evidence["action"]]
        assert blocked and blocked[0].gap is not None and blocked[0].gap.value == f.evidence["value"]
    assert len(draw.traces[0]) == 2 and len(play.traces[0]) == 1     # shortest


def test_a_stated_policy_is_no_gap():
    assert of_kind(analyse("gap_no"), "gap") == {}


def test_acknowledged_by_variable():
    findings = analyse("gap_ack")
    gaps = of_kind(findings, "gap")
    assert set(gaps) == {"hand|draw", "hand|play"}
    assert all(f.acknowledged == "the hand limit is card-specific" for f in gaps.values())


def test_acknowledgement_matching():
    acks = [Acknowledgement("order-dependence", "b|a", "order fixed by a card"),
            Acknowledgement("gap", "deck", "one for every action"),
            Acknowledgement("dead-rule", "pay", "out of scope")]
    assert acknowledgement(Finding("order-dependence", "a|b", ""), acks) is acks[0]
    assert acknowledgement(Finding("gap", "deck|draw", ""), acks) is acks[1]
    assert acknowledgement(Finding("gap", "hand|draw", ""), acks) is None
    assert acknowledgement(Finding("dead-rule", "pay", ""), acks) is acks[2]
    assert acknowledgement(Finding("deadlock", "pay", ""), acks) is None
    assert acknowledgement(Finding("dead-rule", "pay_more", ""), acks) is None
