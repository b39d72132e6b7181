"""Property files: claim kinds, `at:` phases, reachability targets, and every error with its place and hint."""
from __future__ import annotations

from pathlib import Path

import pytest

from verifier.diagnostics import PropertyError
from verifier.ir.expr import pretty
from verifier.ir.props import DeadlockFree, Invariant, Reachable
from verifier.lang import load_model, load_properties

MINI = str(Path(__file__).parent / "fixtures" / "lang" / "mini.yaml")

CLAIMS = """\
model: lang-mini
claims:
  - id: hand-limit
    says: "After Discard no hand is above the limit"
    rule: "Discard"
    invariant: "hand[active] <= LIMIT"
    at: Draw
    expected: HOLDS
  - id: no-stuck-player
    says: "someone can always move"
    deadlock_free: true
  - id: play-happens
    says: "a card can be played"
    reachable: {phase: Play}
  - id: reshuffle-fires
    says: "the deck can be refilled"
    reachable: {action: reshuffle}
  - id: big-hand
    says: "a hand of four is possible"
    reachable: "hand[0] == 4"
    expected: VIOLATED
    why: "the strict reading stops at the limit"
"""


@pytest.fixture(scope="module")
def model():
    return load_model(MINI)


def write(tmp_path: Path, old: str = "", new: str = "") -> Path:
    text = CLAIMS
    if old:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "claims.yaml"
    path.write_text(text)
    return path


def test_claims(tmp_path, model):
    inv, dead, phase, action, state = load_properties(str(write(tmp_path)), model)
    assert isinstance(inv, Invariant) and inv.at_phase == "Draw" and inv.expected == "HOLDS" and inv.rule == "Discard"
    assert pretty(inv.expr, model.enum_value_name) == "(phase == Draw) -> (hand[active] <= 2)"
    assert inv.statement == "After Discard no hand is above the limit"
    assert isinstance(dead, DeadlockFree) and dead.id == "no-stuck-player"
    assert isinstance(phase, Reachable) and pretty(phase.expr, model.enum_value_name) == "phase == Play"
    # `reshuffle` exists only in the loose variant: the claim may still name it
    assert isinstance(action, Reachable) and action.action == ("reshuffle",) and action.expr is None
    assert state.expected == "VIOLATED" and state.why and pretty(state.expr) == "hand[0] == 4"
    assert str(inv.span) == f"{tmp_path / 'claims.yaml'}:3:9"


def where(path: Path, needle: str) -> str:
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return f"{path}:{number}:{line.index(needle) + 1}"
    raise AssertionError(needle)


CASES = [
    # (what, old, new, message, needle, hint)
    ("unknown kind", "    deadlock_free: true", "    deadlock_fre: true", "unknown field 'deadlock_fre' in a claim",
     "deadlock_fre", "did you mean 'deadlock_free'"),
    ("no kind", "    deadlock_free: true\n", "", "claim no-stuck-player must have exactly one kind, found none",
     "no-stuck-player", "one of: invariant"),
    ("two kinds", "    deadlock_free: true", "    deadlock_free: true\n    reachable: \"true\"",
     "must have exactly one kind, found deadlock_free, reachable", "no-stuck-player", "one of"),
    ("missing says", '    says: "someone can always move"\n', "", "a claim has no 'says'", "id: no-stuck",
     "says: ..."),
    ("expected not a verdict", "    expected: HOLDS", "    expected: HOLD", "expected 'HOLD' is not a verdict",
     "HOLD", "PROVED, HOLDS"),
    ("violated without why", '    why: "the strict reading stops at the limit"\n', "",
     "expects VIOLATED but does not say why", "VIOLATED", "why:"),
    ("bad claim id", "id: big-hand", "id: Big_Hand", "claim id 'Big_Hand' is not lowercase words with dashes",
     "Big_Hand", "e.g."),
    ("duplicate claim id", "id: big-hand", "id: hand-limit", "duplicate claim id 'hand-limit'", "hand-limit\n",
     "own id"),
    ("unknown phase", "at: Draw", "at: Drwa", "unknown phase 'Drwa'", "Drwa", "did you mean 'Draw'"),
    ("unknown reachable phase", "{phase: Play}", "{phase: Pley}", "unknown phase 'Pley'", "Pley",
     "did you mean 'Play'"),
    ("unknown action", "{action: reshuffle}", "{action: reshufle}", "unknown action 'reshufle'", "reshufle",
     "did you mean 'reshuffle'"),
    ("bad expression", '"hand[0] == 4"', '"hand[0] = 4"', "cannot parse expression", "= 4", "'=='"),
    ("unknown name", '"hand[0] == 4"', '"hadn[0] == 4"', "unknown name 'hadn'", "hadn", "did you mean 'hand'"),
    ("not a boolean", '"hand[0] == 4"', '"hand[0] + 4"', "expected a boolean", "hand[0] + 4", "compare"),
    ("unknown top-level field", "claims:", "claimz:", "unknown field 'claimz'", "claimz", "did you mean 'claims'"),
    ("for_every names no parameter", "    deadlock_free: true", "    deadlock_free: true\n    for_every: [DEK]",
     "for_every names 'DEK', which is not a parameter of the model", "[DEK]", "parameters: DECK"),
]


