"""The adapter between `engine.Game` and turnproof's conformance protocol (see
verifier/testgen/runtime.py): action labels of the model <-> the engine's moves,
and the engine's state as the model's slots."""
from __future__ import annotations

from examples.aeons_end.engine import Game, Move

LABELS = {"cast": "cast(b={}, dmg={})", "cast closed": "cast_closed(dmg={})", "gem": "play_gem(ae={})",
          "relic": "play_relic(charge_opt={})", "prep": "prep(b={})", "buy": "gain_card(cost={})",
          "charge": "gain_charge", "focus": "focus", "open": "open_breach", "while prepped": "while_prepped",
          "to discard": "to_discard", "refill": "refill", "pass": "pass turn"}
NEXT_PHASE = {"Casting": "end Casting", "Main": "end Main"}


class Adapter:
    def __init__(self, hand_limit_bug: bool = False):
        self.hand_limit_bug = hand_limit_bug
        self.game = Game(hand_limit_bug)

    def reset(self, initial: dict) -> None:
        """The model has one initial state, the engine's own: start a fresh game."""
        self.game = Game(self.hand_limit_bug)

    def _label(self, move: Move) -> str:
        if move.kind == "next phase":
            return NEXT_PHASE[self.game.phase]
        return LABELS[move.kind].format(*(str(a).lower() if isinstance(a, bool) else a for a in move.args))

    def legal_actions(self) -> list[str]:
        return [self._label(m) for m in self.game.moves()]

    def apply(self, label: str) -> None:
        self.game.play(next(m for m in self.game.moves() if self._label(m) == label))

    def observe(self) -> dict:
        g = self.game
        out: dict = {"phase": g.phase, "active": g.active}
        for name in ("deck", "disc", "hand", "played", "charges", "prep1", "prep2", "open2", "rot2", "flipped"):
            for p, mage in enumerate(g.mages):
                out[f"{name}[{p}]"] = getattr(mage, name)
        out.update(aether=g.aether, focused2=g.focused2, wp_used=g.wp_used, power=g.power, nemesis=g.nemesis,
                   turns=g.turns)
        return out


def make_engine() -> Adapter:
    return Adapter()


def make_buggy_engine() -> Adapter:
    """The engine with its injected hand-limit bug (for the test that the conformance test finds it)."""
    return Adapter(hand_limit_bug=True)
