"""Small models built directly as IR, with claims whose verdicts are known.

They serve the shared verdict table (every engine must agree on them), the
differential tests and the scaling benchmark. `TABLE` rows are (model, claim,
truth): "holds" / "violated" for invariants, deadlock freedom and
termination; "reachable" / "unreachable" for reachability.
"""
from __future__ import annotations

from verifier.ir.expr import FALSE, TRUE, Const, Expr, Index, Local, Op, Param, Quant, QuantKind, Var, app, conj, disj, eq, neg
from verifier.ir.model import (
    Action,
    ActionKind,
    Assign,
    BoolType,
    Choice,
    EnumType,
    IntType,
    Modality,
    Model,
    Overflow,
    ParamDecl,
    Variable,
)
from verifier.ir.props import DeadlockFree, Invariant, Property, Reachable, Terminates


def rng(lo, hi) -> IntType:
    return IntType(_e(lo), _e(hi))


def _e(x) -> Expr:
    return x if isinstance(x, Expr) else Const(x)


def le(a, b) -> Expr:
    return app(Op.LE, a, b)


def lt(a, b) -> Expr:
    return app(Op.LT, a, b)


def ge(a, b) -> Expr:
    return app(Op.GE, a, b)


def gt(a, b) -> Expr:
    return app(Op.GT, a, b)


def add(a, b) -> Expr:
    return app(Op.ADD, a, b)


def sub(a, b) -> Expr:
    return app(Op.SUB, a, b)


def forall_players(body) -> Expr:
    return Quant(QuantKind.FORALL, "p", Const(0), Const(1), body)


# ---------------------------------------------------------------- the deck-drawing game

PHASES = EnumType("Phase", ("Draw", "Main", "Discard"))
DRAW, MAIN, DISCARD = (Const(i, enum="Phase") for i in range(3))
HAND_LIMIT = 7


def deck_game(deck: int | None = 10) -> Model:
    """Two players share a draw pile of DECK cards. A turn: Draw (must draw 1 or 2 while
    cards remain), Main (play cards), Discard (must discard down to seven), then the turn
    passes. The game ends when the pile is empty. `deck=None` leaves DECK free (DECK >= 1)."""
    D = Param("DECK")
    active, phase, drawn = Var("active"), Var("phase"), Var("drawn")
    hand_a = Index("hand", active)
    pile = Var("pile")
    n = Local("n")
    actions = (
        Action("draw", guard=conj(eq(phase, DRAW), neg(drawn), ge(pile, n)),
               effects=(Assign(pile, sub(pile, n)), Assign(hand_a, add(hand_a, n)), Assign(drawn, TRUE)),
               choices=(Choice("n", rng(1, 2)),), modality=Modality.MUST, phase="Draw"),
        Action("end Draw", guard=conj(eq(phase, DRAW), disj(drawn, eq(pile, 0))),
               effects=(Assign(phase, MAIN),), kind=ActionKind.ADVANCE, target_phase="Main"),
        Action("play", guard=conj(eq(phase, MAIN), gt(hand_a, 0)),
               effects=(Assign(hand_a, sub(hand_a, 1)),), phase="Main"),
        Action("end Main", guard=eq(phase, MAIN), effects=(Assign(phase, DISCARD),),
               kind=ActionKind.ADVANCE, target_phase="Discard"),
        Action("discard", guard=conj(eq(phase, DISCARD), gt(hand_a, HAND_LIMIT)),
               effects=(Assign(hand_a, sub(hand_a, 1)),), modality=Modality.MUST, phase="Discard"),
        Action("pass turn", guard=conj(eq(phase, DISCARD), le(hand_a, HAND_LIMIT)),
               effects=(Assign(active, sub(1, active)), Assign(phase, DRAW), Assign(drawn, FALSE)),
               kind=ActionKind.TURN_END, target_phase="Draw"),
    )
    return Model(
        name="deck-game",
        players=2,
        params=(ParamDecl("DECK", 10, lo=1),),
        param_values=(("DECK", deck),),
        enums=(PHASES,),
        variables=(
            Variable("phase", PHASES, init=(DRAW,), implicit=True),
            Variable("active", rng(0, 1), init=(Const(0),), implicit=True),
            Variable("pile", rng(0, D), init=(D,)),
            Variable("hand", rng(0, HAND_LIMIT + 2), index=rng(0, 1), init=(Const(0),), by_player=True),
            Variable("drawn", BoolType(), init=(FALSE,)),
        ),
        actions=actions,
        end=eq(pile, 0),
    )


def passive_hand_limit() -> Invariant:
    p = Local("p")
    return Invariant(id="passive-hand-limit", statement="a player waiting for their turn holds at most seven",
                     expr=forall_players(app(Op.IMPLIES, app(Op.NE, p, Var("active")),
                                             le(Index("hand", p), HAND_LIMIT))))


# ---------------------------------------------------------------- classics

