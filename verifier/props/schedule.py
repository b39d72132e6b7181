"""The --timeout shared among the claims of a run, in two passes (`runner`).

Without a deadline for the whole run (`Budget.deadline`, which --timeout sets) every
engine call gets the whole budget, and there is one pass. With one, the claims are
checked twice at most: the first pass may use FIRST_PASS of the time left (FIRST_PASS_MIN
at least), the second,
for the claims the first left undecided, the rest. Within a pass each engine call gets
the time left in the pass in proportion to the claims it decides among those the pass
has not reached yet (MIN_SECONDS at least, while the pass has them; the call that
searches the model itself SEARCH_PART of the pass at least), so one hard claim
cannot starve the claims after it, and what an easy call leaves goes to the next. A
call's share is a deadline in its budget, which every engine and step that watches the
clock keeps to, but for an explicit search projected to finish in time (`Budget.finish_by`):
it goes on, as long as the projection holds, since a finished search decides all its
claims. In time is before the pass ends for a call that claims after it in the pass wait
for; for the last call of a pass (the claims left are all its own), before the run's
deadline, as a search stopped at the first pass's end would be started again from nothing
in the second. The run's own deadline and its backstop stay as they are. A call that
would start after its pass has ended is not started (`Pass.over`): its claims are left to
the second pass, if there is one, rather than given no time (an explicit search started
so would also be taken for one that stopped short, and the second pass would not search
again).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from verifier.engines.base import Budget
from verifier.ir.props import Property

FIRST_PASS = 0.6        # of the time left when the claims start ...
FIRST_PASS_MIN = 4.0    # ... or this much (all there is of a shorter --timeout)
MIN_SECONDS = 2.0       # a call's share at least (while the pass has it): less decides next to nothing in Z3
SEARCH_PART = 0.75      # of the pass at least, for the call that searches the model itself for all its claims:
                        # where that search finishes it decides them all (Alice at 6/6/1: 1.9 M states, 17 s)


@dataclass
class Pass:
    """One pass over `claims` claims under `budget`, ending at `end` (time.monotonic(); None:
    no deadline, every call gets the whole budget). `search_part`: the part of the pass at least
    for the call that searches the model itself (the first pass's; the second has its search).
    `clock`: time.monotonic, or a fake one in the tests."""

    budget: Budget
    end: float | None
    claims: int
    search_part: float = 0.0
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)

    def over(self) -> bool:
        """Whether the pass has a deadline and it has passed: a call starting now gets no share."""
        return self.end is not None and self.clock() >= self.end

    def share(self, claims: Sequence[Property], reached: bool = True, at_least: float = 0.0) -> Budget:
        """The budget of one engine call deciding `claims` (a monitor product's claims count once
        per surface claim: they share its id); with `reached` they count as reached (not for a
        first try that checks them again where it leaves them open); `at_least`: the part of
        what is left of the pass the call gets however few its claims."""
        if self.end is None:
            return self.budget
        n = len({c.id for c in claims})
        now = self.clock()
        left = max(0.0, self.end - now)
        last = n >= self.claims
        part = left if last else max(left * n / self.claims, at_least * left, min(MIN_SECONDS, left))
        if reached:
            self.claims = max(0, self.claims - n)
        return replace(self.budget, deadline=min(now + part, self.end),
                       finish_by=self.budget.deadline if last else self.end)


def first_pass(budget: Budget, claims: int, clock: Callable[[], float] = time.monotonic) -> Pass:
    now = clock()
    left = budget.time_left(now)
    if left is None or budget.deadline is None:
        return Pass(budget, None, claims, SEARCH_PART, clock=clock)
    return Pass(budget, now + max(FIRST_PASS * left, min(FIRST_PASS_MIN, left)), claims, SEARCH_PART, clock=clock)


def second_pass(budget: Budget, claims: int, clock: Callable[[], float] = time.monotonic) -> Pass | None:
    """The pass for the claims the first left undecided: None without a deadline (the first had
    the whole budget) or once no time is left."""
    now = clock()
    left = budget.time_left(now)
    if left is None or budget.deadline is None or left <= 0 or not claims:
        return None
    return Pass(budget, now + left, claims, clock=clock)
