"""Single-point mutants of a model's rules, and how to apply one.

Mutants are made on the model as written, before the phase sugar is expanded
(`lang.loader.Edit`), so that a flipped `must` or `mandatory`, a removed action
or a swapped pair of phases is desugared like the designer's own text. Each
`Mutant` is plain data (it travels to forked workers and into JSON); `apply`
rewrites a freshly read model and phase tree with it.

Operators (the `operator` names), over the rule actions and the turn structure
(each phase's `on_enter`, `exit_when` and `next:`/`next_any:` entries, and the
`turn_end`, `round_end`, `on_turn_start` and `next_player` blocks):
  relational      a comparison of a condition (a guard, an exit_when, a next entry's
                  when): < <-> <=, > <-> >=, == <-> !=
  literal         an integer literal of a condition or an effect's value, plus or minus one;
                  also an assignment's literal index (`hand[0]:`), to another element of
                  the array that the same effects do not assign already (a 2-D element
                  one along its row or its column, never into the next row)
  drop-conjunct   one conjunct of a condition left out (a one-condition one: dropped)
  drop-effect     one assignment of an action's or a block's effects left out
  drop-next       one entry of a next:/next_any: list (an `otherwise` too) left out
  modality        must <-> may
  mandatory       a phase or step made optional, or an optional one mandatory
  swap-phases     two adjacent sibling phases (or steps) in the other order
  remove-action   a rule action taken out of the rules
  move-phase      an action of one leaf phase moved to the leaf phase before or after it
                  (in the order the phases are written)
  init            a variable's initial value changed: an integer plus or minus one (within its
                  type), a boolean negated, an enum value to the next value; an array's one
                  written value changed for every element
  reset           a variable's `reset:` changed to another kind (none, turn, own_turn where
                  the language allows it)
  choice-range    a `choose:` range's lower or upper bound plus or minus one (never emptied)
  swap-next       the targets of two entries of a next:/next_any: list exchanged
  constant        a rule number at one of its uses, one more or one less: a parameter, or a
                  constant made of parameters (`CARDS: "OPENING + DECK"`), in a condition, an
                  effect's value or an initial value of which it is a part

The operators of the list after remove-action make their mutants after all the others', and
`constant` after those, so the ids of the earlier operators' mutants (`m12`) stay what they were
before the later ones existed. Constants (`constants:`, integer `define:`s) are folded into every
expression that names them when the model is read: a number is a literal there (the `literal`
operator), an expression of parameters a parameter site (the `constant` operator). A use is
changed, not the number everywhere: a parameter set to another value everywhere is another
instance of the same rules (what `--param`/`-D` explores), not a changed rule.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import combinations, pairwise
from typing import TypeGuard, assert_never

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
    map_expr,
    params_of,
    pretty,
)
from verifier.ir.model import (
    PHASE_ENUM,
    PHASE_VAR,
    Action,
    Assign,
    BoolType,
    Choice,
    Definition,
    EnumType,
    IntType,
    Modality,
    Model,
    Reset,
    Variable,
    type_bounds,
)
from verifier.lang.phases import PhaseSpec, TurnBlocks
from verifier.lang.sequences import is_pop_fill
from verifier.trace import Names

OPERATORS = ("relational", "literal", "drop-conjunct", "drop-effect", "drop-next", "modality", "mandatory",
             "swap-phases", "remove-action", "move-phase", "init", "reset", "choice-range", "swap-next",
             "constant")
NUMBER_OPS = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD, Op.NEG, Op.MIN, Op.MAX, Op.ABS})
BLOCKS = ("turn_end", "round_end", "on_turn_start", "next_player")   # TurnBlocks field of each: turn_end,
                                                                  # round_end, turn_start, next_player

SWAPPED_OPS = {Op.LT: Op.LE, Op.LE: Op.LT, Op.GT: Op.GE, Op.GE: Op.GT, Op.EQ: Op.NE, Op.NE: Op.EQ}


@dataclass(frozen=True)
class Mutant:
    """One single-point change: what it changes (words), the rule and the place it touches,
    and the edit itself: where (`block`, with `action` or the phase in `phases`, and `entry`),
    then `part`/`effect`/`path`/`new`, or `phases` for mandatory and swap-phases; a variable's
    mutants name it in `variable` (init: `entry` the element, -1 all, `new` the value; reset: `reset`),
    a choice-range mutant its choice in `choice` (`part` "lo" or "hi", `new` the bound), a
    move-phase mutant its new phase in `phases`, a swap-next mutant its two entries `entry`, `other`."""

    number: int
    operator: str
    subject: str                       # the action, phase or block changed
    description: str                   # one line: the change, in the model's syntax
    rule: str = ""                     # the citation of the action or phase ("Step 5: ...")
    span: Span | None = None           # where in the model file
    block: str = "action"              # action | phases | on_enter | exit_when | next | turn_end | round_end
    action: str | None = None          # | on_turn_start
    entry: int = -1                    # which entry of a next:/next_any: list
    part: str = ""                     # "guard" | "effect" | "target" (expression mutants)
    effect: int = -1                   # which assignment, for parts "effect"/"target" and drop-effect
    path: tuple[int, ...] = ()         # the node of that expression replaced (child indices)
    new: Expr | None = None            # its replacement
    phases: tuple[str, ...] = ()       # the phase of on_enter/exit_when/next; mandatory: (phase,);
                                       # swap-phases: (first, second); move-phase: (new phase,)
    variable: str = ""                 # init, reset: the variable changed
    reset: str = ""                    # reset: the new kind (a `Reset` value)
    choice: str = ""                   # choice-range: the choice whose bound changes
    other: int = -1                    # swap-next: the entry whose target `entry`'s is exchanged with
    define: str = ""                   # the `define:` whose body (at one use) the change lies in
    define_at: Span | None = None      # that define's name in the model file

    @property
    def id(self) -> str:
        return f"m{self.number}"


@dataclass(frozen=True)
class Said:
    """An expression as the model file writes it: enum values by name, a 2-D array's element with its two
    indices (`cards[active][hand]`, not its flat position); `grids` the 2-D arrays, whose flat position's
    arithmetic is the loader's, not a rule's (no mutant changes it); `bodies` each place (file, line,
    column) of a `define:` body's text, with its definition."""

    enum_names: Callable[[str, int], str] | None
    written: Names
    bodies: dict[tuple[str, int, int], Definition]

    @property
    def grids(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.written.grids)

    def __call__(self, e: Expr) -> str:
        return pretty(map_expr(e, _by_name), self.enum_names, self.written)


