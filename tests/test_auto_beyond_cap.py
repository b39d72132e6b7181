"""Auto engine beyond its state cap: the monitor products of a model whose explicit search
stopped at the cap go to the symbolic engine first (k-induction / PDR on the product), and
their verdicts agree with the complete explicit search."""
from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from verifier.engines.explicit import ExplicitEngine
from verifier.lang import load_model, load_properties
from verifier.portfolio.auto import AutoEngine
from verifier.portfolio.plan import run_claims
from verifier.portfolio.stores import Caps
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

FIX = Path(__file__).parent / "fixtures" / "props"
BUDGET = Budget(rlimit=120_000_000)
CAP = 3          # far below the fixture's reachable states: every explicit search stops at it


def decide(model, claims, engine, together: bool = True):
    """The claims as the runner decides them, with `engine` (beyond the cap the open monitored
    claims first share one product); without `together`, one claim at a time, so that each
    monitored claim has a product of its own."""
    if together:
        return run_claims(model, claims, engine, BUDGET)
    return [r for c in claims for r in run_claims(model, [c], engine, BUDGET)]


def reference(model, claims):
    engine = ExplicitEngine()
    return {r.property.id: r.verdict for r in run_claims(model, claims, engine, BUDGET)}


def plain(v: Verdict) -> Verdict:
    """A proof on a model without parameters is what a complete search calls HOLDS."""
    return Verdict.HOLDS if v is Verdict.PROVED else v


def test_products_of_a_model_beyond_the_cap_are_decided_symbolically():
    model = load_model(str(FIX / "order.yaml"), variant="strict")
    claims = [c for c in load_properties(str(FIX / "order_props.yaml"), model)
              if c.id in ("no-reap-after-heal", "heal-needs-reap", "one-heal-per-turn", "reap-every-turn",
                          "healed-means-heal", "other-in-three", "turn-ends")]
    results = decide(model, claims, AutoEngine(caps=Caps.every_store(CAP)))
    want = reference(model, claims)
    lay = layout(model.instantiate())
    for r in results:
        assert plain(r.verdict) is want[r.property.id], (r.property.id, r.reason)
        if r.trace is not None:
            replay(lay, r.trace)          # monitor variables stripped: it replays on the model itself
        if r.property.kind in ("ordering", "bounded_response"):
            assert r.engine in ("lemmas", "k-induction", "pdr", "bmc"), (r.property.id, r.engine)
            assert r.evidence["auto"].startswith("symbolic first: an explicit search of the model it extends "
                                                 f"stopped at {CAP:,} states")


def test_small_models_keep_the_explicit_search():
    model = load_model(str(FIX / "order.yaml"), variant="strict")
    claims = [c for c in load_properties(str(FIX / "order_props.yaml"), model) if c.id == "heal-needs-reap"]
    (r,) = decide(model, claims, AutoEngine())
    assert (r.verdict, r.engine) == (Verdict.VIOLATED, "explicit/python")


EVENTS = ["reap", "heal", "{enter: Reap}", "{enter: Heal}", "{enter: Other}", "{leave: Step2}", "turn-end"]
SCOPES = ["globally", "turn", "{after: heal}", "{before: heal}", "{between: reap, and: heal}",
          "{after: reap, until: {leave: Step2}}", "{phase: Step2}"]
CLAIMS = st.lists(
    st.tuples(st.sampled_from(["absence", "existence", "precedence", "response", "bounded-existence"]),
              st.sampled_from(EVENTS), st.sampled_from(EVENTS), st.sampled_from(SCOPES)),
    min_size=1, max_size=3)


@settings(max_examples=examples(12), deadline=None)
@given(CLAIMS, st.booleans())
def test_symbolic_on_the_product_agrees_with_the_explicit_search(drawn, together):
    """Differential: ordering claims decided by the symbolic engine on their monitor products
    (the model beyond the cap; one product shared by the claims or one each) against the
    complete explicit search of each claim's own product."""
    model = load_model(str(FIX / "order.yaml"), variant="loose")
    lines = ["model: order", "claims:",
             "  - {id: base, says: a reachable phase, reachable: {phase: Other}}"]
    for i, (pattern, p, s, scope) in enumerate(drawn):
        extra = f", s: {s}" if pattern in ("precedence", "response") else ""
        extra += ", at_most: 1" if pattern == "bounded-existence" else ""
        if scope.startswith("{phase"):
            scope, p = "phase", "{enter: Step2}" if p.startswith("{leave") else p
            lines.append(f"  - {{id: c{i}, says: drawn, ordering: {{pattern: {pattern}, p: {p}{extra}, "
                         f"scope: {{phase: Step2}}}}}}")
            continue
        lines.append(f"  - {{id: c{i}, says: drawn, ordering: {{pattern: {pattern}, p: {p}{extra}, scope: {scope}}}}}")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "drawn.yaml"
        path.write_text("\n".join(lines) + "\n")
        claims = load_properties(str(path), model)
    want = reference(model, claims)
    lay = layout(model.instantiate())
    for r in decide(model, claims, AutoEngine(caps=Caps.every_store(CAP)), together):
        if r.verdict in (Verdict.UNKNOWN, Verdict.HOLDS_TO_DEPTH):
            continue          # the symbolic engine may give up (liveness parts); it never contradicts
        assert plain(r.verdict) is want[r.property.id], (r.property.id, r.reason, lines)
        if r.trace is not None:
            replay(lay, r.trace)


def test_both_parts_of_a_live_existence_claim_count(tmp_path):
    """An existence claim in an after-until scope is an invariant (the interval closes without P)
    and an obligation of the same id (P is not put off forever): the invariant's counterexample
    must not be hidden by the obligation's proof."""
    model = load_model(str(FIX / "order.yaml"), variant="loose")
    path = tmp_path / "c.yaml"
    path.write_text("claims:\n  - {id: c, says: another reap before Step 2 ends, ordering: "
                    "{pattern: existence, p: reap, scope: {after: reap, until: {leave: Step2}}}}\n")
    claims = load_properties(str(path), model)
    for engine in (AutoEngine(), AutoEngine(caps=Caps.every_store(CAP))):
        (r,) = decide(model, claims, engine)
        assert r.verdict is Verdict.VIOLATED, r.reason
        replay(layout(model.instantiate()), r.trace)
