"""Play random games on a model's packed generated code and tally what happens.

The games run on the monitor product of the model's step, ordering and
bounded-response claims (`props.monitor.compile_together`): monitors only
observe, so each game is a game of the model, and the safety part of those
claims is an invariant over the monitors. Only the current game's path is
kept (at most `max_steps` states), never a set of visited states, so the
printed numbers of a game play as well as the small ones.

Game `i` draws from its own generator seeded with (`seed`, `i`): one game
replays alone, and a trace (the first violation of each claim) is rebuilt
from its path and replayed on the reference semantics before it is returned.
"""
from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from verifier.diagnostics import Diagnostic, ModelError, UsageError
from verifier.engines.bfsgen import compile_expander, packed_predicate, packing_of
from verifier.ir.model import ActionKind, EnumType, Model
from verifier.ir.props import DeadlockFree, Invariant, Property, Reachable, map_claim
from verifier.lang.yaml_source import suggest
from verifier.playout.policy import UNIFORM, Policy
from verifier.playout.result import CUT, ENDED, STUCK, ClaimTally, Simulation
from verifier.props.mapback import strip_monitors
from verifier.props.monitor import compile_claim, compile_together
from verifier.props.moves import chose, named
from verifier.resources import Backstop
from verifier.semantics import EvalError, Layout, initial_states, layout
from verifier.trace import Trace, build_trace, replay

GameDone = Callable[[int], None]      # called with the number of games played so far


class PlayoutModelError(ModelError):
    """A playout met a model error: the model itself fails in a state a game reaches (exit 2)."""


TRACE_STEPS_SHOWN = 30      # the last steps of a failing game listed in the message


def model_error_diagnostic(game: int, message: str, trace: Trace) -> Diagnostic:
    """The model error a playout met, named as one, with the steps of the game that reach it."""
    steps = [f"step {n}: {step.label}" for n, step in enumerate(trace.steps, 1)]
    skipped = max(0, len(steps) - TRACE_STEPS_SHOWN)
    shown = ([f"... {skipped} earlier steps"] if skipped else []) + steps[skipped:]
    return Diagnostic(f"model error in playout game {game} after {len(trace.steps)} moves: {message}",
                      notes=tuple((line, None) for line in shown or ["in the initial state"]),
                      hint="the model itself fails in the state these moves reach (not a budget); fix the rule the "
                           "trace ends with (turnproof check shows the shortest trace)")


@dataclass(frozen=True)
class PlayoutOptions:
    games: int = 100
    seed: int = 0
    max_steps: int = 1000
    policy: Policy = UNIFORM
    hand: str | None = None           # the variable of the hand-size histogram; None: `hand` if declared
    backstop: Backstop | None = None  # the run's --timeout: no game starts after it (the statistics cover those played)


@dataclass
class _Check:
    """A claim as the game loop evaluates it."""

    claim: Property
    how: str
    test: Callable[[int], bool] | None = None     # a packed state -> the claim holds there
    actions: frozenset[int] = frozenset()         # a reachable claim's action indices
    choice: tuple[tuple[str, int], ...] = ()      # ... and the move's choice values (`with:`)
    violated: int = 0
    witnessed: int = 0
    first_game: int | None = None
    trace: Trace | None = None


def default_hand(model: Model) -> str | None:
    return "hand" if any(v.name == "hand" for v in model.variables) else None


def simulate(model: Model, claims: Sequence[Property], options: PlayoutOptions = PlayoutOptions(),
             path: str = "", done: GameDone | None = None) -> Simulation:
    """Play `options.games` games of the concrete `model` (fewer when `options.backstop` cuts
    first); evaluate `claims` on every state."""
    game, starts, hand_var = _prepare(model, claims, options)
    start = time.perf_counter()
    played = 0
    while played < options.games and (options.backstop is None or not options.backstop.expired()):
        game.play(played, starts)
        played += 1
        if done is not None:
            done(played)
    seconds = time.perf_counter() - start
    return Simulation(
        model=model.name, path=path, variant=model.variant, params=model.params_dict, games=played,
        requested=options.games,
        seed=options.seed, max_steps=options.max_steps, policy=options.policy,
        outcomes={k: game.outcomes[k] for k in (ENDED, STUCK, CUT)},
        game_lengths=tuple(game.lengths), game_outcomes=tuple(game.kinds),
        turn_lengths=dict(sorted(game.turns.items())),
        actions={a.name: game.fired[k] for k, a in enumerate(game.lay.model.actions)},
        phase_entries=game.phase_counts(game.entries), phase_steps=game.phase_counts(game.in_phase),
        hand_var=hand_var, hand_sizes=dict(sorted(game.hand.items())),
        claims=tuple(ClaimTally(c.claim.id, c.claim.kind, c.claim.statement, c.claim.expected, c.how, c.violated,
                                c.witnessed, c.first_game, c.trace) for c in game.checks),
        steps=game.steps, seconds=seconds)


