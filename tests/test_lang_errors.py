"""Every model-language error names file:line:col of the offending text and gives a hint."""
from __future__ import annotations

from pathlib import Path

import pytest

from verifier.diagnostics import ModelError, UsageError
from verifier.lang import check_model, load_model

BASE = """\
model: base
players: 2
params:
  DECK: {default: 3, min: 1, max: 9}
constants:
  LIMIT: 2
enums:
  Suit: [hearts, spades]
variables:
  deck: {type: 0..DECK, per: player, init: DECK}
  hand: {type: 0..4, per: player, init: 0}
  drawn: {type: bool, init: false, reset: turn}
  trump: {type: Suit, init: hearts}
end: "deck[0] == 0 and deck[1] == 0"
variants:
  strict: {doc: "one reading"}
  loose: {doc: "another"}
phases:
  - name: Draw
  - name: Play
    mandatory: false
  - name: Discard
actions:
  - name: draw
    phase: Draw
    must: true
    choose: {n: 1..2}
    when: "not drawn and deck[active] >= n"
    do:
      deck[active]: deck[active] - n
      hand[active]: min(hand[active] + n, 4)
      drawn: true
  - name: play
    phase: Play
    when: "hand[active] > 0"
    do:
      hand[active]: hand[active] - 1
"""


def write(tmp_path: Path, old: str = "", new: str = "", text: str = BASE) -> Path:
    if old:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "model.yaml"
    path.write_text(text)
    return path


def where(path: Path, needle: str, nth: int = 1, delta: int = 0) -> str:
    """file:line:col of the character `delta` after the `nth` appearance of `needle` in the file."""
    text = path.read_text()
    offset = -1
    for _ in range(nth):
        offset = text.index(needle, offset + 1)
    offset += delta
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"{path}:{line}:{col}"


def the_error(path: Path, message: str):
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    matching = [d for d in info.value.diagnostics if message in d.message]
    assert matching, [d.message for d in info.value.diagnostics]
    return matching[0]


def test_the_base_model_loads(tmp_path):
    model = load_model(str(write(tmp_path)))
    assert model.name == "base" and model.variant == "strict"


