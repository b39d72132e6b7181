"""Every shipped game loads at the numbers its page prints, and a model that does not names the -D to add."""
from __future__ import annotations

from pathlib import Path

import pytest

from verifier.cli import main
from verifier.diagnostics import ModelError
from verifier.lang import load_at_printed, load_model

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "models").glob("*.yaml"))

SHORT_DECK = """model: short_deck
params:
  DECK: {default: 3, min: 1, max: 60}
  OPENING: {default: 2, min: 1, max: 9}
printed: {OPENING: 7}
variables:
  deck: {type: 0..DECK, init: DECK - OPENING}
phases:
  - name: Draw
actions:
  - {name: draw, phase: Draw, when: "deck > 0", do: {deck: deck - 1}}
"""


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_game_loads_at_its_printed_numbers(path):
    first = load_model(str(path))
    assert first.printed is not None        # Alpha Clash's page prints none of its numbers: {}
    for variant in [v.name for v in first.variants] or [None]:
        model = load_at_printed(str(path), load_model(str(path), variant=variant), {}, variant)
        assert set(dict(first.printed).items()) <= set(model.param_values)


def test_a_missing_value_names_the_parameter_to_add(tmp_path, capsys):
    path = tmp_path / "short_deck.yaml"
    path.write_text(SHORT_DECK)
    with pytest.raises(ModelError) as err:
        load_at_printed(str(path), load_model(str(path)), {}, None)
    (diagnostic,) = err.value.diagnostics
    assert "deck starts at -4" in diagnostic.message
    assert diagnostic.hint and "keep their defaults (DECK=3)" in diagnostic.hint and "-D DECK=" in diagnostic.hint
    assert main(["check", str(path), "--printed", "--no-properties"]) == 2
    assert "-D DECK=" in capsys.readouterr().err
    assert load_at_printed(str(path), load_model(str(path)), {"DECK": 9}, None).param_values == (("DECK", 9),
                                                                                                ("OPENING", 7))
