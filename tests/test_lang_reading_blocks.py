"""The turn-change blocks and `on_enter` per reading (docs/LANGUAGE.md, "Readings"): `turn_end`,
`round_end`, `on_turn_start`, a phase's `on_enter` and `next_player` may each be written once per
reading, as an action's `do:`; every reading's block is checked, the chosen one is used."""
from __future__ import annotations

import pytest
from test_lang_errors import the_error, where, write

from verifier.ir.expr import pretty
from verifier.lang import load_model
from verifier.semantics import fire, initial_states, layout

PER_READING = """\
define:
  common:
    hand[0]: 0
turn_end:
  strict: [common, {trump: spades}]
  loose: common
round_end:
  strict:
    hand[1]: 1
  loose:
    hand[1]: 2
on_turn_start:
  strict: {drawn: false}
  loose: {drawn: true}
next_player:
  strict: "(active + 1) % PLAYERS"
  loose: "active"
variants:"""


def pass_effects(model) -> dict[str, str]:
    return {pretty(e.target): pretty(e.value) for e in model.action("pass turn").effects}


@pytest.fixture
def model_file(tmp_path):
    return write(tmp_path, "variants:", PER_READING)


def test_each_reading_takes_its_own_blocks(model_file):
    strict, loose = (pass_effects(load_model(str(model_file), variant=v)) for v in ("strict", "loose"))
    assert strict["trump"] == "1" and "trump" not in loose       # a reading extends the shared block
    assert strict["hand[0]"] == loose["hand[0]"]
    assert "then 1 else" in strict["hand[1]"] and "then 2 else" in loose["hand[1]"]
    assert strict["active"] == "(active + 1) % 2" and loose["active"] == "active"


def test_the_reading_decides_what_pass_turn_does(model_file):
    for variant, (player, drawn) in {"strict": (1, 0), "loose": (0, 1)}.items():
        model = load_model(str(model_file), variant=variant).instantiate()
        lay = layout(model)
        (start,) = initial_states(lay)
        got = dict(zip([s.name for s in lay.slots], fire(lay, model.action("pass turn"), start, {}).target))
        assert (got["active"], got["drawn"]) == (player, drawn), variant


def test_on_enter_per_reading(tmp_path):
    path = write(tmp_path, "  - name: Discard\n",
                 "  - name: Discard\n    on_enter:\n      strict:\n        hand[active]: 0\n      loose: {}\n")
    entering = {v: pass_effects(load_model(str(path), variant=v)) for v in ("strict", "loose")}
    assert all("hand[active]" not in e for e in entering.values())      # Discard is no first phase
    ends = {v: load_model(str(path), variant=v).action("end Play").effects for v in ("strict", "loose")}
    assert [pretty(a.target) for a in ends["strict"]] == ["phase", "hand[active]"]
    assert [pretty(a.target) for a in ends["loose"]] == ["phase"]


ERRORS = [
    ("a reading left out", "variants:", "turn_end:\n  strict: {drawn: true}\nvariants:",
     "turn_end gives no value for variant loose", "strict: {drawn"),
    ("an error in the reading not chosen", "variants:",
     "on_turn_start:\n  strict: {drawn: true}\n  loose: {drwan: true}\nvariants:",
     "cannot assign to 'drwan'", "drwan"),
    ("a player per reading that is not one", "variants:",
     'next_player:\n  strict: "active"\n  loose: "drawn"\nvariants:', "next_player is a player, found a boolean",
     '"drawn"'),
    ("one effect's value per reading", "variants:", "turn_end:\n  drawn: {strict: true, loose: false}\nvariants:",
     "an effect's value is one expression, not one per reading", "{strict: true"),
]


@pytest.mark.parametrize("what,old,new,message,needle", ERRORS, ids=[e[0] for e in ERRORS])
def test_wrong_blocks_per_reading_are_positioned_errors(tmp_path, what, old, new, message, needle):
    path = write(tmp_path, old, new)
    assert str(the_error(path, message).span) == where(path, needle)
