"""The turn change in order (docs/LANGUAGE.md, "The turn change"): the turn ends, `active` becomes the
next player, `on_turn_start` runs, then the first phase's `on_enter`, each reading what the one before
left; the first turn starts the same way; `prev(...)` in a step claim reads the state before the step,
its `active` included."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_lang_errors import the_error, where

from verifier.engines.explicit import ExplicitEngine, explore
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.ir.expr import App, Const, Op, Var
from verifier.ir.model import Action, ActionKind, Assign
from verifier.lang import load_model, load_properties, turn_change
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import fire, holds, initial_states, layout

FIXTURES = Path(__file__).parent / "fixtures" / "lang"
MODEL = FIXTURES / "turn_change.yaml"
ROOT_MODELS = Path(__file__).resolve().parents[1] / "models"


def test_the_first_phase_is_entered_by_the_player_whose_turn_starts():
    model = load_model(str(MODEL)).instantiate()
    lay = layout(model)
    names = [s.name for s in lay.slots]
    before = dict.fromkeys(names, 0)
    before.update({"phase": 1, "active": 0, "crystals[0]": 2, "crystals[1]": 1, "mana[0]": 1, "spent": 1})
    after = dict(zip(names, fire(lay, model.action("pass turn"), tuple(before[n] for n in names), {}).target))
    assert after["active"] == 1 and after["phase"] == 0
    assert (after["crystals[1]"], after["mana[1]"]) == (2, 2)       # one more crystal, then that much mana
    assert (after["crystals[0]"], after["mana[0]"], after["spent"]) == (2, 1, 0)


def test_the_first_turn_starts_like_every_other():
    model = load_model(str(MODEL)).instantiate()
    lay = layout(model)
    (start,) = initial_states(lay)
    got = lay.as_dict(start)
    assert (got["crystals[0]"], got["mana[0]"], got["crystals[1]"], got["mana[1]"]) == (1, 1, 0, 0)


@pytest.mark.parametrize("engine", [ExplicitEngine(), SymbolicEngine()], ids=["explicit", "symbolic"])
def test_claims_read_the_turn_change_naturally(engine):
    model = load_model(str(MODEL))
    claims = load_properties(str(FIXTURES / "turn_change_props.yaml"), model)
    results = run_claims(model.instantiate(), claims, engine, Budget())
    assert [r.verdict for r in results if r.verdict is not Verdict.PROVED] == \
        [Verdict.HOLDS] * len([r for r in results if r.verdict is not Verdict.PROVED])
    assert all(r.verdict in (Verdict.HOLDS, Verdict.PROVED) for r in results), [(r.claim_id, r.verdict) for r in results]


def test_the_first_turn_needs_initial_values(tmp_path):
    text = MODEL.read_text().replace("crystals: {type: 0..3, per: player, init: 0, overflow: clamp}",
                                     "crystals: {type: 0..3, per: player, overflow: clamp}")
    path = tmp_path / "model.yaml"
    path.write_text(text)
    error = the_error(path, "the first turn's start cannot set crystals[active]")
    assert str(error.span) == where(path, "crystals[active]: crystals")
    assert error.hint and "init:" in error.hint


def test_initially_speaks_of_the_state_before_the_first_turn(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text(MODEL.read_text().replace("players: 2\n", "players: 2\ninitially: \"crystals[0] == 0\"\n"))
    model = load_model(str(path)).instantiate()
    lay = layout(model)
    assert [lay.as_dict(s)["crystals[0]"] for s in initial_states(lay)] == [1]


TURN_MODELS = [FIXTURES / "turn_change.yaml", FIXTURES / "turn_start.yaml", FIXTURES / "until.yaml",
               Path(__file__).parent / "models" / "priority.yaml", ROOT_MODELS / "shadow_era.yaml",
               FIXTURES / "next_player.yaml"]


@pytest.mark.parametrize("path", TURN_MODELS, ids=lambda p: p.name)
def test_the_composed_step_is_the_blocks_one_after_another(path):
    """From every reachable state, `pass turn` (one simultaneous step) gives what its blocks give fired one
    after another, each on the state the one before left (the reference semantics fires each)."""
    written = {}

    def keep(model, specs, blocks):
        written.update(model=model, specs=specs, blocks=blocks)
        return model, specs, blocks

    model = load_model(str(path), edit=keep).instantiate()
    before = written["model"].instantiate()
    blocks, specs = written["blocks"], {s.name: s for s in written["specs"]}
    first = next(s for s in written["specs"] if s.is_leaf)
    chain = [first.name]
    while specs[chain[-1]].parent is not None:
        chain.append(specs[chain[-1]].parent)
    entering = turn_change.keyed(*([Assign(a.target, before.fix_params(a.value)) for a in specs[n].on_enter]
                                   for n in reversed(chain)))
    lay = layout(model)
    phase = model.var("phase").type.values.index(first.name)
    seat = Assign(Var("active"), App(Op.MOD, (App(Op.ADD, (Var("active"), Const(1))), Const(model.players))))
    who = [Assign(a.target, before.fix_params(a.value)) for a in blocks.next_player]
    passing = [Assign(Var("phase"), Const(phase)), *(who or [seat])]
    fixed = [[Assign(a.target, before.fix_params(a.value)) for a in group]
             for group in (blocks.turn_end, blocks.round_end, blocks.turn_start)]
    steps = [turn_change.turn_ending(before, fixed[0], fixed[1], passing), turn_change.starting(before, fixed[2]),
             entering]
    space = explore(model)
    compared = 0
    for i in range(len(space)):
        state = space.unpack(i)
        for action in (a for a in model.actions if a.kind is ActionKind.TURN_END):
            if not holds(lay, action.guard, state):
                continue
            at_once = fire(lay, action, state, {}).target
            one_by_one = state
            for block in steps:
                one_by_one = fire(lay, Action("block", effects=tuple(block)), one_by_one, {}).target
            assert at_once == one_by_one, lay.as_dict(state)
            compared += 1
    assert compared > 0


def test_a_value_out_of_range_between_blocks_is_a_gap(tmp_path):
    """turn_end takes x out of its range and on_turn_start then sets it: the state between the blocks breaks
    the range, so the turn cannot pass there (a gap), as when the blocks run one after another."""
    path = tmp_path / "model.yaml"
    path.write_text("model: gap\nplayers: 2\nvariables:\n  x: {type: 0..2, init: 0}\nphases:\n  - name: Main\n"
                    "turn_end: {x: x + 2}\non_turn_start: {x: 0}\nactions:\n  - name: inc\n    phase: Main\n"
                    "    when: \"x < 2\"\n    do: {x: x + 1}\n")
    model = load_model(str(path)).instantiate()
    lay = layout(model)
    passing = model.action("pass turn")
    x = [s.name for s in lay.slots].index("x")
    for value, gap in ((0, False), (1, True)):
        state = tuple(value if i == x else 0 for i in range(len(lay.slots)))
        step = fire(lay, passing, state, {})
        assert (step.gap is not None) == gap and (step.target is None) == gap