def game_trace(model: Model, options: PlayoutOptions, index: int) -> Trace:
    """Game `index` of a `simulate` run with these options, alone, as a replayed trace."""
    game, starts, _ = _prepare(model, [], options)
    return game.trace(*game.play(index, starts))


def _prepare(model: Model, claims: Sequence[Property],
             options: PlayoutOptions) -> tuple[_Game, list[int], str | None]:
    """The game loop for `model` and `claims`, the packed initial states, the hand variable."""
    if not model.is_concrete:
        raise UsageError(Diagnostic("playouts need every parameter to have a value", hint="drop '=*' from --param"))
    hand_var = options.hand or default_hand(model)
    if hand_var is not None and hand_var not in {v.name for v in model.variables}:
        raise UsageError(Diagnostic(f"--hand: the model has no variable '{hand_var}'",
                                    hint=suggest(hand_var, [v.name for v in model.variables], "variables")))
    claims = [map_claim(c, model.fix_params) for c in claims]
    monitored = [c for c in claims if compile_claim(model, c) is not None]
    product, parts = compile_together(model, monitored) if monitored else (model, [])
    lay = layout(product)
    checks = _checks(lay, claims, {c.id: part for c, part in zip(monitored, parts, strict=True)})
    try:
        starts = [packing_of(lay).pack(s) for s in initial_states(lay)]
    except EvalError as err:
        raise PlayoutModelError(Diagnostic(f"model error in the initial states: {err}",
                                           hint="an initial value cannot be evaluated: fix the variable's init")) \
            from None
    if not starts:
        raise UsageError(Diagnostic("the model has no initial state: nothing to play",
                                    hint="check 'initially' and the variables' init values"))
    return _Game(lay, layout(model), options, checks, hand_var), starts, hand_var


def _checks(lay: Layout, claims: Sequence[Property], parts: dict) -> list[_Check]:
    out = []
    for claim in claims:
        if isinstance(claim, Invariant):
            out.append(_Check(claim, "every state", packed_predicate(lay, claim.expr)))
        elif claim.id in parts:
            safety = [c for c in parts[claim.id].claims if isinstance(c, Invariant)]
            out.append(_Check(claim, "monitor", packed_predicate(lay, safety[0].expr)))
        elif isinstance(claim, DeadlockFree):
            out.append(_Check(claim, "stuck states"))
        elif isinstance(claim, Reachable):
            if claim.expr is not None:
                out.append(_Check(claim, "witness", _unreached(packed_predicate(lay, claim.expr))))
            else:
                assert claim.action, "a reachable claim names a state or actions"
                out.append(_Check(claim, "witness", actions=frozenset(
                    i for i, a in enumerate(lay.model.actions) if named(a, claim.action)), choice=claim.choice))
        else:
            out.append(_Check(claim, "not on finite playouts"))
    return out


def _unreached(target: Callable[[int], bool]) -> Callable[[int], bool]:
    """A reachable claim's test: true while its target is not reached."""
    return lambda s: not target(s)


