"""No reading starts from another reading's Z3 answers (issue #25): which reading of a model
finished first depends on the load, so what each finds must not depend on it."""
from __future__ import annotations

from test_analysis_support import fixture

from verifier import forking, runner
from verifier.runner import RunOptions, check_loaded, claims_for, load_variants


def test_each_reading_starts_from_the_callers_answers_and_those_asked_ahead_only(monkeypatch):
    """Every reading starts from the same answers: the caller's, and the order-dependence queries of
    every reading asked ahead of them, in the readings' order (`runner._ask_ahead`)."""
    from verifier.analysis.order_dependence import ask_ahead

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
    ahead: dict = {}
    ask_ahead(models, options.budget, ahead)
    assert started == [sorted(map(repr, ahead))] * len(models) and ahead
    assert memo, "the readings' answers are gathered for the caller"


def test_the_readings_answers_reach_the_caller_in_the_readings_order(monkeypatch):
    """Where two readings answer one question differently, the caller keeps the later reading's
    answer whichever of them finished first (here the last reading finishes first)."""
    path = fixture("variants_yes")
    options = RunOptions()
    models, _ = load_variants(path, options)
    reading = runner._reading

    def answering(path, model, claims, options, progress, memo, *rest):
        run, analysed = reading(path, model, claims, options, progress, memo, *rest)
        analysed[0].memo[("probe",)] = {"answer": model.variant}
        return run, analysed

    def last_first(fn, items, workers=None, arrived=None, fresh=False):
        results = {k: fn(k) for k in reversed(items)}
        for k in reversed(items):
            if arrived is not None:
                arrived(results[k])
        return [results[k] for k in items]

    monkeypatch.setattr(runner, "_reading", answering)
    monkeypatch.setattr(runner, "fork_map", last_first)
    memo: dict = {}
    check_loaded(path, models, [claims_for(path, m, options) for m in models], options, memo=memo)
    assert memo[("probe",)] == {"answer": models[-1].variant}
