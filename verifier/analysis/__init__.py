"""Rules-consistency analyses: where the rules are dead, stuck, silent, conflicting or ambiguous.

`consistency_findings` is the one entry point (the runner calls it once per
model file with one loaded model per variant). Per model:

- every parameter fixed: one breadth-first exploration (the explicit engine's
  `explore`) and one pass over its states shared by the explicit analyses
  (dead rules and phases, deadlocks, gaps, conflicts, nondeterministic musts,
  and the confirmation of order-dependence on reached states); when a budget
  stopped the exploration, the candidates it left open are decided beyond
  the explored states (`beyond`: random runs, then k-induction / PDR);
- a parameter left free: only the symbolic analyses (dead rules proved with
  the symbolic engine, order-dependence with Z3).

Then across variants: a finding found identically (same kind and subject) in
every variant is reported once, with variant None and the first variant's
evidence; the others keep their variant. Variant differences (claims and
reachable behaviours) come last. A finding is acknowledged when the model's
`acknowledge` list names its kind and subject (see `acknowledgement`).

Every trace a finding carries replays on the model of its variant (the first
model for variant None) with `verifier.trace.replay`: each is replayed before it
is returned, and one that does not (an engine bug) is removed, with the error
in the finding's evidence (`internal_error`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from verifier.analysis.conflicts import Conflicts
from verifier.analysis.context import Context, Visitor
from verifier.analysis.dead_rules import DeadRules, symbolic_findings
from verifier.analysis.deadlock import Deadlocks
from verifier.analysis.gaps import Gaps
from verifier.analysis.nondeterministic_must import NondeterministicMust
from verifier.analysis.order_dependence import OrderDependence
from verifier.analysis.variants import behaviour_findings, claim_findings
from verifier.ir.model import Acknowledgement, Model
from verifier.ir.props import Property
from verifier.resources import Budget, StopKind
from verifier.result import CheckResult, Finding

if TYPE_CHECKING:    # `beyond` brings z3 and numpy: imported only when a search leaves questions open
    from verifier.analysis.beyond import Beyond

__all__ = ["KINDS", "acknowledgement", "across_readings", "analyse_model", "consistency_findings"]

KINDS = ("dead-rule", "deadlock", "gap", "conflict", "order-dependence", "nondeterministic-must",
         "variant-difference")


def analyse_model(model: Model, budget: Budget = Budget(), memo: dict | None = None,
                  claims: Sequence[Property] = (), kept: Any = None, capped: Any = None,
                  mined: Any = None) -> tuple[Context, list[Finding]]:
    """Every per-model analysis of one model (one variant): its context and its findings;
    `memo` is shared by the readings of one model file (see `Context.memo`); `claims`: the
    reading's claims, whose invariants may decide questions `beyond` an incomplete search; `kept`: the
    complete search of the instantiated model the claims' check ran (its ledger's), reused; `capped`:
    the claims' compiled search its state cap stopped (its ledger's), reused where it is the one the
    analyses would run; `mined`: the states the claims' Z3 mined lemmas from and its memo (its ledger's),
    reused `beyond` where they are the states it mines."""
    ctx = Context.create(model, budget, memo, kept, capped, mined)
    if not ctx.explicit:
        return ctx, symbolic_findings(ctx) + OrderDependence(ctx).findings()
    ctx.explore()
    visitors = [DeadRules(ctx), Deadlocks(ctx), Gaps(ctx), Conflicts(ctx), NondeterministicMust(ctx),
                OrderDependence(ctx)]
    ctx.scan(visitors)
    if _beyond_possible(ctx):
        from verifier.analysis.beyond import decide

        ctx.beyond = decide(ctx, visitors, claims)
        _answer(ctx.beyond, visitors)
    findings = [f for v in visitors for f in v.findings()]
    if ctx.beyond is not None:
        findings = [_decided_by(ctx.beyond, f) for f in findings]
    ctx.release()
    return ctx, findings


def _beyond_possible(ctx: Context) -> bool:
    """An incomplete search a budget of time or states stopped: not a model error (the model's
    to fix), not the memory guard (no room left to go further)."""
    if ctx.complete or ctx.cut_short or ctx.space.error is not None:
        return False
    return ctx.space.stop is None or ctx.space.stop.kind is not StopKind.MEMORY


def _answer(beyond: Beyond, visitors: Sequence[Visitor]) -> None:
    """Hand the questions answered "unreachable" to the visitors whose findings they decide
    (dead rules and phases; order-dependent pairs shown unreachable)."""
    for v in visitors:
        if isinstance(v, DeadRules):
            v.proved = {q.subject: q.method for q in beyond.questions
                        if q.kind == "dead-rule" and q.answer == "unreachable"}
        elif isinstance(v, OrderDependence):
            names = {q.subject for q in beyond.questions if q.kind == "order-dependence" and q.answer == "unreachable"}
            acts = v.ctx.instance.actions
            v.excluded = {(a, b) for a, b in v.witness if f"{acts[a].name}|{acts[b].name}" in names}


def _decided_by(beyond: Beyond, f: Finding) -> Finding:
    """A finding a question beyond the explored states decided names the method that did."""
    method = beyond.method(f.kind, f.subject)
    if method is None or f.kind == "dead-rule":
        return f
    return replace(f, engine=method, evidence={**f.evidence, "found_by": method,
                                               "explored_states": beyond.explored})


def consistency_findings(models: Sequence[Model], results: Sequence[Sequence[CheckResult]],
                         budget: Budget) -> list[Finding]:
    """The findings of one model file: `models` holds one model per variant, `results` the
    claim results per variant in the same order."""
    if not models:
        return []
    memo: dict = {}
    analysed = [analyse_model(model, budget, memo) for model in models]
    return across_readings(models, [ctx for ctx, _ in analysed], [fs for _, fs in analysed], results)


def across_readings(models: Sequence[Model], contexts: Sequence[Context],
                    per_model: Sequence[list[Finding]], results: Sequence[Sequence[CheckResult]]) -> list[Finding]:
    """Each reading's own findings (from `analyse_model`), merged, then the differences between
    readings, every trace replayed, acknowledgements applied."""
    findings = merge_variants(per_model) if len(models) > 1 else list(per_model[0])
    findings += claim_findings(contexts, results)
    findings += behaviour_findings(contexts)
    findings = [_replayed(f, models) for f in findings]
    acks = [a for m in models for a in m.acknowledged]
    out = []
    for f in findings:
        ack = acknowledgement(f, acks)
        out.append(replace(f, acknowledged=ack.reason) if ack is not None else f)
    return out


def merge_variants(per_model: Sequence[Sequence[Finding]]) -> list[Finding]:
    """A finding every variant has (same kind and subject) once, with variant None."""
    keys = [{f.key for f in fs} for fs in per_model]
    common = set.intersection(*keys)
    out = [replace(f, variant=None) for f in per_model[0] if f.key in common]
    for fs in per_model:
        out += [f for f in fs if f.key not in common]
    return out


def acknowledgement(f: Finding, acks: Sequence[Acknowledgement]) -> Acknowledgement | None:
    """The acknowledgement that covers `f`: same kind, and the same subject; a pair ``a|b`` in
    either order; for a gap (subject ``variable|action``) the variable alone covers every action."""
    parts = f.subject.split("|")
    for ack in acks:
        if ack.kind != f.kind:
            continue
        mine = [p.strip() for p in ack.subject.split("|")]
        if ack.subject == f.subject or (len(mine) == len(parts) == 2 and set(mine) == set(parts)):
            return ack
        if f.kind == "gap" and len(mine) == 1 and mine[0] == parts[0]:
            return ack
    return None


def _replayed(f: Finding, models: Sequence[Model]) -> Finding:
    """`f` once every trace replays on the reference semantics of its reading's model. A trace
    that does not is an engine bug: it is removed and the error is put in the evidence, so the
    finding never rests on evidence that does not replay."""
    if not f.traces:
        return f
    from verifier.semantics import EvalError, layout
    from verifier.trace import ReplayError, replay

    model = next((m for m in models if m.variant == f.variant), models[0]).instantiate(f.evidence.get("trace_at"))
    if not model.is_concrete:          # a trace is a run at some values of the parameters: it needs them
        return replace(f, traces=(), evidence=dict(f.evidence, internal_error="a trace found with parameters "
                                                   "left free says at which values it was found (an engine bug)"))
    lay = layout(model)
    kept, errors = [], []
    for trace in f.traces:
        try:
            replay(lay, trace)
            kept.append(trace)
        except (ReplayError, EvalError) as err:
            errors.append(str(err))
    if not errors:
        return f
    evidence = dict(f.evidence, internal_error="a trace did not replay on the reference semantics "
                    f"(an engine bug, please report it): {'; '.join(errors)}")
    return replace(f, traces=tuple(kept), evidence=evidence)
