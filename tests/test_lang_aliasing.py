"""Two writes of one `do:` that can name the same element (`hand[q]` and `hand[active]` where q may be
the active player): a warning at the later key, with the values that make them one and a hint; none
where the guard keeps the indices apart, the later value agrees in that case, or a `for` block writes every
element first. Computed indices, quantifiers, literal indices and the turn-change blocks are judged too."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_lang_errors import where

from verifier.cli import main
from verifier.ir.expr import App, Const, Local, Op, Quant, QuantKind
from verifier.lang import aliasing, check_model

GIVE = """\
model: give
players: 3
variables:
  hand: {type: 0..3, per: player, init: 1}
  aim: {type: player, per: player, init: 0}
  given: {type: bool, init: false}
phases:
  - name: Play
actions:
  - name: give
    phase: Play
    choose: {q: player}
    when: "not given and hand[active] > 0 and hand[q] < 3"
    do:
      hand[q]: hand[q] + 1
      hand[active]: hand[active] - 1
      given: true
"""
SAYS = "give: hand[active] and hand[q] (line 15) name one element when active == q (e.g. active = 0, q = 0)"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "give.yaml"
    path.write_text(text)
    return path


def warnings_of(tmp_path: Path, text: str) -> list[str]:
    _model, diagnostics = check_model(str(write(tmp_path, text)))
    return [d.message for d in diagnostics if d.severity == "warning"]


def test_two_writes_that_can_name_one_element_are_a_positioned_warning(tmp_path):
    path = write(tmp_path, GIVE)
    _model, (warning,) = check_model(str(path))
    assert warning.severity == "warning" and warning.message.startswith(SAYS)
    assert "the later key wins and the write to hand[q] is dropped" in warning.message
    assert str(warning.span) == where(path, "hand[active]: hand[active] - 1")
    assert 'rule the case out in when: ("active != q")' in (warning.hint or "")


@pytest.mark.parametrize("command", [["lint"], ["check", "--engine", "explicit"]])
def test_lint_and_check_print_it_and_exit_as_before(tmp_path, capsys, command):
    path = write(tmp_path, GIVE)
    assert main([*command, str(path), "-q"]) == 0
    err = capsys.readouterr().err
    assert f"{where(path, 'hand[active]: hand[active] - 1')}: warning: {SAYS}" in err and "hint: give hand" in err


@pytest.mark.parametrize("what,old,new", [
    ("the guard keeps them apart", 'hand[q] < 3"', 'hand[q] < 3 and q != active"'),
    ("the guard keeps them apart, written the other way", 'hand[q] < 3"', 'hand[q] < 3 and not (active == q)"'),
    ("the later value agrees where they meet", "hand[active]: hand[active] - 1",
     'hand[active]: "if active == q then hand[q] + 1 else hand[active] - 1"'),
    ("the earlier value agrees where they meet", "hand[q]: hand[q] + 1",
     'hand[q]: "if q == active then hand[active] - 1 else hand[q] + 1"'),
    ("a for block first: a default for every element, then the exception", "hand[q]: hand[q] + 1",
     "for p in player:\n        hand[p]: 2"),
    ("the guard keeps them apart through an element at a computed index", 'hand[q] < 3"',
     'hand[q] < 3 and aim[active] == q and aim[q] != q"'),
    ("the guard keeps them apart through a quantifier", 'hand[q] < 3"',
     'hand[q] < 3 and not (exists p in player: p == q and p == active)"'),
    ("an index that leaves its array (a model error, not this warning)", "hand[q]: hand[q] + 1",
     "hand[q + 3]: 0"),
    ("two arrays", "hand[active]: hand[active] - 1\n      given: true",
     "given: true\n  - name: other\n    phase: Play\n    do:\n      hand[active]: 0"),
])
def test_no_warning_where_they_cannot_meet_or_agree(tmp_path, what, old, new):
    assert old in GIVE, what
    assert warnings_of(tmp_path, GIVE.replace(old, new)) == [], what


def test_a_choice_that_can_meet_only_some_players_names_the_values_it_meets_at(tmp_path):
    text = GIVE.replace("choose: {q: player}", "choose: {q: 1..2}")
    (message,) = warnings_of(tmp_path, text)
    assert "(e.g. active = 1, q = 1)" in message


def test_a_pair_with_more_values_to_try_than_the_limit_is_not_judged(tmp_path, monkeypatch):
    text = GIVE.replace("choose: {q: player}", "choose: {q: 1..2}")     # meets first at active = 1, q = 1
    monkeypatch.setattr(aliasing, "MAX_CASES", 2)
    assert warnings_of(tmp_path, text) == []
    monkeypatch.setattr(aliasing, "MAX_CASES", 64)
    assert len(warnings_of(tmp_path, text)) == 1


def test_love_letter_writes_what_it_means_where_the_target_is_the_player():
    """Its Guard and Baron write `cards[active]` and `cards[t]` (t may be the player, when nobody else
    can be targeted) with values that agree there: no warning."""
    _model, diagnostics = check_model(str(Path(__file__).parents[1] / "examples" / "models" / "love_letter.yaml"))
    assert diagnostics == []


def test_a_model_tries_at_most_its_total_of_values_and_says_what_it_left(tmp_path):
    """200 writes to one array through a choice, no two of which meet: 19,900 pairs, past the model's
    total; the check stops there with one warning at the action (a rule of a thousand effects loads in
    bounded time)."""
    writes = "".join(f'      far[(q + {k}) % 250]: 1\n' for k in range(200))
    text = GIVE.replace("  given:", "  far: {type: 0..1, per: 0..249, init: 0}\n  given:", 1).replace(
        '      hand[q]: hand[q] + 1\n      hand[active]: hand[active] - 1\n', writes)
    assert warnings_of(tmp_path, text) == [
        f"give: not every pair of its writes was checked for naming one element (the check stops after "
        f"{aliasing.TOTAL_CASES:,} values tried in a model)"]


def test_past_its_most_warnings_the_check_says_it_stopped(tmp_path):
    """Writes that all meet: the first pairs are warned about, then one warning says the check stopped."""
    writes = "".join(f'      hand[(q + {3 * k}) % 3]: "{k % 4}"\n' for k in range(12))
    text = GIVE.replace('      hand[q]: hand[q] + 1\n      hand[active]: hand[active] - 1\n', writes)
    said = warnings_of(tmp_path, text)
    assert len(said) == aliasing.MAX_WARNINGS + 1 and all("name one element when" in w for w in said[:-1])
    assert said[-1] == (f"give: not every pair of its writes was checked for naming one element (the check "
                        f"stops after {aliasing.MAX_WARNINGS} pairs warned about in a model)")


@pytest.mark.parametrize("what,old,new,says", [
    ("an element at a computed index", "hand[q]: hand[q] + 1", "hand[aim[active]]: 0",
     "give: hand[active] and hand[aim[active]] (line 15) name one element when active == aim[active] "
     "(e.g. active = 0, aim[0] = 0)"),
    ("a literal index", "hand[q]: hand[q] + 1", "hand[0]: hand[0] + 1",
     "give: hand[active] and hand[0] (line 15) name one element when active == 0 (e.g. active = 0)"),
    ("an element written before a for block writes every element", "hand[q]: hand[q] + 1\n      hand[active]: "
     "hand[active] - 1", "hand[q]: 3\n      for p in player:\n        hand[p]: 0",
     "give: hand[0] and hand[q] (line 15) name one element when 0 == q (e.g. q = 0)"),
    ("a quantifier in an index", "hand[q]: hand[q] + 1", "\"hand[count(p in player: p < q)]\": 3",
     "give: hand[active] and hand[count(p in 0..2: p < q)] (line 15) name one element when "
     "active == count(p in 0..2: p < q) (e.g. active = 0, q = 0)"),
])
def test_computed_literal_and_quantified_indices_are_judged(tmp_path, what, old, new, says):
    assert old in GIVE, what
    (message,) = warnings_of(tmp_path, GIVE.replace(old, new))
    assert message.startswith(says), (what, message)


TURNS = """\
model: turns
players: 2
variables:
  hand: {type: 0..5, per: player, init: 1}
  prio: {type: player, init: 0}
