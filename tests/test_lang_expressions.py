"""The expression grammar: precedence, quantifiers, types, and positions inside YAML scalars."""
from __future__ import annotations

import pytest

from verifier.diagnostics import DiagnosticSink, ModelError
from verifier.ir.expr import App, Const, Op, Quant, QuantKind, pretty
from verifier.ir.model import BoolType, EnumType, IntType, Variable
from verifier.lang import load_model, parse_expression
from verifier.lang.typecheck import BOOL, INT, Scope

SCOPE = Scope(variables={"a": Variable("a", BoolType()), "b": Variable("b", BoolType()),
                         "x": Variable("x", IntType(Const(0), Const(9))),
                         "h": Variable("h", IntType(Const(0), Const(9)), IntType(Const(0), Const(1)), by_player=True),
                         "s": Variable("s", EnumType("Suit", ("hearts", "spades")))},
              params={"N"}, constants={"LIMIT": Const(7)}, enum_values={"hearts": ("Suit", 0), "spades": ("Suit", 1)},
              enums={"Suit": EnumType("Suit", ("hearts", "spades"))}, players=2)


def parse(text: str, want: str | None = None) -> str:
    return pretty(parse_expression(text, SCOPE, want))


@pytest.mark.parametrize("text,expected", [
    ("1 - 2 - 3", "(1 - 2) - 3"),
    ("1 + 2 * 3 % 4", "1 + ((2 * 3) % 4)"),
    ("-x * 2", "(-x) * 2"),
    ("a or b and not a", "a or (b and (not a))"),
    ("a -> b -> a", "a -> (b -> a)"),
    ("a implies b || a && !b", "a -> (b or (a and (not b)))"),
    ("not x == 1", "not (x == 1)"),
    ("if a then x else x + 1", "(if a then x else x + 1)"),
    ("min(x, 1, N) + max(x, LIMIT) + abs(x - 9)", "(min(x, 1, N) + max(x, 7)) + abs(x - 9)"),
    ("forall p in player: h[p] <= x", "(forall p in 0..1: h[p] <= x)"),
    ("a and exists t in Suit: s == t or x > 0", "a and (exists t in 0..1: (s == t) or (x > 0))"),
    ("count(p in player: h[p] > 0) == PLAYERS", "count(p in 0..1: h[p] > 0) == 2"),
    ("sum(i in 0..N: i) >= 3", "sum(i in 0..N: i) >= 3"),
    ("s != spades", "s != 1"),
])
def test_precedence_and_forms(text, expected):
    assert parse(text) == expected


def test_nodes():
    e = parse_expression("exists p in player: h[p] > 0", SCOPE)
    assert isinstance(e, Quant) and e.kind is QuantKind.EXISTS and e.var == "p"
    conj = parse_expression("a and b and a", SCOPE)
    assert isinstance(conj, App) and conj.op is Op.AND and len(conj.args) == 3


@pytest.mark.parametrize("text,want,message", [
    ("x + 1", BOOL, "expected a boolean, found an integer"),
    ("a", INT, "expected an integer, found a boolean"),
    ("x < a", None, "'<' needs an integer, found a boolean"),
    ("x == 1 == 2", None, "cannot parse expression"),
    ("s == 1", None, "cannot compare a value of enum Suit with an integer"),
    ("h", None, "'h' is an array"),
    ("h[a]", None, "'h[...]' needs an integer, found a boolean"),
    ("x[0]", None, "'x' is not an array"),
    ("forall t in Colour: a", None, "unknown domain 'Colour'"),
    ("count(p in player: x)", None, "'count' needs a boolean, found an integer"),
    ("min(x)", None, "min takes two or more arguments"),
])
def test_type_errors(text, want, message):
    sink = DiagnosticSink()
    assert parse_expression(text, SCOPE, want, sink=sink) is None
    assert any(message in d.message for d in sink.errors), [d.message for d in sink.errors]


def test_without_a_sink_errors_raise():
    with pytest.raises(ModelError, match="unknown name 'y'"):
        parse_expression("y > 0", SCOPE)


def test_spans_of_nodes_point_into_the_text():
    e = parse_expression("a and x > 3", SCOPE)
    cmp = e.args[1]
    assert (cmp.span.line, cmp.span.col, cmp.span.end_col) == (1, 7, 12)


STYLES = """\
model: styles
variables:
  b: {type: bool, init: false}
actions:
  - name: plain
    when: b and nope1
  - name: double
    when: "b and nope2"
  - name: single
    when: 'b and nope3'
  - name: folded
    when: >-
      b
      and nope4
  - name: literal
    when: |
      b and
         nope5
  - name: multiline_plain
    when: b and
      nope6
  - name: escaped
    when: "b and\\tnope7"
"""


def test_positions_in_every_scalar_style(tmp_path):
    path = tmp_path / "styles.yaml"
    path.write_text(STYLES)
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    lines = STYLES.splitlines()
    found = {}
    for d in info.value.diagnostics:
        if d.message.startswith("unknown name 'nope"):
            found[d.message[-2]] = (d.span.line, d.span.col)
    for k in "1234567":
        line = next(i for i, text in enumerate(lines, 1) if f"nope{k}" in text)
        assert found[k] == (line, lines[line - 1].index(f"nope{k}") + 1), k


def test_syntax_error_caret_in_a_quoted_scalar(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text('model: bad\nvariables:\n  x: 0..3\ninitially: "x >= 1 )"\n')
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    (d,) = info.value.diagnostics
    assert "unexpected ')'" in d.message and (d.span.line, d.span.col) == (4, 20)


def test_an_alias_points_at_its_anchor_and_is_reported_once(tmp_path):
    path = tmp_path / "alias.yaml"
    path.write_text("model: alias\nvariables:\n  x: {type: 0..3, init: 0}\nvariants:\n  a: {}\n  b: {}\n"
                    "actions:\n  - name: inc\n    when:\n      a: &g >-\n        x < 3\n        and y\n"
                    "      b: *g\n")
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    (d,) = info.value.diagnostics
    assert d.message == "unknown name 'y'" and (d.span.line, d.span.col) == (12, 13)
