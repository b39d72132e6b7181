"""Which actions cannot raise a model error in an in-range state, read off the IR without Z3.

`Encoding.error` is the states where computing some action's firings raises (an index outside
its array, a divisor not positive), asked beside every safety claim's own bad states; the engine
first asks Z3 whether such a state is in range at all (`Encoding.statically_false`), and in the
shipped games none is. Building that predicate (each action's guard and effects for every value
of its choices) was most of what encoding a game for one claim cost. An action that divides only
by positive constants and indexes every array only by expressions whose values (constants,
variables, choices and quantified names with constant ranges, sums, differences, min, max, `if`
and mod by a constant of them) lie inside the array's index range has no definedness term that
is false in an in-range state, so it adds nothing to the predicate there. `failing` names the
actions for which that cannot be said (and whether the end predicate is one); the predicate
built of those alone is unsatisfiable in range exactly when the whole one is.

Anything the encoding might refuse (an unknown name, a quantifier or a choice range it would
unroll or eliminate) is taken to fail, so the whole predicate is still built and refused there
as before.
"""
from __future__ import annotations

import math

from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Param, Quant, Var
from verifier.ir.model import Action, BoolType, EnumType, Model, Type

Range = tuple[int, int]
QUANT_LIMIT = 4096         # as `encode.QUANT_LIMIT`: a larger domain is refused by the encoding
ENUMERATE_LIMIT = 256      # as `encode.ENUMERATE_LIMIT`: more choice values go to quantifier elimination


def failing(model: Model, actions: tuple[int, ...], free: tuple[str, ...]) -> tuple[bool, list[int]]:
    """(whether the end predicate may fail, the actions of `actions` that may) in an in-range state
    of `model` (instantiated: fixed parameters folded in; `free`: the parameters left free)."""
    check = _Check(model, free)
    return not check.safe(model.end, {}), [a for a in actions if not check.action(model.actions[a])]


class _Check:
    def __init__(self, model: Model, free: tuple[str, ...]):
        self.scalars = {v.name: _range(v.type) for v in model.variables if v.index is None}
        self.arrays = {v.name: _range(v.index) for v in model.variables if v.index is not None}
        self.free = frozenset(free)

    def action(self, action: Action) -> bool:
        """No definedness term of `action`'s firing is false in an in-range state, for any choice
        values in range."""
        locals_: dict[str, Range] = {}
        for c in action.choices:
            known = _range(c.type)
            if known is None:
                return False
            locals_[c.name] = known
        if math.prod(hi - lo + 1 for lo, hi in locals_.values()) > ENUMERATE_LIMIT:
            return False
        return all(self.safe(e, locals_) for e in (action.guard, *(eff.target for eff in action.effects),
                                                    *(eff.value for eff in action.effects)))

    def safe(self, e: Expr, locals_: dict[str, Range]) -> bool:
        """`e`'s definedness is true in every in-range state, `locals_` within their ranges."""
        match e:
            case Const():
                return True
            case Var():
                return e.name in self.scalars
            case Param():
                return e.name in self.free
            case Local():
                return e.name in locals_
            case Index():
                bounds = self.arrays.get(e.name)
                known = self.interval(e.index, locals_)
                return (bounds is not None and known is not None and self.safe(e.index, locals_)
                        and bounds[0] <= known[0] and known[1] <= bounds[1])
            case Quant():
                lo, hi = _number(e.lo), _number(e.hi)
                if lo is None or hi is None or hi - lo + 1 > QUANT_LIMIT:
                    return False
                return self.safe(e.body, {**locals_, e.var: (lo, hi)})
            case App():
                if e.op in (Op.DIV, Op.MOD) and _positive(e.args[1]) is None:
                    return False
                return all(self.safe(a, locals_) for a in e.args)
        return False

    def interval(self, e: Expr, locals_: dict[str, Range]) -> Range | None:
        """The values `e` may take (None: not known), for the arithmetic indexes are written in."""
        match e:
            case Const():
                return e.value, e.value
            case Var():
                return self.scalars.get(e.name)
            case Local():
                return locals_.get(e.name)
            case App(op=Op.MOD):
                divisor = _positive(e.args[1])
                return None if divisor is None else (0, divisor - 1)   # mod by a positive number: never negative
            case App(op=Op.ADD | Op.SUB | Op.MIN | Op.MAX | Op.ITE):
                parts = [self.interval(a, locals_) for a in (e.args[1:] if e.op is Op.ITE else e.args)]
                known = [p for p in parts if p is not None]
                return _combine(e.op, known) if len(known) == len(parts) else None
        return None


def _combine(op: Op, parts: list[Range]) -> Range:
    if op is Op.ADD:
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    if op is Op.SUB:
        (lo, hi), *rest = parts
        return lo - sum(p[1] for p in rest), hi - sum(p[0] for p in rest)
    if op is Op.MIN:
        return min(p[0] for p in parts), min(p[1] for p in parts)
    if op is Op.MAX:
        return max(p[0] for p in parts), max(p[1] for p in parts)
    return min(p[0] for p in parts), max(p[1] for p in parts)        # ITE: either branch


def _range(t: Type) -> Range | None:
    if isinstance(t, BoolType):
        return 0, 1
    if isinstance(t, EnumType):
        return 0, len(t.values) - 1
    lo, hi = _number(t.lo), _number(t.hi)
    return None if lo is None or hi is None else (lo, hi)


def _number(e: Expr) -> int | None:
    return e.value if isinstance(e, Const) else None


def _positive(e: Expr) -> int | None:
    value = _number(e)
    return value if value is not None and value > 0 else None
