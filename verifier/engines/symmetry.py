"""Player symmetry in the explicit search: one stored state per orbit, traces lifted back.

For a model that declares `symmetry: players` (checked by `lang/symmetry.py`),
the rotations p -> (p + r) mod PLAYERS map transitions to transitions and leave
every claim's truth unchanged, so a state and its canonical form (the smallest
packed int among its rotations) satisfy the same claims and have the same
futures up to rotation. The search stores canonical forms only; a path of
canonical states is turned back into a path of the model (`lift`) by following,
from a real initial state, the firing of the same action whose target has the
next canonical form: that path replays on the reference semantics.

In a packed state the elements of a per-player array are adjacent fields of
one width, so rotating the players rotates that bit block; `active` and each
variable of `type: player` (a scalar holding a player) become (v + r) mod PLAYERS,
and a per-player array of players is rotated in place and in value.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from verifier.engines.codegen import Packing
from verifier.ir.model import ACTIVE_VAR, Action
from verifier.semantics import Layout, State, initial_states, successors

if TYPE_CHECKING:                      # numpy only where the partitions canonicalise arrays
    import numpy as np

Canon = Callable[[int], int]
ArrayCanon = Callable[['np.ndarray'], 'np.ndarray']
NAME = "symmetry"


def canonicalizer(lay: Layout, packing: Packing) -> Canon:
    """`canon(x)`: the smallest packed state among the player rotations of packed state `x`."""
    lines = canon_lines(lay, packing)
    if lines is None:
        return lambda x: x
    ns: dict = {}
    exec(compile("\n".join(lines) + "\n", f"<turnproof canon {lay.model.name}>", "exec"), ns)
    return ns["canon"]


@dataclass(frozen=True)
class Rotation:
    """What a player rotation moves in a packed state (`rotation_parts`)."""

    players: int
    blocks: list[tuple[int, int]]              # (shift, bits of one element) per per-player array
    aims: list[tuple[int, int, int]]           # (shift, bits, least value) per per-player array of players
    scalars: list[tuple[int, int, int]]        # (shift, bits, least value) per scalar holding a player
    moved: int                                 # the bits that move


def rotation_parts(lay: Layout, packing: Packing) -> Rotation | None:
    """The parts of a packed state a player rotation moves, None where it moves no bit (one
    player, or nothing per player)."""
    n = lay.model.players
    blocks = []
    aims = []            # rotated in place and in value
    for v in lay.model.variables:
        first, _lo, size = lay.offsets[v.name]
        if v.by_player and packing.widths[first] and size == n:
            if v.holds_player:
                aims.append((packing.shifts[first], packing.widths[first], packing.los[first]))
            else:
                blocks.append((packing.shifts[first], packing.widths[first]))
    players = []         # `active`, `type: player`
    for v in lay.model.variables:
        if v.name == ACTIVE_VAR or (v.holds_player and v.index is None):
            k = lay.offsets[v.name][0]
            if packing.widths[k]:
                players.append((packing.shifts[k], packing.widths[k], packing.los[k]))
    moved = 0
    for shift, w in blocks + [(s, w) for s, w, _lo in aims]:
        moved |= ((1 << (w * n)) - 1) << shift
    for shift, w, _lo in players:
        moved |= ((1 << w) - 1) << shift
    if n < 2 or not moved:
        return None
    return Rotation(n, blocks, aims, players, moved)


def canon_lines(lay: Layout, packing: Packing) -> list[str] | None:
    """The source of `canon(x)` (integer operations only: the compiled store compiles it too), or
    None where no rotation moves a bit (one player, or nothing per player)."""
    parts = rotation_parts(lay, packing)
    if parts is None:
        return None
    n, blocks, aims, players = parts.players, parts.blocks, parts.aims, parts.scalars
    lines = ["def canon(x):", "    best = x", f"    rest = x & {~parts.moved}"]
    for shift, w in blocks:
        lines.append(f"    b{shift} = (x >> {shift}) & {(1 << (w * n)) - 1}")
    for sh, w, lo in players:
        lines.append(f"    a{sh} = ((x >> {sh}) & {(1 << w) - 1}) + {lo}")
    for sh, w, lo in aims:
        lines += [f"    e{sh}_{p} = ((x >> {sh + p * w}) & {(1 << w) - 1}) + {lo}" for p in range(n)]
    for r in range(1, n):
        terms = ["rest"]
        for shift, w in blocks:
            mask = (1 << (w * n)) - 1
            terms.append(f"((((b{shift} << {r * w}) | (b{shift} >> {(n - r) * w})) & {mask}) << {shift})")
        for sh, _w, lo in players:
            terms.append(f"((((a{sh} + {r}) % {n}) - {lo}) << {sh})")
        for sh, w, lo in aims:       # player p's target t becomes player p + r's target t + r
            terms += [f"((((e{sh}_{p} + {r}) % {n}) - {lo}) << {sh + ((p + r) % n) * w})" for p in range(n)]
        lines += [f"    y = {' | '.join(terms)}", "    if y < best: best = y"]
    lines.append("    return best")
    return lines


def array_canonicalizer(lay: Layout, packing: Packing) -> ArrayCanon:
    """`canon` over an array of packed states of one word (uint64): each state's canonical form, as
    `canonicalizer` gives it, by the same rotations in numpy (the distributed search's partitions
    canonicalise a chunk's successors at once)."""
    import numpy as np  # here, so a check that never canonicalises arrays loads none

    parts = rotation_parts(lay, packing)
    if parts is None:
        return lambda x: x
    n, u = parts.players, np.uint64

    def field(x: np.ndarray, shift: int, bits: int) -> np.ndarray:
        return (x >> u(shift)) & u((1 << bits) - 1)

    def canon(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, np.uint64)
        best = x.copy()
        rest = x & u(~parts.moved & ((1 << 64) - 1))
        blocks = [(field(x, shift, w * n), shift, w) for shift, w in parts.blocks]
        scalars = [(field(x, shift, w).astype(np.int64) + lo, shift, lo) for shift, w, lo in parts.scalars]
        aims = [([field(x, shift + p * w, w).astype(np.int64) + lo for p in range(n)], shift, w, lo)
                for shift, w, lo in parts.aims]
        for r in range(1, n):
            y = rest.copy()
            for b, shift, w in blocks:
                y |= (((b << u(r * w)) | (b >> u((n - r) * w))) & u((1 << (w * n)) - 1)) << u(shift)
            for a, shift, lo in scalars:
                y |= ((a + r) % n - lo).astype(np.uint64) << u(shift)
            for values, shift, w, lo in aims:    # player p's target t becomes player p + r's target t + r
                for p, e in enumerate(values):
                    y |= ((e + r) % n - lo).astype(np.uint64) << u(shift + ((p + r) % n) * w)
            np.minimum(best, y, out=best)
        return best

    return canon


class LiftError(Exception):
    """A canonical path has no counterpart in the model: a bug of the reduction."""


def lift(lay: Layout, canon: Canon, pack: Callable[[State], int], states: Sequence[State],
         firings: Sequence[tuple[Action, tuple]], loop_start: int | None = None
         ) -> tuple[list[State], list[tuple[Action, tuple]], int | None]:
    """The model path that a path of canonical states stands for. A lasso's loop is followed
    round again until a round starts in a model state where an earlier round started (within
    PLAYERS + 1 rounds: each round maps one of the at most PLAYERS states of the orbit to
    another); the lifted loop is the rounds from there."""
    start = pack(states[0])
    inits = [s for s in initial_states(lay) if canon(pack(s)) == canon(start)]
    if not inits:
        raise LiftError("no initial state has the canonical form the search started from")
    first = next((s for s in inits if s == tuple(states[0])), inits[0])
    out_states, out_firings = [first], []

    def follow(path: Sequence[State], steps: Sequence[tuple[Action, tuple]]) -> None:
        for (action, choice), after in zip(steps, path[1:]):
            want = canon(pack(after))
            options = [(t.action, t.choice, t.target) for t in successors(lay, out_states[-1])
                       if t.target is not None and t.action.name == action.name and canon(pack(t.target)) == want]
            if not options:
                raise LiftError(f"no firing of {action.name} matches the canonical path")
            fired, values, target = next((o for o in options if o[1] == tuple(choice)), options[0])
            out_states.append(target)
            out_firings.append((fired, values))

    follow(states, firings)
    if loop_start is None:
        return out_states, out_firings, None
    loop_states, loop_firings = list(states[loop_start:]), list(firings[loop_start:])
    starts = {out_states[loop_start]: loop_start}     # model state -> where a round of the loop began
    for _ in range(lay.model.players + 1):
        follow(loop_states, loop_firings)
        if out_states[-1] in starts:
            return out_states, out_firings, starts[out_states[-1]]
        starts[out_states[-1]] = len(out_states) - 1
    raise LiftError("the lifted loop does not close")
