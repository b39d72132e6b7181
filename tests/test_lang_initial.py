"""Initial states: counted after `initially:` filters them, among a bounded number of candidates."""
from __future__ import annotations

import itertools
import json
import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from verifier.cli import main
from verifier.diagnostics import ModelError
from verifier.ir import evaluate
from verifier.ir.evaluate import iter_initial_states, slot_values
from verifier.lang import checks, limits, load_model, require_initial_state
from verifier.lang.limits import MAX_INITIAL_CANDIDATES
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
# Three hands from eight kinds of card, a deck of up to five of each: 859,963,392 assignments.
BIG_DEAL = """\
model: big_deal
players: 3
enums:
  Card: [guard, priest, baron, handmaid, prince, king, countess, princess]
variables:
  hand: {type: Card, per: player}
  deck: {type: 0..5, per: Card}
initially: "forall c in Card: deck[c] + count(p in player: hand[p] == c) == copies(c)"
define:
  copies(c): "if c == guard then 5 else if c == king or c == countess or c == princess then 1 else 2"
actions:
  - name: discard
    choose: {c: Card}
    when: "hand[0] == c"
    do:
      hand[0]: guard
"""
COPIES = (5, 2, 2, 2, 2, 1, 1, 1)
DEALT = sum(1 for hands in itertools.product(range(8), repeat=3)     # each deal of hands fixes the deck
            if all(hands.count(c) <= n for c, n in enumerate(COPIES)))
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


def candidate_product(lay) -> int:
    return math.prod(len(values) for values in slot_values(lay))


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
    "forall i in 0..3: a[(i + 1) % 4] >= 2",              # split: each instance's index folds to an element
    "forall i in 0..3: a[(i + b) % 4] >= 2",              # an index the state picks: not split
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


CARDS = """\
model: cards
enums:
  Colour: [red, blue]
  Place: [deck, hand0, hand1, pile]
variables:
  loc: {type: Place, per: [Colour, 1..3]}
define:
  held(h): "sum(c in Colour: count(r in 1..3: loc[c][r] == h))"
initially: "(forall c in Colour: forall r in 1..3: loc[c][r] == deck or loc[c][r] == hand0 or loc[c][r] == hand1)
  and held(hand0) == 2 and held(hand1) == 2"
actions: []
"""


def test_a_card_by_card_deal_is_tested_card_by_card(tmp_path):
    """Where each card of a 2-D array of places may lie (Lost Cities' deal): the `forall` over both
    indices is tested element by element as each is dealt (its index, a 2-D element's flat position,
    folds to one element in each instance), so only the deals that keep each card in 3 of the 4
    places go on: the same states as filtering every candidate, 1,456 candidates tested instead of
    4 ** 6 = 4,096. Before, the `forall` was tested once whole, on every whole deal (8 s of CPU to
    deal the new user's Lost Cities, 46,656 deals)."""
    path = tmp_path / "cards.yaml"
    path.write_text(CARDS)
    lay = layout(load_model(str(path)).instantiate())
    deal = evaluate.Deal.of(lay)
    assert [len(c) for c in deal.checks[-6:]] == [1, 1, 1, 1, 1, 3]
    reference = naive(lay)                         # every whole deal filtered: computed once
    assert initial_states(lay) == reference and len(reference) == math.comb(6, 2) * math.comb(4, 2)
    tried = 4 * (1 + 3 + 9 + 27 + 81 + 243)       # the 4 places of each card, after the 3 ** k deals kept before
    with pytest.raises(evaluate.TooManyCandidates):
        list(iter_initial_states(lay, tried - 1))
    assert list(iter_initial_states(lay, tried)) == reference


