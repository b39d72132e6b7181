"""The turn change: what `pass turn` does, in order, and the same start for the very first turn.

At `pass turn` four blocks run one after another, each reading the state the one before
left (within a block the effects are simultaneous, and a later one wins on an element):

1. the turn ends: `reset: turn` variables go back to their init, then `turn_end` (and
   `round_end` when the round ends: after the last seat's turn, or where `next_player:` changes
   the order once every player has had a turn in it, `rounds`); `active` is the player whose
   turn ends;
2. the turn passes: `active` becomes the next player (the next seat, or the model's
   `next_player:`, read on the same state as block 1; with `skip:`, the first player from there
   on in the direction of play whom it does not skip: `skipping`), `phase` the first leaf;
3. the turn starts: durations of the new player end, `reset: own_turn`, `on_turn_start`;
4. the first phase is entered: the `on_enter` of each phase play enters, outermost first.

Blocks 3 and 4 also run for the very first turn: the initial values become what they
leave (the model's `init:` and `initially` describe the state before it). The blocks are
composed into one simultaneous step (`verifier.ir.effects.read_after`), so the engines
see plain assignments.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from verifier.diagnostics import Span
from verifier.ir.effects import After, choose, clamped, same_index
from verifier.ir.expr import App, Const, Expr, Index, Op, Var, eq, fold, map_expr, neg, pretty, substitute, walk
from verifier.ir.model import ACTIVE_VAR, Assign, Model, Reset, Variable
from verifier.lang import durations, rounds

Report = Callable[[str, Span | None, str], None]


def skipping(players: int, named: Expr, skip: Expr, player: str) -> Expr:
    """The player whose turn starts where the turn order skips some (`skip:`, a condition on `player`):
    `named` (the next seat, or `next_player:`) unless skipped, else the next player after it not skipped
    in the direction of play (backwards where `named` is the seat before `active`, as after a Reverse;
    forwards otherwise), and so on around the table; `named` where every player is skipped. One `if` per
    player, each candidate read on the state before the turn passes."""
    def seat(p: Expr, k: int) -> Expr:
        return App(Op.MOD, (App(Op.ADD, (p, Const(k))), Const(players)))

    backwards = eq(named, seat(Var(ACTIVE_VAR), players - 1))
    candidates = [named] + [seat(named, k) if players <= 2 else     # each a player term (`symmetry: players`)
                            App(Op.ITE, (backwards, seat(named, players - k), seat(named, k)))
                            for k in range(1, players)]
    out = named
    for candidate in reversed(candidates):
        out = App(Op.ITE, (neg(substitute(skip, {player: candidate})), candidate, out))
    return out


def target_key(a: Assign) -> str:
    return durations.target_key(a.target)


def keyed(*groups: Sequence[Assign]) -> list[Assign]:
    """One block: the groups' writes, a later write to the same target replacing an earlier one."""
    out: dict[str, Assign] = {}
    for group in groups:
        for a in group:
            out.pop(target_key(a), None)
            out[target_key(a)] = a
    return list(out.values())


def then(model: Model, done: list[Assign], block: Sequence[Assign]) -> list[Assign]:
    """`done` followed by `block`, whose targets and values read the state `done` leaves: one
    simultaneous step (a later write wins). A write of `done` that `block` overwrites stays: its
    value is still range-checked (out of range, it is a gap or forbids the step, as it would be
    between the blocks)."""
    after, moved = After(model, done), []
    for a in block:
        target = a.target if isinstance(a.target, Var) else Index(a.target.name, after(a.target.index), span=a.target.span)
        moved.append(Assign(target, after(a.value), span=a.span))
    return [*done, *moved]


def starting(model: Model, turn_start: Sequence[Assign]) -> list[Assign]:
    """Block 3, read where `active` is already the player whose turn starts: durations that end,
    `reset: own_turn`, then `on_turn_start` (a later one wins on an element)."""
    own = [Assign(Index(v.name, Var(ACTIVE_VAR)), init) for v in model.variables
           if v.reset is Reset.OWN_TURN and (init := v.init[0]) is not None]
    return keyed(durations.endings(model, Var(ACTIVE_VAR)), own, turn_start)


def turn_ending(model: Model, turn_end: Sequence[Assign], round_end: Sequence[Assign],
                passing: Sequence[Assign]) -> list[Assign]:
    """Blocks 1 and 2 as one step (both read the state before the turn passes): resets, `turn_end`,
    `round_end` on the last player's turn, and `passing` (active and phase)."""
    resets = []
    for v in model.variables:
        if v.reset is not Reset.TURN:
            continue
        assert all(i is not None for i in v.init), "the loader refuses a reset variable without an init"
        if v.index is None:
            resets.append(Assign(Var(v.name), v.init[0]))   # type: ignore[arg-type]
        else:
            lo = v.index_lo()
            resets.extend(Assign(Index(v.name, Const(lo + i)), init)   # type: ignore[arg-type]
                          for i, init in enumerate(v.init))
    out = keyed(passing, rounds.marking(model), resets, turn_end)
    last = model.round_condition()
    current = {target_key(a): a for a in out}
    ending = []
    for a in round_end:
        before = current.get(target_key(a))
        ending.append(Assign(a.target, App(Op.ITE, (last, a.value, before.value if before else a.target)),
                             span=a.span))
    return keyed(out, ending)


