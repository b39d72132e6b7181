"""Why a claim was left undecided, as data: engines return a `Stop`, nothing parses reason strings."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class StopKind(Enum):
    STATES = "states"             # a state cap (--max-states, a store's cap)
    DEPTH = "depth"               # a depth, BMC bound or largest k
    RLIMIT = "rlimit"             # Z3's resource limit per query
    MEMORY = "memory"             # --max-memory, the machine's memory
    BACKSTOP = "backstop"         # the run's wall-clock outer limit (--timeout, the default deadline)
    SIGNAL = "signal"             # SIGTERM or SIGINT
    MODEL_ERROR = "model-error"   # the model itself failed (an index out of range...): not a budget
    INCOMPLETE = "incomplete"     # the method itself cannot decide this claim (not a budget)

    @property
    def is_budget(self) -> bool:
        """Whether more of some budget could decide the claim (else the model or the method stops it)."""
        return self not in (StopKind.MODEL_ERROR, StopKind.INCOMPLETE, StopKind.SIGNAL)

    @property
    def depends_on_the_machine(self) -> bool:
        """Whether this stop may differ from one run to another of the same files and options."""
        return self in (StopKind.MEMORY, StopKind.BACKSTOP, StopKind.SIGNAL)


@dataclass(frozen=True)
class Stop:
    """A claim left undecided: which limit stopped its engine, who set it, and the sentence a user reads."""

    kind: StopKind
    owner: str      # who set the limit, in the user's words: "--max-states 100000", "the compact store's cap"
    words: str      # "the search stopped at 100,000 states (--max-states 100000)"

    def __str__(self) -> str:
        return self.words


def model_error(words: str) -> Stop:
    """The model itself failed (an index out of range, a full sequence): not a budget."""
    return Stop(StopKind.MODEL_ERROR, "the model", words)
