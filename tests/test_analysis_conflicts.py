"""conflict: a demand that a prohibition blocks, two demands that exclude each other."""
from __future__ import annotations

from test_analysis_support import analyse, fixture, of_kind

from verifier.analysis.conflicts import forbids, prohibited_vars
from verifier.lang import load_model


def test_demand_and_prohibition_and_exclusive_demands():
    found = of_kind(analyse("conflict_yes"), "conflict")
    assert set(found) == {"discard|protected_hand", "attack|defend"}
    ban = found["discard|protected_hand"]
    assert "demand 'discard'" in ban.message and "'protected_hand' (Protection) forbids it" in ban.message
    assert ban.rules == ("Discard: above two cards one must go", "Protection: a protected hand may not lose cards")
    assert [len(t) for t in ban.traces] == [0, 1] and ban.traces[1].steps[-1].action == "discard"
    pair = found["attack|defend"]
    assert "taking either one rules out the other" in pair.message
    assert [t.steps[-1].action for t in pair.traces] == ["attack", "defend"]


def test_no_conflict_when_the_demand_and_the_prohibition_never_meet():
    assert of_kind(analyse("conflict_no"), "conflict") == {}


def test_what_a_prohibition_forbids():
    model = load_model(fixture("conflict_no")).instantiate()
    keep = model.action("keep_small_hand")
    assert prohibited_vars(keep, model) == {"hand"}           # not `phase`, not the end condition
    assert forbids(keep, model.action("discard"), model)
    assert not forbids(keep, model.action("attack"), model)    # another phase, another variable
    yes = load_model(fixture("conflict_yes")).instantiate()
    assert prohibited_vars(yes.action("protected_hand"), yes) == {"hand"}   # its effects say what it forbids
