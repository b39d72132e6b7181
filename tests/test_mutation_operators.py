"""The rule-move operators of `turnproof mutate` (move-phase, init, reset, choice-range, swap-next)
and the changed rule number (`constant`) on tiny games: each mutant changes the desugared model
as its description says, and loads."""
from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from verifier.ir.expr import pretty
from verifier.ir.model import PHASE_VAR, Reset
from verifier.lang import load_model
from verifier.mutation.analysis import mutate
from verifier.mutation.operators import OPERATORS, apply, generate
from verifier.mutation.results import MutationReport, Outcome
from verifier.report.mutation import mutation_json
from verifier.runner import RunOptions

HERE = Path(__file__).parent / "fixtures" / "mutation"
MOVES = str(HERE / "moves.yaml")
MOVES_PROPS = str(HERE / "moves_props.yaml")
TALLY = str(HERE / "tally.yaml")
NUMBERS = str(HERE / "numbers.yaml")
NUMBERS_PROPS = str(HERE / "numbers_props.yaml")
RULE_MOVES = ("move-phase", "init", "reset", "choice-range", "swap-next")

pytestmark = pytest.mark.xdist_group("test_mutate")


def _as_written(path: str = MOVES):
    captured = []
    load_model(path, edit=lambda m, s, b: captured.append((m, s, b)) or (m, s, b))
    return captured[0]


@pytest.fixture(scope="module")
def made():
    return {m.description: m for m in generate(*_as_written())}


def _load(mutant, path: str = MOVES):
    return load_model(path, edit=partial(apply, mutant))


def _conjuncts(model, action: str) -> set[str]:
    return {pretty(c) for c in model.action(action).guard.args}


def _phase(model, name: str) -> str:
    return f"phase == {model.var(PHASE_VAR).type.values.index(name)}"


def test_the_rule_move_operators_make_these_mutants(made):
    assert {d: m.operator for d, m in made.items() if m.operator in RULE_MOVES} == {
        "draw: phase Draw -> Main": "move-phase",
        "spend: phase Main -> Draw": "move-phase",
        "spend: phase Main -> Rush": "move-phase",
        "target: phase Rush -> Main": "move-phase",
        "mode: init calm -> rush": "init",
        "gems[0]: init 1 -> 2": "init",
        "gems[0]: init 1 -> 0": "init",
        "gems[1]: init 2 -> 3": "init",
        "gems[1]: init 2 -> 1": "init",
        "drawn: init false -> true": "init",
        "tokens: init 0 -> 1": "init",          # 0 - 1 is out of 0..3: not made
        "rounds: init 0 -> 1": "init",
        "mode: no reset -> reset: turn": "reset",
        "gems: no reset -> reset: turn": "reset",   # own_turn needs one init value: not made
        "drawn: reset: turn -> no reset": "reset",  # drawn is no per-player array: no own_turn
        "tokens: reset: own_turn -> no reset": "reset",
        "tokens: reset: own_turn -> reset: turn": "reset",
        "rounds: no reset -> reset: turn": "reset",
        "spend: choose n: 1..2 -> 2..2": "choice-range",
        "spend: choose n: 1..2 -> 0..2": "choice-range",
        "spend: choose n: 1..2 -> 1..3": "choice-range",
        "spend: choose n: 1..2 -> 1..1": "choice-range",   # `target`'s player choice: no range of a rule
        "phase Draw: next targets Main and Rush exchanged": "swap-next"}
    assert made["spend: choose n: 1..2 -> 1..3"].span.line == 32      # the choice, `n: 1..2`
    assert made["gems[1]: init 2 -> 3"].span.line == 10               # the variable
    assert made["phase Draw: next targets Main and Rush exchanged"].rule.startswith("Draw:")


def test_the_earlier_operators_keep_their_ids():
    """The rule moves come after every mutant of the earlier operators, so an id stays what it was."""
    mutants = generate(*_as_written(TALLY))
    earlier = [m.operator for m in mutants if m.operator not in RULE_MOVES]
    assert [m.operator for m in mutants[:len(earlier)]] == earlier
    assert set(RULE_MOVES) <= set(OPERATORS)
    numbers = [m.operator for m in generate(*_as_written(NUMBERS))]
    first = numbers.index("constant")
    assert set(numbers[first:]) == {"constant"} and "constant" in OPERATORS   # made last of all


def test_a_moved_action_is_guarded_by_its_new_phase(made):
    original, moved = load_model(MOVES), _load(made["spend: phase Main -> Rush"])
    assert _phase(original, "Main") in _conjuncts(original, "spend")
    assert _phase(moved, "Rush") in _conjuncts(moved, "spend")
    assert _phase(moved, "Main") not in _conjuncts(moved, "spend")


