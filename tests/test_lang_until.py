"""`until: next_turn_of(p)`: a value that lasts until player p's next turn starts; a companion variable
records p, the turn passing ends the durations of the player whose turn starts, and any other assignment
ends a duration. Every engine and the Promela export see plain variables."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_lang_errors import the_error, where

from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.ir.expr import pretty
from verifier.lang import load_model, load_properties
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import fire, layout

FIXTURES = Path(__file__).parent / "fixtures" / "lang"
MODEL = FIXTURES / "until.yaml"
TEXT = MODEL.read_text()


def effects(model, name: str) -> dict[str, str]:
    return {pretty(e.target): pretty(e.value) for e in model.action(name).effects}


def test_a_duration_records_whose_turn_ends_it():
    model = load_model(str(MODEL))
    assert effects(model, "protect") == {"shield[q]": "true", "shield_until[q]": "active"}
    assert effects(model, "lower") == {"shield[q]": "false", "shield_until[q]": "3"}      # ends the duration
    passing = effects(model, "pass turn")
    assert passing["shield[1]"] == "(if shield_until[1] == ((active + 1) % 3) then false else shield[1])"


def test_it_ends_when_that_players_turn_starts_and_not_before():
    model = load_model(str(MODEL)).instantiate()
    lay = layout(model)
    names = [s.name for s in lay.slots]
    state = dict.fromkeys(names, 0)
    state.update({"shield_until[0]": 2, "shield_until[1]": 1, "shield[0]": 1, "shield[1]": 1, "shield_until[2]": 3,
                  "silenced_until": 3})
    after = dict(zip(names, fire(lay, model.action("pass turn"), tuple(state[n] for n in names), {}).target))
    assert after["active"] == 1 and after["shield[1]"] == 0 and after["shield_until[1]"] == 3
    assert after["shield[0]"] == 1 and after["shield_until[0]"] == 2      # player 2's turn has not come


def test_every_engine_agrees():
    model = load_model(str(MODEL)).instantiate()
    claims = load_properties(str(FIXTURES / "until_props.yaml"), model)
    explicit = run_claims(model, claims, ExplicitEngine(), Budget())
    compact = run_claims(model, claims, ExplicitEngine(store="compact"), Budget())
    symbolic = run_claims(model, claims, SymbolicEngine(), Budget())
    assert [r.verdict for r in explicit] == [Verdict.HOLDS] * 4 == [r.verdict for r in compact]
    assert [r.verdict for r in symbolic] == [Verdict.PROVED, Verdict.PROVED, Verdict.HOLDS, Verdict.PROVED]


CASES = [
    ("unknown duration", "until: next_turn_of(active)", "until: end_of_turn", "unknown duration 'end_of_turn'",
     "end_of_turn", "next_turn_of(p)"),
    ("a duration in on_enter", 'on_enter: {turns: "turns + 1"}',
     'on_enter: {turns: "turns + 1", silenced: {value: true, until: "next_turn_of(active)"}}',
     "until: is for the effects of actions", '"next_turn_of(active)"}}', "an action"),
    ("no init to go back to", "silenced: {type: bool, init: false}", "silenced: {type: bool}",
     "silenced cannot take a duration", '"next_turn_of((active', "init value"),
    ("not a player", "next_turn_of(active)", "next_turn_of(true)", "expected an integer", "true)", "if cond"),
    ("the companion's name is taken", "  turns:", "  shield_until: {type: bool, init: false}\n  turns:",
     "duplicate name 'shield_until'", "shield[q]:\n", "its own name"),
]


@pytest.mark.parametrize("what,old,new,message,needle,hint", CASES, ids=[c[0] for c in CASES])
def test_error(tmp_path, what, old, new, message, needle, hint):
    path = tmp_path / "until.yaml"
    assert old in TEXT
    path.write_text(TEXT.replace(old, new, 1))
    error = the_error(path, message)
    assert str(error.span).startswith(where(path, needle)), (str(error.span), where(path, needle))
    assert error.hint and hint in error.hint, error.hint


def test_a_model_without_turns_has_no_durations(tmp_path):
    path = tmp_path / "plain.yaml"
    path.write_text("model: plain\nvariables:\n  x: {type: bool, init: false}\nactions:\n  - name: set\n"
                    "    do:\n      x: {value: true, until: next_turn_of(0)}\n")
    error = the_error(path, "needs turns: this model has no phases")
    assert str(error.span).startswith(where(path, "next_turn_of(0)")) and "declare phases" in error.hint
