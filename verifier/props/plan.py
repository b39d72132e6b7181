"""Run surface claims through an engine: compile monitors, check, map results back.

Claims engines take as they are run together on the model; each ordering or
bounded-response claim runs on its own monitor product (so monitors never
multiply with each other), and its results come back as one result for the
surface claim, with monitor variables stripped from the trace so that it
replays on the designer's model.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

from verifier.ir.model import Model
from verifier.ir.props import Property
from verifier.props.monitor import MONITOR_PREFIX, Compiled, compile_claim
from verifier.result import CheckResult, Stats, Verdict
from verifier.trace import Step, Trace

CheckFn = Callable[[Model, Sequence[Property]], list[CheckResult]]


def run_claims(model: Model, claims: Sequence[Property], check: CheckFn) -> list[CheckResult]:
    """Decide every claim with `check`, in the order given."""
    compiled = {c.id: compile_claim(model, c) for c in claims}
    direct = [c for c in claims if compiled[c.id] is None]
    by_id = {r.property.id: r for r in check(model, direct)} if direct else {}
    base_states = next((r.stats.states for r in by_id.values() if r.stats.states), None)
    for claim in claims:
        product = compiled[claim.id]
        if product is not None:
            by_id[claim.id] = merge(claim, check(product.model, product.claims), product, base_states)
    return [with_cycle_note(model, by_id[c.id]) for c in claims]


def merge(claim: Property, results: Sequence[CheckResult], product: Compiled,
          base_states: int | None) -> CheckResult:
    """One result for a surface claim from the results of its monitor claims."""
    worst = max(results, key=lambda r: r.verdict.rank)
    states = max((r.stats.states or 0 for r in results), default=0) or None
    evidence = dict(worst.evidence)
    evidence["monitor"] = ", ".join(v.removeprefix(MONITOR_PREFIX) for v in product.monitor_vars)
    if states and base_states:
        evidence["monitor_overhead"] = round(states / base_states, 2)
    return replace(worst, property=claim, trace=strip_monitors(worst.trace),
                   stats=Stats(states, sum(r.stats.transitions or 0 for r in results) or None,
                               sum(r.stats.seconds for r in results)),
                   evidence=evidence)


def strip_monitors(trace: Trace | None) -> Trace | None:
    if trace is None:
        return None

    def keep(items):
        return tuple((k, v) for k, v in items if not k.startswith(MONITOR_PREFIX))

    steps = tuple(replace(s, changes=keep(s.changes)) for s in trace.steps)
    return Trace(keep(trace.initial), steps, trace.loop_start, tuple(keep(s) for s in trace.states))


def with_cycle_note(model: Model, result: CheckResult) -> CheckResult:
    """Say whether a lasso's loop makes progress (changes a declared progress variable)."""
    trace = result.trace
    if trace is None or trace.loop_start is None or result.verdict is not Verdict.VIOLATED:
        return result
    loop: list[Step] = list(trace.steps[trace.loop_start:])
    changed = sorted({name.split("[")[0] for step in loop for name, _ in step.changes})
    progress = [v for v in changed if v in model.progress]
    if not model.progress:
        note = "cycle (no progress variables declared): the loop changes " + (", ".join(changed) or "nothing")
    elif progress:
        note = f"progress cycle: the loop changes {', '.join(progress)} forever"
    else:
        note = f"non-progress cycle: the loop changes none of {', '.join(model.progress)}"
    return replace(result, evidence={**result.evidence, "cycle": note})
