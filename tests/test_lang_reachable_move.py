"""A witness of a move with given choice values (`reachable: {action: play, with: {card: 2}}`,
docs/LANGUAGE.md "Property file"): the explicit and symbolic engines, walks and playouts find it,
the witness ends with that move; a Hypothesis differential holds the explicit and symbolic
engines to the same verdicts; wrong uses are positioned errors."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_lang_errors import where
from tiers import examples

from verifier.diagnostics import PropertyError
from verifier.engines import walk
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.lang import load_model, load_properties
from verifier.playout.play import PlayoutOptions, simulate
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.result import Verdict

MODEL = """\
model: moves
players: 2
enums:
  Card: [number, skip, reverse]
variables:
  hand: {type: 0..3, per: player, init: 2}
  skipped: {type: bool, init: false}
  total: {type: 0..4, init: 0, overflow: forbid}
end: "hand[0] + hand[1] <= 1"
phases:
  - name: Turn
    next_any: [{to: TURN_END}]
actions:
  - name: play
    phase: Turn
    choose: {n: 1..3, card: Card, loud: bool}
    when: "hand[active] >= n and (card != reverse or n == 1)"
    do:
      hand[active]: hand[active] - n
      skipped: "card == skip"
      total: total + n
"""

CLAIMS = """\
model: moves
claims:
  - {id: two-skips, says: x, reachable: {action: play, with: {n: 2, card: skip}}}
  - {id: loud-reverse, says: x, reachable: {action: play, with: {card: reverse, loud: true}}}
  - {id: reverse-of-two, says: x, reachable: {action: play, with: {n: 2, card: reverse}}}
  - {id: three-at-once, says: x, reachable: {action: play, with: {n: 3}}}
"""
# play(n=3) needs three cards in hand; a hand holds 2; reverse only with n = 1


def load(tmp_path: Path, model: str = MODEL, claims: str = CLAIMS):
    (tmp_path / "moves.yaml").write_text(model)
    (tmp_path / "claims.yaml").write_text(claims)
    loaded = load_model(str(tmp_path / "moves.yaml"))
    return loaded, load_properties(str(tmp_path / "claims.yaml"), loaded)


def test_the_values_are_read_in_the_choices_types(tmp_path):
    _, claims = load(tmp_path)
    assert [c.choice for c in claims] == [(("n", 2), ("card", 1)), (("card", 2), ("loud", 1)),
                                          (("n", 2), ("card", 2)), (("n", 3),)]


@pytest.mark.parametrize("engine", [ExplicitEngine(), SymbolicEngine()], ids=["explicit", "symbolic"])
def test_the_engines_find_the_move_and_end_the_witness_with_it(tmp_path, engine):
    model, claims = load(tmp_path)
    results = {r.property.id: r for r in run_claims(model.instantiate(), claims, engine, Budget())}
    assert {k: r.verdict for k, r in results.items()} == {
        "two-skips": Verdict.HOLDS, "loud-reverse": Verdict.HOLDS,
        "reverse-of-two": Verdict.VIOLATED, "three-at-once": Verdict.VIOLATED}
    for claim in claims[:2]:
        last = results[claim.id].trace.steps[-1]
        assert last.action == "play" and set(claim.choice) <= set(last.choice)


def test_a_move_that_forbid_blocks_is_not_made(tmp_path):
    """total (overflow: forbid) stops at 4: after two plays of 2 no play of 1 is possible."""
    claims = CLAIMS + "  - {id: past-forbid, says: x, reachable: {action: play, with: {n: 1}}}\n"
    model, loaded = load(tmp_path, MODEL.replace("init: 2}", "init: 3}").replace("0..4, init: 0", "0..4, init: 4"),
                         claims)
    for engine in (ExplicitEngine(), SymbolicEngine()):
        (r,) = run_claims(model.instantiate(), loaded[-1:], engine, Budget())
        assert r.verdict is Verdict.VIOLATED, engine


def test_walks_and_playouts_witness_the_move(tmp_path):
    model, claims = load(tmp_path)
    walked = {r.property.id: r for r in walk.check(model, claims, steps_at_most=2_000)}
    assert walked["two-skips"].verdict is Verdict.HOLDS and walked["reverse-of-two"].verdict is Verdict.UNKNOWN
    assert ("card", 1) in walked["two-skips"].trace.steps[-1].choice
    tallies = {c.id: c for c in simulate(model.instantiate(), claims, PlayoutOptions(games=60, seed=3)).claims}
    assert tallies["loud-reverse"].witnessed > 0 and tallies["reverse-of-two"].witnessed == 0   # play fires often


COUNTER = """\
model: counter
variables:
  x: {{type: 0..{top}, init: 0, overflow: {overflow}}}
