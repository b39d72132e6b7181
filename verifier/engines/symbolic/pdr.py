"""PDR / IC3 through Z3's Spacer engine, as constrained Horn clauses.

    Init(s, p)                       -> Inv(s, p)
    Inv(s, p) and T(s, s')           -> Inv(s', p)
    Inv(s, p) and Bad(s, p)          -> Err

The free parameters `p` are arguments of `Inv` that no transition changes, so
an answer is for every parameter value at once. "unsat" (Err underivable)
comes with an inductive invariant: Spacer's solution for `Inv`, which together with
the declared ranges (true in every reachable state; stated in the rules) is
inductive. It is checked again here with a plain solver (initiation,
consecution, safety) before it is believed. "sat" comes with a derivation whose ground `Inv` facts are the
states of a counterexample; `witness.concretise` recovers the actions between
them from the concrete semantics.
"""
from __future__ import annotations

from weakref import WeakKeyDictionary

import z3

from verifier.engines.symbolic.core import Effort, Outcome, Safety
from verifier.engines.symbolic.encode import TRUE, Encoding, Term, conj, negate
from verifier.engines.symbolic.units import UNITS_PER_SECOND
from verifier.engines.symbolic.witness import Path
from verifier.resources.memory import bound_z3

FALLBACK_DEPTH = 60
RECHECK_CAP = 60 * UNITS_PER_SECOND     # Z3 resource units at most for re-checking Spacer's invariant
OUT_OF_UNITS = "PDR ran out of its Z3 resource units (rlimit)"


# the constants of an encoding's transition relation (walking it in Python costs seconds at printed sizes)
_RELATION_CONSTANTS: WeakKeyDictionary[Encoding, list[Term]] = WeakKeyDictionary()


def _declared(enc: Encoding, terms: list[Term]) -> list[Term]:
    """The uninterpreted constants of `terms` and of `enc`'s transition relation."""
    if enc not in _RELATION_CONSTANTS:
        _RELATION_CONSTANTS[enc] = _constants([enc.relation])
    found = {t.get_id(): t for t in _constants(terms)}
    for t in _RELATION_CONSTANTS[enc]:
        found.setdefault(t.get_id(), t)
    return list(found.values())


def _constants(terms: list[Term]) -> list[Term]:
    seen: dict[int, Term] = {}
    stack = list(terms)
    visited: set[int] = set()
    while stack:
        t = stack.pop()
        tid = t.get_id()
        if tid in visited:
            continue
        visited.add(tid)
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            seen[tid] = t
            continue
        stack.extend(t.children())
    return list(seen.values())


