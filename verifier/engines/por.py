"""Partial-order reduction for the explicit search: stubborn sets from a static independence relation.

A *transition* is an action with its choice values fixed (where the domains are
constant and few, `actiongen.constant_choices`), else every firing of the action
together. Each has a read set and a write set of state slots (an index that is
not a constant after the choices are substituted reads or writes every element;
the end-of-game condition counts as read by every transition). Two transitions
are *dependent* when one writes a slot the other reads or writes: independent
ones, enabled together, can neither disable one another nor end in different
states in the two orders (a syntactic check, cheaper than the Z3 commutation
query of `analysis/order_dependence.py` and sound for every state).

In each expanded state the search fires only a stubborn set T of the enabled
transitions: from one enabled seed, T is closed by adding every transition
dependent on an enabled member, and for a disabled member the writers of one
guard conjunct that is false here (its necessary enabling set; all writers of
what it reads when no conjunct is false, e.g. an overflow block). Then:

- C2 (visibility): T is used only when none of its enabled members is visible,
  that is writes a slot that a watched claim reads (an invariant, a reachable
  state), that decides whether a tracked action can fire, or that a transition
  which might raise a model error reads (so a run-time error stays reachable);
- C3 (cycle proviso, BFS form): T is used only when none of its successors was
  stored before the state itself (every cycle of the reduced graph then has a
  fully expanded state: its edge into the cycle's oldest state);

otherwise the state is fully expanded. With C0 (T empty only in a deadlock) and
C1 (the closure), the reduced graph reaches a state with every valuation of the
visible slots that the full graph reaches, and every deadlock: invariants,
reachability of states and of action firings, and deadlock freedom keep their
verdicts. Their traces are paths of the model (they replay), not necessarily
shortest ones. Claims about the state graph (termination, obligations) are not
reduced: the engine gives them the full search.
"""
from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from verifier.engines.actiongen import Labels, constant_choices, specialise
from verifier.engines.base import ProgressFn, ProgressInfo, stop_of
from verifier.engines.bfsgen import compile_expander, compile_search, packed_predicate, packing_of
from verifier.engines.codegen import may_raise, simplify
from verifier.engines.statespace import StateSpace
from verifier.ir.expr import App, Const, Expr, Index, Op, Var, walk
from verifier.ir.model import Action, IntType, Modality, Model
from verifier.resources import Budget, Stop, model_error
from verifier.semantics import EvalError, Layout, initial_states, layout

NAME = "por"
TICK_STATES = 256
TRIAL_STATES = 4096     # after this many states, a search that reduced fewer than TRIAL_SHARE of them hands
TRIAL_SHARE = 0.1       # the rest to the generated full search (`bfsgen.compile_search`): it does not pay here
HAND_OVER = "hand over"

Tick = Callable[[int, int, int], "Stop | None"]


@dataclass(frozen=True)
class Transition:
    """One transition of the independence relation: `action` with `choice` fixed, or (choice
    None) every firing of the action. Slot sets are bit masks over `Layout.slots`."""

    action: int
    choice: tuple | None
    reads: int
    writes: int
    may_raise: bool
    conjuncts: tuple[Callable[[int], bool], ...]   # the guard's conjuncts over packed states
    conjunct_reads: tuple[int, ...]


@dataclass
class Independence:
    """The static relation: `dependent[t]` (bit mask of transitions, t included), `writers[k]`
    (transitions writing slot k), and the key of each firing's transition."""

    transitions: list[Transition]
    dependent: list[int]
    writers: list[int]
    keys: dict[tuple[int, tuple | None], int]

    def of(self, action: int, choice: tuple) -> int:
        t = self.keys.get((action, choice))
        return self.keys[(action, None)] if t is None else t

    def writers_of(self, slots: int) -> int:
        out, k = 0, 0
        while slots:
            if slots & 1:
                out |= self.writers[k]
            slots >>= 1
            k += 1
        return out

    def visible(self, slots: int) -> int:
        """The transitions that write one of these slots."""
        return self.writers_of(slots)