def _by_name(node: Expr) -> Expr | None:
    """A number the model wrote as a name (`PLAYERS`, a constant), written so (a parameter's node prints
    its name)."""
    return Param(node.written) if isinstance(node, Const) and node.written else None


def _writer(model: Model) -> Said:
    bodies = {(d.file, line, col): d for d in model.definitions for line, col in d.positions}
    return Said(model.enum_value_name if model.enums else None, Names.as_written(model), bodies)


def _defined_in(node: Expr, said: Said) -> Definition | None:
    """The `define:` whose body wrote `node` (the innermost, where one define uses another); None for
    a node the action, phase or block itself wrote. Defines are expanded where used, so a change there
    changes the define at that one use."""
    span = node.span
    return None if span is None else said.bodies.get((span.file, span.line, span.col))


def _told(node: Expr, owner: str, what: str, change: str, said: Said) -> dict:
    """A mutant's `description` (and its define, where the changed text is a define's body): `{owner}:
    {what} {change}`, or `define NAME (file:line), at its use in {owner}'s {what}: {change}`."""
    d = _defined_in(node, said)
    if d is None:
        return {"description": f"{owner}: {what} {change}"}
    line = f"{d.file}:{d.span.line}" if d.span is not None else d.file
    return {"description": f"define {d.name} ({line}), at its use in {owner}'s {what}: {change}",
            "define": d.name, "define_at": d.span}


# ---------------------------------------------------------------- generating

def generate(model: Model, specs: list[PhaseSpec], blocks: TurnBlocks) -> list[Mutant]:
    """Every mutant of the rule actions, the phase tree and the turn blocks of a model as written
    (what `lang.loader.Edit` receives), in file order per operator."""
    said = _writer(model)
    found: list[dict] = []
    for a in model.actions:
        found += _action_mutants(a, model, said)
    found += _phase_mutants(specs, model, said)
    for name, effects in zip(BLOCKS, (blocks.turn_end, blocks.round_end, blocks.turn_start, blocks.next_player), strict=True):
        found += _effect_mutants(effects, {"subject": name, "block": name}, name, "effect", model, said)
    found += _move_mutants(model, specs)
    found += _variable_mutants(model, bool(specs), said)
    for a in model.actions:
        found += _choice_mutants(a, said)
    found += _swap_next_mutants(specs)
    found += _constant_mutants(model, specs, blocks, said)
    return [Mutant(number=k, **m) for k, m in enumerate(found, 1)]