def pdr(problem: Safety, effort: Effort, assume: Term = TRUE) -> Outcome:
    """`assume`: invariants (over `enc.cur`, initially true) every state in the rules satisfies;
    the invariant returned includes them."""
    enc = problem.enc
    params = list(enc.params.values())
    cur = list(enc.cur.slots) + params
    nxt = list(enc.nxt.slots) + params
    inv = z3.Function("Inv", *([z3.IntSort()] * len(cur)), z3.BoolSort())
    err = z3.Function("Err", z3.BoolSort())
    bound_z3()
    fp = z3.Fixedpoint()
    fp.set(engine="spacer")
    fp.set("xform.slice", False)
    fp.set("xform.inline_linear", False)
    fp.set("xform.inline_eager", False)
    units = effort.rlimit()
    if units:
        fp.set("rlimit", units)
    fp.register_relation(inv, err)
    init, trans, bad = enc.init(enc.cur), enc.relation, problem.bad
    fp.declare_var(*_declared(enc, [init, bad] + cur + nxt))
    fp.rule(inv(*cur), init)
    # the declared ranges hold in every reachable state (effects clamp, or are blocked, at the
    # bounds); stating them in the rules spares Spacer from rediscovering them
    assumed, assumed_next = assume, enc.rename(assume, enc.cur, enc.nxt)
    fp.rule(inv(*nxt), [inv(*cur), enc.ranges(enc.cur), assumed, trans, enc.ranges(enc.nxt), assumed_next])
    fp.rule(err(), [inv(*cur), enc.ranges(enc.cur), assumed, bad])
    try:
        r = fp.query(err())
    except z3.Z3Exception as e:
        text = str(e.value if hasattr(e, "value") else e)
        if "canceled" in text or "resource limit" in text or effort.expired():
            return Outcome("unknown", "pdr", reason=OUT_OF_UNITS)
        return Outcome("unknown", "pdr", reason=f"Spacer failed: {text}")
    if r == z3.unsat:
        invariant = z3.substitute_vars(fp.get_cover_delta(-1, inv), *cur)
        problem_with = _verify(enc, invariant, problem, effort, assumed, assumed_next)
        if problem_with is not None:
            return Outcome("unknown", "pdr", reason=f"internal: Spacer's invariant {problem_with}")
        return Outcome("safe", "pdr", invariant=conj(invariant, assume),
                       reason="an inductive invariant excludes every bad state")
    if r == z3.sat:
        facts = _ground_facts(fp.get_answer(), inv)
        if not facts or any(len(f) != len(cur) for f in facts):
            # no readable derivation (e.g. a model without variables): let BMC produce the path
            from verifier.engines.symbolic.bmc import bmc
            found = bmc(problem, FALLBACK_DEPTH, effort)
            if found.status == "reached":
                found.method = "pdr"
                return found
            return Outcome("unknown", "pdr", reason="internal: Spacer found a violation that BMC could not "
                                                    f"reproduce within {FALLBACK_DEPTH} steps")
        n = len(enc.slots)
        values = dict(zip(enc.params, facts[0][n:]))
        path = Path(values, [tuple(f[:n]) for f in facts], None, list(problem.extra))
        return Outcome("reached", "pdr", len(facts) - 1, path)
    why = fp.reason_unknown()
    if effort.expired() or "resource limit" in why or "canceled" in why:
        return Outcome("unknown", "pdr", reason=OUT_OF_UNITS)
    return Outcome("unknown", "pdr", reason=f"Spacer returned unknown: {why}")


def _verify(enc: Encoding, inv: Term, problem: Safety, effort: Effort, assumed: Term = TRUE,
            assumed_next: Term = TRUE) -> str | None:
    """None when `inv` is initiated, inductive and safe (where `assumed` holds); else what fails."""
    inv_next = enc.rename(inv, enc.cur, enc.nxt)
    ranges, ranges_next = conj(enc.ranges(enc.cur), assumed), conj(enc.ranges(enc.nxt), assumed_next)
    checks = (("does not hold initially", [enc.init(enc.cur), negate(inv)]),
              ("is not inductive", [inv, ranges, enc.relation, ranges_next, negate(inv_next)]),
              ("does not exclude the bad states", [inv, ranges, problem.bad]))
    for what, parts in checks:
        bound_z3()
        s = z3.Solver()
        s.set("rlimit", effort.rlimit(cap=RECHECK_CAP))
        s.add(conj(*parts))
        r = s.check()
        if r == z3.sat:
            return what
        if r == z3.unknown:
            return f"could not be re-checked ({what.split(' ', 1)[1]}): {s.reason_unknown()}"
    return None


def _ground_facts(proof: Term, inv) -> list[list[int]]:
    """The ground `Inv(...)` facts concluded by a Spacer derivation, from the initial state to the
    last. Each ``hyper-res(rule, premises..., conclusion)`` node concludes its last argument;
    premises are derivations themselves, so a post-order walk lists the states in order."""
    out: list[list[int]] = []
    stack: list[tuple[Term, bool]] = [(proof, False)]
    while stack:
        t, done = stack.pop()
        if not z3.is_app(t) or t.num_args() == 0:
            continue
        name = t.decl().name()
        if done:
            fact = t.arg(t.num_args() - 1)
            if z3.is_app(fact) and fact.decl() == inv and all(z3.is_int_value(a) for a in fact.children()):
                out.append([a.as_long() for a in fact.children()])
            continue
        if name in ("asserted", "hypothesis"):
            continue
        if name == "hyper-res":
            stack.append((t, True))
            premises = t.children()[1:-1]
        else:
            premises = t.children()
        for c in reversed(premises):
            stack.append((c, False))
    return out