def test_a_model_error_in_initially_is_raised_as_filtering_raises_it(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(INTS.format(initially="b == 0 or forall i in 0..3: a[i + b] >= 0"))
    lay = layout(load_model(str(path)).instantiate())
    with pytest.raises(EvalError, match="out of range"):
        naive(lay)
    with pytest.raises(EvalError, match="out of range"):
        initial_states(lay)


def test_a_deal_past_the_product_of_its_ranges_loads_when_initially_prunes_it(tmp_path):
    """The candidates counted are those tested, not the product of the ranges: three hands from eight
    kinds of card with a deck of up to five of each are 8^3 * 6^8 = 859,963,392 assignments, but each
    deck count is fixed by the hands once dealt, so a few tens of thousands are tested."""
    path = tmp_path / "m.yaml"
    path.write_text(BIG_DEAL)
    lay = layout(load_model(str(path)).instantiate())
    assert candidate_product(lay) > 800 * MAX_INITIAL_CANDIDATES
    states = initial_states(lay)
    assert len(states) == DEALT and states == sorted(states)
    assert list(iter_initial_states(lay, 30_000)) == states            # within 30,000 candidates tested


def test_more_candidates_than_the_cap_is_a_positioned_error_at_once(tmp_path):
    """Candidates dealt before any part of `initially` can be tested are refused before any is tested,
    at the variable whose range passes the cap: here the deck, declared before the hands."""
    path = tmp_path / "m.yaml"
    path.write_text(DEAL.replace("  hand: {type: Card, per: player}\n  deck: {type: 0..4, per: Card}\n",
                                 "  deck: {type: 0..99, per: Card}\n  hand: {type: Card, per: player}\n"))
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    [error] = info.value.diagnostics
    assert "more than 1,000,000 candidate initial states before initially: filters them" in error.message
    assert error.span is not None and error.span.line == 6                  # deck: the variable that passes it
    assert "this limit counts the candidates tried" in (error.hint or "")


def test_a_deal_initially_prunes_too_little_is_a_positioned_error_at_initially(tmp_path, monkeypatch):
    """Candidates tested past the cap while dealing: at `initially:`, naming the slot being dealt;
    at other parameter values the engines' `initial_states` refuses the same way (a model error)."""
    monkeypatch.setattr(checks, "MAX_INITIAL_CANDIDATES", 5_000)
    monkeypatch.setattr(limits, "MAX_INITIAL_CANDIDATES", 5_000)
    path = tmp_path / "m.yaml"
    path.write_text(BIG_DEAL)
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    [error] = info.value.diagnostics
    assert "finding the initial states tests more than 5,000 candidates (still dealing deck[" in error.message
    assert error.span is not None and error.span.line == 8                  # initially:
    assert "declare first the variables it constrains most" in (error.hint or "")
    monkeypatch.setattr(checks, "MAX_INITIAL_CANDIDATES", 50_000)
    lay = layout(load_model(str(path)).instantiate())
    monkeypatch.setattr(limits, "MAX_INITIAL_CANDIDATES", 4_999)        # a limit not seen before: found again
    with pytest.raises(EvalError, match="more than 4,999 candidate initial states tested"):
        initial_states(lay)


def test_a_model_whose_variables_and_initially_were_loaded_before_does_not_deal_them_again(tmp_path, monkeypatch):
    """The loader's check and the engines share one finding of the initial states, by the slots, their
    starting values and `initially`: a mutant that changes a rule (`mutate` loads each) finds them at once."""
    path = tmp_path / "m.yaml"
    path.write_text(BIG_DEAL)
    lay = layout(load_model(str(path)).instantiate())
    calls, find = [], evaluate._find
    monkeypatch.setattr(evaluate, "_find", lambda *a: calls.append(a) or find(*a))
    path.write_text(BIG_DEAL.replace('when: "hand[0] == c"', 'when: "hand[1] == c"'))     # a rule changed
    assert len(initial_states(layout(load_model(str(path)).instantiate()))) == DEALT and calls == []
    assert len(initial_states(lay)) == DEALT and calls == []
    path.write_text(BIG_DEAL.replace("players: 3", "players: 2"))         # other variables: dealt again
    load_model(str(path))
    assert len(calls) == 1


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


def test_no_initial_state_at_the_values_checked_is_a_positioned_error(tmp_path):
    """`init:` and `initially:` that admit no state at some parameter values (a hand larger than the
    cards dealt): an error at `initially:` naming the values, never claims that hold of no game."""
    path = tmp_path / "m.yaml"
    path.write_text(DEAL.replace("players: 3", "players: 3\nparams:\n  KEPT: {default: 0, min: 0, max: 9}").replace(
        "== copies(c)", "== copies(c) and deck[guard] >= KEPT"))
    assert len(initial_states(layout(load_model(str(path)).instantiate()))) == 43
    kept_none = load_model(str(path), {"KEPT": 4})          # the loader accepts it (a mutant may be one)
    assert initial_states(layout(kept_none.instantiate())) == []
    with pytest.raises(ModelError) as info:
        require_initial_state(kept_none)
    [error] = info.value.diagnostics
    assert error.message == "no initial state: init: and initially: together admit none at KEPT=4"
    assert error.span is not None and error.span.line == 11                 # initially:
    assert "check the parameter values" in (error.hint or "")
    require_initial_state(load_model(str(path), {"KEPT": 3}))
    out = ["-o", str(tmp_path / "out")]
    for command in ("check", "lint", "report"):
        assert main([command, str(path), "-D", "KEPT=4", "-q", *(out if command == "report" else [])]) == 2
    assert not (tmp_path / "out").exists()


def test_null_in_an_init_list_is_any_value(tmp_path):
    """`init: [1, null]` fixes element 0 and leaves element 1 any value of its range (as an array
    whose first turn's start sets one player's element has it: what the Mermaid export declares)."""
    path = tmp_path / "m.yaml"
    path.write_text("model: m\nplayers: 2\nvariables:\n  mana: {type: 0..2, per: player, init: [1, null]}\n"
                    "  grid: {type: bool, per: [player, 0..1], init: [[true, null], [false, false]]}\n"
                    "  spare: {type: 0..1, init: null}\n"
                    "actions:\n  - name: wait\n", encoding="utf-8")
    model = load_model(str(path))
    assert [v.init.count(None) for v in model.variables] == [1, 1, 1]
    states = initial_states(layout(model.instantiate()))
    assert len(states) == 3 * 2 * 2
    assert {s[:2] for s in states} == {(1, k) for k in range(3)}


# ---- the deal over all partial deals at once (`batch`) against the reference, deal by deal

BATCH_ATOMS = st.one_of(
    ATOMS,
    st.builds("a[{}] / (b + {}) {} {}".format, st.integers(0, 3), st.integers(-1, 1), OPS, st.integers(0, 3)),
    st.builds("a[{}] % (a[{}] + {}) {} {}".format, st.integers(0, 3), st.integers(0, 3), st.integers(-1, 1), OPS,
              st.integers(0, 3)),
    st.builds("(if a[{}] > b then a[{}] else -b) {} {}".format, st.integers(0, 3), st.integers(0, 3), OPS,
              st.integers(-2, 3)),
    st.builds("(a[{}] > {} -> a[b + {}] == 1)".format, st.integers(0, 3), st.integers(0, 3), st.integers(0, 2)),
    st.builds("sum(i in 0..b: a[i] * {}) {} {}".format, st.integers(-2, 2), OPS, st.integers(0, 6)),
    st.builds("exists i in b..{}: a[i] == {}".format, st.integers(0, 4), st.integers(0, 3)),
    st.builds("min(a[{}], b, abs(a[{}] - {})) {} {}".format, st.integers(0, 3), st.integers(0, 3),
              st.integers(0, 4), OPS, st.integers(0, 3)),
    st.builds("max(-a[{}], b) {} {}".format, st.integers(0, 3), OPS, st.integers(-3, 2)),
    st.builds("(b - a[{}]) % {} {} {}".format, st.integers(0, 3), st.integers(1, 3), OPS, st.integers(0, 2)),
    st.builds("(b - a[{}]) / {} {} {}".format, st.integers(0, 3), st.integers(1, 3), OPS, st.integers(-3, 1)),
    st.builds("(b + {0} <= 3 and a[b + {0}] {1} {2})".format, st.integers(1, 3), OPS, st.integers(0, 3)),  # guarded
    st.builds("(b + {0} > 3 or a[b + {0}] {1} {2})".format, st.integers(1, 3), OPS, st.integers(0, 3)),    # guarded
)
BATCH_INITIALLY = st.recursive(BATCH_ATOMS, lambda inner: st.one_of(
    st.builds("({}) and ({})".format, inner, inner), st.builds("({}) or ({})".format, inner, inner),
    st.builds("not ({})".format, inner)), max_leaves=5)


def reference_outcome(lay, cap: int):
    """What the reference deal finds within `cap` candidates: its states, or the error it raises."""
    try:
        return list(iter_initial_states(lay, cap))
    except EvalError as error:
        return type(error)


@given(initially=BATCH_INITIALLY, cap=st.integers(1, 2_000))
@example(initially="(b - a[1]) % 3 == 2 and (b - a[2]) / 2 < 0", cap=2_000)   # floor division of a negative
@example(initially="(b + 2 <= 3 and a[b + 2] > 1) or a[b] == 0", cap=2_000)    # an index only where it is inside
@example(initially="exists i in b..3: a[i] == 3", cap=2_000)                    # bounds the state picks
@example(initially="a[b + 2] > 1", cap=2_000)                                   # a model error: the reference's
@example(initially="a[0] > 0", cap=100)                                         # past the cap: the reference's
def test_the_deal_at_once_finds_what_the_reference_finds(tmp_path_factory, initially, cap):
    """Dealt over all partial deals at once, the initial states are the reference's, in its order; where a
    deal might meet a model error, or more candidates than the cap would be tested, it leaves the question
    to the reference (None), and only there: the reference then raises."""
    path = tmp_path_factory.mktemp("initially") / "m.yaml"
    path.write_text(INTS.format(initially=initially))
    lay = layout(load_model(str(path)).instantiate())
    at_once = evaluate.dealt_at_once(lay, evaluate.Deal.of(lay), cap)
    expected = reference_outcome(lay, cap)
    if at_once is None:
        assert expected in (EvalError, evaluate.TooManyCandidates)
    else:
        assert list(at_once) == expected


NATURAL_DEAL = CARDS.replace("initially: \"(forall c in Colour: forall r in 1..3: loc[c][r] == deck or loc[c][r] == "
                             "hand0 or loc[c][r] == hand1)\n  and ", "initially: \"in_deck == 2 and ").replace(
    "define:\n", "define:\n  in_deck: \"sum(c in Colour: count(r in 1..3: loc[c][r] == deck))\"\n")


def test_a_deal_written_by_its_counts_is_dealt_at_once(tmp_path, monkeypatch):
    """Lost Cities' deal written the natural way, by how many cards lie where (counts over every card, so
    no part of it can be tested before the last card is dealt): every whole deal is tested at once, the
    same states as the reference's (8 s of CPU a process for the new user's six cards in six places,
    46,656 deals, before; 0.2 s after)."""
    path = tmp_path / "cards.yaml"
    path.write_text(NATURAL_DEAL)
    lay = layout(load_model(str(path)).instantiate())
    assert [len(c) for c in evaluate.Deal.of(lay).checks][-1] == 3
    reference = naive(lay)
    assert len(reference) == math.comb(6, 2) * math.comb(4, 2) * math.comb(2, 2)
    monkeypatch.setattr(evaluate, "iter_initial_states", None)          # the reference is not asked
    found = evaluate.find_initial_states(lay, MAX_INITIAL_CANDIDATES, 10_000)
    assert list(found.states) == reference and not found.passed
