"""The actions `total.failing` says cannot raise a model error: Z3 finds no in-range state where
their part of the model-error predicate holds (random guards, indexed targets and values), and the
usual ways to raise are named."""
from __future__ import annotations

from dataclasses import replace

import z3
from hypothesis import given, settings
from hypothesis import strategies as st
from test_symbolic_exprs import BOOLS, INTS, MODEL
from tiers import examples

from verifier.engines.symbolic.encode import Encoding
from verifier.engines.symbolic.total import failing
from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Param, Var
from verifier.ir.model import Action, Assign, Choice, IntType, ParamDecl


def _with(action: Action, **changes):
    return replace(MODEL, actions=(action,), **changes).instantiate()


def _fails(action: Action, **changes) -> bool:
    model = _with(action, **changes)
    end, actions = failing(model, (0,), tuple(n for n, v in model.param_values if v is None))
    return end or bool(actions)


def _raises_in_range(action: Action, **changes) -> bool:
    enc = Encoding(_with(action, **changes))
    s = z3.Solver()
    s.add(enc.param_constraints(), enc.ranges(enc.cur), enc.error)
    return s.check() == z3.sat


@settings(max_examples=examples(300), deadline=None)
@given(BOOLS, INTS, INTS, st.booleans())
def test_what_cannot_fail_never_fails(guard, index, value, indexed):
    target = Index("arr", index) if indexed else Var("x")
    action = Action("a", guard=guard, effects=(Assign(target, value),))
    if not _fails(action):
        assert not _raises_in_range(action)


def _arr(i: Expr) -> Action:
    return Action("a", effects=(Assign(Var("x"), Index("arr", i)),))


def _chosen(hi: int) -> Action:
    """A guard reading arr[k] for a choice k in 0..hi."""
    return Action("a", guard=App(Op.GT, (Index("arr", Local("k")), Const(0))),
                  choices=(Choice("k", IntType(Const(0), Const(hi))),))


def test_indexes_and_divisors():
    x, b = Var("x"), Var("b")
    one_minus_b = App(Op.SUB, (Const(1), b))
    safe = [_arr(App(Op.MOD, (x, Const(3)))), _arr(one_minus_b), _arr(App(Op.MAX, (Const(0), App(Op.MIN, (x, Const(2)))))),
            Action("a", effects=(Assign(Var("x"), App(Op.DIV, (x, Const(2)))),)),
            _chosen(2)]
    for action in safe:
        assert not _fails(action) and not _raises_in_range(action)
    raising = [_arr(x), _arr(App(Op.ADD, (one_minus_b, Const(2)))), _arr(App(Op.SUB, (Const(1), Var("c")))),
               Action("a", effects=(Assign(Var("x"), App(Op.DIV, (Const(4), x))),)),
               Action("a", effects=(Assign(Index("arr", x), Const(0)),)),
               _chosen(3)]
    for action in raising:
        assert _fails(action) and _raises_in_range(action)


def test_a_free_parameter_bound_is_taken_to_fail():
    """A choice up to a free parameter: its range is not a constant, so the action is asked of Z3
    (here: an index beyond the array for N = 3)."""
    free = {"params": (ParamDecl("N", 2, lo=1, hi=3),), "param_values": (("N", None),)}
    action = Action("a", guard=App(Op.GT, (Index("arr", Local("k")), Const(0))),
                    choices=(Choice("k", IntType(Const(0), Param("N"))),))
    assert _fails(action, **free) and _raises_in_range(action, **free)
