"""Effort in units that do not depend on the machine (states, depth, Z3 resource units), and the
backstop that is only an outer limit of the whole run (--timeout in wall clock, or the default
deadline in the CPU seconds of the run and its workers)."""
from __future__ import annotations

from dataclasses import dataclass, field

from verifier.resources.clock import HANG_FACTOR, Clock, CpuDeadlineClock, MonotonicClock
from verifier.resources.stop import Stop, StopKind

DEFAULT_OWNER = "the default budget"


@dataclass(frozen=True)
class Backstop:
    """The run's outer limit: it cuts what is still running at `at` on `clock`, and the run then
    says so (`stop`) and exits 3. Effort is never shared out by it."""

    at: float                    # on `clock`
    owner: str                   # the option that set it: "--timeout (600 s)", "the default CPU budget of 600 s"
    clock: Clock = field(default_factory=MonotonicClock, compare=False, repr=False)
    hang: str | None = None      # on a `CpuDeadlineClock`: who set its wall-clock limit against hangs

    @classmethod
    def after(cls, seconds: float, owner: str, clock: Clock | None = None) -> Backstop:
        clock = MonotonicClock() if clock is None else clock
        return cls(clock.now() + seconds, owner, clock)

    @classmethod
    def default_deadline(cls, at: float, seconds: float, clock: Clock) -> Backstop:
        """The default deadline of `seconds`, at `at` on `clock`: CPU seconds of the run and its
        workers on the default deadline's clock (`CpuDeadlineClock`), whose wall-clock limit
        against hangs is named where it is the one that cuts."""
        factor = clock.hang_factor if isinstance(clock, CpuDeadlineClock) else HANG_FACTOR
        return cls(at, default_cpu_owner(seconds), clock,
                   hang=f"the default deadline's wall-clock limit against hangs ({seconds * factor:,.0f} s)")

    def expired(self) -> bool:
        return self.clock.now() >= self.at

    def left(self) -> float:
        """Seconds until it cuts (0 once it has)."""
        return max(0.0, self.at - self.clock.now())

    def cut_by(self) -> str:
        """Who set the limit that cuts (or would cut now): `owner`, or on the default deadline's
        clock, its limit against hangs where the wall clock is the further on."""
        hung = self.hang is not None and isinstance(self.clock, CpuDeadlineClock) and self.clock.hung()
        return self.hang if hung and self.hang is not None else self.owner

    def stop(self) -> Stop:
        owner = self.cut_by()
        return Stop(StopKind.BACKSTOP, owner, f"cut short by {owner}")


def default_cpu_owner(seconds: float) -> str:
    """The default deadline, in the words a user reads."""
    return f"the default CPU budget of {seconds:g} s"


@dataclass(frozen=True)
class Budget:
    """Effort in units that do not depend on the machine; the backstop is only an outer limit."""

    max_states: int | None = None      # states one search may store
    max_depth: int | None = None       # BFS depth, BMC bound, largest k
    rlimit: int | None = None          # Z3 resource units per solver query (z3 `rlimit`), never ms timeouts
    max_memory_mb: int | None = None   # memory the run may grow to (shared by its workers)
    backstop: Backstop | None = None   # the run's outer limit (--timeout / the default deadline)
    owner: str = DEFAULT_OWNER         # whose limits these are, in the user's words ("--max-states", ...)

    def _owner(self, option: str, value: int | None) -> str:
        """`owner`, or where none was given, the option that sets this limit with its value."""
        return f"{option} {value}" if self.owner == DEFAULT_OWNER and value is not None else self.owner

    def states_stop(self, states: int | None = None) -> Stop:
        """A search stopped at its state cap."""
        n = self.max_states if states is None else states
        at = "its state cap" if n is None else f"{n:,} states"
        owner = self._owner("--max-states", self.max_states)
        return Stop(StopKind.STATES, owner, f"the search stopped at {at} ({owner})")

    def depth_stop(self) -> Stop:
        owner = self._owner("--max-depth", self.max_depth)
        return Stop(StopKind.DEPTH, owner, f"depth {self.max_depth} reached ({owner})")

    def rlimit_stop(self, what: str = "Z3") -> Stop:
        owner = self._owner("--rlimit", self.rlimit)
        return Stop(StopKind.RLIMIT, owner, f"{what} ran out of its resource limit ({self.rlimit:,}, {owner})")

    def expired(self) -> bool:
        """Whether the run's backstop has cut (never true without one)."""
        return self.backstop is not None and self.backstop.expired()


@dataclass
class UnitsSpent:
    """Units several steps spend together against one total that the spender sets (one reading's
    claims, their Z3 resource units: `symbolic.engine.reading_total`); made per reading."""

    spent: int = 0
