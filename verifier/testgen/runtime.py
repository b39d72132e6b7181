"""What a generated conformance test runs: the model as an oracle, and the checks.

The adapter protocol (what a user's engine offers, directly or through a thin adapter)::

    engine = make_engine()          # the factory named by --adapter module:function
    engine.reset(initial)           # start a game in `initial` (slot name -> value, see below);
                                    # an engine with one start may ignore it
    engine.legal_actions()          # iterable of action labels (str)
    engine.apply(label)             # take one of them
    engine.observe()                # dict: slot name -> value, for the slots the engine keeps

An action label is the model's action name, followed by its choice values in
declaration order when it has choices: ``end Main``, ``play_gem(ae=1)``,
``cast(b=1, dmg=2)``. A slot name is a variable, or an array element with its
index: ``phase``, ``hand[0]``, ``marked[red]``. Values are ints, bools (``true`` /
``false`` variables and choices) and enum value names (str). `observe()` may leave
slots out (they are not compared) but may not name slots the model lacks.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from verifier.ir.model import BoolType, EnumType
from verifier.lang import load_model
from verifier.semantics import Layout, State, Transition, initial_states, layout, transitions

MEMO_STATES = 100_000        # states whose moves are remembered across the examples of a run


class ConformanceError(AssertionError):
    """The engine differs from the model after `steps` (the action labels taken so far)."""

    def __init__(self, message: str, steps: list[str]):
        super().__init__(f"{message}\n  after {len(steps)} steps: {' ; '.join(steps) or '(the initial state)'}")
        self.steps = list(steps)


class StaleModel(AssertionError):
    """The model file changed since the test was generated."""


def digest(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def label(transition: Transition) -> str:
    """The action label of a firing: ``name`` or ``name(k=v, ...)`` with display values."""
    if not transition.choice:
        return transition.action.name
    types = {c.name: c.type for c in transition.action.choices}
    return f"{transition.action.name}({', '.join(f'{k}={_show(types[k], v)}' for k, v in transition.choice)})"


def _show(t, value: int) -> str:
    if isinstance(t, BoolType):
        return "true" if value else "false"
    if isinstance(t, EnumType):
        return t.values[value]
    return str(value)


@dataclass
class Oracle:
    """The model at one state: its legal moves by label, and its observable state."""

    lay: Layout
    state: State
    memo: dict[State, dict[str, tuple[str, State]]] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, path: str | Path, params: dict[str, int], variant: str | None, expected_digest: str) -> Oracle:
        """The model at its first initial state (the layout and the moves met so far are shared
        by every oracle of the same model: a test run loads it once)."""
        if digest(path) != expected_digest:
            raise StaleModel(f"{path} changed since this test was generated: run turnproof testgen again")
        lay, memo = _loaded(str(path), tuple(sorted(params.items())), variant, expected_digest)
        return cls(lay, initial_states(lay)[0], memo)

    def starts(self) -> list[State]:
        return initial_states(self.lay)

    def moves(self) -> dict[str, tuple[str, State]]:
        """Legal moves by label, each with its action's name and the successor (blocked firings
        and must-nots are no moves)."""
        found = self.memo.get(self.state)
        if found is None:
            if len(self.memo) >= MEMO_STATES:
                self.memo.clear()
            found = self.memo[self.state] = {label(t): (t.action.name, t.target)
                                             for t in transitions(self.lay, self.state) if t.target is not None}
        return found

    def observe(self) -> dict[str, Any]:
        return self.lay.as_dict(self.state)


@lru_cache(maxsize=4)
def _loaded(path: str, params: tuple[tuple[str, int], ...], variant: str | None,
            sha: str) -> tuple[Layout, dict[State, dict[str, tuple[str, State]]]]:
    return layout(load_model(path, dict(params), variant).instantiate()), {}


class Conformance:
    """The checks of a generated state machine (a mixin: the machine sets `engine_factory`)."""

    engine_factory: Any = None
    oracle: Oracle
    engine: Any
    steps: list[str]

    def start(self, oracle: Oracle, initial: State) -> None:
        self.oracle, self.steps = oracle, []
        oracle.state = initial
        self.engine = type(self).engine_factory()
        self.engine.reset(oracle.observe())
        self.compare()

    def actions(self) -> list[str]:
        """The actions with a legal move now, in model order (none: the game is over)."""
        return list(dict.fromkeys(name for name, _ in self.oracle.moves().values()))

    def choices(self, action: str) -> list[str]:
        """The legal labels of one action, in model order."""
        return [m for m, (name, _) in self.oracle.moves().items() if name == action]

    def take(self, move: str) -> None:
        self.steps.append(move)
        self.oracle.state = self.oracle.moves()[move][1]
        self.engine.apply(move)
        self.compare()

    def compare(self) -> None:
        expected = self.oracle.observe()
        observed = dict(self.engine.observe())
        unknown = sorted(set(observed) - set(expected))
        if unknown:
            raise ConformanceError(f"observe() names slots the model does not have: {unknown}", self.steps)
        wrong = {k: (v, expected[k]) for k, v in observed.items() if v != expected[k]}
        if wrong:
            detail = ", ".join(f"{k}: engine {a!r}, model {b!r}" for k, (a, b) in sorted(wrong.items()))
            raise ConformanceError(f"state differs: {detail}", self.steps)
        model_moves = set(self.oracle.moves())
        engine_moves = _labels(self.engine.legal_actions())
        if engine_moves != model_moves:
            extra, missing = sorted(engine_moves - model_moves), sorted(model_moves - engine_moves)
            raise ConformanceError(f"legal moves differ: the engine also allows {extra or 'nothing'}, "
                                   f"the model also allows {missing or 'nothing'}", self.steps)


def _labels(moves: Iterable[str]) -> set[str]:
    out = set()
    for m in moves:
        if not isinstance(m, str):
            raise TypeError(f"legal_actions() must give action labels (str), not {type(m).__name__}")
        out.add(m)
    return out
