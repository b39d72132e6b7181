"""The phase sugar of tests/fixtures/lang/mini.yaml desugars to exactly the expected guarded commands."""
from __future__ import annotations

from pathlib import Path

import pytest

from verifier.ir.expr import Param, Var, pretty
from verifier.ir.model import ActionKind, Citation, Modality, PhaseEdge, Reset
from verifier.lang import load_model

MINI = str(Path(__file__).parent / "fixtures" / "lang" / "mini.yaml")
NOT_END = "(not ((deck[0] == 0) and (deck[1] == 0)))"
DRAW_ENABLED = ("(exists n in 1..2: (not drawn) and (deck[active] >= n) and ((hand[active] + n) <= 4))")


@pytest.fixture(scope="module")
def model():
    return load_model(MINI)


def show(model, e) -> str:
    return pretty(e, model.enum_value_name)


def effects(model, action) -> dict[str, str]:
    return {pretty(a.target): show(model, a.value) for a in action.effects}


def test_implicit_variables(model):
    phase, active = model.var("phase"), model.var("active")
    assert phase.implicit and active.implicit
    assert phase.type.values == ("Draw", "Play", "Discard") and show(model, phase.init[0]) == "Draw"
    assert str(active.type) == "0..1" and show(model, active.init[0]) == "0"
    assert model.enum("Phase").values == ("Draw", "Play", "Discard")


def test_action_names_and_kinds(model):
    assert [(a.name, a.kind) for a in model.actions] == [
        ("draw", ActionKind.RULE), ("play", ActionKind.RULE), ("discard", ActionKind.RULE),
        ("end Draw -> Play", ActionKind.ADVANCE), ("end Draw -> Discard", ActionKind.ADVANCE),
        ("end Play", ActionKind.ADVANCE), ("pass turn", ActionKind.TURN_END)]


def test_rule_actions(model):
    draw = model.action("draw")
    assert draw.modality is Modality.MUST and draw.phase == "Draw" and draw.actor == Var("active")
    assert [c.name for c in draw.choices] == ["n"] and str(draw.choices[0].type) == "1..2"
    assert show(model, draw.guard) == ("(phase == Draw) and (not drawn) and (deck[active] >= n) and "
                                       f"((hand[active] + n) <= 4) and {NOT_END}")
    assert effects(model, draw) == {"deck[active]": "deck[active] - n", "hand[active]": "hand[active] + n",
                                    "drawn": "true"}
    assert draw.rule == Citation("Draw", "one or two cards")
    assert show(model, model.action("play").guard) == f"(phase == Play) and (hand[active] > 0) and {NOT_END}"


def test_advance_actions_wait_for_must_actions(model):
    for name, target in (("end Draw -> Play", "Play"), ("end Draw -> Discard", "Discard")):
        a = model.action(name)
        assert show(model, a.guard) == f"(phase == Draw) and (not {DRAW_ENABLED}) and {NOT_END}"
        assert effects(model, a) == {"phase": target}
        assert a.target_phase == target and a.phase == "Draw" and a.rule == Citation("Draw", "the active player draws")
    assert model.action("end Draw -> Discard").doc == "skip Play"
    assert show(model, model.action("end Play").guard) == f"(phase == Play) and {NOT_END}"


def test_turn_end(model):
    a = model.action("pass turn")
    assert show(model, a.guard) == f"(phase == Discard) and (hand[active] <= 2) and {NOT_END}"
    assert effects(model, a) == {
        "phase": "Draw",
        "active": "(active + 1) % 2",
        "drawn": "false",                                   # reset: turn
        "trump": "(if active == 1 then hearts else (if trump == hearts then spades else hearts))",
        "rounds": "(if active == 1 then rounds + 1 else rounds)",
    }
    assert a.target_phase == "Draw" and a.actor == Var("active")


def test_phase_metadata(model):
    assert [(p.name, p.mandatory) for p in model.phases] == [("Draw", True), ("Play", False), ("Discard", True)]
    assert model.phases[2].rule == Citation("Discard", "down to the limit")
    assert model.phase_edges == (
        PhaseEdge("Draw", "Play"), PhaseEdge("Draw", "Discard", "skip Play"), PhaseEdge("Play", "Discard"),
        PhaseEdge("Discard", "Draw", "next turn", turn_end=True))


def test_declarations(model):
    assert model.players == 2 and model.param_values == (("DECK", 3),)
    assert dict(model.constants) == {"LIMIT": model.fix_params(dict(model.constants)["LIMIT"]),
                                     "MAX_HAND": dict(model.constants)["MAX_HAND"]}
    assert show(model, dict(model.constants)["MAX_HAND"]) == "4"
    deck = model.var("deck")
    assert deck.by_player and deck.init == (Param("DECK"), Param("DECK")) and str(deck.type) == "0..DECK"
    assert model.var("drawn").reset is Reset.TURN
    assert model.var("rounds").overflow_rule == Citation("Rounds", "the counter stops at three")


def test_steps_optional_parent_and_explicit_next(tmp_path):
    path = tmp_path / "steps.yaml"
    path.write_text("""\
model: steps
variables:
  clash: {type: bool, init: false}
phases:
  - name: Start
  - name: Main
    mandatory: false
    on_enter: {clash: false}
    steps:
      - {name: Primary, next: [{to: Clash, when: "clash", label: "initiate clash"}, {to: TURN_END}]}
      - {name: Clash, next: [{to: Primary}]}
actions:
  - {name: declare, phase: Primary, when: "not clash", do: {clash: true}}
""")
    model = load_model(str(path))
    assert model.players == 1 and [p.parent for p in model.phases] == [None, None, "Main", "Main"]
    names = [a.name for a in model.actions]
    assert names == ["declare", "end Start -> Primary", "pass turn from Start", "end Primary -> Clash",
                     "pass turn from Primary", "end Clash"]
    assert effects(model, model.action("end Start -> Primary")) == {"phase": "Primary", "clash": "false"}
    assert effects(model, model.action("end Clash")) == {"phase": "Primary"}    # no re-entry of Main
    assert show(model, model.action("end Primary -> Clash").guard) == "(phase == Primary) and clash"
    assert model.action("pass turn from Start").doc == "skip Main"
    assert [p.mandatory for p in model.phases] == [True, False, False, False]
    assert PhaseEdge("Primary", "Clash", "initiate clash", guarded=True) in model.phase_edges


def test_plain_guarded_commands_have_no_implicit_variables(tmp_path):
    path = tmp_path / "plain.yaml"
    path.write_text("model: plain\nvariables:\n  x: 0..2\nactions:\n"
                    "  - {name: inc, choose: {p: 0..1}, by: p, when: 'x < 2', do: {x: x + 1}}\n")
    model = load_model(str(path))
    assert [v.name for v in model.variables] == ["x"] and not model.phases
    inc = model.action("inc")
    assert show(model, inc.guard) == "x < 2" and show(model, inc.actor) == "p"
