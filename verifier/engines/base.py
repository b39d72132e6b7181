"""The one interface every engine answers through."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from verifier import resources
from verifier.ir.model import Model
from verifier.ir.props import Property
from verifier.resources import Stop, StopKind
from verifier.result import CheckResult


@dataclass(frozen=True)
class Budget(resources.Budget):
    """`resources.Budget` with the wall-clock shares the runner still hands out (`props/schedule.py`);
    these go as the budgets become deterministic (issue 25)."""

    timeout: float | None = None        # seconds of wall time
    deadline: float | None = None       # time.monotonic() by which the whole run ends (--timeout)
    finish_by: float | None = None      # time.monotonic() until which a search projected to finish by then
                                        # may run past `deadline` (`explicit.seconds_to_finish`)
    expected_states: int | None = None  # the states a search is expected to find at most (a monitor product:
                                        # a multiple of its model's), for that projection where its levels give none
    cap_owner: str | None = None        # whose state cap `max_states` is where --max-states did not set it (e.g.
                                        # "the python store's"): the reason a search stopped there names it

    def states_reached(self) -> str:
        """Why a search stopped at `max_states`, naming the option or the cap it stands for."""
        if self.cap_owner is None:
            return f"--max-states {self.max_states} reached"
        return f"{self.cap_owner} state cap ({self.max_states:,}) reached"

    def states_stop(self, states: int | None = None) -> Stop:
        owner = self.cap_owner or f"--max-states {self.max_states}"
        return Stop(StopKind.STATES, owner, self.states_reached())

    def depth_stop(self) -> Stop:
        return Stop(StopKind.DEPTH, f"--max-depth {self.max_depth}", f"--max-depth {self.max_depth} reached")

    def time_left(self, now: float | None = None) -> float | None:
        """Seconds a search started now (time.monotonic(), or `now`) may take: `timeout`, cut by
        what is left of the run's deadline (None: unlimited)."""
        left = None if self.deadline is None else max(0.0, self.deadline - (time.monotonic() if now is None else now))
        if self.timeout is None:
            return left
        return self.timeout if left is None else min(self.timeout, left)


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


_sink: ContextVar[Callable[[CheckResult], None] | None] = ContextVar("turnproof_decided_sink", default=None)


@contextmanager
def reporting(sink: Callable[[CheckResult], None]) -> Iterator[None]:
    """Within the block, the results an engine `report`s go to `sink` before the engine returns,
    so that a run its budget's backstop cuts short in a later step keeps them."""
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)


def report(results: Iterable[CheckResult]) -> None:
    """Hand decided results (final: the engine will return them as they are) to the caller's sink."""
    sink = _sink.get()
    if sink is not None:
        for r in results:
            sink(r)


class Engine(Protocol):
    name: str

    def check(self, model: Model, properties: Sequence[Property], budget: Budget,
              progress: ProgressFn | None = None) -> list[CheckResult]:
        """Decide each claim on `model` (already loaded, maybe with free parameters)."""
        ...
