"""Declarations of the IR: types, variables, actions, phases and the Model.

A Model is plain guarded commands over finite variables. The phase sugar of
the model language is already desugared here: the implicit variables `phase`
and `active` are ordinary variables, and phase changes are ordinary actions of
kind ADVANCE / TURN_END. The phase list and edges are kept as metadata for
analyses and diagrams.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from enum import Enum

from verifier.diagnostics import Span
from verifier.ir.expr import FALSE, TRUE, App, Const, Expr, Index, Op, Param, Var, conj, disj, eq, fold, map_expr

PHASE_VAR = "phase"
ACTIVE_VAR = "active"
PHASE_ENUM = "Phase"


# ---------------------------------------------------------------- types

@dataclass(frozen=True)
class BoolType:
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class IntType:
    """Integers lo..hi inclusive; bounds may mention parameters until instantiated."""

    lo: Expr
    hi: Expr

    def bounds(self) -> tuple[int, int]:
        """Concrete bounds; only valid on an instantiated model."""
        assert isinstance(self.lo, Const) and isinstance(self.hi, Const), "model not instantiated"
        return self.lo.value, self.hi.value

    def __str__(self) -> str:
        from verifier.ir.expr import pretty
        return f"{pretty(self.lo)}..{pretty(self.hi)}"


@dataclass(frozen=True)
class EnumType:
    name: str
    values: tuple[str, ...]
    span: Span | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return self.name


Type = BoolType | IntType | EnumType


def type_bounds(t: Type) -> tuple[int, int]:
    """Concrete run-time range of a type (bools 0..1, enums 0..n-1)."""
    if isinstance(t, BoolType):
        return 0, 1
    if isinstance(t, EnumType):
        return 0, len(t.values) - 1
    return t.bounds()


def type_range(t: Type) -> tuple[Expr, Expr]:
    """A type's range as expressions, parameters left as written (bools 0..1, enums 0..n-1)."""
    if isinstance(t, BoolType):
        return Const(0), Const(1)
    if isinstance(t, EnumType):
        return Const(0), Const(len(t.values) - 1)
    return t.lo, t.hi


# ---------------------------------------------------------------- declarations

@dataclass(frozen=True)
class Citation:
    """Which rule an element encodes: a section and a short paraphrase in our own words."""

    section: str
    text: str = ""

    def __str__(self) -> str:
        return f"{self.section}: {self.text}" if self.text else self.section


@dataclass(frozen=True)
class ParamDecl:
    """A parameter with its default; `lo`/`hi` constrain it when it is left free."""

    name: str
    default: int
    lo: int | None = None
    hi: int | None = None
    doc: str = ""
    span: Span | None = field(default=None, compare=False, repr=False)


class Overflow(Enum):
    """What happens when an effect would take a variable outside its range."""

    UNSPECIFIED = "unspecified"   # the rules are silent: a gap; the transition is blocked
    CLAMP = "clamp"               # keep the nearest bound (the excess is discarded)
    FORBID = "forbid"             # the action is not allowed


class Reset(Enum):
    NEVER = "never"
    TURN = "turn"        # back to the initial value when the turn passes ("until end of turn")
    OWN_TURN = "own_turn"  # per player: an element back to its initial value when that player's turn starts


