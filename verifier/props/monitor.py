"""Compile ordering patterns and bounded response into monitors.

A monitor is a few boolean/counter variables added to the model and updated
by extra effects on every action, so engines only ever see invariants (the
safety part: `err` never becomes true) and obligations (the liveness part: an
open obligation is not kept pending forever).

Scopes are intervals of the run: `globally` (one interval, never closed),
`before R` (from the start to the first R), `after Q` (from the first Q on),
`between Q and R` (each Q..R), `after-until` (each Q..R, or Q..forever), and
the shortcuts `turn`, `round` and `phase` (each turn, round or visit of a
phase). A transition belongs to an interval when the interval is open before
it and the transition is not the one that closes it. As in Dwyer's catalogue,
`before` and `between` only count intervals that close: their violations are
recorded in `bad` and confirmed when R happens. The shortcut scopes report a
violation at once and check "P must happen" obligations when the interval
closes (a game that ends mid-turn leaves that turn unjudged).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from verifier.ir.expr import FALSE, TRUE, Const, Expr, Index, Local, Op, Var, app, conj, disj, eq, map_expr, neg
from verifier.ir.model import Action, Assign, BoolType, IntType, Modality, Model, Variable, in_phase
from verifier.ir.props import PREV_MARK, BoundedResponse, Event, Invariant, Obligation, Ordering, Property, StepInvariant
from verifier.props.events import occurs, post

MONITOR_PREFIX = "monitor."
PATTERNS = ("absence", "existence", "universality", "precedence", "response", "bounded-existence")
DEFERRED_SCOPES = ("before", "between")
LIVE_SCOPES = ("globally", "after", "after-until")

Occurs = Callable[[Model, Action, Event], Expr]


@dataclass(frozen=True)
class Compiled:
    """A surface claim as engines see it: a product model and its core claims."""

    model: Model
    claims: tuple[Property, ...]
    monitor_vars: tuple[str, ...]


def _mon(name: str, tag: str = "") -> str:
    return MONITOR_PREFIX + tag + name


def _bool_var(name: str, init: Expr | None, tag: str) -> Variable:
    return Variable(_mon(name, tag), BoolType(), init=(init,), implicit=True)


def _scope_events(model: Model, claim: Ordering) -> tuple[Event | None, Event | None, Expr]:
    """(Q, R, open-initially) of the claim's scope."""
    s = claim.scope
    if s == "turn":
        return Event(turn_end=True), Event(turn_end=True), TRUE
    if s == "round":
        return Event(round_end=True), Event(round_end=True), TRUE
    if s == "phase":
        phase = claim.q.enter if claim.q and claim.q.enter else (claim.r.leave if claim.r else None)
        assert phase is not None, "a phase scope names its phase"
        return Event(enter=phase), Event(leave=phase), in_phase(model, phase)
    if s == "globally":
        return None, None, TRUE
    if s == "before":
        return None, claim.r, TRUE
    if s == "after":
        return claim.q, None, FALSE
    return claim.q, claim.r, FALSE