CASES = [
    # (what, old, new, message, needle of the reported place, hint part)
    ("malformed YAML", "players: 2", "players: 2: 3", "malformed YAML", ": 3", "indentation"),
    ("an indexed key in a flow mapping", "init: hearts}", "init: hearts, x[0]: 1}",
     "a key with [ ] inside {...}", "[0]: 1}", 'quote the key, {"hand[active]": 0}'),
    ("a flow mapping not closed", "trump: {type: Suit, init: hearts}", "trump: {type: Suit, init: hearts",
     "(while parsing a flow mapping that starts at line 13, column 10)", ': "deck[0] == 0 and', "indentation"),
    ("an alias with no anchor", "init: hearts}", "init: *hearts}", "found undefined alias 'hearts'", "*hearts",
     "anchored (&name) earlier"),
    ("unknown top-level field", "players: 2", "playerz: 2", "unknown field 'playerz' in the model", "playerz",
     "did you mean 'players'"),
    ("unknown variable field", "init: hearts}", "intt: hearts}", "unknown field 'intt' in variable trump",
     "intt", "did you mean 'init'"),
    ("unknown action field", "    must: true", "    mustt: true", "unknown field 'mustt' in an action", "mustt",
     "did you mean 'must'"),
    ("unknown phase field", "    mandatory: false", "    mandatroy: false", "unknown field 'mandatroy' in a phase",
     "mandatroy", "did you mean 'mandatory'"),
    ("bad expression syntax", '"hand[active] > 0"', '"hand[active] >> 0"', "cannot parse expression",
     "> 0\"", "expected"),
    ("unexpected character", '"hand[active] > 0"', '"hand[active] > 0 $"', "unexpected character '$'", "$",
     "expected an operator"),
    ("unexpected end", '"hand[active] > 0"', '"hand[active] >"', "unexpected end of expression",
     ('hand[active] >"', 1, 14),
     "expected a name"),
    ("unknown name", '"hand[active] > 0"', '"hnad[active] > 0"', "unknown name 'hnad'", "hnad",
     "did you mean 'hand'"),
    ("unknown name, no near one", '"hand[active] > 0"', '"zzz > 0"', "unknown name 'zzz'", "zzz",
     "declare it"),
    ("int where bool", '"hand[active] > 0"', '"hand[active] + 1"', "expected a boolean, found an integer",
     "hand[active] + 1", "compare"),
    ("bool where int", "deck[active] - n", "drawn", "expected an integer, found a boolean", "drawn\n", "if cond"),
    ("enum of another type", '"hand[active] > 0"', '"trump == Draw"', "cannot compare a value of enum Suit with "
     "a value of enum Phase", "trump == Draw", "use a value of enum Suit"),
    ("array without index", '"hand[active] > 0"', '"hand > 0"', "'hand' is an array", "hand > 0", "index it"),
    ("index of the wrong type", '"hand[active] > 0"', '"hand[drawn] > 0"', "'hand[...]' needs an integer, "
     "found a boolean", "drawn]", "if cond"),
    ("scalar indexed", '"hand[active] > 0"', '"drawn[0]"', "'drawn' is not an array", "drawn[0]", "write just"),
    ("ordering on booleans", '"hand[active] > 0"', '"drawn > 0"', "'>' needs an integer, found a boolean",
     "drawn > 0", "if cond"),
    ("ordering on enum values", '"hand[active] > 0"', '"trump < spades"', "'<' needs an integer, found a value "
     "of enum Suit", "trump < spades", "define a rank"),
    ("initial candidates past their cap", "type: 0..4, per: player, init: 0", "type: 0..400000, per: player",
     "more than 1,000,000 candidate initial states before initially: filters them", "hand:",
     "this limit counts the candidates tried"),
    ("assignment out of range", "      drawn: true", "      drawn: true\n      deck[0]: 99", "outside its range",
     "deck[0]: 99", "widen"),
    ("init out of range", "type: 0..4, per: player, init: 0", "type: 0..4, per: player, init: 5",
     "hand starts at 5, outside its range 0..4", "hand:", "widen"),
    ("duplicate variable", "  trump: {type: Suit", "  hand: {type: bool}\n  trump: {type: Suit",
     "duplicate name 'hand'", "hand: {type: bool}", "its own name"),
    ("constant and variable share a name", "  trump: {type: Suit", "  LIMIT: {type: bool}\n  trump: {type: Suit",
     "duplicate name 'LIMIT'", "LIMIT: {type: bool}", "its own name"),
    ("duplicate enum value", "[hearts, spades]", "[hearts, spades, hearts]", "duplicate name 'hearts'",
     "hearts]", "its own name"),
    ("enum value clashes with a variable", "[hearts, spades]", "[hearts, drawn]", "duplicate name 'drawn'",
     "drawn: {type", "its own name"),
    ("duplicate phase", "  - name: Discard", "  - name: Play", "duplicate name 'Play'", ("Play", 2), "own name"),
    ("duplicate action", "  - name: play\n", "  - name: draw\n", "duplicate action 'draw'", ("name: draw", 2, 6),
     "rename"),
    ("unknown type", "type: 0..4, per", "type: int4, per", "unknown type 'int4'", "int4", "a type is bool"),
    ("unknown phase of an action", "    phase: Play\n", "    phase: Plya\n", "unknown phase 'Plya'",
     ("name: play", 1, 6),
     "leaf phases: Draw, Play, Discard"),
    ("unknown variant of an action", "    phase: Play\n", "    phase: Play\n    variants: [lose]\n",
     "unknown variant 'lose'", "lose]", "did you mean 'loose'"),
    ("per-variant guard missing a variant", '"not drawn and deck[active] >= n"', '{strict: "not drawn"}',
     "the guard of draw gives no value for variant loose", "{strict", "one entry per variant"),
    ("unknown assignment target", "      drawn: true", "      drwan: true", "cannot assign to 'drwan'", "drwan",
     "did you mean 'drawn'"),
    ("a value per reading", "      drawn: true", "      drawn: {strict: true, loose: false}",
     "an effect's value is one expression, not one per reading", "{strict: true", "a whole block is written"),
    ("a block per reading that leaves a reading out", "  - name: Discard\n",
     "  - name: Discard\n    on_enter:\n      strict: {drawn: true}\n",
     "phase Discard gives no value for variant loose", "strict: {drawn", "one entry per variant"),
    ("assigning active", "      drawn: true", "      active: 1", "'active' changes only when the turn passes",
     "active: 1", "next_player"),
    ("unknown next phase", "    mandatory: false", "    mandatory: false\n    next: [{to: Dicsard}]",
     "next names an unknown phase 'Dicsard'", "{to: Dicsard}", "did you mean 'Discard'"),
    ("unknown fairness action", "variants:", "fairness: [drwa]\nvariants:", "fairness names an unknown action "
     "'drwa'", "drwa", "did you mean 'draw'"),
    ("unknown progress variable", "variants:", "progress: [dek]\nvariants:", "progress names an unknown variable",
     "dek", "did you mean 'deck'"),
    ("array size from a parameter", "per: player, init: 0}", "per: 0..DECK, init: 0}",
     "an array's size cannot depend on a parameter", "0..DECK, init: 0", "constants"),
    ("bad overflow policy", "init: hearts}", "init: hearts, overflow: wrap}", "unknown overflow policy 'wrap'",
     "wrap", "clamp"),
    ("reset without init", "{type: bool, init: false, reset: turn}", "{type: bool, reset: turn}",
     "resets at the end of the turn but has no init", "turn}", "init value"),
    ("wrong argument count", '"hand[active] > 0"', '"abs(1, 2) > 0"', "abs takes one argument", "abs(", "abs(x)"),
    ("if branches differ", '"hand[active] > 0"', '"(if drawn then 1 else true)"', "the branches of 'if' differ",
     "if drawn", "same type"),
]


