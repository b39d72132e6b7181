"""`must: once` (docs/LANGUAGE.md, Actions): an obligation discharged once in each visit of its phase,
desugared into a flag that the action sets and leaving the phase clears; the engines and the
analyses see a plain must action."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_analysis_support import analyse, of_kind
from test_lang_errors import BASE, the_error, where, write

from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.ir.expr import pretty
from verifier.lang import load_model, load_properties
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import initial_states, layout, successors

FIXTURES = Path(__file__).parent / "fixtures" / "lang"
MODEL = FIXTURES / "must_once.yaml"


def verdicts(engine) -> dict[str, Verdict]:
    model = load_model(str(MODEL))
    claims = load_properties(str(FIXTURES / "must_once_props.yaml"), model)
    return {r.property.id: Verdict.HOLDS if r.verdict is Verdict.PROVED else r.verdict
            for r in run_claims(model.instantiate(), claims, engine, Budget())}


def test_the_action_sets_a_flag_that_leaving_the_phase_clears():
    model = load_model(str(MODEL))
    draw = model.action("draw")
    assert draw.once and "(not draw_taken)" in pretty(draw.guard)
    assert "draw_taken" in [pretty(a.target) for a in draw.effects]
    flag = model.var("draw_taken")
    assert flag.implicit and pretty(flag.init[0]) == "false"
    assert {pretty(a.target): pretty(a.value) for a in model.action("end Draw").effects}["draw_taken"] == "false"
    for name in ("end Play -> Draw", "pass turn"):      # from Play: nothing to clear
        assert "draw_taken" not in [pretty(a.target) for a in model.action(name).effects]


def test_explicit_and_symbolic_agree_that_it_is_taken_once_a_visit():
    explicit = verdicts(ExplicitEngine())
    assert explicit == dict.fromkeys(("once-a-visit", "every-visit-draws", "drawn-before-leaving",
                                      "two-draws-a-turn", "no-stuck-state"), Verdict.HOLDS)
    assert verdicts(SymbolicEngine()) == explicit


NONDET = """\
model: nondet_once
variables:
  deck: {type: 0..4, init: 4}
  hand: {type: 0..4, init: 0}
end: "deck == 0"
phases:
  - name: Draw
actions:
  - {name: draw, phase: Draw, must: once, choose: {n: 1..2}, chooser: unstated, when: "deck >= n",
     do: {deck: deck - n, hand: "min(hand + n, 4)"}}
"""


def test_the_analyses_see_the_obligation(tmp_path):
    path = tmp_path / "nondet_once.yaml"
    path.write_text(NONDET)
    findings = analyse(str(path))
    assert set(of_kind(findings, "nondeterministic-must")) == {"draw"}
    assert not of_kind(findings, "deadlock")


GROUP = """\
model: group_once
variables:
  deck: {type: 0..6, init: 6}
  a: {type: 0..6, init: 0}
  b: {type: 0..6, init: 0}
end: "deck == 0"
phases:
  - name: Draw
  - name: Play
actions:
  - {name: draw, phase: Draw, must: once, when: "deck > 0", do: {deck: deck - 1}}
  - {name: play_a, phase: Play, must: {once: play}, do: {a: "min(a + 1, 6)"}}
  - {name: play_b, phase: Play, must: {once: play}, do: {b: "min(b + 1, 6)"}}
"""


def test_a_group_shares_one_flag(tmp_path):
    path = tmp_path / "group.yaml"
    path.write_text(GROUP)
    model = load_model(str(path))
    assert [v.name for v in model.variables if v.implicit and v.name.endswith("_taken")] == ["draw_taken",
                                                                                               "play_taken"]
    for name in ("play_a", "play_b"):
        action = model.action(name)
        assert action.once == "play_taken" and "(not play_taken)" in pretty(action.guard)
        assert "play_taken" in [pretty(e.target) for e in action.effects]
    clears = [pretty(e.target) for e in model.action("pass turn").effects if pretty(e.value) == "false"]
    assert clears.count("play_taken") == 1


def test_a_group_plays_exactly_one_of_its_actions_a_visit(tmp_path):
    """Every reachable state: one card played per card drawn, but for the card drawn this turn while
    it is not yet played (the last draw ends the game in Draw)."""
    path = tmp_path / "group.yaml"
    path.write_text(GROUP)
    lay = layout(load_model(str(path)).instantiate())
    seen, todo = set(initial_states(lay)), list(initial_states(lay))
    while todo:
        for t in successors(lay, todo.pop()):
            if t.target not in seen:
                seen.add(t.target)
                todo.append(t.target)
    for state in seen:
        s = lay.as_dict(state)
        owed = s["draw_taken"] or (s["phase"] == "Play" and not s["play_taken"])
        assert s["a"] + s["b"] + s["deck"] + owed == 6, s
    assert {(lay.as_dict(s)["a"], lay.as_dict(s)["b"]) for s in seen} >= {(5, 0), (3, 2), (0, 5)}


def test_the_analyses_see_no_rival_musts_in_a_group(tmp_path):
    path = tmp_path / "group.yaml"
    path.write_text(GROUP)
    findings = analyse(str(path))
    assert not of_kind(findings, "conflict")
    assert not of_kind(findings, "deadlock")


ERRORS = [
    ("must: once without a phase", [("    phase: Draw\n    must: true\n", "    must: once\n")],
     "must: once needs the action's phase", "once\n", 0),
    ("an unknown must", [("    must: true\n", "    must: twice\n")],
     "must is true, false, once or {once: group}, not 'twice'", "twice", 0),
    ("a group without a phase", [("    phase: Draw\n    must: true\n", "    must: {once: play}\n")],
     "must: {once: ...} needs the action's phase", "{once", 0),
    ("a group and a modality", [("    must: true\n", "    must: {once: play}\n    modality: may\n")],
     "must: {once: ...} is the action's modality", "may\n", 0),
    ("a group that is not a name", [("    must: true\n", "    must: {once: 3}\n")],
     "must: {once: G} names the group", "{once: 3}", 0),
    ("a group mapping with more keys", [("    must: true\n", "    must: {once: play, each: true}\n")],
     "must: {once: G} names the group", "{once: play, each", 0),
    ("must: once and a modality", [("    must: true\n", "    must: once\n    modality: may\n")],
     "must: once is the action's modality", "may\n", 0),
    ("a flag's name taken", [("    must: true\n", "    must: once\n"), ("  trump: {type: Suit, init: hearts}\n",
                              "  trump: {type: Suit, init: hearts}\n  draw_taken: {type: bool, init: false}\n")],
     "duplicate name 'draw_taken'", "name: draw", 6),
]


@pytest.mark.parametrize("what,edits,message,needle,delta", ERRORS, ids=[e[0] for e in ERRORS])
def test_wrong_uses_are_positioned_errors(tmp_path, what, edits, message, needle, delta):
    text = BASE
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    path = write(tmp_path, text=text)
    assert str(the_error(path, message).span) == where(path, needle, delta=delta)
