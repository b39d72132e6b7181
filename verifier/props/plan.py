"""Run surface claims through an engine: compile monitors, check, map results back.

Claims engines take as they are run together on the model. Ordering and
bounded-response claims run on monitor products; their results come back as
one result per surface claim, with monitor variables stripped from the trace
so that it replays on the designer's model.

With `capped` (an explicit search of a concrete model), the monitored claims
are first checked together on one product watched by all their monitors:
monitors only observe, so verdicts and the lengths of the shortest
counterexamples are those of separate products, and one search replaces one
per claim. That search is capped at the states the separate searches would
roughly take together (claims x base states); a
claim it leaves UNKNOWN (the cap, a budget) is then checked on its own product,
so monitors never multiply beyond what separate checks would cost.

`moves` (the auto engine's random runs on the model itself, `engines/walk.py`)
is asked about the step claims still open then that do not expect to hold; where
the engine's explicit search of the model stopped at its state cap, it judges them
move by move on the model, without a product: one set of runs for all of them,
each deciding only with a trace that replays (VIOLATED).

`together(model)` says whether the monitored claims still open are then checked
with `check` on one product watched by all their monitors (the auto engine: where
its search of the model stopped at the cap, their products go to Z3, and one
shared product is encoded once instead of once per claim). A claim that shared
check leaves UNKNOWN goes on to its own product, as does every claim without it.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from verifier.ir.model import Model
from verifier.ir.props import Property, StepInvariant
from verifier.props.monitor import MONITOR_PREFIX, Compiled, compile_claim, compile_together
from verifier.result import CheckResult, Stats, Verdict
from verifier.trace import Step, Trace

CheckFn = Callable[[Model, Sequence[Property]], list[CheckResult]]
CappedCheckFn = Callable[[Model, Sequence[Property], int], list[CheckResult]]   # ... at most this many states


def run_claims(model: Model, claims: Sequence[Property], check: CheckFn,
               capped: CappedCheckFn | None = None, decided: dict[str, CheckResult] | None = None,
               moves: CheckFn | None = None, together: Callable[[Model], bool] | None = None) -> list[CheckResult]:
    """Decide every claim with `check`, in the order given (see the module doc for `capped`,
    `moves` and `together`); `decided` (by claim id) is filled as results come, so that what was decided
    before a run is cut short is kept."""
    compiled = {c.id: compile_claim(model, c) for c in claims}
    direct = [c for c in claims if compiled[c.id] is None]
    by_id: dict[str, CheckResult] = {}
    if direct:
        by_id.update((r.property.id, r) for r in check(model, direct))
        _note(model, decided, by_id)
    base_states = next((r.stats.states for r in by_id.values() if r.stats.states), None)
    monitored = [c for c in claims if compiled[c.id] is not None]
    shared = [c for c in monitored if c.expected != Verdict.PROVED.value]   # proofs are `check`'s to find
    if capped is not None and len(shared) > 1 and base_states:
        by_id.update(_together(model, shared, capped, len(shared) * base_states, base_states))
        _note(model, decided, by_id)
    steps = [c for c in shared if c.id not in by_id and isinstance(c, StepInvariant)
             and c.expected != Verdict.HOLDS.value]      # a holding claim needs a proof, not a run
    if moves is not None and steps:
        by_id.update((r.property.id, r) for r in moves(model, steps) if r.verdict is not Verdict.UNKNOWN)
        _note(model, decided, by_id)
    rest = [c for c in shared if c.id not in by_id]
    if together is not None and len(rest) > 1 and together(model):
        by_id.update(_together(model, rest, lambda product, cs, _cap: check(product, cs), 0, base_states))
        _note(model, decided, by_id)
    for claim in monitored:
        if claim.id not in by_id:
            product = compiled[claim.id]
            assert product is not None, "a monitored claim is compiled"
            by_id[claim.id] = merge(claim, check(product.model, product.claims), product, base_states)
            _note(model, decided, by_id)
    return [with_cycle_note(model, by_id[c.id]) for c in claims]


def _note(model: Model, decided: dict[str, CheckResult] | None, by_id: dict[str, CheckResult]) -> None:
    if decided is not None:
        decided.update((k, with_cycle_note(model, r)) for k, r in by_id.items() if k not in decided)


def _together(model: Model, claims: Sequence[Property], capped: CappedCheckFn, cap: int,
              base_states: int | None) -> dict[str, CheckResult]:
    """The claims the shared product decides (not UNKNOWN), by id."""
    product, parts = compile_together(model, claims)
    results = iter(capped(product, [c for part in parts for c in part.claims], cap))
    out = {}
    for claim, part in zip(claims, parts):
        mine = [next(results) for _ in part.claims]
        if all(r.verdict is not Verdict.UNKNOWN for r in mine):
            out[claim.id] = merge(claim, mine, part, base_states, shared_by=len(claims))
    return out


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
