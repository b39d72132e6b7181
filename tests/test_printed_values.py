"""`printed:` values: loaded and checked, used by --printed, and named in every verdict's scale."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.diagnostics import ModelError
from verifier.engines.ledger import Ledger
from verifier.lang import load_model, load_properties
from verifier.portfolio.decide import AtDefaults, Portfolio
from verifier.report.json_out import runs_json
from verifier.resources import Budget
from verifier.resources.signals import OutOfTime
from verifier.result import SCALE_PRINTED, SCALE_SCALED, CheckResult, Verdict
from verifier.runner import RunOptions, check_model, load_variants

ROOT = Path(__file__).resolve().parent.parent

MODEL = """\
model: pile
players: 2
params:
  LIMIT: {default: 2, min: 1, max: 30}
printed: {LIMIT: 20}
variables:
  hand: {type: 0..LIMIT, per: player, init: 0}
phases:
  - name: Draw
actions:
  - name: draw
    phase: Draw
    when: "hand[active] < LIMIT"
    do:
      hand[active]: hand[active] + 1
"""

CLAIMS = """\
claims:
  - id: within-limit
    says: no hand exceeds the limit
    invariant: "forall p in player: hand[p] <= LIMIT"
  - id: full-hand
    says: a hand can fill up
    reachable: "hand[0] == LIMIT and hand[1] == LIMIT"
"""


@pytest.fixture()
def files(tmp_path):
    model, claims = tmp_path / "pile.yaml", tmp_path / "pile.props.yaml"
    model.write_text(MODEL)
    claims.write_text(CLAIMS)
    return str(model), str(claims)


def test_printed_values_load(files):
    m = load_model(files[0])
    assert m.printed == (("LIMIT", 20),)


@pytest.mark.parametrize("text, message", [
    ("printed: {LIMT: 20}", "unknown parameter 'LIMT'"),
    ("printed: {LIMIT: seven}", "must be an integer"),
    ("printed: {LIMIT: 40}", "outside the parameter's range 1..30"),
    ("printed: 7", "printed must map parameters"),
])
def test_bad_printed_values_are_located(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(MODEL.replace("printed: {LIMIT: 20}", text))
    with pytest.raises(ModelError) as err:
        load_model(str(path))
    rendered = err.value.render()
    assert f"{path}:5:" in rendered and message in rendered and "hint:" in rendered


def test_scale_of_each_verdict(files):
    model, claims = files
    scaled = check_model(model, RunOptions(properties=claims, consistency=False, engine="explicit"))
    assert {r.scale for r in scaled[0].results} == {SCALE_SCALED}
    printed = check_model(model, RunOptions(properties=claims, consistency=False, engine="explicit", printed=True))
    assert {r.scale for r in printed[0].results} == {SCALE_PRINTED}
    assert {r.params for r in printed[0].results} == {(("LIMIT", 20),)}
    doc = runs_json(printed)
    assert doc["model"]["printed"] == {"LIMIT": 20}
    assert [r["scale"] for r in doc["results"]] == ["printed", "printed"]
    json.dumps(doc)


def test_budget_at_printed_values_falls_back_to_the_scaled_verdict(files):
    """At LIMIT=20 the search needs 441 states; a cap of 100 leaves the claims UNKNOWN there, and
    the verdicts at the default LIMIT=2 (9 states) take their place, marked as scaled."""
    model, claims = files
    runs = check_model(model, RunOptions(properties=claims, consistency=False, engine="explicit", printed=True,
                                         budget=Budget(max_states=100)))
    assert [(r.verdict, r.scale, r.params) for r in runs[0].results] == [
        (Verdict.HOLDS, SCALE_SCALED, (("LIMIT", 2),)), (Verdict.HOLDS, SCALE_SCALED, (("LIMIT", 2),))]
    assert all(r.evidence["printed"] == "left open at the printed values (the search stopped at 100 states "
               "(--max-states 100)); decided at the default values" for r in runs[0].results)


def test_shipped_models_declare_printed_values():
    for path in sorted((ROOT / "models").glob("*.yaml")):
        assert load_model(str(path)).printed is not None, path.name


class _CutAtDefaults:
    """An engine that decides the first claim at the printed values and leaves the second UNKNOWN;
    at the default values (LIMIT=2, asked only about the second) it hands its verdict to its ledger (as auto does
    with what it decided before a later method) and is then cut by the backstop."""

    name = "cut-at-defaults"

    def __init__(self, ledger: Ledger):
        self.ledger = ledger

    def check(self, model, claims, budget, progress=None):
        if dict(model.param_values)["LIMIT"] == 2:
            self.ledger.decided([CheckResult(claims[0], Verdict.HOLDS, "stub", params=model.param_values)])
            raise OutOfTime()
        return [CheckResult(c, Verdict.HOLDS if i == 0 else Verdict.UNKNOWN, "stub", params=model.param_values,
                            stop=None if i == 0 else budget.states_stop()) for i, c in enumerate(claims)]


def test_a_cut_of_the_fallback_keeps_what_was_decided(files):
    """--printed's fallback is a step of the same plan: the backstop cutting it keeps every verdict
    decided before the cut, at the printed values and at the defaults."""
    path, claims_path = files
    printed, _ = load_variants(path, RunOptions(printed=True))
    defaults, _ = load_variants(path, RunOptions())
    claims = load_properties(claims_path, printed[0])
    into: dict = {}
    ledger = Ledger()
    portfolio = Portfolio(_CutAtDefaults(ledger), Budget(max_states=100), ledger)
    with pytest.raises(OutOfTime):
        portfolio.decide(printed[0], claims, into, AtDefaults(defaults[0], load_properties(claims_path, defaults[0])))
    assert [(into[c.id].verdict, into[c.id].params) for c in claims] == [
        (Verdict.HOLDS, (("LIMIT", 20),)), (Verdict.HOLDS, (("LIMIT", 2),))]
    assert into[claims[1].id].evidence["printed"] == ("left open at the printed values (the search stopped at "
                                                      "100 states (--max-states 100)); decided at the default values")
