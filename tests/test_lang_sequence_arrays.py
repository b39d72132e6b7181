"""Arrays of sequences (`type: "seq[1..3, 0..2]", per: Colour`: one sequence per colour, `len(s[c])`,
`top(s[c])`, `s[c][i]`, `s[c]: push(v)`, `s[c]: pop`): a 2-D array and a length array to every engine.
A push onto a full sequence, a pop or top of an empty one and an element past its length are model
errors (UNKNOWN with a replayed trace), never a write into the next sequence's row; the explicit
python store and the compiled store search the same states in the same order (Hypothesis)."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_lang_errors import the_error, where
from tiers import examples

from verifier.cli import main
from verifier.engines.compiled.search import explore_compiled
from verifier.engines.explicit import ExplicitEngine, explore
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.ir.expr import pretty
from verifier.ir.props import DeadlockFree, Invariant, Reachable
from verifier.lang import load_model
from verifier.lang.expressions import parse_expression
from verifier.lang.properties import model_scope
from verifier.lang.sequences import as_written
from verifier.mutation.analysis import mutate
from verifier.report.trace_view import readable
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.runner import RunOptions
from verifier.semantics import initial_states, layout
from verifier.trace import replay

MODEL = Path(__file__).parent / "fixtures" / "lang" / "piles.yaml"
TEXT = MODEL.read_text()


def load(tmp_path, old: str = "", new: str = ""):
    assert old in TEXT
    path = tmp_path / "piles.yaml"
    path.write_text(TEXT.replace(old, new, 1))
    return path


def claims(model):
    scope = model_scope(model)
    return [Invariant(id="piles-ascend", statement="a pile ascends, but for a card turned up",
                      expr=parse_expression("forall c in Colour: len(piles[c]) < 2 or piles[c][0] < piles[c][1] "
                                            "or piles[c][1] == 3", scope, "bool")),
            Reachable(id="both-full", statement="a full red pile with a 3 on top, and a full reserve",
                      expr=parse_expression("len(piles[red]) == 2 and top(piles[red]) == 3 and "
                                            "len(reserve[0]) == 2 and reserve[0][1] == red", scope, "bool")),
            Invariant(id="blue-never-taken-at-3", statement="a pile whose bottom is 3 is never emptied by take",
                      expr=parse_expression("len(piles[blue]) <= 2", scope, "bool")),
            DeadlockFree(id="df", statement="no deadlock")]


def test_an_array_of_sequences_is_a_2d_array_and_a_length_array():
    model = load_model(str(MODEL)).instantiate()
    names = [s.name for s in layout(model).slots]
    assert names[:6] == ["piles[red][0]", "piles[red][1]", "piles[blue][0]", "piles[blue][1]",
                         "piles_len[red]", "piles_len[blue]"]
    assert model.var("piles").seq_length == "piles_len" and model.var("piles").dims
    assert model.var("reserve").rows_by_player and model.var("reserve_len").by_player
    start = dict(zip(names, initial_states(layout(model))[0]))
    assert (start["reserve[1][0]"], start["reserve_len[1]"], start["piles_len[blue]"]) == (0, 1, 0)
    lay = model.action("lay")
    assert pretty(as_written(model, lay.guard), model.enum_value_name) == \
        "(len(piles[c]) < 2) and ((len(piles[c]) == 0) or (top(piles[c]) < r))"
    assert pretty(as_written(model, model.action("take").guard), model.enum_value_name) == \
        "(len(piles[c]) > 0) and (piles[c][0] != 3)"


def test_every_engine_agrees():
    model = load_model(str(MODEL)).instantiate()
    props = claims(model)
    want = [Verdict.HOLDS] * 4
    for store in ("python", "compact", "compiled"):
        results = ExplicitEngine(store=store).check(model, props, Budget())
        assert [r.verdict for r in results] == want, store
        assert results[1].trace is not None
        replay(layout(model), results[1].trace)
    symbolic = SymbolicEngine().check(model, props, Budget())
    assert symbolic[1].verdict is Verdict.HOLDS
    assert {r.verdict for r in (symbolic[0], symbolic[2], symbolic[3])} <= {Verdict.PROVED, Verdict.HOLDS}
    assert len(explore(model).states) == 882


ERRORS = [
    ("push onto a full pile", "len(piles[c]) < 2 and (len", "(len"),
    ("pop of an empty pile", 'when: "len(piles[c]) > 0 and piles[c][0] != 3"', "when: true"),
    ("an element past the length", 'when: "len(piles[c]) > 1"', 'when: "len(piles[c]) > 0"'),
]


@pytest.mark.parametrize("what,old,new", ERRORS, ids=[e[0] for e in ERRORS])
def test_misuse_is_a_model_error_never_a_write_into_the_next_pile(tmp_path, what, old, new):
    """Position 2 of red's pile would be blue's first card in the flat array: it is index 4, past the
    whole array, in every engine."""
    model = load_model(str(load(tmp_path, old, new))).instantiate()
    for engine in (ExplicitEngine(), ExplicitEngine(store="compiled"), SymbolicEngine()):
        (result,) = engine.check(model, [DeadlockFree(id="df", statement="no deadlock")], Budget())
        assert result.verdict is Verdict.UNKNOWN and "index 4 out of range for piles" in result.reason, \
            (engine, result.reason)
        assert "a push onto a full one, a pop or top of an empty one" in result.reason
        assert result.trace is not None
        replay(layout(model), result.trace)


CASES = [
    ("a bare array of sequences", "len(piles[c]) < 2 and", "len(piles) < 2 and",
     "piles is an array of sequences, say which", "len(piles)", "len(piles[...])"),
    ("one sequence used bare", "piles[c][0] != 3", "piles[c] != 3", "'piles' is an array of sequences",
     "piles[c] != 3", "top(piles[d])"),
    ("the array named bare", "piles[c][0] != 3", "piles != 3", "'piles' is an array of sequences",
     "piles != 3", "len(piles[d])"),
    ("a push without a row", "      piles[c]: push(r)\n", "      piles: push(r)\n",
     "piles is an array of sequences: say which one changes", "piles: push(r)", "piles[d]: push(v)"),
    ("two sequences of one array in a block", "      piles[c]: pop\n", "      piles[c]: pop\n      piles[red]: pop\n",
     "changes a sequence of piles twice", "piles[red]: pop", "per array of sequences"),
    ("a row of the wrong type", "      piles[c]: push(r)\n", "      piles[r]: push(r)\n",
     "expected a value of enum Colour, found an integer", "r]: push(r)", ""),
    ("neither push nor pop", "      piles[c]: push(r)\n", "      piles[c]: r\n",
     "sequence piles[d] changes by push(v) or pop", "r\n      turn", "piles[d]: pop"),
    ("two domains", 'per: Colour, doc', "per: [Colour, player], doc", "an array of sequences has one index domain",
     "[Colour, player]", "per: Colour"),
    ("too many elements", 'per: Colour, doc', "per: 1..9999, doc", "piles is 9,999 sequences of up to 2 elements: "
     "19,998 elements; at most 10,000 are allowed", "1..9999, doc", "count cards instead"),
    ("an empty index", 'per: Colour, doc', "per: 3..1, doc", "the index (per:) of piles is empty", "3..1, doc",
     "lo <= hi"),
    ("the length written", "      turn: 1 - turn\n  - name: take", "      piles_len[c]: 0\n  - name: take",
     "piles_len is the length of sequence piles", "piles_len[c]: 0", "piles: push(v)"),
]


@pytest.mark.parametrize("what,old,new,message,needle,hint", CASES, ids=[c[0] for c in CASES])
def test_error(tmp_path, what, old, new, message, needle, hint):
    path = load(tmp_path, old, new)
    error = the_error(path, message)
    assert str(error.span).startswith(where(path, needle)), (str(error.span), where(path, needle))
    assert hint in (error.hint or ""), error.hint


# ---- the explicit python store against the compiled store, on drawn models with arrays of sequences

DRAWN = """\
model: drawn
players: 2
enums:
  Colour: [red, green, blue]