@dataclass(frozen=True)
class Variable:
    """A state variable; an array when `index` is set (its elements share `type`).

    `init` has one entry per element (one for a scalar): an expression for the
    initial value, or None for "any value in range" (an initial set).

    A 2-D array (`per: [player, Zone]`) has its two index domains in `dims`; it is
    stored flat: `index` is 0..n1*n2-1 and element [i][j] sits at (i - lo1) * n2 + (j - lo2).
    Engines see an ordinary array; `dims` only names the elements for display.
    A bounded sequence is an array (bottom first) with a length variable (`seq_length`),
    see `verifier.lang.sequences`; engines see the array and the length.
    """

    name: str
    type: Type
    index: IntType | EnumType | None = None
    init: tuple[Expr | None, ...] = (None,)
    overflow: Overflow = Overflow.UNSPECIFIED
    overflow_rule: Citation | None = None
    reset: Reset = Reset.NEVER
    by_player: bool = False     # the index ranges over players
    dims: tuple[IntType | EnumType, ...] = ()   # a 2-D array's index domains (`index` is then flat)
    rows_by_player: bool = field(default=False, compare=False)   # a 2-D array `per: [player, D]`, display only
    seq_length: str | None = None   # a bounded sequence (`type: seq[T, 0..N]`): the name of its length variable
    until_of: str | None = None     # records, per element of that variable, whose next turn ends its value
    implicit: bool = False      # introduced by the phase sugar (phase, active)
    holds_player: bool = False  # `type: player`: its values are players (rotated by `symmetry: players`)
    doc: str = ""
    span: Span | None = field(default=None, compare=False, repr=False)
    label: str = field(default="", compare=False)      # its name in the page's words (`label:`), display only
    value_names: tuple[str, ...] = field(default=(), compare=False)   # an int range's values named (`values:`)

    def size(self) -> int:
        if self.index is None:
            return 1
        lo, hi = type_bounds(self.index)
        return hi - lo + 1

    def index_lo(self) -> int:
        return 0 if self.index is None else type_bounds(self.index)[0]

    def element_label(self, i: int) -> str:
        """How element `i` (an index value; flat for a 2-D array) is written: ``[1]``, ``[red]``, ``[0][Hand]``."""
        if self.dims:
            n2 = type_bounds(self.dims[1])[1] - type_bounds(self.dims[1])[0] + 1
            return "".join(_index_label(d, type_bounds(d)[0] + k) for d, k in zip(self.dims, divmod(i, n2)))
        assert self.index is not None
        return _index_label(self.index, i)


    def split_index(self, e: Expr) -> tuple[Expr, ...]:
        """The indices a read of this array was written with: `(e,)` for a 1-D array; for a 2-D one the
        two indices the flat position `e` was computed from (`lang/arrays.flat_index`), or `(e,)` where
        its shape is not one the lowering writes."""
        if not self.dims:
            return (e,)
        (lo1, _), (lo2, hi2) = type_bounds(self.dims[0]), type_bounds(self.dims[1])
        n2 = hi2 - lo2 + 1
        if isinstance(e, App) and e.op is Op.ITE and len(e.args) == 3:
            e = e.args[1]            # the flat position, guarded by the inner index's range
        if isinstance(e, Const) and not e.is_bool:
            i, j = divmod(e.value, n2)
            return self._outer(Const(i + lo1)), self._inner(Const(j + lo2))
        if not (isinstance(e, App) and e.op is Op.ADD and len(e.args) == 2):
            return (e,)
        row, inner = e.args
        if isinstance(row, Const) and not row.is_bool and row.value % n2 == 0:
            outer: Expr = Const(row.value // n2 + lo1)
        elif isinstance(row, App) and row.op is Op.MUL and row.args[1:] == (Const(n2),):
            outer = _unshift(row.args[0], lo1)
        else:
            return (e,)
        return self._outer(outer), self._inner(_unshift(inner, lo2))

    def _outer(self, e: Expr) -> Expr:
        return _named(self.dims[0], e)

    def _inner(self, e: Expr) -> Expr:
        return _named(self.dims[1], e)


def _unshift(e: Expr, lo: int) -> Expr:
    """`e + lo` where `e` is `x - lo` (how a domain not starting at 0 is shifted), else `e` (lo is 0)."""
    if lo and isinstance(e, App) and e.op is Op.SUB and e.args[1:] == (Const(lo),):
        return e.args[0]
    return fold(App(Op.ADD, (e, Const(lo)))) if lo else e


def _named(t: IntType | EnumType, e: Expr) -> Expr:
    """A literal index of an enum domain as the enum's value (so that it is written by name)."""
    if isinstance(t, EnumType) and isinstance(e, Const) and e.enum is None and not e.is_bool:
        return Const(e.value, enum=t.name)
    return e


def _index_label(t: IntType | EnumType, i: int) -> str:
    return f"[{t.values[i]}]" if isinstance(t, EnumType) else f"[{i}]"


class Modality(Enum):
    MUST = "must"           # while enabled, the phase cannot be left
    MAY = "may"
    MUST_NOT = "must-not"   # a prohibition: never fires; its guard says when the action is forbidden


RULES = "rules"     # a chooser: the rules decide (hidden information, a printed value, a fixed procedure)
RANDOM = "random"   # a chooser: chance decides
UNSTATED = "unstated"   # a chooser: the page does not say who picks (the nondeterministic-must analysis reports it)


class ActionKind(Enum):
    RULE = "rule"           # written by the designer
    ADVANCE = "advance"     # implicit: leave a phase for the next one (possibly skipping optional ones)
    TURN_END = "turn-end"   # implicit: the last phase ends, the turn passes to the next player


@dataclass(frozen=True)
class Assign:
    target: Var | Index
    value: Expr
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Choice:
    """A nondeterministic choice lo..hi bound to `name` in the guard and effects."""

    name: str
    type: IntType | EnumType | BoolType
    span: Span | None = field(default=None, compare=False, repr=False)
    value_names: tuple[str, ...] = field(default=(), compare=False)   # an int range's values named (`values:`)


@dataclass(frozen=True)
class Action:
    """A guarded command: for each value of the choices where `guard` holds,
    apply all `effects` simultaneously (right-hand sides read the old state)."""

    name: str
    guard: Expr = TRUE
    effects: tuple[Assign, ...] = ()
    choices: tuple[Choice, ...] = ()
    modality: Modality = Modality.MAY
    phase: str | None = None
    actor: Expr | None = None        # which player acts; None = the active player (or nobody)
    rule: Citation | None = None
    kind: ActionKind = ActionKind.RULE
    target_phase: str | None = None  # for ADVANCE / TURN_END: the phase entered
    doc: str = ""
    span: Span | None = field(default=None, compare=False, repr=False)
    phases: tuple[str, ...] = ()     # `phase: [A, B]` or `{not: [...]}`: its leaf phases (then `phase` is None)
    chooser: Expr | str | None = None  # who picks its choices: a player (by default its actor), RULES, RANDOM,
                                       # UNSTATED; None: an action nobody takes (no actor, no chooser written)
    once: str = ""                   # `must: once` (or `must: {once: group}`): the flag its guard reads and its
                                     # effects set, that leaving the phase clears (lang/once.py); "" for none
    once_group: str = ""             # `must: {once: group}`: the group (a `may` action whose phase cannot be
                                     # left while it is enabled and the group's flag, `once`, is not set)

    @property
    def phase_names(self) -> tuple[str, ...]:
        """The leaf phases the action belongs to; () for an action of any phase."""
        return (self.phase,) if self.phase is not None else self.phases


@dataclass(frozen=True)
class Phase:
    """A phase or step (a step has a parent phase); only leaves hold actions."""

    name: str
    parent: str | None = None
    mandatory: bool = True
    rule: Citation | None = None
    doc: str = ""
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class PhaseEdge:
    """A way from one leaf phase to another, for diagrams (the actions carry the semantics)."""

    src: str
    dst: str
    label: str = ""        # "skip Entrance", "if clash declared", "next turn"
    guarded: bool = False
    turn_end: bool = False
    # the `next:` entry's condition (under `next:`, with the earlier entries' negated) and the phase's
    # `exit_when`, for the diagram (the guard of the edge's action also wants no `must` action pending);
    # `otherwise`: the entry is `{otherwise: P}`; none of them part of the edge's identity
    when: Expr = field(default=TRUE, compare=False)
    exit_when: Expr = field(default=TRUE, compare=False)
    otherwise: bool = field(default=False, compare=False)

    @property
    def condition(self) -> Expr:
        """The condition the arrow is taken under: the phase's `exit_when` and the entry's `when`."""
        return conj(self.exit_when, self.when)


@dataclass(frozen=True)
class Definition:
    """A named predicate or integer macro (`define:`), kept as written: each use is expanded
    (type-checked with its arguments) by the language layer, so engines never see it.
    `positions` holds the file (line, col) of each character of `text`, for messages."""

    name: str
    params: tuple[str, ...]
    text: str
    file: str = ""
    positions: tuple[tuple[int, int], ...] = field(default=(), compare=False, repr=False)
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class VariantDecl:
    """One reading of an ambiguous rule."""

    name: str
    description: str
    rule: Citation | None = None
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Acknowledgement:
    """A consistency finding the designers know of; it stays in reports, marked as such."""

    kind: str
    subject: str          # the action, phase, variable or pair ("a|b") it concerns
    reason: str
    span: Span | None = field(default=None, compare=False, repr=False)


_INSTANCE = "_instance"    # where a Model keeps its `instantiate()`


@dataclass(frozen=True)
class Model:
    name: str
    path: str = ""
    doc: str = ""
    players: int = 1
    params: tuple[ParamDecl, ...] = ()
    param_values: tuple[tuple[str, int | None], ...] = ()   # None: left free (symbolic only)
    constants: tuple[tuple[str, Expr], ...] = ()     # named values, for claims and display
    enums: tuple[EnumType, ...] = ()
    variables: tuple[Variable, ...] = ()
    actions: tuple[Action, ...] = ()
    phases: tuple[Phase, ...] = ()
    phase_edges: tuple[PhaseEdge, ...] = ()
    initially: Expr = TRUE          # extra constraint on initial states
    end: Expr = FALSE               # end of game: such states have no successors
    winner: Expr | None = None
    variants: tuple[VariantDecl, ...] = ()
    variant: str | None = None
    fairness: tuple[str, ...] = ()  # actions assumed weakly fair
    progress: tuple[str, ...] = ()  # variables whose change counts as progress
    ordered_pairs: tuple[tuple[str, str], ...] = ()   # action pairs whose order the rules fix
    acknowledged: tuple[Acknowledgement, ...] = ()
    definitions: tuple[Definition, ...] = ()   # `define:` entries, already expanded where used
    printed: tuple[tuple[str, int], ...] | None = None   # values the rules print (HAND_LIMIT: 7); None: undeclared
    symmetry: str | None = None     # "players": states that differ by a rotation of the players are one
    order_changes: bool = False     # `next_player:` says who plays next (not always the next seat)
    round_ends: Expr | None = None  # when `pass turn` ends a round, read before it; None: the last seat's turn
                                    # (active == PLAYERS - 1); set where the order of play changes (lang/rounds.py)
    span: Span | None = field(default=None, compare=False, repr=False)

    # ---- lookups
    def round_condition(self) -> Expr:
        """Whether the turn-passing move ends a round, over the state before it."""
        if self.round_ends is not None:
            return self.round_ends
        return eq(Var(ACTIVE_VAR), Const(self.players - 1))

    def var(self, name: str) -> Variable:
        for v in self.variables:
            if v.name == name:
                return v
        raise KeyError(name)

    def action(self, name: str) -> Action:
        for a in self.actions:
            if a.name == name:
                return a
        raise KeyError(name)

    def enum(self, name: str) -> EnumType:
        for e in self.enums:
            if e.name == name:
                return e
        raise KeyError(name)

    def enum_value_name(self, enum: str, index: int) -> str:
        return self.enum(enum).values[index]

    @property
    def params_dict(self) -> dict[str, int | None]:
        return dict(self.param_values)

    @property
    def is_concrete(self) -> bool:
        return all(v is not None for _, v in self.param_values)

    @property
    def has_phases(self) -> bool:
        return bool(self.phases)

    def leaf_phases(self) -> tuple[Phase, ...]:
        parents = {p.parent for p in self.phases}
        return tuple(p for p in self.phases if p.name not in parents)

    def rule_actions(self) -> tuple[Action, ...]:
        return tuple(a for a in self.actions if a.kind is ActionKind.RULE)

    def instantiate(self, values: dict[str, int | None] | None = None) -> Model:
        """Fix parameters (defaults unless given); a value None leaves it free. At the model's own values
        it is made once (kept on this frozen model, never pickled): the loader's checks, the claims' and
        each stage of a reading ask for it again."""
        if values:
            return self._instantiated(values)
        kept = self.__dict__.get(_INSTANCE)
        if kept is None:
            kept = self._instantiated(None)
            object.__setattr__(self, _INSTANCE, kept)
        return kept

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != _INSTANCE}

    def _instantiated(self, values: dict[str, int | None] | None) -> Model:
        chosen: dict[str, int | None] = {p.name: p.default for p in self.params}
        chosen.update(self.params_dict)
        chosen.update(values or {})
        model = replace(self, param_values=tuple(chosen.items()))
        return map_exprs(model, model.fix_params)

    def fix_params(self, e: Expr) -> Expr:
        """`e` with this model's fixed parameter values substituted and constants folded."""
        fixed = {k: Const(v) for k, v in self.param_values if v is not None}

        def fn(node: Expr) -> Expr | None:
            if isinstance(node, Param) and node.name in fixed:
                return fixed[node.name]
            return None

        return fold(map_expr(e, fn))


