"""Step claims: a condition over every transition (state before with prev(x), the move, state after),
compiled to a one-flag monitor; the explicit and symbolic engines agree and violations replay."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_lang_errors import where
from tiers import examples

from verifier.diagnostics import PropertyError
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.lang import load_model, load_properties
from verifier.portfolio.plan import run_claims
from verifier.props.monitor import compile_step
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import initial_states, layout, successors
from verifier.trace import replay

MODEL = str(Path(__file__).parent / "fixtures" / "analysis" / "chooser.yaml")

CLAIMS = """\
claims:
  - id: main-ends-after-passes
    says: "Main ends only when both players have passed in succession"
    step: "prev(passes) == 2"
    actions: [pass turn]
  - id: cast-spends
    says: "casting spends one mana of the caster"
    step: "exists p in player: mana[p] == prev(mana[p]) - 1"
    actions: [cast]
  - id: stack-grows-by-one
    says: "the stack never grows by more than one"
    step: "stack <= prev(stack) + 1"
  - id: stack-never-shrinks
    says: "wrong: countering empties it"
    step: "stack >= prev(stack)"
"""


def claims_of(tmp_path, text: str = CLAIMS):
    path = tmp_path / "props.yaml"
    path.write_text(text)
    model = load_model(MODEL)
    return model, load_properties(str(path), model), path


def check(model, claims, engine):
    return run_claims(model, claims, engine, Budget())


def test_step_claims_on_the_explicit_engine(tmp_path):
    model, claims, _ = claims_of(tmp_path)
    concrete = model.instantiate()
    results = check(concrete, claims, ExplicitEngine())
    assert [r.verdict for r in results] == [Verdict.HOLDS] * 3 + [Verdict.VIOLATED]
    trace = results[3].trace
    assert [s.action for s in trace.steps][-1] == "counter"
    replay(layout(concrete), trace)


def test_the_flag_says_what_the_last_move_did(tmp_path):
    """A move that keeps the claim clears the flag: the product adds one state per state that a
    breaking move enters, not a second copy of everything reachable after the first violation."""
    model, claims, _ = claims_of(tmp_path, "claims:\n  - id: c\n    says: x\n    step: \"stack >= prev(stack)\"\n")
    product = compile_step(model.instantiate(), claims[0]).model
    lay = layout(product)
    flag, stack = lay.slot_of(product.variables[-1].name, None), lay.slot_of("stack", None)
    seen, todo, entered_by_a_break = set(initial_states(lay)), list(initial_states(lay)), set()
    while todo:
        state = todo.pop()
        for move in successors(lay, state):
            if move.target[stack] < state[stack]:
                entered_by_a_break.add(move.target[:flag])
            if move.target not in seen:
                seen.add(move.target)
                todo.append(move.target)
    flagged = {s[:flag] for s in seen if s[flag]}
    assert flagged and flagged == entered_by_a_break      # a sticky flag also marks every state after one


STEP_TEXTS = ["stack <= prev(stack) + 1", "stack >= prev(stack)", "passes == 0 or passes == prev(passes) + 1",
              "mana[active] >= prev(mana[active]) - 1", "prio == prev(prio) or passes > 0",
              "paid or not prev(paid)", "stack == prev(stack) or mana[0] + mana[1] != prev(mana[0] + mana[1])"]
ACTIONS = [[], ["cast"], ["tap"], ["counter", "pass_prio"], ["pass turn"]]


@settings(max_examples=examples(12), deadline=None)
@given(text=st.sampled_from(STEP_TEXTS), actions=st.sampled_from(ACTIONS))
def test_explicit_and_symbolic_agree(tmp_path_factory, text, actions):
    claim = (f"claims:\n  - id: c\n    says: x\n    step: \"{text}\"\n"
             + (f"    actions: [{', '.join(actions)}]\n" if actions else ""))
    model, claims, _ = claims_of(tmp_path_factory.mktemp("step"), claim)     # a folder per example
    concrete = model.instantiate()
    explicit = check(concrete, claims, ExplicitEngine())[0]
    symbolic = check(concrete, claims, SymbolicEngine())[0]
    assert explicit.verdict in (Verdict.HOLDS, Verdict.VIOLATED)
    if symbolic.verdict is not Verdict.UNKNOWN:
        assert (symbolic.verdict is Verdict.VIOLATED) == (explicit.verdict is Verdict.VIOLATED)
    for r in (explicit, symbolic):
        if r.trace is not None and r.verdict is Verdict.VIOLATED:
            replay(layout(concrete), r.trace)


CASES = [
    ("prev outside a step claim", "    step: \"stack <= prev(stack) + 1\"\n",
     "    invariant: \"stack <= prev(stack) + 1\"\n", "prev(...) is only meaningful in a step claim", "prev(stack)",
     "prev(x) is x before"),
    ("prev with two arguments", "prev(stack) + 1", "prev(stack, passes) + 1", "prev takes one argument",
     "prev(stack, passes)", "prev(passes)"),
    ("prev inside prev", "prev(stack) + 1", "prev(prev(stack)) + 1", "prev(...) inside prev(...)",
     "prev(prev", "once"),
    ("actions on another kind", "    step: \"stack <= prev(stack) + 1\"\n", "    invariant: \"stack <= 2\"\n"
     "    actions: [cast]\n", "actions: belongs to step claims", "[cast]\n", "drop it"),
    ("a choice no judged action has", "prev(stack) + 1", "prev(stack) + bonus", "unknown name 'bonus'", "bonus",
     "where every action in its actions: has that choice"),
    ("unknown action", "    actions: [cast]\n", "    actions: [cats]\n", "unknown action 'cats'", "cats",
     "did you mean 'cast'"),
]


@pytest.mark.parametrize("what,old,new,message,needle,hint", CASES, ids=[c[0] for c in CASES])
def test_error(tmp_path, what, old, new, message, needle, hint):
    text = CLAIMS
    if what != "unknown action":
        text = CLAIMS.split("  - id: cast-spends")[0] + "  - id: stack-grows-by-one" + \
            CLAIMS.split("  - id: stack-grows-by-one")[1].split("  - id: stack-never-shrinks")[0]
    assert old in text, old
    path = tmp_path / "props.yaml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(PropertyError) as info:
        load_properties(str(path), load_model(MODEL))
    error = next(d for d in info.value.diagnostics if message in d.message)
    assert str(error.span) == where(path, needle)
    assert error.hint and hint in error.hint, error.hint
