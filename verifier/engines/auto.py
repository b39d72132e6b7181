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
  for the state claims it left open, and the termination and obligation claims
  stay with the python store (they need its edges) under EXPLICIT_STATES. A
  monitor product of a model whose search passed the switch goes to the compact
  store directly. A state with a variable wider than the compact store's 63-bit
  words stays in the python store, and a store the user named (--store, --workers) is used as
  given. The state cap (`_cap`): EXPLICIT_STATES in the python store, COMPACT_STATES
  in the compact one, never past --max-states: the same on every machine. Each verdict
  names the store that decided it (`CheckResult.engine`).
  For the invariants and reachability
  claims it cannot finish, seeded random runs (`walk.py`, `walk.STEPS` steps) look
  for a deeper witness or counterexample (a trace, not necessarily shortest);
  what is still open goes to the symbolic engine, which proves claims without
  enumerating states. Step claims on a model whose search stopped at the cap
  are judged move by move in random runs on the model itself (`check_moves`,
  asked by `props.plan.run_claims`) before their own products. Claims whose expected verdict is PROVED go to the
  symbolic engine first, since only a proof can meet that expectation.
- **No time shares**: every method's effort is counted in states, steps and Z3
  resource units (`Budget`), so the same files give the same verdicts at any load;
  --timeout is only the run's backstop.
- **Beyond the cap**: a model that extends one whose explicit search here
  stopped at the cap (a monitor product: the same parameter values, the same
  variables and more, or the model itself, checked again in the runner's second
  pass) goes to the symbolic engine first and then to random runs; its explicit
  search is skipped, as it could not finish either. The same holds beyond a
  search that stopped short of the cap (the memory guard).

`CheckResult.engine` keeps the name of the method that decided ("explicit/python",
"explicit/compact", "k-induction", "pdr", "bmc", "ranking"); `evidence["auto"]` says why it ran.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from verifier.engines.base import ProgressFn, SearchOptions
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.ledger import Ledger
from verifier.engines.statespace import StateSpace
from verifier.ir.model import Model
from verifier.ir.props import Invariant, Obligation, Property, Reachable, Terminates
from verifier.resources import Budget, StopKind
from verifier.result import CheckResult, Verdict

if TYPE_CHECKING:
    import numpy as np

EXPLICIT_STATES = 2_000_000     # the python store's state cap without a run deadline (and for termination and
                                # obligation claims beside a compact search)
SWITCH_STATES = 250_000         # a python-store search past this many states goes on in the compact store ...
COMPACT_STATES = 16_000_000     # ... capped there at this many (about as many seconds of one core)
MINE_STATES = 40_000            # states of a stopped search kept for Z3 to mine lemmas from (`symbolic/mined.py`)


