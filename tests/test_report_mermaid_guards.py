"""The Mermaid export carries each arrow's condition and draws actions in the phases their
guards allow (`report.phase_actions`); what it writes stays one statement per line."""
from __future__ import annotations

import re
from pathlib import Path

from verifier.ir.model import Model
from verifier.lang import load_model
from verifier.report.diagrams import phase_dot
from verifier.report.mermaid import phase_mermaid
from verifier.report.phase_actions import ANY_PHASE, actions_by_phase

ROOT = Path(__file__).parent.parent
MODEL = """model: guarded
players: 2
variables:
  ready: {type: bool, init: false}
  hand: {type: 0..3, init: 0}
phases:
  - name: Setup
    next: [{to: Play, when: "ready", label: "ready?"}, {to: Setup}]
  - name: Play
    exit_when: "hand >= 2"
  - name: Cleanup
actions:
  - name: get_ready
    phase: Setup
    do: {ready: true}
  - name: draw
    when: "phase != Setup and hand < 3"
    do: {hand: hand + 1}
  - name: play_only
    when: "phase == Play or phase == Play"
    do: {hand: 0}
  - name: shout
    when: "hand > 0 or phase == Setup"
    do: {ready: false}
  - name: never
    when: "phase == Setup and phase == Play"
    do: {ready: true}
"""


def _model(tmp_path: Path, text: str = MODEL) -> Model:
    path = tmp_path / "guarded.yaml"
    path.write_text(text, encoding="utf-8")
    return load_model(str(path))


def _names(model: Model) -> dict[str | None, list[str]]:
    return {k: [a.name for a in v] for k, v in actions_by_phase(model).items()}


def test_actions_are_drawn_where_their_guard_allows(tmp_path):
    by_phase = _names(_model(tmp_path))
    assert by_phase["Setup"] == ["get_ready"]
    assert by_phase["Play"] == ["draw", "play_only"] and by_phase["Cleanup"] == ["draw"]
    assert by_phase[ANY_PHASE] == ["shout"]                       # `hand > 0` may hold in every phase
    assert all("never" not in names for names in by_phase.values())


def test_mermaid_edges_carry_their_conditions(tmp_path):
    text = phase_mermaid(_model(tmp_path))
    assert re.search(r'Setup -\.->\|"ready\?<br/>when: ready"\| Play', text), text
    assert re.search(r'Play -\.->\|"when: hand #gt;= 2"\| Cleanup', text), text   # exit_when, escaped
    assert 'Play["Play<br/>may draw, may play_only"]' in text
    assert "%% in any phase: may shout" in text


def test_shipped_models_no_longer_draw_phase_guarded_actions_anywhere():
    wt = load_model(str(ROOT / "models" / "wtactics.yaml"))
    text = phase_mermaid(wt)
    assert "in any phase" not in text                              # passive_event: `phase != Mulligan`
    assert "passive_event" not in next(line for line in text.splitlines() if line.strip().startswith("Mulligan["))
    clash = load_model(str(ROOT / "models" / "alpha_clash.yaml"))
    by_phase = _names(clash)
    assert [p for p, names in by_phase.items() if "propose_card" in names] == \
        ["Primary", "C4AttackerBuff", "C5DefenderBuff"]
    assert "propose_card" not in by_phase[ANY_PHASE]
    assert "in any phase" not in phase_dot(wt)                     # the DOT diagram agrees


def test_every_statement_is_one_line_with_balanced_quotes(tmp_path):
    hostile = MODEL.replace('label: "ready?"', 'label: "ok\\"]\\nclick A call evil() %% <b>x</b>"')
    text = phase_mermaid(_model(tmp_path, hostile))
    for line in text.splitlines():
        assert line.count('"') % 2 == 0, line
        assert "<b>" not in line and "click A" not in line.split("%%")[0].split('"')[0]
    assert not any(line.strip().startswith("click") for line in text.splitlines())


def test_conditions_read_simplified_and_otherwise_says_so():
    """`not (not running)` reads `running`; an `{otherwise: P}` arrow says it is one (Mermaid and the
    reports' DOT diagram alike)."""
    model = load_model(str(ROOT / "examples" / "models" / "netrunner.yaml"))
    text = phase_mermaid(model)
    assert 'Encounter -.->|"otherwise, when: running"| Approach' in text
    assert 'Action -.->|"otherwise, when: (clicks == 0) and (not running)"| Discard' in text
    assert "not (not" not in text and "not (pos == 0)" not in text.split("%% turnproof")[0]
    assert "otherwise, when: running" in phase_dot(model)
