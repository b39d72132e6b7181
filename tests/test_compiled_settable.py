"""Which actions may set a step flag (`compiled/settable.py`): effects shown false where the action
fires (the guard's facts, each `and`'s own, linear sums within ranges, one slot's values left), and
only those; effects that may raise a model error are told apart. On random models, an effect shown
unsettable is false at every firing of its action in every state searched (the flags of random
step claims, and random conditions of the action's choices)."""
from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compiled_moves import ACTIONS, JUDGED
from test_explicit_differential import bools, models
from tiers import examples

from verifier.engines.compiled.settable import may_set, raises
from verifier.engines.explicit import explore
from verifier.ir.expr import TRUE, App, Const, Expr, Index, Local, Op, Quant, QuantKind, Var
from verifier.ir.model import Action, BoolType, Choice, EnumType, IntType, Model, Variable
from verifier.ir.props import StepInvariant
from verifier.props.monitor import compile_together
from verifier.resources import Budget
from verifier.semantics import EvalError, choice_values, evaluate, layout

P, X, Y, B, N = Var("p"), Var("x"), Var("y"), Var("b"), Local("n")


def op(o: Op, *args: Expr) -> Expr:
    return App(o, tuple(args))


def c(v: int) -> Const:
    return Const(v)


LAY = layout(Model("m", variables=(Variable("p", IntType(c(0), c(2))), Variable("x", IntType(c(0), c(9))),
                                   Variable("y", IntType(c(0), c(9))),
                                   Variable("a", IntType(c(0), c(3)), index=IntType(c(0), c(2))),
                                   Variable("b", BoolType()))))


def action(guard: Expr = TRUE) -> Action:
    return Action("act", guard, (), (Choice("n", IntType(c(1), c(2))),))


@pytest.mark.parametrize("guard, value, settable", [
    (op(Op.EQ, P, c(1)), op(Op.NOT, op(Op.EQ, P, c(1))), False),                     # only in its phase
    (op(Op.EQ, P, c(1)), op(Op.NOT, op(Op.EQ, P, c(2))), True),
    (op(Op.AND, op(Op.EQ, c(0), P), op(Op.GT, X, c(0))), op(Op.EQ, P, c(2)), False),  # mirrored, among others
    (TRUE, op(Op.AND, op(Op.EQ, P, c(2)), op(Op.GT, X, c(0)), op(Op.EQ, P, c(1))), False),   # an `and`'s own facts
    (TRUE, op(Op.AND, op(Op.EQ, P, c(2)), op(Op.OR, op(Op.EQ, P, c(0)), op(Op.EQ, P, c(1))), op(Op.GT, X, c(0))), False),
    (TRUE, op(Op.AND, op(Op.EQ, P, c(2)), op(Op.OR, op(Op.EQ, P, c(0)), op(Op.EQ, P, c(2))), op(Op.GT, X, c(0))), True),
    (TRUE, op(Op.NOT, op(Op.LE, op(Op.ADD, X, N), op(Op.ADD, X, c(2)))), False),      # x + n <= x + 2: n <= 2
    (TRUE, op(Op.NOT, op(Op.LE, op(Op.ADD, X, N), op(Op.ADD, X, c(1)))), True),       # n = 2 breaks it
    (TRUE, op(Op.GT, op(Op.SUB, X, Y), c(9)), False),                                # ranges bound x - y
    (TRUE, op(Op.GT, op(Op.SUB, X, Y), c(8)), True),
    (op(Op.NOT, op(Op.EQ, P, c(2))), op(Op.NOT, op(Op.OR, op(Op.EQ, P, c(0)), op(Op.EQ, P, c(1)))), False),
    (TRUE, op(Op.NOT, op(Op.OR, op(Op.EQ, P, c(0)), op(Op.EQ, P, c(1)))), True),     # p = 2 is left
    (op(Op.EQ, Index("a", c(1)), c(3)), op(Op.LT, Index("a", c(1)), c(3)), False),
    (op(Op.GT, Index("a", X), c(0)), op(Op.NOT, op(Op.GT, Index("a", X), c(0))), False),   # a test of the guard
    (X, op(Op.NE, X, c(1)), True),                                 # x holds as a test: x is 1..9, not 1
    (op(Op.NOT, X), op(Op.NE, X, c(0)), False),
    (TRUE, op(Op.NOT, op(Op.AND, op(Op.EQ, X, c(1)), op(Op.EQ, X, c(1)))), True),    # x = 0: a conjunct repeated
    (B, op(Op.AND, op(Op.EQ, B, Const(1, is_bool=True)), op(Op.GT, X, c(0))), True),  # b fixed as a test and by ==
    (TRUE, op(Op.AND, B, op(Op.EQ, B, c(1)), op(Op.GT, X, c(0))), True),
    (op(Op.LT, N, c(2)), op(Op.NOT, Quant(QuantKind.FORALL, "n", c(0), c(2), op(Op.LT, N, c(2)))), True),  # its own n
])
def test_an_effect_is_unsettable_only_where_the_guard_rules_it_out(guard, value, settable):
    assert may_set(LAY, action(guard), value) is settable


def test_effects_that_may_raise_are_told_apart():
    assert not raises(LAY, action(), Index("a", op(Op.SUB, N, c(1))))
    assert raises(LAY, action(), Index("a", op(Op.ADD, N, c(1))))        # 3 is past a's indices
    assert raises(LAY, action(), op(Op.DIV, X, Y))


def test_a_choice_of_an_enum_ranges_over_all_its_values():
    """A choice's range is its type's (`type_bounds`): an enum of three values reaches 2, not only 0..1."""
    pick = Action("act", TRUE, (), (Choice("k", EnumType("card", ("a", "b", "c"))),))
    assert may_set(LAY, pick, op(Op.EQ, Local("k"), c(2)))


def test_a_quantifier_reads_its_own_name_not_the_choice_it_hides():
    """The choice n is 1..2, the quantifier's n 0..4 (a body that reads the choice m is not unrolled)."""
    act = Action("act", TRUE, (), (Choice("n", IntType(c(1), c(2))), Choice("m", IntType(c(0), c(2)))))
    body = op(Op.AND, op(Op.GE, Index("a", Local("m")), c(0)), op(Op.LT, N, c(3)))
    assert may_set(LAY, act, op(Op.NOT, Quant(QuantKind.FORALL, "n", c(0), c(4), body)))


@settings(max_examples=examples(100), deadline=None)
@given(models(), st.lists(st.builds(StepInvariant, id=st.just("s"), expr=JUDGED,
                                    actions=st.lists(ACTIONS, max_size=2).map(tuple)), min_size=1, max_size=3),
       st.data())
def test_an_effect_shown_unsettable_is_false_at_every_firing(model, steps, data):
    product, parts = compile_together(model, [replace(c, id=f"step{k}") for k, c in enumerate(steps)])
    flags = {part.monitor_vars[0] for part in parts}
    lay = layout(product)
    states = explore(product, Budget(max_states=400)).states
    for action in product.actions:
        conditions = bools(tuple(c.name for c in action.choices))
        values = [e.value for e in action.effects if e.target.name in flags] + data.draw(st.lists(
            st.one_of(conditions, conditions.map(lambda v: App(Op.NOT, (App(Op.AND, (v, v)),)))), max_size=4))
        for value in values:
            if raises(lay, action, value) or may_set(lay, action, value):
                continue
            for state in states:
                try:
                    envs = list(choice_values(lay, action, state))
                    fired = [env for env in envs if evaluate(lay, action.guard, state, env)]
                except EvalError:
                    continue
                assert not any(evaluate(lay, value, state, env) for env in fired), (action.name, value)
