"""The clocks the run's backstop reads: the machine's monotonic clock, or one a test moves by hand."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on this clock (only differences mean anything)."""
        ...


@dataclass(frozen=True)
class MonotonicClock:
    """`time.monotonic()`: the clock a real run's backstop keeps to."""

    def now(self) -> float:
        return time.monotonic()


@dataclass
class ManualClock:
    """A clock that moves only when a test advances it (no test sleeps against a real clock)."""

    at: float = 0.0

    def now(self) -> float:
        return self.at

    def advance(self, seconds: float) -> None:
        assert seconds >= 0, "a clock does not go back"
        self.at += seconds
