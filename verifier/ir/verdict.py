"""`Verdict`: what a claim is found to be, and what a property file expects it to be."""
from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """Ordered from strongest good news to worst; results merge by the worst. A `str` too, so a
    verdict written out (JSON, a property file's `expected:`) is its name."""

    PROVED = "PROVED"                  # holds for every parameter value, unbounded
    HOLDS = "HOLDS"                    # holds in the complete state space of these parameters
    HOLDS_TO_DEPTH = "HOLDS_TO_DEPTH"  # no counterexample up to `depth`; nothing more is claimed
    UNKNOWN = "UNKNOWN"                # a budget or an engine limit was hit; `stop` says which
    VIOLATED = "VIOLATED"              # a counterexample (or, for reachability, exhaustive absence)

    @property
    def rank(self) -> int:
        return list(Verdict).index(self)

    def worst(self, other: Verdict) -> Verdict:
        return self if self.rank >= other.rank else other
