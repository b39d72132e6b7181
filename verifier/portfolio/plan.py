"""Run surface claims through an engine: compile monitors, check, map results back.

Claims engines take as they are run together on the model. Ordering and
bounded-response claims run on monitor products; their results come back as
one result per surface claim (`props.mapback`), with monitor variables stripped
from the trace so that it replays on the designer's model.

On a concrete model checked by explicit search (the explicit engine, or auto's
`check_explicit`), the monitored claims are first checked together on one
product watched by all their monitors: monitors only observe, so verdicts and
the lengths of the shortest counterexamples are those of separate products, and
one search replaces one per claim. That search is capped at the states the
separate searches would roughly take together (claims x base states); a claim
it leaves UNKNOWN (the cap, a budget) is then checked on its own product, so
monitors never multiply beyond what separate checks would cost.

Before that, where the model's own search was complete in the compiled store and the reading's
ledger kept it, the step claims are judged on it without a product (`compiled.moves.first_breaks`:
a step claim's flag reads neither itself nor another monitor, so the product's first state with it
set is reached by the model's first breaking move, along the model's BFS path): the same verdicts
and traces, the model's states and depth in their stats, and no flags left to widen and multiply
the shared product (each broken claim doubled the states its breaking moves reach).

With the auto engine, the step claims still open then that do not expect to
hold are judged by its random runs on the model itself (`AutoEngine.check_moves`:
where its explicit search of the model stopped at its state cap, move by move on
the model, without a product; one set of runs for all of them, each deciding
only with a trace that replays, VIOLATED). Every monitored claim still open goes
on to its own product: for Z3 (past the cap) a claim's own product is a smaller
problem than one watched by every monitor (WTactics 7/7/20: 24 claims' proofs
22 s of CPU on their own products, 61 s on the shared one; encoding a product
costs under 0.1 s).
"""
from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from enum import Enum

from verifier.engines.base import Engine, ProgressFn
from verifier.engines.compiled.product import GraphProduct, eligible
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.ledger import Ledger
from verifier.ir.model import Model
from verifier.ir.props import Property, StepInvariant
from verifier.portfolio.auto import AutoEngine
from verifier.props.mapback import merge, with_cycle_note
from verifier.props.monitor import compile_claim, compile_together
from verifier.resources import Budget
from verifier.resources.signals import OutOfTime
from verifier.result import CheckResult, Stats, Verdict


class Step(Enum):
    """The steps of `claim_steps`, in their order (see the module doc)."""

    DIRECT = "the claims the engine takes as they are"
    JUDGED = "the step claims judged on the model's own complete search"
    TOGETHER = "the monitored claims on one product"
    MOVES = "the step claims in random runs"
    PRODUCT = "a monitored claim on its own product"


def run_claims(model: Model, claims: Sequence[Property], engine: Engine, budget: Budget,
               progress: ProgressFn | None = None, decided: dict[str, CheckResult] | None = None,
               ledger: Ledger | None = None) -> list[CheckResult]:
    """Decide every claim with `engine` under `budget`, in the order given (see the module doc);
    `decided` (by claim id) is filled as results come, so that what was decided before a run is
    cut short is kept, and so are the results `engine` hands to `ledger` before it returns."""
    into: dict[str, CheckResult] = {} if decided is None else decided
    for _step in claim_steps(model, claims, engine, budget, progress, into, ledger):
        pass
    return [into[c.id] for c in claims]


def claim_steps(model: Model, claims: Sequence[Property], engine: Engine, budget: Budget,
                progress: ProgressFn | None, decided: dict[str, CheckResult],
                ledger: Ledger | None = None) -> Generator[Step, None, None]:
    """`run_claims` one step at a time: each step's results are in `decided` when it is yielded
    (the caller acts between steps on what the ledger kept: `Portfolio.steps`). Where the run's
    backstop expired during an engine's call, the run is cut there (`OutOfTime`, as the backstop's
    alarm would cut it a moment later): what the call returned is not kept, since a search the
    backstop stopped may have sent its claims on to other methods that a run with more time never
    tries (what the engine handed the ledger before it returned is kept)."""
    def check(m: Model, cs: Sequence[Property]) -> list[CheckResult]:
        return _within(budget, engine.check(m, cs, budget, progress))

    compiled = {c.id: compile_claim(model, c) for c in claims}
    direct = [c for c in claims if compiled[c.id] is None]
    if ledger is not None and model.is_concrete and any(eligible(c) for c in claims):
        ledger.graph_wanted.add(model.instantiate())     # its compiled search records its graph for the products
    by_id: dict[str, CheckResult] = {}
    if direct:
        early: dict[str, CheckResult] = {}
        if ledger is not None:
            ledger.record = early
        try:
            by_id.update((r.property.id, r) for r in check(model, direct))
        finally:
            if ledger is not None:
                ledger.record = None
            _note(model, decided, early)
        _note(model, decided, by_id)
        yield Step.DIRECT
    base_states = next((r.stats.states for r in by_id.values() if r.stats.states), None)
    monitored = [c for c in claims if compiled[c.id] is not None]
    shared = [c for c in monitored if c.expected != Verdict.PROVED.value]   # proofs are `check`'s to find
    auto = engine if isinstance(engine, AutoEngine) else None
    judged = _judged(model, [c for c in shared if isinstance(c, StepInvariant)], ledger, budget, auto is not None)
    if judged:
        by_id.update(judged)
        _note(model, decided, by_id)
        yield Step.JUDGED
    shared = [c for c in shared if c.id not in by_id]
    if model.is_concrete and isinstance(engine, (AutoEngine, ExplicitEngine)) and len(shared) > 1 and base_states:
        search = engine.check_explicit if isinstance(engine, AutoEngine) else engine.check
        cap = len(shared) * base_states
        capped = replace(budget, max_states=min(cap, budget.max_states or cap))
        by_id.update(_together(model, shared, lambda m, cs: _within(budget, search(m, cs, capped, progress)),
                               base_states, ledger))
        _note(model, decided, by_id)
        yield Step.TOGETHER
    steps = [c for c in shared if c.id not in by_id and isinstance(c, StepInvariant)
             and c.expected != Verdict.HOLDS.value]      # a holding claim needs a proof, not a run
    if auto is not None and model.is_concrete and steps:
        by_id.update((r.property.id, r) for r in _within(budget, auto.check_moves(model, steps, budget))
                     if r.verdict is not Verdict.UNKNOWN)
        _note(model, decided, by_id)
        yield Step.MOVES
    for claim in monitored:
        if claim.id not in by_id:
            product = compiled[claim.id]
            assert product is not None, "a monitored claim is compiled"
            with _offered(ledger, model, product.model, [claim], [""]) as offered:
                by_id[claim.id] = _over_graph(merge(claim, check(product.model, product.claims), product, base_states),
                                              offered)
            _note(model, decided, by_id)
            yield Step.PRODUCT
    if ledger is not None and model.is_concrete:
        ledger.graphs.pop(model.instantiate(), None)     # every product searched: the graph is let go of


