"""Expressions of the IR: one AST, compiled to Python (explicit search) and to Z3.

All values are integers at run time: booleans are 0/1, enum values are their
index in the enum. Spans are kept for messages but excluded from equality.
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol, TypeAlias, assert_never

from verifier.diagnostics import Span


class Op(Enum):
    """Operators of `App`; arity in brackets."""

    ADD = "+"          # [2]
    SUB = "-"          # [2]
    MUL = "*"          # [2]
    DIV = "/"          # [2] floor division; the divisor must be positive
    MOD = "%"          # [2] the divisor must be positive; result in 0..d-1
    NEG = "neg"        # [1]
    EQ = "=="          # [2]
    NE = "!="          # [2]
    LT = "<"           # [2]
    LE = "<="          # [2]
    GT = ">"           # [2]
    GE = ">="          # [2]
    AND = "and"        # [n>=2]
    OR = "or"          # [n>=2]
    NOT = "not"        # [1]
    IMPLIES = "->"     # [2]
    ITE = "if"         # [3] if c then a else b
    MIN = "min"        # [n>=2]
    MAX = "max"        # [n>=2]
    ABS = "abs"        # [1]


BOOL_OPS = frozenset({Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.AND, Op.OR, Op.NOT, Op.IMPLIES})


class QuantKind(Enum):
    FORALL = "forall"   # bool
    EXISTS = "exists"   # bool
    SUM = "sum"         # int
    COUNT = "count"     # int: how many bound values satisfy the body


@dataclass(frozen=True)
class ExprBase:
    """Base class of the expression nodes; what they share (the span). Annotate with `Expr`."""

    span: Span | None = field(default=None, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Const(ExprBase):
    """An integer or boolean literal, or an enum value (its index, with the enum's name)."""

    value: int
    enum: str | None = None    # the enum's name when this is an enum value
    is_bool: bool = False
    # the name the model wrote for this number (`PLAYERS`, a constant's name), for `mutate`'s descriptions
    # (and PLAYERS is no literal to it); every other reader sees the number
    written: str = field(default="", compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Var(ExprBase):
    """A scalar state variable."""

    name: str


@dataclass(frozen=True)
class Index(ExprBase):
    """An element of an array state variable: ``name[index]``."""

    name: str
    index: Expr


@dataclass(frozen=True)
class Param(ExprBase):
    """A model parameter; fixed by `Model.instantiate`, or left free for the symbolic engine."""

    name: str


@dataclass(frozen=True)
class Local(ExprBase):
    """A name bound by an action's choice or by a quantifier."""

    name: str


@dataclass(frozen=True)
class App(ExprBase):
    op: Op
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Quant(ExprBase):
    """``forall v in lo..hi: body`` and friends; the domain bounds are expressions."""

    kind: QuantKind
    var: str
    lo: Expr
    hi: Expr
    body: Expr


Expr: TypeAlias = Const | Var | Index | Param | Local | App | Quant
"""An expression: one of the node classes. Dispatch on it with `match` and end with
`case _: assert_never(e)`, so that mypy names every match a new node class is missing from."""

ExprLike = Expr | int | bool


def const(value: int | bool) -> Const:
    if isinstance(value, bool):
        return Const(int(value), is_bool=True)
    return Const(value)


TRUE = Const(1, is_bool=True)
FALSE = Const(0, is_bool=True)


def _lift(e: ExprLike) -> Expr:
    return e if isinstance(e, Expr) else const(e)


def app(op: Op, *args: ExprLike, span: Span | None = None) -> Expr:
    """Smart constructor: flattens AND/OR and folds trivial boolean constants."""
    items = tuple(_lift(a) for a in args)
    if op in (Op.AND, Op.OR):
        unit, zero = (TRUE, FALSE) if op is Op.AND else (FALSE, TRUE)
        flat: list[Expr] = []
        for a in items:
            if isinstance(a, App) and a.op is op:
                flat.extend(a.args)
            elif a == zero:
                return zero
            elif a != unit:
                flat.append(a)
        if not flat:
            return unit
        if len(flat) == 1:
            return flat[0]
        return App(op, tuple(flat), span=span)
    if op is Op.NOT and items[0] in (TRUE, FALSE):
        return FALSE if items[0] == TRUE else TRUE
    return App(op, items, span=span)


def conj(*args: ExprLike) -> Expr:
    return app(Op.AND, *args)


def disj(*args: ExprLike) -> Expr:
    return app(Op.OR, *args)


def neg(e: ExprLike) -> Expr:
    return app(Op.NOT, e)


def eq(a: ExprLike, b: ExprLike) -> Expr:
    return app(Op.EQ, a, b)


def apply_op(op: Op, a: list[int]) -> int:
    """The value of a non-short-circuit operator on integer arguments (booleans are 0/1)."""
    compare = _COMPARE.get(op)
    if compare is not None:
        return int(compare(a[0], a[1]))
    if op is Op.ADD:
        return a[0] + a[1]
    if op is Op.SUB:
        return a[0] - a[1]
    if op is Op.MUL:
        return a[0] * a[1]
    if op in (Op.DIV, Op.MOD):
        if a[1] <= 0:
            raise ArithmeticError(f"{'division' if op is Op.DIV else 'modulo'} by {a[1]}")
        return a[0] // a[1] if op is Op.DIV else a[0] % a[1]
    if op is Op.NEG:
        return -a[0]
    if op is Op.NOT:
        return int(not a[0])
    if op is Op.ABS:
        return abs(a[0])
    if op is Op.MIN:
        return min(a)
    if op is Op.MAX:
        return max(a)
    if op is Op.AND:
        return int(all(a))
    if op is Op.OR:
        return int(any(a))
    if op is Op.IMPLIES:
        return int(not a[0] or bool(a[1]))
    if op is Op.ITE:
        return a[1] if a[0] else a[2]
    raise ValueError(f"no value for operator {op}")


_COMPARE = {Op.EQ: operator.eq, Op.NE: operator.ne, Op.LT: operator.lt, Op.LE: operator.le,
            Op.GT: operator.gt, Op.GE: operator.ge}


def fold(e: Expr) -> Expr:
    """Evaluate every operator whose arguments are all literals (no state, no parameters)."""

    def fn(node: Expr) -> Expr | None:
        if not isinstance(node, App):
            return None
        args = tuple(fold(a) for a in node.args)
        consts = [a for a in args if isinstance(a, Const)]
        if len(consts) == len(args):
            try:
                value = apply_op(node.op, [a.value for a in consts])
            except ArithmeticError:
                return App(node.op, args, span=node.span)
            return Const(value, is_bool=node.op in BOOL_OPS, span=node.span)
        return node if all(new is old for new, old in zip(args, node.args)) else App(node.op, args, span=node.span)

    return map_expr(e, fn)


# ---------------------------------------------------------------- generic walk

def children(e: Expr) -> tuple[Expr, ...]:
    match e:
        case Const() | Var() | Param() | Local():
            return ()
        case Index():
            return (e.index,)
        case App():
            return e.args
        case Quant():
            return (e.lo, e.hi, e.body)
        case _:
            assert_never(e)


def conjuncts(e: Expr) -> Iterator[Expr]:
    """The parts of `e` that must all hold: the operands of its `and`s, nested ones included, in order."""
    if isinstance(e, App) and e.op is Op.AND:
        for a in e.args:
            yield from conjuncts(a)
    else:
        yield e


def walk(e: Expr) -> Iterator[Expr]:
    """Every node of `e`, pre-order."""
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def map_expr(e: Expr, fn: Callable[[Expr], Expr | None]) -> Expr:
    """Rebuild `e` top-down; `fn` may replace a node by returning an expression. A node none of
    whose parts changed is kept (the nodes are frozen: most of a model's expressions pass through
    parameter substitution and folding unchanged)."""
    replaced = fn(e)
    if replaced is not None:
        return replaced
    match e:
        case Const() | Var() | Param() | Local():
            return e
        case Index():
            index = map_expr(e.index, fn)
            return e if index is e.index else Index(e.name, index, span=e.span)
        case App():
            args = tuple(map_expr(a, fn) for a in e.args)
            return e if all(new is old for new, old in zip(args, e.args)) else App(e.op, args, span=e.span)
        case Quant():
            lo, hi, body = map_expr(e.lo, fn), map_expr(e.hi, fn), map_expr(e.body, fn)
            return e if lo is e.lo and hi is e.hi and body is e.body else Quant(e.kind, e.var, lo, hi, body, span=e.span)
        case _:
            assert_never(e)


def substitute(e: Expr, mapping: Mapping[str, Expr], kind: type[Local] | type[Param] = Local) -> Expr:
    """Replace `Local` (or `Param`, with kind=Param) names by expressions."""

    def fn(node: Expr) -> Expr | None:
        if isinstance(node, Quant) and kind is Local and node.var in mapping:
            inner = {k: v for k, v in mapping.items() if k != node.var}
            return Quant(node.kind, node.var, substitute(node.lo, mapping, kind),
                         substitute(node.hi, mapping, kind), substitute(node.body, inner, kind),
                         span=node.span)
        if isinstance(node, kind) and node.name in mapping:
            return mapping[node.name]
        return None

    return map_expr(e, fn)


def state_vars(e: Expr) -> frozenset[str]:
    """Names of the state variables `e` reads (scalars and arrays)."""
    return frozenset(n.name for n in walk(e) if isinstance(n, (Var, Index)))


def free_locals(e: Expr) -> frozenset[str]:
    """Names of the `Local`s `e` reads that no quantifier in it binds (a move's choices, a block's `p`)."""
    match e:
        case Local():
            return frozenset({e.name})
        case Const() | Var() | Param():
            return frozenset()
        case Index():
            return free_locals(e.index)
        case App():
            return frozenset().union(*(free_locals(a) for a in e.args))
        case Quant():
            return free_locals(e.lo) | free_locals(e.hi) | (free_locals(e.body) - {e.var})
        case _:
            assert_never(e)


def params_of(e: Expr) -> frozenset[str]:
    return frozenset(n.name for n in walk(e) if isinstance(n, Param))


class Words(Protocol):
    """A model's display names, for an expression people read (`verifier.trace.Names`)."""

    def slot(self, key: str) -> str:
        """A variable's name as people read it (its `label:`)."""

    def split(self, var: str, index: Expr) -> tuple[Expr, ...]:
        """The indices a read of `var` at `index` was written with (two for a 2-D array's flat position)."""

    def element(self, var: str, *indices: str, negated: bool = False) -> str:
        """An array's element as people read it, its indices written out (`cards in hand of player p`);
        `negated` where `negates(var)`: `player p is not knocked out`."""

    def negates(self, var: str) -> bool:
        """Whether `not var[i]` is written as `var[i]` negated inside (a per-player flag)."""

    def value_names(self, var: str) -> tuple[int, tuple[str, ...]] | None:
        """The least value of `var`'s int range and the names of its values (`values:`), or None."""


def pretty(e: Expr, enum_names: Callable[[str, int], str] | None = None, words: Words | None = None) -> str:
    """Render in the surface syntax of the model language; with `words`, in the model's display
    names: a variable's label, and a comparison of a variable whose values are named with a number
    as the names it allows (`mode == 1` as `mode is attack`, `mode > 0` as `mode in {defend, pass}`)."""
    match e:
        case Const():
            if e.is_bool:
                return "true" if e.value else "false"
            if e.enum is not None and enum_names is not None:
                return enum_names(e.enum, e.value)
            return str(e.value)
        case Var():
            return words.slot(e.name) if words is not None else e.name
        case Param() | Local():
            return e.name
        case Index():
            if words is None:
                return f"{e.name}[{pretty(e.index, enum_names, words)}]"
            return words.element(e.name, *(pretty(i, enum_names, words) for i in words.split(e.name, e.index)))
        case Quant():
            dom = f"{pretty(e.lo, enum_names, words)}..{pretty(e.hi, enum_names, words)}"
            body = pretty(e.body, enum_names, words)
            if e.kind in (QuantKind.SUM, QuantKind.COUNT):
                return f"{e.kind.value}({e.var} in {dom}: {body})"
            return f"({e.kind.value} {e.var} in {dom}: {body})"
        case App():
            flag = e.args[0] if e.op is Op.NOT else None
            if words is not None and isinstance(flag, Index) and words.negates(flag.name):
                return words.element(flag.name, *(pretty(i, enum_names, words) for i in words.split(flag.name, flag.index)),
                                     negated=True)
            named = _named_comparison(e, enum_names, words) if words is not None else None
            return named if named is not None else _pretty_app(e, [pretty(a, enum_names, words) for a in e.args])
        case _:
            assert_never(e)


_MIRRORED = {Op.EQ: Op.EQ, Op.NE: Op.NE, Op.LT: Op.GT, Op.LE: Op.GE, Op.GT: Op.LT, Op.GE: Op.LE}
_HOLDS: dict[Op, Callable[[int, int], bool]] = {
    Op.EQ: lambda a, b: a == b, Op.NE: lambda a, b: a != b, Op.LT: lambda a, b: a < b,
    Op.LE: lambda a, b: a <= b, Op.GT: lambda a, b: a > b, Op.GE: lambda a, b: a >= b}
_LISTED = 3     # `x != c` lists the names it allows up to this many, else reads `x is not <name>`


def _named_comparison(e: App, enum_names: Callable[[str, int], str] | None, words: Words) -> str | None:
    """A variable whose values are named compared with a number, as the names the comparison
    allows; None for any other expression, and where it allows no value or every value."""
    if e.op not in _MIRRORED:
        return None
    subject, number, op = e.args[0], e.args[1], e.op
    if isinstance(subject, Const):
        subject, number, op = number, subject, _MIRRORED[op]
    if not isinstance(subject, (Var, Index)) or not isinstance(number, Const) or number.is_bool \
            or number.enum is not None:
        return None
    named = words.value_names(subject.name)
    if named is None:
        return None
    lo, names = named
    held = [name for k, name in enumerate(names, lo) if _HOLDS[op](k, number.value)]
    if not held or len(held) == len(names):
        return None
    said = pretty(subject, enum_names, words)
    if len(held) == 1:
        return f"{said} is {held[0]}"
    if op is Op.NE and len(held) > _LISTED:
        return f"{said} is not {names[number.value - lo]}"
    return f"{said} in {{{', '.join(held)}}}"


def _pretty_app(e: App, args: list[str]) -> str:
    if e.op is Op.NEG:
        return f"-{_paren(e.args[0], args[0])}"
    if e.op is Op.NOT:
        return f"not {_paren(e.args[0], args[0])}"
    if e.op is Op.ITE:
        return f"(if {args[0]} then {args[1]} else {args[2]})"
    if e.op in (Op.MIN, Op.MAX, Op.ABS):
        return f"{e.op.value}({', '.join(args)})"
    sep = f" {e.op.value} "
    return sep.join(_paren(a, s) for a, s in zip(e.args, args))

def _paren(e: Expr, text: str) -> str:
    return f"({text})" if isinstance(e, App) and e.op not in (Op.MIN, Op.MAX, Op.ABS, Op.ITE) else text
