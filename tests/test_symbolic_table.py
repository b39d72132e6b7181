"""One table of (model, claim, truth), run against every engine alike.

explicit, BMC, k-induction, PDR, the combined symbolic strategy and auto must
each give a verdict compatible with the truth, never a stronger one than
their method shows, and traces that replay. Counterexample lengths of the
breadth-first explicit search and of BMC / k-induction (both shortest-first)
must be equal.
"""
from __future__ import annotations

import pytest

from verifier.engines import walk
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic import SymbolicEngine
from verifier.engines.symbolic.examples import table
from verifier.ir.props import Reachable, Terminates
from verifier.portfolio.auto import AutoEngine
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

ROWS = table()
ENGINES = ("explicit", "bmc", "kind", "pdr", "all", "auto")
BUDGET = Budget(rlimit=180_000_000, max_depth=30)
SLOW_BMC = {"peterson-mutex": 12, "arith-sum": 8, "peterson-live": 16}   # BMC depth for rows whose unrolling is costly


def make(name: str):
    if name == "explicit":
        return ExplicitEngine()
    if name == "auto":
        return AutoEngine()
    return SymbolicEngine(name)


_explicit_cache: dict[str, object] = {}


def explicit_result(row_id, model, claim):
    if row_id not in _explicit_cache:
        (_explicit_cache[row_id],) = ExplicitEngine().check(model, [claim], BUDGET)
    return _explicit_cache[row_id]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("row_id,model,claim,truth", ROWS, ids=[r[0] for r in ROWS])
def test_table(row_id, model, claim, truth, engine):
    budget = BUDGET
    if engine == "bmc" and row_id in SLOW_BMC:
        budget = Budget(rlimit=180_000_000, max_depth=SLOW_BMC[row_id])
    (r,) = make(engine).check(model, [claim], budget)
    proof = Verdict.PROVED if not model.params else Verdict.HOLDS   # fixed parameters: HOLDS, never PROVED
    v = r.verdict
    if truth == "holds":
        if engine == "explicit":
            assert v is Verdict.HOLDS
        elif engine == "bmc":
            assert v in (Verdict.HOLDS_TO_DEPTH, proof), r.reason
            if v is Verdict.HOLDS_TO_DEPTH:
                assert r.depth == budget.max_depth
        elif engine == "auto":
            assert v in (Verdict.HOLDS, proof)
        else:
            assert v is proof, r.reason
        assert r.trace is None
    elif truth == "violated":
        ref = explicit_result(row_id, model, claim)
        lasso = ref.trace is not None and ref.trace.loop_start is not None
        if lasso and engine not in ("explicit", "auto"):
            assert isinstance(claim, Terminates)
            assert v is Verdict.UNKNOWN   # symbolic: no ranking function (a lasso has none), no lie
            if engine != "bmc":
                assert "ranking" in r.reason
        else:
            assert v is Verdict.VIOLATED, r.reason
            assert r.trace is not None
            if engine in ("explicit", "bmc", "kind", "all", "auto") and r.engine != "pdr":
                assert len(r.trace) == len(ref.trace), "BMC and BFS both find a shortest counterexample"
    elif truth == "reachable":
        assert v is Verdict.HOLDS, r.reason
        assert r.trace is not None
        if r.engine != "pdr":
            assert len(r.trace) == len(explicit_result(row_id, model, claim).trace)
    else:
        assert truth == "unreachable"
        if engine == "bmc":
            assert v in (Verdict.UNKNOWN, Verdict.VIOLATED)
        else:
            assert v is Verdict.VIOLATED, r.reason
        assert r.trace is None
        if engine not in ("explicit", "auto", "bmc"):
            assert "unreachable" in r.reason or "never fires" in r.reason
    if r.trace is not None:
        concrete = model.instantiate(dict(r.params))
        replay(layout(concrete), r.trace)
    if engine in ("bmc", "kind", "pdr", "all"):
        assert r.engine in ("bmc", "k-induction", "pdr", "ranking")
    if isinstance(claim, Reachable) and v is Verdict.HOLDS:
        assert r.trace is not None


# ---------------------------------------------------------------- YAML fixtures, through the claim planner

FIXTURES = [("tests/fixtures/core/mini.yaml", "tests/fixtures/core/mini_props.yaml")]


def _fixture_runs():
    from pathlib import Path

    from verifier.lang import load_model
    root = Path(__file__).resolve().parent.parent
    out = []
    for model_path, props_path in FIXTURES:
        base = load_model(str(root / model_path))
        for variant in [v.name for v in base.variants] or [None]:
            out.append((str(root / model_path), str(root / props_path), variant))
    return out


@pytest.mark.parametrize("engine", ("bmc", "kind", "pdr", "all", "auto"))
@pytest.mark.parametrize("model_path,props_path,variant", _fixture_runs(),
                         ids=[f"{p.split('/')[-1]}-{v}" for p, _, v in _fixture_runs()])
def test_yaml_fixture_claims_agree_with_explicit(model_path, props_path, variant, engine, monkeypatch):
    """Every claim of the fixture (ordering patterns included, through their monitors): no engine
    contradicts exhaustive explicit search, and the proof strategies decide every safety claim.

    auto's explicit search stops at the depth bound here, then random runs look for witnesses
    before Z3 decides; those runs can decide none of these claims (each still open holds or is
    unreachable) and would spend their whole time bound (5 s each): 0.2 s keeps the step."""
    from verifier.ir.props import DeadlockFree, Invariant
    from verifier.lang import load_model, load_properties
    from verifier.portfolio.plan import run_claims

    monkeypatch.setattr(walk, "STEPS", 16_000)
    model = load_model(model_path, variant=variant)
    claims = load_properties(props_path, model)
    budget = Budget(rlimit=60_000_000, max_depth=10 if engine == "bmc" else 25)
    reference = run_claims(model, claims, ExplicitEngine(), Budget(rlimit=120_000_000))
    results = run_claims(model, claims, make(engine), budget)
    for claim, ref, r in zip(claims, reference, results):
        assert ref.verdict in (Verdict.HOLDS, Verdict.VIOLATED), ref.reason
        assert not r.reason.startswith("internal"), r.reason
        if ref.verdict is Verdict.VIOLATED:
            assert r.verdict in (Verdict.VIOLATED, Verdict.UNKNOWN), (claim.id, r.verdict, r.reason)
        else:
            assert r.verdict is not Verdict.VIOLATED, (claim.id, r.reason)
        if engine in ("kind", "pdr", "all") and isinstance(claim, (Invariant, DeadlockFree)):
            assert r.verdict is not Verdict.UNKNOWN and r.verdict is not Verdict.HOLDS_TO_DEPTH, (claim.id, r.reason)
        if r.trace is not None:
            replay(layout(model.instantiate(dict(r.params))), r.trace)
        if engine == "auto":
            assert r.as_expected == ref.as_expected, (claim.id, r.verdict, ref.verdict)
