"""A model written with every construct of language v2 (tests/models/priority.yaml: also a stack of objects
and controllers as two sequences, a 2-D array, an until-next-turn effect) checks the same on the explicit
engine (both stores) and the symbolic one (its SPIN state count is in test_spin_crosscheck)."""
from __future__ import annotations

from pathlib import Path

from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.ir.model import RANDOM
from verifier.lang import check_model, load_properties
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.result import Verdict

MODELS = Path(__file__).parent / "models"


def test_it_uses_every_construct():
    model, warnings = check_model(str(MODELS / "priority.yaml"))
    text = (MODELS / "priority.yaml").read_text()
    assert not warnings
    assert {d.name for d in model.definitions} == {"has_prio", "room", "can_cast", "all_passed", "main_phase"}
    assert model.action("cast").phases == ("Main", "Main2") and len(model.action("pass_prio").phases) == 2
    assert model.action("draw").chooser == RANDOM and model.action("cast").chooser is not None
    assert "end Main -> Main" in {a.name for a in model.actions}
    assert all(word in text for word in ("next_any:", "otherwise:", " in {", " in 0..1", "on_turn_start:", "own_turn",
                                         "seq[", "push(", "pop if", "top(", "len(", "per: [player, Kind]",
                                         "played[p][k]", "until: next_turn_of"))
    claims = (MODELS / "priority_props.yaml").read_text()
    assert all(word in claims for word in ("step:", "prev(", "strong:", "main_phase"))


def test_explicit_and_symbolic_agree_on_its_claims():
    model = check_model(str(MODELS / "priority.yaml"))[0].instantiate()
    claims = load_properties(str(MODELS / "priority_props.yaml"), model)
    explicit = run_claims(model, claims, ExplicitEngine(), Budget())
    compact = run_claims(model, claims, ExplicitEngine(store="compact"), Budget())
    symbolic = run_claims(model, claims, SymbolicEngine(), Budget())
    assert [r.verdict for r in explicit] == [Verdict.HOLDS] * len(claims) == [r.verdict for r in compact]
    assert all(r.verdict in (Verdict.PROVED, Verdict.HOLDS) for r in symbolic), \
        [(r.property.id, r.verdict) for r in symbolic]


def test_the_json_export_lists_the_phases_of_a_multi_phase_action():
    from verifier.report.model_json import model_json
    actions = {a["name"]: a for a in model_json(check_model(str(MODELS / "priority.yaml"))[0])["actions"]}
    assert actions["cast"]["phase"] == ["Main", "Main2"] and actions["untap"]["phase"] == "Untap"