def counter(limit: int = 5, policy: Overflow = Overflow.CLAMP) -> Model:
    """x counts up to `limit` under an overflow policy; y toggles."""
    x, y = Var("x"), Var("y")
    return Model(name=f"counter-{policy.value}", variables=(
        Variable("x", rng(0, limit), init=(Const(0),), overflow=policy),
        Variable("y", BoolType(), init=(FALSE,))),
        actions=(Action("inc", effects=(Assign(x, add(x, 1)),)),
                 Action("flip", effects=(Assign(y, neg(y)),)),
                 Action("reset", guard=conj(eq(x, limit), y), effects=(Assign(x, Const(0)),))))


def peterson() -> Model:
    """Peterson's mutual exclusion for two processes; pc: 0 idle, 1 flag set, 2 waiting, 3 critical."""
    i = Local("i")
    pc_i, flag_i = Index("pc", i), Index("flag", i)
    other = sub(1, i)
    actions = (
        Action("want", guard=eq(pc_i, 0), effects=(Assign(flag_i, TRUE), Assign(pc_i, Const(1))),
               choices=(Choice("i", rng(0, 1)),)),
        Action("yield", guard=eq(pc_i, 1), effects=(Assign(Var("turn"), other), Assign(pc_i, Const(2))),
               choices=(Choice("i", rng(0, 1)),)),
        Action("enter", guard=conj(eq(pc_i, 2), disj(neg(Index("flag", other)), eq(Var("turn"), i))),
               effects=(Assign(pc_i, Const(3)),), choices=(Choice("i", rng(0, 1)),)),
        Action("leave", guard=eq(pc_i, 3), effects=(Assign(flag_i, FALSE), Assign(pc_i, Const(0))),
               choices=(Choice("i", rng(0, 1)),)),
    )
    return Model(name="peterson", variables=(
        Variable("pc", rng(0, 3), index=rng(0, 1), init=(Const(0),)),
        Variable("flag", BoolType(), index=rng(0, 1), init=(FALSE,)),
        Variable("turn", rng(0, 1), init=(Const(0),))), actions=actions)


def broken_mutex() -> Model:
    """Check-then-set without a turn variable: both processes can enter."""
    i = Local("i")
    pc_i = Index("pc", i)
    actions = (
        Action("check", guard=conj(eq(pc_i, 0), neg(Var("busy"))), effects=(Assign(pc_i, Const(1)),),
               choices=(Choice("i", rng(0, 1)),)),
        Action("enter", guard=eq(pc_i, 1), effects=(Assign(Var("busy"), TRUE), Assign(pc_i, Const(2))),
               choices=(Choice("i", rng(0, 1)),)),
        Action("leave", guard=eq(pc_i, 2), effects=(Assign(Var("busy"), FALSE), Assign(pc_i, Const(0))),
               choices=(Choice("i", rng(0, 1)),)),
    )
    return Model(name="broken-mutex", variables=(
        Variable("pc", rng(0, 2), index=rng(0, 1), init=(Const(0),)),
        Variable("busy", BoolType(), init=(FALSE,))), actions=actions)


def stuck_model() -> Model:
    """x climbs by 1 or 2 to 4, the end (an unspecified overflow blocks 3 -> 5); leaving 3
    needs the mark y, set only at 1 and cleared by `stay`: x = 3 without y is a deadlock."""
    x, y = Var("x"), Var("y")
    return Model(name="stuck", variables=(
        Variable("x", rng(0, 4), init=(Const(0),)),
        Variable("y", BoolType(), init=(FALSE,))),
        actions=(Action("step", guard=conj(lt(x, 4), disj(app(Op.NE, x, 3), y)), effects=(Assign(x, add(x, Local("k"))),),
                        choices=(Choice("k", rng(1, 2)),)),
                 Action("mark", guard=conj(eq(x, 1), neg(y)), effects=(Assign(y, TRUE),)),
                 Action("stay", guard=conj(eq(x, 3), y), effects=(Assign(y, FALSE),)),
                 Action("forbidden", guard=TRUE, effects=(Assign(x, Const(0)),), modality=Modality.MUST_NOT)),
        end=eq(x, 4))


def forbid_model() -> Model:
    """Gems 0..3 with a forbid policy: gaining at the cap is not allowed, so play stops at 3."""
    g = Var("gems")
    return Model(name="forbid", variables=(Variable("gems", rng(0, 3), init=(Const(0),),
                                                    overflow=Overflow.FORBID),),
                 actions=(Action("gain", effects=(Assign(g, add(g, Local("n"))),), choices=(Choice("n", rng(1, 2)),)),))


