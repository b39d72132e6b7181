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
from functools import cached_property
from typing import assert_never

from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Param, Quant, QuantKind, Var, apply_op
from verifier.ir.model import Action, BoolType, EnumType, IntType, Modality, Model, Overflow, Type, Variable, type_bounds

State = tuple[int, ...]


class EvalError(Exception):
    """A run-time error of the model (index out of range, division by zero, free parameter)."""


@dataclass(frozen=True)
class Slot:
    var: str
    index: int | None      # the index value (enum index for enum-indexed arrays)
    lo: int
    hi: int
    name: str              # display name: ``hand[1]``, ``marked[red]``, ``phase``


@dataclass(frozen=True)
class Layout:
    """Where each variable lives in a state tuple."""

    model: Model

    @cached_property
    def slots(self) -> tuple[Slot, ...]:
        out = []
        for v in self.model.variables:
            lo, hi = type_bounds(v.type)
            if v.index is None:
                out.append(Slot(v.name, None, lo, hi, v.name))
                continue
            ilo, ihi = type_bounds(v.index)
            for i in range(ilo, ihi + 1):
                out.append(Slot(v.name, i, lo, hi, v.name + v.element_label(i)))
        return tuple(out)

    @cached_property
    def offsets(self) -> dict[str, tuple[int, int, int]]:
        """var name -> (first slot, index lo, number of elements)."""
        out, pos = {}, 0
        for v in self.model.variables:
            out[v.name] = (pos, v.index_lo(), v.size())
            pos += v.size()
        return out

    @cached_property
    def variables(self) -> dict[str, Variable]:
        return {v.name: v for v in self.model.variables}

    def slot_of(self, var: str, index: int | None) -> int:
        first, lo, size = self.offsets[var]
        if index is None:
            return first
        if not lo <= index < lo + size:
            raise EvalError(f"index {index} out of range for {self.error_name(var)}")
        return first + index - lo

    def error_name(self, var: str) -> str:
        """How an index error names array `var`; a sequence or a 2-D array says what its index means."""
        v = self.variables[var]
        if v.seq_length is not None:
            cap = v.size()
            return (f"{var} (a sequence of at most {cap}: index {cap} is a push onto a full one, -1 a pop or "
                    f"top of an empty one, others s[i] past its length)")
        if v.dims:
            n2 = v.size() // (type_bounds(v.dims[0])[1] - type_bounds(v.dims[0])[0] + 1)
            return f"{var} (a 2-D array stored row by row: [i][j] is position i * {n2} + j from its first element)"
        return var

    def display(self, slot: Slot, value: int) -> object:
        t = self.variables[slot.var].type
        if isinstance(t, BoolType):
            return bool(value)
        if isinstance(t, EnumType):
            return t.values[value] if 0 <= value < len(t.values) else value
        return value

    def as_dict(self, state: State) -> dict[str, object]:
        return {s.name: self.display(s, v) for s, v in zip(self.slots, state)}


def layout(model: Model) -> Layout:
    assert model.is_concrete, "instantiate the model before running it"
    return Layout(model)


# ---------------------------------------------------------------- evaluation

def evaluate(lay: Layout, e: Expr, state: State, env: dict[str, int] | None = None) -> int:
    """Value of `e` in `state`; booleans come back as 0/1."""
    env = env or {}
    match e:
        case Const():
            return e.value
        case Var():
            return state[lay.slot_of(e.name, None)]
        case Index():
            return state[lay.slot_of(e.name, evaluate(lay, e.index, state, env))]
        case Local():
            return env[e.name]
        case Param():
            raise EvalError(f"parameter {e.name} has no value")
        case Quant():
            return _evaluate_quant(lay, e, state, env)
        case App():
            return _evaluate_app(lay, e, state, env)
        case _:
            assert_never(e)


def _evaluate_quant(lay: Layout, e: Quant, state: State, env: dict[str, int]) -> int:
    lo, hi = evaluate(lay, e.lo, state, env), evaluate(lay, e.hi, state, env)
    values = [evaluate(lay, e.body, state, {**env, e.var: i}) for i in range(lo, hi + 1)]
    if e.kind is QuantKind.FORALL:
        return int(all(values))
    if e.kind is QuantKind.EXISTS:
        return int(any(values))
    if e.kind is QuantKind.COUNT:
        return sum(1 for v in values if v)
    return sum(values)


def _evaluate_app(lay: Layout, e: App, state: State, env: dict[str, int]) -> int:
    op = e.op
    if op is Op.AND:
        return int(all(evaluate(lay, a, state, env) for a in e.args))
    if op is Op.OR:
        return int(any(evaluate(lay, a, state, env) for a in e.args))
    if op is Op.IMPLIES:
        return int(not evaluate(lay, e.args[0], state, env) or bool(evaluate(lay, e.args[1], state, env)))
    if op is Op.ITE:
        c = evaluate(lay, e.args[0], state, env)
        return evaluate(lay, e.args[1] if c else e.args[2], state, env)
    a = [evaluate(lay, x, state, env) for x in e.args]
    try:
        return apply_op(op, a)
    except ArithmeticError as err:
        raise EvalError(str(err)) from None


def holds(lay: Layout, e: Expr, state: State, env: dict[str, int] | None = None) -> bool:
    return bool(evaluate(lay, e, state, env))


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
    model = lay.model
    if holds(lay, model.end, state):
        return []
    out = []
    for action in model.actions:
        if action.modality is Modality.MUST_NOT:
            continue
        for env in choice_values(lay, action, state):
            if holds(lay, action.guard, state, env):
                out.append(fire(lay, action, state, env))
    return out


def successors(lay: Layout, state: State) -> list[Transition]:
    """The transitions that lead somewhere."""
    return [t for t in transitions(lay, state) if t.target is not None]


def initial_states(lay: Layout) -> list[State]:
    """All initial states, in lexicographic order of the slots left open by `init`."""
    model = lay.model
    per_slot: list[range | tuple[int, ...]] = []
    empty: State = tuple(0 for _ in lay.slots)
    for v in model.variables:
        inits = v.init if len(v.init) == v.size() else v.init * v.size()
        lo, hi = type_bounds(v.type)
        for init in inits:
            if init is None:
                per_slot.append(range(lo, hi + 1))
            else:
                value = evaluate(lay, init, empty)
                if not lo <= value <= hi:
                    raise EvalError(f"initial value {value} of {v.name} outside {lo}..{hi}")
                per_slot.append((value,))
    return [s for s in itertools.product(*per_slot) if holds(lay, model.initially, s)]


def actor_of(lay: Layout, action: Action, state: State, env: dict[str, int]) -> int | None:
    return None if action.actor is None else evaluate(lay, action.actor, state, env)
