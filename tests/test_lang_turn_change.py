"""The turn change in order (docs/LANGUAGE.md, "The turn change"): the turn ends, `active` becomes the
next player, `on_turn_start` runs, then the first phase's `on_enter`, each reading what the one before
left; the first turn starts the same way; `prev(...)` in a step claim reads the state before the step,
its `active` included."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_lang_errors import the_error, where

from verifier.engines.base import Budget
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.lang import load_model, load_properties
from verifier.props.plan import run_claims
from verifier.result import Verdict
from verifier.semantics import fire, initial_states, layout

FIXTURES = Path(__file__).parent / "fixtures" / "lang"
MODEL = FIXTURES / "turn_change.yaml"


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
    results = run_claims(model.instantiate(), claims, lambda m, cs: engine.check(m, cs, Budget()))
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
