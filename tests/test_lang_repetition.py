"""The language carries the designer's repetition (docs/LANGUAGE.md, "Repetition"): YAML anchors and
merge keys everywhere (a shelf of `x-` keys for them), action sets in claims (`any step-end of P`),
`phase in P.steps`, player-valued variables (`type: player`) and conditional durations; the example
model uses each."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from test_lang_errors import where

from verifier.cli import main
from verifier.diagnostics import ModelError, PropertyError
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.ir.expr import pretty
from verifier.lang import load_model, load_properties
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import fire, initial_states, layout

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "models" / "priority_steps.yaml"
EXAMPLE_CLAIMS = ROOT / "examples" / "properties" / "priority_steps.yaml"

MERGED = """\
model: merged
players: 2
variables:
  mana: {type: 0..3, per: player, init: 0}
  x: {type: 0..3, init: 0}
phases:
  - name: A
    on_enter: &shared
      x: 0
      for p in player:
        mana[p]: 1
  - name: B
    on_enter:
      <<: *shared
      x: 1
actions: []
"""


def write(tmp_path, text: str, name: str = "model.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def effects(model, action: str) -> dict[str, str]:
    return {pretty(e.target): pretty(e.value) for e in model.action(action).effects}


def test_a_merge_key_on_a_for_block_loads(tmp_path, capsys):
    """`<<: *anchor` on a block holding `for p in player:` ended in an internal error (KeyError, exit 4)."""
    path = write(tmp_path, MERGED)
    assert main(["lint", str(path), "-q"]) == 0
    model = load_model(str(path))
    assert effects(model, "end A") == {"phase": "1", "x": "1", "mana[0]": "1", "mana[1]": "1"}
    spans = {pretty(e.target): str(e.span) for e in model.action("end A").effects}
    assert spans["mana[0]"] == where(path, "mana[p]: 1")      # the merged text keeps its place


def test_an_error_in_merged_text_points_at_the_anchor(tmp_path):
    path = write(tmp_path, MERGED.replace("mana[p]: 1", "mana[p]: nope"))
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    assert any(str(d.span) == where(path, "nope") for d in info.value.diagnostics), info.value.render()


@pytest.mark.parametrize("merge", ["<<: 5", "<<: *nowhere"])
def test_a_bad_merge_key_is_a_positioned_error(tmp_path, capsys, merge):
    path = write(tmp_path, MERGED.replace("<<: *shared", merge))
    assert main(["lint", str(path), "-q"]) == 2
    assert f"{path}:14:" in capsys.readouterr().err


def test_the_shelf_holds_anchors_and_nothing_else(tmp_path):
    text = MERGED.replace("players: 2\n", "players: 2\nx-one: &one {x: 1}\n").replace("      <<: *shared\n      x: 1\n",
                                                                                      "      <<: *one\n")
    assert effects(load_model(str(write(tmp_path, text))), "end A") == {"phase": "1", "x": "1"}
    with pytest.raises(ModelError, match="unknown field 'y-one'"):
        load_model(str(write(tmp_path, text.replace("x-one", "y-one").replace("*one", "{x: 1}"), "other.yaml")))


def test_a_property_file_has_a_shelf_and_merge_keys_too(tmp_path):
    """A property file's `x-` key was 'unknown field' though a model's is a shelf: claims that share
    their fields (`<<: *claim`) could not keep the anchor anywhere."""
    model = load_model(str(write(tmp_path, MERGED)))
    claims = write(tmp_path, "x-small: &small\n  says: x stays small\n  invariant: \"x <= 3\"\nclaims:\n"
                             "  - {<<: *small, id: small}\n  - <<: *small\n    id: small2\n", "claims.yaml")
    assert [(c.id, c.statement) for c in load_properties(str(claims), model)] == [("small", "x stays small"),
                                                                            ("small2", "x stays small")]
    with pytest.raises(PropertyError, match="unknown field 'y-small'"):
        load_properties(str(write(tmp_path, claims.read_text().replace("x-small", "y-small"), "other.yaml")), model)

def test_the_example_shares_its_step_rules_and_reads_them_right():
    model = load_model(str(EXAMPLE))
    steps = [p.name for p in model.leaf_phases()]
    assert len(steps) == 11
    for name in ("end Upkeep", "end Attackers", "end Main2"):     # each step's shared on_enter
        assert effects(model, name)["prio"] == "active" and effects(model, name)["passes"] == "0"
    assert model.var("prio").type.hi == model.var("active").type.hi          # type: player


def test_the_example_claims_hold():
    model = load_model(str(EXAMPLE))
    claims = load_properties(str(EXAMPLE_CLAIMS), model)
    results = run_claims(model.instantiate(), claims, ExplicitEngine(), Budget())
    assert {r.property.id: r.verdict for r in results} == {c.id: Verdict.HOLDS for c in claims}
    short = next(c for c in claims if c.id == "combat-steps-are-short")
    assert len(short.response.actions) == 5 and short.response.text == "any step-end of Combat"
    step_ends = next(c for c in claims if c.id == "steps-end-after-every-pass")
    assert step_ends.actions == ("end BeginCombat", "end Attackers", "end Blockers", "end Damage", "end EndCombat")


def test_action_sets_and_phase_sets(tmp_path):
    model = load_model(str(EXAMPLE))
    text = ("claims:\n  - {id: a, says: x, step: 'true', actions: [any turn-end]}\n"
            "  - {id: b, says: x, step: 'true', actions: [any step-end]}\n"
            "  - {id: c, says: x, invariant: 'phase in Beginning.steps -> true'}\n")
    a, b, c = load_properties(str(write(tmp_path, text, "claims.yaml")), model)
    assert a.actions == ("pass turn",) and len(b.actions) == 11
    assert pretty(c.expr).count("phase ==") == 3


MOVE_SETS = """\
claims:
  - {id: step-end-in-combat, says: x, reachable: {action: any step-end of Combat}}
  - {id: cast-or-pass, says: x, reachable: {action: [cast, any turn-end]}}
  - {id: untap-ends, says: x, reachable: {action: [end Untap]}}
