"""Traces: sequences of steps from an initial state, possibly ending in a loop (a lasso)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from verifier.ir.expr import Const, Expr, pretty
from verifier.ir.model import BoolType, EnumType, IntType, Model, Variable
from verifier.ir.simplify import simplify_condition

Value = int
PLAYER_OF = " of player "      # a labelled per-player element: `cards in hand of player 0`
ACTIVE_WORD = "active"
_ATOM = re.compile(r"\w+")
_PLAYER_IS = re.compile(r"player (\d+) is (.+)")     # a labelled per-player flag: `player 0 is knocked out`
_GRID_KEY = re.compile(r"(\w+)\[(\w+)\]\[(\w+)\]")     # a 2-D array's slot: `cards[0][hand]`


def split_element(shown: str) -> tuple[str, str] | None:
    """A slot as `Names.slot` shows it, split into its variable's shown name and the element's index
    (`hand[0]`, `cards in hand of player 0` and `player 0 is knocked out` give their index "0"); None for a
    scalar."""
    flag = _PLAYER_IS.fullmatch(shown)
    if flag is not None:
        return flag.group(2), flag.group(1)
    base, of, player = shown.rpartition(PLAYER_OF)
    if of and player.isdigit():
        return base, player
    base, bracket, index = shown.partition("[")
    return (base, index.rstrip("]")) if bracket else None


@dataclass(frozen=True)
class Names:
    """The display names a model gives (`label:` of a variable, `values:` of an int range), for people.

    A trace keeps the model's slot names and raw values (what replays, what JSON gives); the
    renderings read them through `slot` and `value`.

    A labelled array indexed by player reads as the player's (`cards in hand of player 0`); a labelled
    bool names the state it is true in, so a player's element reads `player 0 is knocked out`; a
    labelled 2-D array reads its second index's value after the label (`cards in` + `hand`), its first
    index as the player's or in brackets (`cards in hand of player 0`, `seen in hand[1]`).
    """

    labels: tuple[tuple[str, str], ...] = ()                       # variable -> its label
    values: tuple[tuple[str, int, tuple[str, ...]], ...] = ()      # variable -> (its least value, the names)
    per_player: tuple[str, ...] = ()       # the labelled variables indexed by player (`per: player`, `[player, D]`)
    flags: tuple[str, ...] = ()            # the labelled bools: the label names the state they are true in
    grids: tuple[tuple[str, Variable], ...] = ()    # the 2-D arrays (their indices split for display)

    @staticmethod
    def of(model: Model) -> Names:
        labels = tuple((v.name, v.label) for v in model.variables if v.label)
        values = tuple((v.name, v.type.lo.value, v.value_names) for v in model.variables
                       if v.value_names and isinstance(v.type, IntType) and isinstance(v.type.lo, Const))
        per_player = tuple(v.name for v in model.variables if v.label and (v.by_player or v.rows_by_player))
        flags = tuple(v.name for v in model.variables if v.label and isinstance(v.type, BoolType))
        grids = tuple((v.name, v) for v in model.variables if v.dims)
        return Names(labels, values, per_player, flags, grids)

    @staticmethod
    def as_written(model: Model) -> Names:
        """No display names, only the 2-D arrays: an expression as the model file writes it (`cards[p][hand]`,
        not its flat position), for exports a person or `import-mermaid` reads back."""
        return Names(grids=Names.of(model).grids)

    def __bool__(self) -> bool:
        return bool(self.labels or self.values)

    @cached_property
    def _label_of(self) -> dict[str, str]:
        return dict(self.labels)

    @cached_property
    def _values_of(self) -> dict[str, tuple[int, tuple[str, ...]]]:
        return {var: (lo, names) for var, lo, names in self.values}

    @cached_property
    def _grid_of(self) -> dict[str, Variable]:
        return dict(self.grids)

    def slot(self, key: str) -> str:
        """`hand[0]` as people read it: the variable's label in place of its name, a labelled per-player
        element as the player's (`cards in hand of player 0`, `player 0 is knocked out`), any other element
        by its index (`cards in hand[0]` for `per: 0..3`), a labelled 2-D element with its second index
        after the label (`cards in hand of player 0`)."""
        grid = _GRID_KEY.fullmatch(key)
        if grid is not None and grid.group(1) in self._label_of:
            return self.element(grid.group(1), grid.group(2), grid.group(3))
        base, bracket, rest = key.partition("[")
        if bracket and base in self._label_of and rest.endswith("]") and "[" not in rest:
            return self.element(base, rest[:-1])
        return self._label_of.get(base, base) + bracket + rest

    def split(self, var: str, index: Expr) -> tuple[Expr, ...]:
        """The indices a read of `var` was written with (two for a 2-D array, from its flat position)."""
        grid = self._grid_of.get(var)
        return (index,) if grid is None else grid.split_index(index)

    def element(self, var: str, *indices: str, negated: bool = False) -> str:
        """`var[i]` (`var[i][j]`) as people read it, each index written out (`0`, `active`, `p`, `t + 1`):
        a labelled per-player variable's element as the player's (`cards in hand of the active player`,
        `player p is knocked out`, with `negated`: `player p is not knocked out`)."""
        label = self._label_of.get(var)
        if label is None:
            return var + "".join(f"[{i}]" for i in indices)
        first, *rest = indices
        shown, named = label, False
        if rest:
            named = isinstance(self._grid_of[var].dims[1], EnumType)
            shown = f"{label}[{rest[0]}]" if not named else f"{label} {rest[0]}" if _ATOM.fullmatch(rest[0]) \
                else f"{label} ({rest[0]})"
        if var not in self.per_player:      # the indices in the order written but where the label reads one
            return f"{shown}[{first}]" if not rest or named else f"{label}[{first}][{rest[0]}]"
        who = "the active player" if first == ACTIVE_WORD else f"player {first if _ATOM.fullmatch(first) else f'({first})'}"
        if var in self.flags:
            return f"{who} is {'not ' if negated else ''}{shown}"
        return f"{shown} of {who}"

    def negates(self, var: str) -> bool:
        """Whether `not var[i]` reads as `var[i]` negated inside (`player 0 is not knocked out`): `element`'s
        `negated` is for these."""
        return var in self.flags and var in self.per_player

    def value_names(self, var: str) -> tuple[int, tuple[str, ...]] | None:
        """The least value of `var`'s range and the names of its values, or None where they have none."""
        return self._values_of.get(var)

    def value(self, key: str, v: Any) -> Any:
        """A slot's value as people read it: the name of a named value, else `v` unchanged."""
        if isinstance(v, bool) or not isinstance(v, int):
            return v
        named = self._values_of.get(key.partition("[")[0])
        if named is None or not 0 <= v - named[0] < len(named[1]):
            return v
        return named[1][v - named[0]]

    def to_json(self) -> dict[str, Any]:
        """`labels` and `values`, and how a labelled element reads: `per_player` (the player's: `cards in hand
        of player 0`), `flags` (a bool's label names the state it is true in: `player 0 is knocked out`),
        `grids` (each 2-D array's two index domains: `cards[0][hand]`, `cards in hand of player 0`)."""
        return {"labels": dict(self.labels),
                "values": {var: {str(lo + i): n for i, n in enumerate(names)} for var, lo, names in self.values},
                "per_player": list(self.per_player), "flags": list(self.flags),
                "grids": {name: [_domain(d, players=k == 0 and v.rows_by_player) for k, d in enumerate(v.dims)]
                          for name, v in self.grids}}