class AutoEngine:
    name = "auto"

    def __init__(self, explicit_states: int | None = None, strategy: str = "all",
                 search: SearchOptions = SearchOptions(), switch_states: int = SWITCH_STATES,
                 ledger: Ledger | None = None):
        """`explicit_states`: one state cap for every explicit search (None: `_cap`'s, by store and
        budget); `switch_states`: where the python store hands the state claims to the compact one;
        `ledger`: the reading's ledger (its kept searches, its decided results)."""
        self.ledger = Ledger() if ledger is None else ledger
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
                              self.search.dashboard, self.ledger)

    def _symbolic(self, model: Model | None = None):
        from verifier.engines.symbolic import SymbolicEngine
        explored, memo = (None, None) if model is None else self._explored.get(_shape(model), (None, None))
        return SymbolicEngine(self.strategy, explored=explored, memo=memo)

    def check(self, model: Model, properties: Sequence[Property], budget: Budget,
              progress: ProgressFn | None = None) -> list[CheckResult]:
        if not properties:
            return []
        if len({p.id for p in properties}) < len(properties):
            return self._by_position(properties, lambda ps: self.check(model, ps, budget, progress))
        if not model.is_concrete:
            return self._free(model, properties, budget, progress)
        return self._concrete(model, properties, budget, progress)

    def check_explicit(self, model: Model, properties: Sequence[Property], budget: Budget,
                       progress: ProgressFn | None = None) -> list[CheckResult]:
        """The explicit search alone, as `check` runs it on a concrete model (no symbolic retry),
        for the monitor product the runner's monitored claims share (`props.plan`); skipped
        (UNKNOWN) for a model that extends one whose search already stopped at the cap. Where it
        stops short of the runner's cap (the memory guard, the store's own cap),
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
        if not self.stopped_at_cap(model):
            return []
        from verifier.engines import walk
        why = "random runs, each move judged on the model: the search of the shared monitor product stopped"
        return [_note(r, why) for r in walk.check(model, claims)]

    def stopped_at_cap(self, model: Model) -> bool:
        """Whether an explicit search of `model` here stopped short (`props.plan.run_claims`'s
        `together`: its monitored claims then share one product, encoded once for Z3)."""
        return model.is_concrete and self._beyond_cap(model) is not None

    def _by_position(self, properties: Sequence[Property], check) -> list[CheckResult]:
        """`check` on claims that share an id (the safety and liveness parts of one monitored claim):
        each is checked under an id of its own, so that no result stands in for another (and none
        goes to the ledger's decided results under an id of its own)."""
        own = [replace(p, id=f"{p.id}#{i}") for i, p in enumerate(properties)]
        told, self.ledger.on_decided = self.ledger.on_decided, None
        try:
            results = check(own)
        finally:
            self.ledger.on_decided = told
        return [replace(r, property=p) for r, p in zip(results, properties)]

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
            explicit, search = self._search(model, rest, budget, progress)
            out.update((r.property.id, r) for r in explicit)
            if self._note_stopped(model, search.results, search.cap) and search.python is not None:
                self._explored[_shape(model)] = search.python.sample(MINE_STATES), {}
            self.ledger.decided(r for r in out.values() if not _undecided(r))
        else:
            rest = [p for p in properties if _undecided(out[p.id])] if stopped is not None else []
        retry = [p for p in rest if _undecided(out[p.id])]
        walkable = [p for p in retry if _a_run_can_answer(p)]
        if walkable:
            from verifier.engines import walk
            for r in walk.check(model, walkable):
                if not _undecided(r):
                    out[r.property.id] = _note(r, f"random runs: explicit search stopped "
                                                  f"({out[r.property.id].reason})")
                    self.ledger.decided([out[r.property.id]])
            retry = [p for p in retry if _undecided(out[p.id])]
        if retry and stopped is None:
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
                model, state, _capped(budget, compact_cap, "the compact store's"), progress)]
            out.update((r.property.id, r) for r in decided)
        whole = max((r.stats.states or 0 for r in decided), default=0) if decided and _short(decided) is None else 0
        graph_cap = self._graph_cap(budget)
        if graph and whole <= graph_cap:                                # where it can finish
            engine = self._explicit("python")
            graph_budget = _capped(budget, graph_cap, "the python store's")
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

    def _graph_cap(self, budget: Budget) -> int:
        """The state cap of the python search of the termination and obligation claims beside a
        compact one: `explicit_states` or EXPLICIT_STATES, never past --max-states."""
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
        """The state cap of a search in `store`: `explicit_states` where the engine was given one,
        else EXPLICIT_STATES or COMPACT_STATES; never past --max-states."""
        cap = self.explicit_states
        if cap is None:
            cap = COMPACT_STATES if store in ("compact", "compiled") else EXPLICIT_STATES
        return cap if budget.max_states is None else min(cap, budget.max_states)

    def _note_stopped(self, model: Model, explicit: list[CheckResult], cap: int) -> bool:
        """Remember a search of `model` that stopped at the state cap or short of it (the memory
        guard) with claims left open, so that no monitor product of it or later check of
        its claims starts another."""
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


def _capped(budget: Budget, cap: int, owner: str) -> Budget:
    """`budget` with the state cap `cap` this engine chose; where --max-states is not what bounds
    it, a search stopped there says `owner`'s cap, not an option the user did not give."""
    if budget.max_states is not None and budget.max_states <= cap:
        return budget
    return replace(budget, max_states=cap, owner=f"{owner} cap")


def _extended(searches: Sequence[tuple[frozenset[str], tuple, str]], model: Model, exact: bool = False) -> str | None:
    """What is said of the first of `searches` (variable names, parameter values, words) that
    `model` extends: the same parameter values, the same variables and more (a monitor product;
    with `exact`, none more: the model itself)."""
    names = frozenset(v.name for v in model.variables)
    return next((why for base, params, why in searches
                 if params == model.param_values and (base == names if exact else base <= names)), None)


def _short(results: Sequence[CheckResult]) -> str | None:
    """Why the search that gave `results` stopped with claims left open, if a limit stopped it
    (not a model error, which stops every search of the model alike)."""
    return next((r.stop.words for r in results if r.verdict is Verdict.UNKNOWN and r.stop is not None
                 and r.stop.kind is not StopKind.MODEL_ERROR and r.engine.startswith("explicit")), None)


def _fits(model: Model) -> bool:
    from verifier.engines.compact import fits
    return fits(model.instantiate())


def _in_store(r: CheckResult) -> str:
    return " (compact store)" if r.engine == "explicit/compact" else ""


def _shape(model: Model) -> tuple:
    """What a table of `model`'s explored states fits: its variables in order and parameter values."""
    return tuple(v.name for v in model.variables), model.param_values


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
