"""Two writes of one `do:` (or of one turn-change block: `turn_end`, `round_end`, `on_turn_start`, a phase's
`on_enter`) that can name the same element: `hand[p]` and `hand[q]` where `p` may equal `q`. Where the
indices are equal the later key wins and the earlier write is dropped without a word (docs/LANGUAGE.md,
Actions); the loader warns, at the later key, with the values that make them equal.

A pair is warned about only where some values of what the two writes read make the indices equal, pass
the guard and give the two writes different values there. What they read is tried value by value: state
variables, the action's choices, and elements of arrays: an element at a computed index (`hand[aim[p]]`)
once the values tried fix its index, a quantifier with literal bounds (`count(p in player: out[p])`) as
the terms it stands for (at most `MAX_TERMS`, and none nested in it). Each part of the guard and each
value is decided on those values; where one is left undecided (it reads something that cannot be tried)
the pair is not warned about, nor where an index leaves its array (a model error, reported when the
search meets it). The two values are compared as written: clamped where the variable clamps; where one
leaves the range otherwise, the move is blocked (a gap) or not allowed, so nothing is dropped. So
indices the guard keeps apart (`when: "t != active"`) or a later value that agrees in that case (`if t ==
active then 1 else ...`) give no warning, and a warning always comes with values of the variables' types
that show it.

A literal index is judged against a computed one (`hand[0]` and `hand[q]`), except the writes of a `for`
block over the array (`for p in player: {ready[p]: false}`) followed by a write to one element
(`ready[active]: true`): a default for every element, then the exception, as the designer means it. A write
followed by such a block (which always drops it where the values differ) is warned about once, at the
block's first element it meets. Two literal indices never meet (the loader refuses one element written
twice).

A pair tries at most `MAX_CASES` values; past that it is not judged. A model's pairs together try at most
`TOTAL_CASES` values (each pair counts one at least): past that, one warning says which block's pairs were
left unjudged, so a rule of a thousand effects loads in bounded time; past `MAX_WARNINGS` pairs warned
about, one warning says the check stopped there. The parameters are at the loaded values (defaults, `-D`,
or the printed ones), and the loaded reading is judged: a model of several readings names it in each
warning (`(in reading strict)`); `check`, `lint` and `report` load every reading, and `merge_readings`
makes one warning of those that differ only in it (naming the readings, none where it is all of them).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import assert_never

from verifier.diagnostics import Diagnostic, Span
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
    QuantKind,
    Var,
    apply_op,
    conjuncts,
    map_expr,
    pretty,
    substitute,
    walk,
)
from verifier.ir.model import ActionKind, Assign, Choice, EnumType, IntType, Model, Overflow, Type, type_bounds

READING = " (in reading {})"            # ends a warning of a model of several readings: the one judged
READING_RE = re.compile(r" \(in reading (\w+)\)$")
MAX_CASES = 4096        # values tried at most per pair
TOTAL_CASES = 10_000     # values tried at most for all pairs of a model together
MAX_WARNINGS = 10        # pairs warned about at most in a model
MAX_TERMS = 64           # a quantifier (not nesting another) is tried as its terms where it spans at most this many values
NO = Const(0)           # false, as `_settle` writes it

Warn = Callable[[str, Span | None, str], None]
Case = dict[Expr, int]


@dataclass(frozen=True)
class Writes:
    """One block of simultaneous writes: an action's `do:` (its guard and choices), or a turn-change block."""

    what: str                       # how a warning names it: `give`, `turn_end`, `on_enter of phase Draw`
    effects: tuple[Assign, ...]
    guard: Expr = TRUE
    choices: tuple[Choice, ...] = ()
    span: Span | None = None


class _OutOfCases(Exception):
    """The pair has more values to try than `MAX_CASES`."""


