"""What a mutation analysis found: each mutant's outcome and the report (data only, no checking).

Kept apart from `analysis` so that the reports read results without reaching the runner.
"""
from __future__ import annotations

from dataclasses import dataclass

from verifier.mutation.operators import Mutant

STATUSES = ("killed", "survived", "equivalent", "invalid", "unknown")
METHOD = "explicit: same reachable states and labelled transitions (these parameter values)"


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    status: str                 # one of STATUSES
    reason: str = ""            # killed: the first difference; invalid: the error; unknown: why
    seconds: float = 0.0


@dataclass(frozen=True)
class MutationReport:
    model: str
    path: str
    variant: str | None
    params: tuple[tuple[str, int | None], ...]
    properties_path: str | None
    claims: int
    generated: int                              # mutants made (more than checked under --max-mutants)
    outcomes: tuple[Outcome, ...] = ()
    equivalence_method: str = METHOD
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def counts(self) -> dict[str, int]:
        return {s: self.count(s) for s in STATUSES}

    @property
    def score(self) -> float | None:
        """killed / (killed + survived): the share of the decided, non-equivalent mutants noticed."""
        decided = self.count("killed") + self.count("survived")
        return None if decided == 0 else self.count("killed") / decided

    @property
    def survivors(self) -> tuple[Outcome, ...]:
        return tuple(o for o in self.outcomes if o.status == "survived")
