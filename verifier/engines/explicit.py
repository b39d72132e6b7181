"""The explicit-state engine: breadth-first search over packed states.

`explore` compiles the model (`bfsgen.compile_search`: one generated function
runs the whole search) and returns a `StateSpace`. One search serves every
claim of a run: invariants and state reachability are predicates checked on
every expanded state, action reachability keeps the first firing of each
action, deadlocks are recorded as they are met, and termination and
obligations read the state graph (`lasso.py`). BFS order and parent links make
every counterexample a shortest one.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from verifier.engines.base import ProgressFn, ProgressInfo, stop_of
from verifier.engines.bfsgen import compile_search, packing_of
from verifier.engines.ledger import KeptCompact, Ledger
from verifier.engines.statespace import StateSpace
from verifier.engines.symmetry import NAME as SYMMETRY
from verifier.engines.symmetry import canonicalizer
from verifier.ir.expr import Expr
from verifier.ir.model import Model
from verifier.ir.props import DeadlockFree, Invariant, Obligation, Property, Reachable, Terminates, map_claim
from verifier.props import moves
from verifier.resources import Budget, Stop, StopKind, model_error
from verifier.resources.memory import limit_words, memory_limit_bytes, over_soft, table_growth
from verifier.result import CheckResult, Stats, Verdict
from verifier.semantics import EvalError, State, initial_states, layout
from verifier.trace import Trace

NAME = "explicit"
INCOMPLETE = "exploration incomplete"     # how the reason of a claim a stopped search left open begins
GRAPH_SHARE = 0.3        # of --max-memory: what the compiled store's state graph may take (`graph_past_memory`)


def explore(model: Model, budget: Budget = Budget(), progress: ProgressFn | None = None,
            keep_edges: bool = False, watch: Sequence[Expr | Callable[[State], bool]] = (),
            stop_when_found: bool = False, track: Sequence[int] = (), symmetric: bool = False) -> StateSpace:
    """Breadth-first search of an instantiated model from all its initial states.

    `watch`: state predicates (expressions, or functions of a state tuple); `space.found[k]`
    is the first state index (in BFS order: a shallowest state) satisfying `watch[k]`, or None.
    An expression that raises a model error on a state is recorded in `space.watch_errors`.
    With `stop_when_found` the search stops once every watched predicate has been seen.
    `track`: action indices whose first firing is kept in `space.fired` (state, label, target).
    `keep_edges`: keep every transition (for graphs and liveness).
    `symmetric`: store one state per orbit of the player rotations (the model must declare
    `symmetry: players`, which its loader checked); traces are lifted back to the model.

    Budgets stop the search with `space.complete` False and `space.stop` saying which;
    a model run-time error stops it with `space.error` = (state index, message).
    """
    start = time.perf_counter()
    lay = layout(model)
    exprs = [w for w in watch if isinstance(w, Expr)]
    canon = canonicalizer(lay, packing_of(lay)) if symmetric and model.symmetry == "players" else None
    code = compile_search(lay, exprs, track, keep_edges, stop_when_found and len(exprs) == len(watch), canon)
    space = StateSpace(lay, packing_of(lay), code.labels, keep_edges)
    if canon is not None:
        space.canon, space.reductions = canon, (SYMMETRY,)
    space.watch = [None] * len(exprs)
    space.fired = dict.fromkeys(track)
    if budget.max_states is not None:
        space.state_limit = budget.max_states
    if budget.max_depth is not None:
        space.depth_limit = budget.max_depth
    try:
        inits = initial_states(lay)
    except EvalError as err:
        space.complete, space.stop = False, model_error(f"model error in the initial states: {err}")
        space.found = [None] * len(watch)
        return space
    pack = space.packing.pack
    for s in inits:
        x = pack(s) if canon is None else canon(pack(s))
        if x in space.seen:
            continue
        if len(space.packed) == space.state_limit:
            space.complete, space.stop = False, budget.states_stop()
            break
        space.store(x, -1, 0)
    space.level_end = len(space.packed)
    space.tick = _ticker(space, budget, progress, start)
    status = None
    if space.complete and space.packed and space.depth_limit <= 0:
        status = "depth"
    elif space.complete:
        status = code.run(space)
    if status is not None:
        space.complete = False
        if isinstance(status, EvalError):
            space.error = (space.head, str(status))
            space.stop = model_error(f"model error: {status}")
        else:
            space.stop = stop_of(status, budget)
    code.finish(space)          # the watches on the states stored but not expanded
    space.found = _found(space, watch)
    space.seconds = time.perf_counter() - start
    if progress is not None:
        progress(ProgressInfo(len(space.packed), space.max_depth, space.seconds))
    return space


def _ticker(space: StateSpace, budget: Budget, progress: ProgressFn | None, start: float,
            clock: Callable[[], float] = time.perf_counter):
    """The search's check between states: the run's backstop, the memory guard, progress (never a
    time share: how far a search goes depends on its states, not on the machine)."""
    memory_stop = _memory_stop(budget)
    state = {"last": start}

    def tick(i: int, n: int, depth: int) -> Stop | None:
        if budget.backstop is not None and budget.backstop.expired():
            return budget.backstop.stop()
        if over_soft(budget.max_memory_mb, table_growth(space.seen)):
            return memory_stop
        if progress is not None:
            now = clock()
            if now - state["last"] >= 0.5:
                state["last"] = now
                progress(ProgressInfo(n, depth, now - start))
        return None

    return tick


def _found(space: StateSpace, watch: Sequence) -> list[int | None]:
    out: list[int | None] = []
    k = 0
    for w in watch:
        if isinstance(w, Expr):
            hit = space.watch[k]
            out.append(None if hit == -1 else hit)
            k += 1
        else:
            out.append(next((i for i, s in enumerate(space.states) if w(s)), None))
    return out


def _memory_stop(budget: Budget) -> Stop:
    owner = "the memory guard" if budget.max_memory_mb is None else f"--max-memory {budget.max_memory_mb}"
    return Stop(StopKind.MEMORY, owner, limit_words(budget.max_memory_mb))


def graph_past_memory(space, budget: Budget) -> Stop | None:
    """Where --max-memory is given and the compiled store's state graph of `space` (a complete or
    stopped compiled search) would take more than GRAPH_SHARE of it, the stop that leaves its
    termination and obligation claims UNKNOWN instead of building it (where the memory guard would
    cut the whole reading short). The graph's arrays (`compiled.graph.state_graph`): its visited
    table (4 bytes a slot, 80 % full), an offset and a stuck flag a state, a target and an action a
    transition; counted from the search's states and transitions and the option alone, so the same
    on every machine."""
    if budget.max_memory_mb is None:
        return None
    stored, head, transitions = len(space), space.head, space.transitions
    need = 4 * stored / 0.8 + 9 * head + 8 * transitions
    held = budget.max_memory_mb * (1 << 20) * GRAPH_SHARE
    if need <= held:
        return None
    owner = f"--max-memory {budget.max_memory_mb}"
    return Stop(StopKind.STATES, owner,
                f"the state graph of {stored:,} states and {transitions:,} transitions would take "
                f"{need / (1 << 20):,.0f} MB, more than the {GRAPH_SHARE:.0%} of {owner} MB it may hold")


def graph_kept_past_memory(edges, budget: Budget) -> bool:
    """Whether the state graph a search kept (`compiled.arrays.EdgeArrays`) takes more than GRAPH_SHARE
    of --max-memory, where it is given: a product is then not searched over it (its own search is,
    as without the graph; counted from the graph's arrays and the option alone)."""
    if budget.max_memory_mb is None:
        return False
    held = sum(int(a.nbytes) for a in (edges.offsets, edges.dst, edges.lab, edges.stuck))
    return held > budget.max_memory_mb * (1 << 20) * GRAPH_SHARE


def _visited_budget(budget: Budget) -> int | None:
    """Bytes the compact visited set (the compiled store's states and table) may take before it
    spills to disk: half this process's share of the memory budget (--max-memory, or the guard's
    default)."""
    memory = memory_limit_bytes(budget.max_memory_mb)
    return memory // 2 if memory else None


def _ticker_compact(budget: Budget) -> Callable[[int, int], Stop | None]:
    """Between chunks of the compact search: the run's backstop and the memory guard (the visited
    set spills to disk first, at half the budget; the guard still bounds the whole run)."""
    memory_stop = _memory_stop(budget)

    def tick(states: int, depth: int) -> Stop | None:
        if budget.backstop is not None and budget.backstop.expired():
            return budget.backstop.stop()
        if over_soft(budget.max_memory_mb):
            return memory_stop
        return None

    return tick


# ---------------------------------------------------------------- the engine

class ExplicitEngine:
    """Decides invariants, deadlock freedom, reachability (of a state or of an action),
    termination and obligations by exhaustive search of one parameter instance.

    Verdicts: VIOLATED with a shortest trace (a lasso for termination and obligations)
    as soon as a counterexample is among the stored states, whether or not the search
    finished; HOLDS (or, for reachability, VIOLATED: exhaustively unreachable) only when
    the search was complete; otherwise UNKNOWN with the budget that stopped it. A model
    run-time error (index out of range, division by a non-positive number) gives UNKNOWN
    with the error and a trace to the state where it happens.
    """

    name = NAME

    def __init__(self, store: str | None = "python", workers: int = 1, scheduler: str | None = None,
                 por: bool = False, dashboard: bool = False, ledger: Ledger | None = None, at_least: int = 0):
        """`store`: "python" (the reference: states as Python ints, edges on demand; also None) or
        "compact" (numpy arrays, vectorised expansion: `compact.py`; the verdicts it gives say so in
        their evidence, and so do those of the python store where the compact one was asked for
        and the state does not fit it); `workers` > 1 or a `scheduler` address
        partitions the compact search across Dask workers (`distributed.py`). `por`: the python
        store's search of invariants, reachability and deadlocks fires stubborn sets (`por.py`)
        where no claim needs the state graph and no symmetry reduction applies. `dashboard`: the
        local cluster of `workers` serves Dask's dashboard. `ledger`: where its complete searches are
        kept for the passes that follow (`ledger.Ledger`). `at_least`: states its searches are known
        to store at least (a monitor product: its model's): the compiled store's arrays are sized
        for them from the start (`compiled.search.first_capacity`)."""
        self.store, self.workers, self.scheduler, self.por = store or "python", workers, scheduler, por
        self.dashboard, self.at_least = dashboard, at_least
        self.ledger = Ledger() if ledger is None else ledger
        self.searched: StateSpace | None = None     # the python store's last search (`auto` mines it)
        self.searched_compiled = None               # the compiled store's last search (`auto` mines its first states)
        self.unfit = ""                             # why the last check's compact search could not run

    def check(self, model: Model, properties: Sequence[Property], budget: Budget,
              progress: ProgressFn | None = None) -> list[CheckResult]:
        if not model.is_concrete:
            free = ", ".join(k for k, v in model.param_values if v is None)
            return [self._result(model, p, Verdict.UNKNOWN, None,
                                 reason=f"explicit search needs every parameter fixed ({free} is free); "
                                        f"use --engine symbolic or auto") for p in properties]
        concrete = model.instantiate()
        properties = [map_claim(p, concrete.fix_params) for p in properties]
        watch: list[Expr] = []
        slot: dict[str, int] = {}
        track: set[int] = set()
        for p in properties:
            if isinstance(p, Invariant):
                from verifier.ir.expr import neg
                slot[p.id] = len(watch)
                watch.append(neg(p.expr))
            elif isinstance(p, Reachable) and p.expr is not None:
                slot[p.id] = len(watch)
                watch.append(p.expr)
            elif isinstance(p, Reachable) and p.choice:       # a state where the move can be made
                slot[p.id] = len(watch)
                watch.append(moves.fireable(concrete, p.action, p.choice))
            elif isinstance(p, Reachable) and p.action:
                track |= _matching(concrete, p.action)
        graph_claims = [p for p in properties if isinstance(p, (Terminates, Obligation))]
        state_claims = [p for p in properties if not isinstance(p, (Terminates, Obligation))]
        self.unfit = ""
        lasso_watch = self._graph_watch(concrete, graph_claims)
        distributed = self.workers > 1 or self.scheduler is not None
        compact, store, graph, graph_space = None, "compact", None, None
        if state_claims or (lasso_watch and not distributed):
            # for graph claims, or for the products after (not under --max-memory: its share is the search's)
            # (nor where the search is reduced by symmetry: the products then search their own)
            record = bool(lasso_watch) or (self.ledger.wants_graph(concrete) and budget.max_memory_mb is None
                                           and concrete.symmetry != "players")
            compact = self._compiled(concrete, budget, progress, watch + ([] if distributed else lasso_watch),
                                     sorted(track), edges=record and not distributed)
            if compact is not None:
                store = "compiled"
                if not distributed:           # the compiled store's own search (not its workers')
                    self.ledger.keep(concrete, compact)
            elif state_claims:
                compact = self._compact(concrete, budget, progress, watch, sorted(track))
        if lasso_watch and (compact is not None or distributed):
            # the lassos need the whole graph in one place: with workers, this process's compiled search holds it
            graph_space = (self._client_search(concrete, budget, progress, lasso_watch) if distributed
                           else compact if store == "compiled" else None)
        refused = None if graph_space is None else graph_past_memory(graph_space, budget)
        if graph_space is not None and refused is None:
            from verifier.engines.compiled.graph import state_graph
            graph = state_graph(graph_space)
        reference = None
        if compact is None and self.por and not graph_claims and concrete.symmetry != "players":
            reference = self._reduced(concrete, budget, progress, watch, sorted(track))
        elif (compact is None and (graph is None or state_claims)) or (graph_claims and graph is None and not refused):
            # the graph claims need the python store's edges
            reference = explore(concrete, budget, progress, keep_edges=bool(graph_claims), watch=watch,
                                track=sorted(track), symmetric=True)
            self.ledger.keep(concrete, reference)
        self.searched = reference
        self.searched_compiled = compact if store == "compiled" and not distributed else None
        out = []
        decided = (state_claims if compact is not None else []) + (graph_claims if graph is not None else [])
        from verifier.engines.lasso import Shared
        shared = Shared.of(concrete, graph_claims)       # the graph claims' regions and components, found once
        for p in properties:
            if refused is not None and p in graph_claims:
                out.append(replace(self._result(concrete, p, Verdict.UNKNOWN, None, reason=refused.words),
                                   engine=f"{NAME}/compiled", stop=refused))
                continue
            space = (graph_space if p in graph_claims else compact) if p in decided else reference
            assert space is not None, "a claim of each kind has the store that answers it"
            out.append(self._decide(concrete, p, space, slot, budget, graph, shared))
        if decided:
            def named(r: CheckResult, store: str) -> CheckResult:
                return replace(r, engine=f"{NAME}/{store}",
                               evidence={**r.evidence, "store": f"{store}: {self.unfit}" if self.unfit else store})
            out = [named(r, "compiled" if p in graph_claims else store) if p in decided else r
                   for p, r in zip(properties, out)]
        elif self.unfit:
            out = [replace(r, evidence={**r.evidence, "store": f"python: {self.unfit}"}) for r in out]
        return out

    def _decide(self, model: Model, p: Property, space, slot: dict[str, int], budget: Budget,
                graph=None, shared=None) -> CheckResult:
        """`p`'s verdict from the search `space` (any store's) of the instantiated `model`; termination
        and obligations read the state graph `graph` where the compiled store built one, else `space`
        (`shared`: what the claims before on that graph found, `lasso.Shared`)."""
        from verifier.engines.lasso import check_obligation, check_termination

        if isinstance(p, (Invariant, Reachable)) and p.id in slot:
            return self._state_claim(space, p, slot[p.id])
        if isinstance(p, Reachable):
            return self._action_claim(space, p, _matching(model, p.action))
        if isinstance(p, DeadlockFree):
            i = space.deadlocks[0] if space.deadlocks else None
            return self._violation_or_hold(space, p, i)
        if isinstance(p, Terminates):
            return self._from(space, p, *check_termination(space if graph is None else graph, p, shared))
        if isinstance(p, Obligation):
            return self._from(space, p, *check_obligation(space if graph is None else graph, p, shared))
        return self._result(model, p, Verdict.UNKNOWN, space,
                            reason=f"the explicit engine does not decide {p.kind} claims")

    def _graph_watch(self, model: Model, graph_claims: Sequence[Terminates | Obligation]) -> list[Expr]:
        """The predicates the compiled search watches so that its state graph (`compiled/graph.py`)
        decides the graph claims (none where the compiled store is not asked for)."""
        if not graph_claims or self.store != "compiled":
            return []
        from verifier.engines.lasso import region_predicates
        return list(dict.fromkeys(e for p in graph_claims for e in region_predicates(model, p)))

    def _compiled(self, model: Model, budget: Budget, progress: ProgressFn | None, watch: list[Expr],
                  track: list[int], edges: bool = False):
        """The compiled store's search (`compiled/`), or None where it cannot hold the model (the
        compact store, else the python store, serves; `unfit` says why); `edges`: it records the state
        graph (the graph claims' lassos are decided on it)."""
        if self.store != "compiled":
            return None
        from verifier.engines.compiled.search import CompileError, explore_compiled, why_not
        why = why_not(model, watch)
        if why:
            self.unfit = f"the compiled store cannot search it: {why}"
            return None
        tick = _ticker_compact(budget)
        try:
            if self.workers > 1 or self.scheduler is not None:      # the workers expand by the compiled code
                return self._compact(model, budget, progress, watch, track, compiled=True)
            over = None if track or edges else self._over_graph(model, budget, watch, tick)
            if over is not None:
                return over
            return explore_compiled(model, budget, progress, watch, track, tick, symmetric=True,
                                    spill_bytes=_visited_budget(budget), edges=edges, at_least=self.at_least)
        except CompileError as err:
            self.unfit = f"the compiled store could not compile it: {err}"
            return None

    def _over_graph(self, model: Model, budget: Budget, watch: list[Expr], tick):
        """The search of a monitor product the portfolio offered (`Ledger.products`) over its model's
        recorded state graph (`compiled.product`), or None where there is none or it does not fit."""
        offered = self.ledger.products.get(model)
        base = None if offered is None else self.ledger.graph_of(offered.model.instantiate())
        if offered is None or base is None or graph_kept_past_memory(base[1], budget):
            return None
        from verifier.engines.compiled.product import explore_over_graph
        space = explore_over_graph(offered, *base, model, budget, watch, tick)
        offered.used = space is not None
        return space

    def _client_search(self, model: Model, budget: Budget, progress: ProgressFn | None, watch: list[Expr]):
        """The compiled store's search in this process (with `--workers`: the graph claims' lassos need
        the whole state graph in one place), or None where it cannot hold the model."""
        from verifier.engines.compiled.search import CompileError, explore_compiled, why_not
        why = why_not(model, watch)
        if why:
            self.unfit = f"the compiled store cannot search it: {why}"
            return None
        try:
            return explore_compiled(model, budget, progress, watch, (), _ticker_compact(budget), symmetric=True,
                                    spill_bytes=_visited_budget(budget), edges=True, at_least=self.at_least)
        except CompileError as err:
            self.unfit = f"the compiled store could not compile it: {err}"
            return None

    def _compact(self, model: Model, budget: Budget, progress: ProgressFn | None, watch: list[Expr],
                 track: list[int], compiled: bool = False):
        """The compact (or distributed) search, or None where the reference store must serve;
        `compiled`: the distributed search's workers expand by the model's compiled code."""
        if self.store not in ("compact", "compiled") and self.workers <= 1 and self.scheduler is None:
            return None
        from verifier.engines.compact import explore_compact, fits
        if not fits(model):
            self.unfit = f"{self.unfit}; " if self.unfit else ""
            self.unfit += "the state does not fit the compact store"
            return None
        tick = _ticker_compact(budget)
        if self.workers > 1 or self.scheduler is not None:
            from verifier.engines.distributed import explore_distributed, holds
            if not holds(model):
                self.unfit = "the state is wider than the one 64-bit word --workers partitions"
                return None
            share = _visited_budget(budget)          # each worker's visited set spills at its share
            return explore_distributed(model, budget, progress, watch, track, tick, self.workers, self.scheduler,
                                       None if share is None else share // self.workers, self.dashboard, compiled,
                                       symmetric=True)
        levels: list | None = [] if self.ledger.wants_order(model) else None   # the analyses read it in BFS order
        space = explore_compact(model, budget, progress, watch, track, tick, visited_budget=_visited_budget(budget),
                                order=levels)
        if levels is not None:
            self.ledger.keep(model, KeptCompact(space, levels))
        return space

    @staticmethod
    def _reduced(model: Model, budget: Budget, progress: ProgressFn | None, watch: list[Expr],
                 track: list[int]) -> StateSpace:
        """The search with partial-order reduction (`por.py`)."""
        from verifier.engines.por import explore_reduced
        start = time.perf_counter()
        return explore_reduced(model, budget, progress, watch, track,
                               lambda space: _ticker(space, budget, progress, start))

    # ---- verdicts
    def _incomplete(self, space: StateSpace, p: Property) -> CheckResult:
        if space.error is not None:
            i, message = space.error
            words = f"model error: {message} (in the state the trace reaches, after {space.depth_of(i)} steps)"
            return replace(self._result(space.model, p, Verdict.UNKNOWN, space, trace=space.trace_to(i),
                                        reason=words), stop=model_error(words))
        return replace(self._result(space.model, p, Verdict.UNKNOWN, space, reason=f"{INCOMPLETE}: {space.reason}"),
                       stop=space.stop)

    def _state_claim(self, space: StateSpace, p: Property, k: int) -> CheckResult:
        if k in space.watch_errors:
            at, message = space.watch_errors[k]
            words = f"model error evaluating the claim: {message} (in the state the trace reaches)"
            return replace(self._result(space.model, p, Verdict.UNKNOWN, space, trace=space.trace_to(at),
                                        reason=words), stop=model_error(words))
        i = space.watch[k]
        if isinstance(p, Reachable):
            if i is not None and p.choice:
                trace = moves.with_move(layout(space.model), space.trace_to(i), p.action, p.choice)
                return self._result(space.model, p, Verdict.HOLDS, space, trace=trace, reason="a witness makes the move")
            if i is not None:
                return self._result(space.model, p, Verdict.HOLDS, space, trace=space.trace_to(i),
                                    reason="a witness reaches it")
            if space.complete:
                what = "the move is never possible" if p.choice else "unreachable"
                return self._result(space.model, p, Verdict.VIOLATED, space,
                                    reason=f"{what} in the complete state space of these parameters")
            return self._incomplete(space, p)
        return self._violation_or_hold(space, p, i)

    def _action_claim(self, space: StateSpace, p: Reachable, actions: set[int]) -> CheckResult:
        hits = [h for a in actions if (h := space.fired.get(a)) is not None]
        if hits:
            rank = getattr(space, "rank", {})         # the compact store names states by value
            i, label, target = min(hits, key=lambda h: (rank.get(h[0], h[0]), space.labels.items[h[1]][0]))
            return self._result(space.model, p, Verdict.HOLDS, space, trace=space.trace_through(i, label, target),
                                reason="a witness fires it")
        if space.complete:
            return self._result(space.model, p, Verdict.VIOLATED, space,
                                reason="it never fires in the complete state space of these parameters")
        return self._incomplete(space, p)

    def _violation_or_hold(self, space: StateSpace, p: Property, i: int | None) -> CheckResult:
        if i is not None:
            return self._result(space.model, p, Verdict.VIOLATED, space, trace=space.trace_to(i))
        if space.complete:
            return self._result(space.model, p, Verdict.HOLDS, space)
        return self._incomplete(space, p)

    def _from(self, space: StateSpace, p: Property, verdict: Verdict | None, trace: Trace | None,
              reason: str) -> CheckResult:
        if verdict is None:
            if not space.complete:
                return self._incomplete(space, p)
            verdict = Verdict.HOLDS
        return self._result(space.model, p, verdict, space, trace=trace, reason=reason)

    @staticmethod
    def _result(model: Model, p: Property, verdict: Verdict, space: StateSpace | None,
                trace: Trace | None = None, reason: str = "") -> CheckResult:
        stats = Stats() if space is None else Stats(len(space), space.transitions, space.seconds)
        return CheckResult(p, verdict, f"{NAME}/python", None if space is None else space.max_depth, stats, trace, reason,
                           model.param_values, model.variant, reductions=() if space is None else space.reductions)


def matches(name: str, wanted: str) -> bool:
    """An action name matches itself; an implicit `end P -> Q` also matches `end P`."""
    return name == wanted or name.split(" -> ")[0] == wanted


def _matching(model: Model, wanted: tuple[str, ...]) -> set[int]:
    return {i for i, a in enumerate(model.actions) if any(matches(a.name, w) for w in wanted)}
