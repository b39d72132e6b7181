"""Step claims that read a move's choices (docs/LANGUAGE.md, "Property file"): a choice every action in
`actions:` has is read by its name (`t != active -> not prev(protected[t])`), and `with:` beside
`actions:` judges only the moves with those values, as `reachable: {action: ..., with: ...}` names
them; the explicit and symbolic engines and the random walks find what breaks one, and agree with
each other and with the claim judged move by move on the reference semantics (a Hypothesis differential);
wrong uses are positioned errors."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_lang_errors import where
from tiers import examples

from verifier.diagnostics import PropertyError
from verifier.engines import walk
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.ir.props import PREV_MARK, StepInvariant
from verifier.lang import load_model, load_properties
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import holds, initial_states, layout, successors

EXAMPLES = Path(__file__).parents[1] / "examples"
FIXTURES = Path(__file__).parent / "fixtures" / "lang"
LOVE_LETTER = EXAMPLES / "models" / "love_letter.yaml"
CLAIMS = """\
model: love_letter
claims:
  - id: protected-not-targeted
    says: x
    step: "t != active -> not prev(protected[t])"
    actions: [guard, baron]
  - id: guard-spares-who-lacks-the-princess
    says: x
    step: "prev(hand[t]) != princess -> out[t] == prev(out[t])"
    actions: [guard]
    with: {g: princess}
  - id: guard-spares-who-lacks-any-card
    says: x
    step: "prev(hand[t]) != princess -> out[t] == prev(out[t])"
    actions: [guard]
"""
EXPECTED = {"protected-not-targeted": Verdict.HOLDS, "guard-spares-who-lacks-the-princess": Verdict.HOLDS,
            "guard-spares-who-lacks-any-card": Verdict.VIOLATED}     # a Guard naming the Baron


def love_letter(tmp_path: Path, model_text: str | None = None, claims: str = CLAIMS):
    model_path = tmp_path / "love_letter.yaml"
    model_path.write_text(model_text if model_text is not None else LOVE_LETTER.read_text())
    (tmp_path / "claims.yaml").write_text(claims)
    model = load_model(str(model_path))
    return model, load_properties(str(tmp_path / "claims.yaml"), model)


def test_the_claim_reads_the_choice_by_name_and_with_narrows_the_moves(tmp_path):
    _model, claims = love_letter(tmp_path)
    first, second, _ = claims
    assert isinstance(first, StepInvariant) and first.actions == ("guard", "baron") and first.reads_choices()
    assert isinstance(second, StepInvariant) and second.choice == (("g", 3),)        # princess, the 4th card


def test_the_explicit_engine_judges_each_move_with_its_choices(tmp_path):
    model, claims = love_letter(tmp_path)
    results = {r.property.id: r for r in run_claims(model.instantiate(), claims, ExplicitEngine(), Budget())}
    assert {k: r.verdict for k, r in results.items()} == EXPECTED
    last = results["guard-spares-who-lacks-any-card"].trace.steps[-1]
    assert last.action == "guard" and dict(last.choice)["g"] != 3


DRAW = """\
model: draw
players: 2
variables:
  hand: {type: 0..3, per: player, init: 0}
actions:
  - name: draw
    choose: {p: player}
    when: "hand[p] < 3"
    do:
      "hand[p]": "hand[p] + 1"
"""


def test_a_quantifier_binding_a_choices_name_reads_its_own_variable(tmp_path):
    """`count(p in player: ...)` on `draw`, which chooses `p`: the claim's `p` is the quantifier's,
    not the move's (the monitor's read after the move renames it), so a draw changes one hand."""
    (tmp_path / "draw.yaml").write_text(DRAW)
    (tmp_path / "claims.yaml").write_text('model: draw\nclaims:\n  - id: one-hand\n    says: x\n'
                                          '    step: "count(p in player: hand[p] != prev(hand[p])) <= 1"\n'
                                          '    actions: [draw]\n')
    model = load_model(str(tmp_path / "draw.yaml"))
    claims = load_properties(str(tmp_path / "claims.yaml"), model)
    verdicts = [run_claims(model.instantiate(), claims, engine, Budget())[0].verdict
                for engine in (ExplicitEngine(), SymbolicEngine())]
    assert verdicts == [Verdict.HOLDS, Verdict.PROVED]


def test_a_protected_player_targeted_breaks_the_claim_in_search_and_walks(tmp_path):
    """Drop the Handmaid's protection from the Guard's and Baron's targets: the claim that reads the
    target's choice is VIOLATED, and the trace's last move targets a protected player (the symbolic
    engine takes half a minute of Z3 here: the differential below holds it to the reference)."""
    text = LOVE_LETTER.read_text().replace(' and not protected[t]"', '"')
    model, claims = love_letter(tmp_path, text, CLAIMS.split("  - id: guard-spares-who-lacks-the")[0])
    (r,) = run_claims(model.instantiate(), claims, ExplicitEngine(), Budget())
    assert r.verdict is Verdict.VIOLATED
    last = r.trace.steps[-1]
    assert last.action in ("guard", "baron") and dict(r.trace.states[-2])[f"protected[{dict(last.choice)['t']}]"]
    (walked,) = walk.check(model, claims, steps_at_most=20_000)
    assert walked.verdict in (Verdict.VIOLATED, Verdict.UNKNOWN)
    if walked.verdict is Verdict.VIOLATED:
        assert walked.trace.steps[-1].action in ("guard", "baron")


COUNTER = """\
model: counter
variables:
  x: {{type: 0..{top}, init: 0, overflow: clamp}}
