"""Which actions may set a step claim's flag: its effect shown false where the action fires, statically.

A step flag's effect (`props.monitor.compile_step`) is a condition on the state before the move and
its choices, read only where the action's guard holds. Many are false there for plain reasons: "X
only in phase P" reads `phase != P` under a guard that opens with `phase == P`; a claim on every
move compares the phase with itself. `may_set` rewrites the effect with what the guard's conjuncts
fix (`slot == value`, a boolean slot, `slot != value`; inside a quantifier only what reads no name
it binds), and inside each `and` with what its conjuncts before, then after, each one fix, then
folds constants as the code generator does (`codegen.simplify`), sums and differences as linear
forms bounded by the slots' and choices' ranges, and a test of one slot over the few values left
to it. Where that folds to false, no move of the action sets the flag; else it may (never the
other way: only exact rewrites, and only of effects that cannot raise a model error,
which `raises` tells the caller first).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import assert_never

from verifier.engines.codegen import Interval, interval, may_raise, simplify
from verifier.ir.expr import (
    BOOL_OPS,
    App,
    Const,
    Expr,
    Index,
    Local,
    Op,
    Param,
    Quant,
    Var,
    conjuncts,
    free_locals,
    map_expr,
    walk,
)
from verifier.ir.model import Action, IntType, type_bounds
from verifier.semantics import Layout

ENUMERATED = 64          # values of one slot a test is tried at, at most


def choice_bounds(lay: Layout, action: Action) -> dict[str, Interval]:
    """The static range of each of the action's integer choices."""
    out: dict[str, Interval] = {}
    for c in action.choices:
        if isinstance(c.type, IntType):
            lo, hi = interval(lay, c.type.lo, out), interval(lay, c.type.hi, out)
            out[c.name] = (lo[0], hi[1]) if lo is not None and hi is not None else None
        else:
            out[c.name] = type_bounds(c.type)      # a bool's 0..1, an enum's 0..n-1
    return out


def raises(lay: Layout, action: Action, value: Expr) -> bool:
    """Whether evaluating the flag effect `value` of `action` might raise a model error."""
    return may_raise(value, choice_bounds(lay, action), lay)


def may_set(lay: Layout, action: Action, value: Expr) -> bool:
    """Whether the flag effect `value` (one that cannot raise) may be true where `action` fires."""
    bound = choice_bounds(lay, action)
    fixed, excluded = _facts(lay, action.guard)
    e = simplify(_linear(lay, simplify(_rewrite(lay, value, fixed), lay), bound), lay)
    if isinstance(e, Const):
        return bool(e.value)
    return _enumerated(lay, e, fixed, excluded)


def _slot(e: Expr) -> bool:
    return isinstance(e, Var) or (isinstance(e, Index) and isinstance(e.index, Const))


def _facts(lay: Layout, e: Expr) -> tuple[dict[Expr, Const], dict[Expr, set[int]]]:
    """What the conjuncts of `e` fix: each true (a test, or a slot of 0..1; a negated one false),
    slots equal to a constant, and values slots cannot take."""
    fixed: dict[Expr, Const] = {}
    excluded: dict[Expr, set[int]] = {}
    for c in conjuncts(e):
        negated = isinstance(c, App) and c.op is Op.NOT
        inner = c.args[0] if isinstance(c, App) and negated else c
        if negated or (isinstance(inner, App) and inner.op in BOOL_OPS) or interval(lay, inner, {}) in ((0, 1), (1, 1)):
            fixed[inner] = Const(0 if negated else 1, is_bool=True)    # `not v`: v is 0, whatever its type
        if isinstance(inner, App) and inner.op in (Op.EQ, Op.NE):
            x, y = inner.args
            if isinstance(x, Const):
                x, y = y, x
            if isinstance(y, Const) and _slot(x):
                if (inner.op is Op.EQ) != negated:
                    fixed[x] = Const(y.value)
                else:
                    excluded.setdefault(x, set()).add(y.value)
    return fixed, excluded


def _rewrite(lay: Layout, e: Expr, fixed: dict[Expr, Const]) -> Expr:
    """`e` with the fixed slots and tests replaced by their values (inside a quantifier, only those
    that read no name it binds); inside an `and`, each conjunct also with the values its sibling
    conjuncts fix (`_conjoined`)."""
    if e in fixed:
        return fixed[e]
    match e:
        case Const() | Var() | Param() | Local():
            return e
        case Index():
            return Index(e.name, _rewrite(lay, e.index, fixed), span=e.span)
        case Quant():
            inner = {k: v for k, v in fixed.items() if e.var not in free_locals(k)}
            return Quant(e.kind, e.var, _rewrite(lay, e.lo, fixed), _rewrite(lay, e.hi, fixed),
                         _rewrite(lay, e.body, inner), span=e.span)
        case App() if e.op is Op.AND:
            return _conjoined(lay, e, fixed)
        case App():
            return App(e.op, tuple(_rewrite(lay, a, fixed) for a in e.args), span=e.span)
        case _:
            assert_never(e)


