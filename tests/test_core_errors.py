"""Bad input: one clear message with file:line:col, the offending line, a caret and a hint; exit 2."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from verifier.cli import main

MINI = Path(__file__).parent / "fixtures" / "core" / "mini.yaml"
PROPS = Path(__file__).parent / "fixtures" / "core" / "mini_props.yaml"


def broken(tmp_path: Path, old: str, new: str, source: Path = MINI) -> Path:
    text = source.read_text()
    assert old in text, old
    path = tmp_path / source.name
    path.write_text(text.replace(old, new, 1))
    return path


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(["check", *argv, "--no-consistency", "--quiet"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


CASES = [
    # (what, old, new, needle on the reported line, message part, hint part)
    ("malformed YAML", "players: 2", "players: 2: 3", "players", "malformed YAML", "indentation"),
    ("unknown field", "players: 2", "playerz: 2", "playerz", "unknown field 'playerz'", "did you mean 'players'"),
    ("bad expression", 'when: "hand[active] > 0"', 'when: "hand[active] >> 0"', "hand[active] >> 0",
     "cannot parse expression", "expected"),
    ("type mismatch", 'when: "hand[active] > 0"', 'when: "hand[active] + 1"', "hand[active] + 1",
     "expected a boolean, found an integer", "compare"),
    ("unknown name", 'when: "hand[active] > 0"', 'when: "hnad[active] > 0"', "hnad", "unknown name 'hnad'",
     "did you mean 'hand'"),
    ("array without index", 'when: "hand[active] > 0"', 'when: "hand > 0"', "hand > 0", "is an array",
     "index it"),
    ("duplicate name", "constants:", "enums:\n  Size: [hand, other]\nconstants:", "  hand: {type",
     "duplicate name 'hand'", "its own name"),
    ("unknown type", "type: 0..4, per: player", "type: int4, per: player", "int4", "unknown type 'int4'",
     "a type is bool"),
    ("static out of range", "      drawn: true", "      drawn: true\n      deck[0]: 99", "deck[0]: 99",
     "outside its range", "widen"),
    ("unknown phase of an action", "    phase: Play\n", "    phase: Plya\n", "name: play", "unknown phase 'Plya'",
     "leaf phases"),
]


@pytest.mark.parametrize("what,old,new,needle,message,hint", CASES, ids=[c[0] for c in CASES])
def test_model_errors(tmp_path, capsys, what, old, new, needle, message, hint):
    path = broken(tmp_path, old, new)
    code, err = run(capsys, str(path), "-p", str(PROPS))
    assert code == 2
    assert message in err
    assert "hint: " in err and hint in err
    assert f"{path}:{line_of(path, needle)}:" in err
    assert "^" in err   # the caret line under the offending text


def test_unreachable_phase(tmp_path, capsys):
    path = broken(tmp_path, "  - name: Play\n", "  - name: Draw2\n    next: [{to: Discard}]\n  - name: Play\n")
    path.write_text(path.read_text().replace("rule: \"Draw: the active player draws\"",
                                             "rule: \"Draw: the active player draws\"\n    next: [{to: Discard}]"))
    code, err = run(capsys, str(path), "-p", str(PROPS))
    assert code == 2 and "can never be entered" in err


def test_property_errors(tmp_path, capsys):
    props = broken(tmp_path, "invariant: \"not drawn", "invarient: \"not drawn", PROPS)
    code, err = run(capsys, str(MINI), "-p", str(props))
    assert code == 2 and "unknown field 'invarient'" in err and "did you mean 'invariant'" in err
    assert f"{props}:{line_of(props, 'invarient')}:" in err


def test_missing_file(capsys):
    code, err = run(capsys, "models/no-such-game.yaml")
    assert code == 2 and "no such file: models/no-such-game.yaml" in err and "hint:" in err


def test_unknown_parameter_and_variant(capsys):
    code, err = run(capsys, str(MINI), "--param", "DEKC=3")
    assert code == 2 and "unknown parameter 'DEKC'" in err and "DECK" in err
    code, err = run(capsys, str(MINI), "--variant", "lenient")
    assert code == 2 and "unknown variant 'lenient'" in err and "strict, loose" in err
    code, err = run(capsys, str(MINI), "--param", "DECK=many")
    assert code == 2 and "not an integer" in err


def test_nothing_written_on_error(tmp_path, capsys):
    path = broken(tmp_path, "players: 2", "players: 2: 3")
    out = tmp_path / "out.json"
    code, _ = run(capsys, str(path), "--format", "json", "-o", str(out))
    assert code == 2 and not out.exists() and not list(tmp_path.glob(".out.json*"))


def test_no_traceback_from_the_console_script(tmp_path):
    path = broken(tmp_path, "players: 2", "playerz: 2")
    proc = subprocess.run([sys.executable, "-m", "verifier", "check", str(path), "--no-consistency"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "unknown field" in proc.stderr
