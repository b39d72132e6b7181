"""Bounded sequences (`type: seq[Card, 0..8]`) lowered to an array and a length variable.

A sequence `s` of capacity N is the array `s` (elements 0..N-1, bottom first)
and the integer variable `s_len` (0..N, clamped). Elements at and above the
length hold the element type's first value, so equal sequences are equal
states. `push(v)` writes s[len] and adds one to the length; `pop` writes the
first value to s[len - 1] and takes one off; `top(s)` is s[len - 1]; `s[i]`
reads element i when 0 <= i < len (else the position N). Pushing onto a full
sequence writes s[N] and popping (or `top` of) an empty one reads or writes
s[-1]: the engines' index error, reported (UNKNOWN, with a trace to the state)
like any index out of range. `push(v) if c` and `pop if c` change the sequence
only where c holds (for effects that cannot be guarded, such as `on_enter`).
The engines see only the array and the length.

An array of sequences (`type: seq[Card, 0..N]` with `per: D`, one sequence per value of D) is a
2-D array `s` (`per: [D, 0..N-1]`, each row one sequence) and the 1-D length array `s_len`
(`per: D`); sequence `s[d]` reads and writes row d. A position outside 0..N-1 of a row (a push
onto a full one, a pop or top of an empty one, `s[d][i]` past its length) is the flat position
past the whole array, never the next row's first element: the engines' index error.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from verifier.diagnostics import Span
from verifier.ir.expr import FALSE, App, Const, Expr, Index, Local, Op, Var, conj, fold, map_expr, pretty, walk
from verifier.ir.model import Assign, BoolType, EnumType, IntType, Model, Overflow, Variable, type_bounds

SEQ_RE = re.compile(r"^\s*seq\s*\[(.*)\]\s*$", re.S)
PUSH_RE = re.compile(r"^\s*push\s*\((.*)\)\s*$", re.S)
POP_RE = re.compile(r"^\s*pop\s*(\(\s*\))?\s*$")
WHEN_RE = re.compile(r"^(\s*(?:push\s*\(.*\)|pop\s*(?:\(\s*\))?))\s+if\s+(.+)$", re.S)   # `pop if c`


def length_name(name: str) -> str:
    return f"{name}_len"


def first_value(t: BoolType | IntType | EnumType) -> Expr:
    """The value an empty position holds: false, the range's lower bound, the enum's first value."""
    if isinstance(t, BoolType):
        return FALSE
    if isinstance(t, EnumType):
        return Const(0, enum=t.name)
    return t.lo


def declare(var: Variable, capacity: int, items: list[Expr | None],
            per: IntType | EnumType | None = None, per_player: bool = False) -> tuple[Variable, Variable]:
    """The array and the length variable of a sequence holding `items` (bottom first) at the start; with
    `per`, of one such sequence per value of `per` (a 2-D array and a length array; `per_player`: `per`
    is the players)."""
    fill = first_value(var.type)
    positions = IntType(Const(0), Const(capacity - 1))
    rows = 1 if per is None else type_bounds(per)[1] - type_bounds(per)[0] + 1
    row = tuple(items) + (fill,) * (capacity - len(items))
    array = Variable(var.name, var.type, positions if per is None else IntType(Const(0), Const(rows * capacity - 1)),
                     init=row * rows, overflow=var.overflow,
                     overflow_rule=var.overflow_rule, reset=var.reset, doc=var.doc, span=var.span,
                     seq_length=length_name(var.name), holds_player=var.holds_player, label=var.label,
                     dims=() if per is None else (per, positions), rows_by_player=per_player)
    length = Variable(length_name(var.name), IntType(Const(0), Const(capacity)), index=per,
                      init=(Const(len(items)),) * rows, overflow=Overflow.CLAMP, reset=var.reset,
                      doc=f"the length of {'each ' if per is not None else ''}sequence {var.name}", span=var.span,
                      by_player=per_player)
    return array, length


def capacity_of(var: Variable) -> int:
    """The most elements one sequence of `var` holds."""
    if var.dims:
        return type_bounds(var.dims[1])[1] + 1
    assert isinstance(var.index, IntType) and isinstance(var.index.hi, Const)
    return var.index.hi.value + 1


def length(var: Variable, row: Expr | None = None) -> Var | Index:
    """`len(s)`; `len(s[row])` of an array of sequences."""
    assert var.seq_length is not None
    return Var(var.seq_length) if row is None else Index(var.seq_length, row)


def position(var: Variable, row: Expr | None, i: Expr) -> Expr:
    """Where position `i` of a sequence lies in the array: `i`; in row `row` of an array of sequences,
    its flat position, or the position past the whole array where `i` is outside 0..N-1."""
    if row is None:
        return i
    n = capacity_of(var)
    if isinstance(i, Const) and 0 <= i.value < n:
        return _flat(var, row, i)
    inside = conj(App(Op.LE, (Const(0), i)), App(Op.LT, (i, Const(n))))
    return App(Op.ITE, (inside, _flat(var, row, i), Const(var.size())))


def _flat(var: Variable, row: Expr, i: Expr) -> Expr:
    """The flat position of position `i` (in 0..N-1) of sequence `row`."""
    lo = type_bounds(var.dims[0])[0]
    return fold(App(Op.ADD, (App(Op.MUL, (App(Op.SUB, (row, Const(lo))) if lo else row, Const(capacity_of(var)))), i)))


def top(var: Variable, span: Span | None = None, row: Expr | None = None) -> Index:
    return Index(var.name, position(var, row, App(Op.SUB, (length(var, row), Const(1)))), span=span)


def element(var: Variable, i: Expr, span: Span | None = None, row: Expr | None = None) -> Index:
    """`s[i]`: element i when 0 <= i < len(s), else position N (out of range); `s[row][i]` likewise in
    that row, else the position past the whole array."""
    inside = conj(App(Op.LE, (Const(0), i)), App(Op.LT, (i, length(var, row))))
    if row is None:
        return Index(var.name, App(Op.ITE, (inside, i, Const(capacity_of(var)))), span=span)
    return Index(var.name, App(Op.ITE, (inside, _flat(var, row, i), Const(var.size()))), span=span)   # i < len <= N


def as_written(model: Model, e: Expr) -> Expr:
    """`e` with its reads of sequences as a model file writes them: `len(s)`, `top(s)` and `s[i]` for the
    length, the top and a checked element, `s[if <inside> then i else N]` (for `pretty`, which writes
    `len(s)` and `top(s)` as they are named here); other reads of the array unchanged."""
    arrays = {v.name: v for v in model.variables if v.seq_length is not None}
    lengths = {v.seq_length: v.name for v in arrays.values()}
    names = model.enum_value_name if model.enums else None

    def fn(node: Expr) -> Expr | None:
        if isinstance(node, Var) and node.name in lengths:
            return Local(f"len({lengths[node.name]})")
        if isinstance(node, Index) and node.name in lengths:
            return Local(f"len({lengths[node.name]}[{pretty(map_expr(node.index, fn), names)}])")
        if not isinstance(node, Index) or node.name not in arrays:
            return None
        var = arrays[node.name]
        if var.dims:
            return _row_as_written(var, node, lambda row: pretty(map_expr(row, fn), names), fn)
        if node == top(var):
            return Local(f"top({var.name})")
        index = node.index
        if isinstance(index, App) and index.op is Op.ITE and index.args[2] == Const(capacity_of(var)):
            return Index(var.name, map_expr(index.args[1], fn))
        return None

    return map_expr(e, fn)


def _row_as_written(var: Variable, node: Index, said: Callable[[Expr], str],
                    fn: Callable[[Expr], Expr | None]) -> Expr | None:
    """A read of one sequence of an array of sequences as written: `top(s[row])`, `s[row][i]`."""
    rows = [n.index for n in walk(node.index) if isinstance(n, Index) and n.name == var.seq_length]
    if not rows:
        return None
    row = rows[0]
    if node in (top(var, row=row), fold(top(var, row=row))):
        return Local(f"top({var.name}[{said(row)}])")
    index = node.index
    if not (isinstance(index, App) and index.op is Op.ITE and isinstance(inside := index.args[0], App)):
        return None
    below = inside.args[-1] if inside.op is Op.AND else inside         # inside: 0 <= i and i < len(s[row])
    if isinstance(below, App) and below.op is Op.LT and node in (element(var, i := below.args[0], row=row),
                                                                  fold(element(var, i, row=row))):
        return Index(f"{var.name}[{said(row)}]", map_expr(i, fn))
    return None


def is_pop_fill(var: Variable, a: Assign) -> bool:
    """Whether `a` is the write a `pop` adds (the element type's first value put back at the top position;
    under `pop if c` too): the lowering's bookkeeping, not the designer's text."""
    if not isinstance(a.target, Index) or a.target.name != var.name:
        return False
    index, value, fill = a.target.index, a.value, first_value(var.type)
    if isinstance(value, App) and value.op is Op.ITE and isinstance(index, App) and index.op is Op.ITE:
        index, value = index.args[1], value.args[1]                   # `pop if c`: the write where c holds
    rows = [n.index for n in walk(index) if isinstance(n, Index) and n.name == var.seq_length]
    return value == fill and Index(var.name, index) == top(var, row=rows[0] if rows and var.dims else None)


def push(var: Variable, value: Expr, span: Span | None = None, when: Expr | None = None,
         row: Expr | None = None) -> list[Assign]:
    """`s: push(v)` (`s[row]: push(v)` of an array of sequences)."""
    n = length(var, row)
    return _only_if(var, [Assign(Index(var.name, position(var, row, n)), value, span=span),
                          Assign(n, App(Op.ADD, (n, Const(1))), span=span)], when)


def pop(var: Variable, span: Span | None = None, when: Expr | None = None, row: Expr | None = None) -> list[Assign]:
    """`s: pop` (`s[row]: pop` of an array of sequences)."""
    n = length(var, row)
    return _only_if(var, [Assign(top(var, row=row), first_value(var.type), span=span),
                          Assign(n, App(Op.SUB, (n, Const(1))), span=span)], when)


def _only_if(var: Variable, effects: list[Assign], when: Expr | None) -> list[Assign]:
    """`push(v) if c` / `pop if c`: where c is false, the array's first element and the length keep their
    values (the length array's first element, for an array of sequences)."""
    if when is None:
        return effects
    out = []
    for a in effects:
        first = Const(type_bounds(var.dims[0])[0]) if var.dims and a.target.name == var.seq_length else Const(0)
        target = a.target if isinstance(a.target, Var) else \
            Index(a.target.name, App(Op.ITE, (when, a.target.index, first)), span=a.target.span)
        kept = a.target if isinstance(a.target, Var) else Index(a.target.name, first)
        out.append(Assign(target, App(Op.ITE, (when, a.value, kept)), span=a.span))
    return out