def _action_mutants(a: Action, model: Model, said: Said) -> list[dict]:
    base = {"subject": a.name, "rule": str(a.rule) if a.rule else "", "action": a.name, "span": a.span}
    out = _condition_mutants(a.guard, base, a.name, "guard", said)
    out += _effect_mutants(a.effects, base, a.name, "effect", model, said)
    if a.modality in (Modality.MUST, Modality.MAY):
        flipped = Modality.MAY if a.modality is Modality.MUST else Modality.MUST
        out.append({**base, "operator": "modality",
                    "description": f"{a.name}: {a.modality.value} -> {flipped.value}"})
    out.append({**base, "operator": "remove-action", "description": f"{a.name}: removed from the rules"})
    return out


def _condition_mutants(e: Expr, base: dict, owner: str, what: str, said: Said) -> list[dict]:
    """relational, literal and drop-conjunct mutants of the condition `e` ("{owner}: {what} '...'")."""
    out: list[dict] = []
    for path, node in _sites(e, said.grids):
        if isinstance(node, App) and node.op in SWAPPED_OPS:
            swapped = App(SWAPPED_OPS[node.op], node.args, span=node.span)
            out.append({**base, "operator": "relational", "part": "guard", "path": path, "new": swapped,
                        "span": node.span or base["span"],
                        **_told(node, owner, what, f"'{said(node)}' -> '{said(swapped)}'", said)})
    for path, node in _sites(e, said.grids):
        if _is_number(node):
            context = _node_at(e, path[:-1])     # shown with its operation
            for new in _plus_minus(node):
                change = f"'{said(context)}' -> '{said(_replace_at(context, path[-1:], new))}'"
                out.append({**base, "operator": "literal", "part": "guard", "path": path, "new": new,
                            "span": node.span or base["span"], **_told(context, owner, what, change, said)})
    conjuncts = e.args if isinstance(e, App) and e.op is Op.AND else (() if e == TRUE else (e,))
    for k, c in enumerate(conjuncts):
        told = _told(c, owner, what, f"'{said(c)}' left out", said) if _defined_in(c, said) else \
            _told(e, owner, what, f"'{said(e)}' without '{said(c)}'", said)
        out.append({**base, "operator": "drop-conjunct", "part": "guard", "path": (k,) if len(conjuncts) > 1 else (),
                    "new": TRUE, "span": c.span or base["span"], **told})
    return out


def _effect_mutants(effects: tuple[Assign, ...], base: dict, owner: str, what: str, model: Model,
                    said: Said) -> list[dict]:
    """literal mutants of each value and literal index of the effects, and each assignment left out."""
    out: list[dict] = []
    base = {"span": None, **base}
    written = {said(a.target) for a in effects}
    for k, eff in enumerate(effects):
        if _lowered(eff, model):     # a sequence's length or a pop's fill, a duration's record: not the designer's
            continue
        span = eff.span or base["span"]
        for path, node in _sites(eff.value, said.grids):
            if _is_number(node):
                for new in _plus_minus(node):
                    out.append({**base, "operator": "literal", "part": "effect", "effect": k, "path": path,
                                "new": new, "span": node.span or span,
                                **_value_told(eff, path, new, owner, what, said)})
        for new_target, new in _other_elements(eff.target, model, written, said):
            out.append({**base, "operator": "literal", "part": "target", "effect": k, "new": new, "span": span,
                        "description": f"{owner}: {what} '{_assign_text(eff, said)}' -> "
                                       f"'{said(new_target)} := {said(eff.value)}'"})
        out.append({**base, "operator": "drop-effect", "effect": k, "span": span,
                    "description": f"{owner}: {what} '{_assign_text(eff, said)}' left out"})
    return out


