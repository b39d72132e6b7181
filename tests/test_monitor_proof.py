"""Monitored claims proved on their products with lemmas tying the monitor to the game
(`engines/symbolic/monitor_proof.py`): a claim no k up to 8 makes inductive is proved with
one lemma; a wrong lemma never makes a proof (the final check by fresh solvers refutes it);
and on random small models a proof never meets a run that breaks the claim."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from test_symbolic_diff import bool_expr, models
from tiers import examples

from verifier.cli import main
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic import SymbolicEngine, engine, monitor_proof, strengthen
from verifier.engines.symbolic.core import Effort, Safety
from verifier.engines.symbolic.encode import FALSE as Z3_FALSE
from verifier.engines.symbolic.encode import Encoding, negate
from verifier.engines.symbolic.examples import rng
from verifier.engines.symbolic.kinduction import kinduction
from verifier.ir.expr import FALSE, TRUE, Const, Op, Var, app, neg
from verifier.ir.model import Action, Assign, BoolType, Model, Variable
from verifier.ir.props import Event, Ordering
from verifier.props.monitor import MONITOR_PREFIX, compile_claim
from verifier.resources import Budget
from verifier.result import Verdict

FREE_MODE_NEVER_COLLAPSES = Ordering(id="never-collapses", pattern="absence", p=Event(action="collapse"),
                                     scope="after", q=Event(expr=Var("free")))
HOLDING = (Verdict.HOLDS, Verdict.PROVED)


def modes(collapse_in_free_mode: bool = False) -> Model:
    """A mode fixed for the game (either value); a clock going round 0..12; `collapse` only
    outside Free mode (or in both). The claim's monitor opens in Free mode, and an open monitor
    with the mode not Free is unreachable, but the clock gives the step case of k-induction
    simple paths of 26 such states."""
    free, n, c = Var("free"), Var("n"), Var("c")
    guard = TRUE if collapse_in_free_mode else neg(free)
    return Model(name="modes", variables=(
        Variable("free", BoolType(), init=(None,)), Variable("n", rng(0, 12), init=(Const(0),)),
        Variable("c", BoolType(), init=(FALSE,))),
        actions=(Action("tick", effects=(Assign(n, app(Op.ITE, app(Op.LT, n, Const(12)),
                                                         app(Op.ADD, n, Const(1)), Const(0))),)),
                 Action("collapse", guard=guard, effects=(Assign(c, neg(c)),))),
        end=FALSE)


def product_problem(model: Model, claim: Ordering):
    compiled = compile_claim(model, claim)
    assert compiled is not None
    enc = Encoding(compiled.model)
    (inv,) = compiled.claims
    bad = negate(enc.predicate(inv.expr, enc.cur))
    focus = {i for i, s in enumerate(enc.slots) if s.var.startswith(MONITOR_PREFIX)}
    return compiled, enc, bad, focus


def test_a_claim_no_k_makes_inductive_is_proved_with_a_lemma():
    compiled, enc, bad, focus = product_problem(modes(), FREE_MODE_NEVER_COLLAPSES)
    assert kinduction(Safety(enc, bad, Z3_FALSE), 8, Effort(40_000_000)).status == "bounded"
    proof = monitor_proof.prove(enc, bad, focus, Effort(40_000_000))
    assert isinstance(proof, monitor_proof.Proof), proof
    said = [monitor_proof.describe(enc, c) for c in proof.lemmas]
    assert "not (free == 0 and monitor.open == 1)" in said, said
    (r,) = SymbolicEngine().check(compiled.model, compiled.claims, Budget(rlimit=60_000_000))
    assert r.verdict in HOLDING and r.engine == "pdr", (r.verdict, r.engine, r.reason)   # PDR's share comes first


def test_the_lemmas_prove_a_claim_pdr_leaves_open_within_its_share(monkeypatch):
    """PDR first, within PDR_FIRST of the claim's units, where the claim is not inductive as it stands;
    the lemmas after it (here PDR is given no units)."""
    monkeypatch.setattr(engine, "PDR_FIRST", 0.0)
    compiled, *_ = product_problem(modes(), FREE_MODE_NEVER_COLLAPSES)
    (r,) = SymbolicEngine().check(compiled.model, compiled.claims, Budget(rlimit=60_000_000))
    assert r.verdict in HOLDING and r.engine == "lemmas", (r.verdict, r.engine, r.reason)
    assert "lemma(s) tying the monitor to the game" in r.reason


def test_a_broken_claim_is_never_proved():
    _compiled, enc, bad, focus = product_problem(modes(collapse_in_free_mode=True), FREE_MODE_NEVER_COLLAPSES)
    assert isinstance(monitor_proof.prove(enc, bad, focus, Effort(40_000_000)), str)


def test_a_wrong_lemma_makes_no_proof(monkeypatch):
    """Houdini made to keep every candidate, those that reachable states break included:
    the final check by fresh solvers refutes the lemmas, and no proof comes back."""
    monkeypatch.setattr(strengthen, "houdini", lambda enc, support, clauses, deadline, purpose: list(clauses))
    _compiled, enc, bad, focus = product_problem(modes(), FREE_MODE_NEVER_COLLAPSES)
    found = monitor_proof.prove(enc, bad, focus, Effort(40_000_000))
    assert isinstance(found, str) and "internal" in found, found


# ---------------------------------------------------------------- random models

@st.composite
def ordered(draw):
    """A random small model and an ordering claim over its actions and state."""
    model = draw(models(param=False))
    names = [a.name for a in model.actions]
    p = Event(action=draw(st.sampled_from(names)))
    pattern = draw(st.sampled_from(["absence", "precedence"]))
    s = Event(expr=draw(bool_expr((), 1))) if pattern == "precedence" else None
    scope = draw(st.sampled_from(["globally", "after"]))
    q = Event(expr=draw(bool_expr((), 1))) if scope == "after" else None
    return model, Ordering(id="order", pattern=pattern, p=p, s=s, scope=scope, q=q)


ORDERED = ordered()


@settings(max_examples=examples(25), deadline=None)
@given(ORDERED)
def test_a_proof_with_lemmas_never_meets_a_run_that_breaks_the_claim(case):
    model, claim = case
    compiled, enc, bad, focus = product_problem(model, claim)
    proof = monitor_proof.prove(enc, bad, focus, Effort(20_000_000))
    if isinstance(proof, str):
        assert not proof.startswith("internal"), proof
        return
    (r,) = ExplicitEngine().check(compiled.model, compiled.claims, Budget(rlimit=40_000_000))
    assert r.verdict is Verdict.HOLDS, (r.verdict, [monitor_proof.describe(enc, c) for c in proof.lemmas])


def test_a_claim_inductive_with_its_monitor_names_no_empty_list_of_lemmas(tmp_path, capsys):
    """A step claim its monitor makes inductive as it stands says so, not "with 0 lemma(s) ...: "."""
    claims = tmp_path / "claims.yaml"
    claims.write_text('claims:\n  - id: trivial-step\n    says: "no hand goes below zero"\n    step: "hand[0] >= 0"\n',
                      encoding="utf-8")
    mini = Path(__file__).parent / "fixtures" / "core" / "mini.yaml"
    assert main(["check", str(mini), "-p", str(claims), "--engine", "symbolic", "--no-consistency", "-q",
                 "--variant", "strict", "--format", "json", "-o", "-"]) == 0
    (r,) = json.loads(capsys.readouterr().out)["results"]
    assert r["engine"] == "lemmas" and "no lemma needed" in r["reason"] and "0 lemma" not in r["reason"]


def test_a_claim_inductive_with_its_monitor_runs_no_random_runs(monkeypatch):
    """The random runs' states only sift the candidates a CTI gives: a claim that has no CTI
    (inductive as it stands) runs none; one that needs lemmas runs them once."""
    _compiled, enc, bad, focus = product_problem(modes(), FREE_MODE_NEVER_COLLAPSES)
    runs: list[Encoding] = []
    real = monitor_proof._run_states
    monkeypatch.setattr(monitor_proof, "_run_states", lambda enc: runs.append(enc) or real(enc))
    assert isinstance(monitor_proof.prove(enc, bad, focus, Effort(40_000_000)), monitor_proof.Proof)
    assert runs == [enc]
    runs.clear()
    in_range = negate(enc.predicate(app(Op.LE, Var("n"), Const(12)), enc.cur))
    assert isinstance(monitor_proof.prove(enc, in_range, focus, Effort(40_000_000)), monitor_proof.Proof)
    assert runs == []
