"""No reading starts from another reading's Z3 answers (issue #25): which reading of a model
finished first depends on the load, so what each finds must not depend on it."""
from __future__ import annotations

from test_analysis_support import fixture

from verifier import forking, runner
from verifier.runner import RunOptions, check_loaded, claims_for, load_variants


def test_each_reading_starts_from_the_callers_answers_only(monkeypatch):
    path = fixture("variants_yes")
    options = RunOptions()
    models, _ = load_variants(path, options)
    assert len(models) >= 2
    started: list[list] = []
    reading = runner._reading

    def spy(path, model, claims, options, progress, memo, *rest):
        started.append(sorted(map(repr, memo)))
        return reading(path, model, claims, options, progress, memo, *rest)

    monkeypatch.setattr(runner, "_reading", spy)
    def here(fn, items, arrived=None, fresh=False):     # the readings in this process, to spy on them
        return forking.fork_map(fn, items, 1, arrived)

    monkeypatch.setattr(runner, "fork_map", here)
    memo: dict = {}
    check_loaded(path, models, [claims_for(path, m, options) for m in models], options, memo=memo)
    assert started == [[]] * len(models)
    assert memo, "the readings' answers are gathered for the caller"
