"""Single-point mutants of a model's rules, and how to apply one.

Mutants are made on the model as written, before the phase sugar is expanded
(`lang.loader.Edit`), so that a flipped `must` or `mandatory`, a removed action
or a swapped pair of phases is desugared like the designer's own text. Each
`Mutant` is plain data (it travels to forked workers and into JSON); `apply`
rewrites a freshly read model and phase tree with it.

Operators (the `operator` names):
  relational      a comparison of a guard: < <-> <=, > <-> >=, == <-> !=
  literal         an integer literal of a guard or an effect, plus or minus one
  drop-conjunct   one conjunct of a guard left out (a one-condition guard: the guard dropped)
  drop-effect     one assignment of an effect left out
  modality        must <-> may
  mandatory       a phase or step made optional, or an optional one mandatory
  swap-phases     two adjacent sibling phases (or steps) in the other order
  remove-action   a rule action taken out of the rules
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import assert_never

from verifier.diagnostics import Span
from verifier.ir.expr import (
    TRUE,
    App,
    Const,
    Expr,
    Index,
    Local,
    Op,
    Param,
    Quant,
    Var,
    children,
    conj,
    pretty,
)
from verifier.ir.model import PHASE_ENUM, PHASE_VAR, Action, Assign, Modality, Model
from verifier.lang.phases import PhaseSpec

OPERATORS = ("relational", "literal", "drop-conjunct", "drop-effect", "modality", "mandatory", "swap-phases",
             "remove-action")

SWAPPED_OPS = {Op.LT: Op.LE, Op.LE: Op.LT, Op.GT: Op.GE, Op.GE: Op.GT, Op.EQ: Op.NE, Op.NE: Op.EQ}


@dataclass(frozen=True)
class Mutant:
    """One single-point change: what it changes (words), the rule and the place it touches,
    and the edit itself (`action`/`part`/`effect`/`path`/`new`, or `phases`)."""

    number: int
    operator: str
    subject: str                       # the action or phase changed
    description: str                   # one line: the change, in the model's syntax
    rule: str = ""                     # the citation of the action or phase ("Step 5: ...")
    span: Span | None = None           # where in the model file
    action: str | None = None
    part: str = ""                     # "guard" | "effect" (expression mutants)
    effect: int = -1                   # which assignment, for part "effect" and drop-effect
    path: tuple[int, ...] = ()         # the node of that expression replaced (child indices)
    new: Expr | None = None            # its replacement
    phases: tuple[str, ...] = ()       # mandatory: (phase,); swap-phases: (first, second)

    @property
    def id(self) -> str:
        return f"m{self.number}"


# ---------------------------------------------------------------- generating

def generate(model: Model, specs: list[PhaseSpec]) -> list[Mutant]:
    """Every mutant of the rule actions and the phase tree of a model as written (the
    model `lang.loader.Edit` receives), in file order per operator."""
    found: list[dict] = []
    for a in model.actions:
        found += _action_mutants(a)
    found += _phase_mutants(specs)
    return [Mutant(number=k, **m) for k, m in enumerate(found, 1)]


def _action_mutants(a: Action) -> list[dict]:
    rule = str(a.rule) if a.rule else ""
    base = {"subject": a.name, "rule": rule, "action": a.name}
    out: list[dict] = []
    guard_text = pretty(a.guard)
    for path, node in _sites(a.guard):
        if isinstance(node, App) and node.op in SWAPPED_OPS:
            new = App(SWAPPED_OPS[node.op], node.args, span=node.span)
            out.append({**base, "operator": "relational", "part": "guard", "path": path, "new": new,
                        "span": node.span or a.span,
                        "description": f"{a.name}: guard '{pretty(node)}' -> '{pretty(new)}'"})
    out += _literal_mutants(a.guard, base, "guard", -1, a)
    conjuncts = a.guard.args if isinstance(a.guard, App) and a.guard.op is Op.AND else \
        (() if a.guard == TRUE else (a.guard,))
    for k, c in enumerate(conjuncts):
        path = (k,) if len(conjuncts) > 1 else ()
        out.append({**base, "operator": "drop-conjunct", "part": "guard", "path": path, "new": TRUE,
                    "span": c.span or a.span,
                    "description": f"{a.name}: guard '{guard_text}' without '{pretty(c)}'"})
    for k, eff in enumerate(a.effects):
        out += _literal_mutants(eff.value, base, "effect", k, a)
        out.append({**base, "operator": "drop-effect", "effect": k, "span": eff.span or a.span,
                    "description": f"{a.name}: effect '{_assign_text(eff)}' left out"})
    if a.modality in (Modality.MUST, Modality.MAY):
        flipped = Modality.MAY if a.modality is Modality.MUST else Modality.MUST
        out.append({**base, "operator": "modality", "span": a.span,
                    "description": f"{a.name}: {a.modality.value} -> {flipped.value}"})
    out.append({**base, "operator": "remove-action", "span": a.span,
                "description": f"{a.name}: removed from the rules"})
    return out


def _literal_mutants(e: Expr, base: dict, part: str, effect: int, a: Action) -> list[dict]:
    out = []
    prefix = "" if part == "guard" else f"{pretty(a.effects[effect].target)} := "
    for path, node in _sites(e):
        if isinstance(node, Const) and node.enum is None and not node.is_bool:
            # a guard's literal is shown with its operation, an effect's with the whole assignment
            shown = path[:-1] if part == "guard" else ()
            context = _node_at(e, shown)
            for delta in (1, -1):
                new = Const(node.value + delta, span=node.span)
                changed = _replace_at(context, path[len(shown):], new)
                out.append({**base, "operator": "literal", "part": part, "effect": effect, "path": path, "new": new,
                            "span": node.span or a.span,
                            "description": f"{a.name}: {part} '{prefix}{pretty(context)}' -> "
                                           f"'{prefix}{pretty(changed)}'"})
    return out


def _node_at(e: Expr, path: tuple[int, ...]) -> Expr:
    for k in path:
        e = children(e)[k]
    return e


def _phase_mutants(specs: list[PhaseSpec]) -> list[dict]:
    out: list[dict] = []
    for s in specs:
        rule = _spec_rule(s)
        span = s.node.child("name").span if s.node.get("name") is not None else s.node.span
        words = "optional" if s.mandatory else "mandatory"
        out.append({"operator": "mandatory", "subject": s.name, "rule": rule, "span": span, "phases": (s.name,),
                    "description": f"phase {s.name}: made {words}"})
    siblings: dict[str | None, list[PhaseSpec]] = {}
    for s in specs:
        siblings.setdefault(s.parent, []).append(s)
    for group in siblings.values():
        for first, second in pairwise(group):
            span = first.node.child("name").span if first.node.get("name") is not None else first.node.span
            out.append({"operator": "swap-phases", "subject": f"{first.name}|{second.name}",
                        "rule": _spec_rule(first), "span": span, "phases": (first.name, second.name),
                        "description": f"phases {first.name} and {second.name}: played in the other order"})
    return out


def _spec_rule(s: PhaseSpec) -> str:
    rule = s.node.value.get("rule") if s.node.is_map else None
    if isinstance(rule, dict):
        return str(rule.get("section", ""))
    return str(rule) if rule is not None else ""


def _assign_text(a: Assign) -> str:
    return f"{pretty(a.target)} := {pretty(a.value)}"


def _sites(e: Expr, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Expr]]:
    """Every node of `e` with its path (child indices from the root), pre-order."""
    yield path, e
    for k, child in enumerate(children(e)):
        yield from _sites(child, (*path, k))


# ---------------------------------------------------------------- applying

def apply(mutant: Mutant, model: Model, specs: list[PhaseSpec]) -> tuple[Model, list[PhaseSpec]]:
    """The model as written and its phase tree with `mutant`'s change (a `lang.loader.Edit`)."""
    if mutant.operator == "mandatory":
        return model, [replace(s, mandatory=not s.mandatory) if s.name == mutant.phases[0] else s for s in specs]
    if mutant.operator == "swap-phases":
        return _swap(model, specs, *mutant.phases)
    if mutant.operator == "remove-action":
        return replace(model, actions=tuple(a for a in model.actions if a.name != mutant.action)), specs
    return replace(model, actions=tuple(_mutate_action(mutant, a) if a.name == mutant.action else a
                                        for a in model.actions)), specs


