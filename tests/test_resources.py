"""The budget, backstop, stops and clocks of `verifier.resources` (no test sleeps: a ManualClock moves)."""
from __future__ import annotations

import pytest

from verifier.resources import Backstop, Budget, ManualClock, Stop, StopKind, model_error


def test_a_backstop_cuts_when_its_clock_passes_it():
    clock = ManualClock(100.0)
    backstop = Backstop.after(10.0, "--timeout 10", clock)
    budget = Budget(max_states=5, backstop=backstop)
    assert not backstop.expired() and not budget.expired() and backstop.left() == 10.0
    clock.advance(9.5)
    assert not budget.expired() and backstop.left() == pytest.approx(0.5)
    clock.advance(0.5)
    assert budget.expired() and backstop.left() == 0.0
    assert backstop.stop() == Stop(StopKind.BACKSTOP, "--timeout 10", "cut short by --timeout 10")


def test_a_budget_without_a_backstop_never_expires():
    assert not Budget().expired()


def test_stops_name_their_owner_and_say_what_stopped():
    budget = Budget(max_states=100_000, max_depth=7, rlimit=5_000_000, owner="--max-states 100000")
    states = budget.states_stop()
    assert states.kind is StopKind.STATES and states.owner == "--max-states 100000"
    assert str(states) == "the search stopped at 100,000 states (--max-states 100000)"
    assert budget.depth_stop().kind is StopKind.DEPTH and "depth 7" in budget.depth_stop().words
    assert budget.rlimit_stop("PDR").kind is StopKind.RLIMIT and "5,000,000" in budget.rlimit_stop().words


def test_which_stops_a_larger_budget_could_lift():
    assert StopKind.STATES.is_budget and StopKind.RLIMIT.is_budget and StopKind.BACKSTOP.is_budget
    assert not model_error("index out of range").kind.is_budget and not StopKind.INCOMPLETE.is_budget
    assert {k for k in StopKind if k.depends_on_the_machine} == {StopKind.MEMORY, StopKind.BACKSTOP, StopKind.SIGNAL}


def test_a_clock_does_not_go_back():
    with pytest.raises(AssertionError):
        ManualClock().advance(-1.0)


def test_a_limit_nobody_named_is_said_by_its_option():
    assert Budget(max_states=10).states_stop().owner == "--max-states 10"
    assert Budget(max_depth=3).depth_stop().words == "depth 3 reached (--max-depth 3)"
    assert Budget(max_states=10, owner="the compact store's cap").states_stop().owner == "the compact store's cap"
