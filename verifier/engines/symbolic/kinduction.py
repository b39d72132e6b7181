"""k-induction with simple-path constraints.

Base case: BMC (`bmc.Unroller`) finds no bad state within k steps. Step case:
no loop-free path s_0 .. s_k of in-range states, all good, has a bad
successor s_{k+1}. Both together prove the claim for every reachable state and
every value of the free parameters (they are symbols shared by all steps, and
the step case starts from any in-range state, not from the initial ones).
The simple-path constraints make the method complete on finite instances: k
never needs to exceed the longest loop-free path.
"""
from __future__ import annotations

import z3

from verifier.engines.symbolic.bmc import Unroller
from verifier.engines.symbolic.core import Effort, Outcome, Safety, check, solver
from verifier.engines.symbolic.encode import TRUE, Term, disj, negate


def kinduction(problem: Safety, max_k: int, effort: Effort, assume: Term = TRUE) -> Outcome:
    """`assume`: invariants (over `enc.cur`) the step case may assume in each of its states."""
    enc = problem.enc
    base = Unroller(problem, effort)
    step = solver(effort)
    tag = lambda i: f"k{i}"   # noqa: E731 - step-case symbols, apart from the base case's
    states = [enc.state(tag(0))]
    step.add(enc.param_constraints(), enc.ranges(states[0]), enc.at(assume, states[0]))
    good = negate(problem.bad)
    for k in range(max_k + 1):
        found = base.probe()
        if found is not None:
            return _as(found, k)
        if k == max_k:
            break
        # step case for k+1: s_0..s_k good, s_{k+1} bad
        s_k = states[k]
        nxt = enc.state(tag(k + 1))
        step.add(enc.at(good, s_k))
        step.add(enc.transition(tag(k), dst=nxt, src=s_k))
        step.add(enc.ranges(nxt), enc.at(assume, nxt))
        for earlier in states:
            step.add(disj(*(a != b for a, b in zip(earlier.slots, nxt.slots))))
        states.append(nxt)
        probe = z3.Bool(f"probe!step@{k + 1}")
        step.add(z3.Implies(probe, enc.at(problem.bad, nxt)))
        r = check(step, effort, probe)
        if r == z3.unsat:
            return Outcome("safe", "k-induction", k + 1,
                           reason=f"{k + 1}-inductive (no bad state within {k} steps, and {k + 1} good "
                                  f"steps always lead to a good one)")
        if r == z3.unknown:
            return Outcome("unknown", "k-induction", k, reason=_unknown(step, effort, f"step case k={k + 1}"))
        done = base.extend()
        if done is not None:
            return _as(done, k)
    return Outcome("bounded", "k-induction", max_k,
                   reason=f"not k-inductive for any k <= {max_k}")


def _as(outcome: Outcome, k: int) -> Outcome:
    outcome.method = "k-induction"     # the base case (a BMC run) is part of the method
    return outcome


def _unknown(s: z3.Solver, effort: Effort, where: str) -> str:
    if effort.expired():
        return f"Z3's resource units (rlimit) ran out in the {where}"
    return f"Z3 returned unknown in the {where}: {s.reason_unknown()}"
