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
  fast on small instances and gives shortest traces and lassos. Its store and
  state cap are the one store policy's (`stores.choose_store`): the python store
  (the reference) up to SWITCH_STATES states, then, for the claims it left open,
  the compiled store, or the compact store where the compiled one cannot hold the
  model; a search expected past the switch (values above the model's defaults:
  `stores.passes_switch`) starts in the compiled store. The termination and obligation claims go along to the compiled store
  (its state graph), not to the compact store: they stay with the python store
  (they need its edges) under PYTHON_STATES; a monitor product of a model whose
  search went on starts in the store where that search ended. Each verdict names
  the store that decided it (`CheckResult.engine`).
  For the invariants and reachability
  claims it cannot finish, seeded random runs (`walk.py`, `walk.STEPS` steps) look
  for a deeper witness or counterexample (a trace, not necessarily shortest);
  what is still open goes to the symbolic engine, which proves claims without
  enumerating states. Step claims on a model whose search stopped at the cap
  are judged move by move in random runs on the model itself (`check_moves`,
  asked by `plan.run_claims`) before their own products. Claims whose expected verdict is PROVED go to the
  symbolic engine first, since only a proof can meet that expectation.
- **A model error** (an index out of range, a pop of an empty sequence) that an explicit
  search meets, with its trace, leaves the claims it did not decide UNKNOWN by that error:
  neither random runs nor Z3 are asked (nor the symbolic engine first for a claim expecting a
  proof, nor for the monitor products of that model, whose own searches still run). The
  model is wrong; the error's trace is what its designer needs, fast.
- **No time shares**: every method's effort is counted in states, steps and Z3
  resource units (`Budget`), so the same files give the same verdicts at any load;
  --timeout is only the run's backstop.
- **Beyond the cap**: a model that extends one whose explicit search here
  stopped at the cap (a monitor product: the same parameter values, the same
  variables and more, or the model itself, checked again in the runner's second
  pass) goes to the symbolic engine first and then to random runs; its explicit
  search is skipped, as it could not finish either. The same holds beyond a
  search that stopped short of the cap (the memory guard).

`CheckResult.engine` keeps the name of the method that decided ("explicit/python", "explicit/compiled",
"explicit/compact", "k-induction", "pdr", "bmc", "ranking"); `evidence["auto"]` says why it ran.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from verifier.engines.base import ProgressFn, SearchOptions
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.ledger import Ledger
from verifier.engines.statespace import StateSpace
from verifier.ir.model import Model
from verifier.ir.props import Invariant, Obligation, Property, Reachable, Terminates
from verifier.portfolio.stores import Caps, Store, StorePlan, cap_of, choose_store
from verifier.props.monitor import MONITOR_PREFIX
from verifier.resources import Budget, Stop, StopKind, UnitsSpent
from verifier.result import CheckResult, Verdict

if TYPE_CHECKING:
    import numpy as np

    from verifier.engines.compiled.search import CompiledSpace
    from verifier.engines.walk import Runs

T = TypeVar("T")
MINE_STATES = 40_000            # states of a stopped search kept for Z3 to mine lemmas from (`symbolic/mined.py`)


