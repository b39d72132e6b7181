"""Effects over players (or an enum, or constant lo..hi): `for p in player:` unrolls into plain
assignments, so every engine and the Promela export see ordinary effects."""
from __future__ import annotations

import pytest
from test_lang_errors import BASE, the_error, where, write

from verifier.engines.explicit import explore
from verifier.ir.expr import pretty
from verifier.lang import load_model

LOOP = """\
  - name: refill
    phase: Discard
    when: "hand[0] < 4"
    do:
      drawn: true
      for p in player:
        hand[p]: "min(hand[p] + 1, 4)"
      for s in Suit:
        marked[s]: "s == trump"
"""


def model_text(loop: str = LOOP) -> str:
    return BASE.replace("  trump: {type: Suit, init: hearts}\n",
                        "  trump: {type: Suit, init: hearts}\n  marked: {type: bool, per: Suit, init: false}\n") \
        + loop


def effects(model, name: str) -> dict[str, str]:
    return {pretty(e.target): pretty(e.value, model.enum_value_name) for e in model.action(name).effects}


def test_a_loop_unrolls_into_one_assignment_per_value(tmp_path):
    model = load_model(str(write(tmp_path, text=model_text())))
    assert effects(model, "refill") == {"drawn": "true", "hand[0]": "min(hand[0] + 1, 4)",
                                        "hand[1]": "min(hand[1] + 1, 4)", "marked[0]": "hearts == trump",
                                        "marked[1]": "spades == trump"}


def test_the_same_states_as_the_written_out_effects(tmp_path):
    looped = load_model(str(write(tmp_path, text=model_text()))).instantiate()
    plain = LOOP.replace('      for p in player:\n        hand[p]: "min(hand[p] + 1, 4)"\n',
                         '      hand[0]: "min(hand[0] + 1, 4)"\n      hand[1]: "min(hand[1] + 1, 4)"\n') \
        .replace('      for s in Suit:\n        marked[s]: "s == trump"\n',
                 '      marked[hearts]: "trump == hearts"\n      marked[spades]: "trump == spades"\n')
    (tmp_path / "plain").mkdir()
    written = load_model(str(write(tmp_path / "plain", text=model_text(plain)))).instantiate()
    a, b = explore(looped), explore(written)
    assert (len(a.states), a.transitions) == (len(b.states), b.transitions)


CASES = [
    ("loop body not a map", '      for p in player:\n        hand[p]: "min(hand[p] + 1, 4)"\n',
     "      for p in player: 3\n", "must map targets to values", "for p in player: 3", "e.g. for p in player"),
    ("loop over a parameter range", "for p in player:", "for p in 0..DECK:", "a for loop ranges over player",
     "for p in 0..DECK", "0..N-1"),
    ("loop assigns an element twice", "      drawn: true\n", "      drawn: true\n      for q in player:\n"
     "        hand[q]: 0\n", "assigns hand[0] twice", "for p in player", "once per effect block"),
]


@pytest.mark.parametrize("what,old,new,message,needle,hint", CASES, ids=[c[0] for c in CASES])
def test_error(tmp_path, what, old, new, message, needle, hint):
    path = write(tmp_path, text=model_text(LOOP.replace(old, new, 1)))
    error = the_error(path, message)
    assert str(error.span) == (where(path, *needle) if isinstance(needle, tuple) else where(path, needle))
    assert error.hint and hint in error.hint, error.hint
