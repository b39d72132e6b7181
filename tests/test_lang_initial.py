"""Initial states: counted after `initially:` filters them, among a bounded number of candidates."""
from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.cli import main
from verifier.diagnostics import ModelError
from verifier.ir.evaluate import slot_values
from verifier.lang import load_model
from verifier.semantics import EvalError, holds, initial_states, layout

# Three hands dealt from a deck of five kinds of card (`none` among them, no copies): 5^3 hands
# times 5^5 deck counts are 390,625 candidates, of which `initially` keeps the 43 deals.
DEAL = """\
model: deal
players: 3
enums:
  Card: [none, guard, baron, handmaid, princess]
variables:
  hand: {type: Card, per: player}
  deck: {type: 0..4, per: Card}
  turn_over: {type: bool, init: false}
initially: "forall c in Card: deck[c] + count(p in player: hand[p] == c) == copies(c)"
define:
  copies(c): "if c == none then 0 else if c == guard then 3 else if c == baron then 2 else 1"
end: "turn_over"
actions:
  - name: discard
    choose: {c: Card}
    when: "hand[0] == c and c != none"
    do:
      hand[0]: none
      turn_over: true
"""
INTS = """\
model: ints
variables:
  a: {{type: 0..3, per: 0..3}}
  b: {{type: 0..2}}
initially: "{initially}"
actions:
  - name: tick
    when: "b < 2"
    do:
      b: b + 1
"""
PROPERTIES = """\
model: deal
claims:
  - id: no-card-is-made
    says: "No card is made: each kind has at most its copies"
    invariant: "forall c in Card: c == none or deck[c] + count(p in player: hand[p] == c) <= copies(c)"
  - id: a-deal-can-hold-the-princess
    says: "The first player can be dealt the Princess"
    reachable: "hand[0] == princess"
"""


def naive(lay):
    """The reference: every candidate, filtered by the whole of `initially`."""
    return [s for s in itertools.product(*slot_values(lay)) if holds(lay, lay.model.initially, s)]


def test_a_deal_from_a_deck_loads_and_checks(tmp_path, capsys):
    model, props = tmp_path / "deal.yaml", tmp_path / "deal-props.yaml"
    model.write_text(DEAL)
    props.write_text(PROPERTIES)
    lay = layout(load_model(str(model)).instantiate())
    assert len(initial_states(lay)) == 43
    assert main(["check", str(model), "-p", str(props), "-q", "--format", "json", "-o", "-"]) == 0
    verdicts = {r["id"]: r["verdict"] for r in json.loads(capsys.readouterr().out)["results"]}
    assert verdicts == {"no-card-is-made": "HOLDS", "a-deal-can-hold-the-princess": "HOLDS"}


@pytest.mark.parametrize("initially", [
    "forall i in 0..3: a[i] + b <= 3",                   # split per element
    "b != 0 and a[b] == 1 and a[0] == a[b + 1]",          # and: each part once what it reads is dealt
    "exists i in 0..3: a[i] == 3",                        # not split
    "forall i in 0..3: a[(i + 1) % 4] >= 2",              # an index that may fail: not split
])
def test_the_lazy_enumeration_finds_the_states_filtering_finds(tmp_path, initially):
    path = tmp_path / "m.yaml"
    path.write_text(INTS.format(initially=initially))
    lay = layout(load_model(str(path)).instantiate())
    assert initial_states(lay) == naive(lay)


OPS = st.sampled_from(["==", "!=", "<=", ">"])
ATOMS = st.one_of(
    st.builds("a[{}] {} {}".format, st.integers(0, 3), OPS, st.integers(0, 3)),
    st.builds("a[b] {} {}".format, OPS, st.integers(0, 3)),
    st.builds("b {} {}".format, OPS, st.integers(0, 2)),
    st.builds("forall i in 0..3: a[i] + b {} {}".format, OPS, st.integers(0, 5)),
    st.builds("forall i in 0..3: a[(i + b) % 4] {} {}".format, OPS, st.integers(0, 3)),
    st.builds("forall i in 0..3: a[i + b] {} {}".format, OPS, st.integers(0, 3)),      # may fail
    st.builds("count(i in 0..3: a[i] == {}) {} {}".format, st.integers(0, 3), OPS, st.integers(0, 4)),
)
INITIALLY = st.recursive(ATOMS, lambda inner: st.one_of(
    st.builds("({}) and ({})".format, inner, inner), st.builds("({}) or ({})".format, inner, inner),
    st.builds("not ({})".format, inner)), max_leaves=4)


@given(initially=INITIALLY)
def test_the_lazy_enumeration_agrees_with_filtering_every_candidate(tmp_path_factory, initially):
    path = tmp_path_factory.mktemp("initially") / "m.yaml"
    path.write_text(INTS.format(initially=initially))
    lay = layout(load_model(str(path)).instantiate())
    try:
        expected: list | type = naive(lay)
    except EvalError:
        expected = EvalError
    try:
        found: list | type = initial_states(lay)
    except EvalError:
        found = EvalError
    assert found == expected


def test_a_model_error_in_initially_is_raised_as_filtering_raises_it(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(INTS.format(initially="b == 0 or forall i in 0..3: a[i + b] >= 0"))
    lay = layout(load_model(str(path)).instantiate())
    with pytest.raises(EvalError, match="out of range"):
        naive(lay)
    with pytest.raises(EvalError, match="out of range"):
        initial_states(lay)


def test_more_candidates_than_the_cap_is_a_positioned_error_at_once(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(DEAL.replace("type: 0..4, per: Card", "type: 0..99, per: Card"))
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    [error] = info.value.diagnostics
    assert "more than 1,000,000 candidate initial states before initially: filters them" in error.message
    assert error.span is not None and error.span.line == 7                  # deck: the variable that passes it
    assert "this limit counts the candidates tried" in (error.hint or "")


def test_more_initial_states_kept_than_the_limit_is_a_positioned_error(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(DEAL.replace("type: 0..4, per: Card", "type: 0..3, per: Card").replace(
        'initially: "forall c in Card: deck[c] + count(p in player: hand[p] == c) == copies(c)"',
        'initially: "hand[0] != princess"'))
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    [error] = info.value.diagnostics
    assert "initially: keeps more than 100,000 initial states" in error.message
    assert error.span is not None and error.span.line == 9                  # initially:
    assert "the candidates tried, up to 1,000,000, have their own" in (error.hint or "")