def _domain(t: IntType | EnumType, players: bool) -> str:
    """An index domain as a model declares it: `player`, an enum's name, `lo..hi`."""
    if players:
        return "player"
    if isinstance(t, EnumType):
        return t.name
    return f"{pretty(t.lo)}..{pretty(t.hi)}"


def expr_words(model: Model, e: Expr) -> str:
    """A guard, condition or effect's value as people read it: enum values by name, variables by
    their labels, a comparison of a variable whose values are named by those names (`mode is attack`)."""
    return pretty(e, model.enum_value_name if model.enums else None, Names.of(model))


def condition_words(model: Model, e: Expr) -> str:
    """A condition as a diagram says it: `expr_words` of it simplified (`not (not running)` reads
    `running`, `not (a == b)` reads `a != b`: `verifier.ir.simplify`)."""
    return expr_words(model, simplify_condition(e))


@dataclass(frozen=True)
class Step:
    """One transition: the action taken, its choice values, who took it, and what changed.

    `changes` maps a slot name (``hand[1]``, ``phase``) to (old, new) in display form
    (enum value names, true/false, integers).
    """

    action: str
    choice: tuple[tuple[str, Value], ...] = ()
    player: int | None = None
    rule: str = ""
    changes: tuple[tuple[str, tuple[Any, Any]], ...] = ()
    words: tuple[tuple[str, Any], ...] = field(default=(), compare=False)   # `choice` in display form
    # (an enum's value names, true/false), for people; `choice` stays what replays

    @property
    def label(self) -> str:
        if not self.choice:
            return self.action
        shown = self.words or self.choice
        return f"{self.action}({', '.join(f'{k}={_word(v)}' for k, v in shown)})"


