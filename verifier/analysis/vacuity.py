"""Vacuity: claims that hold only because what they speak about never happens.

A response or bounded response whose trigger never occurs, a precedence whose
guarded event never occurs, a scoped pattern whose scope never opens, and an
invariant `A -> B` whose antecedent A is never true all hold without saying
anything. Each such part becomes a state predicate (an action's event: some
reachable state enables it; entering or leaving a phase: some reachable state
is in it; a turn's or a round's end: some reachable state enables the turn
pass), an over-approximation of "it happens", so that a part reported as never
reached really is never reached. Only a complete search of concrete parameters
reports anything: a search cut short proves no absence.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from verifier.engines.bfsgen import packed_predicate
from verifier.engines.explicit import explore, matches
from verifier.engines.ledger import KeptCompact
from verifier.engines.statespace import StateSpace
from verifier.ir.expr import (
    FALSE,
    App,
    Const,
    Expr,
    Op,
    Quant,
    QuantKind,
    conj,
    disj,
    pretty,
)
from verifier.ir.model import ActionKind, BoolType, EnumType, Model, in_phase
from verifier.ir.props import BoundedResponse, Event, Invariant, Ordering, Property
from verifier.portfolio.stores import Caps, Store, cap_of
from verifier.resources import Budget
from verifier.semantics import EvalError, Layout
from verifier.trace import Names

CAPS = Caps()     # the store policy's caps (tests lower them)


@dataclass(frozen=True)
class Vacuity:
    """One claim part never reached: the claim holds vacuously (for these parameters)."""

    claim: str
    part: str               # "trigger" | "antecedent" | "scope opener" | "guarded event"
    text: str               # the part, as written or rendered
    rule: str | None = None

    @property
    def message(self) -> str:
        return (f"claim {self.claim}: its {self.part} '{self.text}' is never reached, so what the claim "
                f"says under it holds vacuously (for these parameters)")


def vacuous_claims(model: Model, claims: Sequence[Property], budget: Budget | None = None,
                   space=None, stored: int = 0) -> list[Vacuity]:
    """The never-reached triggers, scope openers and antecedents of `claims` on `model` (every
    parameter fixed; otherwise none are reported). `space`: a complete search of the
    instantiated model to reuse (the python store's `StateSpace`, or the ledger's compact- or
    compiled-store search), else a search in the python store is run, under its cap. What is
    reported is what that search shows: past its cap, nothing (it stops there, or once every part
    is found), so a kept search of more states reports nothing either, and neither does a model of
    which some search `stored` more states than the cap, complete or not (none is run)."""
    concrete = model.instantiate()
    if not concrete.is_concrete:
        return []
    parts = [(c, part, text, concrete.fix_params(pred)) for c in claims
             for part, text, pred in _parts(concrete, c, _names(concrete), Names.of(concrete))]
    if not parts:
        return []
    capped = _capped(budget or Budget())
    assert capped.max_states is not None, "the python store's search is capped"
    if space is None and stored > capped.max_states:
        return []
    if space is not None and space.complete and not isinstance(space, StateSpace):
        if len(space) > capped.max_states:
            return []
        lay = space.space.lay if isinstance(space, KeptCompact) else space.lay
        reached = [_anywhere(_packed_states(space), lay, pred) for *_, pred in parts]
    elif space is None or not space.complete:
        space = explore(concrete, capped, watch=[p for *_, p in parts], stop_when_found=True)
        if not space.complete and any(f is None for f in space.found):
            return []          # stopped early: by a budget (absence unproved), or once all were found
        reached = [f is not None or k in space.watch_errors for k, f in enumerate(space.found)]
    else:
        reached = [_somewhere(space, pred) for *_, pred in parts]
    return [Vacuity(c.id, part, text, c.rule) for (c, part, text, _p), hit in zip(parts, reached) if not hit]


def _capped(budget: Budget) -> Budget:
    """At most the python store's cap (`portfolio.stores`): beyond it the search would only spend
    the budget the consistency analyses need (a search cut short reports nothing anyway)."""
    return replace(budget, max_states=cap_of(Store.PYTHON, budget, CAPS))


def _somewhere(space, pred: Expr) -> bool:
    return _anywhere(iter(space.packed), space.lay, pred)


def _anywhere(states: Iterator[int], lay: Layout, pred: Expr) -> bool:
    """Whether `pred` holds in one of the packed `states` (or meets a model error: not an absence)."""
    test = packed_predicate(lay, pred)
    try:
        return any(test(x) for x in states)
    except EvalError:
        return True            # an error is not an absence


def _packed_states(space) -> Iterator[int]:
    """The states of a complete compact-store search (`ledger.KeptCompact`: its levels) or compiled-store
    search (its keys), as packed ints, a chunk at a time."""
    from verifier.engines.words import as_ints
    arrays = space.levels if isinstance(space, KeptCompact) else [space.keys]
    for states in arrays:
        for start in range(0, len(states), CHUNK):
            yield from as_ints(states[start:start + CHUNK])


CHUNK = 1 << 16       # states converted to packed ints at a time


def _names(model: Model):
    def name(enum: str, index: int) -> str:
        try:
            return model.enum_value_name(enum, index)
        except (KeyError, IndexError):
            return str(index)
    return name


def _parts(model: Model, claim: Property, names, words: Names) -> Iterator[tuple[str, str, Expr]]:
    if isinstance(claim, Invariant):
        for ante in _antecedents(claim.expr, ()):
            yield "antecedent", pretty(ante, names, words), ante
    elif isinstance(claim, BoundedResponse):
        yield "trigger", _event_text(claim.trigger, names, words), _happens(model, claim.trigger)
    elif isinstance(claim, Ordering):
        if claim.pattern == "response":
            yield "trigger", _event_text(claim.p, names, words), _happens(model, claim.p)
        elif claim.pattern == "precedence":
            yield "guarded event", _event_text(claim.p, names, words), _happens(model, claim.p)
        if claim.q is not None:
            yield "scope opener", _event_text(claim.q, names, words), _happens(model, claim.q)


def _antecedents(e: Expr, context: tuple[Expr, ...]) -> Iterator[Expr]:
    """The antecedent of each implication in `e` (under the antecedents enclosing it)."""
    if isinstance(e, App) and e.op is Op.IMPLIES:
        yield conj(*context, e.args[0])
        yield from _antecedents(e.args[1], (*context, e.args[0]))
    elif isinstance(e, App) and e.op is Op.AND:
        for arg in e.args:
            yield from _antecedents(arg, context)
    elif isinstance(e, Quant) and e.kind is QuantKind.FORALL:
        for inner in _antecedents(e.body, ()):
            yield conj(*context, Quant(QuantKind.EXISTS, e.var, e.lo, e.hi, inner))


def _happens(model: Model, event: Event) -> Expr:
    """A state predicate true wherever `event` can happen next (or has just happened)."""
    if event.expr is not None:
        return event.expr
    if event.enter is not None or event.leave is not None:
        return in_phase(model, event.enter or event.leave)     # type: ignore[arg-type]
    if event.turn_end or event.round_end:
        return disj(*(_enabled(a) for a in model.actions if a.kind is ActionKind.TURN_END))
    if event.actions:
        return disj(*(_enabled(a) for a in model.actions if a.name in event.actions))
    if event.action is None:
        return FALSE
    return disj(*(_enabled(a) for a in model.actions if matches(a.name, event.action)))


def _enabled(action) -> Expr:
    body = action.guard
    for c in reversed(action.choices):
        if isinstance(c.type, BoolType):
            lo, hi = Const(0), Const(1)
        elif isinstance(c.type, EnumType):
            lo, hi = Const(0), Const(len(c.type.values) - 1)
        else:
            lo, hi = c.type.lo, c.type.hi
        body = Quant(QuantKind.EXISTS, c.name, lo, hi, body)
    return body


def _event_text(event: Event, names, words: Names) -> str:
    if event.expr is not None and words:
        return pretty(event.expr, names, words)     # a condition in the model's display names
    if event.text:
        return event.text
    if event.action:
        return event.action
    if event.enter:
        return f"enter {event.enter}"
    if event.leave:
        return f"leave {event.leave}"
    if event.turn_end or event.round_end:
        return "turn-end" if event.turn_end else "round-end"
    return pretty(event.expr, names, words) if event.expr is not None else "?"