def _map_type(t, f):
    if isinstance(t, IntType):
        return IntType(f(t.lo), f(t.hi))
    return t


def map_exprs(model: Model, f: Callable[[Expr], Expr]) -> Model:
    """Apply `f` to every expression of the model (guards, effects, types, init...)."""

    def var(v: Variable) -> Variable:
        return replace(v, type=_map_type(v.type, f), index=_map_type(v.index, f) if v.index else None,
                       init=tuple(None if i is None else f(i) for i in v.init))

    def target(t: Var | Index) -> Var | Index:
        return Index(t.name, f(t.index), span=t.span) if isinstance(t, Index) else t

    def action(a: Action) -> Action:
        return replace(
            a, guard=f(a.guard),
            effects=tuple(Assign(target(e.target), f(e.value), span=e.span) for e in a.effects),
            choices=tuple(replace(c, type=_map_type(c.type, f)) for c in a.choices),
            actor=None if a.actor is None else f(a.actor),
            chooser=f(a.chooser) if isinstance(a.chooser, Expr) else a.chooser)

    return replace(model, constants=tuple((k, f(v)) for k, v in model.constants),
                   variables=tuple(var(v) for v in model.variables),
                   actions=tuple(action(a) for a in model.actions),
                   initially=f(model.initially), end=f(model.end),
                   winner=None if model.winner is None else f(model.winner))


def all_exprs(model: Model) -> Iterator[Expr]:
    """Every top-level expression of a model, for whole-model scans."""
    collected: list[Expr] = []

    def grab(e: Expr) -> Expr:
        collected.append(e)
        return e

    map_exprs(model, grab)
    return iter(collected)


def in_phase(model: Model, name: str) -> Expr:
    """`phase == name`; for a phase with steps, being in any of its steps."""
    enum = model.var(PHASE_VAR).type
    assert isinstance(enum, EnumType)
    parents = {p.name: p.parent for p in model.phases}

    def within(leaf: str) -> bool:
        node: str | None = leaf
        while node is not None and node != name:
            node = parents.get(node)
        return node == name

    return disj(*(eq(Var(PHASE_VAR), Const(enum.values.index(leaf.name), enum=enum.name))
                  for leaf in model.leaf_phases() if within(leaf.name)))
