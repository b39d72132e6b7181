"""2-D arrays lowered to flat ones: the engines see ordinary arrays.

`x[i][j]` of an array `per: [D1, D2]` is element (i - lo1) * n2 + (j - lo2) of
a flat array 0..n1*n2-1. An outer index out of its domain lands outside the
flat range (the engines' index error); an inner one is checked here: when it
may leave its domain, the flat index becomes n1*n2 (out of range) instead.
"""
from __future__ import annotations

from verifier.ir.expr import App, Const, Expr, Index, Op, Var, conj, fold
from verifier.ir.model import BoolType, EnumType, IntType, Variable, type_bounds


def dim_bounds(d: IntType | EnumType) -> tuple[int, int]:
    return type_bounds(d)


def flat_size(dims: tuple[IntType | EnumType, ...]) -> int:
    size = 1
    for d in dims:
        lo, hi = dim_bounds(d)
        size *= hi - lo + 1
    return size


def flat_index(var: Variable, outer: Expr, inner: Expr, variables: dict[str, Variable]) -> Expr:
    """The flat position of `var[outer][inner]` (see the module docstring)."""
    (lo1, _), (lo2, hi2) = dim_bounds(var.dims[0]), dim_bounds(var.dims[1])
    n2 = hi2 - lo2 + 1
    flat = fold(App(Op.ADD, (App(Op.MUL, (_shift(outer, lo1), Const(n2))), _shift(inner, lo2))))
    if isinstance(var.dims[1], EnumType) or _within(inner, lo2, hi2, variables):
        return flat
    inside = conj(App(Op.LE, (Const(lo2), inner)), App(Op.LE, (inner, Const(hi2))))
    return App(Op.ITE, (inside, flat, Const(flat_size(var.dims))))


def _shift(e: Expr, lo: int) -> Expr:
    return App(Op.SUB, (e, Const(lo))) if lo else e


def _within(e: Expr, lo: int, hi: int, variables: dict[str, Variable]) -> bool:
    """Whether `e` is certainly in lo..hi (a constant, or a variable or element whose type is)."""
    if isinstance(e, Const):
        return lo <= e.value <= hi
    if isinstance(e, (Var, Index)) and e.name in variables:
        t = variables[e.name].type
        if isinstance(t, (BoolType, EnumType)) or (isinstance(t.lo, Const) and isinstance(t.hi, Const)):
            tlo, thi = type_bounds(t)
            return lo <= tlo and thi <= hi
    return False