def slots_read(lay: Layout, e: Expr) -> int:
    """Bit mask of the slots `e` may read."""
    mask = 0
    for node in walk(e):
        if isinstance(node, (Var, Index)):
            mask |= _slots_of(lay, node)
    return mask


def _slots_of(lay: Layout, target: Var | Index) -> int:
    first, lo, size = lay.offsets[target.name]
    if isinstance(target, Index) and isinstance(target.index, Const) and lo <= target.index.value < lo + size:
        return 1 << (first + target.index.value - lo)
    return ((1 << size) - 1) << first


def _transition(lay: Layout, a: int, action: Action, choice: tuple | None, end_reads: int) -> Transition:
    fixed = specialise(action, dict(choice), lay) if choice is not None else action
    exprs: list[Expr] = [fixed.guard]
    writes = 0
    for eff in fixed.effects:
        exprs.append(eff.value)
        if isinstance(eff.target, Index):
            exprs.append(eff.target.index)
        writes |= _slots_of(lay, eff.target)
    if choice is None:
        exprs += [x for c in action.choices if isinstance(c.type, IntType) for x in (c.type.lo, c.type.hi)]
    reads = end_reads
    for e in exprs:
        reads |= slots_read(lay, e)
    raising = any(may_raise(e, {}, lay) for e in exprs)
    conjuncts: tuple[Expr, ...] = ()
    if choice is not None:
        guard = fixed.guard
        conjuncts = guard.args if isinstance(guard, App) and guard.op is Op.AND else (guard,)
        if any(may_raise(c, {}, lay) for c in conjuncts):
            conjuncts = ()
    return Transition(a, choice, reads, writes, raising, tuple(packed_predicate(lay, c) for c in conjuncts),
                      tuple(slots_read(lay, c) for c in conjuncts))


def independence(lay: Layout) -> Independence:
    """The transitions of `lay.model` and their static dependencies."""
    model = lay.model
    end_reads = slots_read(lay, simplify(model.end, lay))
    out: list[Transition] = []
    keys: dict[tuple[int, tuple | None], int] = {}
    for a, action in enumerate(model.actions):
        if action.modality is Modality.MUST_NOT:
            continue
        combos = constant_choices(action)
        for choice in ([tuple(v.items()) for v in combos] if combos is not None else [None]):
            keys[(a, choice)] = len(out)
            out.append(_transition(lay, a, action, choice, end_reads))
    writers = [0] * len(lay.slots)
    for t, tr in enumerate(out):
        for k in range(len(lay.slots)):
            if tr.writes >> k & 1:
                writers[k] |= 1 << t
    dependent = []
    for tr in out:
        mask = 0
        for u, other in enumerate(out):
            if tr.writes & (other.reads | other.writes) or other.writes & tr.reads:
                mask |= 1 << u
        dependent.append(mask)
    return Independence(out, dependent, writers, keys)


def visible_slots(lay: Layout, ind: Independence, watch: Sequence[Expr], track: Iterable[int]) -> int:
    """The slots the claims observe: those the watched predicates read, those that decide whether a
    tracked action fires, those a transition that might raise reads, and the end condition's when
    it might raise."""
    mask = 0
    for e in watch:
        mask |= slots_read(lay, e)
    tracked = set(track)
    for tr in ind.transitions:
        if tr.may_raise or tr.action in tracked:
            mask |= tr.reads
    end = simplify(lay.model.end, lay)
    if may_raise(end, {}, lay):
        mask |= slots_read(lay, end)
    return mask


