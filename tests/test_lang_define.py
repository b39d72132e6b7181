"""Language v2, part 1: `define:` (named predicates and macros), `x in {..}` / `x in lo..hi`, phase sets."""
from __future__ import annotations

import pytest
from test_lang_errors import BASE, the_error, where, write

from verifier.cli import main
from verifier.engines.explicit import explore
from verifier.ir.expr import pretty
from verifier.lang import load_model
from verifier.lang.properties import load_properties

DEFINES = """\
define:
  has_cards(p): "hand[p] > 0"
  deck_left: "deck[active]"
  low(p): "not has_cards(p) or hand[p] in 1..LIMIT"
  all_low: "forall p in player: low(p)"
  red: "trump in {hearts}"
phases:"""


def guard(model, name: str) -> str:
    return pretty(model.action(name).guard, model.enum_value_name)


def test_definitions_expand_to_the_expressions_they_name(tmp_path):
    text = BASE.replace("phases:", DEFINES, 1).replace('"hand[active] > 0"', '"has_cards(active) and all_low"')
    model = load_model(str(write(tmp_path, text=text)))
    assert guard(model, "play") == ("(phase == Play) and (hand[active] > 0) and (forall p in 0..1: (not "
                                    "(hand[p] > 0)) or ((1 <= hand[p]) and (hand[p] <= 2))) and "
                                    "(not ((deck[0] == 0) and (deck[1] == 0)))")
    assert [d.name for d in model.definitions] == ["has_cards", "deck_left", "low", "all_low", "red"]


def test_a_macro_gives_the_same_state_space_as_the_text_it_names(tmp_path):
    plain = load_model(str(write(tmp_path, text=BASE))).instantiate()
    text = BASE.replace("phases:", DEFINES, 1).replace('"hand[active] > 0"', '"has_cards(active)"') \
        .replace("deck[active] - n", "deck_left - n")
    (tmp_path / "v2").mkdir()
    macro = load_model(str(write(tmp_path / "v2", text=text))).instantiate()
    a, b = explore(plain), explore(macro)
    assert len(a.states) == len(b.states) and a.transitions == b.transitions


def test_an_argument_is_not_captured_by_a_quantifier_of_the_body(tmp_path):
    text = BASE.replace("phases:", 'define:\n  highest(q): "forall p in player: hand[p] <= hand[q]"\nphases:', 1) \
        .replace('"hand[active] > 0"', '"exists p in player: highest(p)"')
    model = load_model(str(write(tmp_path, text=text)))
    assert "(exists p in 0..1: (forall p_1 in 0..1: hand[p_1] <= hand[p]))" in guard(model, "play")


def test_membership(tmp_path):
    text = BASE.replace('"hand[active] > 0"', '"phase in {Play, Discard} and hand[active] in 1..LIMIT"')
    model = load_model(str(write(tmp_path, text=text)))
    assert "((phase == Play) or (phase == Discard)) and ((1 <= hand[active]) and (hand[active] <= 2))" \
        in guard(model, "play")


def test_phase_lists_and_negated_phase_sets(tmp_path):
    text = BASE.replace("    phase: Play\n", "    phase: [Play, Discard]\n") \
        .replace("    phase: Draw\n", "    phase: {not: [Play, Discard]}\n")
    model = load_model(str(write(tmp_path, text=text)))
    play = model.action("play")
    assert play.phase is None and play.phases == ("Play", "Discard")
    assert guard(model, "play").startswith("((phase == Play) or (phase == Discard)) and")
    assert model.action("draw").phase == "Draw"          # one phase left: the plain form
    # a must action in a listed phase keeps that phase from being left
    text = text.replace("    phase: {not: [Play, Discard]}\n    must: true\n", "    phase: [Draw, Discard]\n"
                        "    must: true\n")
    (tmp_path / "b").mkdir()
    model = load_model(str(write(tmp_path / "b", text=text)))
    assert "not (exists n in 1..2" in guard(model, "pass turn")


def test_definitions_in_property_files(tmp_path):
    text = BASE.replace("phases:", DEFINES, 1)
    model_path = write(tmp_path, text=text)
    props = tmp_path / "props.yaml"
    props.write_text('claims:\n  - id: low\n    says: "hands stay low"\n    invariant: "all_low and '
                     'not has_cards(2 - 2) or true"\n')
    claims = load_properties(str(props), load_model(str(model_path)))
    assert "forall p in 0..1" in pretty(claims[0].expr)


