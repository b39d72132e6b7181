"""`must: once`: an obligation discharged once a visit of a phase (Dominion's Clean-up, a draw
step), without a hand-made flag; `must: {once: G}`: one action of the group G, once a visit
(play exactly one of these cards).

The action `a` gets an implicit flag `a_taken` (false initially): its guard gains `not a_taken`
and its effects `a_taken := true`, and every move that leaves one of its phases (`end P`,
`pass turn`, a `next:` back into P) sets the flag false again. So while the phase is visited the
action is a `must` until taken, and is not enabled again before play leaves the phase: the
phase sugar's rule "a phase cannot be left while a must action of it is enabled" then reads
"... until it was taken once". The engines and analyses see a plain `must` action and a
boolean variable. The actions of a group share one flag `G_taken`: taking one disables them all
until play leaves the phase, which cannot be left while one of them is enabled; they stay `may`
actions (one of them is due, not each: the conflict analysis must not see rival musts).
"""
from __future__ import annotations

from dataclasses import replace

from verifier.ir.expr import FALSE, TRUE, Var, conj, neg
from verifier.ir.model import Action, Assign, BoolType, Variable

ONCE = "once"


def flag_name(action_or_group: str) -> str:
    return f"{action_or_group}_taken"


def flag(action: Action) -> Variable:
    """The flag of a `must: once` action, or of its group."""
    group = action.once_group
    doc = (f"{action.name} was taken in this visit of its phase (must: once)" if not group else
           f"an action of group {group} was taken in this visit of its phase (must: {{once: {group}}})")
    return Variable(action.once, BoolType(), init=(FALSE,), implicit=True, span=action.span, doc=doc)


def discharged(action: Action) -> Action:
    """The action enabled only while neither it nor its group was taken in this visit, and marking it taken."""
    taken = Var(action.once)
    return replace(action, guard=conj(neg(taken), action.guard),
                   effects=(*action.effects, Assign(taken, TRUE, span=action.span)))


def clearing(actions: tuple[Action, ...] | list[Action], leaf: str) -> list[Assign]:
    """The effects that leaving the leaf phase adds: the flags of its `must: once` actions and groups go back
    to false."""
    flags = dict.fromkeys(a.once for a in actions if a.once and leaf in a.phase_names)
    return [Assign(Var(name), FALSE) for name in flags]