class Stubborn:
    """Chooses the transitions to fire in one state (`choose`)."""

    def __init__(self, ind: Independence, visible_slot_mask: int):
        self.ind = ind
        self.visible = ind.visible(visible_slot_mask)
        self.nes_all = [ind.writers_of(t.reads) for t in ind.transitions]
        self.nes_conj = [tuple(ind.writers_of(r) for r in t.conjunct_reads) for t in ind.transitions]

    def _nes(self, t: int, s: int) -> int:
        tr = self.ind.transitions[t]
        try:
            for k, conj in enumerate(tr.conjuncts):
                if not conj(s):
                    return self.nes_conj[t][k]
        except EvalError:
            pass
        return self.nes_all[t]

    def choose(self, s: int, enabled: int, acceptable: Callable[[int], bool]) -> int:
        """The enabled members of the smallest invisible stubborn set grown from one enabled seed,
        if it is `acceptable` (the cycle proviso); else `enabled` itself (a full expansion)."""
        if enabled.bit_count() <= 1:
            return enabled
        dependent, visible = self.ind.dependent, self.visible
        nes: dict[int, int] = {}
        best, bound = enabled, enabled.bit_count()
        seeds = enabled & ~visible
        while seeds and bound > 1:
            seed = (seeds & -seeds).bit_length() - 1
            seeds &= seeds - 1
            members = 1 << seed
            todo = [seed]
            while todo:
                t = todo.pop()
                if enabled >> t & 1:
                    add = dependent[t]
                elif t in nes:
                    add = nes[t]
                else:
                    add = nes[t] = self._nes(t, s)
                new = add & ~members
                if not new:
                    continue
                members |= new
                if new & enabled & visible or (members & enabled).bit_count() >= bound:
                    break
                while new:
                    low = new & -new
                    todo.append(low.bit_length() - 1)
                    new ^= low
            else:
                best, bound = members & enabled, (members & enabled).bit_count()
        return best if best == enabled or acceptable(best) else enabled


def explore_reduced(model: Model, budget: Budget, progress: ProgressFn | None, watch: Sequence[Expr],
                    track: Sequence[int], ticker: Callable[[StateSpace], Tick]) -> StateSpace:
    """Breadth-first search of an instantiated model firing stubborn sets (see the module
    docstring); the result is read as `explicit.explore`'s (`space.watch`, `space.fired`,
    `space.deadlocks`, `complete`, `stop`, `error`), with `space.reductions` naming POR.
    `ticker(space)` makes the `tick(i, n, depth)` called every TICK_STATES states, which may stop
    the search (budgets, progress)."""
    start = time.perf_counter()
    lay = layout(model)
    packing = packing_of(lay)
    labels = Labels()
    space = StateSpace(lay, packing, labels)
    space.watch = [None] * len(watch)
    space.fired = dict.fromkeys(track)
    ind = independence(lay)
    visible = visible_slots(lay, ind, watch, track)
    chooser = Stubborn(ind, visible)
    preds = [packed_predicate(lay, e) for e in watch]
    expander = compile_expander(lay)
    try:
        inits = initial_states(lay)
    except EvalError as err:
        space.complete, space.stop = False, model_error(f"model error in the initial states: {err}")
        return space
    seen: dict[int, int] = {}
    space.seen = seen
    limit = budget.max_states
    for s in inits:
        x = packing.pack(s)
        if x in seen:
            continue
        if limit is not None and len(space.packed) == limit:
            space.complete, space.stop = False, budget.states_stop()
            break
        seen[x] = len(space.packed)
        space.packed.append(x)
        space.parent.append(-1)
        space.via.append(0)
    tick = ticker(space)
    status = _search(space, seen, chooser, preds, set(track), expander.expand, expander.is_final, budget,
                     tick, proviso=bool(visible))
    if status == HAND_OVER:
        status = _hand_over(space, watch, track, budget, tick)
    if status is not None:
        space.complete = False
        if isinstance(status, EvalError):
            space.error = (space.head, str(status))
            space.stop = model_error(f"model error: {status}")
        else:
            space.stop = stop_of(status, budget)
    _watch_rest(space, preds)
    if space.reduced:
        space.reductions = (NAME,)
    space.seconds = time.perf_counter() - start
    if progress is not None:
        progress(ProgressInfo(len(space.packed), space.max_depth, space.seconds))
    return space


