"""Evaluating expressions on a concrete state, and enumerating a model's initial states.

A state is a tuple of ints, one per *slot* (a scalar variable, or one element
of an array), in the order of `Layout.slots`. The reference interpreter
(`verifier.semantics`) and the loader's limit on initial states both use it.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import assert_never

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
    fold,
    substitute,
    walk,
)
from verifier.ir.model import BoolType, EnumType, Model, Variable, type_bounds

State = tuple[int, ...]


class EvalError(Exception):
    """A run-time error of the model (index out of range, division by zero, free parameter)."""


@dataclass(frozen=True)
class Slot:
    var: str
    index: int | None      # the index value (enum index for enum-indexed arrays)
    lo: int
    hi: int
    name: str              # display name: ``hand[1]``, ``marked[red]``, ``phase``


@dataclass(frozen=True)
class Layout:
    """Where each variable lives in a state tuple."""

    model: Model

    @cached_property
    def slots(self) -> tuple[Slot, ...]:
        out = []
        for v in self.model.variables:
            lo, hi = type_bounds(v.type)
            if v.index is None:
                out.append(Slot(v.name, None, lo, hi, v.name))
                continue
            ilo, ihi = type_bounds(v.index)
            for i in range(ilo, ihi + 1):
                out.append(Slot(v.name, i, lo, hi, v.name + v.element_label(i)))
        return tuple(out)

    @cached_property
    def offsets(self) -> dict[str, tuple[int, int, int]]:
        """var name -> (first slot, index lo, number of elements)."""
        out, pos = {}, 0
        for v in self.model.variables:
            out[v.name] = (pos, v.index_lo(), v.size())
            pos += v.size()
        return out

    @cached_property
    def variables(self) -> dict[str, Variable]:
        return {v.name: v for v in self.model.variables}

    def slot_of(self, var: str, index: int | None) -> int:
        first, lo, size = self.offsets[var]
        if index is None:
            return first
        if not lo <= index < lo + size:
            raise EvalError(f"index {index} out of range for {self.error_name(var)}")
        return first + index - lo

    def error_name(self, var: str) -> str:
        """How an index error names array `var`; a sequence or a 2-D array says what its index means."""
        v = self.variables[var]
        if v.seq_length is not None and v.dims:
            cap = type_bounds(v.dims[1])[1] + 1
            return (f"{var} (sequences of at most {cap} each, stored row by row: index {v.size()} is a push onto a "
                    f"full one, a pop or top of an empty one, or {var}[d][i] past its length)")
        if v.seq_length is not None:
            cap = v.size()
            return (f"{var} (a sequence of at most {cap}: index {cap} is a push onto a full one, -1 a pop or "
                    f"top of an empty one, others s[i] past its length)")
        if v.dims:
            n2 = v.size() // (type_bounds(v.dims[0])[1] - type_bounds(v.dims[0])[0] + 1)
            return f"{var} (a 2-D array stored row by row: [i][j] is position i * {n2} + j from its first element)"
        return var

    def display(self, slot: Slot, value: int) -> object:
        t = self.variables[slot.var].type
        if isinstance(t, BoolType):
            return bool(value)
        if isinstance(t, EnumType):
            return t.values[value] if 0 <= value < len(t.values) else value
        return value

    def as_dict(self, state: State) -> dict[str, object]:
        return {s.name: self.display(s, v) for s, v in zip(self.slots, state)}


def layout(model: Model) -> Layout:
    assert model.is_concrete, "instantiate the model before running it"
    return Layout(model)


# ---------------------------------------------------------------- evaluation

def evaluate(lay: Layout, e: Expr, state: State, env: dict[str, int] | None = None) -> int:
    """Value of `e` in `state`; booleans come back as 0/1."""
    env = env or {}
    match e:
        case Const():
            return e.value
        case Var():
            return state[lay.slot_of(e.name, None)]
        case Index():
            return state[lay.slot_of(e.name, evaluate(lay, e.index, state, env))]
        case Local():
            return env[e.name]
        case Param():
            raise EvalError(f"parameter {e.name} has no value")
        case Quant():
            return _evaluate_quant(lay, e, state, env)
        case App():
            return _evaluate_app(lay, e, state, env)
        case _:
            assert_never(e)


def _evaluate_quant(lay: Layout, e: Quant, state: State, env: dict[str, int]) -> int:
    lo, hi = evaluate(lay, e.lo, state, env), evaluate(lay, e.hi, state, env)
    values = [evaluate(lay, e.body, state, {**env, e.var: i}) for i in range(lo, hi + 1)]
    if e.kind is QuantKind.FORALL:
        return int(all(values))
    if e.kind is QuantKind.EXISTS:
        return int(any(values))
    if e.kind is QuantKind.COUNT:
        return sum(1 for v in values if v)
    return sum(values)


def _evaluate_app(lay: Layout, e: App, state: State, env: dict[str, int]) -> int:
    op = e.op
    if op is Op.AND:
        return int(all(evaluate(lay, a, state, env) for a in e.args))
    if op is Op.OR:
        return int(any(evaluate(lay, a, state, env) for a in e.args))
    if op is Op.IMPLIES:
        return int(not evaluate(lay, e.args[0], state, env) or bool(evaluate(lay, e.args[1], state, env)))
    if op is Op.ITE:
        c = evaluate(lay, e.args[0], state, env)
        return evaluate(lay, e.args[1] if c else e.args[2], state, env)
    a = [evaluate(lay, x, state, env) for x in e.args]
    try:
        return apply_op(op, a)
    except ArithmeticError as err:
        raise EvalError(str(err)) from None


def holds(lay: Layout, e: Expr, state: State, env: dict[str, int] | None = None) -> bool:
    return bool(evaluate(lay, e, state, env))


# ---------------------------------------------------------------- initial states

class TooManyCandidates(EvalError):
    """Finding the initial states would test more candidates than allowed; `slot`: the slot being dealt."""

    def __init__(self, tried: int, slot: int) -> None:
        super().__init__(f"more than {tried:,} candidate initial states tested")
        self.slot = slot


@dataclass(frozen=True)
class Deal:
    """How the initial states are dealt: the values each slot starts at (`slot_values`) and, per slot,
    the conjuncts of `initially` tested once it is dealt (each as soon as the slots it, and every
    conjunct before it, reads are dealt, so in the order `evaluate` reads them)."""

    per_slot: tuple[range | tuple[int, ...], ...]
    checks: tuple[tuple[Expr, ...], ...]

    @staticmethod
    def of(lay: Layout) -> Deal:
        per_slot = slot_values(lay)
        checks: list[list[Expr]] = [[] for _ in per_slot]
        ready = 0
        for conjunct in _conjuncts(lay, lay.model.initially) if per_slot else []:
            if conjunct == TRUE:         # no `initially:`, or a part of it that tests nothing
                continue
            ready = max(ready, _last_slot_read(lay, conjunct))
            checks[ready].append(conjunct)
        return Deal(tuple(per_slot), tuple(tuple(c) for c in checks))

    def tested(self, pos: int) -> bool:
        """A (partial) deal is a candidate once dealt to `pos`: a conjunct is tested there, or it is whole."""
        return bool(self.checks[pos]) or pos + 1 == len(self.per_slot)

    def unpruned(self) -> list[int]:
        """Per slot up to the first where a candidate is tested, the candidates dealt there: every one
        of them is dealt whatever `initially` says (the product of the slots' ranges so far)."""
        counts, count = [], 1
        for pos, values in enumerate(self.per_slot):
            count *= len(values)
            counts.append(count)
            if self.tested(pos):
                break
        return counts


def iter_initial_states(lay: Layout, max_candidates: int | None = None) -> Iterator[State]:
    """The initial states, in lexicographic order of the slots left open by `init`, found lazily:
    the slots are assigned in order and each conjunct of `initially` is checked as soon as the
    slots it and the conjuncts before it read are assigned (so in order, and a model error is
    raised exactly where the whole `initially` would raise one), so a deal that breaks it early
    is not completed. A candidate is a deal where a conjunct is tested, or a whole one; past
    `max_candidates` of them, `TooManyCandidates`. The slot values assigned are at most the
    candidates times the number of slots (each partial deal leads to at least one candidate)."""
    deal = Deal.of(lay)
    per_slot = deal.per_slot
    if not per_slot:
        if holds(lay, lay.model.initially, ()):
            yield ()
        return
    tested = [deal.tested(pos) for pos in range(len(per_slot))]
    candidates = 0
    state = [values[0] for values in per_slot]
    untried = [iter(per_slot[0])]          # per slot dealt so far, the values left to try there
    while untried:
        pos = len(untried) - 1
        value = next(untried[pos], None)
        if value is None:
            untried.pop()
            continue
        state[pos] = value
        if tested[pos]:
            candidates += 1
            if max_candidates is not None and candidates > max_candidates:
                raise TooManyCandidates(max_candidates, pos)
            if not all(holds(lay, c, tuple(state)) for c in deal.checks[pos]):
                continue
        if pos + 1 == len(per_slot):
            yield tuple(state)
        else:
            untried.append(iter(per_slot[pos + 1]))


@dataclass(frozen=True)
class InitialStates:
    """A model's initial states found within two limits, or which limit finding them passes: `candidates`
    (the candidates tested; `slot`, the slot being dealt; `at_once`, refused before any was tested, the
    slots' ranges alone passing it) or `states` (those kept)."""

    states: tuple[State, ...] = ()
    passed: str = ""
    slot: int = 0
    at_once: bool = False


_FOUND: dict[object, InitialStates] = {}   # by what the initial states depend on (`find_initial_states`)
_FOUND_KEPT = 200_000                       # initial states remembered at most, all models together


def find_initial_states(lay: Layout, max_candidates: int, max_states: int) -> InitialStates:
    """The initial states (`iter_initial_states`) within `max_candidates` tested and `max_states` kept.
    Remembered by the slots, their starting values and `initially`: a model whose variables and
    `initially` are one's found before (each mutant of `mutate`, the engines after the loader's check)
    does not find them again. A model error in `initially` is raised (`EvalError`), not remembered."""
    deal = Deal.of(lay)
    key = (tuple((s.var, s.index) for s in lay.slots), deal.per_slot, lay.model.initially, max_candidates,
           max_states)
    found = _FOUND.get(key)
    if found is None:
        found = _find(lay, deal, max_candidates, max_states)
        if sum(len(f.states) for f in _FOUND.values()) + len(found.states) > _FOUND_KEPT:
            _FOUND.clear()
        _FOUND[key] = found
    return found


def _find(lay: Layout, deal: Deal, max_candidates: int, max_states: int) -> InitialStates:
    for k, count in enumerate(deal.unpruned()):
        if count > max_candidates:
            return InitialStates(passed="candidates", slot=k, at_once=True)
    at_once = dealt_at_once(lay, deal, max_candidates) if math.prod(map(len, deal.per_slot)) > FEW_DEALS else None
    if at_once is not None:
        return InitialStates(passed="states") if len(at_once) > max_states else InitialStates(at_once)
    try:
        states = tuple(itertools.islice(iter_initial_states(lay, max_candidates), max_states + 1))
    except TooManyCandidates as cut:
        return InitialStates(passed="candidates", slot=cut.slot)
    return InitialStates(passed="states") if len(states) > max_states else InitialStates(states)


MAX_BATCH_CELLS = 40_000_000    # slot values of the partial deals held at once by `dealt_at_once`, at most
FEW_DEALS = 1_024               # deals (the product of the slots' ranges) the reference deals alone: no numpy import


def dealt_at_once(lay: Layout, deal: Deal, max_candidates: int) -> tuple[State, ...] | None:
    """Every state `iter_initial_states` finds, in its order, dealt slot by slot over all partial deals at
    once: the deals so far each extended by every value of the next slot, then filtered by the conjuncts
    tested there, each evaluated over the whole batch (`batch.values`; a conjunct only on the deals the
    ones before it keep, as `all` does). None where this cannot vouch for the reference's outcome: more
    than `max_candidates` candidates tested (or certain to be), a deal that might meet a model error, a
    slot without values, or more than `MAX_BATCH_CELLS` values held; the reference then deals them."""
    import numpy as np  # imported here: numpy's import is paid only where a deal is large

    from verifier.ir import batch

    per_slot, width = deal.per_slot, len(deal.per_slot)
    if width == 0 or any(len(values) == 0 for values in per_slot):
        return None
    lowest = min(min(values) for values in per_slot)
    highest = max(max(values) for values in per_slot)
    kind = np.promote_types(np.min_scalar_type(lowest), np.min_scalar_type(highest))
    deals = np.array([[values[0] for values in per_slot]], dtype=kind)
    candidates = 0
    try:
        for pos, values in enumerate(per_slot):
            if len(deals) * len(values) * width > MAX_BATCH_CELLS:
                return None
            count = len(deals)
            deals = np.repeat(deals, len(values), axis=0)
            deals[:, pos] = np.tile(np.asarray(values, dtype=kind), count)
            if deal.tested(pos):
                candidates += len(deals)
                if candidates > max_candidates:
                    return None
                for conjunct in deal.checks[pos]:
                    deals = deals[batch.values(lay, conjunct, deals) != 0]
            elif len(deals) > max_candidates - candidates:    # each leads to a candidate where one is tested
                return None
    except batch.Unsure:
        return None
    return tuple(map(tuple, deals.tolist()))


def slot_values(lay: Layout) -> list[range | tuple[int, ...]]:
    """The values each slot starts at: its `init` value, or every value of its type."""
    per_slot: list[range | tuple[int, ...]] = []
    empty: State = tuple(0 for _ in lay.slots)
    for v in lay.model.variables:
        inits = v.init if len(v.init) == v.size() else v.init * v.size()
        lo, hi = type_bounds(v.type)
        for init in inits:
            if init is None:
                per_slot.append(range(lo, hi + 1))
            else:
                value = evaluate(lay, init, empty)
                if not lo <= value <= hi:
                    raise EvalError(f"initial value {value} of {v.name} outside {lo}..{hi}")
                per_slot.append((value,))
    return per_slot


SPLIT_INSTANCES = 4_096     # instances a `forall` shown safe instance by instance is split into, at most


def _conjuncts(lay: Layout, e: Expr, room: int = SPLIT_INSTANCES) -> list[Expr]:
    """The parts of `e` that must all hold, in the order `evaluate` reads them: the arguments of
    `and`, and the instances of a `forall` with literal bounds that no state can make fail (its
    instances are all evaluated, so stopping at a false one changes nothing): shown so as a whole,
    or instance by instance once folded (a 2-D element's flat index is one element in each), then
    for at most `room` instances."""
    if isinstance(e, App) and e.op is Op.AND:
        return [c for a in e.args for c in _conjuncts(lay, a, room)]
    if not (isinstance(e, Quant) and e.kind is QuantKind.FORALL and isinstance(e.lo, Const)
            and isinstance(e.hi, Const)):
        return [e]
    values = range(e.lo.value, e.hi.value + 1)
    if _cannot_fail(lay, e, {}):
        return [c for k in values for c in _conjuncts(lay, substitute(e.body, {e.var: Const(k)}))]
    if not 0 < len(values) <= room:
        return [e]
    parts = [c for k in values for c in _conjuncts(lay, fold(substitute(e.body, {e.var: Const(k)})),
                                                   room // len(values))]
    return parts if len(parts) <= room and all(_cannot_fail(lay, c, {}) for c in parts) else [e]


def _cannot_fail(lay: Layout, e: Expr, bounds: dict[str, tuple[int, int]]) -> bool:
    """`e` evaluates without a model error in every state (`bounds`: the quantified names' values)."""
    match e:
        case Const() | Var() | Local():
            return True
        case Param():
            return False
        case Index():
            _first, lo, size = lay.offsets[e.name]
            values = _literal_interval(e.index, bounds)
            return values is not None and lo <= values[0] and values[1] < lo + size
        case App():
            divisor_ok = e.op not in (Op.DIV, Op.MOD) or (isinstance(e.args[1], Const) and e.args[1].value > 0)
            return divisor_ok and all(_cannot_fail(lay, a, bounds) for a in e.args)
        case Quant():
            low, high = _literal_interval(e.lo, bounds), _literal_interval(e.hi, bounds)
            return (low is not None and high is not None
                    and _cannot_fail(lay, e.body, {**bounds, e.var: (low[0], high[1])}))
        case _:
            assert_never(e)


def _literal_interval(e: Expr, bounds: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    if isinstance(e, Const):
        return e.value, e.value
    if isinstance(e, Local) and e.name in bounds:
        return bounds[e.name]
    return None


def _last_slot_read(lay: Layout, e: Expr) -> int:
    """The last slot `e` may read (0 when it reads none): a constant index names one element,
    any other the whole array."""
    last = 0
    for node in walk(e):
        if isinstance(node, Var):
            last = max(last, lay.slot_of(node.name, None))
        elif isinstance(node, Index):
            first, lo, size = lay.offsets[node.name]
            index = node.index
            exact = isinstance(index, Const) and lo <= index.value < lo + size
            last = max(last, first + index.value - lo if isinstance(index, Const) and exact else first + size - 1)
    return last