def check_writes(model: Model, warn: Warn, blocks: Sequence[Writes] = ()) -> None:
    """Warn about each pair of writes of a rule action's `do:`, or of one of the turn-change `blocks` as
    written (not yet composed into the turn change), that can name one element (parameters at their
    defaults), within `TOTAL_CASES` values tried."""
    concrete = model.instantiate()
    reading = READING.format(model.variant) if len(model.variants) >= 2 and model.variant else ""
    groups = [Writes(a.name, a.effects, a.guard, a.choices, a.span)
              for a in concrete.actions if a.kind is ActionKind.RULE]
    groups += [Writes(b.what, tuple(_fixed(concrete, a) for a in b.effects), span=b.span) for b in blocks]
    left, warned = TOTAL_CASES, 0
    for group in groups:
        shown: set[tuple[int, Span | None]] = set()     # a write warned about against a `for` block's key
        for first, later in _pairs(concrete, group.effects):
            if (id(first), later.span) in shown:
                continue
            if left <= 0 or warned == MAX_WARNINGS:
                why = f"{TOTAL_CASES:,} values tried" if left <= 0 else f"{MAX_WARNINGS} pairs warned about"
                warn(f"{group.what}: not every pair of its writes was checked for naming one element (the "
                     f"check stops after {why} in a model){reading}", group.span,
                     "mend the pairs above, or split the block's writes into smaller actions")
                return
            case, tried = _clash(concrete, group, first, later)
            left -= max(tried, 1)
            if case is not None:
                shown.add((id(first), later.span))
                warned += 1
                message, span, hint = _words(concrete, group, first, later, case)
                warn(message + reading, span, hint)


def merge_readings(warnings: Sequence[Diagnostic], readings: Sequence[str]) -> list[Diagnostic]:
    """`warnings` of the loads of a model's readings (`readings`: every one it declares), each once: those that
    differ only in the reading they name (READING) as one, naming the readings it holds in (none where it
    holds in every declared one)."""
    found: dict[tuple[str, Span | None, str | None], list[str]] = {}
    out: list[Diagnostic | tuple[str, Span | None, str | None]] = []
    for w in warnings:
        m = READING_RE.search(w.message)
        if m is None or m.group(1) not in readings:
            if w not in out:
                out.append(w)
            continue
        key = (w.message[:m.start()], w.span, w.hint)
        if key not in found:
            found[key] = []
            out.append(key)
        if m.group(1) not in found[key]:
            found[key].append(m.group(1))
    merged = []
    for item in out:
        if isinstance(item, Diagnostic):
            merged.append(item)
            continue
        message, span, hint = item
        names = found[item]
        said = "" if len(names) == len(readings) else \
            READING.format(names[0]) if len(names) == 1 else f" (in readings {', '.join(names)})"
        merged.append(Diagnostic(message + said, span, hint, "warning"))
    return merged


def _fixed(model: Model, a: Assign) -> Assign:
    target = Index(a.target.name, model.fix_params(a.target.index), span=a.target.span) \
        if isinstance(a.target, Index) else a.target
    return Assign(target, model.fix_params(a.value), span=a.span)


def _pairs(model: Model, effects: Sequence[Assign]) -> Iterator[tuple[Assign, Assign]]:
    """The pairs of writes to one array, in the order written, that are judged: not two literal indices,
    and not a `for` block's write (its key's place shared by writes to several elements) followed by
    another."""
    by_array: dict[str, list[Assign]] = {}
    for e in effects:
        if isinstance(e.target, Index) and _plain_array(model, e.target.name):
            by_array.setdefault(e.target.name, []).append(e)
    for writes in by_array.values():
        places = [w.span for w in writes if isinstance(w.target, Index) and isinstance(w.target.index, Const)]
        swept = {p for p in places if p is not None and places.count(p) > 1}
        computed = [k for k, w in enumerate(writes) if not _literal(w)]
        for k, first in enumerate(writes):
            if first.span in swept:
                continue
            later = range(k + 1, len(writes)) if not _literal(first) else (j for j in computed if j > k)
            for j in later:
                if writes[j].target != first.target:
                    yield first, writes[j]


def _literal(a: Assign) -> bool:
    return isinstance(a.target, Index) and isinstance(a.target.index, Const)


def _plain_array(model: Model, name: str) -> bool:
    var = model.var(name)
    return not (var.implicit or var.until_of or var.seq_length is not None)


def _clash(model: Model, group: Writes, first: Assign, later: Assign) -> tuple[Case | None, int]:
    """Values of what the two indices read under which they name one element and the two writes differ
    (only the values the indices read: None where there are none, or the pair is not judged), and how
    many values were tried."""
    i, j = first.target, later.target
    assert isinstance(i, Index) and isinstance(j, Index)
    var = model.var(i.name)
    if _bounds(var.type) is None:
        return None, 0                # a range left to a free parameter
    search = _Search(model, group, list(conjuncts(group.guard)), (first.value, later.value), type_bounds(var.type),
                     var.overflow is Overflow.CLAMP)
    try:
        case = search.meet(i.index, j.index, {})
    except _OutOfCases:
        return None, search.tried
    return case, search.tried


