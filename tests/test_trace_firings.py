"""The moves of a trace rebuilt from a path of packed states (`compact.firings_along`, used by the
compact and compiled stores and the analyses' traces) are found by the reference semantics, one
firing at a time, for a layout's first SEMANTIC_MOVES moves, else by the model's expander (generated
then where it was not yet): either way each is the generated expander's first firing that reaches
the next state, as the searches stored it; a model error after that firing, in the same state,
changes nothing."""
from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from test_explicit_differential import models
from tiers import examples

from verifier.engines.bfsgen import compile_expander, generated_expander, packing_of
from verifier.engines.compact import SEMANTIC_MOVES, firings_along, firings_of
from verifier.engines.explicit import explore
from verifier.ir.expr import App, Const, Index, Op, Var
from verifier.ir.model import Action, Assign, IntType, Model, Variable
from verifier.resources import Budget
from verifier.semantics import layout


def expanders_first_firings(lay, keys):
    """Each step's first firing of the generated expander whose target is the next state."""
    out = []
    for source, target in itertools.pairwise(keys):
        a, choice = next((a, choice) for a, choice, t, _gap in firings_of(lay, source) if t == target)
        out.append((lay.model.actions[a], choice))
    return out


@settings(max_examples=examples(30), deadline=None)
@given(models(), st.data())
def test_each_move_is_the_expanders_first_firing_to_the_next_state(model, data):
    space = explore(model, Budget(max_states=300))
    if not len(space.packed):
        return
    i = data.draw(st.integers(0, len(space.packed) - 1))
    states, _moves = space.path_to(i)
    lay = layout(space.lay.model)            # a layout of its own: no expander generated yet
    keys = [packing_of(lay).pack(s) for s in states][:SEMANTIC_MOVES + 1]
    by_semantics = firings_along(lay, keys)
    assert generated_expander(lay) is None
    assert by_semantics == expanders_first_firings(space.lay, keys)
    compile_expander(lay)
    assert firings_along(lay, keys) == by_semantics


def test_past_semantic_moves_the_expander_finds_them():
    """A counter's path of 100 moves asked in two traces: the first 40 by the semantics, then the
    expander generated for the next 60 (past SEMANTIC_MOVES)."""
    model = Model("counter", variables=(Variable("x", IntType(Const(0), Const(100)), init=(Const(0),)),),
                  actions=(Action("step", App(Op.LT, (Var("x"), Const(100))),
                                  (Assign(Var("x"), App(Op.ADD, (Var("x"), Const(1)))),)),),
                  end=Const(0, is_bool=True))
    lay = layout(model)
    keys = [packing_of(lay).pack((x,)) for x in range(101)]
    assert [a.name for a, _c in firings_along(lay, keys[:41])] == ["step"] * 40
    assert generated_expander(lay) is None
    assert [a.name for a, _c in firings_along(lay, keys[40:])] == ["step"] * 60
    assert generated_expander(lay) is not None


def test_a_model_error_later_in_the_state_leaves_the_move_found():
    """`step` fires first; `bad` then reads past its array in the same state: the move along the
    path is still `step` (the expander keeps the firings before an error)."""
    model = Model("later_error",
                  variables=(Variable("x", IntType(Const(0), Const(3)), init=(Const(0),)),
                             Variable("a", IntType(Const(0), Const(1)), index=IntType(Const(0), Const(1)),
                                      init=(Const(0), Const(0)))),
                  actions=(Action("step", App(Op.LT, (Var("x"), Const(3))),
                                  (Assign(Var("x"), App(Op.ADD, (Var("x"), Const(1)))),)),
                           Action("bad", App(Op.EQ, (Index("a", App(Op.ADD, (Var("x"), Const(1)))), Const(0))), ())),
                  end=Const(0, is_bool=True))
    lay = layout(model)
    pack = packing_of(lay).pack
    keys = [pack((0, 0, 0)), pack((1, 0, 0)), pack((2, 0, 0))]
    assert [(a.name, c) for a, c in firings_along(lay, keys)] == [("step", ()), ("step", ())]
    compile_expander(lay)                    # by the expander now
    assert [(a.name, c) for a, c in firings_along(lay, keys)] == [("step", ()), ("step", ())]
