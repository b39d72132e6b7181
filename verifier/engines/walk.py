"""Random runs as witnesses: reachability and violations deeper than a capped search goes.

On a model whose state space is far too large to enumerate (the games at their
printed numbers), breadth-first search stops at its state cap long before the
end of a game, so a claim whose witness lies deep (a game can end; a finished
game can have no winner) stays UNKNOWN. A run from an initial state that picks
an enabled firing at random reaches such states quickly, and any run that
reaches one is a proof: a trace that replays. So `check` answers only with
evidence, never from absence: HOLDS for a reachability claim a run reaches,
VIOLATED for an invariant a run breaks or a step claim one of its moves breaks;
everything else stays UNKNOWN. Runs are seeded, so the same model gives the same
traces.

A step claim is judged on the model itself, without its monitor product: each
move a run takes is one transition, and the claim's expression is read over the
pair (its `prev(x)` from the state before, the rest from the state after), for
the moves of the actions it judges. A break is a reachable transition that the
claim forbids: the run up to that move is the counterexample, and replays.
"""
from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from verifier.engines.bfsgen import compile_expander, packed_predicate, packing_of
from verifier.engines.codegen import Packing
from verifier.ir.expr import TRUE, neg
from verifier.ir.model import Model
from verifier.ir.props import PREV_MARK, Event, Invariant, Property, Reachable, StepInvariant, map_claim
from verifier.props.events import occurs
from verifier.props.moves import Choice, chose, named
from verifier.result import CheckResult, Stats, Verdict
from verifier.semantics import EvalError, Layout, holds, initial_states, layout
from verifier.trace import build_trace

NAME = "walk"
MAX_STEPS = 100_000      # one run stops here if it has not ended (a model with endless plays)
STEPS = 400_000          # steps of all the runs of one call, by default (about 5 s of one core on the games)


def check(model: Model, properties: Sequence[Property], steps_at_most: int | None = None,
          seed: int = 0) -> list[CheckResult]:
    """Seeded random runs of `steps_at_most` steps in all (STEPS by default; a run that cannot move
    counts as one, so a model stuck in its initial states ends them too); a result per claim
    (UNKNOWN where no run decided it)."""
    start = time.perf_counter()
    steps_at_most = STEPS if steps_at_most is None else steps_at_most
    concrete = model.instantiate()
    lay = layout(concrete)
    packing = packing_of(lay)
    expand = compile_expander(lay).expand
    claims = [map_claim(p, concrete.fix_params) for p in properties]
    targets: dict[int, Callable[[int], bool]] = {}
    actions: dict[int, set[int]] = {}
    with_values: dict[int, tuple[tuple[str, int], ...]] = {}     # a move's choice values (`with:`)
    moves: dict[int, tuple[frozenset[int], Callable[[int, int, Choice], bool]]] = {}
    pair: Layout | None = None
    for k, p in enumerate(claims):
        if isinstance(p, Invariant):
            targets[k] = packed_predicate(lay, neg(p.expr))
        elif isinstance(p, Reachable) and p.expr is not None:
            targets[k] = packed_predicate(lay, p.expr)
        elif isinstance(p, Reachable) and p.action:
            actions[k] = {i for i, a in enumerate(concrete.actions) if named(a, p.action)}
            with_values[k] = p.choice
        elif isinstance(p, StepInvariant):
            pair = pair or _pair_layout(concrete)
            moves[k] = _move_check(concrete, pair, _joiner(packing, packing_of(pair)), p)
    found: dict[int, tuple[list[int], list[tuple[int, tuple]]]] = {}
    wanted = len(targets) + len(actions) + len(moves)
    inits = [packing.pack(s) for s in initial_states(lay)]
    runs = steps = 0
    path: list[int] = []
    fired: list[tuple[int, tuple]] = []
    for state, move in random_runs(expand, inits, random.Random(seed), MAX_STEPS):
        if move is None:                       # a run starts
            if len(found) >= wanted or steps + runs >= steps_at_most:     # a run that cannot move costs a step too
                break
            runs += 1
            path, fired = [state], []
        else:
            steps += 1
            a = move[0]
            for k, judged in actions.items():
                if k not in found and a in judged and chose(move[1], with_values[k]):
                    found[k] = (path + [state], fired + [move])
            for k, (judged_moves, breaks) in moves.items():
                if k not in found and a in judged_moves and breaks(path[-1], state, move[1]):
                    found[k] = (path + [state], fired + [move])
            path.append(state)
            fired.append(move)
        _look(targets, found, path, fired)
        if steps >= steps_at_most:
            break
    stats = Stats(steps, steps, time.perf_counter() - start)
    out = []
    for k, p in enumerate(properties):
        if k not in found:
            out.append(CheckResult(p, Verdict.UNKNOWN, NAME, None, stats, None,
                                   f"no random run decided it ({runs:,} runs, {steps:,} steps)",
                                   model.param_values, model.variant))
            continue
        path, fired = found[k]
        trace = build_trace(lay, [packing.unpack(x) for x in path],
                            [(concrete.actions[a], choice) for a, choice in fired])
        verdict = Verdict.VIOLATED if isinstance(p, (Invariant, StepInvariant)) else Verdict.HOLDS
        what = ("'s last move breaks it" if isinstance(p, StepInvariant) else
                " breaks it" if verdict is Verdict.VIOLATED else " reaches it")
        out.append(CheckResult(p, verdict, NAME, len(fired), stats, trace, f"a random run{what}",
                               model.param_values, model.variant))
    return out


