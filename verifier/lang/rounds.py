"""Rounds in a game whose order of play changes (`next_player:`): a round ends when every player has
had a turn since it began.

In seat order a round ends with the last seat's turn. Where `next_player:` changes the order (a
Reverse, a Skip, an extra turn), the model keeps, for a model that has rounds (a `round_end:`
block), the players who have had a turn in the current round: an implicit per-player flag
`played_this_round`. At `pass turn` (block 1 of the turn change, on the state before it) the
round ends when every player other than the one whose turn ends has already played in it; the
flags then all go back to false, else the ending player's is set. `Model.round_ends` is that
condition, read by the turn change (`round_end` effects) and by claims on rounds (`round-end`,
`scope: round`). A player who never plays again (one who is out of the game) would keep a round
from ending: `in_round:`, a condition on `p` read on the same state (`"not out[p]"`), names the
players a round waits for, so a round ends once every player still in has had a turn.
"""
from __future__ import annotations

from dataclasses import replace

from verifier.ir.expr import FALSE, App, Const, Expr, Index, Local, Op, Quant, QuantKind, Var, disj, eq, neg
from verifier.ir.model import ACTIVE_VAR, Assign, BoolType, IntType, Model, Variable

PLAYED = "played_this_round"
PLAYER = "p"        # the player `in_round:` speaks of


def keep_rounds(model: Model, still_in: Expr | None = None) -> Model:
    """`model` with the flags of who played this round and the round's end defined by them: every
    player other than the one whose turn ends has played, or is not `still_in` (a condition on `p`)."""
    players = IntType(Const(0), Const(model.players - 1))
    flags = Variable(PLAYED, BoolType(), players, init=(FALSE,) * model.players, implicit=True, by_player=True,
                     doc="the player has had a turn in the current round (the order of play changes: next_player)")
    waits_for = [] if still_in is None else [neg(still_in)]
    others_played = Quant(QuantKind.FORALL, PLAYER, Const(0), Const(model.players - 1),
                          disj(eq(Local(PLAYER), Var(ACTIVE_VAR)), Index(PLAYED, Local(PLAYER)), *waits_for))
    return replace(model, variables=(*model.variables, flags), round_ends=others_played)


def marking(model: Model) -> list[Assign]:
    """The turn end's effects on the flags: all false when the round ends, else the ending player's set."""
    if model.round_ends is None:
        return []
    ends = model.round_ends
    return [Assign(Index(PLAYED, Const(p)),
                   App(Op.ITE, (ends, FALSE, disj(Index(PLAYED, Const(p)), eq(Var(ACTIVE_VAR), Const(p))))))
            for p in range(model.players)]
