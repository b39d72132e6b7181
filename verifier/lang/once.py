"""`must: once`: an obligation discharged once a visit of a phase (Dominion's Clean-up, a draw
step), without a hand-made flag.

The action `a` gets an implicit flag `a_taken` (false initially): its guard gains `not a_taken`
and its effects `a_taken := true`, and every move that leaves one of its phases (`end P`,
`pass turn`, a `next:` back into P) sets the flag false again. So while the phase is visited the
action is a `must` until taken, and is not enabled again before play leaves the phase: the
phase sugar's rule "a phase cannot be left while a must action of it is enabled" then reads
"... until it was taken once". The engines and analyses see a plain `must` action and a
boolean variable.
"""
from __future__ import annotations

from dataclasses import replace

from verifier.ir.expr import FALSE, TRUE, Var, conj, neg
from verifier.ir.model import Action, Assign, BoolType, Variable

ONCE = "once"


def flag_name(action: str) -> str:
    return f"{action}_taken"


def flag(action: Action) -> Variable:
    return Variable(flag_name(action.name), BoolType(), init=(FALSE,), implicit=True, span=action.span,
                    doc=f"{action.name} was taken in this visit of its phase (must: once)")


def discharged(action: Action) -> Action:
    """The action enabled only while not yet taken in this visit, and marking it taken."""
    taken = Var(flag_name(action.name))
    return replace(action, guard=conj(neg(taken), action.guard),
                   effects=(*action.effects, Assign(taken, TRUE, span=action.span)))


def clearing(actions: tuple[Action, ...] | list[Action], leaf: str) -> list[Assign]:
    """The effects that leaving the leaf phase adds: the flags of its `must: once` actions go back to false."""
    return [Assign(Var(flag_name(a.name)), FALSE) for a in actions if a.once and leaf in a.phase_names]
