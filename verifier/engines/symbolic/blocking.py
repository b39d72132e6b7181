"""Invariants excluding the transitions that block a ranking layer, by PDR.

A blocked layer's core (`layer.Failure.core`) is a set of sampled transitions whose changes
leave no linear function decreasing; a row of the programme depends only on the action and on
how the transition changes the state. The moves from known reachable states (an explicit
search's and seeded random runs': `seen.py`) are reachable; a blocking transition whose change
no such move of its action makes may start in an unreachable state that no short clause
excludes (the facts that tell such states apart hold only where several literals do: "in the
second player's turn, with nobody having drawn this round, the first deck is empty"). Its
change is then cut down to the fewest slots on which no such move of that action agrees with
it (a pass turn back to the first player that leaves "somebody drew this round" unchanged),
and PDR is asked whether any transition of that action that changes those slots so is
reachable: where none is, its invariant (inductive, given the declared ranges) removes every
such row. Nothing is believed here: the caller re-checks the invariants and every layer.
"""
from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from math import inf

from verifier.engines.symbolic.core import Effort, Outcome
from verifier.engines.symbolic.encode import Encoding, Term, conj
from verifier.engines.symbolic.layer import Failure, Sample
from verifier.engines.symbolic.seen import Changes

Prove = Callable[[Term, float], Outcome]    # PDR on a target over enc.cur, enc.nxt and the choices, within a
#                                             share of the units left
SLOTS = 3       # slots of a change kept, at most
TRIES = 2       # sets of slots asked per blocking transition, at most
SHARES = (0.1, 0.25)    # of the units left, per PDR question: every question within the first, then those
#                         that ran out within the next (Spacer's cost on one target varies several times over
#                         with the Z3 work before it: WTactics 7/7/20's pass turns took 6.2 M units or > 29 M)

Change = tuple[int, tuple[tuple[int, int], ...]]      # an action and (slot, difference) pairs


def unreachable_changes(enc: Encoding, region: Term, steps: dict[int, Term], failure: Failure, prove: Prove,
                        effort: Effort, reachable: Callable[[tuple[int, ...]], Changes],
                        asked: dict[Change, float]) -> Term | None:
    """PDR's invariant excluding the first change, cut down from the blocking transitions, that
    no reachable move shows and no reachable transition makes (`reachable`: the changes per
    action of known reachable moves at given values of `enc.params`, `seen.Seen.changes`): no
    transition of the action (its `steps`) within `region` changes those slots so. The changes
    over the fewest slots are asked first (fewer slots that no reachable move changes so are the
    likelier unreachable: a pass back to the first player that leaves "somebody drew this round"
    as it was, before a pass that also leaves the abilities used and the cards drawn as they
    were), then the newest blocking transitions'; each within SHARES[0] of the units left, then
    those it ran out on within the next share. `asked`: per change, the largest share it was
    asked within (inf once answered), kept by the caller across its blocked layers: a change is
    not asked again within a share as small. One invariant is enough for the layer to be tried
    again (the caller asks again where it is still blocked)."""
    n, k = len(enc.slots), len(enc.params)
    values = tuple(failure.samples[failure.core[0]].source[n:n + k])
    seen = reachable(values)
    cuts = [(len(change[1]), rank, t, change) for rank, i in enumerate(failure.core)
            for t, change in enumerate(_cut(failure.samples[i], seen.get(failure.samples[i].action, set()), n)[:TRIES])]
    order = list(dict.fromkeys(change for *_, change in sorted(cuts)))
    for share in SHARES:
        for change in order:
            if effort.expired():
                return None
            if asked.get(change, 0.0) >= share:
                continue
            a, slots = change
            outcome = prove(conj(region, enc.rename(region, enc.cur, enc.nxt), steps[a],
                                 *(enc.nxt.slots[j] - enc.cur.slots[j] == d for j, d in slots)), share)
            asked[change] = share if outcome.status == "unknown" else inf
            if outcome.status == "safe" and outcome.invariant is not None:
                return outcome.invariant
    return None


def _cut(sample: Sample, moves: set[tuple[int, ...]], n: int) -> list[Change]:
    """The sample's change cut down to the fewest slots (SLOTS at most) on which no change in
    `moves` (reachable ones of the same action) agrees with it, the slots whose changes vary
    least first; none when some reachable move makes the very same change."""
    change = tuple(y - x for x, y in zip(sample.source[:n], sample.target[:n]))
    if change in moves:
        return []
    rows = sorted(moves)
    agree = {j: sum(1 << r for r, row in enumerate(rows) if row[j] == change[j]) for j in range(n)}
    everyone = (1 << len(rows)) - 1
    useful = [j for j in range(n) if agree[j] != everyone]      # slots some move changes otherwise
    spread = {j: len({row[j] for row in rows} | {change[j]}) for j in useful}
    for size in range(SLOTS + 1):
        found = [slots for slots in combinations(useful, size) if not _common(agree, slots, everyone)]
        if found:
            found.sort(key=lambda slots: (sum(spread[j] for j in slots), slots))
            return [(sample.action, tuple((j, change[j]) for j in slots)) for slots in found]
    return []


def _common(agree: dict[int, int], slots: tuple[int, ...], everyone: int) -> int:
    """The moves (a bit each) that agree with the change on every one of `slots`."""
    common = everyone
    for j in slots:
        common &= agree[j]
    return common
