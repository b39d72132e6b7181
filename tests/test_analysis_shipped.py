"""The analyses end to end: through the runner on the core fixture, and over the shipped games."""
from __future__ import annotations

from pathlib import Path

import pytest
from shipped_runs import GAMES, on_its_worker, runs_of
from test_analysis_support import assert_replay
from test_expr_words import bare_numbers

from verifier.analysis import KINDS
from verifier.runner import RunOptions, check_model

ROOT = Path(__file__).resolve().parents[1]


def test_runner_routes_findings_to_their_reading():
    runs = check_model(str(ROOT / "tests/fixtures/core/mini.yaml"),
                       RunOptions(engine="explicit", use_properties=False))
    strict, loose = runs
    assert [r.model.variant for r in runs] == ["strict", "loose"]
    keys = {(f.key, f.variant) for f in strict.findings}
    # found under both readings: once, on the first run, with variant None
    assert ("nondeterministic-must:draw", None) in keys
    # only the strict reading's Discard demand is dead (it draws only while below the limit)
    assert ("dead-rule:discard", "strict") in keys
    assert {f.variant for f in loose.findings} == {"loose"}
    assert "variant-difference:loose|strict" in {f.key for f in loose.findings}
    assert_replay([r.model for r in runs], [f for r in runs for f in r.findings])
    assert not check_model(str(ROOT / "tests/fixtures/core/mini.yaml"),
                           RunOptions(engine="explicit", use_properties=False, consistency=False))[0].findings


@pytest.mark.parametrize("game", [on_its_worker(game) for game in GAMES])
def test_shipped_games(game):
    """The analyses as `turnproof check` runs them on a shipped game (after its claims, on the
    state space their search kept; the game's check is shared with its pinned verdicts)."""
    runs = runs_of(game)
    assert not any(run.analyses_unknown for run in runs), game
    findings = [f for run in runs for f in run.findings]
    assert_replay([run.model for run in runs], findings)
    for f in findings:
        assert f.kind in KINDS and f.message.endswith(".") and f.scope and f.engine
        assert f.rules or f.kind == "deadlock", f.key
    # what a finding or a vacuity warning quotes names the values the model names (`mode is attack`)
    for run in runs:
        quoted = [f.message for f in run.findings] + [str(v) for f in run.findings for v in f.evidence.values()]
        quoted += [v.text for v in run.vacuous]
        assert not [b for q in quoted for b in bare_numbers(run.model, q)], game
