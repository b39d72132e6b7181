"""One reading's claims decided: the engine the user chose (`make_engine`), the claims grouped by
the parameters they leave free, each group through `plan.claim_steps`, and, with `--printed`, the
claims the printed values left open decided again at the default values (`Portfolio.decide`).

Every step spends the one budget the run was given, in states, steps and Z3 units per claim (no
time shares), under the run's one backstop; what a step decided is kept when a later one is cut.
"""
from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field, replace

from verifier.diagnostics import Diagnostic, UsageError
from verifier.engines.base import Engine, ProgressFn, SearchOptions
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.ledger import Ledger
from verifier.engines.names import ENGINES
from verifier.ir.model import Model
from verifier.ir.props import Property
from verifier.portfolio.auto import AutoEngine
from verifier.portfolio.plan import Step, claim_steps
from verifier.portfolio.stores import Caps, Store, cap_of, words_of
from verifier.resources import Budget, UnitsSpent
from verifier.result import CheckResult, Verdict


def make_engine(name: str, search: SearchOptions = SearchOptions(), ledger: Ledger | None = None) -> Engine:
    """The engine `name`, writing to `ledger` (one per reading) where it searches explicitly."""
    if name == "explicit":
        return ExplicitEngine(search.store, search.workers, search.scheduler, search.por, search.dashboard, ledger)
    if name == "auto":
        return AutoEngine(search=search, ledger=ledger)
    if name in ("symbolic", "bmc", "kind", "pdr"):
        from verifier.engines.symbolic.engine import SymbolicEngine
        return SymbolicEngine(strategy="all" if name == "symbolic" else name, reading=UnitsSpent())
    raise UsageError(Diagnostic(f"unknown engine '{name}'", hint=f"choose one of {', '.join(ENGINES)}"))


@dataclass(frozen=True)
class AtDefaults:
    """A reading at its default values, and its claims loaded there: where `--printed` falls back."""

    model: Model
    claims: list[Property]


@dataclass
class Portfolio:
    """How one reading's claims are decided: its engine, the run's budget, the reading's ledger."""

    engine: Engine
    budget: Budget
    ledger: Ledger
    progress: ProgressFn | None = None
    caps: Caps = field(default_factory=Caps)     # the stores' state caps (tests lower them)

    def decide(self, model: Model, claims: Sequence[Property], into: dict[str, CheckResult],
               at_defaults: AtDefaults | None = None) -> None:
        """Each claim's result into `into` (by id): `steps` to the end."""
        for _step in self.steps(model, claims, into, at_defaults):
            pass

    def steps(self, model: Model, claims: Sequence[Property], into: dict[str, CheckResult],
              at_defaults: AtDefaults | None = None) -> Generator[Step, None, None]:
        """Each claim's result into `into` (by id), one step at a time: after each, what it decided
        is in `into` and what it searched is in the ledger (the runner restarts the analyses beside
        the claims once the ledger holds the model's complete search), and what a cut leaves there is
        kept. With `at_defaults` (`--printed`), a claim left UNKNOWN at `model`'s (printed) values,
        not by a model error (a bug in the model at any values), is decided again at the default
        values; a verdict found there replaces the UNKNOWN and says so (its `params` are the
        defaults, and `evidence["printed"]` why), and a cut of this step keeps every verdict
        decided before it."""
        yield from self._steps(model, claims, into)
        if at_defaults is None:
            return
        open_ids = {c.id for c in claims if into[c.id].verdict is Verdict.UNKNOWN and not into[c.id].model_error}
        again = [c for c in at_defaults.claims if c.id in open_ids]
        if not again:
            return
        decided: dict[str, CheckResult] = {}
        try:
            yield from self._steps(at_defaults.model, again, decided)
        finally:
            for key, r in decided.items():
                if r.verdict is not Verdict.UNKNOWN:
                    into[key] = _at_defaults_note(r, into[key])

    def _steps(self, model: Model, claims: Sequence[Property], into: dict[str, CheckResult]) -> Generator[Step, None, None]:
        budget = effort(self.engine, self.budget, self.caps, model)
        for freed, group in by_free_parameters(model, claims):
            yield from claim_steps(freed, group, self.engine, budget, self.progress, into, self.ledger)


def effort(engine: Engine, budget: Budget, caps: Caps, model: Model) -> Budget:
    """What `engine` may spend on each search, in units: a named explicit engine searches up to its
    store's state cap (the store policy's, `stores.cap_of`) where --max-states does not say less, so
    that a claim it cannot decide stops there, named (`Stop` STATES), never at the memory limit or
    the backstop; `auto` caps each of its searches itself, and the symbolic engines spend Z3 units
    per claim (`--rlimit`, or their default). The compiled store's cap counts the words of `model`'s
    states (it follows --max-memory)."""
    if not isinstance(engine, ExplicitEngine) or budget.max_states is not None:
        return budget
    store = Store(engine.store)
    words = words_of(model.instantiate()) if store is Store.COMPILED and model.is_concrete else 1
    return replace(budget, max_states=cap_of(store, budget, caps, words), owner=f"the {store} store's cap")


def _at_defaults_note(r: CheckResult, printed: CheckResult) -> CheckResult:
    why = printed.stop.words if printed.stop is not None else printed.reason
    note = "left open at the printed values" + (f" ({why})" if why else "") + "; decided at the default values"
    return replace(r, evidence={**r.evidence, "printed": note})


def by_free_parameters(model: Model, props: Sequence[Property]) -> list[tuple[Model, list[Property]]]:
    """The claims grouped by the parameters they leave free (`for_every`), each group with
    the model those parameters are freed in (the claims without any come last)."""
    groups: dict[tuple[str, ...], list[Property]] = {}
    for p in props:
        groups.setdefault(tuple(sorted(p.for_every)), []).append(p)
    return [(model if not names else
             replace(model, param_values=tuple((k, None if k in names else v) for k, v in model.param_values)),
             group) for names, group in sorted(groups.items(), key=lambda item: (not item[0], item[0]))]
