"""The turn order passing over players (docs/LANGUAGE.md, "Who plays next"): `skip: "out[p]"` gives
the turn to the player `next_player:` names (or the next seat), or where that player is skipped to the
next one not skipped in the direction of play; a round then waits only for the players not skipped;
what cannot be defined is a positioned error."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_lang_errors import the_error, where
from test_lang_in_round import play

from verifier.cli import main
from verifier.engines.compact import explore_compact
from verifier.engines.explicit import explore
from verifier.lang import load_model
from verifier.resources import Budget
from verifier.semantics import fire, initial_states, layout

MODEL = Path(__file__).parent / "fixtures" / "lang" / "skip.yaml"
CLAIMS = """\
model: skip
claims:
  - id: the-turn-goes-to-a-player-in
    says: "The turn never passes to a player knocked out"
    step: "not out[active]"
    actions: [any turn-end]
"""


def test_the_turn_passes_over_the_players_out_in_the_direction_of_play():
    states = play([("knock", {"t": 1}), ("knock", {"t": 2}), ("pass turn", {}), ("pass turn", {})], MODEL)
    assert [s["active"] for s in states[2:]] == [3, 0]                   # 1 and 2 are out: 0 -> 3 -> 0
    states = play([("knock", {"t": 3}), ("reverse", {}), ("pass turn", {}), ("pass turn", {}),
                   ("pass turn", {})], MODEL)
    assert [s["active"] for s in states[2:]] == [2, 1, 0]                # backwards, over 3: 0 -> 2 -> 1 -> 0
    assert [s["rounds"] for s in states[2:]] == [0, 0, 1]                # the round waits for 0, 2, 1 only


@pytest.mark.parametrize("skipping", [True, False])
def test_the_claims_hold_with_skip_and_break_without(tmp_path, capsys, skipping):
    text = MODEL.read_text() if skipping else MODEL.read_text().replace('skip: "out[p]"\n', "")
    model, claims = tmp_path / "skip.yaml", tmp_path / "claims.yaml"
    model.write_text(text)
    claims.write_text(CLAIMS)
    code = main(["check", str(model), "-p", str(claims), "--engine", "explicit", "--no-consistency", "-f", "json"])
    out = capsys.readouterr().out
    assert code == (0 if skipping else 1)
    if not skipping:
        assert '"the-turn-goes-to-a-player-in"' in out and '"VIOLATED"' in out


BAD = [
    ("not a condition", 'skip: "out[p]"', 'skip: "p + 1"', "expected a boolean, found an integer", 'p + 1'),
    ("a condition that does not read p", 'skip: "out[p]"', 'skip: "back"',
     "skip is a condition on the player p, and 'back' does not read p", '"back"'),
    ("an unknown name", 'skip: "out[p]"', 'skip: "gone[p]"', "unknown name 'gone'", "gone"),
    ("not text", 'skip: "out[p]"', "skip: [out]", "skip is one condition on the player p", "[out]"),
    ("a model without phases", "phases:\n  - name: Main\n", "",
     "skip needs turns: this model has no phases", '"out[p]"'),
]


@pytest.mark.parametrize(("what", "old", "new", "message", "needle"), BAD, ids=[c[0] for c in BAD])
def test_a_bad_skip_is_an_error_at_its_position(tmp_path, capsys, what, old, new, message, needle):
    text = MODEL.read_text()
    assert old in text, what
    if what == "a model without phases":
        text = text.replace("    phase: Main\n", "").replace("round_end: {rounds: rounds + 1}\n", "")
    path = tmp_path / "bad.yaml"
    path.write_text(text.replace(old, new, 1))
    error = the_error(path, message)
    assert str(error.span) == where(path, needle), what
    assert main(["lint", str(path), "-q"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_the_stores_and_the_player_symmetry_agree(tmp_path, capsys):
    """The passing over is plain effects: the compact store reaches the python store's states, and under
    `symmetry: players` (each candidate a player term) the claim holds as without it."""
    model = load_model(str(MODEL)).instantiate()
    assert len(explore(model).states) == len(explore_compact(model, Budget())) == 389
    path, claims = tmp_path / "skip.yaml", tmp_path / "claims.yaml"
    path.write_text(MODEL.read_text().replace("players: 4\n", "players: 4\nsymmetry: players\n")
                    .replace("round_end: {rounds: rounds + 1}\n", "").replace('end: "rounds == 2"\n', ""))
    claims.write_text(CLAIMS)
    assert main(["check", str(path), "-p", str(claims), "--engine", "explicit", "--no-consistency", "-f", "json"]) == 0
    assert '"symmetry"' in capsys.readouterr().out                       # the reduction was used


def test_skip_may_be_given_per_reading(tmp_path, capsys):
    """`skip:` keyed by every reading's name, `false` in a reading that passes over nobody (a knocked-out
    player still takes empty turns): the claim holds in one reading and breaks in the other."""
    text = MODEL.read_text().replace('skip: "out[p]"\n', "skip: {passed_over: \"out[p]\", empty_turns: false}\n") \
        .replace("players: 4\n", "players: 4\nvariants:\n  passed_over: {doc: a player out is passed over}\n"
                                 "  empty_turns: {doc: \"a player out still takes a turn, doing nothing\"}\n")
    model, claims = tmp_path / "skip.yaml", tmp_path / "claims.yaml"
    model.write_text(text)
    claims.write_text(CLAIMS + "    expected: {passed_over: HOLDS, empty_turns: VIOLATED}\n"
                               "    why: only the first reading passes over a player knocked out\n")
    assert main(["check", str(model), "-p", str(claims), "--engine", "explicit", "--no-consistency", "-q"]) == 0
    for reading, after in (("passed_over", 2), ("empty_turns", 1)):
        loaded = load_model(str(model), variant=reading).instantiate()
        lay = layout(loaded)
        (state,) = initial_states(lay)
        for name, choice in (("knock", {"t": 1}), ("pass turn", {})):
            state = fire(lay, loaded.action(name), state, choice).target
        assert lay.as_dict(state)["active"] == after, reading
    model.write_text(text.replace(", empty_turns: false", ""))
    error = the_error(model, "skip gives no value for variant empty_turns")
    assert str(error.span) == where(model, "{passed_over")
    model.write_text(text.replace("empty_turns: false", "empty_turns: \"back\""))
    assert "write false for a reading that passes over nobody" in the_error(model, "does not read p").hint
