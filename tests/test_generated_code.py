"""Generated code can be read back: tracebacks show its lines (linecache), and
TURNPROOF_DUMP_CODE=DIR writes each generated module to DIR; a layout keeps its code."""
from __future__ import annotations

import linecache
import pickle
import traceback

import pytest

from verifier.engines.bfsgen import compile_expander, compile_predicate, packing_of
from verifier.ir.expr import App, Const, Op, Var
from verifier.ir.model import IntType, Model, Variable
from verifier.semantics import EvalError, layout

MODEL = Model("m", variables=(Variable("x", IntType(Const(0), Const(3)), init=(Const(0),)),),
              end=Const(0, is_bool=True))
ONE_OVER_X = App(Op.EQ, (App(Op.DIV, (Const(1), Var("x"))), Const(0)))     # a model error where x = 0


def _generated_frame(err: BaseException) -> traceback.FrameSummary:
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.name == "pred"]
    assert frames, "no frame of generated code in the traceback"
    return frames[-1]


def test_a_traceback_shows_the_generated_line():
    pred = compile_predicate(layout(MODEL), ONE_OVER_X)
    with pytest.raises(EvalError) as info:
        pred((0,))
    frame = _generated_frame(info.value)
    assert frame.filename.startswith("<turnproof") and "return" in (frame.line or "")
    assert linecache.getline(frame.filename, frame.lineno).strip() == frame.line


def test_dumped_code_is_written_and_named_in_tracebacks(tmp_path, monkeypatch):
    monkeypatch.setenv("TURNPROOF_DUMP_CODE", str(tmp_path / "code"))
    pred = compile_predicate(layout(MODEL), ONE_OVER_X)
    with pytest.raises(EvalError) as info:
        pred((0,))
    frame = _generated_frame(info.value)
    dumped = sorted((tmp_path / "code").glob("*.py"))
    assert [str(p) for p in dumped] == [frame.filename] and "def pred(s):" in dumped[0].read_text()


def test_a_layout_keeps_its_code_and_pickles_without_it():
    lay = layout(MODEL)
    assert compile_expander(lay) is compile_expander(lay) and packing_of(lay) is packing_of(lay)
    copy = pickle.loads(pickle.dumps(lay))
    assert copy == lay and compile_expander(copy) is not compile_expander(lay)
    assert compile_expander(copy).expand(packing_of(copy).pack((0,))) == compile_expander(lay).expand(0)


X, NOT_X = Var("x"), App(Op.NOT, (Var("x"),))
FOLDED = [(App(Op.AND, (X, NOT_X)), 0), (App(Op.OR, (App(Op.NE, (X, Const(0))), NOT_X)), 1),
          (App(Op.EQ, (X, X)), 1), (App(Op.LT, (X, X)), 0), (App(Op.ADD, (X, Const(0))), None)]


@pytest.mark.parametrize(("e", "value"), FOLDED, ids=lambda v: str(v))
def test_simplify_folds_what_holds_in_every_state(e, value):
    """`p and not p`, `x == x`, `x + 0` fold at compile time, to what the reference semantics
    gives in every state; one that may raise (1 / x) is kept whole."""
    from verifier.engines.codegen import simplify
    from verifier.semantics import evaluate

    lay = layout(MODEL)
    folded = simplify(e, lay)
    assert folded == (X if value is None else Const(value, is_bool=True))
    assert all(evaluate(lay, folded, (x,)) == evaluate(lay, e, (x,)) for x in range(4))
    raising = App(Op.AND, (ONE_OVER_X, App(Op.NOT, (ONE_OVER_X,))))
    assert simplify(raising, lay) == raising
