"""Claims of the IR: what a property file asks an engine to decide.

Each claim kind is a frozen dataclass with a class-level `kind` name (the JSON
`kind`). Engines dispatch on the class; richer surface forms (ordering
patterns, phase-scoped invariants) are compiled down to these by `props/`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

from verifier.diagnostics import Span
from verifier.ir.expr import Expr, free_locals
from verifier.ir.verdict import Verdict


@dataclass(frozen=True, kw_only=True)
class Property:
    id: str
    statement: str = ""              # the claim in plain words
    expected: Verdict | None = None  # None: "must not be violated"
    rule: str | None = None          # the rule section it checks
    why: str = ""                    # for expected VIOLATED: why the rules break it
    for_every: tuple[str, ...] = ()  # parameters left free for this claim: a proof covers every value
    problem: bool = False            # `finding: problem`: its expected violation is a defect of the page to fix,
                                     # not a behaviour the page allows on purpose
    span: Span | None = field(default=None, compare=False, repr=False)
    kind: ClassVar[str] = "property"


@dataclass(frozen=True, kw_only=True)
class Invariant(Property):
    """`expr` holds in every reachable state (`at_phase` is kept for display; `expr`
    already reads ``phase == P -> ...``)."""

    expr: Expr
    at_phase: str | None = None
    kind: ClassVar[str] = "invariant"


PREV_MARK = "prev:"    # a state variable read by `prev(...)` in a step claim: its value before the transition


@dataclass(frozen=True, kw_only=True)
class StepInvariant(Property):
    """`expr` holds over every transition (of one of `actions`, when given; with the `choice` values,
    when given): its variables read the state after it, those named `prev:x` (written `prev(x)`) the
    state before, and its free names (`Local`) the move's choices of those names (every action it
    judges has them)."""

    expr: Expr
    actions: tuple[str, ...] = ()
    choice: tuple[tuple[str, int], ...] = ()   # `with:`: only the moves with these choice values are judged
    kind: ClassVar[str] = "step"

    def reads_choices(self) -> bool:
        """Whether the claim reads a move's choices or judges only some of their values."""
        return bool(self.choice or free_locals(self.expr))


@dataclass(frozen=True, kw_only=True)
class DeadlockFree(Property):
    """Every reachable state that is not an end of game has an enabled action."""

    kind: ClassVar[str] = "deadlock"


@dataclass(frozen=True, kw_only=True)
class Reachable(Property):
    """Some reachable state satisfies `expr`, or some reachable transition takes one of the actions
    `action` names (`end P` also names `end P -> Q`; a set such as `any step-end` is its names),
    with the `choice` values where given.

    Verdict HOLDS comes with a witness trace; VIOLATED means exhaustively unreachable.
    """

    expr: Expr | None = None
    action: tuple[str, ...] = ()
    choice: tuple[tuple[str, int], ...] = ()   # `with:`: the move's choice values (the others free)
    kind: ClassVar[str] = "reachable"

    def __post_init__(self) -> None:
        if isinstance(self.action, str):      # one action name
            object.__setattr__(self, "action", (self.action,))


@dataclass(frozen=True, kw_only=True)
class Terminates(Property):
    """Every path from every reachable state reaches the end of the turn (`scope`
    "turn": a TURN_END transition) or an end of game (`scope` "game").

    `fairness` names actions assumed weakly fair: a loop in which one of them is
    continuously enabled but never taken is not a counterexample. VIOLATED comes
    with a lasso trace (`loop_start` set).
    """

    scope: str                       # "turn" | "game"
    fairness: tuple[str, ...] = ()
    strong_fairness: tuple[str, ...] = ()   # a loop where one is enabled (even now and then) must take it
    kind: ClassVar[str] = "termination"


@dataclass(frozen=True)
class Event:
    """Something that happens on a transition; exactly one field is set.

    `action`: that action is taken (any choice); `actions`: one of them is (`any step-end`,
    written as a set of moves); `enter` / `leave`: the phase is
    entered / left; `expr`: the transition ends in a state where it holds;
    `turn_end` / `round_end`: the turn (of the last player, for a round) passes.
    """

    action: str | None = None
    actions: tuple[str, ...] = ()
    enter: str | None = None
    leave: str | None = None
    expr: Expr | None = None
    turn_end: bool = False
    round_end: bool = False
    text: str = ""                   # as written, for plain-words rendering


@dataclass(frozen=True, kw_only=True)
class Ordering(Property):
    """A Dwyer specification pattern over events, in a scope.

    pattern: absence | existence | universality | precedence | response | bounded-existence
    scope:   globally | before | after | between | after-until | turn | phase | round
    `p` is the pattern's event (for universality, an `expr` event read as a state
    predicate); `s` the second event (precedence: S precedes P; response: S answers P);
    `q` opens and `r` closes the scope; `bound` is k for bounded existence.
    """

    pattern: str
    p: Event
    s: Event | None = None
    scope: str = "globally"
    q: Event | None = None
    r: Event | None = None
    bound: int | None = None
    fairness: tuple[str, ...] = ()
    strong_fairness: tuple[str, ...] = ()
    kind: ClassVar[str] = "ordering"


@dataclass(frozen=True, kw_only=True)
class BoundedResponse(Property):
    """After `trigger`, `response` happens within `within` transitions."""

    trigger: Event
    response: Event
    within: int
    kind: ClassVar[str] = "bounded-response"


@dataclass(frozen=True, kw_only=True)
class Obligation(Property):
    """No behaviour keeps `pending` true forever: no reachable cycle of states where it
    holds (under `fairness`) and no final or stuck state where it holds. Ordering
    patterns with a liveness part compile to this over monitor variables."""

    pending: Expr
    fairness: tuple[str, ...] = ()
    strong_fairness: tuple[str, ...] = ()
    kind: ClassVar[str] = "obligation"


def map_claim(claim: Property, f: Callable[[Expr], Expr]) -> Property:
    """`claim` with `f` applied to each of its expressions (events included)."""
    changes: dict[str, Any] = {}
    for fd in fields(claim):
        value = getattr(claim, fd.name)
        if isinstance(value, Expr):
            changes[fd.name] = f(value)
        elif isinstance(value, Event) and value.expr is not None:
            changes[fd.name] = replace(value, expr=f(value.expr))
    return replace(claim, **changes)
