"""A small hand-written engine for the Aeon's End player turn, as a game programmer would write it.

It follows the rules page the model `models/aeons_end.yaml` encodes, at the
model's default sizes and its literal reading of the deck flip (the discard
pile becomes the deck only when a card must be drawn from an empty deck):
two mages, hands of 2 cards, 4 cards each, at most 5 owned, 2 charge spaces,
gems worth 1 aether, supply cards costing 1 or 2, the nemesis at 2 life, and
3 turns played. It knows nothing of turnproof: moves are its own `Move`
tuples; `adapter.py` translates them to the model's action labels.

`hand_limit_bug=True` injects a bug on purpose: the Draw phase fills the hand
to one card less than the hand size (an off-by-one in the hand limit).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

HAND, CARDS, CARDS_MAX, CHARGES = 2, 4, 5, 2
GEM, COST, FOCUS_COST, OPEN_COST, POWER_COST = 1, 2, 1, 3, 2
ROT_YELLOW, NEMESIS, TURNS = 2, 2, 3
PHASES = ("Casting", "Main", "Draw")


class Move(NamedTuple):
    kind: str                     # "cast", "gem", "relic", "buy", ..., "next phase"
    args: tuple = ()


@dataclass
class Mage:
    deck: int = CARDS - HAND
    disc: int = 0
    hand: int = HAND
    played: int = 0
    charges: int = 0
    prep1: bool = False
    prep2: bool = False
    open2: bool = False
    rot2: int = 0
    flipped: bool = False

    def owned(self) -> int:
        return self.deck + self.disc + self.hand + self.played + self.prep1 + self.prep2


@dataclass
class Game:
    hand_limit_bug: bool = False
    mages: list[Mage] = field(default_factory=lambda: [Mage(), Mage()])
    phase: str = "Casting"
    active: int = 0
    aether: int = 0
    focused2: bool = False
    wp_used: bool = False
    power: int = 1
    nemesis: int = NEMESIS
    turns: int = 0

    @property
    def me(self) -> Mage:
        return self.mages[self.active]

    def over(self) -> bool:
        return self.nemesis == 0 or self.turns == TURNS

    # ---------------------------------------------------------------- what may be done

    def moves(self) -> list[Move]:
        if self.over():
            return []
        return {"Casting": self._casting, "Main": self._main, "Draw": self._draw}[self.phase]()

    def _casting(self) -> list[Move]:
        me, out = self.me, []
        if me.prep1:
            out += [Move("cast", (1, dmg)) for dmg in range(3)]
        if me.prep2 and me.open2:
            out += [Move("cast", (2, dmg)) for dmg in range(3)]
        if me.prep2 and not me.open2:             # a spell on a closed breach must be cast
            out += [Move("cast closed", (dmg,)) for dmg in range(3)]
        else:
            out.append(Move("next phase"))
        return out

    def _main(self) -> list[Move]:
        me, out = self.me, [Move("next phase")]
        if me.hand > 0:
            out += [Move("gem", (ae,)) for ae in range(1, GEM + 1)]
            out.append(Move("relic", (False,)))
            if me.charges < CHARGES:
                out.append(Move("relic", (True,)))
            if not me.prep1:
                out.append(Move("prep", (1,)))
            if not me.prep2 and (me.open2 or self.focused2):
                out.append(Move("prep", (2,)))
        if me.owned() < CARDS_MAX:
            out += [Move("buy", (cost,)) for cost in range(1, COST + 1) if self.aether >= cost]
        if self.aether >= 2 and me.charges < CHARGES:
            out.append(Move("charge"))
        if not me.open2 and self.aether >= FOCUS_COST and me.rot2 < ROT_YELLOW:
            out.append(Move("focus"))
        if not me.open2 and self.aether >= max(0, OPEN_COST - me.rot2):
            out.append(Move("open"))
        if not self.wp_used and (me.prep1 or me.prep2):
            out.append(Move("while prepped"))
        if self.power > 0 and self.aether >= POWER_COST:
            out.append(Move("to discard"))
        return out

    def _draw(self) -> list[Move]:
        me = self.me
        if me.hand < HAND and me.deck + me.disc + me.played > 0:
            return [Move("refill")]
        return [Move("pass")]

    # ---------------------------------------------------------------- doing it

    def play(self, move: Move) -> None:
        if move not in self.moves():
            raise ValueError(f"illegal move {move}")
        me = self.me
        kind, args = move
        if kind in ("cast", "cast closed"):
            breach, dmg = args if kind == "cast" else (2, args[0])
            if breach == 1:
                me.prep1 = False
            else:
                me.prep2 = False
            me.disc += 1
            self.nemesis = max(0, self.nemesis - dmg)
        elif kind == "gem":
            me.hand, me.played, self.aether = me.hand - 1, me.played + 1, self.aether + args[0]
        elif kind == "relic":
            me.hand, me.played = me.hand - 1, me.played + 1
            if args[0]:
                me.charges += 1
            else:
                self.aether += 1
        elif kind == "prep":
            me.hand -= 1
            if args[0] == 1:
                me.prep1 = True
            else:
                me.prep2 = True
        elif kind == "buy":
            self.aether -= args[0]
            me.disc += 1
        elif kind == "charge":
            self.aether -= 2
            me.charges += 1
        elif kind == "focus":
            self.aether -= FOCUS_COST
            me.rot2 += 1
            self.focused2 = True
        elif kind == "open":
            self.aether -= max(0, OPEN_COST - me.rot2)
            me.open2 = True
        elif kind == "while prepped":
            self.wp_used = True
        elif kind == "to discard":
            self.power, self.aether = 0, self.aether - POWER_COST
        elif kind == "refill":
            self._refill(me)
        elif kind == "pass":
            self.phase, self.active, self.turns = "Casting", 1 - self.active, self.turns + 1
        else:                                     # next phase
            self.phase = PHASES[PHASES.index(self.phase) + 1]
            if self.phase == "Draw":              # unspent aether and this turn's marks are lost
                self.aether, self.focused2, self.wp_used = 0, False, False

    def _refill(self, me: Mage) -> None:
        """Played cards go to the discard pile; draw up to the hand size, turning the pile over
        into a new deck (no shuffle) when the deck runs out."""
        me.disc += me.played
        me.played = 0
        limit = HAND - 1 if self.hand_limit_bug else HAND
        need = max(0, limit - me.hand)
        if need > me.deck and me.disc > 0:
            me.hand, need = me.hand + me.deck, need - me.deck
            me.deck, me.disc, me.flipped = me.disc, 0, True
        drawn = min(need, me.deck)
        me.hand, me.deck = me.hand + drawn, me.deck - drawn
