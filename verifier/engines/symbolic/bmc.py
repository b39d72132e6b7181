"""Bounded model checking: unroll the transition relation one step at a time.

At each depth k the solver holds I(s_0) and T(s_0, s_1) ... T(s_{k-1}, s_k);
the target is asked at s_k alone (push/pop), so the first hit is a shortest
path, as in breadth-first search. When no path of length k+1 exists at all,
every behaviour has been seen: the answer is unbounded (`exhausted`).
"""
from __future__ import annotations

import z3

from verifier.engines.symbolic.core import Effort, Outcome, Safety, check, solver
from verifier.engines.symbolic.witness import read_path


class Unroller:
    """An incremental BMC solver that other methods (k-induction's base case) drive step by step."""

    def __init__(self, problem: Safety, effort: Effort):
        self.problem = problem
        self.enc = problem.enc
        self.effort = effort
        self.solver = solver(effort)
        self.solver.add(self.enc.init(self.enc.state(0)))
        self.depth = 0                       # transitions asserted so far
        self.check_error = not z3.is_false(problem.error)

    def probe(self) -> Outcome | None:
        """Ask for the target (then a model error) at the current depth; None when neither is reachable."""
        enc, k = self.enc, self.depth
        for pred, is_error in ((self.problem.target, False), (self.problem.error, True)):
            if is_error and not self.check_error:
                continue
            if z3.is_false(pred):
                continue
            # an assumption literal instead of push/pop keeps Z3's solver in its faster mode
            probe = z3.Bool(f"probe!{'error' if is_error else 'target'}@{k}")
            self.solver.add(z3.Implies(probe, enc.at(pred, enc.state(k))))
            r = check(self.solver, self.effort, probe)
            if r == z3.sat:
                path = read_path(enc, self.solver.model(), k, None if is_error else self.problem.extra)
                return Outcome("reached", "bmc", k, path, error=is_error)
            if r == z3.unknown:
                return Outcome("unknown", "bmc", k - 1 if k else None,
                               reason=self._why_unknown(f"at depth {k}"))
        return None

    def extend(self) -> Outcome | None:
        """Add one transition; an Outcome (safe, exhausted) when no longer path exists."""
        k = self.depth
        self.solver.add(self.enc.transition(k))
        self.depth = k + 1
        r = check(self.solver, self.effort)
        if r == z3.unsat:
            return Outcome("safe", "bmc", k, exhausted=True,
                           reason=f"no behaviour is longer than {k} steps and none of them reaches it")
        if r == z3.unknown:
            return Outcome("unknown", "bmc", k, reason=self._why_unknown(f"extending to depth {k + 1}"))
        return None

    def _why_unknown(self, where: str) -> str:
        if self.effort.expired():
            return f"Z3's resource units (rlimit) ran out {where}"
        return f"Z3 returned unknown {where}: {self.solver.reason_unknown()}"


def bmc(problem: Safety, max_depth: int, effort: Effort) -> Outcome:
    run = Unroller(problem, effort)
    while True:
        found = run.probe()
        if found is not None:
            return found
        if run.depth >= max_depth:
            return Outcome("bounded", "bmc", max_depth)
        done = run.extend()
        if done is not None:
            return done