"""


def test_reachable_over_a_set_of_moves(tmp_path):
    """`reachable: {action: ...}` takes a set (`any step-end of P`) or a list of names and sets: some
    reachable move is one of them; the explicit and symbolic engines agree, and a witness ends with one."""
    model = load_model(str(EXAMPLE))
    claims = load_properties(str(write(tmp_path, MOVE_SETS, "claims.yaml")), model)
    combat, either, untap = claims
    assert len(combat.action) == 5 and either.action == ("cast", "pass turn") and untap.action == ("end Untap",)
    concrete = model.instantiate()
    # without `end Untap`, play never leaves the Untap step: neither move of the list is reachable
    blocked = replace(model, actions=tuple(a for a in model.actions if a.name != "end Untap")).instantiate()
    neither = replace(untap, id="neither", action=("end Untap", "cast"))
    for engine in (ExplicitEngine(), SymbolicEngine()):
        results = {r.property.id: r for r in run_claims(concrete, [combat, either, untap], engine, Budget())}
        assert {k: r.verdict for k, r in results.items()} == \
            {"step-end-in-combat": Verdict.HOLDS, "cast-or-pass": Verdict.HOLDS, "untap-ends": Verdict.HOLDS}
        trace = results["step-end-in-combat"].trace
        assert trace is not None and trace.steps[-1].action.split(" -> ")[0] in combat.action
        (r,) = run_claims(blocked, [neither], engine, Budget())
        assert r.verdict is Verdict.VIOLATED, engine


@pytest.mark.parametrize("claim,message,needle", [
    ("{id: a, says: x, reachable: {action: [cast, any step-end of Nowhere]}}", "unknown phase 'Nowhere'", "any step"),
    ("{id: a, says: x, reachable: {action: []}}", "names no move", "[]}"),
    ("{id: a, says: x, reachable: {action: [cats]}}", "unknown action 'cats'", "cats"),
    ("{id: a, says: x, step: 'true', actions: [any step-end of Nowhere]}", "unknown phase 'Nowhere'", "any step"),
    ("{id: a, says: x, invariant: 'phase in Main1.steps'}", "'Main1' is not a phase with steps", "phase in"),
    ("{id: a, says: x, invariant: 'prio in Combat.steps'}", "Combat.steps are phases", "prio in"),
])
def test_set_errors_are_positioned(tmp_path, claim, message, needle):
    path = write(tmp_path, f"claims:\n  - {claim}\n", "claims.yaml")
    with pytest.raises(PropertyError) as info:
        load_properties(str(path), load_model(str(EXAMPLE)))
    (d,) = [d for d in info.value.diagnostics if message in d.message]
    assert str(d.span).startswith(where(path, needle).rsplit(":", 1)[0])


def test_a_player_variable_follows_the_number_of_players():
    model = load_model(str(EXAMPLE), {"PLAYERS": 3})
    assert (pretty(model.var("prio").type.lo), pretty(model.var("prio").type.hi)) == ("0", "2")


def test_a_conditional_duration_records_whose_turn_ends_it():
    model = load_model(str(EXAMPLE)).instantiate()
    lay = layout(model)
    names = [s.name for s in lay.slots]
    (start,) = initial_states(lay)
    state = dict(zip(names, start))
    cast = model.action("cast")
    for phase, until in (("Main1", 0), ("Main2", 1)):     # until the caster's / the opponent's next turn
        state["phase"] = model.var("phase").type.values.index(phase)
        after = dict(zip(names, fire(lay, cast, tuple(state[n] for n in names), {}).target))
        assert (after["exposed[0]"], after["exposed_until[0]"]) == (1, until)


def test_forever_is_a_duration_that_never_ends(tmp_path):
    text = EXAMPLE.read_text().replace(
        'until: "if phase == Main1 then next_turn_of(active) else next_turn_of((active + 1) % PLAYERS)"',
        'until: "if phase == Main1 then next_turn_of(active) else forever"')
    model = load_model(str(write(tmp_path, text))).instantiate()
    assert effects(model, "cast")["exposed_until[active]"] == "(if phase == 3 then active else 2)"
    bad = write(tmp_path, text.replace("else forever", "else never_turn_of(1)"), "bad.yaml")
    with pytest.raises(ModelError) as info:
        load_model(str(bad))
    (d,) = info.value.diagnostics
    assert str(d.span) == where(bad, "never_turn_of") and d.hint and "a duration is next_turn_of(p)" in d.hint