def _conjoined(lay: Layout, e: App, fixed: dict[Expr, Const]) -> Expr:
    """The `and` `e`, each conjunct rewritten with what the conjuncts before it fix, then with what
    those after it fix. Each pass is exact (where the first failing conjunct, or the last, fails
    alike, the `and` is false anyway); one pass both ways is not: `x == 1 and x == 1` would
    become `true and true`."""
    parts = list(e.args)
    for order in (range(len(parts)), range(len(parts) - 1, -1, -1)):
        known = dict(fixed)
        for i in order:
            parts[i] = _rewrite(lay, parts[i], known)
            known.update(_facts(lay, parts[i])[0])      # a slot known before is no longer read there
    return App(Op.AND, tuple(parts), span=e.span)


_COMPARE = {Op.EQ: lambda lo, hi: (lo == hi == 0, lo > 0 or hi < 0), Op.NE: lambda lo, hi: (lo > 0 or hi < 0, lo == hi == 0),
            Op.LE: lambda lo, hi: (hi <= 0, lo > 0), Op.LT: lambda lo, hi: (hi < 0, lo >= 0),
            Op.GE: lambda lo, hi: (lo >= 0, hi < 0), Op.GT: lambda lo, hi: (lo > 0, hi <= 0)}


def _linear(lay: Layout, e: Expr, bound: dict[str, Interval]) -> Expr:
    """`e` with each comparison `a OP b` decided where `a - b`, as a linear form over its other
    subterms, is a constant or bounded to one side of 0 by their ranges."""
    def decide(n: Expr) -> Expr | None:
        if isinstance(n, Quant):             # its body with its own name's range, not a choice's
            first, last = interval(lay, n.lo, bound), interval(lay, n.hi, bound)
            inner = {**bound, n.var: (first[0], last[1]) if first is not None and last is not None else None}
            return Quant(n.kind, n.var, _linear(lay, n.lo, bound), _linear(lay, n.hi, bound),
                         _linear(lay, n.body, inner), span=n.span)
        if not (isinstance(n, App) and n.op in _COMPARE):
            return None
        lo, form = _difference(n.args[0], n.args[1])
        hi = lo
        for term, k in form.items():
            r = interval(lay, term, bound)
            if r is None:
                return None
            lo, hi = lo + min(k * r[0], k * r[1]), hi + max(k * r[0], k * r[1])
        yes, no = _COMPARE[n.op](lo, hi)
        return Const(1, is_bool=True) if yes else Const(0, is_bool=True) if no else None
    return map_expr(e, decide)


def _difference(a: Expr, b: Expr) -> tuple[int, dict[Expr, int]]:
    """`a - b` as a linear form: its constant, and each term's coefficient (the terms that cancel left out)."""
    form: Counter = Counter()
    for sign, side in ((1, a), (-1, b)):
        for term, k in _form(side, sign):
            form[term] += k
    constant = form.pop(None, 0)
    return constant, {t: k for t, k in form.items() if k}


def _form(e: Expr, k: int) -> Iterator[tuple[Expr | None, int]]:
    """`k * e` as (term, coefficient) pairs, None the constant's; sums, differences and negations opened."""
    if isinstance(e, Const):
        yield None, k * e.value
    elif isinstance(e, App) and e.op in (Op.ADD, Op.SUB):
        yield from _form(e.args[0], k)
        yield from _form(e.args[1], k if e.op is Op.ADD else -k)
    elif isinstance(e, App) and e.op is Op.NEG:
        yield from _form(e.args[0], -k)
    else:
        yield e, k


def _enumerated(lay: Layout, e: Expr, fixed: dict[Expr, Const], excluded: dict[Expr, set[int]]) -> bool:
    """Whether `e`, where it reads one slot and nothing else, may be true at one of the (at most
    ENUMERATED) values left to that slot; True where it reads more."""
    reads = {n for n in walk(e) if not isinstance(n, (App, Const))}      # the slots, locals, parameters, quantifiers
    if len(reads) != 1 or not _slot(next(iter(reads))):
        return True
    slot = next(iter(reads))
    r = interval(lay, slot, {})
    if r is None or r[1] - r[0] >= ENUMERATED:
        return True
    for v in range(r[0], r[1] + 1):
        if v in excluded.get(slot, ()):
            continue
        at = simplify(_linear(lay, simplify(_rewrite(lay, e, {**fixed, slot: Const(v)}), lay), {}), lay)
        if not (isinstance(at, Const) and not at.value):
            return True
    return False