@dataclass
class _Search:
    """A depth-first search over the values of what a pair reads: first what the two indices read, until
    both are literals; where they are equal, what the guard and the two values read, until each is
    decided."""

    model: Model
    group: Writes
    guards: list[Expr]
    values: tuple[Expr, Expr]
    bounds: tuple[int, int]         # the target's range, and whether it clamps a value outside it
    clamps: bool
    tried: int = 0

    def leaf(self) -> None:
        self.tried += 1
        if self.tried > MAX_CASES:
            raise _OutOfCases

    def meet(self, left: Expr, right: Expr, case: Case) -> Case | None:
        """A case (what the indices read) where the indices meet and the writes differ, or None. `left` and
        `right` are the indices settled with `case` put in so far (each step puts in one value more)."""
        a, b = _value(left, case), _value(right, case)
        if isinstance(a, Const) and isinstance(b, Const):
            if a != b:
                self.leaf()
                return None
            if not self.differ([_value(g, case) for g in self.guards],
                                         [_value(v, case) for v in self.values], case):
                return None
            return case
        atom = next((x for side in (a, b) for x in self.atoms(side)), None)
        if atom is None:
            self.leaf()               # an index that reads what cannot be tried: the pair is not judged
            return None
        for value in self.domain(atom) or ():
            found = self.meet(a, b, {**case, atom: value})
            if found is not None:
                return found
        return None

    def differ(self, guards: list[Expr], values: list[Expr], case: Case) -> bool:
        """Whether some values of what the guard and the two writes read, beside `case`, pass the guard and
        give the writes different values (`guards` and `values` settled with `case` put in so far)."""
        guards = [g for g in (_value(g, case) for g in guards) if g != Const(1)]
        if NO in guards:
            self.leaf()
            return False
        x, y = values = [_value(v, case) for v in values]
        pending = guards[:1]
        if not pending:
            if isinstance(x, Const) and isinstance(y, Const):
                self.leaf()
                a, b = self.written(x.value), self.written(y.value)
                return a is not None and b is not None and a != b
            if x == y:
                self.leaf()
                return False
            pending = values
        atom = next((a for part in pending for a in self.atoms(part)), None)
        if atom is None:
            self.leaf()               # a part that reads what cannot be tried: undecided, no warning
            return False
        return any(self.differ(guards, values, {**case, atom: value}) for value in self.domain(atom) or ())

    def written(self, value: int) -> int | None:
        """What writing `value` leaves in the target: clamped where its variable clamps; None where it leaves the
        range otherwise (the move is then blocked or not allowed: nothing is dropped)."""
        lo, hi = self.bounds
        if lo <= value <= hi:
            return value
        return min(max(value, lo), hi) if self.clamps else None

    def atoms(self, e: Expr) -> Iterator[Expr]:
        """What `e` (settled) reads that can be tried: state variables, choices, elements at a literal index
        within the array; in the order written."""
        for node in walk(e):
            triable = isinstance(node, Var | Local) or (isinstance(node, Index) and isinstance(node.index, Const))
            if triable and self.domain(node) is not None:
                yield node

    def domain(self, atom: Expr) -> range | None:
        """The values `atom` can take: its choice's or variable's type (None: not one to try)."""
        if isinstance(atom, Local):
            choice = next((c for c in self.group.choices if c.name == atom.name), None)
            return None if choice is None else _bounds(choice.type)
        if isinstance(atom, Var):
            return _bounds(self.model.var(atom.name).type)
        if isinstance(atom, Index) and isinstance(atom.index, Const):
            var = self.model.var(atom.name)
            lo = var.index_lo()
            return _bounds(var.type) if 0 <= atom.index.value - lo < var.size() else None
        return None


def _bounds(t: Type) -> range | None:
    if isinstance(t, IntType) and not (isinstance(t.lo, Const) and isinstance(t.hi, Const)):
        return None                          # bounds left to a free parameter
    lo, hi = type_bounds(t)
    return range(lo, hi + 1)


def _value(e: Expr, case: Case) -> Expr:
    """`e` settled with the values of `case` put in, again until nothing changes (an element at a computed
    index is read once the values put in fix the index)."""
    out = _settle(e)
    while True:
        again = _settle(_put(out, case))
        if again == out:
            return out
        out = again