class AutoEngine:
    name = "auto"

    def __init__(self, caps: Caps | None = None, strategy: str = "all", search: SearchOptions = SearchOptions(),
                 ledger: Ledger | None = None):
        """`caps`: the stores' state caps and the switch (the store policy's, `stores.Caps`; tests
        lower them); `ledger`: the reading's ledger (its kept searches, its decided results)."""
        self.ledger = Ledger() if ledger is None else ledger
        self.caps = Caps() if caps is None else caps
        self.strategy = strategy
        self.search = search
        self._stopped: list[tuple[frozenset[str], tuple, str]] = []   # see `_beyond_cap`
        self._big: list[tuple[frozenset[str], tuple, tuple[Store, int]]] = []   # searches that went past the
        # python store: the store where each ended, and the states it found there
        self._graph_stopped: list[tuple[frozenset[str], tuple, str]] = []   # python-store searches of the
        # termination and obligation claims beside a compact search, that stopped (see `_concrete`)
        self._erred: list[tuple[frozenset[str], tuple, Stop]] = []   # searches that met a model error (see
        # `_after_error`)
        self._explored: dict[tuple, tuple[np.ndarray, dict]] = {}   # states a stopped search saw (and
        # what Z3 mined from them), by `_shape`
        self.reading_units = UnitsSpent()     # the Z3 units this reading's claims spent together (an engine a reading)
        self._runs: Runs | None = None        # the random runs of the concrete model walked last (`_walk`)

    def _explicit(self, store: Store, at_least: int = 0) -> ExplicitEngine:
        """The explicit engine of `store`; `at_least`: states its search is known to store at least."""
        return ExplicitEngine(store, self.search.workers, self.search.scheduler, self.search.por,
                              self.search.dashboard, self.ledger, at_least)

    def _symbolic(self, model: Model | None = None):
        from verifier.engines.symbolic import SymbolicEngine
        explored, memo = (None, None) if model is None else self._explored.get(_shape(model), (None, None))
        return SymbolicEngine(self.strategy, explored=explored, memo=memo, reading=self.reading_units)

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
        for the monitor product the monitored claims share (`plan.run_claims`); skipped
        (UNKNOWN) for a model that extends one whose search already stopped at the cap. Where it
        stops short of the runner's cap (the memory guard, the store's own cap),
        the products of each claim alone, smaller but with less time each, go to the symbolic
        engine first (`_beyond_cap`)."""
        stopped = self._beyond_cap(model) or self._past_product_cap(model, budget)
        if stopped is not None:
            return [replace(_note(CheckResult(p, Verdict.UNKNOWN, "explicit", params=model.param_values,
                                              variant=model.variant), "explicit: skipped"), reason=stopped)
                    for p in properties]
        results, search = self._search(model, properties, budget, progress)
        states = max((r.stats.states or 0 for r in search.results), default=0)
        short = _short(search.results)
        if short is not None and (budget.max_states is None or states < budget.max_states):   # not the runner's cap
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
        why = "random runs, each move judged on the model: the search of the shared monitor product stopped"
        return [_note(r, why) for r in self._walk(model, claims)]

    def _walk(self, model: Model, claims: Sequence[Property]) -> list[CheckResult]:
        """`claims` checked by the random runs of `model`: those the last check read where it was of
        the same model (`walk.Runs`: the same runs, made once; one model's kept at a time)."""
        from verifier.engines import walk

        if self._runs is None or self._runs.concrete != model.instantiate():
            self._runs = walk.Runs(model)
        return walk.check(model, claims, runs=self._runs)

    def stopped_at_cap(self, model: Model) -> bool:
        """Whether an explicit search of `model` here stopped short (its step claims are then judged
        in random runs: `check_moves`)."""
        return model.is_concrete and self._beyond_cap(model) is not None

    def _by_position(self, properties: Sequence[Property], check) -> list[CheckResult]:
        """`check` on claims that share an id (the safety and liveness parts of one monitored claim):
        each is checked under an id of its own, so that no result stands in for another (and none
        goes to the ledger's decided results under an id of its own)."""
        own = [replace(p, id=f"{p.id}#{i}") for i, p in enumerate(properties)]
        record, self.ledger.record = self.ledger.record, None
        try:
            results = check(own)
        finally:
            self.ledger.record = record
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
            explicit, _searched = self._search(instance, retry, budget, progress)    # the store policy's caps
            for r in explicit:
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
        stopped = self._beyond_cap(model) or _extended(self._graph_stopped, model, exact=True) \
            or self._past_product_cap(model, budget)
        if stopped is not None:
            first = list(properties)
        elif _extended(self._erred, model) is not None:     # the model it extends met a model error: no Z3
            first = []
        else:
            first = [p for p in properties if p.expected == Verdict.PROVED.value]
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
                self.ledger.mines_from(model.instantiate(), *self._explored[_shape(model)])
            self.ledger.decided(r for r in out.values() if not _undecided(r))
            # the backstop stopped the search: no random runs (which hand the ledger what they find) nor Z3 for
            # what it left open, which a run with more time decides in the search, with the search's trace
            if budget.expired():
                return [out[p.id] for p in properties]
            erred = self._after_error(model, explicit)
            if erred is not None:
                out.update((r.property.id, r) for r in erred)
                return [out[p.id] for p in properties]
        else:
            rest = [p for p in properties if _undecided(out[p.id])] if stopped is not None else []
        retry = [p for p in rest if _undecided(out[p.id])]
        walkable = [p for p in retry if _a_run_can_answer(p)]
        if walkable:
            for r in self._walk(model, walkable):
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
        """The explicit search of `claims` in the stages `plan_store` plans: each stage's search that
        reaches its cap hands the claims it left open to the stage `StorePlan.after` names, which
        starts again there. The termination and obligation claims go along to the compiled store
        (its state graph) but not to the compact store; those a later stage did not take go to the
        python store under its own cap (they need its edges), unless the search found more states
        than that (the first search's lasso search then stands)."""
        plan = self.plan_store(model, budget)
        base = _extended(self._big, model)       # a monitor product has at least its model's states
        at_least = 0 if base is None else base[1]
        k, stage = 0, plan.stages[0]
        engine = self._explicit(stage.store, at_least)
        staged = " first-stage" if len(plan.stages) > 1 else ""
        first = f"explicit: concrete instance{{}}{_skipped(plan)}"
        decided = [_note(r, first.format(_in_store(r))) for r in
                   engine.check(model, claims, _capped(budget, stage.cap, f"the {stage.store} store's{staged}",
                                                 self.caps.follows_memory(stage.store, budget)), progress)]
        space: StateSpace | FirstStates | None = engine.searched
        if plan.skipped and engine.searched_compiled is not None:   # what the python stage left out would have stored
            space = FirstStates(engine.searched_compiled, plan.skipped)
        out = {r.property.id: r for r in decided}
        graph = [p for p in claims if isinstance(p, (Terminates, Obligation))]
        graph_asked = True                   # the last stage was asked the graph claims
        reached: Store | None = None         # the store of the last stage the search went on to
        while True:
            nxt = self._next_stage(plan, k, decided, engine.searched if stage.store is Store.PYTHON else None)
            left = [p for p in claims if _undecided(out[p.id])]
            if nxt is None or not left:
                break
            reached = plan.stages[nxt].store
            with_graph = reached is Store.COMPILED   # its state graph decides termination and obligations
            asked = [p for p in left if with_graph or p not in graph]
            if not asked:                    # only graph claims are left, for the python store below
                graph_asked, decided = False, []
                break
            passed, k, stage, graph_asked = stage, nxt, plan.stages[nxt], with_graph
            why = f"explicit, {stage.store} store: the {passed.store} store's search passed {passed.cap:,} states"
            decided = [_note(r, why) for r in self._explicit(stage.store, at_least).check(
                model, asked, _capped(budget, stage.cap, f"the {stage.store} store's",
                                                                   self.caps.follows_memory(stage.store, budget)), progress)]
            out.update((r.property.id, r) for r in decided)
        found = max((r.stats.states or 0 for r in decided), default=0)
        if reached is None and plan.skipped and found >= plan.skipped:    # past where the python stage would have
            reached = stage.store                                         # handed over
        if reached is None:
            return decided, Searched(decided, stage.cap, space)
        self._big.append((frozenset(v.name for v in model.variables), model.param_values, (reached, found)))
        left_graph = [] if graph_asked else [p for p in graph if _undecided(out[p.id])]
        whole = found if k and _short(decided) is None else 0
        graph_cap = cap_of(Store.PYTHON, budget, self.caps)
        if left_graph and whole <= graph_cap:                                # where it can finish
            engine = self._explicit(Store.PYTHON)
            graph_budget = _capped(budget, graph_cap, "the python store's")
            out.update((r.property.id, _note(r, "explicit: concrete instance (termination and obligations: the "
                                                "python store, whose edges they need)"))
                       for r in engine.check(model, left_graph, graph_budget, progress))
            if engine.searched is not None:
                space = engine.searched
        elif left_graph:
            out.update((p.id, _note(out[p.id], "explicit: concrete instance", also=(
                f"no search in the python store, whose edges it needs, goes on: the {stage.store} store found "
                f"{whole:,} states, past its cap of {graph_cap:,}"))) for p in left_graph)
        short = _short([out[p.id] for p in graph])
        if short is not None:
            self._graph_stopped.append((frozenset(v.name for v in model.variables), model.param_values,
                                        f"stopped ({short})"))
        return [out[p.id] for p in claims], Searched(decided, stage.cap, space)

    @staticmethod
    def _next_stage(plan: StorePlan, k: int, results: Sequence[CheckResult], space: StateSpace | None) -> int | None:
        """The stage the search of stage `k` goes on in (`StorePlan.after`), from the python store's
        `space` where stage `k` is the python store's, else from the stage's `results`."""
        if space is not None:
            if space.complete or space.error is not None:
                return None
            return plan.after(k, len(space), space.max_depth)
        states = max((r.stats.states or 0 for r in results), default=0)
        at_cap = any(r.stop is not None and r.stop.kind is StopKind.STATES for r in results)
        return plan.after(k, states, 0) if at_cap else None

    def plan_store(self, model: Model, budget: Budget) -> StorePlan:
        """The store plan of an explicit search of `model` (`stores.choose_store`): the store the
        user named (--store) as given; for a model that extends (a monitor product) one whose
        search here went past the python store, the stages from the store where that search ended,
        capped as a product of a search of that many states (`Caps.for_product`)."""
        named = None if self.search.store is None else Store(self.search.store)
        base = _extended(self._big, model)
        if base is None:
            return choose_store(model, budget, named, None, self.caps)
        store, states = base
        return choose_store(model, budget, named, store, self.caps.for_product(states))

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

    def _after_error(self, model: Model, explicit: list[CheckResult]) -> list[CheckResult] | None:
        """Where an explicit search of `model` met a model error (remembered here, for the monitor
        products of `model`), or the search of a model it extends did: `explicit`, the claims it
        left open UNKNOWN by that error, for neither random runs nor Z3; None otherwise. A model
        error is a bug in the model: its trace is what the user needs, and no verdict past the state
        it reaches is worth the wait (`--engine symbolic` still asks Z3)."""
        own = next((r.stop for r in explicit if r.model_error and r.engine.startswith("explicit")), None)
        if own is not None:
            self._erred.append((frozenset(v.name for v in model.variables), model.param_values, own))
        error = own or _extended(self._erred, model)
        if error is None:
            return None
        why = "explicit: a model error; what the search left open goes neither to random runs nor to Z3"
        return [r if r.verdict is not Verdict.UNKNOWN else _note(r, why) if r.model_error else
                _note(replace(r, stop=error), why, also=f"the search of the model it extends met a {error.words}")
                for r in explicit]

    def _past_product_cap(self, model: Model, budget: Budget) -> str | None:
        """Why an explicit search of a monitor product cannot finish where the model it extends was
        searched here past the python store: a product has at least the states of that model (its
        monitors only observe; with symmetry, at least its orbits), and that many are past the cap
        of the product's plan (under --max-memory, its wider states get fewer). None otherwise."""
        base = next(((names, found) for names, params, (_store, found) in self._big
                     if params == model.param_values and names < frozenset(v.name for v in model.variables)), None)
        if base is None:
            return None
        cap = self.plan_store(model, budget).stages[-1].cap
        if base[1] <= cap:
            return None
        return (f"a monitor product has at least the {base[1]:,} states the search of the model it extends "
                f"found, past the product's cap of {cap:,}")

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
    (whether it stopped), its state cap, and the python store's space (for Z3 to mine), or where
    the plan left the python stage out, the states that stage would have stored."""

    results: list[CheckResult]
    cap: int
    python: StateSpace | FirstStates | None


@dataclass(frozen=True)
class FirstStates:
    """The first `count` states of a compiled search: those the python stage a plan left out
    (`StorePlan.skipped`) would have stored, in the same order (every store finds the same states
    in the same order), so that Z3 mines the same states from them as from that stage."""

    space: CompiledSpace
    count: int

    def sample(self, n: int) -> np.ndarray:
        """As `StateSpace.sample` of the python stage's search: at most `n` of the states spread evenly."""
        from verifier.engines.bfsgen import packing_of
        from verifier.engines.statespace import spread_sample

        lay = self.space.lay
        return spread_sample(packing_of(lay), len(lay.slots), min(self.count, len(self.space)), n, self.space.key)


def _capped(budget: Budget, cap: int, owner: str, by_memory: bool = False) -> Budget:
    """`budget` with the state cap `cap` this engine chose; where --max-states is not what bounds
    it, a search stopped there says `owner`'s cap, not an option the user did not give (with
    `by_memory`, the cap is what --max-memory holds: that option too)."""
    if budget.max_states is not None and budget.max_states <= cap:
        return budget
    held = f" for --max-memory {budget.max_memory_mb}" if by_memory else ""
    return replace(budget, max_states=cap, owner=f"{owner} cap{held}")


def _extended(searches: Sequence[tuple[frozenset[str], tuple, T]], model: Model, exact: bool = False) -> T | None:
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


def _skipped(plan: StorePlan) -> str:
    """What the evidence says of a plan that left the python stage out (`stores.passes_switch`)."""
    if not plan.skipped:
        return ""
    return (f": no python stage, the search expected past its {plan.skipped:,} states (parameter values above "
            f"the model's defaults)")


def _in_store(r: CheckResult) -> str:
    store = r.engine.removeprefix("explicit/")
    return f" ({store} store)" if store in (Store.COMPACT, Store.COMPILED) else ""


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
