"""Bounded sequences (`type: seq[Card, 0..8]`, push/pop/top/len, s[i]): an array and a length variable
to every engine; pushing onto a full sequence and pop or top of an empty one are model errors (UNKNOWN
with a replayed trace), as an index out of range is."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_lang_errors import the_error, where

from verifier.engines.compact import explore_compact
from verifier.engines.explicit import ExplicitEngine, explore
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.ir.expr import pretty
from verifier.ir.props import DeadlockFree, Invariant, Reachable
from verifier.lang import load_model
from verifier.lang.expressions import parse_expression
from verifier.lang.properties import model_scope
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import initial_states, layout
from verifier.trace import replay

MODEL = Path(__file__).parent / "fixtures" / "lang" / "stack.yaml"
TEXT = MODEL.read_text()


def claims(model):
    scope = model_scope(model)
    return [Invariant(id="same-height", statement="both sequences grow together",
                      expr=parse_expression("len(stack) == len(ctrl)", scope, "bool")),
            Reachable(id="counter-on-top", statement="a counter on a bolt",
                      expr=parse_expression("len(stack) == 2 and top(stack) == counter and stack[0] == bolt "
                                            "and ctrl[0] != top(ctrl)", scope, "bool")),
            DeadlockFree(id="df", statement="no deadlock")]


def load(tmp_path, old: str = "", new: str = ""):
    path = tmp_path / "stack.yaml"
    path.write_text(TEXT.replace(old, new, 1))
    return path


def test_a_sequence_is_an_array_and_a_length():
    model = load_model(str(MODEL)).instantiate()
    names = [s.name for s in layout(model).slots]
    assert names[2:6] == ["stack[0]", "stack[1]", "stack[2]", "stack_len"]
    assert model.var("stack").seq_length == "stack_len"
    start = dict(zip(names, initial_states(layout(model))[0]))
    assert start["stack_len"] == 0 and start["ctrl[2]"] == 0 and layout(model).slots[5].hi == 3


def test_every_engine_agrees():
    model = load_model(str(MODEL)).instantiate()
    props = claims(model)
    explicit = ExplicitEngine().check(model, props, Budget())
    compact = ExplicitEngine(store="compact").check(model, props, Budget())
    symbolic = SymbolicEngine().check(model, props, Budget())
    assert [r.verdict for r in explicit] == [Verdict.HOLDS] * 3 == [r.verdict for r in compact]
    assert [r.verdict for r in symbolic] == [Verdict.PROVED, Verdict.HOLDS, Verdict.PROVED]
    assert explore_compact(model).vectorised == ""                 # the numpy code expresses it
    assert len(explore(model).states) == 972                       # SPIN agrees: test_spin_crosscheck


ERRORS = [
    ("push onto a full sequence", "mana[p] > 0 and len(stack) < 3 and", "mana[p] >= 0 and", "index 3 out of range"),
    ("pop of an empty one", 'when: "len(stack) > 0"', "when: true", "index -1 out of range"),
    ("top of an empty one", "len(stack) > 0 and top(ctrl) != p", "top(ctrl) != p", "index -1 out of range"),
    ("element beyond the length", "ctrl[0] != ctrl[1]", "ctrl[0] != ctrl[2]", "index 3 out of range"),
]


@pytest.mark.parametrize("what,old,new,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_misuse_is_a_model_error_with_a_trace(tmp_path, what, old, new, message):
    model = load_model(str(load(tmp_path, old, new))).instantiate()
    for engine in (ExplicitEngine(), SymbolicEngine()):
        (result,) = engine.check(model, [DeadlockFree(id="df", statement="no deadlock")], Budget())
        assert result.verdict is Verdict.UNKNOWN and message in result.reason, (engine, result.reason)
        assert "a push onto a full one, -1 a pop or top of an empty one" in result.reason
        assert result.trace is not None
        replay(layout(model), result.trace)


CASES = [
    ("no capacity", '"seq[Card, 0..3]"', '"seq[Card]"', "names its elements and its capacity", '"seq[Card]"',
     "seq[Card, 0..8]"),
    ("capacity from 1", '"seq[Card, 0..3]"', '"seq[Card, 1..3]"', "capacity is 0..N", '"seq[Card, 1..3]"',
     "starts empty"),
    ("capacity too large", '"seq[Card, 0..3]"', '"seq[Card, 0..999999999999]"', "at most 10,000 are allowed",
     '"seq[Card, 0..9', "count cards instead"),
    ("unknown element type", '"seq[Card, 0..3]"', '"seq[Kard, 0..3]"', "unknown type 'Kard'", '"seq[Kard', "enum"),
    ("init too long", "    init: []", "    init: [0, 1, 0, 1]", "at most 3 elements", "[0, 1, 0, 1]",
     "bottom first"),
    ("two domains for an array of sequences", "    init: []", "    init: []\n    per: [player, Card]",
     "an array of sequences has one index domain", "[player, Card]", "per: Colour"),
    ("neither push nor pop", "stack: push(c)", "stack: c", "changes by push(v) or pop", "c\n", "stack: pop"),
    ("twice in a block", "      ctrl: pop()\n", "      ctrl: pop()\n      ctrl[0]: 1\n", "changes sequence ctrl twice",
     "ctrl[0]: 1", "one push, pop"),
    ("the length assigned", "      ctrl: pop()\n", "      ctrl: pop()\n      stack_len: 0\n",
     "stack_len is the length of sequence stack", "stack_len: 0", "stack: pop"),
    ("a condition that is not one", "      ctrl: pop()\n", "      ctrl: pop if 1\n", "expected a boolean, found an integer",
     "1\n  - name: retarget", "compare the number"),
    ("a sequence used bare", 'when: "len(stack) > 0"', 'when: "stack > 0"', "'stack' is a sequence",
     "stack > 0", "top(stack)"),
    ("top of an array", "top(ctrl) != p", "top(mana) != p", "takes one sequence variable", "top(mana)",
     "seq[T, 0..N]"),
    ("name taken by the length", "  mana:", "  stack_len: {type: bool}\n  mana:", "duplicate name 'stack_len'",
     "stack_len:", "its own name"),
]


@pytest.mark.parametrize("what,old,new,message,needle,hint", CASES, ids=[c[0] for c in CASES])
def test_error(tmp_path, what, old, new, message, needle, hint):
    path = load(tmp_path, old, new)
    error = the_error(path, message)
    assert str(error.span).startswith(where(path, needle)), (str(error.span), where(path, needle))
    assert error.hint and hint in error.hint, error.hint


def test_reset_turn_empties_a_sequence(tmp_path):
    path = load(tmp_path, 'stack: {type: "seq[Card, 0..3]"}', 'stack: {type: "seq[Card, 0..3]", reset: turn}')
    model = load_model(str(path.parent / "stack.yaml"))
    written = {pretty(e.target): pretty(e.value) for e in model.action("pass turn").effects}
    assert written["stack_len"] == "0" and written["stack[2]"] == "0" and "ctrl_len" not in written


def test_a_conditional_pop_leaves_an_empty_sequence_alone(tmp_path):
    path = load(tmp_path, 'when: "len(stack) > 0"', "when: true")
    path.write_text(path.read_text().replace("stack: pop\n", 'stack: "pop if len(stack) > 0"\n')
                    .replace("ctrl: pop()\n", "ctrl: pop if len(ctrl) > 0\n")
                    .replace("countered[resolved]: \"top(stack) == counter\"", "countered[resolved]: false"))
    model = load_model(str(path)).instantiate()
    (result,) = ExplicitEngine().check(model, [DeadlockFree(id="df", statement="no deadlock")], Budget())
    assert result.verdict is Verdict.HOLDS, result.reason


def test_the_analyses_survive_a_model_error_behind_a_look_ahead(tmp_path):
    from verifier.analysis import analyse_model
    path = load(tmp_path, "      stack: pop\n", "")          # the stack stays: resolve pops an empty ctrl
    model = load_model(str(path))
    ctx, _findings = analyse_model(model)
    assert "out of range for ctrl" in ctx.unknown_reason
