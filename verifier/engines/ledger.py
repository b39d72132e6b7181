"""One reading's ledger: the complete searches its engines ran, kept for the passes over the same
states that follow (the consistency analyses, vacuity, mutation's equivalence digest), and the results
decided so far (kept when the run's backstop cuts a later step). Made per reading by the runner and
handed explicitly to the engines, the analyses, vacuity and mutation: plain data, no context
variables and no callbacks (the runner reads it between the portfolio's steps, `Portfolio.steps`)."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from verifier.engines.statespace import StateSpace
from verifier.ir.model import Model
from verifier.result import CheckResult


@dataclass
class Ledger:
    wanted: dict[Model, StateSpace | None] = field(default_factory=dict)   # instantiated models -> kept search
    record: dict[str, CheckResult] | None = None    # where final results go before their engine returns (by claim id)

    @classmethod
    def keeping(cls, models: Iterable[Model]) -> Ledger:
        """A ledger that keeps the complete searches of these (instantiated) models."""
        return cls(dict.fromkeys(models))

    def keep(self, model: Model, space: StateSpace) -> None:
        """Keep `space` as `model`'s search where it is wanted, complete and unreduced (the first one)."""
        if model in self.wanted and self.wanted[model] is None and space.complete and not space.reductions:
            self.wanted[model] = space

    def search_of(self, model: Model) -> StateSpace | None:
        """The complete search of `model` kept here, if any."""
        return self.wanted.get(model)

    def decided(self, results: Iterable[CheckResult]) -> None:
        """Final results an engine hands on before it returns: into `record` where the portfolio
        opened one (the first result of a claim stays)."""
        if self.record is not None:
            for r in results:
                self.record.setdefault(r.property.id, r)