def _mutate_action(m: Mutant, a: Action) -> Action:
    if m.operator == "modality":
        return replace(a, modality=Modality.MAY if a.modality is Modality.MUST else Modality.MUST)
    if m.operator == "drop-effect":
        return replace(a, effects=a.effects[:m.effect] + a.effects[m.effect + 1:])
    assert m.new is not None
    if m.part == "guard":
        guard = _replace_at(a.guard, m.path, m.new)
        if m.operator == "drop-conjunct" and isinstance(guard, App) and guard.op is Op.AND:
            guard = conj(*guard.args)          # TRUE in place of the conjunct: fold it away
        return replace(a, guard=guard)
    effects = list(a.effects)
    effects[m.effect] = replace(effects[m.effect], value=_replace_at(effects[m.effect].value, m.path, m.new))
    return replace(a, effects=tuple(effects))


def _replace_at(e: Expr, path: tuple[int, ...], new: Expr) -> Expr:
    if not path:
        return new
    k, rest = path[0], path[1:]
    match e:
        case Index():
            return Index(e.name, _replace_at(e.index, rest, new), span=e.span)
        case App():
            args = list(e.args)
            args[k] = _replace_at(args[k], rest, new)
            return App(e.op, tuple(args), span=e.span)
        case Quant():
            parts = [e.lo, e.hi, e.body]
            parts[k] = _replace_at(parts[k], rest, new)
            return Quant(e.kind, e.var, parts[0], parts[1], parts[2], span=e.span)
        case Const() | Var() | Param() | Local():
            raise AssertionError(f"a path leads below a leaf: {path}")
        case _:
            assert_never(e)