@pytest.mark.parametrize("what,old,new,message,needle,hint", CASES, ids=[c[0] for c in CASES])
def test_error(tmp_path, model, what, old, new, message, needle, hint):
    path = write(tmp_path, old, new)
    with pytest.raises(PropertyError) as info:
        load_properties(str(path), model)
    matching = [d for d in info.value.diagnostics if message in d.message]
    assert matching, [d.message for d in info.value.diagnostics]
    error = matching[0]
    if needle.endswith("\n"):
        lines = path.read_text().splitlines()
        number = [i for i, line in enumerate(lines, 1) if line.endswith(needle[:-1])][-1]
        assert str(error.span) == f"{path}:{number}:{lines[number - 1].index(needle[:-1]) + 1}"
    else:
        assert str(error.span) == where(path, needle)
    assert error.hint and hint in error.hint, error.hint


def test_missing_property_file(tmp_path, model):
    with pytest.raises(PropertyError, match="no such file"):
        load_properties(str(tmp_path / "none.yaml"), model)


def test_per_variant_expected(tmp_path, model):
    path = write(tmp_path, "    expected: HOLDS", "    expected: {strict: HOLDS, loose: VIOLATED}\n    why: \"x\"")
    assert load_properties(str(path), model)[0].expected == "HOLDS"
    loose = load_model(MINI, variant="loose")
    assert load_properties(str(path), loose)[0].expected == "VIOLATED"


def test_for_every_frees_the_parameter_for_that_claim_alone(tmp_path):
    """`for_every: [DECK]`: the claim is proved for every deck size; the others stay at the
    default size and are searched exhaustively."""
    from verifier.runner import RunOptions, check_model

    claims = tmp_path / "claims.yaml"
    claims.write_text("""\
model: lang-mini
claims:
  - id: decks-never-grow
    says: "No deck ever holds more than DECK cards, whatever DECK is"
    invariant: "deck[0] <= DECK and deck[1] <= DECK"
    for_every: [DECK]
    expected: PROVED
  - id: hand-bounded
    says: "No hand is above MAX_HAND"
    invariant: "hand[0] <= MAX_HAND"
""")
    (run, *_rest) = check_model(MINI, RunOptions(properties=str(claims), consistency=False))
    proved, searched = run.results
    assert proved.property.for_every == ("DECK",) and proved.verdict.value == "PROVED"
    assert dict(proved.params)["DECK"] is None and "every value of DECK" in proved.reason
    assert searched.engine == "explicit/python" and dict(searched.params)["DECK"] == 3


