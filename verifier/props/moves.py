"""A move with given choice values (`reachable: {action: play, with: {card: 2}}`): the state
predicate "the move can be made here", the test of one firing, and the witness's last step.

An engine that searches states (explicit, symbolic) looks for a reachable state where the
predicate holds, then makes the move there: the witness ends with it. The predicate holds where
one of the named actions is enabled with those values (its other choices free), the game is not
over (every guard says so), and the firing has a successor: each value written to a variable
with `overflow: forbid` is in range (a value out of the range of a variable without a policy is
a gap, which the search reports as a model error). An engine that fires moves (walks,
playouts) tests each firing with `chose`.
"""
from __future__ import annotations

from collections.abc import Sequence

from verifier.ir.expr import App, Const, Expr, Op, Quant, QuantKind, conj, disj, fold, substitute
from verifier.ir.model import Action, Modality, Model, Overflow, type_range
from verifier.semantics import Layout, Transition, successors
from verifier.trace import Trace, build_trace, replay

Choice = tuple[tuple[str, int], ...]


def named(action: Action, wanted: Sequence[str]) -> bool:
    """An action name matches itself; an implicit `end P -> Q` also matches `end P`."""
    return any(action.name == w or action.name.split(" -> ")[0] == w for w in wanted)


def chose(choice: Sequence[tuple[str, int]], wanted: Choice) -> bool:
    """Whether a firing's choice values include the wanted ones."""
    values = dict(choice)
    return all(values.get(name) == value for name, value in wanted)


def fireable(model: Model, wanted: Sequence[str], choice: Choice) -> Expr:
    """A state predicate: some action named in `wanted` can fire here with the `choice` values."""
    return disj(*(_fireable(model, a, choice) for a in model.actions
                  if named(a, wanted) and a.modality is not Modality.MUST_NOT))


def _fireable(model: Model, action: Action, choice: Choice) -> Expr:
    fixed = {name: Const(value) for name, value in choice}
    body = conj(action.guard, *(_in_range(model, a.target.name, a.value) for a in action.effects
                                if model.var(a.target.name).overflow is Overflow.FORBID))
    for c in reversed(action.choices):
        lo, hi = type_range(c.type)
        if c.name in fixed:
            body = conj(_between(fixed[c.name], lo, hi), body)
        else:
            body = Quant(QuantKind.EXISTS, c.name, lo, hi, body)
    return fold(substitute(body, fixed)) if fixed else body


def _between(value: Expr, lo: Expr, hi: Expr) -> Expr:
    return conj(App(Op.LE, (lo, value)), App(Op.LE, (value, hi)))


def _in_range(model: Model, name: str, value: Expr) -> Expr:
    lo, hi = type_range(model.var(name).type)
    return _between(value, lo, hi)


def the_move(lay: Layout, state, wanted: Sequence[str], choice: Choice) -> Transition | None:
    """The first firing of `state` (in model order, then choice order) that is the move, or None."""
    return next((t for t in successors(lay, state) if named(t.action, wanted) and chose(t.choice, choice)), None)


def with_move(lay: Layout, trace: Trace, wanted: Sequence[str], choice: Choice) -> Trace:
    """`trace`, which ends in a state where the move can be made, followed by the move."""
    states = list(replay(lay, trace))
    firings = [(lay.model.action(s.action), s.choice) for s in trace.steps]
    move = the_move(lay, states[-1], wanted, choice)
    assert move is not None and move.target is not None, "the trace ends where the move can be made"
    return build_trace(lay, [*states, move.target], [*firings, (move.action, move.choice)])