actions:
  - name: add
    choose: {{n: 0..3}}
    when: "x + n <= {limit} and n != {banned}"
    do: {{x: x + n}}
  - name: drop
    choose: {{n: 0..3}}
    when: "x >= n"
    do: {{x: x - n}}
"""
STEP = "model: counter\nclaims:\n  - {{id: s, says: x, step: \"{expr}\", actions: [{actions}]{with_}}}\n"
COUNTERS = st.builds(
    lambda top, limit, banned, expr, actions, value: (
        COUNTER.format(top=top, limit=limit, banned=banned),
        STEP.format(expr=expr, actions=actions, with_="" if value is None else f", with: {{n: {value}}}")),
    st.integers(2, 5), st.integers(0, 7), st.integers(0, 3),
    st.sampled_from(["x == min(prev(x) + n, 5)", "x <= prev(x) + n", "x != n", "x - prev(x) < n or n == 0",
                     "n <= 2 or x >= 3"]),
    st.sampled_from(["add", "drop", "add, drop"]), st.one_of(st.none(), st.integers(0, 3)))


@settings(max_examples=examples(8), deadline=None)
@given(drawn=COUNTERS)
def test_explicit_and_symbolic_agree_on_step_claims_reading_choices(tmp_path_factory, drawn):
    text, claims = drawn
    folder = tmp_path_factory.mktemp("counter")
    (folder / "counter.yaml").write_text(text)
    (folder / "claims.yaml").write_text(claims)
    model = load_model(str(folder / "counter.yaml"))
    loaded = load_properties(str(folder / "claims.yaml"), model)
    expected = reference(model.instantiate(), loaded[0])
    for engine in (ExplicitEngine(), SymbolicEngine()):
        (r,) = run_claims(model.instantiate(), loaded, engine, Budget())
        assert r.verdict in ((Verdict.HOLDS, Verdict.PROVED) if expected is Verdict.HOLDS else (expected,)), engine
        if r.verdict is Verdict.VIOLATED:
            with_ = loaded[0].choice
            assert r.trace.steps[-1].action in loaded[0].actions and set(with_) <= set(r.trace.steps[-1].choice)


def reference(concrete, claim: StepInvariant) -> Verdict:
    """The claim judged on every reachable move of the reference semantics, its choices as the
    expression's free names: VIOLATED where a judged move with the `with:` values breaks it."""
    lay = layout(concrete)
    pair = layout(replace(concrete, variables=concrete.variables + tuple(
        replace(v, name=PREV_MARK + v.name) for v in concrete.variables)))
    seen = set(initial_states(lay))
    todo = list(seen)
    while todo:
        state = todo.pop()
        for move in successors(lay, state):
            if move.target is None:
                continue
            values = dict(move.choice)
            judged = move.action.name in claim.actions and all(values[k] == v for k, v in claim.choice)
            if judged and not holds(pair, claim.expr, move.target + state, values):
                return Verdict.VIOLATED
            if move.target not in seen:
                seen.add(move.target)
                todo.append(move.target)
    return Verdict.HOLDS


ERRORS = [
    ("a choice one judged action lacks", "step: 't == active', actions: [guard, handmaid]", "unknown name 't'",
     "t == active", "every action in its actions: has"),
    ("a choice of every move", "step: 't == active'", "unknown name 't'", "t == active", "every action in"),
    ("with without actions", "step: 'true', with: {g: princess}", "it needs actions:", "{g: princess}",
     "actions: [play]"),
    ("with on an invariant", "invariant: 'true', with: {g: princess}", "with: belongs to step claims",
     "{g: princess}", "inside: reachable"),
    ("with beside reachable", "reachable: {action: guard}, with: {g: princess}",
     "with: of a reachable move goes inside reachable:", "{g: princess}", "reachable: {action: play"),
    ("an unknown choice in with", "step: 'true', actions: [guard], with: {h: princess}",
     "action guard has no choice 'h'", "h: princess", "its choices: new, t, g"),
    ("a value no choice has", "step: 'true', actions: [guard], with: {g: joker}", "'joker' is no value of choice g",
     "joker", "a value of its enum"),
]


@pytest.mark.parametrize("what,claim,message,needle,hint", ERRORS, ids=[e[0] for e in ERRORS])
def test_wrong_uses_are_positioned_errors(tmp_path, what, claim, message, needle, hint):
    with pytest.raises(PropertyError) as info:
        love_letter(tmp_path, claims=f"model: love_letter\nclaims:\n  - {{id: c, says: x, {claim}}}\n")
    (d,) = [d for d in info.value.diagnostics if message in d.message]
    assert str(d.span) == where(tmp_path / "claims.yaml", needle)
    assert hint in (d.hint or ""), d.hint


def test_a_player_choice_is_a_player_term_under_symmetry_but_not_a_number(tmp_path):
    model = load_model(str(FIXTURES / "priority_sym.yaml"))
    path = tmp_path / "claims.yaml"
    path.write_text("model: priority_sym\nclaims:\n"
                    "  - {id: takes, says: x, step: 'prio == p and mana[p] == 2', actions: [steal]}\n")
    (claim,) = load_properties(str(path), model)
    assert claim.reads_choices()
    path.write_text("model: priority_sym\nclaims:\n"
                    "  - {id: c, says: x, step: 'prio == p', actions: [steal], with: {p: 1}}\n")
    with pytest.raises(PropertyError) as info:
        load_properties(str(path), model)
    assert "claim c gives the player choice p a number" in info.value.diagnostics[0].message
