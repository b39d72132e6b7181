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


FREE = """\
model: free
players: 2
params:
  N: {default: 2, min: 1, max: 5}
variables:
  x: {type: 0..N, init: 0}
variants:
  a: {doc: "go while below N"}
  b: {doc: "go never"}
phases:
  - name: A
actions:
  - name: go
    phase: A
    when: {a: "x < N", b: "false"}
    do: {x: "x + 1"}
"""


def test_a_difference_found_with_a_parameter_left_free_replays_its_trace_where_it_was_found(tmp_path):
    """README's `check models/wtactics.yaml --param DRAW_PILE='*' --engine symbolic` ended, after 564 s of
    CPU, in an internal error (exit 4): a claim violated in one reading only gave a variant-difference
    whose trace (found at N=1) was replayed on the model with N free."""
    model, props = tmp_path / "free.yaml", tmp_path / "claims.yaml"
    model.write_text(FREE, encoding="utf-8")
    props.write_text('claims:\n  - id: stays\n    says: "x stays 0"\n    invariant: "x < 1"\n'
                     '    expected: {a: VIOLATED, b: HOLDS}\n    why: "go"\n', encoding="utf-8")
    runs = check_model(str(model), RunOptions(properties=str(props), engine="symbolic", params={"N": None}))
    (f,) = [f for f in runs[0].findings if f.kind == "variant-difference"]
    assert f.evidence["trace_at"] == {"N": 1} and "internal_error" not in f.evidence
    assert [s.action for s in f.traces[0].steps] == ["go"]