variables:
  s: {{type: "seq[{element}, 0..{capacity}]", per: {domain}, init: {init}}}
  k: {{type: 0..2, init: 0}}
actions:
  - name: put
    choose: {{d: {domain}, v: {element}}}
    when: "{put_when}"
    do:
      s[d]: push(v)
      k: "(k + 1) % 3"
  - name: take
    choose: {{d: {domain}}}
    when: "{take_when}"
    do:
      s[d]: pop
  - name: rewrite
    choose: {{d: {domain}}}
    when: "len(s[d]) > {at} and k == {k}"
    do:
      s[d][{at}]: {value}
"""


@st.composite
def drawn_models(draw):
    capacity = draw(st.integers(1, 3))
    element = draw(st.sampled_from(["0..2", "bool", "Colour"]))
    domain = draw(st.sampled_from(["Colour", "player", "1..2"]))
    values = {"0..2": ["0", "1", "2"], "bool": ["false", "true"], "Colour": ["red", "green", "blue"]}[element]
    init = draw(st.lists(st.sampled_from(values), max_size=capacity))
    guard_put = draw(st.sampled_from([f"len(s[d]) < {capacity}", "true",                  # unguarded: may overflow
                                      f"len(s[d]) < {capacity} and (len(s[d]) == 0 or top(s[d]) != v)"]))
    guard_take = draw(st.sampled_from(["len(s[d]) > 0", "k == 2",                         # k == 2: may pop empty
                                       f"len(s[d]) > 0 and top(s[d]) == {values[0]}"]))
    at = draw(st.integers(0, capacity - 1))
    return DRAWN.format(element=element, capacity=capacity, domain=domain, init="[" + ", ".join(init) + "]",
                        put_when=guard_put, take_when=guard_take, at=at, k=draw(st.integers(0, 2)),
                        value=draw(st.sampled_from(values)))


@settings(max_examples=examples(4), deadline=None)
@given(drawn_models())
def test_the_compiled_store_searches_what_the_python_store_searches(tmp_path_factory, text):
    """The same states in the same order, parents, transitions and model error (a push onto a full
    sequence, a pop of an empty one), with the loader's lowering of the array of sequences."""
    path = tmp_path_factory.mktemp("drawn") / "m.yaml"
    path.write_text(text)
    model = load_model(str(path)).instantiate()
    ref = explore(model)
    mine = explore_compiled(model)
    assert mine.packed() == list(ref.packed)
    assert mine.parent.tolist() == list(ref.parent)
    assert (mine.complete, mine.error, mine.transitions) == (ref.complete, ref.error, ref.transitions)