def _judged(model: Model, claims: Sequence[StepInvariant], ledger: Ledger | None, budget: Budget,
            auto: bool) -> dict[str, CheckResult]:
    """The step claims decided on the model's complete compiled search that `ledger` kept
    (`compiled.moves.first_breaks`: each move judged, no monitor product), by id; none where
    there is no such search or it cannot judge them there."""
    if not claims or ledger is None or not model.is_concrete:
        return {}
    from verifier.engines.compiled.moves import first_breaks
    from verifier.engines.compiled.search import CompiledSpace
    concrete = model.instantiate()
    space = ledger.compiled_search_of(concrete)
    if not isinstance(space, CompiledSpace):
        return {}
    product, parts = compile_together(model, claims)
    graph = ledger.graph_of(concrete)
    firsts = first_breaks(space, product.instantiate(), [part.monitor_vars[0] for part in parts], budget,
                          None if graph is None else graph[1])
    if firsts is None:
        return {}
    evidence = {"store": "compiled", "moves": "each judged move of the model's complete search (no monitor product)"}
    if auto:
        evidence["auto"] = "explicit: concrete instance (compiled store)"
    stats = Stats(len(space), space.transitions, space.seconds)
    out = {}
    for claim, first in zip(claims, firsts):
        trace = None if first is None else space.trace_through(*first)
        out[claim.id] = CheckResult(claim, Verdict.HOLDS if first is None else Verdict.VIOLATED, "explicit/compiled",
                                    space.max_depth, stats, trace, "", concrete.param_values, concrete.variant,
                                    evidence=evidence)
    return out


def _within(budget: Budget, results: list[CheckResult]) -> list[CheckResult]:
    """`results`, where the run's backstop has not expired meanwhile; else the run is cut here."""
    if budget.expired():
        raise OutOfTime()
    return results


def _note(model: Model, decided: dict[str, CheckResult], by_id: dict[str, CheckResult]) -> None:
    decided.update((k, with_cycle_note(model, r)) for k, r in by_id.items() if k not in decided)


def _together(model: Model, claims: Sequence[Property], check, base_states: int | None,
              ledger: Ledger | None = None) -> dict[str, CheckResult]:
    """The claims the shared product decides with `check` (not UNKNOWN), by id."""
    product, parts = compile_together(model, claims)
    with _offered(ledger, model, product, claims, [f"{c.id}." for c in claims]) as offered:
        results = iter(check(product, [c for part in parts for c in part.claims]))
    out = {}
    for claim, part in zip(claims, parts):
        mine = [next(results) for _ in part.claims]
        if all(r.verdict is not Verdict.UNKNOWN for r in mine):
            out[claim.id] = _over_graph(merge(claim, mine, part, base_states, shared_by=len(claims)), offered)
    return out


@contextmanager
def _offered(ledger: Ledger | None, model: Model, product: Model, claims: Sequence[Property],
             tags: Sequence[str]) -> Iterator[GraphProduct | None]:
    """While the product is checked, its offer to be searched over the model's recorded state graph
    (`compiled.product`: where every claim's monitor is `eligible` and the model's complete compiled
    search kept its graph in `ledger`); None where there is none."""
    if ledger is None or not model.is_concrete or not all(eligible(c) for c in claims) or \
            ledger.graph_of(model.instantiate()) is None:
        yield None
        return
    key = product.instantiate()
    offered = ledger.products[key] = GraphProduct(model, tuple(claims), tuple(tags))
    try:
        yield offered
    finally:
        ledger.products.pop(key, None)


def _over_graph(result: CheckResult, offered: GraphProduct | None) -> CheckResult:
    """`result`, its evidence saying where its product was searched over the model's graph, or why
    not where that was tried."""
    if offered is None or not (offered.used or offered.why):
        return result
    said = "over the model's recorded state graph" if offered.used else f"its own search: {offered.why}"
    return replace(result, evidence={**result.evidence, "product_search": said})


