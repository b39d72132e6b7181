"""Named blocks of phase rules (`phase_rules:` and `use:`, docs/LANGUAGE.md "Repetition"): a phase using
blocks loads as the phase with their rules written out; on_enter and exit_when combine, the other
rules come from the last source giving them; wrong uses are positioned errors, and hostile chains
stop at the limits."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_lang_errors import the_error, where

from verifier.ir.expr import pretty
from verifier.lang import load_model, phase_rules

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "models"

HEAD = """\
model: rules
players: 2
variables:
  passes: {type: 0..2, init: 0}
  mana: {type: 0..2, per: player, init: 0}
  armed: {type: bool, init: false}
actions:
  - {name: pass_priority, when: "passes < PLAYERS", do: {passes: passes + 1}}
  - {name: arm, when: "not armed", do: {armed: true}}
"""

USING = HEAD + """\
phase_rules:
  priority:
    on_enter: {passes: 0, armed: false}
    exit_when: "passes == PLAYERS"
  cited:
    use: priority
    rule: "Steps: every step gives priority"
    mandatory: false
phases:
  - name: Untap
    use: cited
    mandatory: true
    on_enter:
      mana[active]: 2
      armed: true
  - {name: Upkeep, use: [priority, cited], exit_when: "armed"}
  - {name: Draw, use: priority, next: [{to: Untap}]}
"""

WRITTEN_OUT = HEAD + """\
phases:
  - name: Untap
    rule: "Steps: every step gives priority"
    on_enter:
      passes: 0
      mana[active]: 2
      armed: true
    exit_when: "passes == PLAYERS"
  - name: Upkeep
    rule: "Steps: every step gives priority"
    mandatory: false
    on_enter: {passes: 0, armed: false}
    exit_when: "passes == PLAYERS and armed"
  - name: Draw
    on_enter: {passes: 0, armed: false}
    exit_when: "passes == PLAYERS"
    next: [{to: Untap}]
"""


def shape(model) -> dict:
    """Each action's guard and effects as text (effects as a set: they are simultaneous)."""
    return {a.name: (pretty(a.guard), frozenset(f"{pretty(e.target)} := {pretty(e.value)}" for e in a.effects),
                     a.rule) for a in model.actions} | {"phases": tuple((p.name, p.mandatory, p.rule)
                                                                       for p in model.phases)}


def load_text(tmp_path: Path, text: str, name: str = "model.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return load_model(str(path))


def test_a_phase_using_blocks_is_the_phase_with_their_rules_written_out(tmp_path):
    assert shape(load_text(tmp_path, USING, "a.yaml")) == shape(load_text(tmp_path, WRITTEN_OUT, "b.yaml"))


def test_the_example_uses_one_block_for_eleven_steps():
    model = load_model(str(EXAMPLES / "priority_steps.yaml"))
    ends = [a for a in model.actions if a.name.startswith("end ")]
    assert len(ends) == 10 and all("passes == 2" in pretty(a.guard) for a in ends)
    untap = {pretty(e.target) for e in model.action("pass turn").effects}
    assert {"prio", "passes", "mana[(active + 1) % 2]"} <= untap


def test_an_error_in_a_block_points_into_the_block(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text(USING.replace('exit_when: "passes == PLAYERS"', 'exit_when: "pases == PLAYERS"'))
    assert str(the_error(path, "unknown name 'pases'").span) == where(path, "pases")


def test_a_block_no_phase_uses_is_checked(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text(USING.replace("phases:", "  idle:\n    on_enter: {pases: 0}\nphases:", 1))
    assert str(the_error(path, "cannot assign to 'pases'").span) == where(path, "pases")


ERRORS = [
    ("an unknown block", "use: [priority, cited]", "use: [priority, citd]",
     "unknown block of phase rules 'citd' in phase Upkeep", "citd]", "did you mean 'cited'"),
    ("a block that uses itself", "    use: priority\n    rule:", "    use: cited\n    rule:",
     "block of phase rules cited uses itself (cited → cited)", "cited\n    rule", "never itself"),
    ("a step under a block", "    mandatory: false\nphases:", "    steps: []\nphases:",
     "unknown field 'steps' in block of phase rules cited", "steps: []", "did you mean"),
    ("phase_rules that is a list", "phase_rules:\n  priority:", "phase_rules: []\nx-rules:\n  priority:",
     "phase_rules must map names to blocks of phase rules", "[]\nx-rules", "use: priority_step"),
]


@pytest.mark.parametrize("what,old,new,message,needle,hint", ERRORS, ids=[e[0] for e in ERRORS])
def test_wrong_uses_are_positioned_errors(tmp_path, what, old, new, message, needle, hint):
    assert old in USING
    path = tmp_path / "model.yaml"
    path.write_text(USING.replace(old, new, 1))
    error = the_error(path, message)
    assert str(error.span) == where(path, needle) and hint in (error.hint or "")


@pytest.mark.parametrize("use,message,needle", [("[priority, 1]", "unknown block of phase rules '1'", "1]"),
                                                 ("idle", "block of phase rules idle uses itself", "idle\nphases")])
def test_the_uses_of_a_block_no_phase_uses_are_checked(tmp_path, use, message, needle):
    path = tmp_path / "model.yaml"
    path.write_text(USING.replace("phases:", f"  idle:\n    use: {use}\nphases:", 1))
    assert str(the_error(path, message).span) == where(path, needle)


def test_phase_rules_need_phases(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text(HEAD + "phase_rules: {idle: {exit_when: \"true\"}}\n")
    assert str(the_error(path, "phase_rules are for phases").span) == where(path, "{idle")


def chain(length: int, uses_per_block: int = 1) -> str:
    """Blocks b0 .. b{length-1}, each using the next `uses_per_block` times and all the blocks after it."""
    uses = [[f"b{k + 1}"] * uses_per_block + [f"b{j}" for j in range(k + 2, length)] for k in range(length - 1)]
    blocks = "".join(f"  b{k}:\n    use: [{', '.join(names)}]\n" for k, names in enumerate(uses))
    return HEAD + "phase_rules:\n" + blocks + f"  b{length - 1}:\n    exit_when: \"true\"\n" + \
        "phases:\n  - {name: Main, use: b0}\n"


def test_a_long_chain_stops_at_the_nesting_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(phase_rules, "MAX_DEFINITION_NESTING", 5)
    path = tmp_path / "model.yaml"
    path.write_text(chain(8))
    assert "used inside more than 5 nested blocks" in the_error(path, "nested blocks").message
    path.write_text(chain(5))
    load_model(str(path))


def test_blocks_used_many_times_count_once_and_stop_at_the_size_limit(tmp_path, monkeypatch):
    path = tmp_path / "model.yaml"
    path.write_text(chain(30, uses_per_block=2))     # more than 2^29 uses if each were read: 30 blocks, once each
    assert pretty(load_model(str(path)).action("pass turn").guard)
    monkeypatch.setattr(phase_rules, "MAX_RULE_BLOCKS", 10)
    assert "phase Main applies more than 10 blocks" in the_error(path, "applies more than").message
