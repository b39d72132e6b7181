"""`until: next_turn_of(p)`: a value that lasts until player p's next turn starts.

An effect `x: {value: v, until: next_turn_of(p)}` assigns v and records p in
the companion variable `x_until` (same shape as x, 0..PLAYERS, PLAYERS
meaning "no duration running"). When a turn starts, each element whose
recorded player is the one whose turn starts goes back to its `init` and its
record to PLAYERS (before `on_turn_start`, which still wins; `turn_change` orders the turn change). Any other
assignment to an element ends its duration (the latest effect decides how long
a value lasts). The engines see the companion as an ordinary variable.
"""
from __future__ import annotations

import re
from dataclasses import replace

from verifier.diagnostics import Span
from verifier.ir.expr import App, Const, Expr, Index, Op, Var, eq, pretty
from verifier.ir.model import Assign, IntType, Model, Variable

DURATION_RE = re.compile(r"\bnext_turn_of\s*\(|\bforever\b")     # what a duration (`until:`) is written with


def companion_name(name: str) -> str:
    return f"{name}_until"


def companion(var: Variable, players: int) -> Variable:
    """The variable that records whose next turn ends each element's value."""
    return Variable(companion_name(var.name), IntType(Const(0), Const(players)), var.index,
                    init=(Const(players),) * len(var.init), dims=var.dims, until_of=var.name,
                    doc=f"whose next turn ends the value of {var.name} ({players}: none)", span=var.span)


def lasting(target: Var | Index, value: Expr, player: Expr, span: Span | None = None) -> list[Assign]:
    """`target: {value: value, until: next_turn_of(player)}`."""
    record = Var(companion_name(target.name)) if isinstance(target, Var) else \
        Index(companion_name(target.name), target.index)
    return [Assign(target, value, span=span), Assign(record, player, span=span)]


def endings(model: Model, starting: Expr) -> list[Assign]:
    """At a turn start (`starting` is the player whose turn starts): each element whose duration ends goes
    back to its init, and its record to PLAYERS (no duration running)."""
    out = []
    none = Const(model.players)
    for c in model.variables:
        if c.until_of is None:
            continue
        x = model.var(c.until_of)
        for k, init in enumerate(x.init):
            assert init is not None, "the loader refuses a duration on a variable without an init"
            tx: Var | Index = Var(x.name) if x.index is None else Index(x.name, Const(x.index_lo() + k))
            tc: Var | Index = Var(c.name) if c.index is None else Index(c.name, Const(c.index_lo() + k))
            ends = eq(tc, starting)
            for target, back in ((tx, init), (tc, none)):
                out.append(Assign(target, App(Op.ITE, (ends, back, target))))
    return out


def target_key(target: Var | Index) -> str:
    """How the turn passing's effects are keyed: ``x`` or ``x[3]``."""
    return target.name if isinstance(target, Var) else f"{target.name}[{pretty(target.index)}]"


def cancel_on_assignment(model: Model) -> Model:
    """Every assignment to an element of a variable with durations that sets no duration ends it."""
    lasting_vars = {c.until_of: c.name for c in model.variables if c.until_of is not None}
    if not lasting_vars:
        return model
    none = Const(model.players)

    def fix(effects: tuple[Assign, ...]) -> tuple[Assign, ...]:
        recorded = {(a.target.name, pretty(a.target.index) if isinstance(a.target, Index) else None)
                    for a in effects}
        extra = []
        for a in effects:
            name = lasting_vars.get(a.target.name)
            if name is None:
                continue
            index = a.target.index if isinstance(a.target, Index) else None
            if (name, None if index is None else pretty(index)) not in recorded:
                extra.append(Assign(Var(name) if index is None else Index(name, index), none, span=a.span))
        return effects + tuple(extra)

    return replace(model, actions=tuple(replace(a, effects=fix(a.effects)) for a in model.actions))
