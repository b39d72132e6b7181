"""Two writes of one action's `do:` that can name the same element: `hand[p]` and `hand[q]` with
`p` and `q` read from the state or a choice. Where the indices are equal the later key wins and the
earlier write is dropped without a word (docs/LANGUAGE.md, Actions); the loader warns, at the later
key, with the values that make them equal.

A pair is warned about only where some values of what the two indices read (state variables, the
action's choices, elements at a literal index) make them equal, pass every part of the guard that
reads nothing else, and give the two writes different values there: indices the guard keeps apart
(`when: "t != active"`), or a later value that agrees in that case (`if t == active then 1 else ...`),
give no warning. Indices that read anything else (an element at a computed index, a quantifier), a
literal index (`for p in player:` blocks, `hand[0]`), or more than `MAX_CASES` values to try are not
judged. A model's pairs together try at most `TOTAL_CASES` values (each pair counts one at least): past
that, one warning says which action's pairs were left unjudged, so a rule of a thousand effects loads in
bounded time; past `MAX_WARNINGS` pairs warned about, one warning says the check stopped there.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator

from verifier.diagnostics import Span
from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Quant, Var, apply_op, map_expr, pretty, walk
from verifier.ir.model import Action, ActionKind, Assign, IntType, Model, Type, type_bounds

MAX_CASES = 4096        # values of what a pair's indices read, tried at most per pair
TOTAL_CASES = 10_000     # values tried at most for all pairs of a model together
MAX_WARNINGS = 10        # pairs warned about at most in a model
NO = Const(0)           # false, as `_settle` writes it

Warn = Callable[[str, Span | None, str], None]


def check_writes(model: Model, warn: Warn) -> None:
    """Warn about each pair of writes of a rule action's `do:` that can name one element (parameters at
    their defaults), within `TOTAL_CASES` values tried."""
    concrete = model.instantiate()
    left, warned = TOTAL_CASES, 0
    for action in concrete.actions:
        if action.kind is not ActionKind.RULE:
            continue
        plain = [e for e in action.effects if isinstance(e.target, Index) and _plain_array(concrete, e.target.name)]
        for first, later in itertools.combinations(plain, 2):
            if left <= 0 or warned == MAX_WARNINGS:
                why = f"{TOTAL_CASES:,} values tried" if left <= 0 else f"{MAX_WARNINGS} pairs warned about"
                warn(f"{action.name}: not every pair of its writes was checked for naming one element (the "
                     f"check stops after {why} in a model)", action.span,
                     "mend the pairs above, or split the action's do: into smaller actions")
                return
            case, tried = _clash(concrete, action, first, later)
            left -= max(tried, 1)
            if case is not None:
                warned += 1
                warn(*_words(action, first, later, case))


def _plain_array(model: Model, name: str) -> bool:
    var = model.var(name)
    return not (var.implicit or var.until_of or var.seq_length is not None)


def _clash(model: Model, action: Action, first: Assign, later: Assign) -> tuple[dict[Expr, int] | None, int]:
    """Values of what the two indices read under which they name one element and write different
    values (None: no such values, or the pair is not judged), and how many values were tried."""
    i, j = first.target, later.target
    assert isinstance(i, Index) and isinstance(j, Index)
    if i.name != j.name or i.index == j.index:
        return None, 0
    read_i, read_j = _atoms(i.index), _atoms(j.index)
    if not read_i or not read_j or None in read_i | read_j:       # a literal index, or one not judged
        return None, 0
    atoms = [a for a in read_i | read_j if a is not None]
    domains = [_domain(model, action, a) for a in atoms]
    if any(d is None for d in domains) or math.prod(len(d) for d in domains if d is not None) > MAX_CASES:
        return None, 0
    guards = [g for g in _conjuncts(action.guard) if _atoms(g) <= set(atoms)]
    tried = 0
    for values in itertools.product(*(d for d in domains if d is not None)):
        tried += 1
        case = dict(zip(atoms, values))
        if any(_settle(_put(g, case)) == NO for g in guards):
            continue
        left, right = _settle(_put(i.index, case)), _settle(_put(j.index, case))
        if isinstance(left, Const) and left == right and _settle(_put(first.value, case)) != \
                _settle(_put(later.value, case)):
            return case, tried
    return None, tried


def _atoms(e: Expr) -> set[Expr | None]:
    """What `e` reads: state variables, choices and elements at a literal index; None for anything
    else (an element at a computed index, a quantifier's bound name or the quantifier itself)."""
    out: set[Expr | None] = set()
    for node in walk(e):
        if isinstance(node, Var | Local):
            out.add(node)
        elif isinstance(node, Index):
            out.add(node if isinstance(node.index, Const) else None)
        elif isinstance(node, Quant):
            out.add(None)
    return out


def _domain(model: Model, action: Action, atom: Expr) -> range | None:
    """The values `atom` can take: its choice's or variable's type (None: not bounded by literals)."""
    if isinstance(atom, Local):
        choice = next((c for c in action.choices if c.name == atom.name), None)
        return None if choice is None else _bounds(choice.type)
    if isinstance(atom, Var | Index):
        return _bounds(model.var(atom.name).type)
    return None


def _bounds(t: Type) -> range | None:
    if isinstance(t, IntType) and not (isinstance(t.lo, Const) and isinstance(t.hi, Const)):
        return None                          # bounds left to a free parameter
    lo, hi = type_bounds(t)
    return range(lo, hi + 1)


def _conjuncts(e: Expr) -> Iterator[Expr]:
    if isinstance(e, App) and e.op is Op.AND:
        for a in e.args:
            yield from _conjuncts(a)
    else:
        yield e


def _put(e: Expr, case: dict[Expr, int]) -> Expr:
    return map_expr(e, lambda node: Const(case[node]) if node in case else None)


def _settle(e: Expr) -> Expr:
    """`e` with every operator on literals evaluated, `if` on a literal condition and `and`/`or` with a
    deciding literal cut short; booleans as 0/1 literals, so that equal values compare equal."""
    if isinstance(e, Const):
        return Const(int(e.value))
    if not isinstance(e, App):
        return e
    if e.op is Op.ITE:
        cond = _settle(e.args[0])
        if isinstance(cond, Const):
            return _settle(e.args[1] if cond.value else e.args[2])
        return App(e.op, (cond, _settle(e.args[1]), _settle(e.args[2])))
    args = [_settle(a) for a in e.args]
    if e.op in (Op.AND, Op.OR):
        decider = Const(int(e.op is Op.OR))
        if decider in args:
            return decider
        args = [a for a in args if a != Const(1 - decider.value)] or [Const(1 - decider.value)]
        if len(args) == 1:
            return args[0]
    if all(isinstance(a, Const) for a in args):
        try:
            return Const(int(apply_op(e.op, [a.value for a in args])))      # type: ignore[union-attr]
        except ArithmeticError:
            pass
    return App(e.op, tuple(args))


def _words(action: Action, first: Assign, later: Assign, case: dict[Expr, int]) -> tuple[str, Span | None, str]:
    when = ", ".join(f"{pretty(a)} = {v}" for a, v in sorted(case.items(), key=lambda kv: pretty(kv[0])))
    i, j = pretty(first.target), pretty(later.target)
    line = f" (line {first.span.line})" if first.span is not None else ""
    assert isinstance(first.target, Index) and isinstance(later.target, Index)
    same = f"{pretty(later.target.index)} == {pretty(first.target.index)}"
    return (f"{action.name}: {j} and {i}{line} name one element when {same} (e.g. {when}); there the later key "
            f"wins and the write to {i} is dropped",
            later.span,
            f"give {j} the value meant for that case too (\"if {same} then ... else ...\"), or rule the case "
            f"out in when: (\"{pretty(later.target.index)} != {pretty(first.target.index)}\")")

