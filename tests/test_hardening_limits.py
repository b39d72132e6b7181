"""Hostile model files: each limit is checked before any work and reported as a positioned
error (file:line:col, the text, a hint; exit 2), never a traceback, a hang or a memory blow-up.

The commands run at the default deadline, CPU seconds (not a --timeout of wall clock, which a loaded
machine can reach before the error is written: exit 3 instead of 2); a hang is the suite's hang
limit's (conftest)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from ruamel.yaml.parser import Parser

from verifier.cli import main
from verifier.diagnostics import ModelError
from verifier.engines.codegen import make_packing
from verifier.lang import load_model
from verifier.lang.limits import MAX_EXPR_DEPTH, MAX_PLAYERS, MAX_YAML_DEPTH, EventLimits
from verifier.lang.yaml_source import load_yaml
from verifier.semantics import layout

GATE = Path(__file__).parent / "fixtures" / "gate"
MODEL = (GATE / "gate.yaml").read_text(encoding="utf-8")
PROPS = str(GATE / "gate_props.yaml")
PLAY_GUARD = 'when: "hand > 0"'


def _bomb() -> str:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return MODEL.replace("players: 1\n", "players: 1\nbomb:\n  " + "\n  ".join(lines) + "\n")


CASES = {   # name -> (model text, words of the message, 1-based line of the error or None)
    "alias bomb": (_bomb(), "expands to more than", 13),
    "nested not": (MODEL.replace(PLAY_GUARD, 'when: "' + "not " * 300 + 'hand > 0"'), "too deeply nested", 34),
    "nested minus": (MODEL.replace("      hand: hand - 1\n    rule: \"Play",
                                   "      hand: \"" + "-" * 300 + "hand\"\n    rule: \"Play"), "too deeply nested", 36),
    "nested if": (MODEL.replace(PLAY_GUARD, 'when: "' + "if true then " * 300 + "hand > 0" + " else false" * 300
                                + '"'), "too deeply nested", 34),
    "long chain": (MODEL.replace(PLAY_GUARD, 'when: "' + " + ".join(["hand"] * 3000) + ' > 0"'),
                   "too deeply nested", 34),
    "nested flow": (MODEL.replace("doc: |", "deep: " + "[" * 2000 + "]" * 2000 + "\ndoc: |"),
                    "too deeply nested", 2),
    "huge choice": (MODEL.replace("  - name: play\n    phase: Play\n",
                                  "  - name: play\n    phase: Play\n    choose: {n: 0..1000000000}\n"),
                    "can choose in 1,000,000,001 ways", 32),
    "form feed": (MODEL.replace("Draw: the player draws", "Draw: the \x0c player draws"), "U+000C", 16),
    "NUL": (MODEL.replace("Draw: the player draws", "Draw: the player\x00 draws"), "U+0000", 16),
    "ESC": (MODEL.replace("Draw: the player draws", "Draw: \x1b[2J the player draws"), "U+001B", 16),
    "omap tag": (MODEL.replace('rule: "Play: a card leaves the hand"', "rule: !!omap [{a: 1}]"),
                 "tag '!!omap' is not allowed", 37),
    "python tag": (MODEL.replace('rule: "Play: a card leaves the hand"',
                                 'rule: !!python/object/apply:os.system ["echo pwned"]'),
                   "tag '!!python/object/apply:os.system' is not allowed", 37),
    "inverted per": (MODEL.replace("  hand: {type: 0..3, init: 0}\n",
                                   "  hand: {type: 0..3, init: 0}\n  arr: {type: 0..3, per: 5..2, init: 0}\n"),
                     "empty range 5..2", 12),
    "inverted type": (MODEL.replace("hand: {type: 0..3, init: 0}", "hand: {type: 3..0, init: 0}"),
                      "empty range 3..0", 11),
    "huge YAML integer": (MODEL.replace("LIMIT: 2", "LIMIT: " + "9" * 5000), "at most 18 digits", 8),
    "huge expression integer": (MODEL.replace("LIMIT: 2", 'LIMIT: "' + "9" * 5000 + '"'), "at most 18 digits", 8),
    "players": (MODEL.replace("players: 1", "players: 100000"), f"from 1 to {MAX_PLAYERS}", 6),
    "definition chain": (MODEL.replace("players: 1\n", "players: 1\ndefine:\n  d0: \"hand + 1\"\n" + "".join(
        f"  d{k}: \"d{k - 1} + 1\"\n" for k in range(1, 600))).replace(PLAY_GUARD, 'when: "d599 > 0"'),
                         "nested more than", r"\d+"),   # at the use, or at the definition where the chain gets too deep
    "deep definitions": (MODEL.replace("players: 1\n", "players: 1\ndefine:\n" + "".join(
        f"  d{k}: \"{'- ' * 44}{'hand' if k == 0 else f'd{k - 1}'}\"\n" for k in range(3))).replace(
        PLAY_GUARD, 'when: "d2 > 0"'), "nested more than 96 levels", 10),
    "huge array": (MODEL.replace("  hand: {type: 0..3, init: 0}\n", "  hand: {type: 0..3, init: 0}\n"
                                 "  arr: {type: bool, per: 0..1000000000, init: false}\n"),
                   "1,000,000,001 elements", 12),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_model_is_a_positioned_error(tmp_path, capsys, name):
    text, words, line = CASES[name]
    model = tmp_path / "hostile.yaml"
    model.write_text(text, encoding="utf-8")
    code = main(["check", str(model), "-p", PROPS, "-q"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and words in err
    first = err.splitlines()[0]
    assert re.match(rf"{re.escape(str(model))}:{line}:\d+: error: ", first), first
    assert "hint:" in err
    assert "\x1b" not in err and "\x00" not in err and max(len(x) for x in err.splitlines()) < 400


def test_the_nesting_hint_names_define(tmp_path, capsys):
    """Too deep an expression: the hint says how to name a sub-expression (`define:`)."""
    model = tmp_path / "deep.yaml"
    model.write_text(CASES["nested not"][0], encoding="utf-8")
    assert main(["check", str(model), "-p", PROPS, "-q"]) == 2
    hint = next(line for line in capsys.readouterr().err.splitlines() if "hint:" in line)
    assert "define:" in hint


def test_the_limits_leave_room_for_real_models():
    """The shipped models are far inside every limit (a limit that rejects them is wrong)."""
    assert MAX_EXPR_DEPTH >= 40 and MAX_YAML_DEPTH >= 40
    for path in sorted(Path(__file__).parent.parent.glob("models/*.yaml")):
        load_model(str(path))


def test_a_list_init_sized_by_a_constant_is_accepted(tmp_path):
    model = tmp_path / "init.yaml"
    model.write_text(MODEL.replace("LIMIT: 2", "LIMIT: 2\n  N: 3").replace(
        "  hand: {type: 0..3, init: 0}\n",
        "  hand: {type: 0..3, init: 0}\n  arr: {type: 0..3, per: 0..N-1, init: [0, 1, 2]}\n"))
    var = load_model(str(model)).instantiate().var("arr")
    assert var.size() == 3 and [e.value for e in var.init] == [0, 1, 2]


def test_thousands_of_slots_pack_without_recursion(tmp_path):
    slots = "\n".join(f"  v{i}: {{type: 0..2, init: {i % 3}}}" for i in range(3000))
    model = tmp_path / "slots.yaml"
    model.write_text(MODEL.replace("variables:\n", "variables:\n" + slots + "\n"))
    lay = layout(load_model(str(model)).instantiate())
    packing = make_packing(lay)
    state = tuple(s.lo for s in lay.slots)
    state = tuple((i % 3) if name.startswith("v") else v for i, (name, v) in
                  enumerate(zip((s.name for s in lay.slots), state)))
    assert packing.unpack(packing.pack(state)) == state


CLAIM = 'claims:\n  - id: c\n    says: "hostile"\n    {}\n'
PROPERTY_CASES = {   # name -> (the claim's kind line, words of the message, column of the error)
    "forall domain": ('invariant: "forall x in 0..1000000000: hand >= 0"', "ranges over 1,000,000,001 values", 17),
    "sum domain": ('invariant: "sum(x in 0..99999999999: x) >= 0"', "ranges over 100,000,000,000 values", 17),
    "exists domain": ('reachable: {state: "exists x in -999999999999..999999999999: hand == x"}',
                      "ranges over 1,999,999,999,999 values", 25),
    "domain by a constant": ('ordering: {pattern: absence, p: {state: "forall x in 0..LIMIT*100000: hand >= 0"}}',
                             "ranges over 200,001 values", 46),
    "within": ("bounded_response: {after: draw, expect: discard, within: 999999999999999999}",
               "at most 10,000 are allowed", 62),
    "at_most": ("ordering: {pattern: bounded-existence, p: draw, at_most: 999999999999999999}",
                "not a count from 0 to 10,000", 62),
}


@pytest.mark.parametrize("name", list(PROPERTY_CASES))
def test_a_hostile_property_file_is_a_positioned_error(tmp_path, capsys, name):
    """Property files get the model files' limits: sizes computed from the bounds, before any search."""
    kind, words, column = PROPERTY_CASES[name]
    props = tmp_path / "hostile_props.yaml"
    props.write_text(CLAIM.format(kind), encoding="utf-8")
    code = main(["check", str(GATE / "gate.yaml"), "-p", str(props), "-q"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.splitlines()[0].startswith(f"{props}:4:{column}: error: ") and words in err, err
    assert kind.split(": ", 1)[1][:20] in err and "hint:" in err and "Traceback" not in err


def test_a_file_is_parsed_once_and_no_further_than_its_first_problem(tmp_path, monkeypatch):
    """The limits are checked on the events of the one parse that builds the document, each
    before the composer takes it: a hostile document stops there, the rest unread."""
    starts, checked = [], []
    parse_stream_start, check = Parser.parse_stream_start, EventLimits.check
    monkeypatch.setattr(Parser, "parse_stream_start", lambda self: starts.append(1) or parse_stream_start(self))
    monkeypatch.setattr(EventLimits, "check", lambda self, event: checked.append(event) or check(self, event))
    good = tmp_path / "good.yaml"
    good.write_text(MODEL, encoding="utf-8")
    load_yaml(str(good))
    assert len(starts) == 1
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text("a: !!python/object:os.system x\n" + "".join(f"k{i}: v\n" for i in range(10_000)),
                       encoding="utf-8")
    checked.clear()
    with pytest.raises(ModelError, match=re.escape("tag '!!python/object:os.system' is not allowed")):
        load_yaml(str(hostile))
    assert len(checked) < 10