def test_a_changed_init_starts_elsewhere(made):
    def start(description, var):
        return [pretty(e) for e in _load(made[description]).instantiate().var(var).init]

    assert start("gems[1]: init 2 -> 3", "gems") == ["1", "3"]
    assert start("tokens: init 0 -> 1", "tokens") == ["1", "1"]     # one written value: every element
    assert start("drawn: init false -> true", "drawn") == ["true"]
    mode = _load(made["mode: init calm -> rush"]).instantiate().var("mode")
    assert mode.type.values[mode.init[0].value] == "rush"


def _turn_pass(model) -> dict[str, str]:
    [passing] = [a for a in model.actions if a.name.startswith("pass turn")]
    return {pretty(e.target): pretty(e.value) for e in passing.effects}


def test_a_changed_reset_changes_the_turn_change(made):
    assert _turn_pass(load_model(MOVES))["drawn"] == "false"
    assert "drawn" not in _turn_pass(_load(made["drawn: reset: turn -> no reset"]))
    assert _turn_pass(_load(made["gems: no reset -> reset: turn"]))["gems[0]"] == "1"
    assert "tokens[(active + 1) % 2]" not in _turn_pass(_load(made["tokens: reset: own_turn -> no reset"]))
    as_turn = _load(made["tokens: reset: own_turn -> reset: turn"])
    assert as_turn.var("tokens").reset is Reset.TURN
    assert {_turn_pass(as_turn)[f"tokens[{k}]"] for k in (0, 1)} == {"0"}


def test_a_changed_choice_range_changes_the_choices(made):
    def bounds(description):
        [n] = _load(made[description]).instantiate().action("spend").choices
        return n.type.bounds()

    assert load_model(MOVES).instantiate().action("spend").choices[0].type.bounds() == (1, 2)
    assert [bounds(d) for d in ("spend: choose n: 1..2 -> 2..2", "spend: choose n: 1..2 -> 0..2",
                                "spend: choose n: 1..2 -> 1..3", "spend: choose n: 1..2 -> 1..1")] == \
        [(2, 2), (0, 2), (1, 3), (1, 1)]


def test_swapped_next_targets_exchange_the_conditions(made):
    def edges(model):
        return {(e.src, e.dst): pretty(e.condition) for e in model.phase_edges if e.src == "Draw"}

    assert edges(load_model(MOVES)) == {("Draw", "Main"): "mode == 0", ("Draw", "Rush"): "not (mode == 0)"}
    assert edges(_load(made["phase Draw: next targets Main and Rush exchanged"])) == \
        {("Draw", "Rush"): "mode == 0", ("Draw", "Main"): "not (mode == 0)"}


def test_rule_move_mutants_are_well_formed_and_decided():
    """Every rule-move mutant of the game loads and runs: none is invalid, and the claims notice
    the moves they speak about."""
    report = mutate(MOVES, RunOptions(properties=MOVES_PROPS), jobs=1)
    moves = [o for o in report.outcomes if o.mutant.operator in RULE_MOVES]
    assert {o.mutant.operator for o in moves} == set(RULE_MOVES)
    assert [o.mutant.description for o in moves if o.status in ("invalid", "unknown")] == []
    status = {o.mutant.description: o.status for o in moves}
    assert status["gems[1]: init 2 -> 3"] == "killed"                                 # gems-never-grow
    assert status["phase Draw: next targets Main and Rush exchanged"] == "killed"     # rush-needs-rush-mode
    assert status["rounds: init 0 -> 1"] != "equivalent"


@pytest.fixture(scope="module")
def numbers():
    return {m.description: m for m in generate(*_as_written(NUMBERS)) if m.operator == "constant"}


def test_each_use_of_a_rule_number_is_changed_up_and_down(numbers):
    """Parameters and the constant made of them (START = LIMIT - COST), one use at a time; an initial
    value that is the number alone is left to `init` (its `E + 1`, `E - 1`)."""
    assert sorted(numbers) == sorted([
        "gain: guard 'coins < LIMIT' -> 'coins < (LIMIT + 1)'",
        "gain: guard 'coins < LIMIT' -> 'coins < (LIMIT - 1)'",
        "buy: guard 'coins >= COST' -> 'coins >= (COST + 1)'",
        "buy: guard 'coins >= COST' -> 'coins >= (COST - 1)'",
        "buy: effect 'coins := coins - COST' -> 'coins := coins - (COST + 1)'",
        "buy: effect 'coins := coins - COST' -> 'coins := coins - (COST - 1)'",
        "phase Gain: exit_when 'coins == LIMIT' -> 'coins == (LIMIT + 1)'",
        "phase Gain: exit_when 'coins == LIMIT' -> 'coins == (LIMIT - 1)'",
        "turn_end: effect 'rounds := min(rounds + 1, LIMIT)' -> 'rounds := min(rounds + 1, LIMIT + 1)'",
        "turn_end: effect 'rounds := min(rounds + 1, LIMIT)' -> 'rounds := min(rounds + 1, LIMIT - 1)'",
        "cards: init (if COST > 1 then 1 else 0) -> (if (COST + 1) > 1 then 1 else 0)",
        "cards: init (if COST > 1 then 1 else 0) -> (if (COST - 1) > 1 then 1 else 0)"])
    assert numbers["buy: guard 'coins >= COST' -> 'coins >= (COST + 1)'"].span.line == 29
    assert numbers["gain: guard 'coins < LIMIT' -> 'coins < (LIMIT - 1)'"].rule.startswith("Gain:")