class _Game:
    """The game loop and the running tallies."""

    def __init__(self, lay: Layout, base: Layout, options: PlayoutOptions, checks: list[_Check],
                 hand_var: str | None):
        self.lay, self.base, self.options, self.checks = lay, base, options, checks
        expander = compile_expander(lay)
        self.expand, self.is_final = expander.expand, expander.is_final
        self.packing = packing_of(lay)
        actions = lay.model.actions
        self.turn_end = [a.kind is ActionKind.TURN_END for a in actions]
        self.weights = [options.policy.weight(a.name) for a in actions]
        self.uniform = options.policy.is_uniform
        phase = lay.variables.get("phase")
        self.phase_values = phase.type.values if phase is not None and isinstance(phase.type, EnumType) else ()
        self.phase_slot = self._slot("phase") if self.phase_values else None
        self.hand_slots = [k for k, s in enumerate(lay.slots) if s.var == hand_var] if hand_var else []
        self.outcomes: Counter = Counter()
        self.lengths: list[int] = []
        self.kinds: list[str] = []
        self.turns: Counter = Counter()
        self.fired: Counter = Counter()
        self.entries: Counter = Counter()
        self.in_phase: Counter = Counter()
        self.hand: Counter = Counter()
        self.steps = 0

    def _slot(self, name: str) -> int:
        return next(k for k, s in enumerate(self.lay.slots) if s.var == name)

    def phase_counts(self, counts: Counter) -> dict[str, int]:
        return {p: counts[k] for k, p in enumerate(self.phase_values)}

    def play(self, index: int, starts: list[int]) -> tuple[list[int], list[tuple[int, tuple]]]:
        """Play game `index`, tally it; its path (packed states) and moves (action index, choice).
        A model error on the way (a move the model cannot carry out, a claim it cannot evaluate)
        raises `PlayoutModelError` with the game's trace up to the state where it fails."""
        path: list[int] = []
        moves: list[tuple[int, tuple]] = []
        try:
            self._play(index, starts, path, moves)
        except EvalError as err:
            raise PlayoutModelError(model_error_diagnostic(index, str(err), self.trace(path, moves))) from None
        return path, moves

    def _play(self, index: int, starts: list[int], path: list[int], moves: list[tuple[int, tuple]]) -> None:
        rng = random.Random(f"{self.options.seed}:{index}")
        state = starts[rng.randrange(len(starts))] if len(starts) > 1 else starts[0]
        path.append(state)
        field = self.packing.field
        pending = [c for c in self.checks if c.how in ("every state", "monitor", "witness")]
        pending = self._observe(index, state, path, moves, pending)
        turn_steps, outcome = 0, CUT
        for _ in range(self.options.max_steps):
            firings = [f for f in self.expand(state) if f[2] is not None]
            if not firings:
                outcome = ENDED if self.is_final(state) else STUCK
                break
            a, choice, state = self._pick(rng, firings)
            self.fired[a] += 1
            moves.append((a, choice))
            path.append(state)
            turn_steps += 1
            if self.phase_slot is not None:
                self.in_phase[field(path[-2], self.phase_slot)] += 1
            if self.turn_end[a]:
                self.turns[turn_steps] += 1
                turn_steps = 0
            pending = self._observe(index, state, path, moves, pending)
            made = [c for c in pending if a in c.actions and chose(choice, c.choice)]
            for c in made:
                self._witnessed(c, index, path, moves)
            pending = [c for c in pending if c not in made]
        else:
            if not [f for f in self.expand(state) if f[2] is not None]:
                outcome = ENDED if self.is_final(state) else STUCK
        if outcome == ENDED and turn_steps:
            self.turns[turn_steps] += 1
        if outcome == STUCK:
            for c in self.checks:
                if c.how == "stuck states":
                    self._violated(c, index, path, moves)
        self.steps += len(moves)
        self.outcomes[outcome] += 1
        self.lengths.append(len(moves))
        self.kinds.append(outcome)

    def _pick(self, rng: random.Random, firings: list) -> tuple[int, tuple, int]:
        actions = sorted({f[0] for f in firings})
        if self.uniform or len(actions) == 1:
            a = actions[rng.randrange(len(actions))] if len(actions) > 1 else actions[0]
        else:
            weights = [self.weights[x] for x in actions]
            a = rng.choices(actions, weights)[0] if sum(weights) > 0 else actions[rng.randrange(len(actions))]
        mine = [f for f in firings if f[0] == a]
        f = mine[rng.randrange(len(mine))] if len(mine) > 1 else mine[0]
        return a, f[1], f[2]

    def _observe(self, index: int, state: int, path: list[int], moves: list, pending: list[_Check]) -> list[_Check]:
        """Tally `state` (the latest of the game); the checks still to evaluate in this game."""
        field = self.packing.field
        if self.phase_slot is not None:
            phase = field(state, self.phase_slot)
            if len(path) == 1 or field(path[-2], self.phase_slot) != phase:
                self.entries[phase] += 1
        for k in self.hand_slots:
            self.hand[field(state, k)] += 1
        left = []
        for c in pending:
            if c.test is None or c.test(state):
                left.append(c)
            elif c.how == "witness":
                self._witnessed(c, index, path, moves)
            else:
                self._violated(c, index, path, moves)
        return left

    def _witnessed(self, c: _Check, index: int, path: list[int], moves: list) -> None:
        """A reachable claim's target reached; its trace is kept when the claim expects it unreachable."""
        c.witnessed += 1
        if c.trace is None and c.claim.expected == "VIOLATED":
            c.first_game = index
            c.trace = self.trace(path, moves)

    def _violated(self, c: _Check, index: int, path: list[int], moves: list) -> None:
        c.violated += 1
        if c.trace is None:
            c.first_game = index
            c.trace = self.trace(path, moves)

    def trace(self, path: list[int], moves: list) -> Trace:
        """The path as a trace of the designer's model, replayed on the reference semantics."""
        unpack, actions = self.packing.unpack, self.lay.model.actions
        full = build_trace(self.lay, [unpack(s) for s in path], [(actions[a], c) for a, c in moves])
        trace = strip_monitors(full)
        assert trace is not None
        replay(self.base, trace)
        return trace