def _value_told(eff: Assign, path: tuple[int, ...], new: Expr, owner: str, what: str, said: Said) -> dict:
    """The description of an effect's value changed at `path`: the whole assignment before and after,
    or, where the change lies in a define's body, the operation around it in the define."""
    context = _node_at(eff.value, path[:-1]) if path else eff.value
    if _defined_in(context, said):
        changed = _replace_at(context, path[-1:], new) if path else new
        return _told(context, owner, f"{what} on {said(eff.target)}", f"'{said(context)}' -> '{said(changed)}'", said)
    prefix = f"{said(eff.target)} := "
    return {"description": f"{owner}: {what} '{prefix}{said(eff.value)}' -> "
                           f"'{prefix}{said(_replace_at(eff.value, path, new))}'"}


def _lowered(eff: Assign, model: Model) -> bool:
    """An assignment the loader writes, not the designer: a sequence's length, the first value a `pop` puts
    back (`sequences.is_pop_fill`), a duration's record."""
    var = next((v for v in model.variables if v.name == eff.target.name), None)
    return var is not None and (var.until_of is not None or var.name in _lengths(model)
                                or (var.seq_length is not None and is_pop_fill(var, eff)))


def _other_elements(target: Expr, model: Model, written: set[str], said: Said) -> Iterator[tuple[Index, Const]]:
    """The target with one of its literal indices plus or minus one, where that is an element of the
    array that the same effects do not assign (a clash or an index out of range is no single-point rule
    change). A 2-D element moves along its row or its column, never from a row's end into the next row."""
    if not isinstance(target, Index) or not _is_number(target.index):
        return
    var = next((v for v in model.variables if v.name == target.name), None)
    if var is None or var.index is None:
        return
    for position in _neighbours(var, target.index.value):
        new = Const(position, span=target.index.span)
        moved = Index(target.name, new, span=target.span)
        if said(moved) not in written:
            yield moved, new


def _neighbours(var: Variable, position: int) -> list[int]:
    """The positions of the elements one index away from element `position` (flat for a 2-D array:
    the next and previous in its row, then in its column), inside the array."""
    lo, size = var.index_lo(), len(var.init)
    if not var.dims:
        return [p for p in (position + 1, position - 1) if lo <= p < lo + size]
    lo2, hi2 = type_bounds(var.dims[1])
    width = hi2 - lo2 + 1
    row, column = divmod(position - lo, width)
    moves = [(row, column + 1), (row, column - 1), (row + 1, column), (row - 1, column)]
    return [lo + r * width + c for r, c in moves if 0 <= c < width and 0 <= r < size // width]


def _is_number(node: Expr) -> TypeGuard[Const]:
    """A number the model writes (a literal, or a constant's name: `HAND_SIZE` -> `6`), not an enum value,
    a truth value or `PLAYERS`."""
    return isinstance(node, Const) and node.enum is None and not node.is_bool and node.written != "PLAYERS"


def _plus_minus(node: Const) -> tuple[Const, Const]:
    return Const(node.value + 1, span=node.span), Const(node.value - 1, span=node.span)


def _node_at(e: Expr, path: tuple[int, ...]) -> Expr:
    for k in path:
        e = children(e)[k]
    return e


def _phase_mutants(specs: list[PhaseSpec], model: Model, said: Said) -> list[dict]:
    out: list[dict] = []
    for s in specs:
        rule = _spec_rule(s)
        span = s.node.child("name").span if s.node.get("name") is not None else s.node.span
        words = "optional" if s.mandatory else "mandatory"
        out.append({"operator": "mandatory", "subject": s.name, "rule": rule, "span": span, "block": "phases",
                    "phases": (s.name,), "description": f"phase {s.name}: made {words}"})
    siblings: dict[str | None, list[PhaseSpec]] = {}
    for s in specs:
        siblings.setdefault(s.parent, []).append(s)
    for group in siblings.values():
        for first, second in pairwise(group):
            span = first.node.child("name").span if first.node.get("name") is not None else first.node.span
            out.append({"operator": "swap-phases", "subject": f"{first.name}|{second.name}", "block": "phases",
                        "rule": _spec_rule(first), "span": span, "phases": (first.name, second.name),
                        "description": f"phases {first.name} and {second.name}: played in the other order"})
    for s in specs:
        span = s.node.child("name").span if s.node.get("name") is not None else s.node.span
        base = {"subject": s.name, "rule": _spec_rule(s), "span": span, "phases": (s.name,)}
        owner = f"phase {s.name}"
        out += _effect_mutants(s.on_enter, {**base, "block": "on_enter"}, owner, "on_enter", model, said)
        if s.exit_when != TRUE:
            out += _condition_mutants(s.exit_when, {**base, "block": "exit_when"}, owner, "exit_when", said)
        for k, entry in enumerate(s.next or ()):
            key = "next_any" if s.node.get("next_any") is not None else "next"
            here = {**base, "block": "next", "entry": k, "span": entry.span or span}
            where = "otherwise" if entry.otherwise else "to"
            if entry.when is not None:
                out += _condition_mutants(entry.when, here, owner, f"{key} {where} {entry.to} when", said)
            out.append({**here, "operator": "drop-next",
                        "description": f"{owner}: {key} entry '{where}: {entry.to}"
                                       + (f" when {said(entry.when)}" if entry.when is not None else "")
                                       + "' left out"})
    return out


def _spec_rule(s: PhaseSpec) -> str:
    rule = s.node.value.get("rule") if s.node.is_map else None
    if isinstance(rule, dict):
        return str(rule.get("section", ""))
    return str(rule) if rule is not None else ""


def _assign_text(a: Assign, said: Said) -> str:
    return f"{said(a.target)} := {said(a.value)}"


def _sites(e: Expr, grids: frozenset[str], path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Expr]]:
    """Every node of `e` with its path (child indices from the root), pre-order; not inside the flat position
    of an element of a 2-D array in `grids` (the loader's arithmetic)."""
    yield path, e
    if isinstance(e, Index) and e.name in grids:
        return
    for k, child in enumerate(children(e)):
        yield from _sites(child, grids, (*path, k))


