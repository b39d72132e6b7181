"""Loader warnings reach the user: `check`, `lint` and `report` print each with file:line:col on standard
error (the exit code unchanged), JSON and SARIF carry them; `import-mermaid` writes the current form."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_lang_errors import where

from verifier.cli import main
from verifier.lang import check_model

V1 = """\
model: v1
players: 2
variables:
  x: {type: 0..2, init: 0}
phases:
  - name: Main
    next:
      - {to: TURN_END}
      - {to: Other, when: "x > 0"}
  - name: Other
actions:
  - name: bump
    phase: Main
    when: "x < 2"
    do: {x: x + 1}
"""
DEPRECATED = "deprecated: this next: list is read as next_any:"


@pytest.fixture
def v1(tmp_path) -> Path:
    path = tmp_path / "v1.yaml"
    path.write_text(V1)
    return path


@pytest.mark.parametrize("command", [["lint"], ["check", "--engine", "explicit"]])
def test_the_warning_is_printed_where_it_is(v1, capsys, command):
    code = main([*command, str(v1), "-q"])
    err = capsys.readouterr().err
    assert code == 0                                   # a warning never changes the exit code
    assert f"{where(v1, '- {to: TURN_END}')}: warning: {DEPRECATED}" in err
    assert "hint: write next_any:" in err
    assert err.count(DEPRECATED) == 1


def test_report_prints_it_too_and_the_game_page_shows_it(v1, tmp_path, capsys):
    """The report's reader, who never sees standard error, reads the warning on the game's page."""
    assert main(["report", str(v1), "-o", str(tmp_path / "site"), "-q", "--no-graph", "--playouts", "0"]) == 0
    at = where(v1, '- {to: TURN_END}')
    assert f"{at}: warning: {DEPRECATED}" in capsys.readouterr().err
    page = tmp_path / "site" / "v1"
    assert f"- `{at}` {DEPRECATED}" in (page / "index.md").read_text()
    assert "Warnings:" in (page / "index.html").read_text() and DEPRECATED in (page / "index.html").read_text()
    clean = tmp_path / "v2.yaml"
    clean.write_text(V1.replace("    next:\n", "    next_any:\n"))
    assert main(["report", str(clean), "-o", str(tmp_path / "site2"), "-q", "--no-graph", "--playouts", "0"]) == 0
    assert "Warnings:" not in (tmp_path / "site2" / "v1" / "index.md").read_text()


def test_json_and_sarif_carry_it(v1, tmp_path):
    out = tmp_path / "out.json"
    assert main(["check", str(v1), "-q", "--engine", "explicit", "-f", "json", "-o", str(out)]) == 0
    (warning,) = json.loads(out.read_text())["warnings"]
    assert (warning["line"], warning["col"]) == (8, 7) and warning["message"].startswith(DEPRECATED)
    sarif = tmp_path / "out.sarif"
    assert main(["lint", str(v1), "-q", "-f", "sarif", "-o", str(sarif)]) == 0
    run = json.loads(sarif.read_text())["runs"][0]
    (result,) = [r for r in run["results"] if r["ruleId"] == "model/warning"]
    assert result["level"] == "warning" and result["message"]["text"].startswith(DEPRECATED)
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 8, "startColumn": 7}
    assert "model/warning" in [rule["id"] for rule in run["tool"]["driver"]["rules"]]


def test_a_model_without_warnings_prints_none(tmp_path, capsys):
    path = tmp_path / "v2.yaml"
    path.write_text(V1.replace("    next:\n", "    next_any:\n"))
    assert main(["lint", str(path), "-q"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_import_mermaid_writes_the_current_form(tmp_path):
    chart = tmp_path / "flow.mmd"
    chart.write_text("graph TD\n  A[Draw] --> B{Attack?}\n  B -->|yes| C[Combat]\n  B -->|no| D[End]\n"
                     "  C --> D\n  D ==> A\n")
    out = tmp_path / "skeleton.yaml"
    assert main(["import-mermaid", str(chart), "-o", str(out), "-q"]) == 0
    assert "next_any:" in out.read_text()
    _model, warnings = check_model(str(out))
    assert warnings == []


THING = "names a thing, but a bool's label names the state it is true in"


@pytest.mark.parametrize(("label", "per", "warned"), [
    ("protection", "player", True), ("shields", "player", True), ("readiness", "[player, 1..2]", True),
    ("protected", "player", False), ("under protection", "player", False), ("the winner", "player", False),
    ("ready", "player", False), ("anxious", "player", False), ("mana", "player", False),
    ("protection", "1..2", False),             # not a player's element: traces read `protection[1]`
])
def test_a_bool_label_that_names_a_thing_is_warned_of(tmp_path, capsys, label, per, warned):
    """`player 0 is protection` reads wrong: a one-word noun (a noun ending, a plural) as a per-player bool's
    label is a warning at the label, with how to word it; a phrase or another word is taken as written."""
    path = tmp_path / "flag.yaml"
    path.write_text(V1.replace("  x: {type: 0..2, init: 0}\n",
                               f"  x: {{type: 0..2, init: 0}}\n  f: {{type: bool, per: {per}, init: false, "
                               f"label: {label}}}\n").replace("    next:\n", "    next_any:\n"))
    assert main(["lint", str(path), "-q"]) == 0
    err = capsys.readouterr().err
    assert (THING in err) == warned, err
    if warned:
        assert f"{where(path, label)}: warning: variable f's label '{label}' {THING}" in err
        assert "hint: word it as the state" in err


def test_no_shipped_model_or_example_has_a_bool_label_that_names_a_thing():
    root = Path(__file__).parent.parent
    for path in sorted(root.glob("models/*.yaml")) + sorted(root.glob("examples/models/*.yaml")):
        _model, warnings = check_model(str(path))
        assert not [w for w in warnings if THING in w.message], path


OVER_AT_ONCE = """\
model: over_at_once
variables:
  deck: {type: 0..2}
  hand: {type: 0..2, init: 0}
initially: "deck + hand <= 2"
end: "deck == 0"
actions:
  - name: draw
    when: "deck > 0"
    do: {deck: deck - 1, hand: hand + 1}
"""


def test_a_game_over_in_initial_states_is_warned_of(tmp_path, capsys):
    """`end:` holding in initial states (a deal that leaves the deck empty: the new user's first Lost
    Cities deal let the undealt cards lie anywhere, and 810 of its 1,440 deals were over at once;
    only simulate's median length of 0 steps showed it): a warning at `end:` with the count. A model
    whose initial states all allow play has none."""
    path = tmp_path / "over.yaml"
    path.write_text(OVER_AT_ONCE)
    _model, warnings = check_model(str(path))
    (warning,) = warnings
    assert warning.message == "end: holds in 1 of the 3 initial states: the game is over before any move there"
    assert f"{warning.span.file}:{warning.span.line}:{warning.span.col}" == where(path, "deck == 0")
    assert main(["lint", str(path), "-q"]) == 0 and "end: holds in 1 of the 3" in capsys.readouterr().err
    path.write_text(OVER_AT_ONCE.replace('initially: "deck + hand <= 2"', 'initially: "deck > 0"'))
    assert not check_model(str(path))[1]
