"""Python and Z3 agree on every expression: random expressions on random states.

`semantics.evaluate` is the reference; the symbolic encoding must give the
same value, and its definedness condition must be false exactly where the
reference raises (index out of range, division or modulo by a non-positive
number), following the same short-circuit order.
"""
from __future__ import annotations

import z3
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from verifier.engines.symbolic.encode import Encoding, State, as_int
from verifier.ir.expr import App, Const, Index, Local, Op, Quant, QuantKind, Var
from verifier.ir.model import BoolType, EnumType, IntType, Model, Variable
from verifier.semantics import EvalError, evaluate, layout

COLOUR = EnumType("Colour", ("red", "green", "blue"))
MODEL = Model(name="exprs", enums=(COLOUR,), variables=(
    Variable("x", IntType(Const(-2), Const(5)), init=(Const(0),)),
    Variable("b", BoolType(), init=(Const(0, is_bool=True),)),
    Variable("c", COLOUR, init=(Const(0, enum="Colour"),)),
    Variable("arr", IntType(Const(0), Const(4)), index=IntType(Const(0), Const(2)), init=(Const(0),)),
    Variable("mark", BoolType(), index=COLOUR, init=(Const(0, is_bool=True),)),
))
LAY = layout(MODEL)
ENC = Encoding(MODEL)

int_leaf = st.one_of(st.integers(-3, 6).map(Const), st.just(Var("x")), st.just(Var("c")),
                     st.just(Var("b")))
bool_leaf = st.one_of(st.booleans().map(lambda v: Const(int(v), is_bool=True)), st.just(Var("b")),
                      st.just(Index("mark", Const(1, enum="Colour"))))


def _with_locals(names):
    extra_int = [st.just(Local(n)) for n in names]
    return st.one_of(int_leaf, *extra_int) if extra_int else int_leaf


def exprs(depth: int = 3, names: tuple[str, ...] = ()):
    """(int strategy, bool strategy) of expressions up to `depth`."""
    ints = _with_locals(names)
    bools = bool_leaf
    for level in range(depth):
        i, b = ints, bools
        q = f"q{level}"
        inner_i, inner_b = (_with_locals(names + (q,)), bool_leaf) if level == 0 else exprs(level, names + (q,))
        ints = st.one_of(
            i,
            st.builds(lambda o, a, c: App(o, (a, c)), st.sampled_from([Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD]), i, i),
            st.builds(lambda o, a: App(o, (a,)), st.sampled_from([Op.NEG, Op.ABS]), i),
            st.builds(lambda o, xs: App(o, tuple(xs)), st.sampled_from([Op.MIN, Op.MAX]), st.lists(i, min_size=2, max_size=3)),
            st.builds(lambda c, a, d: App(Op.ITE, (c, a, d)), b, i, i),
            st.builds(lambda ix: Index("arr", ix), i),
            st.builds(lambda k, lo, hi, body, q=q: Quant(k, q, Const(lo), Const(hi), body),
                      st.sampled_from([QuantKind.SUM, QuantKind.COUNT]), st.integers(-1, 1), st.integers(-1, 2),
                      st.one_of(inner_i, inner_b)),
            b,   # booleans are 0/1 in arithmetic
        )
        bools = st.one_of(
            b,
            st.builds(lambda o, a, c: App(o, (a, c)),
                      st.sampled_from([Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE]), i, i),
            st.builds(lambda o, xs: App(o, tuple(xs)), st.sampled_from([Op.AND, Op.OR]),
                      st.lists(st.one_of(b, i), min_size=2, max_size=3)),
            st.builds(lambda a: App(Op.NOT, (a,)), st.one_of(b, i)),
            st.builds(lambda a, c: App(Op.IMPLIES, (a, c)), b, b),
            st.builds(lambda c, a, d: App(Op.ITE, (c, a, d)), b, b, b),
            st.builds(lambda ix: Index("mark", ix), i),
            st.builds(lambda k, lo, hi, body, q=q: Quant(k, q, Const(lo), Const(hi), body),
                      st.sampled_from([QuantKind.FORALL, QuantKind.EXISTS]), st.integers(-1, 1), st.integers(-1, 2),
                      inner_b),
        )
    return ints, bools


INTS, BOOLS = exprs(3)
states = st.tuples(*(st.integers(s.lo, s.hi) for s in LAY.slots))


def z3_eval(e, state):
    sym = State("t", tuple(z3.IntVal(v) for v in state))
    value, defined = ENC.encode(e, sym, {})
    return z3.simplify(as_int(value)), z3.simplify(defined)


@settings(max_examples=examples(400), deadline=None)
@given(st.one_of(INTS, BOOLS), states)
def test_python_and_z3_agree(e, state):
    try:
        expected = evaluate(LAY, e, state)
    except EvalError:
        expected = None
    value, defined = z3_eval(e, state)
    if expected is None:
        assert z3.is_false(defined), f"Python raises, Z3 calls it defined: {e}"
        return
    assert z3.is_true(defined), f"Python evaluates it, Z3 calls it undefined: {e}"
    assert value.as_long() == int(expected), f"{e}: Python {expected}, Z3 {value}"


def test_short_circuit_definedness():
    """`false and arr[9] > 0` is defined (Python never evaluates arr[9]); `arr[9] > 0 and false` is not."""
    bad = App(Op.GT, (Index("arr", Const(9)), Const(0)))
    false = Const(0, is_bool=True)
    state = tuple(0 for _ in LAY.slots)
    assert z3.is_true(z3_eval(App(Op.AND, (false, bad)), state)[1])
    assert z3.is_false(z3_eval(App(Op.AND, (bad, false)), state)[1])
    assert z3.is_false(z3_eval(App(Op.MOD, (Const(3), Const(0))), state)[1])


def test_enum_indexed_array_and_enum_values():
    e = Index("mark", Var("c"))
    state = list(0 for _ in LAY.slots)
    names = [s.name for s in LAY.slots]
    state[names.index("c")] = 2
    state[names.index("mark[blue]")] = 1
    assert evaluate(LAY, e, tuple(state)) == 1
    assert z3_eval(e, tuple(state))[0].as_long() == 1