def _base(a: Action) -> dict:
    return {"subject": a.name, "rule": str(a.rule) if a.rule else "", "action": a.name, "span": a.span}


def _move_mutants(model: Model, specs: list[PhaseSpec]) -> list[dict]:
    """Each action of one leaf phase, in the leaf before it and in the leaf after it."""
    leaves = [s.name for s in specs if s.is_leaf]
    out: list[dict] = []
    for a in model.actions:
        if a.phase is None or a.phase not in leaves:
            continue
        k = leaves.index(a.phase)
        for other in (leaves[k - 1] if k > 0 else None, leaves[k + 1] if k + 1 < len(leaves) else None):
            if other is not None:
                out.append({**_base(a), "operator": "move-phase", "phases": (other,),
                            "description": f"{a.name}: phase {a.phase} -> {other}"})
    return out


def _variable_mutants(model: Model, phased: bool, said: Said) -> list[dict]:
    """init mutants of every variable the designer wrote, then reset mutants (in a model with turns)."""
    written = [v for v in model.variables
               if not (v.implicit or v.seq_length or v.until_of or v.name in _lengths(model))]
    out: list[dict] = []
    for v in written:
        base = {"subject": v.name, "block": "variable", "variable": v.name, "span": v.span}
        values = [(-1, v.init[0])] if len(set(v.init)) == 1 else \
            [(k, e) for k, e in enumerate(v.init)]
        for k, e in values:
            if e is None:
                continue
            where = v.name if k < 0 else f"{v.name}{v.element_label(v.index_lo() + k)}"
            for new in _other_values(e, v.type):
                out.append({**base, "operator": "init", "entry": k, "new": new,
                            "description": f"{where}: init {_value_text(e, v.type, said)} -> {_value_text(new, v.type, said)}"})
    if not phased:
        return out
    for v in written:
        if any(e is None for e in v.init):
            continue
        kinds = [r for r in Reset if r is not v.reset
                 and (r is not Reset.OWN_TURN or (v.by_player and len(set(v.init)) == 1))]
        for r in kinds:
            out.append({"subject": v.name, "block": "variable", "variable": v.name, "span": v.span,
                        "operator": "reset", "reset": r.value,
                        "description": f"{v.name}: {_reset_text(v.reset)} -> {_reset_text(r)}"})
    return out


def _reset_text(r: Reset) -> str:
    return "no reset" if r is Reset.NEVER else f"reset: {r.value}"