def test_mutants_of_a_model_with_arrays_of_sequences_load_and_the_claims_kill_them(tmp_path):
    """`mutate` on the fixture: a mutant is invalid only where its rules misuse a pile (a weakened guard
    lets a push onto a full pile or a pop of an empty one: the model error, named) or set a value out
    of range, never through the lowering; the claims notice the ascending rule and the pushes changed."""
    props = tmp_path / "props.yaml"
    props.write_text('model: piles\nclaims:\n'
                     '  - {id: ascend, says: "piles ascend", invariant: "forall c in Colour: len(piles[c]) < 2 or '
                     'piles[c][0] < piles[c][1] or piles[c][1] == 3"}\n'
                     '  - {id: full, says: "a full red pile", reachable: "len(piles[red]) == 2 and top(piles[red]) == 3 '
                     'and len(reserve[0]) == 2"}\n')
    report = mutate(str(MODEL), RunOptions(properties=str(props)), jobs=1)
    by = {o.mutant.description: o.status for o in report.outcomes}
    invalid = [o.reason for o in report.outcomes if o.status == "invalid"]
    assert report.count("unknown") == 0 and invalid
    assert all("index 4 out of range for piles (sequences of at most 2 each" in r or "outside its range 1..3" in r
               for r in invalid), invalid
    assert by["lay: guard 'piles[c][piles_len[c] - 1] < r' -> 'piles[c][piles_len[c] - 1] <= r'"] == "killed"
    assert by["lay: effect 'piles[c][piles_len[c]] := r' left out"] == "killed"
    assert report.count("killed") >= 15


def test_diff_names_a_changed_capacity_and_compares_the_piles_by_element(tmp_path, capsys):
    """`diff` of a version whose piles hold three cards: the note says so in the words of the model file,
    and the states are compared element by element (`piles[red][0]`, not the flat positions, which
    shift between the two versions)."""
    new = load(tmp_path, 'piles: {type: "seq[1..3, 0..2]"', 'piles: {type: "seq[1..3, 0..3]"')
    new.write_text(new.read_text().replace("len(piles[c]) < 2 and", "len(piles[c]) < 3 and"))
    assert main(["diff", str(MODEL), str(new)]) == 1          # the behaviours differ
    out = capsys.readouterr().out
    assert "variable piles changed type: 1..3 (sequences of at most 2, per Colour) -> 1..3 " \
           "(sequences of at most 3, per Colour)" in out
    assert "NEW allows 576 states OLD does not" in out and "piles_len[red]=3" in out


def test_a_trace_shows_each_sequence_of_the_array_as_one_list():
    """The page's trace reads `piles[red]: [1] -> [1,2]`, each pile cut at its length, its length element
    left out (as a lone sequence's is)."""
    model = load_model(str(MODEL)).instantiate()
    (result,) = ExplicitEngine().check(model, [claims(model)[1]], Budget())
    shown = readable(result.trace)
    assert dict(shown.initial) == {"piles[red]": "[]", "piles[blue]": "[]", "reserve[0]": "[red]",
                                   "reserve[1]": "[red]", "turn": 0}
    assert [dict(s.changes).get("piles[red]") for s in shown.steps] == \
        [("[]", "[1]"), ("[1]", "[1,2]"), ("[1,2]", "[1]"), ("[1]", "[1,3]")]
