"""What a batch of playouts comes out as: per-game outcomes and the statistics over them."""
from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from verifier.playout.policy import Policy
from verifier.trace import Trace

ENDED, STUCK, CUT = "ended", "stuck", "cut"   # an end of game, no move left, --max-steps reached


@dataclass(frozen=True)
class ClaimTally:
    """One claim over the playouts.

    `how` says what was evaluated: ``every state`` (an invariant), ``monitor`` (a step claim,
    or the safety part of an ordering or bounded-response claim, through its monitor),
    ``stuck states`` (deadlock freedom), ``witness`` (a reachable claim: `witnessed` games
    reached it), or ``not on finite playouts`` (claims about infinite behaviour: termination,
    obligations). A violation is a replayed trace, so a claim violated here is violated; one
    never violated is only *not seen violated*.
    """

    id: str
    kind: str
    statement: str
    expected: str | None
    how: str
    violated: int = 0                 # games in which it was violated
    witnessed: int = 0                # games that reached a reachable claim's target
    first_game: int | None = None
    trace: Trace | None = None

    @property
    def evaluated(self) -> bool:
        return self.how != "not on finite playouts"

    @property
    def unexpected(self) -> bool:
        """Violated although the property file does not expect a violation, or a reachable
        claim expected VIOLATED (unreachable) reached."""
        if self.how == "witness":
            return self.witnessed > 0 and self.expected == "VIOLATED"
        return self.violated > 0 and self.expected != "VIOLATED"


def summary(values: list[int] | tuple[int, ...]) -> dict[str, float | int | None]:
    """min, median, mean, 90th percentile and max (None when empty)."""
    if not values:
        return {"count": 0, "min": None, "median": None, "mean": None, "p90": None, "max": None}
    ordered = sorted(values)
    return {"count": len(ordered), "min": ordered[0], "median": statistics.median(ordered),
            "mean": round(statistics.fmean(ordered), 2),
            "p90": ordered[min(len(ordered) - 1, (9 * len(ordered)) // 10)], "max": ordered[-1]}


@dataclass(frozen=True)
class Simulation:
    model: str
    path: str
    variant: str | None
    params: dict[str, int | None]
    games: int                                    # games played
    requested: int                                # games asked for (more than played: stopped by the timeout)
    seed: int
    max_steps: int
    policy: Policy
    outcomes: dict[str, int]                      # ENDED / STUCK / CUT -> games
    game_lengths: tuple[int, ...]                 # steps of each game, in game order
    game_outcomes: tuple[str, ...]
    turn_lengths: dict[int, int]                  # steps in a turn -> turns
    actions: dict[str, int]                       # action name -> times taken (every action, model order)
    phase_entries: dict[str, int]                 # phase -> times entered (the initial phase counts)
    phase_steps: dict[str, int]                   # phase -> steps taken in it
    hand_var: str | None
    hand_sizes: dict[int, int]                    # value -> states (every element of the variable)
    claims: tuple[ClaimTally, ...]
    steps: int
    seconds: float
    notes: tuple[str, ...] = field(default=())

    @property
    def ended_lengths(self) -> list[int]:
        return [n for n, o in zip(self.game_lengths, self.game_outcomes, strict=True) if o == ENDED]

    @property
    def timed_out(self) -> bool:
        return self.games < self.requested

    @property
    def unexpected_violations(self) -> list[ClaimTally]:
        return [c for c in self.claims if c.unexpected]

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model, "path": self.path, "variant": self.variant, "params": self.params,
            "games": self.games, "games_requested": self.requested, "stopped_by_timeout": self.timed_out,
            "seed": self.seed, "max_steps": self.max_steps, "policy": self.policy.to_json(),
            "outcomes": self.outcomes,
            "game_length": {"all": summary(self.game_lengths), "ended": summary(self.ended_lengths),
                            "histogram": _keyed(Counter(self.game_lengths))},
            "turn_length": {"summary": summary(_expand(self.turn_lengths)), "histogram": _keyed(self.turn_lengths)},
            "actions": self.actions, "phase_entries": self.phase_entries, "phase_steps": self.phase_steps,
            "hand": {"variable": self.hand_var, "histogram": _keyed(self.hand_sizes)},
            "claims": [{"id": c.id, "kind": c.kind, "statement": c.statement, "expected": c.expected,
                        "evaluated": c.how, "violated_games": c.violated, "witnessed_games": c.witnessed,
                        "unexpected": c.unexpected, "first_game": c.first_game,
                        "trace": c.trace.to_json() if c.trace is not None else None} for c in self.claims],
            "throughput": {"steps": self.steps, "seconds": round(self.seconds, 3),
                           "steps_per_second": round(self.steps / self.seconds) if self.seconds else None,
                           "games_per_second": round(self.games / self.seconds, 1) if self.seconds else None},
            "notes": list(self.notes),
        }


def _keyed(counts: Counter | dict[int, int]) -> dict[str, int]:
    return {str(k): counts[k] for k in sorted(counts)}


def _expand(histogram: dict[int, int]) -> list[int]:
    return [k for k, n in sorted(histogram.items()) for _ in range(n)]