def _lengths(model: Model) -> set[str]:
    return {v.seq_length for v in model.variables if v.seq_length}


def _other_values(e: Expr, t: IntType | EnumType | BoolType) -> list[Expr]:
    """The initial values one change away from `e`: a negated boolean, the next enum value (cyclic),
    an integer plus or minus one that stays within its type (where the bounds are known)."""
    if isinstance(t, BoolType):
        return [Const(1 - e.value, is_bool=True, span=e.span)] if isinstance(e, Const) else []
    if isinstance(t, EnumType):
        if not isinstance(e, Const) or len(t.values) < 2:
            return []
        return [Const((e.value + 1) % len(t.values), enum=e.enum, span=e.span)]
    if not _is_number(e):
        return [App(Op.ADD, (e, Const(1))), App(Op.SUB, (e, Const(1)))]
    lo, hi = t.lo, t.hi
    return [new for new in _plus_minus(e)
            if not (isinstance(lo, Const) and new.value < lo.value) and not (isinstance(hi, Const) and new.value > hi.value)]


def _value_text(e: Expr, t: IntType | EnumType | BoolType, said: Said) -> str:
    if isinstance(t, EnumType) and isinstance(e, Const):
        return t.values[e.value]
    return said(e)


def _choice_mutants(a: Action, said: Said) -> list[dict]:
    """Each integer choice's lower and upper bound plus or minus one, where the range stays non-empty
    (`player` choices, 0..players-1, are the players, not a rule's range)."""
    out: list[dict] = []
    for c in a.choices:
        if not isinstance(c.type, IntType) or _is_players(c):
            continue
        lo, hi = c.type.lo, c.type.hi
        for part, bound in (("lo", lo), ("hi", hi)):
            for new in _bounds_moved(bound):
                new_lo, new_hi = (new, hi) if part == "lo" else (lo, new)
                if isinstance(new_lo, Const) and isinstance(new_hi, Const) and new_lo.value > new_hi.value:
                    continue
                out.append({**_base(a), "operator": "choice-range", "choice": c.name, "part": part, "new": new,
                            "span": c.span or a.span,
                            "description": f"{a.name}: choose {c.name}: {said(lo)}..{said(hi)} -> "
                                           f"{said(new_lo)}..{said(new_hi)}"})
    return out


def _is_players(c: Choice) -> bool:
    """A `player` choice: the loader gives it the bounds 0 and players - 1 without a place in the file."""
    assert isinstance(c.type, IntType)
    return isinstance(c.type.lo, Const) and c.type.lo.span is None and c.type.hi.span is None


def _bounds_moved(bound: Expr) -> list[Expr]:
    if _is_number(bound):
        return list(_plus_minus(bound))
    return [App(Op.ADD, (bound, Const(1))), App(Op.SUB, (bound, Const(1)))]


def _swap_next_mutants(specs: list[PhaseSpec]) -> list[dict]:
    """Two entries of a next:/next_any: list with their targets exchanged (where the targets differ
    and the entries' conditions do: two unconditional alternatives exchanged are the same rule)."""
    out: list[dict] = []
    for s in specs:
        entries = s.next or ()
        key = "next_any" if s.node.get("next_any") is not None else "next"
        span = s.node.child("name").span if s.node.get("name") is not None else s.node.span
        for i, j in combinations(range(len(entries)), 2):
            first, second = entries[i], entries[j]
            if first.to == second.to or (s.alternatives and first.when == second.when
                                         and first.otherwise == second.otherwise):
                continue
            out.append({"operator": "swap-next", "subject": s.name, "rule": _spec_rule(s), "block": "next",
                        "phases": (s.name,), "entry": i, "other": j, "span": first.span or span,
                        "description": f"phase {s.name}: {key} targets {first.to} and {second.to} exchanged"})
    return out


