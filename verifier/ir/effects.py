"""Reading a state after a list of writes: the one place that says what a simultaneous step does.

A step's writes fire as in `semantics.fire`: every right side and index reads the state
before the step, a later write to the same element wins, and a variable with
`overflow: clamp` keeps its nearest bound. `read_after` turns an expression read after
the step into one read before it; the turn change composes its blocks with it and
step claims' monitors read the state after a move with it.
"""
from __future__ import annotations

from collections.abc import Sequence

from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Quant, Var, app, eq, free_locals, map_expr, substitute, walk
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
    return After(model, writes)(e)


class After:
    """`read_after` for many expressions over one list of writes (the writes are sorted out once: a
    literal index finds its writes without going through the others). A quantifier that binds a
    name the writes read (a move's choice `p` under `count(p in player: ...)`) is renamed first, so
    that what a write reads is never taken for the quantifier's own variable."""

    def __init__(self, model: Model, writes: Sequence[Assign]):
        self.reads: set[str] = set()                   # the names the writes' values and indices read
        self.scalars: dict[str, Expr] = {}
        self.literal: dict[tuple[str, int], list[tuple[int, Expr]]] = {}    # (array, index) -> (order, value)
        self.computed: dict[str, list[tuple[int, Expr, Expr]]] = {}          # array -> (order, index, value)
        self.arrays: dict[str, list[tuple[int, Expr, Expr]]] = {}            # every write, in order
        for order, w in enumerate(writes):
            value = clamped(model, w.target.name, w.value)
            self.reads |= free_locals(value)
            if isinstance(w.target, Var):
                self.scalars[w.target.name] = value
                continue
            self.arrays.setdefault(w.target.name, []).append((order, w.target.index, value))
            self.reads |= free_locals(w.target.index)
            if isinstance(w.target.index, Const):
                self.literal.setdefault((w.target.name, w.target.index.value), []).append((order, value))
            else:
                self.computed.setdefault(w.target.name, []).append((order, w.target.index, value))

    def __call__(self, e: Expr) -> Expr:
        return map_expr(e, self._node)

    def _node(self, node: Expr) -> Expr | None:
        if isinstance(node, Var) and node.name in self.scalars:
            return self.scalars[node.name]
        if isinstance(node, Quant) and node.var in self.reads:
            names = {n.name for n in walk(node.body) if isinstance(n, Local)} | \
                {n.var for n in walk(node.body) if isinstance(n, Quant)}
            var = _fresh(node.var, self.reads | names)
            return Quant(node.kind, var, self(node.lo), self(node.hi), self(substitute(node.body, {node.var: Local(var)})),
                         span=node.span)
        if not isinstance(node, Index):
            return None
        where = map_expr(node.index, self._node)
        value: Expr = Index(node.name, where, span=node.span)
        computed = self.computed.get(node.name, [])
        if isinstance(where, Const):
            writes = sorted([(order, Const(where.value), v) for order, v in self.literal.get((node.name, where.value), [])]
                            + computed, key=lambda w: w[0])
        else:
            writes = self.arrays.get(node.name, [])
        for _, index, written in writes:          # the last write ends outermost: it wins
            value = choose(same_index(where, index), written, value)
        return value


def _fresh(name: str, taken: set[str]) -> str:
    """`name` primed until it is none of `taken` (no name of the language has a prime)."""
    while name in taken:
        name += "'"
    return name