def random_runs(expand: Callable, starts: Sequence[int], rng: random.Random,
                length: int) -> Iterator[tuple[int, tuple[int, tuple] | None]]:
    """Seeded random runs on generated successor code (`expand` of packed states), one after
    the other for as long as the caller takes them: each run starts in one of `starts` and takes
    up to `length` moves, each an enabled firing drawn alike. Yields ``(state, None)`` as a run
    starts, then ``(target, (action, choice))`` per move; a run ends early where no firing is
    enabled or the model errs (the explicit engine reports that)."""
    while starts:
        state = rng.choice(starts)
        yield state, None
        for _ in range(length):
            try:
                options = [(a, choice, t) for a, choice, t, _gap in expand(state) if t is not None]
            except EvalError:
                break
            if not options:
                break
            a, choice, state = rng.choice(options)
            yield state, (a, choice)


def _look(targets: dict[int, Callable[[int], bool]], found: dict, path: list[int], fired: list) -> None:
    """Record the run so far as the witness of every target its last state meets."""
    for k, pred in targets.items():
        if k in found:
            continue
        try:
            hit = pred(path[-1])
        except EvalError:
            continue
        if hit:
            found[k] = (list(path), list(fired))


def _pair_layout(concrete: Model) -> Layout:
    """The layout of a pair model: the plain variables followed by a `prev:` copy of each
    (`_joiner` packs a move into it)."""
    return layout(replace(concrete, variables=concrete.variables +
                          tuple(replace(v, name=PREV_MARK + v.name) for v in concrete.variables)))


def _joiner(packing: Packing, pair: Packing) -> Callable[[int, int], int]:
    """`join(before, after)`: a move's packed state in the pair model. Where the pair model packs
    the `prev:` copies as the plain slots moved up by the same number of bits (slots pack in
    order), that is `after | before << offset`; else (wide states packed by words) slot by slot."""
    n = len(packing.shifts)
    used = [k for k in range(n) if packing.widths[k]]
    offset = pair.shifts[used[0] + n] - packing.shifts[used[0]] if used else 0
    if all(pair.shifts[k] == packing.shifts[k] and pair.shifts[k + n] == packing.shifts[k] + offset for k in used):
        return lambda before, after: after | before << offset
    unpack, pack = packing.unpack, pair.pack
    return lambda before, after: pack(unpack(after) + unpack(before))


def _move_check(concrete: Model, pair: Layout, join: Callable[[int, int], int],
                claim: StepInvariant) -> tuple[frozenset[int], Callable[[int, int, Choice], bool]]:
    """The actions `claim` judges (by index) and `breaks(before, after, choice)` over packed states and
    the move's choice values: the expression is compiled over the pair model's layout (`_pair_layout`),
    `join` packs a move; a claim that reads the move's choices is evaluated with them (slower: no code)."""
    judged = frozenset(i for i, a in enumerate(concrete.actions) if not claim.actions or
                       TRUE in (occurs(concrete, a, Event(action=name)) for name in claim.actions))
    compiled = None if claim.reads_choices() else packed_predicate(pair, claim.expr)
    unpack = packing_of(pair).unpack

    def breaks(before: int, after: int, choice: Choice) -> bool:
        if not chose(choice, claim.choice):
            return False
        try:
            if compiled is not None:
                return not compiled(join(before, after))
            return not holds(pair, claim.expr, unpack(join(before, after)), dict(choice))
        except EvalError:        # a run-time error of the claim: the product's search reports it
            return False

    return judged, breaks