actions:
  - name: add
    choose: {{n: 0..3}}
    when: "x + n <= {limit} and n != {banned}"
    do: {{x: x + n}}
  - name: reset
    when: "x == {top}"
    do: {{x: 0}}
"""


@st.composite
def counters(draw):
    top = draw(st.integers(2, 5))
    return COUNTER.format(top=top, limit=draw(st.integers(0, top + 2)), banned=draw(st.integers(0, 3)),
                          overflow=draw(st.sampled_from(["forbid", "clamp"]))), draw(st.integers(0, 3))


@settings(max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(counters())
def test_explicit_and_symbolic_agree_on_moves_with_values(tmp_path, drawn):
    text, n = drawn
    claims = f"model: counter\nclaims:\n  - {{id: m, says: x, reachable: {{action: add, with: {{n: {n}}}}}}}\n"
    model, loaded = load(tmp_path, text, claims)
    verdicts = []
    for engine in (ExplicitEngine(), SymbolicEngine()):
        (r,) = run_claims(model.instantiate(), loaded, engine, Budget())
        verdicts.append(r.verdict)
        if r.verdict is Verdict.HOLDS:
            assert r.trace.steps[-1].action == "add" and r.trace.steps[-1].choice == (("n", n),)
    assert verdicts[0] == verdicts[1] and verdicts[0] in (Verdict.HOLDS, Verdict.VIOLATED)


ERRORS = [
    ("with without action", "reachable: {state: 'true', with: {n: 1}}", "with: gives the choice values of a move",
     "{n: 1}"),
    ("an unknown choice", "reachable: {action: play, with: {m: 1}}", "action play has no choice 'm'", "m: 1"),
    ("a value outside the range", "reachable: {action: play, with: {n: 7}}", "'7' is no value of choice n", "7}"),
    ("an unknown enum value", "reachable: {action: play, with: {card: joker}}", "'joker' is no value of choice card",
     "joker"),
    ("a move without choices", "reachable: {action: pass turn, with: {n: 1}}", "action pass turn has no choice 'n'",
     "n: 1"),
]


@pytest.mark.parametrize("what,claim,message,needle", ERRORS, ids=[e[0] for e in ERRORS])
def test_wrong_values_are_positioned_errors(tmp_path, what, claim, message, needle):
    with pytest.raises(PropertyError) as info:
        load(tmp_path, claims=f"model: moves\nclaims:\n  - {{id: c, says: x, {claim}}}\n")
    (d,) = [d for d in info.value.diagnostics if message in d.message]
    assert str(d.span) == where(tmp_path / "claims.yaml", needle)


def test_a_player_choice_given_a_number_breaks_the_symmetry(tmp_path):
    model = load_model(str(Path(__file__).parent / "fixtures" / "lang" / "priority_sym.yaml"))
    path = tmp_path / "claims.yaml"
    path.write_text("model: priority_sym\nclaims:\n  - {id: c, says: x, reachable: {action: steal, with: {p: 1}}}\n")
    with pytest.raises(PropertyError) as info:
        load_properties(str(path), model)
    assert "claim c gives the player choice p a number" in info.value.diagnostics[0].message
