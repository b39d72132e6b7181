"""``--engine auto``: pick the engine per claim, and say which one decided.

Policy:

- **Free parameters** (a value left open with ``--param NAME=*``): the symbolic
  engine (k-induction, then PDR, then BMC; ranking functions for termination),
  because only it answers for every parameter value. A claim it leaves UNKNOWN
  (no ranking function in the template, a liveness claim it cannot decide, a
  time limit) falls back to explicit search with the free parameters at their
  declared defaults; the result's `params` then show those values, and its
  reason says that it covers only them.
- **Concrete instances**: explicit search first (`_search`). It is exact and
  fast on small instances and gives shortest traces and lassos. It runs in the
  python store (the reference) up to SWITCH_STATES states; a search that passes
  them goes on in the compact store (numpy, about 8 times smaller and 3 times
  faster; the same states in the same order, so the same verdicts and traces)
  for the state claims it left open (under a run deadline for no longer than the
  python store would have taken to EXPLICIT_STATES, unless its levels project it to
  finish within the run), and the termination and obligation claims
  stay with the python store (they need its edges) under EXPLICIT_STATES (where
  the compact search finished, under a run deadline, under the python store's
  cap, projected to the states it found: `_graph_cap`). A
  monitor product of a model whose search passed the switch goes to the compact
  store directly. A state with a variable wider than the compact store's 63-bit
  words stays in the python store, and a store the user named (--store, --workers) is used as
  given. The state cap (`_cap`): without a run deadline EXPLICIT_STATES in the
  python store, COMPACT_STATES in the compact one; under one, what the memory
  budget holds of either (the time share bounds the search); never past
  --max-states. Each verdict of the compact store says so (`evidence["store"]`).
  For the invariants and reachability
  claims it cannot finish, seeded random runs (`walk.py`, a few seconds) look
  for a deeper witness or counterexample (a trace, not necessarily shortest);
  what is still open goes to the symbolic engine, which proves claims without
  enumerating states. Step claims on a model whose search stopped at the cap
  are judged move by move in random runs on the model itself (`check_moves`,
  asked by `props.plan.run_claims`) before their own products. Claims whose expected verdict is PROVED go to the
  symbolic engine first, since only a proof can meet that expectation.
- **Under a run deadline** (--timeout; the runner shares it among the calls,
  `props/schedule.py`): the explicit search gets EXPLICIT_SHARE of the call's
  time (EXPLICIT_MIN at least), random runs and Z3 the rest; a liveness claim
  gets no lasso search over a stopped search once that time is spent.
- **Beyond the cap**: a model that extends one whose explicit search here
  stopped at the cap (a monitor product: the same parameter values, the same
  variables and more, or the model itself, checked again in the runner's second
  pass) goes to the symbolic engine first and then to random runs; its explicit
  search is skipped, as it could not finish either. The same holds beyond a
  search that stopped short of the cap (its share of the time, the memory guard).

`CheckResult.engine` keeps the name of the method that decided ("explicit",
"k-induction", "pdr", "bmc", "ranking"); `evidence["auto"]` says why it ran.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from verifier.engines.base import Budget, ProgressFn, SearchOptions, report, reporting
from verifier.engines.explicit import INCOMPLETE, ExplicitEngine
from verifier.engines.memory import memory_limit_bytes
from verifier.engines.statespace import StateSpace
from verifier.ir.model import Model
from verifier.ir.props import Invariant, Obligation, Property, Reachable, Terminates
from verifier.result import CheckResult, Verdict

EXPLICIT_STATES = 2_000_000     # the python store's state cap without a run deadline (and for termination and
                                # obligation claims beside a compact search)
SWITCH_STATES = 250_000         # a python-store search past this many states goes on in the compact store ...
COMPACT_STATES = 16_000_000     # ... capped there at this many without a run deadline (about as many seconds)
PYTHON_BYTES = 400              # a state's memory, at most, in the python store (edges, lasso search) and in the
COMPACT_BYTES = 48              # compact one (levels, table growth): under a run deadline a search's cap is what
                                # the memory budget holds, and its time share bounds it
EXPLICIT_SHARE = 0.75           # of a call's time left under a run deadline: the rest is for random runs and Z3 ...
EXPLICIT_MIN = 2.0              # ... but this much at least (a small model's search finishes within it)
WALK_SECONDS = 5.0              # random runs look for the witnesses a stopped search did not reach
MINE_STATES = 40_000            # states of a stopped search kept for Z3 to mine lemmas from (`symbolic/mined.py`)


class AutoEngine:
    name = "auto"

    def __init__(self, explicit_states: int | None = None, strategy: str = "all",
                 search: SearchOptions = SearchOptions(), switch_states: int = SWITCH_STATES):
        """`explicit_states`: one state cap for every explicit search (None: `_cap`'s, by store and
        budget); `switch_states`: where the python store hands the state claims to the compact one."""
        self.explicit_states = explicit_states
        self.strategy = strategy
        self.search = search
        self.switch_states = switch_states
        self._stopped: list[tuple[frozenset[str], tuple, str]] = []   # see `_beyond_cap`
        self._big: list[tuple[frozenset[str], tuple, str]] = []       # searches that went past the switch
        self._fits: dict[tuple, bool] = {}     # whether a model's state fits the compact store
        self._graph_stopped: list[tuple[frozenset[str], tuple, str]] = []   # python-store searches of the
        # termination and obligation claims beside a compact search, that stopped (see `_concrete`)
        self._explored: dict[tuple, tuple[np.ndarray, dict]] = {}   # states a stopped search saw (and
        # what Z3 mined from them), by `_shape`

    def _explicit(self, store: str) -> ExplicitEngine:
        return ExplicitEngine(store, self.search.workers, self.search.scheduler, self.search.por,
                              self.search.dashboard)

    def _symbolic(self, model: Model | None = None):
        from verifier.engines.symbolic import SymbolicEngine
        explored, memo = (None, None) if model is None else self._explored.get(_shape(model), (None, None))
        return SymbolicEngine(self.strategy, explored=explored, memo=memo)

    def check(self, model: Model, properties: Sequence[Property], budget: Budget,
              progress: ProgressFn | None = None) -> list[CheckResult]:
        if not properties:
            return []
        if len({p.id for p in properties}) < len(properties):
            return _by_position(properties, lambda ps: self.check(model, ps, budget, progress))
        if not model.is_concrete:
            return self._free(model, properties, budget, progress)
        return self._concrete(model, properties, budget, progress)

    def check_explicit(self, model: Model, properties: Sequence[Property], budget: Budget,
                       progress: ProgressFn | None = None) -> list[CheckResult]:
        """The explicit search alone, as `check` runs it on a concrete model (no symbolic retry),
        for the monitor product the runner's monitored claims share (`props.plan`); skipped
        (UNKNOWN) for a model that extends one whose search already stopped at the cap. Where it
        stops short of the runner's cap (its time share, the memory guard, the store's own cap),
        the products of each claim alone, smaller but with less time each, go to the symbolic
        engine first (`_beyond_cap`)."""
        stopped = self._beyond_cap(model)
        if stopped is not None:
            return [replace(_note(CheckResult(p, Verdict.UNKNOWN, "explicit", params=model.param_values,
                                              variant=model.variant), "explicit: skipped"), reason=stopped)
                    for p in properties]
        results, search = self._search(model, properties, budget, progress)
        states = max((r.stats.states or 0 for r in search.results), default=0)
        short = _short(search.results)
        if short is not None and (budget.max_states is None or states < budget.max_states):   # not the runner's cap
            from verifier.props.monitor import MONITOR_PREFIX
            self._stopped.append((frozenset(v.name for v in model.variables if not v.name.startswith(MONITOR_PREFIX)),
                                  model.param_values, f"stopped after {states:,} states of the monitor product its "
                                                      f"claims shared ({short})"))
        return results

    def check_moves(self, model: Model, claims: Sequence[Property], budget: Budget) -> list[CheckResult]:
        """Step claims judged move by move in seeded random runs on `model` itself (no monitor
        product), once an explicit search of `model` here stopped at the state cap (else none:
        their products' searches decide them, with shortest traces); a break is VIOLATED with
        the run as its trace, the rest UNKNOWN."""
        left = budget.time_left()
        if left == 0 or not self.stopped_at_cap(model):
            return []
        from verifier.engines import walk
        why = "random runs, each move judged on the model: the search of the shared monitor product stopped"
        return [_note(r, why) for r in walk.check(model, claims, WALK_SECONDS if left is None else
                                                  min(WALK_SECONDS, left / 4))]

    def stopped_at_cap(self, model: Model) -> bool:
        """Whether an explicit search of `model` here stopped short (`props.plan.run_claims`'s
        `together`: its monitored claims then share one product, encoded once for Z3)."""
        return model.is_concrete and self._beyond_cap(model) is not None

    # ---- free parameters: symbolic, then explicit at the defaults
    def _free(self, model, properties, budget, progress) -> list[CheckResult]:
        free = [n for n, v in model.param_values if v is None]
        first = self._symbolic().check(model, properties, budget, progress)
        out = {r.property.id: _note(r, f"symbolic: {', '.join(free)} free") for r in first}
        retry = [p for p in properties if _undecided(out[p.id])]
        if retry:
            defaults = {p.name: p.default for p in model.params if p.name in free}
            instance = model.instantiate(defaults)
            where = ", ".join(f"{k}={v}" for k, v in defaults.items())
            for r in self._explicit(self.search.store or "python").check(instance, retry, budget, progress):
                before = out[r.property.id]
                if r.verdict is Verdict.UNKNOWN:
                    out[r.property.id] = _note(before, f"symbolic, then explicit at {where}: both undecided",
                                               also=f"explicit at {where}: {r.reason}")
                    continue
                reason = (f"{r.reason}; " if r.reason else "") + \
                         f"explicit search at {where} only (symbolic: {before.reason})"
                out[r.property.id] = _note(replace(r, reason=reason),
                                           f"explicit at the defaults {where}: the symbolic engine left it "
                                           f"undecided for every value")
        return [out[p.id] for p in properties]

    # ---- concrete: explicit first (capped), symbolic for what it cannot finish or must prove
    def _concrete(self, model, properties, budget, progress) -> list[CheckResult]:
        stopped = self._beyond_cap(model) or _extended(self._graph_stopped, model, exact=True)
        first = list(properties) if stopped is not None else [p for p in properties
                                                              if p.expected == Verdict.PROVED.value]
        why_first = f"symbolic first: {stopped}" if stopped is not None else "symbolic: the claim expects a proof"
        out: dict[str, CheckResult] = {}
        if first:
            for r in self._symbolic(model).check(model, first, budget, progress):
                if not _undecided(r) or stopped is not None:
                    out[r.property.id] = _note(r, why_first)
        rest = [p for p in properties if p.id not in out]
        if rest:
            explicit, search = self._search(model, rest, _share(budget, EXPLICIT_SHARE, EXPLICIT_MIN), progress)
            out.update((r.property.id, r) for r in explicit)
            if self._note_stopped(model, search.results, search.cap) and search.python is not None:
                self._explored[_shape(model)] = search.python.sample(MINE_STATES), {}
            report(r for r in out.values() if not _undecided(r))
        else:
            rest = [p for p in properties if _undecided(out[p.id])] if stopped is not None else []
        retry = [p for p in rest if _undecided(out[p.id])]
        walkable = [p for p in retry if _a_run_can_answer(p)]
        left = budget.time_left()
        if walkable and left != 0:
            from verifier.engines import walk
            for r in walk.check(model, walkable, WALK_SECONDS if left is None else min(WALK_SECONDS, left / 4)):
                if not _undecided(r):
                    out[r.property.id] = _note(r, f"random runs: explicit search stopped "
                                                  f"({out[r.property.id].reason})")
                    report([out[r.property.id]])
            retry = [p for p in retry if _undecided(out[p.id])]
        if retry and stopped is None and budget.time_left() != 0:   # no Z3 (not even its import) once time is up
            for r in self._symbolic(model).check(model, retry, budget, progress):
                before = out[r.property.id]
                if _undecided(r) and not (r.verdict is Verdict.HOLDS_TO_DEPTH and
                                          before.verdict is Verdict.UNKNOWN):
                    out[r.property.id] = _note(before, "explicit, then symbolic: both undecided",
                                               also=f"symbolic: {r.reason}")
                    continue
                out[r.property.id] = _note(r, f"symbolic: explicit search stopped ({before.reason})")
        return [out[p.id] for p in properties]

    # ---- the explicit search: which store, what cap
    def _search(self, model: Model, claims: Sequence[Property], budget: Budget,
                progress: ProgressFn | None) -> tuple[list[CheckResult], Searched]:
        """The explicit search of `claims` in the store `_store` picks: where it picks neither
        (the user named none, and the model's state fits the compact store), the python store
        first, and once that search passes `switch_states` the state claims it left open go on
        in the compact store; then, with the time it left, the termination and obligation claims
        in the python store under EXPLICIT_STATES (they need its edges), unless the compact
        search found more states than that (the first search's lasso search then stands)."""
        store = self._store(model)
        if store != "probe":
            engine, cap = self._explicit(store), self._cap(store, budget)
            results = [_note(r, f"explicit: concrete instance{_in_store(r)}")
                       for r in engine.check(model, claims, _capped(budget, cap, f"the {store} store's"), progress)]
            return results, Searched(results, cap, engine.searched)
        probe, cap = self._explicit("python"), self._cap("python", budget)
        first = [_note(r, "explicit: concrete instance") for r in
                 probe.check(model, claims, _capped(budget, min(cap, self.switch_states), "the python store's" + (
                     " first-stage" if self.switch_states < cap else "")), progress)]
        space = probe.searched
        if self.switch_states >= cap or space is None or space.complete or space.error is not None \
                or len(space) < self.switch_states:
            return first, Searched(first, min(cap, self.switch_states), space)
        self._big.append((frozenset(v.name for v in model.variables), model.param_values,
                          f"passed {self.switch_states:,} states"))
        out = {r.property.id: r for r in first}
        left = [p for p in claims if _undecided(out[p.id])]
        graph = [p for p in left if isinstance(p, (Terminates, Obligation))]
        state = [p for p in left if p not in graph]
        why = f"explicit, compact store: the python store's search passed {self.switch_states:,} states"
        compact_cap, decided = self._cap("compact", budget), []
        if state:
            decided = [_note(r, why) for r in self._explicit("compact").check(
                model, state, _capped(_as_long_as_python(budget, space), compact_cap, "the compact store's"), progress)]
            out.update((r.property.id, r) for r in decided)
        whole = max((r.stats.states or 0 for r in decided), default=0) if decided and _short(decided) is None else 0
        graph_cap = self._graph_cap(budget, whole)
        if graph and budget.time_left() != 0 and whole <= graph_cap:    # with the time the compact search left,
            engine = self._explicit("python")                           # where it can finish
            graph_budget = replace(_capped(budget, graph_cap, "the python store's"), expected_states=whole or None)
            out.update((r.property.id, _note(r, "explicit: concrete instance (termination and obligations: the "
                                                "python store, whose edges they need)"))
                       for r in engine.check(model, graph, graph_budget, progress))
            if engine.searched is not None:
                space = engine.searched
        elif graph and whole > graph_cap:
            out.update((p.id, _note(out[p.id], "explicit: concrete instance", also=(
                f"no search in the python store, whose edges it needs, goes on: the compact store found "
                f"{whole:,} states, past its cap of {graph_cap:,}"))) for p in graph)
        if graph and (space is None or not space.complete):
            self._graph_stopped.append((frozenset(v.name for v in model.variables), model.param_values,
                                        "stopped" if space is None else
                                        f"stopped after {len(space):,} states ({space.reason})"))
        return [out[p.id] for p in claims], Searched(decided, compact_cap, space)

    def _graph_cap(self, budget: Budget, whole: int) -> int:
        """The state cap of the python search of the termination and obligation claims beside a
        compact one: where that compact search finished (with `whole` states), the python store's
        (`_cap`: under a run deadline what the memory budget holds; the search knows how many
        states it will find, `Budget.expected_states`); else `explicit_states` or EXPLICIT_STATES."""
        if whole:
            return self._cap("python", budget)
        cap = self.explicit_states or EXPLICIT_STATES
        return cap if budget.max_states is None else min(cap, budget.max_states)

    def _store(self, model: Model) -> str:
        """"python", "compact", or "probe" (the python store, then the compact one past
        `switch_states`): the store the user named (--store, --workers) as given; else the python
        store for a model whose state does not fit the compact store, the compact store for one
        that extends (a monitor product) a model whose search here passed the switch."""
        if self.search.store is not None:
            return self.search.store
        shape = (model.name, model.variant, _shape(model))
        if shape not in self._fits:
            self._fits[shape] = _fits(model)
        if not self._fits[shape]:
            return "python"
        return "compact" if _extended(self._big, model) is not None else "probe"

    def _cap(self, store: str, budget: Budget) -> int:
        """The state cap of a search in `store`: `explicit_states` where the engine was given one;
        else, under a run deadline, what the memory budget holds (the time share bounds the
        search), without one EXPLICIT_STATES or COMPACT_STATES; never past --max-states."""
        cap = self.explicit_states
        if cap is None:
            cap = COMPACT_STATES if store in ("compact", "compiled") else EXPLICIT_STATES
            memory = memory_limit_bytes(budget.max_memory_mb) if budget.deadline is not None else None
            if memory is not None:
                cap = max(cap, memory // (COMPACT_BYTES if store in ("compact", "compiled") else PYTHON_BYTES))
        return cap if budget.max_states is None else min(cap, budget.max_states)

    def _note_stopped(self, model: Model, explicit: list[CheckResult], cap: int) -> bool:
        """Remember a search of `model` that stopped at the state cap or short of it (its share of
        the time, the memory guard) with claims left open, so that neither a monitor product of it nor a second pass over
        its claims (`props.schedule`) starts another."""
        states = max((r.stats.states or 0 for r in explicit), default=0)
        short = _short(explicit)
        if states >= cap:
            why = f"stopped at {cap:,} states"
        elif short is not None:
            why = f"stopped after {states:,} states ({short})"
        else:
            return False
        self._stopped.append((frozenset(v.name for v in model.variables), model.param_values, why))
        return True

    def _beyond_cap(self, model: Model) -> str | None:
        """Why an explicit search of `model` cannot finish, when it extends (the same parameter
        values, the same variables and more: a monitor product) a model whose explicit search
        here stopped at its state cap; None otherwise. Only the order of the engines depends on
        it, never a verdict."""
        why = _extended(self._stopped, model)
        return None if why is None else f"an explicit search of the model it extends {why}"


@dataclass
class Searched:
    """What `AutoEngine._search` ran: the results of the search that answered the state claims
    (whether it stopped), its state cap, and the python store's space (for Z3 to mine)."""

    results: list[CheckResult]
    cap: int
    python: StateSpace | None


def _as_long_as_python(budget: Budget, probe: StateSpace) -> Budget:
    """`budget`, under a run deadline, with no more time than the python store would have taken to
    EXPLICIT_STATES at the rate of `probe` (a compact search that cannot finish leaves random runs
    and Z3 the time they had; it goes on past that only while projected to finish by `Budget.finish_by`,
    the run's end)."""
    if budget.deadline is None or probe.seconds <= 0:
        return budget
    seconds = max(0, EXPLICIT_STATES - len(probe)) * probe.seconds / len(probe)
    return replace(budget, deadline=min(budget.deadline, time.monotonic() + seconds))


def _capped(budget: Budget, cap: int, owner: str) -> Budget:
    """`budget` with the state cap `cap` this engine chose; where --max-states is not what bounds
    it, a search stopped there says `owner`'s cap, not an option the user did not give."""
    return replace(budget, max_states=cap,
                   cap_owner=owner if budget.max_states is None or budget.max_states > cap else None)


def _extended(searches: Sequence[tuple[frozenset[str], tuple, str]], model: Model, exact: bool = False) -> str | None:
    """What is said of the first of `searches` (variable names, parameter values, words) that
    `model` extends: the same parameter values, the same variables and more (a monitor product;
    with `exact`, none more: the model itself)."""
    names = frozenset(v.name for v in model.variables)
    return next((why for base, params, why in searches
                 if params == model.param_values and (base == names if exact else base <= names)), None)


def _short(results: Sequence[CheckResult]) -> str | None:
    """Why the search that gave `results` stopped with claims left open, if it did."""
    return next((r.reason.removeprefix(INCOMPLETE).removeprefix(": ") for r in results
                 if r.verdict is Verdict.UNKNOWN and r.reason.startswith(INCOMPLETE)), None)


def _fits(model: Model) -> bool:
    from verifier.engines.compact import fits
    return fits(model.instantiate())


def _in_store(r: CheckResult) -> str:
    store = r.evidence.get("store")
    return "" if not store else " (compact store)" if store == "compact" else f" ({store})"


def _shape(model: Model) -> tuple:
    """What a table of `model`'s explored states fits: its variables in order and parameter values."""
    return tuple(v.name for v in model.variables), model.param_values


def _by_position(properties: Sequence[Property], check) -> list[CheckResult]:
    """`check` on claims that share an id (the safety and liveness parts of one monitored claim):
    each is checked under an id of its own, so that no result stands in for another."""
    own = [replace(p, id=f"{p.id}#{i}") for i, p in enumerate(properties)]
    with reporting(lambda _r: None):          # results under ids of their own: none for the caller
        results = check(own)
    return [replace(r, property=p) for r, p in zip(results, properties)]


def _share(budget: Budget, share: float, least: float) -> Budget:
    """`budget` with `share` of its time left, `least` seconds at least (unchanged without a
    run deadline)."""
    left = budget.time_left()
    if left is None or budget.deadline is None:
        return budget
    return replace(budget, deadline=time.monotonic() + max(share * left, min(least, left)))


def _a_run_can_answer(p: Property) -> bool:
    """Whether a random run can give `p` the verdict it expects (a break of an invariant, a
    witness of a reachability claim); one expected to hold or to be unreachable needs a proof,
    so runs are not spent on it (they stop once every claim they look for is met)."""
    if isinstance(p, Invariant):
        return p.expected in (None, Verdict.VIOLATED.value)
    return isinstance(p, Reachable) and p.expected in (None, Verdict.HOLDS.value)


def _undecided(r: CheckResult) -> bool:
    return r.verdict in (Verdict.UNKNOWN, Verdict.HOLDS_TO_DEPTH)


def _note(r: CheckResult, why: str, also: str | None = None) -> CheckResult:
    evidence = {**r.evidence, "auto": why}
    reason = r.reason if also is None else f"{r.reason}; {also}" if r.reason else also
    return replace(r, evidence=evidence, reason=reason)
