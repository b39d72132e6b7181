"""Rounds where the order of play changes (docs/LANGUAGE.md, "Who plays next"): with `next_player:` and a
`round_end:` block a round ends once every player has had a turn in it, for the turn change's
`round_end` and for claims on rounds alike; the explicit and symbolic engines agree; what cannot be
defined is a positioned error."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_lang_errors import the_error, where

from verifier.diagnostics import PropertyError
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.ir.expr import pretty
from verifier.lang import load_model, load_properties
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import fire, initial_states, layout

FIXTURES = Path(__file__).parent / "fixtures" / "lang"
MODEL = FIXTURES / "rounds.yaml"
CLAIMS = FIXTURES / "rounds_props.yaml"


def play(moves: list[str]) -> list[dict[str, int]]:
    """The states after each of `moves` from the initial state."""
    model = load_model(str(MODEL)).instantiate()
    lay = layout(model)
    (state,) = initial_states(lay)
    out = []
    for name in moves:
        step = fire(lay, model.action(name), state, {})
        assert step.target is not None, name
        state = step.target
        out.append(lay.as_dict(state))
    return out


def test_a_round_ends_when_every_player_has_played_not_at_the_last_seat():
    states = play(["reverse", "pass turn", "pass turn", "pass turn", "pass turn"])
    assert [s["active"] for s in states[1:]] == [2, 0, 1, 2]       # 0 reverses to 2, then seat order
    assert [s["rounds"] for s in states[1:]] == [0, 0, 0, 1]       # 2's first turn ends no round: 1 has not played
    assert [states[-1][f"played_this_round[{p}]"] for p in range(3)] == [0, 0, 0]


def test_an_extra_turn_stays_in_the_round():
    states = play(["extra", "pass turn", "pass turn", "pass turn", "pass turn"])
    assert [s["active"] for s in states[1:]] == [0, 1, 2, 0]
    assert [s["rounds"] for s in states[1:]] == [0, 0, 0, 1]       # 2 had not played when 1's turn ended


def verdicts(engine, leave_out: str = "") -> dict[str, Verdict]:
    model = load_model(str(MODEL))
    claims = [p for p in load_properties(str(CLAIMS), model) if p.id != leave_out]
    results = run_claims(model.instantiate(), claims, engine, Budget())
    return {r.property.id: Verdict.HOLDS if r.verdict is Verdict.PROVED else r.verdict for r in results}


def test_explicit_and_symbolic_agree_on_rounds():
    explicit = verdicts(ExplicitEngine())
    assert explicit == {"three-turns-a-round": Verdict.VIOLATED, "six-turns-a-round": Verdict.HOLDS,
                        "a-round-ends-when-all-played": Verdict.HOLDS,
                        "no-round-end-before-the-first-turn-ends": Verdict.HOLDS, "two-rounds": Verdict.HOLDS}
    # The symbolic engine spends its whole rlimit on six-turns-a-round and leaves it UNKNOWN (no
    # invariant it finds bounds a round's turns): 30 s of CPU that would compare nothing.
    symbolic = verdicts(SymbolicEngine(), leave_out="six-turns-a-round")
    assert symbolic == {k: v for k, v in explicit.items() if k != "six-turns-a-round"}


def test_seat_order_keeps_its_rounds(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text("".join(line for line in MODEL.read_text().splitlines(keepends=True)
                            if not line.startswith("next_player")))
    model = load_model(str(path))
    assert not model.order_changes and model.round_ends is None
    assert "played_this_round" not in [v.name for v in model.variables]
    assert pretty(model.round_condition()) == "active == 2"


@pytest.mark.parametrize("claim", ["ordering: {pattern: absence, p: extra, scope: round}",
                                   "ordering: {pattern: absence, p: round-end}"])
def test_claims_on_rounds_need_the_model_to_keep_them(tmp_path, claim):
    model_path = tmp_path / "model.yaml"
    model_path.write_text(MODEL.read_text().replace("round_end: {rounds: rounds + 1}\n", ""))
    claims = tmp_path / "claims.yaml"
    claims.write_text(f"model: rounds\nclaims:\n  - id: c\n    says: \"x\"\n    {claim}\n")
    model = load_model(str(model_path))
    assert model.round_ends is None
    with pytest.raises(PropertyError) as info:
        load_properties(str(claims), model)
    (error,) = info.value.diagnostics
    assert "order of play changes (next_player:) and it keeps no rounds" in error.message
    assert str(error.span) == where(claims, "round}" if "scope" in claim else "round-end}")
    assert "round_end: {}" in (error.hint or "")


def test_an_empty_round_end_keeps_the_rounds(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text(MODEL.read_text().replace("round_end: {rounds: rounds + 1}", "round_end: {}"))
    assert load_model(str(path)).round_ends is not None


ERRORS = [
    ("symmetry", "round_end:", "symmetry: players\nround_end:",
     "symmetry: players does not hold: round_end: rounds tell the players apart", "{rounds: rounds + 1}"),
    ("the flags' name taken", "  rounds:", "  played_this_round: {type: bool, init: false}\n  rounds:",
     "duplicate name 'played_this_round'", "{rounds: rounds + 1}"),
]


@pytest.mark.parametrize("what,old,new,message,needle", ERRORS, ids=[e[0] for e in ERRORS])
def test_what_rounds_cannot_be_is_a_positioned_error(tmp_path, what, old, new, message, needle):
    path = tmp_path / "model.yaml"
    path.write_text(MODEL.read_text().replace(old, new, 1))
    assert str(the_error(path, message).span) == where(path, needle)
