"""The one interface every engine answers through."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from verifier.ir.model import Model
from verifier.ir.props import Property
from verifier.result import CheckResult


@dataclass(frozen=True)
class Budget:
    """Resource limits; when one is hit the affected claims are UNKNOWN with the reason."""

    max_states: int | None = None
    timeout: float | None = None        # seconds of wall time
    max_depth: int | None = None        # BFS depth, BMC bound or largest k
    max_memory_mb: int | None = None    # resident memory the engine may grow to


@dataclass(frozen=True)
class ProgressInfo:
    states: int
    depth: int
    elapsed: float

    @property
    def rate(self) -> float:
        return self.states / self.elapsed if self.elapsed > 0 else 0.0


ProgressFn = Callable[[ProgressInfo], None]


class Engine(Protocol):
    name: str

    def check(self, model: Model, properties: Sequence[Property], budget: Budget,
              progress: ProgressFn | None = None) -> list[CheckResult]:
        """Decide each claim on `model` (already loaded, maybe with free parameters)."""
        ...