def _constant_mutants(model: Model, specs: list[PhaseSpec], blocks: TurnBlocks, said: Said) -> list[dict]:
    """Each use of a rule number (a parameter, or a constant of parameters) one more and one less: in
    the actions' guards and effects, the phases' on_enter, exit_when and next conditions, the turn
    blocks, then the variables' initial values (where the number is a part of the value: a value
    that is the number alone is the `init` operator's)."""
    out: list[dict] = []
    for a in model.actions:
        out += _number_mutants(a.guard, _base(a), a.name, "guard", said)
        out += _number_effect_mutants(a.effects, _base(a), a.name, "effect", model, said)
    for s in specs:
        span = s.node.child("name").span if s.node.get("name") is not None else s.node.span
        base = {"subject": s.name, "rule": _spec_rule(s), "span": span, "phases": (s.name,)}
        owner = f"phase {s.name}"
        out += _number_effect_mutants(s.on_enter, {**base, "block": "on_enter"}, owner, "on_enter", model, said)
        out += _number_mutants(s.exit_when, {**base, "block": "exit_when"}, owner, "exit_when", said)
        key = "next_any" if s.node.get("next_any") is not None else "next"
        for k, entry in enumerate(s.next or ()):
            if entry.when is not None:
                here = {**base, "block": "next", "entry": k, "span": entry.span or span}
                out += _number_mutants(entry.when, here, owner, f"{key} to {entry.to} when", said)
    for name, effects in zip(BLOCKS, (blocks.turn_end, blocks.round_end, blocks.turn_start, blocks.next_player), strict=True):
        out += _number_effect_mutants(effects, {"subject": name, "block": name}, name, "effect", model, said)
    for v in model.variables:
        if v.implicit or v.seq_length or v.until_of or v.name in _lengths(model):
            continue
        base = {"subject": v.name, "block": "variable", "variable": v.name, "span": v.span}
        values = [(-1, v.init[0])] if len(set(v.init)) == 1 else list(enumerate(v.init))
        for k, e in values:
            if e is None:
                continue
            where = v.name if k < 0 else f"{v.name}{v.element_label(v.index_lo() + k)}"
            for path, new in _number_changes(e):
                if path:
                    changed = _replace_at(e, path, new)
                    out.append({**base, "operator": "constant", "entry": k, "new": changed,
                                "description": f"{where}: init {said(e)} -> {said(changed)}"})
    return out


def _number_mutants(e: Expr, base: dict, owner: str, what: str, said: Said) -> list[dict]:
    """constant mutants of the condition `e`, each shown with the operation around the changed number."""
    out: list[dict] = []
    for path, new in _number_changes(e):
        context = _node_at(e, path[:-1]) if path else e
        changed = _replace_at(context, path[-1:], new) if path else new
        out.append({**base, "operator": "constant", "part": "guard", "path": path, "new": new,
                    "span": _node_at(e, path).span or base["span"],
                    **_told(context, owner, what, f"'{said(context)}' -> '{said(changed)}'", said)})
    return out


def _number_effect_mutants(effects: tuple[Assign, ...], base: dict, owner: str, what: str,
                           model: Model, said: Said) -> list[dict]:
    """constant mutants of each effect's value (not of the helpers the loader writes)."""
    out: list[dict] = []
    base = {"span": None, **base}
    for k, eff in enumerate(effects):
        if _lowered(eff, model):
            continue
        for path, new in _number_changes(eff.value):
            out.append({**base, "operator": "constant", "part": "effect", "effect": k, "path": path, "new": new,
                        "span": _node_at(eff.value, path).span or eff.span or base["span"],
                        **_value_told(eff, path, new, owner, what, said)})
    return out


def _number_changes(e: Expr) -> Iterator[tuple[tuple[int, ...], Expr]]:
    """Each largest part of `e` made of parameters and literals alone (a rule number: `HAND`,
    `OPENING + DECK` folded from a constant) with that number plus one, then minus one."""
    for path, node in _number_sites(e):
        yield path, App(Op.ADD, (node, Const(1)), span=node.span)
        yield path, App(Op.SUB, (node, Const(1)), span=node.span)


def _number_sites(e: Expr, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Expr]]:
    if _is_rule_number(e):
        yield path, e
        return
    for k, child in enumerate(children(e)):
        yield from _number_sites(child, (*path, k))


def _is_rule_number(e: Expr) -> bool:
    """Whether `e` is an integer made of parameters and literals, with at least one parameter."""
    def numeric(x: Expr) -> bool:
        match x:
            case Param():
                return True
            case Const():
                return _is_number(x)
            case App():
                return x.op in NUMBER_OPS and all(numeric(a) for a in x.args)
            case _:
                return False
    return numeric(e) and bool(params_of(e))


# ---------------------------------------------------------------- applying