def _swap(model: Model, specs: list[PhaseSpec], first: str, second: str) -> tuple[Model, list[PhaseSpec]]:
    """`first` and its steps, then `second` and its steps, in the other order; the phase
    values keep their numbers, and play starts at the new first leaf."""
    fresh = [replace(s, children=list(s.children)) for s in specs]
    by_name = {s.name: s for s in fresh}

    def block(name: str) -> tuple[int, int]:
        start = next(i for i, s in enumerate(fresh) if s.name == name)
        end = start + 1
        while end < len(fresh) and _within(fresh[end].name, name, by_name):
            end += 1
        return start, end

    (a0, a1), (b0, b1) = block(first), block(second)
    fresh = fresh[:a0] + fresh[b0:b1] + fresh[a0:a1] + fresh[b1:]
    parent = by_name[first].parent
    if parent is not None:
        kids = by_name[parent].children
        i = kids.index(first)
        kids[i], kids[i + 1] = kids[i + 1], kids[i]
    leaves = [s.name for s in fresh if s.is_leaf]
    phase = model.var(PHASE_VAR)
    values = list(phase.type.values)                    # type: ignore[union-attr]
    start = replace(phase, init=(Const(values.index(leaves[0]), enum=PHASE_ENUM),))
    model = replace(model, variables=tuple(start if v.name == PHASE_VAR else v for v in model.variables))
    return model, fresh


def _within(name: str, ancestor: str, by_name: dict[str, PhaseSpec]) -> bool:
    node = by_name[name].parent
    while node is not None:
        if node == ancestor:
            return True
        node = by_name[node].parent
    return False