def test_a_changed_number_changes_only_its_use(numbers):
    def at_defaults(description):
        return _load(numbers[description], NUMBERS).instantiate()

    original = load_model(NUMBERS).instantiate()
    assert pretty(original.action("buy").effects[0].value) == "coins - 1"
    bought = at_defaults("buy: effect 'coins := coins - COST' -> 'coins := coins - (COST + 1)'").action("buy")
    assert pretty(bought.effects[0].value) == "coins - 2"                   # COST = 1
    assert "coins >= 1" in {pretty(c) for c in bought.guard.args}          # the guard's COST unchanged
    gained = at_defaults("gain: guard 'coins < LIMIT' -> 'coins < (LIMIT - 1)'").action("gain")
    assert "coins < 1" in {pretty(c) for c in gained.guard.args}           # LIMIT = 2
    assert [pretty(e) for e in original.var("cards").init] == ["0"]
    started = at_defaults("cards: init (if COST > 1 then 1 else 0) -> (if (COST + 1) > 1 then 1 else 0)")
    assert [pretty(e) for e in started.var("cards").init] == ["1"]


def test_changed_numbers_are_decided_and_killed_by_the_claims_on_them():
    report = mutate(NUMBERS, RunOptions(properties=NUMBERS_PROPS), jobs=1)
    status = {o.mutant.description: o.status for o in report.outcomes if o.mutant.operator == "constant"}
    assert len(status) == 12 and "invalid" not in status.values() and "unknown" not in status.values()
    assert status["buy: effect 'coins := coins - COST' -> 'coins := coins - (COST + 1)'"] == "killed"
    assert status["gain: guard 'coins < LIMIT' -> 'coins < (LIMIT + 1)'"] == "killed"     # purse-within-limit
    assert status["cards: init (if COST > 1 then 1 else 0) -> (if (COST - 1) > 1 then 1 else 0)"] == "equivalent"


def test_a_two_dimensional_element_is_described_as_written_and_its_position_is_not_mutated():
    """Dominion keeps its cards in `cards[player][Zone]`: descriptions write `cards[active][hand]` (enum
    values by name), never the flat position `cards[(active * 4) + 1]`, and no mutant changes the loader's
    arithmetic of that position (it would read another row, no rule of the game)."""
    dominion = str(Path(__file__).parent.parent / "examples" / "models" / "dominion.yaml")
    mutants = generate(*_as_written(dominion))
    said = [m.description for m in mutants]
    assert "play_action: guard 'cards[active][hand] > 0' -> 'cards[active][hand] >= 0'" in said
    assert not [d for d in said if "* 4" in d or "* 5" in d or "* 3" in d]
    for m in mutants[:40]:               # each mutant still applies where its path says
        _load(m, dominion)


def test_a_literal_element_of_a_two_dimensional_target_moves_inside_its_row_or_column(tmp_path):
    """`seen[0][2] := 1` at the end of player 0's row: its literal mutants write `seen[0][1]` (the row)
    and `seen[1][2]` (the column), never `seen[1][0]`, the next row's first element its flat position
    plus one would be."""
    path = tmp_path / "grid.yaml"
    path.write_text("model: grid\nplayers: 2\nvariables:\n  seen: {type: 0..1, per: [player, 0..2], init: 0}\n"
                    "actions:\n  - name: look\n    do:\n      seen[0][2]: 1\n      seen[1][1]: 1\n",
                    encoding="utf-8")
    mutants = [m for m in generate(*_as_written(str(path))) if m.operator == "literal" and m.part == "target"]
    assert sorted(m.description for m in mutants) == [
        "look: effect 'seen[0][2] := 1' -> 'seen[0][1] := 1'",
        "look: effect 'seen[0][2] := 1' -> 'seen[1][2] := 1'",
        "look: effect 'seen[1][1] := 1' -> 'seen[0][1] := 1'",
        "look: effect 'seen[1][1] := 1' -> 'seen[1][0] := 1'",
        "look: effect 'seen[1][1] := 1' -> 'seen[1][2] := 1'"]
    for m in mutants:
        moved = _load(m, str(path)).action("look").effects[m.effect].target
        assert pretty(moved) == f"seen[{m.new.value}]"