def apply(mutant: Mutant, model: Model, specs: list[PhaseSpec],
          blocks: TurnBlocks) -> tuple[Model, list[PhaseSpec], TurnBlocks]:
    """The model as written, its phase tree and its turn blocks with `mutant`'s change (a `lang.loader.Edit`)."""
    m = mutant
    if m.block == "variable":
        return replace(model, variables=tuple(_mutate_variable(m, v) if v.name == m.variable else v
                                              for v in model.variables)), specs, blocks
    if m.operator == "mandatory":
        return model, [replace(s, mandatory=not s.mandatory) if s.name == m.phases[0] else s for s in specs], blocks
    if m.operator == "swap-phases":
        return (*_swap(model, specs, *m.phases), blocks)
    if m.block in BLOCKS:
        field = "turn_start" if m.block == "on_turn_start" else m.block
        return model, specs, replace(blocks, **{field: _edit_effects(getattr(blocks, field), m)})
    if m.block in ("on_enter", "exit_when", "next"):
        return model, [_mutate_phase(m, s) if s.name == m.phases[0] else s for s in specs], blocks
    if m.operator == "remove-action":
        return replace(model, actions=tuple(a for a in model.actions if a.name != m.action)), specs, blocks
    return replace(model, actions=tuple(_mutate_action(m, a) if a.name == m.action else a
                                        for a in model.actions)), specs, blocks


def _mutate_variable(m: Mutant, v: Variable) -> Variable:
    if m.operator == "reset":
        return replace(v, reset=Reset(m.reset))
    assert m.new is not None
    init = tuple(m.new if m.entry in (-1, k) else e for k, e in enumerate(v.init))
    return replace(v, init=init)


def _mutate_action(m: Mutant, a: Action) -> Action:
    if m.operator == "move-phase":
        return replace(a, phase=m.phases[0])
    if m.operator == "choice-range":
        assert m.new is not None
        return replace(a, choices=tuple(_moved_bound(c, m.part, m.new) if c.name == m.choice else c
                                        for c in a.choices))
    if m.operator == "modality":
        return replace(a, modality=Modality.MAY if a.modality is Modality.MUST else Modality.MUST)
    if m.part == "guard":
        return replace(a, guard=_edit_condition(a.guard, m))
    return replace(a, effects=_edit_effects(a.effects, m))


def _mutate_phase(m: Mutant, s: PhaseSpec) -> PhaseSpec:
    if m.block == "on_enter":
        return replace(s, on_enter=_edit_effects(s.on_enter, m))
    if m.block == "exit_when":
        return replace(s, exit_when=_edit_condition(s.exit_when, m))
    entries = list(s.next or ())
    if m.operator == "swap-next":
        first, second = entries[m.entry], entries[m.other]
        entries[m.entry], entries[m.other] = replace(first, to=second.to), replace(second, to=first.to)
    elif m.operator == "drop-next":
        del entries[m.entry]
    else:
        when = entries[m.entry].when
        assert when is not None
        entries[m.entry] = replace(entries[m.entry], when=_edit_condition(when, m))
    return replace(s, next=tuple(entries))


def _moved_bound(c: Choice, part: str, new: Expr) -> Choice:
    assert isinstance(c.type, IntType)
    moved = IntType(new, c.type.hi) if part == "lo" else IntType(c.type.lo, new)
    return replace(c, type=moved)


def _edit_condition(e: Expr, m: Mutant) -> Expr:
    assert m.new is not None
    changed = _replace_at(e, m.path, m.new)
    if m.operator == "drop-conjunct" and isinstance(changed, App) and changed.op is Op.AND:
        changed = conj(*changed.args)          # TRUE in place of the conjunct: fold it away
    return changed


def _edit_effects(effects: tuple[Assign, ...], m: Mutant) -> tuple[Assign, ...]:
    if m.operator == "drop-effect":
        return effects[:m.effect] + effects[m.effect + 1:]
    assert m.new is not None
    out = list(effects)
    eff = out[m.effect]
    if m.part == "target":
        assert isinstance(eff.target, Index)
        out[m.effect] = replace(eff, target=Index(eff.target.name, m.new, span=eff.target.span))
    else:
        out[m.effect] = replace(eff, value=_replace_at(eff.value, m.path, m.new))
    return tuple(out)


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
