"""dead-rule: actions that never fire and phases never reached."""
from __future__ import annotations

from test_analysis_support import analyse, of_kind

from verifier.resources import Budget


def test_reports_dead_actions_and_phases():
    dead = of_kind(analyse("dead_yes"), "dead-rule")
    # `bonus` lives in the dead Bonus phase: reported through the phase, not again
    assert set(dead) == {"Bonus", "reset", "overdraw"}
    assert dead["Bonus"].evidence["actions"] == ["bonus"]
    assert "never reaches the Bonus phase" in dead["Bonus"].message
    assert "`flag and (x > 0)`" in dead["reset"].message and "(Main)" in dead["reset"].message
    assert "y out of range" in dead["overdraw"].message and dead["overdraw"].evidence["blocked_only"]
    for f in dead.values():
        assert f.engine == "explicit" and "exhaustive search of 4 states" in f.scope
        assert f.rules and f.span is not None and f.variant is None and f.acknowledged is None
    assert dead["reset"].rules == ("Main: the flag resets the count",)


def test_nothing_dead_when_everything_is_used():
    assert of_kind(analyse("dead_no"), "dead-rule") == {}


def test_dead_rule_proved_beyond_an_incomplete_search():
    full = of_kind(analyse("dead_yes"), "dead-rule")
    cut = of_kind(analyse("dead_yes", budget=Budget(max_states=2)), "dead-rule")
    assert set(cut) == set(full) != set()
    assert all(f.engine != "explicit" and "beyond the 2 explored states" in f.scope for f in cut.values())


def test_gap_blocked_action_is_left_to_the_gap_finding():
    findings = analyse("gap_yes")
    assert "play" not in of_kind(findings, "dead-rule")
    assert "hand|play" in of_kind(findings, "gap")


def test_symbolic_proof_for_every_parameter_value():
    dead = of_kind(analyse("dead_param", {"N": None}), "dead-rule")
    assert set(dead) == {"beyond"}
    f = dead["beyond"]
    assert f.engine in ("k-induction", "pdr") and f.scope == "for all parameter values"
    assert "whatever the parameter values" in f.message and not f.traces


def test_fixed_parameters_use_the_explicit_search():
    dead = of_kind(analyse("dead_param", {"N": 2}), "dead-rule")
    assert set(dead) == {"beyond"} and dead["beyond"].engine == "explicit"
    assert "N=2" in dead["beyond"].scope


def test_a_guard_that_is_false_is_quoted_as_written(tmp_path):
    """`when: "false"` was quoted as "its condition `true` never holds": the constant was dropped with
    the conditions the phase sugar adds."""
    path = tmp_path / "never.yaml"
    path.write_text('model: never\nplayers: 2\nvariables:\n  x: {type: 0..1, init: 0}\nphases:\n  - name: A\n'
                    'actions:\n  - name: go\n    phase: A\n    when: "false"\n    do: {x: 1}\n', encoding="utf-8")
    (f,) = of_kind(analyse(str(path)), "dead-rule").values()
    assert "its condition `false` holds in no state" in f.message
