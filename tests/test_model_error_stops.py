"""A model error stops the claims (issue 27): once the explicit search of `--engine auto` meets one,
with its trace, the claims it left open are UNKNOWN by that error, and neither random runs nor Z3
are asked about them (a new user's mistake must not cost minutes of Z3); `--printed` does not
decide them again at the default values, where the error may not occur (that hid it: exit 0)."""
from __future__ import annotations

from pathlib import Path

from verifier.cli import main
from verifier.engines import walk
from verifier.engines.explicit import ExplicitEngine
from verifier.lang import load_model, load_properties
from verifier.portfolio.auto import AutoEngine
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

HOSTILE = Path(__file__).parent / "fixtures" / "hostile"
MODEL = HOSTILE / "models" / "pile_kept.yaml"
PROPS = HOSTILE / "properties" / "pile_kept.yaml"


def refuse(*_args, **_kwargs):
    raise AssertionError("asked beyond a model error")


def test_claims_left_open_by_a_model_error_go_to_neither_random_runs_nor_z3(monkeypatch):
    monkeypatch.setattr(AutoEngine, "_symbolic", refuse)
    monkeypatch.setattr(walk, "check", refuse)
    model = load_model(str(MODEL), params={"N": 2})
    claims = load_properties(str(PROPS), model)
    results = {r.property.id: r for r in run_claims(model, claims, AutoEngine(), Budget())}
    assert results.pop("pile-never-full").verdict is Verdict.VIOLATED     # found before the error: kept
    lay = layout(model.instantiate())
    for r in results.values():      # the invariants, the reachability claim, the monitored ones on their products
        assert r.verdict is Verdict.UNKNOWN and r.model_error, (r.property.id, r.reason)
        assert "index 2 out of range for pile" in r.reason and "goes neither to random runs nor to Z3" in \
            r.evidence["auto"]
        assert r.trace is not None and len(r.trace.steps) == 3
        replay(lay, r.trace)


def test_printed_values_with_a_model_error_are_not_decided_again_at_the_defaults(capsys):
    """At the default N = 1 the pile never fills: decided there, every claim was as expected (exit 0)."""
    code = main([str(a) for a in ("check", MODEL, "-p", PROPS, "--printed", "--engine", "explicit", "-q",
                                  "--no-consistency")])
    err = capsys.readouterr().err
    assert code == 2 and "claim hand-in-range: model error" in err


LATER_RAISES = """\
model: later_raises
doc: a flag set by the first action; the second divides by x, which is 0 at first
variables:
  x: {type: 0..3, init: 0}
  f: {type: bool, init: false}
actions:
  - name: a
    when: "not f"
    do: {f: true}
    rule: "A: set the flag"
  - name: b
    when: "4 / x > 1"
    do: {x: 1}
    rule: "B: divide"
"""


def test_a_violation_found_before_a_later_action_raises_replays(tmp_path):
    """The search stops at `a`'s violating move before it evaluates `b` in that state: the trace
    (no model error in its reason) replays, firing in model order up to its step, as the search did."""
    (tmp_path / "m.yaml").write_text(LATER_RAISES)
    (tmp_path / "p.yaml").write_text('claims:\n  - id: never-f\n    says: the flag is never set\n    invariant: "not f"\n')
    model = load_model(str(tmp_path / "m.yaml"))
    claims = load_properties(str(tmp_path / "p.yaml"), model)
    for engine in (ExplicitEngine(), ExplicitEngine(store="compiled")):
        (result,) = run_claims(model, claims, engine, Budget())
        assert result.verdict is Verdict.VIOLATED and not result.model_error, result.reason
        assert replay(layout(model), result.trace)[-1] == (0, 1)
