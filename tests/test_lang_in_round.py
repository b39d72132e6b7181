"""Rounds that wait only for the players still in (docs/LANGUAGE.md, "Who plays next"): with
`next_player:` skipping the players out and `in_round: "not out[p]"`, a round ends once every player
still in has had a turn in it; without it a player out would keep the round from ending; what cannot
be defined is a positioned error."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_lang_errors import the_error, where

from verifier.engines.explicit import ExplicitEngine
from verifier.lang import load_model, load_properties
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import fire, initial_states, layout

MODEL = Path(__file__).parent / "fixtures" / "lang" / "rounds_out.yaml"
CLAIMS = """\
model: rounds_out
claims:
  - id: one-turn-a-player-in
    says: "A round has at most one turn a player"
    ordering: {pattern: bounded-existence, p: turn-end, at_most: 3, scope: round}
  - id: every-round-ends
    says: "The game reaches its third round's end"
    reachable: "rounds == 3"
"""


def play(moves: list[tuple[str, dict[str, int]]], path: Path = MODEL) -> list[dict[str, int]]:
    """The states after each move (an action and its choices) from the model's initial state."""
    model = load_model(str(path)).instantiate()
    lay = layout(model)
    (state,) = initial_states(lay)
    out = []
    for name, choice in moves:
        step = fire(lay, model.action(name), state, choice)
        assert step.target is not None, name
        state = step.target
        out.append(lay.as_dict(state))
    return out


def test_a_round_ends_once_every_player_still_in_has_played():
    states = play([("knock", {"t": 2}), ("pass turn", {}), ("pass turn", {}), ("pass turn", {})])
    assert [s["active"] for s in states[1:]] == [1, 0, 1]              # 2 is out: skipped
    assert [s["rounds"] for s in states[1:]] == [0, 1, 1]              # 0 and 1 played: the round ended
    assert [states[2][f"played_this_round[{p}]"] for p in range(3)] == [0, 0, 0]


def checked(tmp_path: Path, model_text: str) -> dict[str, Verdict]:
    (tmp_path / "m.yaml").write_text(model_text)
    (tmp_path / "c.yaml").write_text(CLAIMS)
    model = load_model(str(tmp_path / "m.yaml"))
    results = run_claims(model.instantiate(), load_properties(str(tmp_path / "c.yaml"), model),
                         ExplicitEngine(), Budget())
    return {r.property.id: r.verdict for r in results}


def test_without_in_round_a_player_out_keeps_the_round_from_ending(tmp_path):
    assert checked(tmp_path, MODEL.read_text()) == {"one-turn-a-player-in": Verdict.HOLDS,
                                                    "every-round-ends": Verdict.HOLDS}
    assert checked(tmp_path, MODEL.read_text().replace('in_round: "not out[p]"\n', "")) == \
        {"one-turn-a-player-in": Verdict.VIOLATED, "every-round-ends": Verdict.HOLDS}


ERRORS = [
    ("seat order", 'next_player: "if not out[next(active)] then next(active) else next(next(active))"\n', "",
     "this model plays in seat order", "\nin_round:", "say which players the turn passes over with skip:"),
    ("no rounds kept", "round_end: {rounds: rounds + 1}\n", "", "this model keeps no rounds", "\nin_round:",
     "add round_end: {}"),
    ("not a condition", 'in_round: "not out[p]"', 'in_round: "p + 1"', "expected a boolean", '"p + 1"', ""),
    ("an unknown name", 'in_round: "not out[p]"', 'in_round: "not out[q]"', "unknown name 'q'", 'q]"', ""),
]


@pytest.mark.parametrize("what,old,new,message,needle,hint", ERRORS, ids=[e[0] for e in ERRORS])
def test_what_cannot_be_defined_is_a_positioned_error(tmp_path, what, old, new, message, needle, hint):
    path = tmp_path / "model.yaml"
    assert old in MODEL.read_text(), what
    path.write_text(MODEL.read_text().replace(old, new, 1))
    error = the_error(path, message)
    assert str(error.span) == where(path, needle, delta=int(needle[0] in "\n\""))
    assert hint in (error.hint or "")


def test_a_model_without_turns_has_no_rounds(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text('model: flat\nvariables:\n  x: {type: 0..1, init: 0}\nin_round: "true"\n'
                    'actions:\n  - {name: bump, when: "x == 0", do: {x: 1}}\n')
    assert str(the_error(path, "in_round needs turns").span) == where(path, '"true"')