def compile_ordering(model: Model, claim: Ordering, tag: str = "", occurs_of: Occurs = occurs) -> Compiled:
    """`occurs_of(model, action, event)`: whether firing `action` makes `event` happen, as a
    pre-state expression (`events.occurs`; the graph product passes one that names each event
    instead, to read the monitor's update as a function of which events happen)."""
    q_event, r_event, open_init = _scope_events(model, claim)
    pattern, deferred = claim.pattern, claim.scope in DEFERRED_SCOPES
    variables = [_bool_var("open", None, tag), _bool_var("err", FALSE, tag)]
    if deferred:
        variables.append(_bool_var("bad", FALSE, tag))
    if pattern in ("existence", "precedence"):
        variables.append(_bool_var("seen", FALSE, tag))
    if pattern == "response":
        variables.append(_bool_var("pending", FALSE, tag))
    if pattern == "bounded-existence":
        k = claim.bound or 0
        variables.append(Variable(_mon("count", tag), IntType(Const(0), Const(k + 1)), init=(Const(0),),
                                  implicit=True))
    m = {v.name.removeprefix(MONITOR_PREFIX + tag): Var(v.name) for v in variables}

    def effects(action: Action) -> tuple[Assign, ...]:
        p = occurs_of(model, action, claim.p)
        s = occurs_of(model, action, claim.s) if claim.s else FALSE
        q = occurs_of(model, action, q_event) if q_event else FALSE
        r = occurs_of(model, action, r_event) if r_event else FALSE
        inside = conj(m["open"], neg(r))
        closing = conj(m["open"], r)
        if pattern == "absence":
            violation = p
        elif pattern == "universality":
            violation = neg(p)
        elif pattern == "precedence":
            violation = conj(p, neg(m["seen"]), neg(s))
        elif pattern == "bounded-existence":
            violation = conj(p, eq(m["count"], Const(claim.bound or 0)))
        else:
            violation = FALSE
        local_violation = conj(inside, violation)
        close_fail: Expr = FALSE
        if pattern == "existence":
            close_fail = neg(m["seen"])
        elif pattern == "response":
            close_fail = m["pending"]
        if deferred:
            close_fail = disj(close_fail, m["bad"])
        err = disj(m["err"], conj(closing, close_fail),
                   FALSE if deferred else local_violation)
        reopen = conj(q, disj(neg(m["open"]), r)) if q_event else FALSE
        still_open = conj(m["open"], neg(r))
        out = [Assign(m["open"], disj(still_open, reopen)), Assign(m["err"], err)]

        def restart(value_inside: Expr, initial: Expr) -> Expr:
            """Outside an interval (or when one closes) the local state starts afresh."""
            return app(Op.ITE, inside, value_inside, initial)

        if deferred:
            out.append(Assign(m["bad"], restart(disj(m["bad"], violation), FALSE)))
        if pattern == "existence":
            out.append(Assign(m["seen"], restart(disj(m["seen"], p), FALSE)))
        elif pattern == "precedence":
            out.append(Assign(m["seen"], restart(disj(m["seen"], s), FALSE)))
        elif pattern == "response":
            out.append(Assign(m["pending"], restart(conj(disj(m["pending"], p), neg(s)), FALSE)))
        elif pattern == "bounded-existence":
            k1 = Const((claim.bound or 0) + 1)
            bumped = app(Op.MIN, app(Op.ADD, m["count"], app(Op.ITE, p, Const(1), Const(0))), k1)
            out.append(Assign(m["count"], restart(bumped, Const(0))))
        return tuple(out)

    product = _extend(model, variables, effects, conj(model.initially, eq(m["open"], open_init)))
    claims: list[Property] = [Invariant(id=claim.id, statement=claim.statement, expected=claim.expected,
                                        rule=claim.rule, expr=neg(m["err"]), span=claim.span)]
    if pattern in ("existence", "response") and claim.scope in LIVE_SCOPES:
        pending = conj(m["open"], neg(m["seen"]) if pattern == "existence" else m["pending"])
        claims.append(Obligation(id=claim.id, statement=claim.statement, expected=claim.expected,
                                 rule=claim.rule, pending=pending,
                                 fairness=claim.fairness or model.fairness,
                                 strong_fairness=claim.strong_fairness, span=claim.span))
    return Compiled(product, tuple(claims), tuple(v.name for v in variables))


