"""Concrete semantics of an instantiated model: the reference interpreter.

A state is a tuple of ints, one per *slot* (a scalar variable, or one element
of an array), in the order of `Layout.slots`. This module is deliberately
simple and slow: engines may compile models to faster code, but every trace
they emit is replayed here.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from verifier.ir.evaluate import (
    EvalError,
    Layout,
    Slot,
    State,
    evaluate,
    find_initial_states,
    holds,
    layout,
)
from verifier.ir.expr import Var
from verifier.ir.model import Action, IntType, Modality, Overflow, Type, type_bounds

__all__ = ["EvalError", "Gap", "Layout", "Slot", "State", "Transition", "actor_of", "choice_values", "evaluate",
           "fire", "holds", "initial_states", "iter_transitions", "layout", "successors", "transitions"]

# ---------------------------------------------------------------- transitions

@dataclass(frozen=True)
class Gap:
    """An effect would take a slot out of its range and the variable has no policy."""

    slot: str
    value: int
    lo: int
    hi: int


@dataclass(frozen=True)
class Transition:
    """One way to fire `action` with `choice`: the successor, or the gap that blocks it."""

    action: Action
    choice: tuple[tuple[str, int], ...]
    target: State | None
    gap: Gap | None = None


def choice_values(lay: Layout, action: Action, state: State) -> Iterator[dict[str, int]]:
    """Every assignment of the action's choices, lexicographically."""
    ranges = []
    for c in action.choices:
        lo, hi = _type_range(lay, c.type, state)
        ranges.append(range(lo, hi + 1))
    for combo in itertools.product(*ranges):
        yield dict(zip((c.name for c in action.choices), combo))


def _type_range(lay: Layout, t: Type, state: State) -> tuple[int, int]:
    if isinstance(t, IntType):
        return evaluate(lay, t.lo, state), evaluate(lay, t.hi, state)
    return type_bounds(t)


def fire(lay: Layout, action: Action, state: State, env: dict[str, int]) -> Transition:
    """Apply the action's effects simultaneously (the guard is not checked here)."""
    new = list(state)
    for eff in action.effects:
        idx = None if isinstance(eff.target, Var) else evaluate(lay, eff.target.index, state, env)
        pos = lay.slot_of(eff.target.name, idx)
        value = evaluate(lay, eff.value, state, env)
        slot = lay.slots[pos]
        if not slot.lo <= value <= slot.hi:
            policy = lay.variables[slot.var].overflow
            if policy is Overflow.CLAMP:
                value = min(max(value, slot.lo), slot.hi)
            elif policy is Overflow.FORBID:
                return Transition(action, tuple(env.items()), None)
            else:
                return Transition(action, tuple(env.items()), None, Gap(slot.name, value, slot.lo, slot.hi))
        new[pos] = value
    return Transition(action, tuple(env.items()), tuple(new))


def transitions(lay: Layout, state: State) -> list[Transition]:
    """Every firing whose guard holds, in model order then choice order.

    Includes blocked firings (target None): forbidden by an overflow policy, or a gap.
    Final states (`end`) and `must-not` prohibitions have none.
    """
    return list(iter_transitions(lay, state))


def iter_transitions(lay: Layout, state: State) -> Iterator[Transition]:
    """`transitions`, one at a time: a caller that stops at the one it looks for evaluates no more."""
    model = lay.model
    if holds(lay, model.end, state):
        return
    for action in model.actions:
        if action.modality is Modality.MUST_NOT:
            continue
        for env in choice_values(lay, action, state):
            if holds(lay, action.guard, state, env):
                yield fire(lay, action, state, env)


def successors(lay: Layout, state: State) -> list[Transition]:
    """The transitions that lead somewhere."""
    return [t for t in transitions(lay, state) if t.target is not None]


def initial_states(lay: Layout) -> list[State]:
    """All initial states, in lexicographic order of the slots left open by `init`; a model error
    past the loader's limits (checked there at the parameters' defaults, here at any values)."""
    from verifier.lang.limits import MAX_INITIAL_CANDIDATES, MAX_INITIAL_STATES  # the loader's package: not for --help

    found = find_initial_states(lay, MAX_INITIAL_CANDIDATES, MAX_INITIAL_STATES)
    if found.passed == "candidates":
        raise EvalError(f"more than {MAX_INITIAL_CANDIDATES:,} candidate initial states tested")
    if found.passed == "states":
        raise EvalError(f"more than {MAX_INITIAL_STATES:,} initial states")
    return list(found.states)


def actor_of(lay: Layout, action: Action, state: State, env: dict[str, int]) -> int | None:
    return None if action.actor is None else evaluate(lay, action.actor, state, env)
