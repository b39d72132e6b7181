"""A condition rewritten for people to read (diagrams): the same truth value on every state.

Only rewrites that are exactly equivalent (as conditions: what holds still holds) are made, and
only where a value is read as a condition (`and`/`or`/`not` operands, a `forall`/`exists`/`count`
body); numbers and what is compared are left as written:

- `not` is pushed inwards: `not (not a)` is `a`, `not (a == b)` is `a != b` (each comparison
  flips: `not (a < b)` is `a >= b`), `not (a or b)` is `not a and not b`, `not (forall q in D: a)`
  is `exists q in D: not a`;
- `and`/`or` lose repeats, operands a sibling makes redundant (`(a or b) and b` is `b`), parts of
  an operand a sibling rules out (`(a or b) and not b` is `a and not b`), and
  `x != d` beside `x == c` for constants c != d (`x == c and x != d` is `x == c`; in an `or`,
  `x == d` beside `x != c`); `a and not a` is `false`, `x == c and x == d` too (c != d).
"""
from __future__ import annotations

from verifier.ir.expr import FALSE, TRUE, App, Const, Expr, Op, Quant, QuantKind

_FLIP = {Op.EQ: Op.NE, Op.NE: Op.EQ, Op.LT: Op.GE, Op.GE: Op.LT, Op.LE: Op.GT, Op.GT: Op.LE}
_DUAL = {Op.AND: Op.OR, Op.OR: Op.AND}
_QUANT_DUAL = {QuantKind.FORALL: QuantKind.EXISTS, QuantKind.EXISTS: QuantKind.FORALL}


def simplify_condition(e: Expr) -> Expr:
    """`e` read as a condition, simplified (see the module's docstring)."""
    if isinstance(e, App) and e.op is Op.NOT:
        return _negate(simplify_condition(e.args[0]))
    if isinstance(e, App) and e.op in _DUAL:
        return _junction(e.op, [simplify_condition(a) for a in e.args])
    if isinstance(e, Quant) and e.kind is not QuantKind.SUM:
        return Quant(e.kind, e.var, e.lo, e.hi, simplify_condition(e.body), span=e.span)
    return e


def _negate(e: Expr) -> Expr:
    """`not e` of a simplified `e`, simplified."""
    if e in (TRUE, FALSE):
        return FALSE if e == TRUE else TRUE
    if isinstance(e, App) and e.op is Op.NOT:
        return e.args[0]
    if isinstance(e, App) and e.op in _FLIP:
        return App(_FLIP[e.op], e.args, span=e.span)
    if isinstance(e, App) and e.op in _DUAL:
        return _junction(_DUAL[e.op], [_negate(a) for a in e.args])
    if isinstance(e, Quant) and e.kind in _QUANT_DUAL:
        return Quant(_QUANT_DUAL[e.kind], e.var, e.lo, e.hi, _negate(e.body), span=e.span)
    return App(Op.NOT, (e,))


def _junction(op: Op, args: list[Expr]) -> Expr:
    """`and` (`or`) of simplified operands, without what the others make redundant."""
    unit, zero = (TRUE, FALSE) if op is Op.AND else (FALSE, TRUE)
    flat: list[Expr] = []
    for a in args:
        for x in (a.args if isinstance(a, App) and a.op is op else (a,)):
            if x == zero:
                return zero
            if x != unit and x not in flat:
                flat.append(x)
    if any(_negate(x) in flat for x in flat) or _clash(op, flat):
        return zero
    for i, x in enumerate(flat):           # `(a or b) and not b` is `a and not b`
        if isinstance(x, App) and x.op is _DUAL[op]:
            others = flat[:i] + flat[i + 1:]
            kept_args = [d for d in x.args if _negate(d) not in others]
            if len(kept_args) < len(x.args):
                return _junction(op, [*others[:i], _junction(x.op, kept_args), *others[i:]])
    kept = [x for x in flat if not _absorbed(op, x, flat)]
    if not kept:
        return unit
    return kept[0] if len(kept) == 1 else App(op, tuple(kept))


def _absorbed(op: Op, x: Expr, siblings: list[Expr]) -> bool:
    """Whether `x` adds nothing to `op` of `siblings`: it is the dual junction of one of them and more
    (`(a or b) and b`), or (in an `and`) `y != d` beside `y == c`, (in an `or`) `y == d` beside `y != c`."""
    if isinstance(x, App) and x.op is _DUAL[op] and any(s in x.args for s in siblings if s is not x):
        return True
    said = compared(x)
    weaker = Op.NE if op is Op.AND else Op.EQ          # what a sibling `subject == c` (`!= c`) implies
    if said is None or said[1] is not weaker:
        return False
    subject, _, value = said
    return any(other is not None and other[0] == subject and other[1] is _FLIP[weaker]
               and other[2].value != value.value for other in map(compared, siblings))


def _clash(op: Op, flat: list[Expr]) -> bool:
    """`x == c and x == d` (`x != c or x != d`) for constants c != d: always false (true)."""
    strong = Op.EQ if op is Op.AND else Op.NE
    seen: dict[Expr, Const] = {}
    for x in flat:
        said = compared(x)
        if said is None or said[1] is not strong:
            continue
        subject, _, value = said
        if subject in seen and seen[subject].value != value.value:
            return True
        seen[subject] = value
    return False


def compared(e: Expr) -> tuple[Expr, Op, Const] | None:
    """(subject, == or !=, constant) of `subject == c` / `c == subject` (`!=`), else None."""
    if not isinstance(e, App) or e.op not in (Op.EQ, Op.NE):
        return None
    a, b = e.args
    if isinstance(a, Const) and not isinstance(b, Const):
        a, b = b, a
    if not isinstance(b, Const) or isinstance(a, Const):
        return None
    return a, e.op, b
