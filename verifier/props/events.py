"""Events as expressions over one transition: what happens when an action fires.

`post(model, action, e)` rewrites a state expression so that, read in the state
before `action` fires (with its choice values bound), it gives the value of
`e` in the state after. Events are built from it, so monitors stay plain
guarded-command effects.
"""
from __future__ import annotations

from verifier.ir.effects import read_after
from verifier.ir.expr import FALSE, TRUE, Expr, conj, neg
from verifier.ir.model import Action, ActionKind, Model, in_phase
from verifier.ir.props import Event


def post(model: Model, action: Action, e: Expr) -> Expr:
    """`e` evaluated after `action`, as an expression over the state before it."""
    return read_after(model, action.effects, e)


def occurs(model: Model, action: Action, event: Event) -> Expr:
    """A pre-state expression: does firing `action` make `event` happen?"""
    if event.action is not None:
        return TRUE if action.name == event.action or _base_name(action) == event.action else FALSE
    if event.actions:
        return TRUE if action.name in event.actions else FALSE
    if event.turn_end:
        return TRUE if action.kind is ActionKind.TURN_END else FALSE
    if event.round_end:
        if action.kind is not ActionKind.TURN_END:
            return FALSE
        return model.round_condition()
    if event.enter is not None:
        now = in_phase(model, event.enter)
        return conj(neg(now), post(model, action, now))
    if event.leave is not None:
        now = in_phase(model, event.leave)
        return conj(now, neg(post(model, action, now)))
    assert event.expr is not None
    return post(model, action, event.expr)


def _base_name(action: Action) -> str:
    """`end Draw -> Play` is also an occurrence of `end Draw`."""
    return action.name.split(" -> ")[0]
