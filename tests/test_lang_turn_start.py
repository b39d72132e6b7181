"""`on_turn_start` (effects that see the player whose turn starts) and `reset: own_turn` ("until your
next turn"): desugared into the turn-passing action, element by element."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_lang_errors import the_error, where

from verifier.engines.explicit import explore
from verifier.ir.expr import pretty
from verifier.lang import load_model
from verifier.semantics import fire, initial_states, layout

MODEL = Path(__file__).parent / "fixtures" / "lang" / "turn_start.yaml"


def test_the_turn_start_sees_the_new_active_player():
    model = load_model(str(MODEL)).instantiate()
    lay = layout(model)
    names = [s.name for s in lay.slots]
    passing = model.action("pass turn")
    state = dict(zip(names, [0] * len(names)))
    state.update({"shield[1]": 1, "shield[2]": 1, "mana[0]": 2, "mana[1]": 1})
    after = fire(lay, passing, tuple(state[n] for n in names), {}).target
    got = dict(zip(names, after))
    assert got["active"] == 1
    assert got["mana[1]"] == 2 and got["mana[0]"] == 0       # player 1 gains one; the old active's turn_end
    assert got["shield[1]"] == 0 and got["shield[2]"] == 1   # only the starting player's shield ends
    assert got["starts"] == 1


def test_it_is_plain_effects_on_the_turn_passing_action():
    model = load_model(str(MODEL))
    effects = {pretty(e.target): pretty(e.value) for e in model.action("pass turn").effects}
    assert effects["shield[(active + 1) % 3]"] == "false"
    assert effects["mana[(active + 1) % 3]"] == \
        "min((if ((active + 1) % 3) == active then 0 else mana[(active + 1) % 3]) + 1, 3)"   # after turn_end
    assert len(explore(model.instantiate()).states) == 16     # SPIN agrees: test_spin_crosscheck


def test_the_first_turn_starts_too():
    """on_turn_start runs for the very first turn: the initial state is what it leaves."""
    model = load_model(str(MODEL)).instantiate()
    lay = layout(model)
    (start,) = initial_states(lay)
    got = lay.as_dict(start)
    assert (got["active"], got["mana[0]"], got["mana[1]"], got["starts"]) == (0, 1, 0, 1)


CASES = [
    ("on_turn_start without phases", "phases:\n  - name: Main\n", "", "on_turn_start needs turns",
     "mana[active]: \"min", "declare phases"),
    ("own_turn on a scalar", "  starts: {type: 0..2, init: 0, overflow: clamp}",
     "  starts: {type: 0..2, init: 0, overflow: clamp, reset: own_turn}", "reset: own_turn needs an array per: "
     "player", ("own_turn}", 2), "next turn starts"),
    ("unknown reset", "reset: own_turn}", "reset: round}", "unknown reset 'round'", "round}", "own_turn"),
]


@pytest.mark.parametrize("what,old,new,message,needle,hint", CASES, ids=[c[0] for c in CASES])
def test_error(tmp_path, what, old, new, message, needle, hint):
    text = MODEL.read_text()
    assert old in text
    if what == "on_turn_start without phases":
        text = text.replace("    phase: Main\n", "")
    path = tmp_path / "model.yaml"
    path.write_text(text.replace(old, new, 1))
    error = the_error(path, message)
    assert str(error.span) == (where(path, *needle) if isinstance(needle, tuple) else where(path, needle))
    assert error.hint and hint in error.hint, error.hint
