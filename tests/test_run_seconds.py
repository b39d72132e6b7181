"""A run's seconds (the summary's `..., 12.34 s`) count the consistency analyses too: `check` of a
model without claims said `0.00 s` after 48 s of CPU (issue #27), as the time was taken before
the analyses ran. The clock here is a counter the analyses advance: no real time is measured."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from verifier import forking, runner
from verifier.runner import RunOptions, check_model

MINI = Path(__file__).resolve().parent / "fixtures" / "core" / "mini.yaml"


def test_the_seconds_of_a_run_without_claims_count_its_analyses(monkeypatch):
    clock = [0.0]
    real = runner._analyses

    def analyses_taking_a_minute(*args, **kwargs):
        clock[0] += 60.0
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    monkeypatch.setattr(runner, "_analyses", analyses_taking_a_minute)
    monkeypatch.setattr(forking, "free_cpus", lambda: 1)    # the readings here, one after the other
    monkeypatch.setattr(runner, "free_cpus", lambda: 1)     # the analyses here, after the claims
    runs = check_model(str(MINI), RunOptions(use_properties=False))
    assert runs and all(not run.results and run.seconds == 60.0 for run in runs)