@pytest.mark.parametrize("what,old,new,message,needle,hint", CASES, ids=[c[0] for c in CASES])
def test_error(tmp_path, what, old, new, message, needle, hint):
    path = write(tmp_path, old, new)
    error = the_error(path, message)
    assert str(error.span) == (where(path, *needle) if isinstance(needle, tuple) else where(path, needle))
    assert error.hint and hint in error.hint, error.hint
    assert "^" in error.render()


def test_all_errors_are_reported_at_once(tmp_path):
    path = write(tmp_path, '"hand[active] > 0"', '"hnad[active] > zz"')
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    messages = [d.message for d in info.value.diagnostics]
    assert "unknown name 'hnad'" in messages and "unknown name 'zz'" in messages


def test_a_bad_parameter_is_one_error_not_a_cascade(tmp_path):
    """DECK is used throughout the model; its broken declaration is the only error reported."""
    path = write(tmp_path, "DECK: {default: 3,", "DECK: {default: three,")
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    assert [d.message for d in info.value.diagnostics] == ["parameter DECK needs integer default, min and max"]


def test_caret_under_the_bad_token(tmp_path):
    path = write(tmp_path, '"hand[active] > 0"', '"hand[active] > > 0"')
    error = the_error(path, "unexpected '>'")
    line = next(ln for ln in path.read_text().splitlines() if "> > 0" in ln)
    assert error.span.col == line.index("> > 0") + 3
    assert error.render().splitlines()[2].index("^") - len("       | ") == line.index("> > 0") + 2


def test_unreachable_phase(tmp_path):
    path = write(tmp_path, "  - name: Draw\n", "  - name: Draw\n    next: [{to: Discard}]\n")
    text = path.read_text().replace("    mandatory: false\n", "    mandatory: false\n    next: [{to: Discard}]\n")
    path.write_text(text)
    error = the_error(path, "phase Play can never be entered")
    assert str(error.span) == where(path, "Play")
    assert "next:" in error.hint


def test_action_in_a_phase_with_steps(tmp_path):
    path = write(tmp_path, "  - name: Discard\n", "  - name: End\n    steps:\n      - {name: Discard}\n"
                                                  "      - {name: Cleanup}\n")
    path.write_text(path.read_text().replace("    phase: Play\n", "    phase: End\n"))
    error = the_error(path, "belongs to phase 'End', which has steps")
    assert str(error.span) == where(path, "name: play", 1, 6)
    assert "Discard, Cleanup" in error.hint


def test_must_guard_that_nothing_changes_is_a_warning(tmp_path):
    path = write(tmp_path, text=BASE + "  - name: tidy\n    phase: Discard\n    must: true\n"
                                       "    when: \"trump == hearts\"\n    do: {drawn: false}\n")
    model, diagnostics = check_model(str(path))
    (warning,) = diagnostics
    assert warning.severity == "warning" and "must action tidy stays enabled" in warning.message
    assert str(warning.span) == where(path, "name: tidy", 1, 6) and "not drawn" in warning.hint
    assert model.action("tidy")


def test_missing_file(tmp_path):
    with pytest.raises(ModelError) as info:
        load_model(str(tmp_path / "nowhere.yaml"))
    (d,) = info.value.diagnostics
    assert f"no such file: {tmp_path / 'nowhere.yaml'}" in d.message and d.hint


def test_not_a_mapping(tmp_path):
    path = write(tmp_path, text="- just\n- a list\n")
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    assert str(info.value.diagnostics[0].span) == f"{path}:1:1"


def test_missing_model_name(tmp_path):
    path = write(tmp_path, "model: base\n", "")
    error = the_error(path, "the model has no 'model'")
    assert str(error.span) == f"{path}:1:1" and "model: ..." in error.hint


def test_unknown_parameter_lists_the_valid_ones(tmp_path):
    with pytest.raises(UsageError) as info:
        load_model(str(write(tmp_path)), params={"DEKC": 3})
    (d,) = info.value.diagnostics
    assert "unknown parameter 'DEKC'" in d.message and "PLAYERS, DECK" in d.hint


def test_parameter_outside_its_range(tmp_path):
    with pytest.raises(UsageError) as info:
        load_model(str(write(tmp_path)), params={"DECK": 10})
    assert "outside 1..9" in info.value.diagnostics[0].message


def test_unknown_variant_lists_the_valid_ones(tmp_path):
    with pytest.raises(UsageError) as info:
        load_model(str(write(tmp_path)), variant="lenient")
    (d,) = info.value.diagnostics
    assert "unknown variant 'lenient'" in d.message and "strict, loose" in d.hint


def test_a_long_unparsable_expression_is_clipped_in_the_message(tmp_path):
    """The excerpt under the message shows the source; the message itself stays one readable line."""
    long_guard = "(( " + "hand[active] > 0 and " * 40 + "true"
    path = write(tmp_path, '"hand[active] > 0"', f'"{long_guard}"')
    d = the_error(path, "cannot parse expression")
    assert "..." in d.message and len(d.message) < 300