def _put(e: Expr, case: Case) -> Expr:
    """`e` with each atom of `case` replaced by its value (a quantifier's own name left alone in its body)."""
    def fn(node: Expr) -> Expr | None:
        if node in case:
            return Const(case[node])
        if isinstance(node, Quant) and Local(node.var) in case:
            inner = {k: v for k, v in case.items() if k != Local(node.var)}
            return Quant(node.kind, node.var, _put(node.lo, case), _put(node.hi, case), _put(node.body, inner),
                         span=node.span)
        return None

    return map_expr(e, fn)


_JOIN = {QuantKind.FORALL: Op.AND, QuantKind.EXISTS: Op.OR, QuantKind.SUM: Op.ADD, QuantKind.COUNT: Op.ADD}


def _settle(e: Expr) -> Expr:
    """`e` with every operator on literals evaluated, `if` on a literal condition and `and`/`or` with a
    deciding literal cut short, a quantifier with literal bounds written as its terms; booleans as 0/1
    literals, so that equal values compare equal."""
    match e:
        case Const():
            return Const(int(e.value))
        case Index():
            index = _settle(e.index)
            return e if index == e.index else Index(e.name, index, span=e.span)
        case Quant():
            return _settle_quant(e)
        case App():
            return _settle_app(e)
        case Var() | Param() | Local():
            return e
        case _:
            assert_never(e)


def _settle_quant(e: Quant) -> Expr:
    lo, hi = _settle(e.lo), _settle(e.hi)
    if not (isinstance(lo, Const) and isinstance(hi, Const)) or hi.value - lo.value >= MAX_TERMS or \
            any(isinstance(n, Quant) for n in walk(e.body)):
        return e                  # not tried: nested quantifiers would multiply their terms
    terms = [substitute(e.body, {e.var: Const(k)}) for k in range(lo.value, hi.value + 1)]
    if e.kind is QuantKind.COUNT:
        terms = [App(Op.ITE, (t, Const(1), Const(0))) for t in terms]
    if not terms:
        return Const(int(e.kind is QuantKind.FORALL))
    return _settle(terms[0] if len(terms) == 1 else App(_JOIN[e.kind], tuple(terms)))


def _settle_app(e: App) -> Expr:
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


def _shown(model: Model, e: Expr) -> str:
    """An expression as the model writes it: a 2-D array's element with its two indices."""
    def fn(node: Expr) -> Expr | None:
        if isinstance(node, Index) and model.var(node.name).dims:
            parts = model.var(node.name).split_index(node.index)
            if len(parts) == 2:
                return Var(f"{node.name}[{_shown(model, parts[0])}][{_shown(model, parts[1])}]")
        return None

    return pretty(map_expr(e, fn), model.enum_value_name if model.enums else None)


def _named_value(model: Model, group: Writes, atom: Expr, v: int) -> str:
    """A value tried, as the model writes it: an enum's value by its name."""
    if isinstance(atom, Local):
        t: Type | None = next((c.type for c in group.choices if c.name == atom.name), None)
    else:
        assert isinstance(atom, Var | Index)
        t = model.var(atom.name).type
    return t.values[v] if isinstance(t, EnumType) and 0 <= v < len(t.values) else str(v)


def _words(model: Model, group: Writes, first: Assign, later: Assign, case: Case) -> tuple[str, Span | None, str]:
    what = group.what
    when = ", ".join(sorted(f"{_shown(model, a)} = {_named_value(model, group, a, v)}" for a, v in case.items()))
    i, j = _shown(model, first.target), _shown(model, later.target)
    line = f" (line {first.span.line})" if first.span is not None else ""
    assert isinstance(first.target, Index) and isinstance(later.target, Index)
    var = model.var(first.target.name)
    pairs = [(_shown(model, b), _shown(model, a)) for a, b in
             zip(var.split_index(first.target.index), var.split_index(later.target.index)) if a != b] or \
        [(_shown(model, later.target.index), _shown(model, first.target.index))]    # a 2-D index as written
    same = " and ".join(f"{b} == {a}" for b, a in pairs)
    apart = " or ".join(f"{b} != {a}" for b, a in pairs)
    return (f"{what}: {j} and {i}{line} name one element when {same} (e.g. {when}); there the later key "
            f"wins and the write to {i} is dropped",
            later.span,
            f"give {j} the value meant for that case too (\"if {same} then ... else ...\"), or rule the case "
            f"out in when: (\"{apart}\")")