CASES = [
    # (what, old, new, message, needle of the reported place, hint part)
    ("repeated parameter", "phases:", 'define:\n  f(p, p): "hand[p] > 0"\nphases:', "repeats a parameter name",
     "f(p, p)", "its own name"),
    ("bad definition head", "phases:", 'define:\n  f(p: "hand[p] > 0"\nphases:', "cannot parse expression",
     ("f(p", 1, 3), "name(p, q)"),
    ("definition not a map", "phases:", "define: [a]\nphases:", "define must map names to expressions", "[a]",
     "e.g. define"),
    ("definition body not an expression", "phases:", "define:\n  f: null\nphases:", "definition f must be an "
     "expression or a block of effects", ("f: null", 1, 3), "as text"),
    ("definition clashes with a variable", "phases:", 'define:\n  hand(p): "p > 0"\nphases:',
     "duplicate name 'hand'", "hand(p):", "its own name"),
    ("call of a variable", '"hand[active] > 0"', '"hand(active) > 0"', "'hand' is not a definition",
     "hand(active)", "under define"),
    ("call of an unknown name", '"hand[active] > 0"', '"hadn(active) > 0"', "unknown name 'hadn'",
     "hadn(active)", "did you mean"),
    ("wrong number of arguments", "phases:", 'define:\n  big(p): "hand[p] > 2"\nphases:',
     "big takes 1 argument, found 2", "big(1, 2)", "write big(p)"),
    ("body wrong for the argument's type", "phases:", 'define:\n  big(p): "hand[p] > 2"\nphases:',
     "'hand[...]' needs an integer, found a boolean", ("p] > 2", 1), "if cond"),
    ("definition used before it is defined", "phases:", 'define:\n  a: "b"\n  b: "true"\nphases:',
     "unknown name 'b'", ('"b"', 1, 1), "declare it"),
    ("exponential expansion", "phases:", "define:\n" + "".join(
        f'  d{i}: "{"d" + str(i - 1) if i else "hand[0]"} + {"d" + str(i - 1) if i else "hand[1]"}"\n'
        for i in range(16)) + "phases:", "d12 expands to more than", "d12:", "simplify"),
    ("membership of another type", '"hand[active] > 0"', '"trump in {hearts, Draw}"', "cannot compare a value "
     "of enum Suit with a value of enum Phase", "Draw}", "use a value of enum Suit"),
    ("range membership of a boolean", '"hand[active] > 0"', '"drawn in 0..1"', "'in ..' needs an integer",
     "drawn in", "if cond"),
    ("phase list names a parent", "    phase: Play\n", "    phase: [Play, Turn]\n", "phase 'Turn' has steps",
     "Turn]", "its steps: Play"),
    ("phase list names an unknown phase", "    phase: Play\n", "    phase: [Play, Dicsard]\n",
     "unknown phase 'Dicsard'", "Dicsard]", "did you mean 'Discard'"),
    ("negated phase set leaves nothing", "    phase: Play\n", "    phase: {not: [Draw, Play, Discard]}\n",
     "this phase set leaves no phase", "[Draw, Play, Discard]}", "never be taken"),
    ("a list body is a block of effects", "phases:", "define:\n  f: [1]\nphases:", "the effects of block f are a "
     "mapping, a block's name or a list of those", ("f: [1]", 1, 4), "on_enter: refill_hand"),
]


def variant_text(what: str, old: str, new: str) -> str:
    text = BASE.replace(old, new, 1)
    if what == "wrong number of arguments":
        text = text.replace('"hand[active] > 0"', '"big(1, 2)"')
    if what == "body wrong for the argument's type":
        text = text.replace('"hand[active] > 0"', '"big(drawn)"')
    if what == "exponential expansion":
        text = text.replace('"hand[active] > 0"', '"d15 > 0"')
    if what == "phase list names a parent":
        text = text.replace("  - name: Play\n    mandatory: false\n",
                            "  - name: Turn\n    steps:\n      - name: Play\n        mandatory: false\n")
    return text


@pytest.mark.parametrize("what,old,new,message,needle,hint", CASES, ids=[c[0] for c in CASES])
def test_error(tmp_path, what, old, new, message, needle, hint):
    path = write(tmp_path, text=variant_text(what, old, new))
    error = the_error(path, message)
    assert str(error.span) == (where(path, *needle) if isinstance(needle, tuple) else where(path, needle))
    assert error.hint and hint in error.hint, error.hint


def test_an_error_in_a_body_names_the_use(tmp_path):
    path = write(tmp_path, text=variant_text("body wrong for the argument's type", *CASES[8][1:3]))
    error = the_error(path, "'hand[...]' needs an integer")
    assert [str(span) for _, span in error.notes] == [where(path, "big(drawn)")]


def test_cli_exit_code_2(tmp_path, capsys):
    path = write(tmp_path, text=variant_text(*CASES[7][:3]))
    code = main(["check", str(path), "--no-consistency", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and where(path, "big(1, 2)") in err and "hint" in err
