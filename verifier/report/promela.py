"""Export an instantiated model to Promela, so SPIN can count the same state space.

One process loops over one `d_step` per action and choice value: SPIN then
stores exactly our states (the loop head is its only control point), which
makes state counts directly comparable. Overflow policies become part of the
guard (forbid, gap) or of the value (clamp).
"""
from __future__ import annotations

import itertools
from typing import assert_never

from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Param, Quant, QuantKind, Var, fold, substitute
from verifier.ir.model import Modality, Model, Overflow, type_bounds


class PromelaError(ValueError):
    """The model uses something this exporter cannot express."""


_BIN = {Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.DIV: "/", Op.MOD: "%", Op.EQ: "==", Op.NE: "!=",
        Op.LT: "<", Op.LE: "<=", Op.GT: ">", Op.GE: ">=", Op.AND: "&&", Op.OR: "||"}


def _narrowest(lo: int, hi: int) -> str:
    """The smallest Promela integer type holding lo..hi (every stored value is in its type's range:
    the guards and clamps below keep it there), so that SPIN's state vector is no wider than needed."""
    if lo >= 0 and hi <= 255:
        return "byte"
    if lo >= -(1 << 15) and hi < 1 << 15:
        return "short"
    return "int"


def _name(var: str) -> str:
    return "v_" + var.replace(".", "_")


def expr(model: Model, e: Expr) -> str:
    match e:
        case Const():
            return str(e.value)
        case Var():
            return _name(e.name)
        case Index():
            lo = model.var(e.name).index_lo()
            return f"{_name(e.name)}[{expr(model, e.index)}{f' - {lo}' if lo else ''}]"
        case Local():
            raise PromelaError(f"unbound name {e.name}")
        case Param():
            raise PromelaError(f"parameter {e.name} has no value")
        case Quant():
            return _quant(model, e)
        case App():
            return _app(model, e)
        case _:
            assert_never(e)


def _quant(model: Model, e: Quant) -> str:
    if not (isinstance(e.lo, Const) and isinstance(e.hi, Const)):
        raise PromelaError("quantifier bounds must be constants")
    parts = [expr(model, fold(substitute(e.body, {e.var: Const(i)}))) for i in range(e.lo.value, e.hi.value + 1)]
    if e.kind is QuantKind.FORALL:
        return "(" + (" && ".join(parts) or "1") + ")"
    if e.kind is QuantKind.EXISTS:
        return "(" + (" || ".join(parts) or "0") + ")"
    if e.kind is QuantKind.COUNT:
        return "(" + (" + ".join(f"({p} -> 1 : 0)" for p in parts) or "0") + ")"
    return "(" + (" + ".join(parts) or "0") + ")"


def _app(model: Model, e: App) -> str:
    a = [expr(model, x) for x in e.args]
    if e.op in _BIN:
        return "(" + f" {_BIN[e.op]} ".join(a) + ")"
    if e.op is Op.NOT:
        return f"(!{a[0]})"
    if e.op is Op.NEG:
        return f"(-{a[0]})"
    if e.op is Op.IMPLIES:
        return f"(!{a[0]} || {a[1]})"
    if e.op is Op.ITE:
        return f"({a[0]} -> {a[1]} : {a[2]})"
    if e.op is Op.ABS:
        return f"(({a[0]}) < 0 -> -({a[0]}) : ({a[0]}))"
    cmp = "<" if e.op is Op.MIN else ">"
    out = a[0]
    for x in a[1:]:
        out = f"(({out}) {cmp} ({x}) -> ({out}) : ({x}))"
    return out


def setup_steps(model: Model) -> int:
    """The states SPIN counts before the model's initial state: 1 where an array starts with
    different values (Promela declares an array with one value; a first step sets the others)."""
    from verifier.semantics import initial_states, layout

    starts = initial_states(layout(model))
    pos, steps = 0, 0
    for v in model.variables:
        steps = max(steps, int(len(set(starts[0][pos:pos + v.size()])) > 1))
        pos += v.size()
    return steps


def to_promela(model: Model) -> str:
    """The model as a Promela program (one initial state; constant choice domains; arrays that
    start with different values set by one first step: `setup_steps`)."""
    from verifier.semantics import initial_states, layout

    lay = layout(model)
    starts = initial_states(lay)
    if len(starts) != 1:
        raise PromelaError(f"the exporter needs exactly one initial state, the model has {len(starts)}")
    (start,) = starts
    lines = [f"/* {model.name}: exported by turnproof for a state-count cross-check */"]
    pos = 0
    setup = []          # elements of arrays that start with different values, set by one first step
    for v in model.variables:
        values = start[pos:pos + v.size()]
        pos += v.size()
        size = f"[{v.size()}]" if v.index is not None else ""
        lines.append(f"{_narrowest(*type_bounds(v.type))} {_name(v.name)}{size} = {values[0]};")
        setup += [f"{_name(v.name)}[{k}] = {x}" for k, x in enumerate(values) if x != values[0]]
    temps = max((len(a.effects) for a in model.actions), default=0)
    lines += [f"hidden int t{i};" for i in range(temps)]
    lines += [f"hidden int i{i};" for i in range(temps)]     # target indices, read before any write
    lines += ["", "active proctype turnproof() {"]
    if setup:
        lines.append(f"  d_step {{ {'; '.join(setup)} }};")
    lines.append("  do")
    end = expr(model, model.end)
    for action in model.actions:
        if action.modality is Modality.MUST_NOT:
            continue
        lines += _branches(model, action, end)
    lines += ["  od", "}"]
    return "\n".join(lines) + "\n"


def _branches(model: Model, action, end: str) -> list[str]:
    domains = []
    for c in action.choices:
        try:
            lo, hi = type_bounds(c.type)
        except AssertionError:
            raise PromelaError(f"choice {c.name} of {action.name} needs constant bounds") from None
        domains.append(range(lo, hi + 1))
    out = []
    for combo in itertools.product(*domains):
        consts = {c.name: Const(v) for c, v in zip(action.choices, combo)}

        def f(e: Expr, consts=consts) -> Expr:
            return fold(substitute(e, consts))

        guard = [f"!{end}", expr(model, f(action.guard))]
        body = []
        assigns = []
        for i, eff in enumerate(action.effects):
            var = model.var(eff.target.name)
            lo, hi = type_bounds(var.type)
            value = expr(model, f(eff.value))
            if var.overflow is Overflow.CLAMP:
                value = f"(({value}) < {lo} -> {lo} : (({value}) > {hi} -> {hi} : ({value})))"
            else:
                guard.append(f"({lo} <= {value} && {value} <= {hi})")
            body.append(f"t{i} = {value}")
            if isinstance(eff.target, Var):
                target = _name(var.name)
            elif isinstance(index := f(eff.target.index), Const):
                target = expr(model, Index(eff.target.name, index))
            else:       # effects are simultaneous: an index reads the state before any write
                body.append(f"i{i} = {expr(model, index)}")
                lo = var.index_lo()
                target = f"{_name(var.name)}[i{i}{f' - {lo}' if lo else ''}]"
            assigns.append(f"{target} = t{i}")
        stmts = "; ".join(body + assigns) or "skip"
        label = action.name + (f"({', '.join(map(str, combo))})" if combo else "")
        out.append(f"  :: d_step {{ {' && '.join(guard)} -> {stmts} }}  /* {label} */")
    return out