def test_an_unknown_event_is_offered_the_event_words(tmp_path, model):
    """`expect: turn_end` (for turn-end) gets 'did you mean turn-end', not only the action names."""
    path = tmp_path / "claims.yaml"
    path.write_text('claims:\n  - id: passes\n    says: "x"\n'
                    "    bounded_response: {after: {action: reshuffle}, expect: turn_end, within: 3}\n", encoding="utf-8")
    with pytest.raises(PropertyError) as info:
        load_properties(str(path), model)
    (error,) = info.value.diagnostics
    assert error.message == "unknown action 'turn_end'" and "'turn-end'" in (error.hint or "")


EVENT_LISTS = """\
claims:
  - id: laid-after-draw
    says: "In each turn, a card is played or discarded only after the draw"
    ordering: {pattern: precedence, p: {action: [play, discard]}, s: draw, scope: turn}
  - id: played-after-draw
    says: "In each turn, a card is played only after the draw"
    ordering: {pattern: precedence, p: play, s: draw, scope: turn}
  - id: discarded-after-draw
    says: "In each turn, a card is discarded only after the draw"
    ordering: {pattern: precedence, p: discard, s: draw, scope: turn}
  - id: laid-after-leaving-draw
    says: "In each turn, a card is played or discarded only after Draw was left"
    ordering: {pattern: precedence, p: {action: [play, discard]}, s: {action: [end Draw]}, scope: turn}
  - id: draw-after-a-card-left
    says: "In each turn, the draw comes after a card was played or discarded, or Play was left"
    ordering: {pattern: precedence, p: draw, s: {action: [play, discard, end Play]}, scope: turn}
"""


def test_an_event_may_be_one_of_several_actions(tmp_path, model):
    """`{action: [a, b]}` as an ordering event: one of those moves (a phase-leaving name such as
    `end Play` names each of its moves), in plain words `a or b`; a claim over the list holds
    exactly where the claims over each of its actions hold (an empty deck leaves the draw out, so a play
    may come first). Before, the list was 'unknown action'."""
    from verifier.engines.explicit import ExplicitEngine
    from verifier.portfolio.plan import run_claims
    from verifier.resources import Budget
    from verifier.result import Verdict

    path = tmp_path / "claims.yaml"
    path.write_text(EVENT_LISTS, encoding="utf-8")
    claims = load_properties(str(path), model)
    laid, _, _, _, after = claims
    assert laid.p.actions == ("play", "discard") and laid.p.text == "play or discard"
    assert after.s.actions[:2] == ("play", "discard") and all(a.startswith("end Play") for a in after.s.actions[2:])
    verdicts = {r.property.id: r.verdict for r in run_claims(model.instantiate(), claims, ExplicitEngine(), Budget())}
    assert verdicts == {"laid-after-draw": Verdict.VIOLATED, "played-after-draw": Verdict.VIOLATED,
                        "discarded-after-draw": Verdict.HOLDS, "laid-after-leaving-draw": Verdict.HOLDS,
                        "draw-after-a-card-left": Verdict.VIOLATED}


@pytest.mark.parametrize("event, message, hint", [
    ("[draw, play]", "an event is an action name or one of {action}, {enter}, {leave}, {state}, not a list",
     "{action: [draw, play]}"),
    ("{action: {draw: 1}}", "an action's name is expected here, not a list or a mapping",
     "{action: [draw_deck, draw_pile]}"),
])
def test_a_list_where_one_action_is_named_says_so(event, message, hint, tmp_path, model):
    """Before, a list stood for an action's name: "unknown action '['draw', 'play']'" (or two errors)."""
    path = tmp_path / "claims.yaml"
    path.write_text('claims:\n  - id: x\n    says: "x"\n'
                    f"    bounded_response: {{after: reshuffle, expect: {event}, within: 3}}\n", encoding="utf-8")
    with pytest.raises(PropertyError) as info:
        load_properties(str(path), model)
    (error,) = info.value.diagnostics
    assert error.message == message and hint in (error.hint or "") and error.span.line == 4
