"""`next_player:` (docs/LANGUAGE.md, "Who plays next"): the player whose turn `pass turn` starts, read on
the state before the turn ends; the new player's durations, `reset: own_turn` and `on_turn_start` follow it;
the explicit and symbolic engines agree on it; wrong uses are positioned errors."""
from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_lang_errors import BASE, the_error, where, write
from tiers import examples

from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.lang import load_model, load_properties
from verifier.mutation.operators import apply, generate
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import fire, initial_states, layout

FIXTURES = Path(__file__).parent / "fixtures" / "lang"
MODEL = FIXTURES / "next_player.yaml"
CLAIMS = FIXTURES / "next_player_props.yaml"
NEXT_LINE = 'next_player: "if again then active else if skip then after(after(active)) else after(active)"\n'


def after_pass(state: dict[str, int]) -> dict[str, int]:
    model = load_model(str(MODEL)).instantiate()
    lay = layout(model)
    names = [s.name for s in lay.slots]
    (start,) = initial_states(lay)
    before = {**lay.as_dict(start), "acted": 1, **state}
    step = fire(lay, model.action("pass turn"), tuple(before[n] for n in names), {})
    assert step.target is not None
    return dict(zip(names, step.target))


@pytest.mark.parametrize("flags,player", [({}, 1), ({"dir": 1}, 2), ({"skip": 1}, 2), ({"dir": 1, "skip": 1}, 1),
                                          ({"again": 1}, 0), ({"again": 1, "skip": 1}, 0)])
def test_pass_turn_starts_the_turn_next_player_names(flags, player):
    """next_player reads the turn's reset: turn flags (skip, again) before they are reset."""
    after = after_pass(flags)
    assert after["active"] == player
    assert after["skip"] == after["again"] == 0


def test_the_new_players_turn_start_and_durations_follow_next_player():
    after = after_pass({"skip": 1, "turns[0]": 1, "guarded[1]": 1, "guarded[2]": 1, "guarded_until[1]": 1,
                        "guarded_until[2]": 2})
    assert after["active"] == 2
    assert (after["turns[0]"], after["turns[1]"], after["turns[2]"]) == (1, 0, 1)    # on_turn_start: player 2
    assert (after["guarded[1]"], after["guarded[2]"]) == (1, 0)                       # player 2's guard ends


def claim_verdicts(model, engine, only: frozenset[str] | None = None) -> dict[str, Verdict]:
    claims = [c for c in load_properties(str(CLAIMS), model) if only is None or c.id in only]
    results = run_claims(model.instantiate(), claims, engine, Budget())
    return {r.property.id: Verdict.HOLDS if r.verdict is Verdict.PROVED else r.verdict for r in results}


def test_explicit_and_symbolic_agree_on_the_fixture():
    model = load_model(str(MODEL))
    explicit = claim_verdicts(model, ExplicitEngine())
    assert explicit == claim_verdicts(model, SymbolicEngine())
    assert explicit == {"extra-turn": Verdict.HOLDS, "skip-backwards": Verdict.HOLDS, "plain-order": Verdict.HOLDS,
                        "guard-ends-at-own-turn": Verdict.HOLDS, "seat-order": Verdict.VIOLATED,
                        "uneven-turns": Verdict.HOLDS}


def player_terms() -> st.SearchStrategy[str]:
    """Player-valued expressions of the fixture's state: who plays next, by flags and direction."""
    leaves = st.sampled_from(["active", "(active + 1) % PLAYERS", "(active + 2) % PLAYERS", "after(active)",
                              "after(after(active))"])
    conditions = st.sampled_from(["again", "skip", "dir == 0", "dir == 1 and not skip", "turns[active] >= 2"])
    return st.recursive(leaves, lambda inner: st.builds(lambda c, a, b: f"(if {c} then {a} else {b})",
                                                        conditions, inner, inner), max_leaves=4)


