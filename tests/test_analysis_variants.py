"""variant-difference: claims and reachable behaviours that depend on the reading."""
from __future__ import annotations

from test_analysis_support import analyse, assert_replay, fixture, load_all, of_kind

from verifier.runner import RunOptions, check_model


def _runs(name):
    return check_model(fixture(name), RunOptions(properties=fixture("variants_props"), engine="explicit"))


def test_claims_and_behaviours_that_differ():
    runs = _runs("variants_yes")
    assert [r.model.variant for r in runs] == ["strict", "loose"]
    first, loose = runs
    claims = of_kind(first.findings, "variant-difference")
    assert set(claims) == {"at-most-two"}
    f = claims["at-most-two"]
    assert f.variant is None and f.evidence["verdicts"] == {"strict": "HOLDS", "loose": "VIOLATED"}
    assert "holds under the reading 'strict' but does not under the reading 'loose'" in f.message
    behaviour = of_kind(loose.findings, "variant-difference")
    assert set(behaviour) == {"loose|strict"}
    b = behaviour["loose|strict"]
    assert b.variant == "loose" and "x = 3" in b.message and "never allows" in b.message
    assert b.rules[0] == "Count: up to three"
    assert [s.action for s in b.traces[0].steps] == ["inc", "inc", "inc"]
    assert_replay([r.model for r in runs], [f for r in runs for f in r.findings])


def test_findings_common_to_every_reading_are_reported_once():
    runs = _runs("variants_yes")
    od = [f for r in runs for f in r.findings if f.kind == "order-dependence"]
    assert [(f.subject, f.variant) for f in od] == [("inc|reset", None)]


def test_equivalent_readings_do_not_differ():
    assert of_kind(analyse("variants_no"), "variant-difference") == {}
    runs = _runs("variants_no")
    assert not [f for r in runs for f in r.findings if f.kind == "variant-difference"]


def test_single_reading_has_no_variant_findings():
    models = load_all(fixture("variants_yes"))[:1]
    from verifier.analysis import consistency_findings
    from verifier.engines.base import Budget
    assert not [f for f in consistency_findings(models, [[]], Budget()) if f.kind == "variant-difference"]
