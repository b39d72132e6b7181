"""Reachable states for the filters of a blocked ranking layer, per parameter values, made once.

A blocked layer's Houdini candidates that a reachable state breaks are dropped before any solver
call (`strengthen.exclude`), and a blocking transition whose change some reachable transition of
its action makes is not asked of PDR (`blocking.py`). The states: those an explicit search saw
(`explored`, given by the engine: a stopped search's stored states, else a capped search of its
own), and seeded random runs from the initial states and from the deepest explored states, which
reach past a breadth-first search's last level (a game whose decks are empty). Random runs from
the initial states alone stop early where games are short (WTactics at its defaults: 733 states,
62 of the 126 changes per action of its 82,534 states unseen), and each reachable change they
miss costs a PDR call on a reachable target. The states only filter: one that were not
reachable would drop a candidate or a question, never prove anything.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from verifier.engines.symbolic.encode import Encoding
from verifier.engines.symbolic.strengthen import deep_runs, expander, random_states
from verifier.semantics import EvalError

CHANGE_STATES = 16_384  # states whose moves give the changes per action, at most (spread over them)

Params = tuple[int, ...]        # values of `enc.params`, in order
Changes = dict[int, set[tuple[int, ...]]]       # per action, its moves' differences per slot


@dataclass
class Seen:
    """The reachable states of `enc`'s model known per values of its free parameters: those
    `explored` gives (one row per state, one column per slot; None where it has none) and the
    random runs'."""

    enc: Encoding
    explored: Callable[[Params], np.ndarray | None] = lambda params: None
    _states: dict[Params, np.ndarray] = field(default_factory=dict)
    _changes: dict[Params, Changes] = field(default_factory=dict)

    def states(self, params: Params) -> np.ndarray:
        """The states (distinct rows, one column per slot) at these parameter values."""
        if params not in self._states:
            self._states[params] = self._gather(params)
        return self._states[params]

    def changes(self, params: Params) -> Changes:
        """Per action, how its moves from the states (CHANGE_STATES of them at most, spread over
        them) change the slots, at these parameter values."""
        if params not in self._changes:
            self._changes[params] = self._moves(params)
        return self._changes[params]

    def _gather(self, params: Params) -> np.ndarray:
        enc, n = self.enc, len(self.enc.slots)
        values = dict(zip(enc.params, params))
        runs = random_states(enc, values)
        explored = self.explored(params)
        if explored is None or not len(explored):
            explored = np.zeros((0, n), dtype=np.int64)
        explored = explored[:, :n].astype(np.int64)
        known = set(map(tuple, explored.tolist()))       # distinct rows: a search's stored states
        if len(explored):                                   # BFS order: the deepest last
            runs |= deep_runs(enc, values, explored)
        more = np.array(sorted(runs - known), dtype=np.int64).reshape(-1, n)
        return np.concatenate([explored, more])

    def _moves(self, params: Params) -> Changes:
        packing, expand = expander(self.enc, dict(zip(self.enc.params, params)))
        states = self.states(params)
        if len(states) > CHANGE_STATES:
            states = states[np.linspace(0, len(states) - 1, CHANGE_STATES).astype(np.int64)]
        found: Changes = {}
        for row in states:
            source = tuple(int(v) for v in row)
            try:
                moves = expand(packing.pack(source))
            except (EvalError, ValueError, OverflowError):
                continue
            for a, _choice, t, _gap in moves:
                if t is not None:
                    found.setdefault(a, set()).add(tuple(y - x for x, y in zip(source, packing.unpack(t))))
        return found
