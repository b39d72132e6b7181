"""Each shipped game at its printed numbers, every reading (`check --printed`): every claim decided
as expected, the consistency analyses complete, and every finding one the model documents (issue 26:
no false findings at the printed numbers). With --slow: 18 to 450 s of CPU a game, so the default
suite checks the games at their defaults instead (`test_analysis_shipped.py`)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
GAMES = sorted(p.stem for p in (ROOT / "models").glob("*.yaml"))


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_the_game_at_its_printed_numbers_is_decided_and_its_findings_documented(game, tmp_path):
    out = tmp_path / "run.json"
    done = subprocess.run([sys.executable, "-m", "verifier", "check", f"models/{game}.yaml", "--printed",
                           "--timeout", "none", "-q", "-f", "json", "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    run = json.loads(out.read_text(encoding="utf-8"))
    assert run["as_expected"] and all(r["verdict"] != "UNKNOWN" for r in run["results"])
    assert all(a["complete"] for a in run["analyses"]), run["analyses"]
    assert [f["message"] for f in run["findings"] if not f["acknowledged"]] == []
    assert not [f for f in run["findings"] if f["kind"] in ("order-dependence", "nondeterministic-must")]
