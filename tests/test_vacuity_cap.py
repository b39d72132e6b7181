"""The vacuity check's own search stops at the analyses' state cap instead of spending the
run's whole budget on a model too large to search (it then reports nothing)."""
from __future__ import annotations

from pathlib import Path

import pytest

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


def _kept_searches(model):
    """A complete search of the instantiated model in each store, as the ledger keeps it."""
    from verifier.engines.compact import explore_compact
    from verifier.engines.compiled.search import explore_compiled
    from verifier.engines.explicit import explore
    from verifier.engines.ledger import KeptCompact

    concrete = model.instantiate()
    levels: list = []
    compact = explore_compact(concrete, order=levels)
    return [explore(concrete), KeptCompact(compact, levels), explore_compiled(concrete)]


@pytest.mark.parametrize("cap", [3, 40, 41, 1000])
def test_a_kept_search_of_any_store_reports_what_the_own_capped_search_reports(tmp_path, monkeypatch, cap):
    """Reused where the claims' search past the python store kept one: a search of more states than
    the python store's cap reports nothing, as the capped search does; else the parts never reached in
    it (41 states here). A complete python-store search reports them whatever the cap (its own stage's
    cap is lower), as before."""
    model = load_model(str(FIX / "order.yaml"), variant="strict")
    path = tmp_path / "c.yaml"
    path.write_text("claims:\n  - {id: never, says: an antecedent never true, invariant: \"rounds == 3 -> healed\"}\n"
                    "  - {id: sometimes, says: an antecedent true, invariant: \"healed -> rounds <= 2\"}\n")
    claims = load_properties(str(path), model)
    monkeypatch.setattr(vacuity, "CAPS", Caps(python=cap))
    want = vacuity.vacuous_claims(model, claims, Budget())
    assert [v.claim for v in want] == (["never"] if cap >= 41 else [])
    python, *past_python = _kept_searches(model)
    for kept in past_python:
        assert vacuity.vacuous_claims(model, claims, Budget(), kept) == want, type(kept).__name__
    assert [v.claim for v in vacuity.vacuous_claims(model, claims, Budget(), python)] == ["never"]   # as before


@pytest.mark.parametrize("cap", [3, 40, 41, 1000])
def test_a_model_a_search_stored_more_states_of_than_the_cap_reports_what_its_own_search_would(
        tmp_path, monkeypatch, cap):
    """Where some search of the model (complete or not, counted by the ledger) stored more states than
    the python store's cap, vacuity's own search could not finish: nothing is reported, and it is not run."""
    from verifier.engines.compiled.search import explore_compiled
    from verifier.engines.ledger import Ledger

    model = load_model(str(FIX / "order.yaml"), variant="strict")
    concrete = model.instantiate()
    found = claims(tmp_path, model)
    monkeypatch.setattr(vacuity, "CAPS", Caps(python=cap))
    want = vacuity.vacuous_claims(model, found, Budget())
    for states in (3, 20, 41):                    # capped searches; the model has 41 states
        ledger = Ledger.keeping([concrete])
        ledger.keep(concrete, explore_compiled(concrete, Budget(max_states=states)))
        stored = ledger.stored[concrete]
        assert stored == states
        with monkeypatch.context() as patched:
            if stored > cap:
                patched.setattr(vacuity, "explore", _no_search)
            assert vacuity.vacuous_claims(model, found, Budget(), None, stored) == want, states


def _no_search(*_args, **_kwargs):
    raise AssertionError("vacuity searched a model a search of which stored more states than its cap")
