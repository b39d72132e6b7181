"""Diagram conditions are simplified (`ir.simplify`) without changing what they say: the simplified
condition holds on exactly the states the original holds on."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_symbolic_exprs import BOOLS, LAY, states
from tiers import examples

from verifier.ir.expr import App, Const, Index, Local, Op, Quant, QuantKind, Var
from verifier.ir.simplify import simplify_condition
from verifier.semantics import EvalError, evaluate

B, X = Var("b"), Var("x")
# conditions as models write them: comparisons of a variable with a small constant (repeated often
# enough that siblings meet), flags, and `and`/`or`/`not`/`forall`/`exists` over them
SUBJECTS = st.sampled_from([X, Var("c"), Index("arr", Const(1)), Index("arr", Local("q"))])
ATOMS = st.one_of(
    st.builds(lambda o, a, c: App(o, (a, Const(c))), st.sampled_from([Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE]),
              SUBJECTS, st.integers(0, 2)),
    st.builds(lambda a, c: App(Op.EQ, (Const(c), a)), SUBJECTS, st.integers(0, 2)),
    st.sampled_from([B, Index("mark", Const(1, enum="Colour")), Const(1, is_bool=True), Const(0, is_bool=True)]))
POOL = st.sampled_from([App(Op.EQ, (X, Const(1))), App(Op.NE, (X, Const(2))), App(Op.EQ, (Const(1), X)),
                        App(Op.LT, (X, Const(1))), B, App(Op.NE, (Var("c"), Const(0)))])   # atoms that meet often
CONDITIONS = st.recursive(st.one_of(POOL, ATOMS), lambda inner: st.one_of(
    st.builds(lambda a: App(Op.NOT, (a,)), inner),
    st.builds(lambda o, xs: App(o, tuple(xs)), st.sampled_from([Op.AND, Op.OR]), st.lists(inner, min_size=2, max_size=4)),
    st.builds(lambda k, body: Quant(k, "q", Const(0), Const(2), body),
              st.sampled_from([QuantKind.FORALL, QuantKind.EXISTS, QuantKind.COUNT]), inner)), max_leaves=12)


def _junctions(parts):
    """`and`/`or` of 2 to 4 of `parts`, negated or not."""
    return st.builds(lambda negated, o, xs: App(Op.NOT, (App(o, tuple(xs)),)) if negated else App(o, tuple(xs)),
                     st.booleans(), st.sampled_from([Op.AND, Op.OR]), st.lists(parts, min_size=2, max_size=4))


JUNCTIONS = _junctions(st.one_of(POOL, _junctions(POOL), CONDITIONS))     # siblings that meet, and any shape
NEAR = st.tuples(*(st.integers(max(s.lo, 0), min(s.hi, 2)) for s in LAY.slots))   # values the constants name


def _holds(e, state) -> bool | None:
    try:
        return bool(evaluate(LAY, e, state, {"q": 1}))     # `q` free outside a quantifier
    except EvalError:
        return None


def _same(e, state) -> None:
    simplified = simplify_condition(e)
    before, after = _holds(e, state), _holds(simplified, state)
    if before is not None and after is not None:       # dropping an operand may skip (or reach) an index error
        assert before == after, f"{e} -> {simplified}"


@settings(max_examples=examples(600), deadline=None)
@given(JUNCTIONS, NEAR)
def test_the_simplified_condition_holds_where_the_original_does(e, state):
    _same(e, state)


@settings(max_examples=examples(200), deadline=None)
@given(BOOLS, states)
def test_any_expression_read_as_a_condition_keeps_its_truth(e, state):
    """Numbers read as conditions, `if`, `->`, sums: what the rewrites leave alone stays as it was."""
    _same(e, state)


def _not(a):
    return App(Op.NOT, (a,))


def _eq(a, c):
    return App(Op.EQ, (a, Const(c)))


def test_the_rewrites_people_read():
    assert simplify_condition(_not(_not(B))) == B
    assert simplify_condition(_not(_eq(X, 0))) == App(Op.NE, (X, Const(0)))
    assert simplify_condition(_not(App(Op.LT, (X, Const(2))))) == App(Op.GE, (X, Const(2)))
    assert simplify_condition(App(Op.AND, (App(Op.OR, (_eq(X, 0), B)), B))) == B
    assert simplify_condition(App(Op.AND, (App(Op.OR, (_eq(X, 0), B)), _not(B)))) == \
        App(Op.AND, (_eq(X, 0), _not(B)))
    assert simplify_condition(App(Op.AND, (_eq(X, 2), _not(_eq(X, 1)), _not(_eq(X, 3))))) == _eq(X, 2)
    assert simplify_condition(App(Op.AND, (_eq(X, 2), _eq(X, 1)))) == Const(0, is_bool=True)
    assert simplify_condition(App(Op.AND, (_eq(X, 1), App(Op.EQ, (Const(1), X))))) != Const(0, is_bool=True)
    assert simplify_condition(App(Op.AND, (_eq(X, 2), _not(_eq(X, 2))))) == Const(0, is_bool=True)
    assert simplify_condition(_not(App(Op.OR, (B, _eq(X, 1))))) == App(Op.AND, (_not(B), App(Op.NE, (X, Const(1)))))