phase_rules:
  refill:
    on_enter:
      hand[active]: 5
      hand[prio]: 0
phases:
  - name: Draw
    use: refill
  - name: Play
    use: refill
actions:
  - name: pass_priority
    phase: Play
    when: "prio == active"
    do: {prio: "(prio + 1) % PLAYERS"}
turn_end:
  hand[active]: 0
  hand[(active + 1) % PLAYERS]: 2
on_turn_start:
  hand[active]: 3
  hand[prio]: 1
"""


def test_the_turn_change_blocks_are_judged_as_written(tmp_path):
    """`on_turn_start` and a block of phase rules two phases use (judged once) warn; `turn_end`'s two
    players never meet."""
    path = write(tmp_path, TURNS)
    _model, diagnostics = check_model(str(path))
    said = sorted((d.message, str(d.span)) for d in diagnostics if d.severity == "warning")
    assert said == sorted([
        ("on_enter of phase Draw: hand[prio] and hand[active] (line 9) name one element when prio == active "
         "(e.g. active = 0, prio = 0); there the later key wins and the write to hand[active] is dropped",
         where(path, "hand[prio]: 0")),
        ("on_turn_start: hand[prio] and hand[active] (line 25) name one element when prio == active "
         "(e.g. active = 0, prio = 0); there the later key wins and the write to hand[active] is dropped",
         where(path, "hand[prio]: 1")),
    ])


def test_a_turn_change_block_the_guard_cannot_separate_is_quiet_where_the_values_agree(tmp_path):
    text = TURNS.replace("hand[prio]: 1", 'hand[prio]: "if prio == active then 3 else 1"').replace(
        "hand[prio]: 0", 'hand[prio]: "if prio == active then 5 else 0"')
    assert warnings_of(tmp_path, text) == []


def test_nested_quantifiers_are_not_written_out():
    """A quantifier nesting another stays as it is (its terms would multiply): what reads it is undecided,
    and the pair is not warned about."""
    inner = Quant(QuantKind.EXISTS, "b", Const(0), Const(63), App(Op.EQ, (Local("a"), Local("b"))))
    nested = Quant(QuantKind.FORALL, "a", Const(0), Const(63), inner)
    assert aliasing._settle(nested) == nested
    terms = aliasing._settle(inner)                      # alone, it is its 64 terms
    assert isinstance(terms, App) and terms.op is Op.OR and len(terms.args) == 64


GRID = """\
model: grid
players: 2
enums:
  Zone: [deck, hand]
