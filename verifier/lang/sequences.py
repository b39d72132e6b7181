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
"""
from __future__ import annotations

import re

from verifier.diagnostics import Span
from verifier.ir.expr import FALSE, App, Const, Expr, Index, Local, Op, Var, conj, map_expr
from verifier.ir.model import Assign, BoolType, EnumType, IntType, Model, Overflow, Variable

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


def declare(var: Variable, capacity: int, items: list[Expr | None]) -> tuple[Variable, Variable]:
    """The array and the length variable of a sequence holding `items` (bottom first) at the start."""
    fill = first_value(var.type)
    array = Variable(var.name, var.type, IntType(Const(0), Const(capacity - 1)),
                     init=tuple(items) + (fill,) * (capacity - len(items)), overflow=var.overflow,
                     overflow_rule=var.overflow_rule, reset=var.reset, doc=var.doc, span=var.span,
                     seq_length=length_name(var.name), holds_player=var.holds_player, label=var.label)
    length = Variable(length_name(var.name), IntType(Const(0), Const(capacity)), init=(Const(len(items)),),
                      overflow=Overflow.CLAMP, reset=var.reset, doc=f"the length of sequence {var.name}",
                      span=var.span)
    return array, length


def capacity_of(var: Variable) -> int:
    assert isinstance(var.index, IntType) and isinstance(var.index.hi, Const)
    return var.index.hi.value + 1


def length(var: Variable) -> Var:
    assert var.seq_length is not None
    return Var(var.seq_length)


def top(var: Variable, span: Span | None = None) -> Index:
    return Index(var.name, App(Op.SUB, (length(var), Const(1))), span=span)


def element(var: Variable, i: Expr, span: Span | None = None) -> Index:
    """`s[i]`: element i when 0 <= i < len(s), else position N (out of range)."""
    inside = conj(App(Op.LE, (Const(0), i)), App(Op.LT, (i, length(var))))
    return Index(var.name, App(Op.ITE, (inside, i, Const(capacity_of(var)))), span=span)


def as_written(model: Model, e: Expr) -> Expr:
    """`e` with its reads of sequences as a model file writes them: `len(s)`, `top(s)` and `s[i]` for the
    length, the top and a checked element, `s[if <inside> then i else N]` (for `pretty`, which writes
    `len(s)` and `top(s)` as they are named here); other reads of the array unchanged."""
    arrays = {v.name: v for v in model.variables if v.seq_length is not None}
    lengths = {v.seq_length: v.name for v in arrays.values()}

    def fn(node: Expr) -> Expr | None:
        if isinstance(node, Var) and node.name in lengths:
            return Local(f"len({lengths[node.name]})")
        if not isinstance(node, Index) or node.name not in arrays:
            return None
        var = arrays[node.name]
        if node == top(var):
            return Local(f"top({var.name})")
        index = node.index
        if isinstance(index, App) and index.op is Op.ITE and index.args[2] == Const(capacity_of(var)):
            return Index(var.name, map_expr(index.args[1], fn))
        return None

    return map_expr(e, fn)


def push(var: Variable, value: Expr, span: Span | None = None, when: Expr | None = None) -> list[Assign]:
    n = length(var)
    return _only_if([Assign(Index(var.name, n), value, span=span),
                     Assign(n, App(Op.ADD, (n, Const(1))), span=span)], when)


def pop(var: Variable, span: Span | None = None, when: Expr | None = None) -> list[Assign]:
    n = length(var)
    return _only_if([Assign(top(var), first_value(var.type), span=span),
                     Assign(n, App(Op.SUB, (n, Const(1))), span=span)], when)


def _only_if(effects: list[Assign], when: Expr | None) -> list[Assign]:
    """`push(v) if c` / `pop if c`: where c is false, element 0 and the length keep their values."""
    if when is None:
        return effects
    out = []
    for a in effects:
        target = a.target if isinstance(a.target, Var) else \
            Index(a.target.name, App(Op.ITE, (when, a.target.index, Const(0))), span=a.target.span)
        kept = a.target if isinstance(a.target, Var) else Index(a.target.name, Const(0))
        out.append(Assign(target, App(Op.ITE, (when, a.value, kept)), span=a.span))
    return out
