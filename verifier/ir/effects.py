"""Reading a state after a list of writes: the one place that says what a simultaneous step does.

A step's writes fire as in `semantics.fire`: every right side and index reads the state
before the step, a later write to the same element wins, and a variable with
`overflow: clamp` keeps its nearest bound. `read_after` turns an expression read after
the step into one read before it; the turn change composes its blocks with it and
step claims' monitors read the state after a move with it.
"""
from __future__ import annotations

from collections.abc import Sequence

from verifier.ir.expr import App, Const, Expr, Index, Op, Var, app, eq, map_expr
from verifier.ir.model import Assign, IntType, Model, Overflow


def clamped(model: Model, name: str, value: Expr) -> Expr:
    """`value` as a write to variable `name` stores it (a clamping variable keeps its nearest bound)."""
    var = model.var(name)
    if var.overflow is not Overflow.CLAMP or not isinstance(var.type, IntType):
        return value
    return app(Op.MIN, app(Op.MAX, value, var.type.lo), var.type.hi)


def choose(cond: Expr, then: Expr, otherwise: Expr) -> Expr:
    """`if cond then then else otherwise`, settled at once where `cond` is a literal or both sides agree."""
    if isinstance(cond, Const):
        return then if cond.value else otherwise
    if then == otherwise:
        return then
    return App(Op.ITE, (cond, then, otherwise))


def same_index(a: Expr, b: Expr) -> Expr:
    """`a == b`, a literal where both are literals or both the same expression."""
    if a == b or (isinstance(a, Const) and isinstance(b, Const)):
        return Const(int(a == b or a.value == b.value), is_bool=True)   # type: ignore[union-attr]
    return eq(a, b)


def read_after(model: Model, writes: Sequence[Assign], e: Expr) -> Expr:
    """`e` read in the state after `writes` fire together, as an expression over the state before."""
    scalars: dict[str, Expr] = {}
    indexed: dict[str, list[tuple[Expr, Expr]]] = {}
    for w in writes:
        value = clamped(model, w.target.name, w.value)
        if isinstance(w.target, Var):
            scalars[w.target.name] = value
        else:
            indexed.setdefault(w.target.name, []).append((w.target.index, value))

    def fn(node: Expr) -> Expr | None:
        if isinstance(node, Var) and node.name in scalars:
            return scalars[node.name]
        if isinstance(node, Index):
            where = map_expr(node.index, fn)
            value: Expr = Index(node.name, where, span=node.span)
            for index, written in indexed.get(node.name, []):     # the last write ends outermost: it wins
                value = choose(same_index(where, index), written, value)
            return value
        return None

    return map_expr(e, fn)