def _word(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


@dataclass(frozen=True)
class Trace:
    """`initial` is the first state (slot name -> display value); `steps` follow it.

    For a lasso, `loop_start` is the index in `steps` where the loop begins: the
    state after the last step equals the state before step `loop_start`.
    """

    initial: tuple[tuple[str, Any], ...]
    steps: tuple[Step, ...] = ()
    loop_start: int | None = None
    states: tuple[tuple[tuple[str, Any], ...], ...] = field(default=(), compare=False)
    names: Names = field(default=Names(), compare=False)     # the model's display names (`Names`)

    def __len__(self) -> int:
        return len(self.steps)

    def to_json(self) -> dict[str, Any]:
        """Slot names and raw values; where the model names things, `names` and each step's `label`
        (its choices by their value names) say how people read them."""
        out: dict[str, Any] = {
            "initial": dict(self.initial),
            "steps": [{"action": s.action, "choice": dict(s.choice), "player": s.player,
                       "rule": s.rule, "changes": {k: list(v) for k, v in s.changes}}
                      | ({"label": s.label} if s.words != s.choice and s.choice else {})
                      for s in self.steps],
            "loop_start": self.loop_start,
        }
        if self.names:
            out["names"] = self.names.to_json()
        return out


# ---------------------------------------------------------------- building and replaying

class ReplayError(Exception):
    """A trace does not replay on the model: an engine bug, reported as such."""


def build_trace(lay, states, firings, loop_start: int | None = None) -> Trace:
    """A Trace from a state sequence and the (action, choice) pairs between them.

    `lay` is a `verifier.semantics.Layout`; `states` has one more entry than `firings`.
    """
    from verifier.semantics import actor_of

    steps = []
    for (action, choice), before, after in zip(firings, states, states[1:]):
        changes = tuple((slot.name, (lay.display(slot, a), lay.display(slot, b)))
                        for slot, a, b in zip(lay.slots, before, after) if a != b)
        steps.append(Step(action.name, tuple(choice), actor_of(lay, action, before, dict(choice)),
                          str(action.rule) if action.rule else "", changes, choice_words(action, choice)))
    return Trace(tuple(lay.as_dict(states[0]).items()), tuple(steps), loop_start,
                 tuple(tuple(lay.as_dict(s).items()) for s in states), Names.of(lay.model))


def choice_words(action, choice) -> tuple[tuple[str, Any], ...]:
    """An action's choice values as people read them: an enum's value name, a named value of an int
    range (`values:`), a bool as true/false."""
    types = {c.name: c.type for c in action.choices}
    named = {c.name: c.value_names for c in action.choices if c.value_names}
    out = []
    for name, v in choice:
        t = types.get(name)
        if name in named and isinstance(t, IntType) and isinstance(t.lo, Const) \
                and 0 <= v - t.lo.value < len(named[name]):
            out.append((name, named[name][v - t.lo.value]))
        elif isinstance(t, EnumType) and 0 <= v < len(t.values):
            out.append((name, t.values[v]))
        elif isinstance(t, BoolType):
            out.append((name, bool(v)))
        else:
            out.append((name, v))
    return tuple(out)


def replay(lay, trace: Trace) -> list:
    """Re-run `trace` on the reference semantics; return its states or raise ReplayError.

    Checks that the first state is initial, that every step is an enabled
    transition producing exactly the recorded changes, and for a lasso that the
    last state closes the loop. A step's firings are evaluated in model order up to
    its own, as a search that stops at it evaluates them: a later action that raises a
    model error in that state (one the search never reached) does not fail the replay.
    """
    from verifier.semantics import initial_states, iter_transitions

    by_name = {s.name: s for s in lay.slots}
    start = tuple(_raw(lay, by_name[k], v) for k, v in trace.initial)
    if start not in set(initial_states(lay)):
        raise ReplayError("the trace does not start in an initial state")
    states = [start]
    for i, step in enumerate(trace.steps):
        nxt = next((t.target for t in iter_transitions(lay, states[-1]) if t.target is not None
                    and t.action.name == step.action and t.choice == tuple(step.choice)), None)
        if nxt is None:
            raise ReplayError(f"step {i + 1} ({step.label}) is not enabled")
        changes = tuple((s.name, (lay.display(s, a), lay.display(s, b)))
                        for s, a, b in zip(lay.slots, states[-1], nxt) if a != b)
        if changes != step.changes:
            raise ReplayError(f"step {i + 1} ({step.label}) changes {changes}, trace says {step.changes}")
        states.append(nxt)
    if trace.loop_start is not None and states[-1] != states[trace.loop_start]:
        raise ReplayError("the loop of the lasso does not close")
    return states


def _raw(lay, slot, value) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        return lay.variables[slot.var].type.values.index(value)
    return value
