"""The one interface every engine answers through."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from verifier.ir.model import Model
from verifier.ir.props import Property
from verifier.resources import Budget, Stop, StopKind
from verifier.result import CheckResult


def stop_of(status: str | Stop, budget: Budget) -> Stop:
    """Why a search stopped, from the status its loop returned: a limit it checks itself ("depth",
    "states", "found": every watched target seen), or the `Stop` its tick gave."""
    if isinstance(status, Stop):
        return status
    if status == "depth":
        return budget.depth_stop()
    if status == "states":
        return budget.states_stop()
    assert status == "found", f"a search loop's status: {status}"
    return Stop(StopKind.INCOMPLETE, "the search", "stopped once every target was found")


@dataclass(frozen=True)
class SearchOptions:
    """How the explicit search stores and spreads its states (see `explicit.ExplicitEngine`)."""

    store: str | None = None            # "python" (reference) or "compact" (numpy); None: the engine's choice
    workers: int = 1                    # > 1: the compact search partitioned across Dask workers
    scheduler: str | None = None        # a Dask scheduler address (tcp://HOST:PORT) instead of a local cluster
    por: bool = False                   # partial-order reduction of the python store's search (`por.py`)
    dashboard: bool = False             # the local cluster serves Dask's dashboard (`distributed.local_cluster`)


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