variables:
  cards: {type: 0..3, per: [player, Zone], init: 1}
phases:
  - name: Play
actions:
  - name: give
    phase: Play
    choose: {q: player, z: Zone}
    when: "cards[q][z] < 3"
    do:
      cards[q][z]: cards[q][z] + 1
      cards[active][hand]: 0
"""


def test_a_two_dimensional_array_is_named_by_its_two_indices(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text(GRID)
    _model, (warning,) = check_model(str(path))
    assert warning.message.startswith(
        "give: cards[active][hand] and cards[q][z] (line 15) name one element when active == q and hand == z "
        "(e.g. active = 0, q = 0, z = hand)")
    assert 'when: ("active != q or hand != z")' in (warning.hint or "")
    path.write_text(GRID.replace('"cards[q][z] < 3"', '"cards[q][z] < 3 and z == deck"'))
    assert check_model(str(path))[1] == []                    # the guard keeps the zones apart


@pytest.mark.parametrize("overflow,later,warned", [
    ("clamp", "3", False),            # 4 or more is written as 3: the same value
    ("clamp", "2", True),             # 4 or more is written as 3, the later key writes 2
    ("unspecified", "2", False),      # 4 or more is out of range: the move is blocked (a gap), nothing is dropped
])
def test_values_are_compared_as_they_are_written(tmp_path, overflow, later, warned):
    text = GIVE.replace("hand: {type: 0..3, per: player, init: 1}",
                        f"hand: {{type: 0..3, per: player, init: 1, overflow: {overflow}}}").replace(
        "hand[q]: hand[q] + 1\n      hand[active]: hand[active] - 1", f'hand[q]: "hand[q] + 4"\n      hand[active]: {later}')
    assert len(warnings_of(tmp_path, text)) == int(warned)


READINGS = GIVE.replace("phases:\n", "variants:\n  kind: {doc: the giver keeps the card too}\n"
                                     "  strict: {doc: the card changes hands}\nphases:\n")
GIVE_DO = "    do:\n      hand[q]: hand[q] + 1\n      hand[active]: hand[active] - 1\n      given: true\n"


def test_every_reading_is_judged_and_a_warning_names_the_one_it_holds_in(tmp_path, capsys):
    """Only the strict reading takes the card from the giver: its pair is warned about, naming the reading."""
    path = write(tmp_path, READINGS.replace(GIVE_DO, "    do:\n      kind: {\"hand[q]\": \"hand[q] + 1\", given: true}\n"
                                                     "      strict:\n" + GIVE_DO.replace("    do:\n", "")
                                                     .replace("      ", "        ")))
    assert main(["lint", str(path), "-q"]) in (0, 1)
    err = capsys.readouterr().err
    assert err.count("name one element when active == q") == 1, err
    assert "the write to hand[q] is dropped (in reading strict)\n" in err


def test_a_warning_of_every_reading_is_said_once_without_naming_them(tmp_path, capsys):
    path = write(tmp_path, READINGS.replace('    when: "not given and hand[active] > 0 and hand[q] < 3"\n',
                                            '    when: {kind: "not given and hand[q] < 3", strict: "not given and '
                                            'hand[active] > 0 and hand[q] < 3"}\n'))
    assert main(["lint", str(path), "-q"]) in (0, 1)
    err = capsys.readouterr().err
    assert err.count("name one element when active == q") == 1 and "the write to hand[q] is dropped\n" in err, err
    assert main(["lint", str(path), "-q", "--variant", "strict"]) in (0, 1)    # one reading loaded: it is named
    assert "dropped (in reading strict)\n" in capsys.readouterr().err
