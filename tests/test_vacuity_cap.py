"""The vacuity check's own search stops at the analyses' state cap instead of spending the
run's whole budget on a model too large to search (it then reports nothing)."""
from __future__ import annotations

from pathlib import Path

from verifier.analysis import vacuity
from verifier.lang import load_model, load_properties
from verifier.portfolio.stores import Caps
from verifier.resources import Budget

FIX = Path(__file__).parent / "fixtures" / "props"


def claims(tmp_path, model):
    path = tmp_path / "c.yaml"
    path.write_text("claims:\n  - {id: never, says: an antecedent never true, invariant: \"rounds == 3 -> healed\"}\n")
    return load_properties(str(path), model)


def test_vacuity_reported_after_a_complete_search(tmp_path):
    model = load_model(str(FIX / "order.yaml"), variant="strict")
    (v,) = vacuity.vacuous_claims(model, claims(tmp_path, model), Budget())
    assert v.claim == "never"


def test_vacuity_search_stops_at_the_cap(tmp_path, monkeypatch):
    model = load_model(str(FIX / "order.yaml"), variant="strict")
    monkeypatch.setattr(vacuity, "CAPS", Caps(python=3))
    assert vacuity.vacuous_claims(model, claims(tmp_path, model), Budget()) == []
