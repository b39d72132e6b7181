"""What the symbolic methods share: the safety question, their answer, the clock."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from verifier.engines.memory import bound_z3
from verifier.engines.symbolic.encode import Encoding, Term, disj
from verifier.engines.symbolic.witness import Path


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


class Deadline:
    def __init__(self, seconds: float | None):
        self.start = time.perf_counter()
        self.seconds = seconds

    def left(self) -> float | None:
        if self.seconds is None:
            return None
        return max(0.0, self.seconds - (time.perf_counter() - self.start))

    def expired(self) -> bool:
        left = self.left()
        return left is not None and left <= 0.0

    def ms(self, cap: float | None = None) -> int:
        """Milliseconds for a Z3 `timeout` (0: none)."""
        left = self.left()
        if cap is not None:
            left = cap if left is None else min(left, cap)
        if left is None:
            return 0
        return max(1, int(left * 1000))

    def share(self, fraction: float) -> Deadline:
        """A sub-deadline using at most `fraction` of the time left."""
        left = self.left()
        return Deadline(None if left is None else left * fraction)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start


def solver(deadline: Deadline) -> z3.Solver:
    bound_z3()
    s = z3.Solver()
    ms = deadline.ms()
    if ms:
        s.set("timeout", ms)
    return s


def check(s: z3.Solver, deadline: Deadline, *assumptions: Term) -> z3.CheckSatResult:
    ms = deadline.ms()
    if ms:
        s.set("timeout", ms)
    if deadline.expired():
        return z3.unknown
    bound_z3()
    return s.check(*assumptions)