def compile_bounded_response(model: Model, claim: BoundedResponse, tag: str = "",
                             occurs_of: Occurs = occurs) -> Compiled:
    """`c` is 1 after an unanswered trigger and counts on with every transition that does not
    answer it: the response must be one of the `within` transitions after the trigger, so `c`
    reaching `within` + 1 is the error (the counter saturates there). `occurs_of`: as for
    `compile_ordering`."""
    k = claim.within
    counter = Variable(_mon("since", tag), IntType(Const(0), Const(k + 1)), init=(Const(0),), implicit=True)
    c = Var(counter.name)

    def effects(action: Action) -> tuple[Assign, ...]:
        t = occurs_of(model, action, claim.trigger)
        s = occurs_of(model, action, claim.response)
        waiting = app(Op.GT, c, Const(0))
        started = app(Op.ITE, conj(t, neg(s)), Const(1), Const(0))
        value = app(Op.ITE, s, Const(0),
                    app(Op.ITE, waiting, app(Op.MIN, app(Op.ADD, c, Const(1)), Const(k + 1)), started))
        return (Assign(c, value),)

    product = _extend(model, [counter], effects, model.initially)
    inv = Invariant(id=claim.id, statement=claim.statement, expected=claim.expected, rule=claim.rule,
                    expr=app(Op.LE, c, Const(k)), span=claim.span)
    return Compiled(product, (inv,), (counter.name,))


def compile_step(model: Model, claim: StepInvariant, tag: str = "") -> Compiled:
    """`err` is true just after a judged transition after which the claim's expression fails: read
    before the move, its plain variables become their values after it (`post`), `prev:x` becomes x,
    and a choice it reads is the move's (the effect reads the action's choices; a move with other
    `with:` values is not judged). The flag says what the last move did and is not kept: a sticky flag would double
    every state reached after a violation (a claim expected VIOLATED, or several, multiplied the
    product), while "some reachable state has `err`" is the same question."""
    err = _bool_var("err", FALSE, tag)
    e = Var(err.name)
    judged = [Event(action=name) for name in claim.actions]

    def unmark(node: Expr) -> Expr | None:
        if isinstance(node, Var) and node.name.startswith(PREV_MARK):
            return Var(node.name.removeprefix(PREV_MARK), span=node.span)
        if isinstance(node, Index) and node.name.startswith(PREV_MARK):
            return Index(node.name.removeprefix(PREV_MARK), map_expr(node.index, unmark), span=node.span)
        return None

    def effects(action: Action) -> tuple[Assign, ...]:
        taken = disj(*(occurs(model, action, ev) for ev in judged)) if judged else TRUE
        if taken == FALSE:          # not judged: its move has none of the claim's choices to read
            return (Assign(e, FALSE),)
        chosen = [app(Op.EQ, Local(name), Const(value)) for name, value in claim.choice]
        holds = map_expr(post(model, action, claim.expr), unmark)
        return (Assign(e, conj(taken, *chosen, neg(holds))),)

    product = _extend(model, [err], effects, model.initially)
    inv = Invariant(id=claim.id, statement=claim.statement, expected=claim.expected, rule=claim.rule,
                    expr=neg(e), span=claim.span)
    return Compiled(product, (inv,), (err.name,))


def _extend(model: Model, variables: list[Variable], effects, initially: Expr) -> Model:
    actions = tuple(a if a.modality is Modality.MUST_NOT else replace(a, effects=a.effects + effects(a))
                    for a in model.actions)
    return replace(model, variables=model.variables + tuple(variables), actions=actions,
                   initially=initially)


def compile_claim(model: Model, claim: Property, tag: str = "") -> Compiled | None:
    """The monitor product for a surface claim, or None when engines take it as it is.
    `tag` goes into the monitor's variable names (``monitor.<tag>open``) so that several
    monitors can watch one model together."""
    if isinstance(claim, Ordering):
        return compile_ordering(model, claim, tag)
    if isinstance(claim, BoundedResponse):
        return compile_bounded_response(model, claim, tag)
    if isinstance(claim, StepInvariant):
        return compile_step(model, claim, tag)
    return None


def compile_together(model: Model, claims: Sequence[Property]) -> tuple[Model, list[Compiled]]:
    """One product watched by the monitors of all `claims` (each tagged with its claim id),
    and each claim's part (its core claims hold on the shared product: monitors only observe,
    so every run of the model is one run of the product, whatever the other monitors do)."""
    parts = []
    for claim in claims:
        part = compile_claim(model, claim, f"{claim.id}.")
        assert part is not None, "only monitored claims are compiled together"
        parts.append(part)
        model = part.model
    return model, parts

