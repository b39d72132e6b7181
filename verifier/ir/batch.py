"""Expressions evaluated over a batch of states at once (numpy), for dealing the initial states.

`values(lay, e, states)` is `evaluate.evaluate` on every row of `states` (a 2-D array, one row per
state, one column per slot), as int64. Each node is evaluated on the rows where the reference
evaluates it (`and`/`or`/`->`/`if` short-circuit per row, a quantifier's body on each of its
values); where one of those rows would meet a model error (an index out of range, a division by a
non-positive number, a parameter without a value), or a number might leave int64, it raises
`Unsure`, and the caller asks the reference evaluator, which raises the error exactly where it
arises. The rows it does not evaluate a node on hold placeholder values there, never an error.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, assert_never

import numpy as np

from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Param, Quant, QuantKind, Var

if TYPE_CHECKING:
    from verifier.ir.evaluate import Layout

WIDE = 1 << 31            # a value at least this large might overflow int64 in the next operation
MAX_QUANT_VALUES = 10_000  # values a quantifier whose bounds the state picks ranges over in one batch

Values = np.ndarray       # int64, one per row

COMPARE = {Op.EQ: np.equal, Op.NE: np.not_equal, Op.LT: np.less, Op.LE: np.less_equal,
           Op.GT: np.greater, Op.GE: np.greater_equal}


class Unsure(Exception):
    """Some row evaluated might meet a model error, or leave int64: the reference evaluator decides."""


def values(lay: Layout, e: Expr, states: np.ndarray) -> Values:
    """`e` on each row of `states` (booleans as 0/1); `Unsure` where a row might meet a model error."""
    live = np.ones(len(states), dtype=bool)
    return _Batch(lay, states).value(e, live, {})


class _Batch:
    def __init__(self, lay: Layout, states: np.ndarray) -> None:
        self.lay, self.states, self.rows = lay, states, len(states)

    def value(self, e: Expr, live: np.ndarray, env: dict[str, int]) -> Values:
        match e:
            case Const():
                return _check_width(np.full(self.rows, e.value if abs(e.value) < WIDE else WIDE, dtype=np.int64))
            case Var():
                return self.states[:, self.lay.slot_of(e.name, None)].astype(np.int64)
            case Index():
                return self._element(e, live, env)
            case Local():
                return np.full(self.rows, env[e.name], dtype=np.int64)
            case Param():
                raise Unsure(f"parameter {e.name} has no value")
            case Quant():
                return self._quant(e, live, env)
            case App():
                return self._app(e, live, env)
            case _:
                assert_never(e)

    def _element(self, e: Index, live: np.ndarray, env: dict[str, int]) -> Values:
        first, lo, size = self.lay.offsets[e.name]
        index = self.value(e.index, live, env)
        outside = (index < lo) | (index >= lo + size)
        if np.any(outside & live):
            raise Unsure(f"an index of {e.name} out of range")
        columns = first + np.clip(index, lo, lo + size - 1) - lo
        return self.states[np.arange(self.rows), columns].astype(np.int64)

    def _quant(self, e: Quant, live: np.ndarray, env: dict[str, int]) -> Values:
        lo, hi = self.value(e.lo, live, env), self.value(e.hi, live, env)
        if not np.any(live):
            return np.zeros(self.rows, dtype=np.int64)
        first, last = int(lo[live].min()), int(hi[live].max())
        if last - first + 1 > MAX_QUANT_VALUES:
            raise Unsure("a quantifier over too many values")
        out = np.full(self.rows, 1 if e.kind is QuantKind.FORALL else 0, dtype=np.int64)
        for k in range(first, last + 1):
            inside = live & (lo <= k) & (k <= hi)
            body = self.value(e.body, inside, {**env, e.var: k})
            if e.kind is QuantKind.FORALL:
                out &= np.where(inside, body != 0, True)
            elif e.kind is QuantKind.EXISTS:
                out |= inside & (body != 0)
            elif e.kind is QuantKind.COUNT:
                out += inside & (body != 0)
            else:
                out += np.where(inside, _check_width(body), 0)
                _check_width(out)
        return out

    def _app(self, e: App, live: np.ndarray, env: dict[str, int]) -> Values:
        op = e.op
        if op in (Op.AND, Op.OR):
            decided = np.zeros(self.rows, dtype=bool)     # rows the operands so far settle
            for a in e.args:
                truth = self.value(a, live & ~decided, env) != 0
                decided |= ~truth if op is Op.AND else truth
            return (~decided if op is Op.AND else decided).astype(np.int64)
        if op is Op.IMPLIES:
            given = self.value(e.args[0], live, env) != 0
            then = self.value(e.args[1], live & given, env) != 0
            return (~given | then).astype(np.int64)
        if op is Op.ITE:
            cond = self.value(e.args[0], live, env) != 0
            yes = self.value(e.args[1], live & cond, env)
            no = self.value(e.args[2], live & ~cond, env)
            return np.where(cond, yes, no)
        args = [self.value(a, live, env) for a in e.args]
        return self._operate(op, args, live)

    def _operate(self, op: Op, a: list[Values], live: np.ndarray) -> Values:
        match op:
            case Op.ADD | Op.SUB | Op.MUL | Op.NEG | Op.ABS:
                for operand in a:                 # under 2**31 each: no int64 overflow
                    _check_width(operand)
                out = {Op.ADD: lambda: a[0] + a[1], Op.SUB: lambda: a[0] - a[1], Op.MUL: lambda: a[0] * a[1],
                       Op.NEG: lambda: -a[0], Op.ABS: lambda: np.abs(a[0])}[op]()
                return _check_width(out)
            case Op.DIV | Op.MOD:
                if np.any(live & (a[1] <= 0)):
                    raise Unsure("a division by a non-positive number")
                divisor = np.where(a[1] > 0, a[1], 1)
                return a[0] // divisor if op is Op.DIV else a[0] % divisor
            case Op.MIN | Op.MAX:
                return (np.minimum if op is Op.MIN else np.maximum).reduce(a)
            case Op.NOT:
                return (a[0] == 0).astype(np.int64)
            case Op.EQ | Op.NE | Op.LT | Op.LE | Op.GT | Op.GE:
                return COMPARE[op](a[0], a[1]).astype(np.int64)
            case Op.AND | Op.OR | Op.IMPLIES | Op.ITE:
                raise AssertionError(f"{op} short-circuits: evaluated in _app")
            case _:
                assert_never(op)


def _check_width(out: Values) -> Values:
    if out.size and int(np.abs(out).max()) >= WIDE:
        raise Unsure("a number that might leave int64")
    return out