@settings(max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(player_terms())
def test_explicit_and_symbolic_agree_on_any_next_player(tmp_path, term):
    """A step claim the symbolic engine proves or refutes, and a reachability it searches by BMC."""
    path = tmp_path / "model.yaml"
    path.write_text(MODEL.read_text().replace(NEXT_LINE, f'next_player: "{term}"\n'))
    model = load_model(str(path))
    some = frozenset({"extra-turn", "uneven-turns"})
    assert claim_verdicts(model, ExplicitEngine(), some) == claim_verdicts(model, SymbolicEngine(), some)


NEXT = 'next_player: "(active + 1) % PLAYERS"\n'
ERRORS = [
    ("a truth value", 'next_player: "drawn"\n', "next_player is a player, found a boolean", '"drawn"'),
    ("a number that is no player", 'next_player: "5"\n', "next_player is player 5; the players are 0 to 1", '"5"'),
    ("a mapping that is not one per reading", "next_player: {first: active}\n",
     "next_player is one expression (or one per reading", "{first: active"),
    ("an unknown name", 'next_player: "nxt"\n', "unknown name 'nxt'", "nxt"),
    ("a player computed by a product under symmetry", 'symmetry: players\nnext_player: "(active * 2) % PLAYERS"\n',
     "symmetry: players does not hold: `active * 2` computes with a player number", "active * 2"),
]


@pytest.mark.parametrize("what,text,message,needle", ERRORS, ids=[e[0] for e in ERRORS])
def test_a_wrong_next_player_is_a_positioned_error(tmp_path, what, text, message, needle):
    path = write(tmp_path, "variants:", text + "variants:",
                 BASE.replace('"deck[0] == 0 and deck[1] == 0"', '"forall p in player: deck[p] == 0"'))
    error = the_error(path, message)
    assert str(error.span) == where(path, needle)
    assert "^" in error.render()


def test_a_next_player_that_rotates_with_the_players_keeps_the_symmetry(tmp_path):
    path = write(tmp_path, "variants:", 'symmetry: players\nnext_player: "if drawn then (active + 1) % PLAYERS '
                                        'else active"\nvariants:',
                 BASE.replace('"deck[0] == 0 and deck[1] == 0"', '"forall p in player: deck[p] == 0"'))
    assert load_model(str(path)).symmetry == "players"


def test_next_player_needs_turns(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text("model: x\nplayers: 2\nvariables:\n  v: {type: bool, init: false}\nnext_player: active\n"
                    "actions:\n  - name: a\n    do: {v: true}\n")
    error = the_error(path, "next_player needs turns: this model has no phases")
    assert str(error.span) == where(path, "active\n")


def test_assigning_active_points_to_next_player(tmp_path):
    path = write(tmp_path, "      drawn: true", "      active: 1")
    error = the_error(path, "'active' changes only when the turn passes")
    assert error.hint and "next_player" in error.hint


def test_without_next_player_the_turn_passes_in_seat_order(tmp_path):
    plain = load_model(str(write(tmp_path, "variants:", "variants:"))).action("pass turn")
    path = write(tmp_path, "variants:", NEXT + "variants:")
    assert load_model(str(path)).action("pass turn").effects == plain.effects


def test_mutation_leaves_next_player_out_and_changes_its_numbers():
    """`mutate` treats next_player as a turn block: left out, the turn passes in seat order again."""
    written = {}

    def keep(model, specs, blocks):
        written.update(model=model, specs=specs, blocks=blocks)
        return model, specs, blocks

    written_order = load_model(str(MODEL), edit=keep).action("pass turn")
    mutants = [m for m in generate(written["model"], written["specs"], written["blocks"]) if m.block == "next_player"]
    assert {m.operator for m in mutants} == {"literal", "drop-effect"}
    (dropped,) = [m for m in mutants if m.operator == "drop-effect"]
    mutant = load_model(str(MODEL), edit=partial(apply, dropped)).action("pass turn")
    plain = load_model(str(MODEL), edit=lambda m, s, b: (m, s, replace(b, next_player=()))).action("pass turn")
    assert mutant.effects == plain.effects != written_order.effects