def pass_turn(model: Model, turn_end: Sequence[Assign], round_end: Sequence[Assign], turn_start: Sequence[Assign],
              passing: Sequence[Assign], entering: Sequence[Assign]) -> tuple[Assign, ...]:
    """The effects of the turn-passing action: blocks 1 to 4 composed into one step."""
    step = turn_ending(model, turn_end, round_end, passing)
    for block in (starting(model, turn_start), entering):
        if block:
            step = then(model, step, block)
    return tuple(step)


def first_turn(model: Model, turn_start: Sequence[Assign], entering: Sequence[Assign], report: Report) -> Model:
    """`model` whose initial states are those its `init:`/`initially` describe after blocks 3 and 4
    have run for the first player (player 0, in the first leaf phase)."""
    step = then(model, [], starting(model, turn_start)) if turn_start or _has_start_resets(model) else []
    if entering:
        step = then(model, step, entering)
    if not step:
        return model
    inits = {v.name: _per_element(v) for v in model.variables}

    def known(node: Expr) -> Expr | None:
        """A read of the state before the first turn, replaced by the initial value where it is fixed."""
        if isinstance(node, Var) and node.name in inits and inits[node.name][0] is not None:
            return inits[node.name][0]
        if isinstance(node, Index):
            where = fold(map_expr(node.index, known))
            var = model.var(node.name)
            k = where.value - var.index_lo() if isinstance(where, Const) else -1
            if 0 <= k < len(inits[node.name]) and inits[node.name][k] is not None:
                return inits[node.name][k]
            return Index(node.name, where, span=node.span)
        return None

    written: dict[str, dict[int, tuple[Expr, Span | None]]] = {}
    broken = False
    for a in step:
        var = model.var(a.target.name)
        where = fold(map_expr(a.target.index, known)) if isinstance(a.target, Index) else Const(var.index_lo())
        value = settle(map_expr(clamped(model, var.name, a.value), known))
        k = where.value - var.index_lo() if isinstance(where, Const) else -1
        if not 0 <= k < var.size() or _reads_state(value):
            broken = True
            report(f"the first turn's start cannot set {pretty(a.target)}: it depends on a variable with no "
                   "initial value",
                   a.span, "on_turn_start and the first phase's on_enter also run when the game starts, "
                           "from the init: values; give the variables they read an init:")
            continue
        written.setdefault(var.name, {})[k] = (value, a.span)
    for name, elements in written.items():
        for k, (_, span) in elements.items():
            if inits[name][k] is None and _reads_element(model.initially, model.var(name), k):
                broken = True
                report(f"initially reads {name}, which has no init: and which the first turn's start sets", span,
                       f"give {name} an init: (initially describes the state before the first turn starts)")
    if broken:
        return model
    before_start = settle(map_expr(model.initially, _fixed_reads(model, inits, written)))
    variables = []
    for v in model.variables:
        if v.name not in written:
            variables.append(v)
            continue
        values = list(inits[v.name])
        for k, (value, _) in written[v.name].items():
            values[k] = value
        variables.append(replace(v, init=tuple(values)))
    return replace(model, variables=tuple(variables), initially=before_start)


def _has_start_resets(model: Model) -> bool:
    return any(v.reset is Reset.OWN_TURN or v.until_of is not None for v in model.variables)


def _per_element(v: Variable) -> list[Expr | None]:
    return list(v.init) if len(v.init) == v.size() else list(v.init) * v.size()


def _reads_state(e: Expr) -> bool:
    return any(isinstance(n, (Var, Index)) for n in walk(e))


def _reads_element(e: Expr, var: Variable, k: int) -> bool:
    """Whether `e` may read element `k` of `var` (any read with an index that is not another literal)."""
    for n in walk(e):
        if isinstance(n, Var) and n.name == var.name:
            return True
        if isinstance(n, Index) and n.name == var.name and \
                (not isinstance(n.index, Const) or n.index.value - var.index_lo() == k):
            return True
    return False


def _fixed_reads(model: Model, inits: dict[str, list[Expr | None]],
                 written: dict[str, dict[int, tuple[Expr, Span | None]]]) -> Callable[[Expr], Expr | None]:
    """`initially` speaks of the state before the first turn: its reads of elements the first turn
    sets are their (fixed) initial values."""

    def fn(node: Expr) -> Expr | None:
        if isinstance(node, Var) and node.name in written:
            return inits[node.name][0]
        if isinstance(node, Index) and node.name in written:
            where = map_expr(node.index, fn)
            lo = model.var(node.name).index_lo()
            value: Expr = Index(node.name, where, span=node.span)
            for k in written[node.name]:
                init = inits[node.name][k]
                assert init is not None, "reported: initially reads an element without init that the start sets"
                value = choose(same_index(where, Const(lo + k)), init, value)
            return value
        return None

    return fn


def settle(e: Expr) -> Expr:
    """`e` with literal operations folded and each `if` whose condition is then a literal replaced by its branch."""

    def fn(node: Expr) -> Expr | None:
        if isinstance(node, App) and node.op is Op.ITE:
            cond = settle(node.args[0])
            if isinstance(cond, Const):
                return settle(node.args[1] if cond.value else node.args[2])
        return None

    return fold(map_expr(fold(e), fn))
