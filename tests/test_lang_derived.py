"""`-D NAME=VALUE` naming a derived value (`constants:`): read as the one parameter it determines,
else an error at the declaration whose hint gives the exact -D (`lang/derived.py`)."""
from __future__ import annotations

import json

import pytest

from verifier.cli import main
from verifier.diagnostics import UsageError
from verifier.lang import resolve_derived

DECKS = """model: decks
players: 2
params:
  DRAW_PILE: {default: 1, min: 0, max: 53}
  OPENING: {default: 2, min: 1, max: 20}
  SPARE: {default: 0, min: 0, max: 3}
printed: {OPENING: 7}
constants:
  DECK: OPENING + DRAW_PILE
  EVEN: 2 * SPARE
  HALF: SPARE / 2
variables:
  deck: {type: 0..DECK, init: DRAW_PILE}
phases:
  - name: Draw
actions:
  - {name: draw, phase: Draw, when: "deck > 0", do: {deck: deck - 1}}
"""


@pytest.fixture
def decks(tmp_path):
    path = tmp_path / "decks.yaml"
    path.write_text(DECKS)
    return str(path)


def _error(path: str, params: dict, line: int = 9) -> str:
    """The message and hint of the error `params` give, which is at `line` (the derived value's declaration)."""
    with pytest.raises(UsageError) as err:
        resolve_derived(path, params)
    (d,) = err.value.diagnostics
    assert d.span is not None and d.span.line == line
    return f"{d.message} | {d.hint}"


def test_a_derived_value_is_read_as_the_one_parameter_it_determines(decks):
    resolved = resolve_derived(decks, {"OPENING": 7, "DECK": 20})
    assert resolved.params == {"OPENING": 7, "DRAW_PILE": 13}
    (note,) = resolved.notes
    assert note.severity == "note" and note.message == "-D DECK=20 read as -D DRAW_PILE=13 (DECK = OPENING + DRAW_PILE)"
    assert note.span is not None and note.span.line == 9


def test_printed_values_count_as_given(decks):
    assert resolve_derived(decks, {"DECK": 20}, printed=True).params == {"DRAW_PILE": 13}
    assert resolve_derived(decks, {"DECK": 20, "OPENING": 5}, printed=True).params == {"OPENING": 5, "DRAW_PILE": 15}


def test_no_derived_value_no_change(decks):
    assert resolve_derived(decks, {"OPENING": 7, "DRAW_PILE": 2}) == resolve_derived(decks, {"OPENING": 7,
                                                                                             "DRAW_PILE": 2})
    assert resolve_derived(decks, {"OPENING": 7}).notes == ()
    assert resolve_derived(decks, {"OPENING": 7, "DRAW_PILE": 3, "DECK": 10}).params == {"OPENING": 7, "DRAW_PILE": 3}


def test_two_open_parameters_give_the_exact_equivalents(decks):
    text = _error(decks, {"DECK": 20})
    assert "leaves DRAW_PILE and OPENING to choose" in text
    assert "-D OPENING=7 -D DRAW_PILE=13 (OPENING as the page prints)" in text
    assert "-D OPENING=2 -D DRAW_PILE=18 (OPENING at the default)" in text


@pytest.mark.parametrize("params, words", [
    ({"OPENING": 7, "DECK": 5}, "no DRAW_PILE in 0..53 gives DECK=5"),
    ({"OPENING": 7, "DECK": 5}, "choose DECK from 7..60"),
    ({"OPENING": 7, "DRAW_PILE": 3, "DECK": 5}, "DECK=5 contradicts the parameters: DECK = OPENING + DRAW_PILE = 10"),
    ({"OPENING": 3, "DECK": None}, "it cannot be left free"),
    ({"OPENING": None, "DECK": 9}, "OPENING is left free"),
])
def test_what_cannot_be_read_is_an_error_at_the_declaration(decks, params, words):
    assert words in _error(decks, params)


def test_a_formula_of_one_parameter(decks):
    assert resolve_derived(decks, {"EVEN": 4}).params == {"SPARE": 2}
    assert "no SPARE in 0..3 gives EVEN=5" in _error(decks, {"EVEN": 5}, line=10)
    text = _error(decks, {"HALF": 1}, line=11)
    assert "several values of SPARE give HALF=1 (HALF = SPARE / 2): 2, 3" in text and "-D SPARE=2" in text


def test_the_check_command_reads_it_and_says_so(decks, tmp_path, capsys):
    out = tmp_path / "out.json"
    assert main(["check", decks, "-D", "OPENING=7", "-D", "DECK=9", "--no-properties", "-q",
                 "-f", "json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["model"]["params"] == {"DRAW_PILE": 2, "OPENING": 7, "SPARE": 0}
    assert [w["message"] for w in doc["warnings"]] == ["-D DECK=9 read as -D DRAW_PILE=2 (DECK = OPENING + DRAW_PILE)"]
    assert "note: -D DECK=9 read as -D DRAW_PILE=2" in capsys.readouterr().err
    assert main(["check", decks, "-D", "DECK=9", "--no-properties", "-q"]) == 2
    assert "hint: give all of them but one with -D" in capsys.readouterr().err
