"""A monitor product's results read as the surface claim's: one result per claim, monitor
variables stripped from its trace so that it replays on the designer's model, and a lasso's
loop said to make progress or not."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from verifier.ir.model import Model
from verifier.ir.props import Property
from verifier.props.monitor import MONITOR_PREFIX, Compiled
from verifier.result import CheckResult, Stats, Verdict
from verifier.trace import Step, Trace


def merge(claim: Property, results: Sequence[CheckResult], product: Compiled,
          base_states: int | None, shared_by: int = 1) -> CheckResult:
    """One result for a surface claim from the results of its monitor claims."""
    worst = max(results, key=lambda r: r.verdict.rank)
    states = max((r.stats.states or 0 for r in results), default=0) or None
    evidence = dict(worst.evidence)
    tag = f"{MONITOR_PREFIX}{claim.id}." if shared_by > 1 else MONITOR_PREFIX
    evidence["monitor"] = ", ".join(v.removeprefix(tag) for v in product.monitor_vars)
    if states and base_states:
        evidence["monitor_overhead"] = round(states / base_states, 2)
    if shared_by > 1:
        evidence["product_shared_by"] = shared_by      # the overhead is that of all their monitors
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
    return replace(trace, initial=keep(trace.initial), steps=steps, states=tuple(keep(s) for s in trace.states))


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