def _search(space: StateSpace, seen: dict[int, int], chooser: Stubborn, preds: list, tracked: set[int],
            expand: Callable, is_final: Callable, budget: Budget, tick: Tick, proviso: bool) -> str | Stop | EvalError | None:
    """The loop; `proviso`: apply C3 (needless when nothing is visible: deadlocks are kept by the
    stubborn sets alone)."""
    packed, parent, via, levels = space.packed, space.parent, space.via, space.levels
    labels, ind, fired, watch = space.labels, chooser.ind, space.fired, space.watch
    limit = budget.max_states if budget.max_states is not None else -1
    max_depth = budget.max_depth if budget.max_depth is not None else 1 << 62
    if packed and max_depth <= 0:
        return "depth"
    i, depth, level_end, n = 0, 0, len(packed), len(packed)

    def accept(mask: int) -> bool:
        """C3: no successor of the firings in `mask` was stored before the state itself."""
        return not any(mask >> tid & 1 and seen.get(t, n) <= i for tid, _label, t in firings)

    try:
        while i < n:
            space.head = i
            if i >= TRIAL_STATES and space.reduced < TRIAL_SHARE * i:
                space.level_end, space.cur_depth = level_end, depth
                return HAND_OVER
            if i == level_end:
                if depth + 1 >= max_depth:
                    return "depth"
                depth += 1
                levels.append(i)
                level_end = n
            if not i % TICK_STATES:
                status = tick(i, n, depth)
                if status is not None:
                    return status
            s = packed[i]
            for k, pred in enumerate(preds):
                if watch[k] is None:
                    try:
                        if pred(s):
                            watch[k] = i
                    except EvalError as err:
                        watch[k] = -1
                        space.watch_errors[k] = (i, str(err))
            if is_final(s):
                i += 1
                continue
            firings = []
            enabled = 0
            for a, choice, t, _gap in expand(s):
                if t is None:
                    continue
                label = labels(a, choice)
                if a in tracked and fired[a] is None:
                    fired[a] = (i, label, t)
                tid = ind.of(a, choice)
                enabled |= 1 << tid
                firings.append((tid, label, t))
            if not enabled:
                space.deadlocks.append(i)
                i += 1
                continue
            chosen = chooser.choose(s, enabled, accept if proviso else _anything)
            if chosen != enabled:
                firings = [f for f in firings if chosen >> f[0] & 1]
                space.reduced += 1
            for _tid, label, t in firings:
                space.transitions += 1
                if t not in seen:
                    if n == limit:
                        return "states"
                    seen[t] = n
                    packed.append(t)
                    parent.append(i)
                    via.append(label)
                    n += 1
            i += 1
        space.head = i
    except EvalError as err:
        return err
    return None


def _hand_over(space: StateSpace, watch: Sequence[Expr], track: Sequence[int], budget: Budget,
               tick: Tick) -> str | Stop | EvalError | None:
    """Go on from `space.head` with the generated full search (every state fully expanded from
    here: always sound), its labels replacing the ones stored so far."""
    code = compile_search(space.lay, watch, track)
    mine, theirs = space.labels.items, code.labels
    space.via = array("I", (theirs(*mine[v]) if mine else 0 for v in space.via))
    space.fired = {a: f and (f[0], theirs(*mine[f[1]]), f[2]) for a, f in space.fired.items()}
    space.labels = theirs
    space.seen = set(space.seen)
    space.tick = tick
    if budget.max_states is not None:
        space.state_limit = budget.max_states
    if budget.max_depth is not None:
        space.depth_limit = budget.max_depth
    return code.run(space)


def _anything(_mask: int) -> bool:
    return True


def _watch_rest(space: StateSpace, preds: list) -> None:
    """Watched predicates on the states stored but not expanded."""
    for k, pred in enumerate(preds):
        if space.watch[k] is not None:
            continue
        space.watch_unexpanded(k, pred)