def test_players_is_neither_mutated_nor_described_as_a_literal(tmp_path):
    """`PLAYERS + 2` (the number of players, written by name): the mutants change the 2 and describe
    the effect as written, never `2 + 2 -> 1 + 2` (a change of the player count at one place, described
    as a number the model never wrote)."""
    path = tmp_path / "players.yaml"
    path.write_text("model: players\nplayers: 2\nvariables:\n  left: {type: 0..5, init: 0}\n"
                    "actions:\n  - name: last\n    when: \"left == 0\"\n    do: {left: PLAYERS + 2}\n",
                    encoding="utf-8")
    said = sorted(m.description for m in generate(*_as_written(str(path))) if m.operator == "literal")
    assert said == ["last: effect 'left := PLAYERS + 2' -> 'left := PLAYERS + 1'",
                    "last: effect 'left := PLAYERS + 2' -> 'left := PLAYERS + 3'",
                    "last: guard 'left == 0' -> 'left == -1'", "last: guard 'left == 0' -> 'left == 1'"]


def test_a_constant_is_described_by_its_name(tmp_path):
    """A constant (`LIMIT: 3`) is a number the rules print: its use is changed as a literal, and the
    description names it, `left < LIMIT` -> `left < 4`, not `left < 3` -> `left < 4`."""
    path = tmp_path / "limit.yaml"
    path.write_text("model: limit\nconstants:\n  LIMIT: 3\nvariables:\n  left: {type: 0..5, init: 0}\n"
                    "actions:\n  - name: add\n    when: \"left < LIMIT\"\n    do: {left: left + 1}\n",
                    encoding="utf-8")
    said = {m.description for m in generate(*_as_written(str(path))) if m.operator == "literal"}
    assert {"add: guard 'left < LIMIT' -> 'left < 4'", "add: guard 'left < LIMIT' -> 'left < 2'"} <= said


def test_a_change_inside_a_define_is_described_as_the_define(tmp_path):
    """A `define:` is expanded at each use: a change in its body is made at one use and described as the
    define, by name with its file and line (the innermost where one define uses another), in the text
    and in the JSON; a change the action wrote itself is described as before."""
    path = tmp_path / "defs.yaml"
    path.write_text("model: defs\nvariables:\n  left: {type: 0..5, init: 0}\n  who: {type: 0..1, init: 0}\n"
                    "define:\n  mine(p): \"p == 0\"\n  open: \"left < 3 and mine(who)\"\n"
                    "  bump: \"left + 2\"\n"
                    "actions:\n  - name: add\n    when: \"open and left != 4\"\n    do: {left: bump}\n"
                    "  - name: take\n    when: \"mine(who)\"\n    do: {left: 0}\n", encoding="utf-8")
    made = generate(*_as_written(str(path)))
    said = {m.description: m for m in made}
    where = f"{path}:"
    assert f"define mine ({where}6), at its use in add's guard: 'who == 0' -> 'who != 0'" in said
    assert f"define mine ({where}6), at its use in take's guard: 'who == 0' -> 'who != 0'" in said
    assert f"define open ({where}7), at its use in add's guard: 'left < 3' -> 'left <= 3'" in said
    assert f"define open ({where}7), at its use in add's guard: '(left < 3) and (who == 0)' left out" in said
    assert f"define bump ({where}8), at its use in add's effect on left: 'left + 2' -> 'left + 3'" in said
    assert "add: guard 'left != 4' -> 'left == 4'" in said
    assert {m.define for m in made if m.operator == "drop-effect"} == {""}
    changed = said[f"define mine ({where}6), at its use in add's guard: 'who == 0' -> 'who != 0'"]
    assert (changed.define, changed.define_at.line, changed.span.line) == ("mine", 6, 6)
    model = _load(changed, str(path))
    assert "who != 0" in pretty(model.action("add").guard)
    assert pretty(model.action("take").guard) == "who == 0"     # the define's other use is the original
    report = MutationReport("defs", str(path), None, (), None, 0, len(made), (Outcome(changed, "survived"),))
    entry = mutation_json(report)["mutants"][0]
    assert entry["define"] == {"name": "mine", "file": str(path), "line": 6}
    assert entry["description"] == changed.description
    plain = next(m for m in made if m.description == "add: guard 'left != 4' -> 'left == 4'")
    assert mutation_json(replace(report, outcomes=(Outcome(plain, "survived"),)))["mutants"][0]["define"] is None

