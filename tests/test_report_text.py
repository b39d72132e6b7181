"""The terminal report: a claim's `why` (why the rules break it) is shown only under the
readings where the violation is expected."""
from __future__ import annotations

from pathlib import Path

from verifier.cli import main

MINI = str(Path(__file__).parent / "fixtures" / "core" / "mini.yaml")
CLAIM = """claims:
  - id: empty-hand
    says: "player 0 never holds a card"
    invariant: "hand[0] == 0"
    expected: {strict: HOLDS, loose: VIOLATED}
    why: "WHY-MARK"
"""


def test_why_only_where_the_violation_is_expected(tmp_path, capsys):
    props = tmp_path / "claims.yaml"
    props.write_text(CLAIM, encoding="utf-8")
    assert main(["check", MINI, "-p", str(props), "--engine", "explicit", "--no-consistency"]) == 1
    out = capsys.readouterr().out
    assert out.count("empty-hand: VIOLATED") == 2                    # violated under both readings
    assert out.count("(expected: WHY-MARK)") == 1                    # but expected only under loose
