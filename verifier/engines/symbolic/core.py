"""What the symbolic methods share: the safety question, their answer, their effort in Z3 resource units."""
from __future__ import annotations

from dataclasses import dataclass, field

import z3

from verifier.engines.symbolic.encode import Encoding, Term, disj
from verifier.engines.symbolic.witness import Path
from verifier.resources.memory import bound_z3


@dataclass
class Safety:
    """Is a state satisfying `target` or `error` reachable?

    `target` is the claim's own bad (or wanted) states; `error` the states where
    the model raises a run-time error (false for most models). Both are
    quantifier-free predicates over `enc.cur`. `extra` lists actions whose
    firing is the target (a reachability claim on an action): a witness path
    gets one more step firing one of them.
    """

    enc: Encoding
    target: Term
    error: Term
    extra: list[int] = field(default_factory=list)

    @property
    def bad(self) -> Term:
        return disj(self.target, self.error)


@dataclass
class Outcome:
    """status: reached (a path to the target; `error` when it ends in a model error instead),
    safe (unreachable, unbounded), bounded (none up to `depth`), unknown (`reason`)."""

    status: str
    method: str
    depth: int | None = None
    path: Path | None = None
    error: bool = False
    invariant: Term | None = None       # PDR: an inductive invariant over enc.cur (and parameters)
    reason: str = ""
    exhausted: bool = False             # safe because no behaviour is longer than `depth`


def rlimit_count() -> int:
    """Z3's resource counter (`rlimit count`, one per context, growing with every query): the same
    queries in the same order count the same on every machine at any load."""
    return int(_COUNTER.statistics().get_key_value("rlimit count"))


class Effort:
    """The Z3 resource units (`rlimit`) a method may still spend, counted on Z3's own counter from
    when it was made (None: unlimited). Never a clock: the same files give the same answers at any
    load."""

    def __init__(self, units: int | None):
        self.units = units
        self.start = rlimit_count() if units is not None else 0

    def left(self) -> int | None:
        if self.units is None:
            return None
        return max(0, self.units - (rlimit_count() - self.start))

    def expired(self) -> bool:
        left = self.left()
        return left is not None and left <= 0

    def rlimit(self, cap: int | None = None) -> int:
        """Units for a Z3 solver's `rlimit` (0: none), `cap` at most."""
        left = self.left()
        if cap is not None:
            left = cap if left is None else min(left, cap)
        if left is None:
            return 0
        return max(1, left)

    def share(self, fraction: float) -> Effort:
        """A part of this effort: at most `fraction` of the units left."""
        left = self.left()
        return Effort(None if left is None else int(left * fraction))


def solver(effort: Effort) -> z3.Solver:
    bound_z3()
    s = z3.Solver()
    units = effort.rlimit()
    if units:
        s.set("rlimit", units)
    return s


def check(s: z3.Solver, effort: Effort, *assumptions: Term) -> z3.CheckSatResult:
    units = effort.rlimit()
    if units:
        s.set("rlimit", units)
    if effort.expired():
        return z3.unknown
    bound_z3()
    return s.check(*assumptions)


_COUNTER = z3.Solver()     # any solver's statistics read the context's counter
