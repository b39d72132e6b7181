"""`symmetry: players`: the static check that rotating the players maps the model onto itself.

The explicit search may then store one state per orbit (`engines/symmetry.py`).
The group is the rotations p -> (p + r) mod PLAYERS, which keep the turn order
(for two players, every permutation). A model is accepted when player values
are only ever *player terms* used in ways every rotation preserves:

- player terms: `active`, a scalar variable of `type: player` (rotated with the
  players: who holds priority), a choice or quantifier variable ranging over exactly
  0..PLAYERS-1, `if c then t1 else t2` of two player terms, and `(t + k) % PLAYERS`
  of a player term t and a constant k, added or taken away (the next player, or whom
  `next_player:` names: `%` rounds down, so rotations commute with it);
- a player term may index a per-player array, be compared with `==` / `!=` to
  another player term, be an action's actor (`by:`) or `chooser:`, the `winner`, or be
  assigned to `active` or to a variable of `type: player`, and such a variable holds
  only player terms; so does an element of a per-player array of players
  (`per: player, type: player`: whom each player targets), itself a player term;
- anything else (a number as a per-player index, `active == 0`, `p < q`,
  `p + 1`, a player stored in a variable that is not of `type: player`, a number
  stored in one, an array of players, a per-player array indexed by a number)
  breaks the symmetry, and so does `round_end` (a round starts with
  player 0) and a claim scoped to rounds;
- an effect with literal indices is accepted only when it gives every player's
  element the same value (what `reset: turn` writes).

Initial values may differ between players: the search starts from the orbits
of the initial states, and soundness needs only the transitions and claims to
commute with the rotations.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import assert_never

from verifier.diagnostics import Span
from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Param, Quant, Var, fold, pretty, substitute
from verifier.ir.model import ACTIVE_VAR, Action, IntType, Model
from verifier.ir.props import PREV_MARK, Event, Ordering, Property, Reachable, StepInvariant

HINT = ("`symmetry: players` needs every player treated alike: name players only through `active`, "
        "`by:` and choices or quantifiers over all players; remove the symmetry line otherwise")

Report = Callable[[str, Span | None, str], None]
PLAYER, VALUE = "player", "value"


class Broken(Exception):
    """The first place an expression breaks the symmetry."""

    def __init__(self, message: str, span: Span | None):
        super().__init__(message)
        self.message, self.span = message, span


class SymmetryCheck:
    """Classifies expressions as player terms or values, raising `Broken` where they mix."""

    def __init__(self, model: Model):
        self.model = model
        self.arrays = {v.name for v in model.variables if v.by_player}
        self.holders = {ACTIVE_VAR} | {v.name for v in model.variables if v.holds_player and v.index is None}
        # per-player arrays of players (`per: player, type: player`: whom each player targets): rotated in
        # place and in value
        self.player_arrays = {v.name for v in model.variables if v.holds_player and v.by_player and not v.dims}

    def over_players(self, lo: Expr, hi: Expr) -> bool:
        players: dict[str, Expr] = {"PLAYERS": Const(self.model.players)}
        lo, hi = fold(substitute(lo, players, Param)), fold(substitute(hi, players, Param))
        return lo == Const(0) and hi == Const(self.model.players - 1)

    def kind(self, e: Expr, env: frozenset[str], span: Span | None) -> str:
        span = e.span or span
        match e:
            case Var():
                return PLAYER if e.name.removeprefix(PREV_MARK) in self.holders else VALUE
            case Local():
                return PLAYER if e.name in env else VALUE
            case Const() | Param():
                return VALUE
            case Index():
                return self.index(e, env, span)
            case Quant():
                self.value(e.lo, env, span)
                self.value(e.hi, env, span)
                inner = env | {e.var} if self.over_players(e.lo, e.hi) else env - {e.var}
                self.value(e.body, inner, span)
                return VALUE
            case App():
                return self.app(e, env, span)
            case _:
                assert_never(e)

    def app(self, e: App, env: frozenset[str], span: Span | None) -> str:
        if _is_rotation(e, self.model.players):      # the player whose turn starts: a rotation commutes with it
            return PLAYER
        base = _next_of(e, self.model.players)
        if base is not None and self.kind(base, env, span) == PLAYER:   # (t + k) % PLAYERS: rotations commute with it
            return PLAYER
        kinds = [self.kind(a, env, span) for a in e.args]
        if e.op in (Op.EQ, Op.NE):
            if kinds[0] != kinds[1]:
                raise Broken(f"`{_show(e)}` compares a player with a number: rotating the players changes "
                             "its truth", span)
            return VALUE
        if e.op is Op.ITE:
            if kinds[0] == PLAYER:
                raise Broken(f"`{_show(e.args[0])}` uses a player as a condition", span)
            if kinds[1] != kinds[2]:
                raise Broken(f"`{_show(e)}` is a player in one branch and a number in the other", span)
            return kinds[1]
        if PLAYER in kinds:
            raise Broken(f"`{_show(e)}` computes with a player number ({e.op.value}): rotating the players "
                         "does not preserve it", span)
        return VALUE

    def index(self, e: Index, env: frozenset[str], span: Span | None) -> str:
        k = self.kind(e.index, env, span)
        per_player = e.name.removeprefix(PREV_MARK) in self.arrays     # `prev(x[p])` reads `prev:x`
        if per_player and k != PLAYER:
            what = (f"names player {e.index.value} by number" if isinstance(e.index, Const)
                    else "indexes a per-player array with something that is not a player")
            raise Broken(f"`{_show(e)}` {what}", span)
        if not per_player and k == PLAYER:
            raise Broken(f"`{_show(e)}` uses a player as an index of {e.name}, which is not per player", span)
        return PLAYER if e.name.removeprefix(PREV_MARK) in self.player_arrays else VALUE

    def value(self, e: Expr, env: frozenset[str], span: Span | None) -> None:
        if self.kind(e, env, span) == PLAYER:
            raise Broken(f"`{_show(e)}` is a player where a number or truth value is expected", e.span or span)

    def player(self, e: Expr, env: frozenset[str], span: Span | None) -> None:
        if self.kind(e, env, span) != PLAYER:
            raise Broken(f"`{_show(e)}` should be a player term (`active`, or a choice over all players)",
                         e.span or span)

    # ---- model parts
    def action(self, a: Action) -> None:
        env = frozenset(c.name for c in a.choices
                        if isinstance(c.type, IntType) and self.over_players(c.type.lo, c.type.hi))
        self.value(a.guard, env, a.span)
        if a.actor is not None:
            self.player(a.actor, env, a.span)
        if isinstance(a.chooser, Expr):
            self.player(a.chooser, env, a.span)
        literal: dict[str, dict[int, Expr]] = {}
        where: dict[str, Span | None] = {}
        for eff in a.effects:
            span = eff.span or a.span
            t = eff.target
            holds = t.name in self.holders if isinstance(t, Var) else t.name in self.player_arrays
            if holds:
                if isinstance(t, Index):
                    self.index(t, env, span)
                if not _is_rotation(eff.value, self.model.players):
                    self.player(eff.value, env, span)
                continue
            if _is_round_end(eff.value, self.model.players):
                raise Broken("round_end effects tell the players apart: a round starts with player 0", span)
            self.value(eff.value, env, span)
            if isinstance(t, Index) and t.name in self.arrays and isinstance(t.index, Const):
                literal.setdefault(t.name, {})[t.index.value] = eff.value
                where.setdefault(t.name, span)
            elif isinstance(t, Index):
                self.index(t, env, span)
        for name, values in literal.items():
            if set(values) != set(range(self.model.players)) or len(set(values.values())) != 1:
                raise Broken(f"{a.name} writes {name} of some players by number, not the same value for every "
                             "player", where[name])

    def model_parts(self) -> None:
        m = self.model
        for v in m.variables:
            if v.holds_player and v.index is not None and v.name not in self.player_arrays:
                raise Broken(f"{v.name} is an array of players not indexed by player: symmetry: players rotates "
                             "scalar players and per-player arrays of players only", v.span)
            if v.name not in self.holders | self.player_arrays:   # players' initial values: the search starts
                # from the orbits of the initial states
                for init in v.init:
                    if init is not None:
                        self.value(init, frozenset(), v.span)
        self.value(m.initially, frozenset(), m.span)
        self.value(m.end, frozenset(), m.span)
        if m.winner is not None:
            self.player(m.winner, frozenset(), m.span)
        for a in m.actions:
            self.action(a)

    def claim(self, c: Property) -> None:
        moves = c.action if isinstance(c, Reachable) else c.actions if isinstance(c, StepInvariant) else ()
        players = frozenset(ch.name for a in self.model.actions if a.name in moves or a.name.split(" -> ")[0] in moves
                            for ch in a.choices if isinstance(ch.type, IntType) and self.over_players(ch.type.lo,
                                                                                                       ch.type.hi))
        if isinstance(c, Reachable | StepInvariant) and c.choice:
            named = [name for name, _ in c.choice if name in players]
            if named:
                raise Broken(f"claim {c.id} gives the player choice {named[0]} a number: rotating the players "
                             "changes which player that is", c.span)
        if isinstance(c, StepInvariant):        # the move's player choices are player terms in it
            self.value(c.expr, players, c.span)
            return
        if isinstance(c, Ordering) and c.scope == "round":
            raise Broken(f"claim {c.id} is scoped to rounds, and a round starts with player 0", c.span)
        for fd in fields(c):
            value = getattr(c, fd.name)
            if isinstance(value, Event):
                if value.round_end:
                    raise Broken(f"claim {c.id} watches the end of a round, and a round starts with player 0",
                                 c.span)
                value = value.expr
            if isinstance(value, Expr):
                self.value(value, frozenset(), c.span)


def check_model(model: Model, report: Report) -> None:
    """Report (at most) the first place where `model` breaks its declared player symmetry."""
    if model.symmetry != "players":
        return
    grid = next((v for v in model.variables if v.dims), None)
    if grid is not None:
        report(f"symmetry: players does not cover 2-D arrays ({grid.name})", grid.span,
               "remove the symmetry line, or split the array into one per-player array per value of its "
               "other index")
        return
    try:
        SymmetryCheck(model).model_parts()
    except Broken as err:
        report(f"symmetry: players does not hold: {err.message}", err.span, HINT)


def check_claims(model: Model, claims: list[Property], report: Report) -> None:
    """Report each claim of a symmetric model that tells the players apart."""
    if model.symmetry != "players":
        return
    check = SymmetryCheck(model)
    for c in claims:
        try:
            check.claim(c)
        except Broken as err:
            report(f"claim {c.id} breaks the model's player symmetry: {err.message}", err.span or c.span,
                   "a claim on a model with `symmetry: players` must treat every player alike (e.g. "
                   "`forall p in player: ...` or `hand[active]`, not `hand[0]`)")


def _is_rotation(e: Expr, players: int) -> bool:
    """`(active + 1) % PLAYERS` (or `prev(...)` of it): the next player, which commutes with every rotation."""
    return (isinstance(e, App) and e.op is Op.MOD and fold(e.args[1]) == Const(players)
            and isinstance(e.args[0], App) and e.args[0].op is Op.ADD
            and e.args[0].args[0] in (Var(ACTIVE_VAR), Var(PREV_MARK + ACTIVE_VAR)) and fold(e.args[0].args[1]) == Const(1))


def _next_of(e: Expr, players: int) -> Expr | None:
    """t for `(t + k) % PLAYERS` with a constant k, written as constants added to or taken from t
    (`(t + PLAYERS - 1) % PLAYERS`, `(t - 1) % PLAYERS`: `%` rounds down, so every such k commutes
    with the rotations), else None."""
    if not (isinstance(e, App) and e.op is Op.MOD and fold(e.args[1]) == Const(players)):
        return None
    base, steps = e.args[0], 0
    while isinstance(base, App) and base.op in (Op.ADD, Op.SUB) and isinstance(fold(base.args[1]), Const):
        base, steps = base.args[0], steps + 1
    return base if steps else None


def _is_round_end(e: Expr, players: int) -> bool:
    """`if active == PLAYERS - 1 then ... else ...`: how the phase sugar writes a round_end effect."""
    return (isinstance(e, App) and e.op is Op.ITE and isinstance(e.args[0], App) and e.args[0].op is Op.EQ
            and e.args[0].args == (Var(ACTIVE_VAR), Const(players - 1)))


def _show(e: Expr) -> str:
    return pretty(e)
