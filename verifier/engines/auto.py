"""``--engine auto``: pick the engine per claim, and say which one decided.

Policy:

- **Free parameters** (a value left open with ``--param NAME=*``): the symbolic
  engine (k-induction, then PDR, then BMC; ranking functions for termination),
  because only it answers for every parameter value. A claim it leaves UNKNOWN
  (no ranking function in the template, a liveness claim it cannot decide, a
  time limit) falls back to explicit search with the free parameters at their
  declared defaults; the result's `params` then show those values, and its
  reason says that it covers only them.
- **Concrete instances**: explicit search first, capped at `explicit_states`
  states (or the budget's own cap). It is exact and fast on small instances
  and gives shortest traces and lassos. For the invariants and reachability
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
from dataclasses import replace

import numpy as np

from verifier.engines.base import Budget, ProgressFn, SearchOptions, report, reporting
from verifier.engines.explicit import INCOMPLETE
from verifier.ir.model import Model
from verifier.ir.props import Invariant, Property, Reachable
from verifier.result import CheckResult, Verdict

EXPLICIT_STATES = 2_000_000     # "small": explicit search finishes within this many states
EXPLICIT_SHARE = 0.75           # of a call's time left under a run deadline: the rest is for random runs and Z3 ...
EXPLICIT_MIN = 2.0              # ... but this much at least (a small model's search finishes within it)
WALK_SECONDS = 5.0              # random runs look for the witnesses a stopped search did not reach
MINE_STATES = 40_000            # states of a stopped search kept for Z3 to mine lemmas from (`symbolic/mined.py`)


class AutoEngine:
    name = "auto"

    def __init__(self, explicit_states: int = EXPLICIT_STATES, strategy: str = "all",
                 search: SearchOptions = SearchOptions()):
        self.explicit_states = explicit_states
        self.strategy = strategy
        self.search = search
        self._stopped: list[tuple[frozenset[str], tuple, str]] = []   # see `_beyond_cap`
        self._explored: dict[tuple, tuple[np.ndarray, dict]] = {}   # states a stopped search saw (and
        # what Z3 mined from them), by `_shape`

    def _explicit(self):
        from verifier.engines.explicit import ExplicitEngine
        return ExplicitEngine(self.search.store, self.search.workers, self.search.scheduler, self.search.por)

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
        """The explicit search alone, as `check` runs it on a concrete model (no symbolic retry);
        skipped (UNKNOWN) for a model that extends one whose search already stopped at the cap."""
        stopped = self._beyond_cap(model)
        if stopped is not None:
            return [replace(_note(CheckResult(p, Verdict.UNKNOWN, "explicit", params=model.param_values,
                                              variant=model.variant), "explicit: skipped"), reason=stopped)
                    for p in properties]
        return [_note(r, "explicit: concrete instance")
                for r in self._explicit().check(model, properties, budget, progress)]

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
            for r in self._explicit().check(instance, retry, budget, progress):
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
        cap = self.explicit_states if budget.max_states is None else min(budget.max_states, self.explicit_states)
        stopped = self._beyond_cap(model)
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
            engine = self._explicit()
            explicit = engine.check(model, rest, _share(replace(budget, max_states=cap), EXPLICIT_SHARE, EXPLICIT_MIN),
                                    progress)
            for r in explicit:
                out[r.property.id] = _note(r, "explicit: concrete instance")
            if self._note_stopped(model, explicit, cap) and engine.searched is not None:
                self._explored[_shape(model)] = engine.searched.sample(MINE_STATES), {}
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

    def _note_stopped(self, model: Model, explicit: list[CheckResult], cap: int) -> bool:
        """Remember a search of `model` that stopped at the state cap or short of it (its share of
        the time, the memory guard) with claims left open, so that neither a monitor product of it nor a second pass over
        its claims (`props.schedule`) starts another."""
        states = max((r.stats.states or 0 for r in explicit), default=0)
        short = next((r.reason.removeprefix(INCOMPLETE).removeprefix(": ") for r in explicit
                      if r.verdict is Verdict.UNKNOWN and r.reason.startswith(INCOMPLETE)), None)
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
        names = {v.name for v in model.variables}
        for base, params, why in self._stopped:
            if params == model.param_values and base <= names:
                return f"an explicit search of the model it extends {why}"
        return None


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
