"""Variants resolved at load time; parameters, PLAYERS and the default property file."""
from __future__ import annotations

import pickle
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from verifier.ir.expr import Const, Param, pretty
from verifier.ir.model import IntType
from verifier.lang import default_properties_path, load_model

MINI = str(Path(__file__).parent / "fixtures" / "lang" / "mini.yaml")


def guard(model, name: str) -> str:
    return pretty(model.action(name).guard, model.enum_value_name)


def test_first_variant_is_the_default():
    model = load_model(MINI)
    assert model.variant == "strict" and [v.name for v in model.variants] == ["strict", "loose"]
    assert model.variants[1].rule.section == "Draw"


def test_variant_only_actions_are_dropped():
    assert "reshuffle" not in [a.name for a in load_model(MINI).actions]
    assert "reshuffle" in [a.name for a in load_model(MINI, variant="loose").actions]


def test_per_variant_guard():
    assert "<= 4" in guard(load_model(MINI, variant="strict"), "draw")
    assert "<= 4" not in guard(load_model(MINI, variant="loose"), "draw")
    # the must action's guard is what the ADVANCE actions wait for, per variant too
    assert "<= 4" not in guard(load_model(MINI, variant="loose"), "end Draw -> Play")


def test_per_variant_effects(tmp_path):
    path = tmp_path / "v.yaml"
    path.write_text("model: v\nvariables:\n  x: {type: 0..3, init: 0}\nvariants:\n  a: {}\n  b: {}\n"
                    "actions:\n  - name: inc\n    do:\n      a: {x: 1}\n      b: {x: 2}\n")
    assert pretty(load_model(str(path), variant="b").action("inc").effects[0].value) == "2"
    assert pretty(load_model(str(path)).action("inc").effects[0].value) == "1"


def test_same_action_name_in_disjoint_variants(tmp_path):
    path = tmp_path / "v.yaml"
    path.write_text("model: v\nvariables:\n  x: {type: 0..3, init: 0}\nvariants:\n  a: {}\n  b: {}\n"
                    "actions:\n  - {name: inc, variants: [a], do: {x: 1}}\n"
                    "  - {name: inc, variants: [b], do: {x: 2}}\n")
    assert pretty(load_model(str(path), variant="b").action("inc").effects[0].value) == "2"


def test_every_variant_is_type_checked(tmp_path):
    from verifier.diagnostics import ModelError
    path = tmp_path / "v.yaml"
    path.write_text("model: v\nvariables:\n  x: {type: 0..3, init: 0}\nvariants:\n  a: {}\n  b: {}\n"
                    "actions:\n  - {name: inc, variants: [b], when: 'y > 0'}\n")
    with pytest.raises(ModelError, match="unknown name 'y'"):
        load_model(str(path), variant="a")


def test_parameters_stay_symbolic_until_instantiated():
    model = load_model(MINI)
    deck = model.var("deck")
    assert deck.type == IntType(Const(0), Param("DECK")) and model.params[0].lo == 1
    concrete = model.instantiate()
    assert concrete.var("deck").type == IntType(Const(0), Const(3)) and concrete.var("deck").init[0] == Const(3)


def test_a_models_instance_at_its_own_values_is_made_once_and_travels_without_it():
    """Kept on the frozen model (the loader, the claims and each stage of a reading ask again), never
    carried over to a changed copy nor pickled."""
    model = load_model(MINI)
    concrete = model.instantiate()
    assert model.instantiate() is concrete and model.instantiate({"DECK": 3}) is not concrete
    assert replace(model, variant=None).instantiate() is not concrete
    sent = pickle.loads(pickle.dumps(model))
    assert sent == model and sent.instantiate() == concrete and sent.instantiate() is not concrete


def test_parameter_override_and_free_parameter():
    assert load_model(MINI, params={"DECK": 7}).param_values == (("DECK", 7),)
    assert load_model(MINI, params={"DECK": 7}).instantiate().var("deck").type.bounds() == (0, 7)
    free = load_model(MINI, params={"DECK": None})
    assert free.param_values == (("DECK", None),) and not free.is_concrete


def test_constants_may_use_parameters(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("model: c\nparams:\n  N: {default: 4}\nconstants:\n  TOP: N - 1\n"
                    "variables:\n  x: {type: 0..TOP, init: TOP}\n")
    model = load_model(str(path))
    assert pretty(dict(model.constants)["TOP"]) == "N - 1" and pretty(model.var("x").init[0]) == "N - 1"
    assert model.instantiate({"N": 6}).var("x").type.bounds() == (0, 5)


def test_players_override():
    model = load_model(MINI, params={"PLAYERS": 3})
    assert model.players == 3 and model.var("deck").size() == 3 and model.var("active").type.bounds() == (0, 2)
    assert "% 3" in pretty(model.action("pass turn").effects[1].value)
    assert "active == 2" in pretty(model.action("pass turn").effects[3].value)


def test_default_properties_path(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "properties").mkdir()
    model = tmp_path / "models" / "game.yaml"
    shutil.copy(MINI, model)
    assert default_properties_path(str(model)) is None
    (tmp_path / "properties" / "game.yaml").write_text("claims: []\n")
    assert default_properties_path(str(model)) == str(tmp_path / "properties" / "game.yaml")