def param_model(value: int | None = None) -> Model:
    """A counter bounded by a parameter N (1..20); `spend` needs two tokens."""
    N = Param("N")
    t = Var("tokens")
    return Model(name="param", params=(ParamDecl("N", 4, lo=1, hi=20),), param_values=(("N", value),),
                 variables=(Variable("tokens", rng(0, N), init=(Const(0),), overflow=Overflow.CLAMP),
                            Variable("spent", rng(0, 3), init=(Const(0),), overflow=Overflow.CLAMP)),
                 actions=(Action("earn", guard=lt(t, N), effects=(Assign(t, add(t, 1)),)),
                          Action("spend", guard=ge(t, 2), effects=(Assign(t, sub(t, 2)),
                                                                    Assign(Var("spent"), add(Var("spent"), 1))))))


def mod_model() -> Model:
    """Division, modulo, min/max, abs, sum and count in guards and effects."""
    a, b = Index("v", Const(0)), Index("v", Const(1))
    total = Quant(QuantKind.SUM, "j", Const(0), Const(2), Index("v", Local("j")))
    return Model(name="arith", variables=(Variable("v", rng(0, 6), index=rng(0, 2), init=(Const(0),)),),
                 actions=(Action("bump", effects=(Assign(Index("v", Local("j")),
                                                         app(Op.MOD, add(Index("v", Local("j")), 2), 7)),),
                                 choices=(Choice("j", rng(0, 2)),)),
                          Action("halve", guard=gt(total, 4),
                                 effects=(Assign(a, app(Op.DIV, a, 2)),
                                          Assign(b, app(Op.MIN, b, app(Op.ABS, sub(a, 3)))))),))


def table() -> list[tuple[str, Model, Property, str]]:
    """(row id, model, claim, truth)."""
    x = Var("x")
    pc = lambda i: Index("pc", Const(i))  # noqa: E731
    both_critical = conj(eq(pc(0), 3), eq(pc(1), 3))
    v = lambda i: Index("v", Const(i))  # noqa: E731
    rows = [
        ("clamp-bound", counter(), Invariant(id="x-le-5", expr=le(x, 5)), "holds"),
        ("clamp-reaches-top", counter(), Reachable(id="x-5", expr=eq(x, 5)), "reachable"),
        ("clamp-never-6", counter(), Reachable(id="x-6", expr=eq(x, 6)), "unreachable"),
        ("clamp-x-le-3", counter(), Invariant(id="x-le-3", expr=le(x, 3)), "violated"),
        ("clamp-reset-fires", counter(), Reachable(id="reset", action=("reset",)), "reachable"),
        ("unspecified-stuck", counter(5, Overflow.UNSPECIFIED), DeadlockFree(id="dl"), "holds"),
        ("forbid-deadlocks", forbid_model(), DeadlockFree(id="dl"), "violated"),
        ("forbid-cap", forbid_model(), Invariant(id="cap", expr=le(Var("gems"), 3)), "holds"),
        ("forbid-skips-nothing", forbid_model(), Reachable(id="g3", expr=eq(Var("gems"), 3)), "reachable"),
        ("peterson-mutex", peterson(), Invariant(id="mutex", expr=neg(both_critical)), "holds"),
        ("peterson-enters", peterson(), Reachable(id="cs", expr=eq(pc(1), 3)), "reachable"),
        ("peterson-live", peterson(), DeadlockFree(id="dl"), "holds"),
        ("broken-mutex", broken_mutex(), Invariant(id="mutex", expr=neg(conj(eq(pc(0), 2), eq(pc(1), 2)))),
         "violated"),
        ("stuck-deadlock", stuck_model(), DeadlockFree(id="dl"), "violated"),
        ("stuck-must-not", stuck_model(), Reachable(id="forbidden", action=("forbidden",)), "unreachable"),
        ("stuck-terminates", stuck_model(), Terminates(id="ends", scope="game"), "violated"),
        ("stuck-y-at-3", stuck_model(), Reachable(id="y3", expr=conj(eq(x, 3), Var("y"))), "reachable"),
        ("param-bound", param_model(4), Invariant(id="le-n", expr=le(Var("tokens"), Param("N"))), "holds"),
        ("param-spent", param_model(4), Reachable(id="spent3", expr=eq(Var("spent"), 3)), "reachable"),
        ("arith-sum", mod_model(), Invariant(id="sum", expr=le(add(add(v(0), v(1)), v(2)), 18)), "holds"),
        ("arith-odd", mod_model(), Reachable(id="odd", expr=eq(app(Op.MOD, v(0), 2), 1)), "reachable"),
        ("arith-v1", mod_model(), Invariant(id="v1", expr=le(v(1), 5)), "violated"),
        ("deck-passive", deck_game(6), passive_hand_limit(), "holds"),
        ("deck-active", deck_game(6), Invariant(id="active", expr=le(Index("hand", Var("active")), 3)),
         "violated"),
        ("deck-turn-ends", deck_game(4), Terminates(id="turn", scope="turn"), "holds"),
        ("deck-deadlock", deck_game(4), DeadlockFree(id="dl"), "holds"),
        ("counter-terminates", counter(), Terminates(id="game", scope="game"), "violated"),
    ]
    return rows
