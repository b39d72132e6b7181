"""The search ledger is plain data read between the portfolio's steps (issue #25): no callback tells
anyone that a search was kept; the runner restarts the analyses beside the claims after the step that
left the model's complete search in the ledger, once, so that they run on that search."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from verifier import runner
from verifier.engines.ledger import Ledger
from verifier.portfolio.decide import Portfolio, make_engine
from verifier.portfolio.plan import Step
from verifier.resources import Budget
from verifier.runner import RunOptions, check_model

FIXTURES = Path(__file__).parent / "fixtures" / "props"
MODEL = str(FIXTURES / "order.yaml")
OPTIONS = RunOptions(variant="strict", properties=str(FIXTURES / "order_props.yaml"))


def test_a_ledger_holds_data_only():
    assert [f.name for f in dataclasses.fields(Ledger)] == ["wanted", "compiled", "record", "graph_wanted", "graphs",
                                                            "products", "stored", "keeps_capped", "capped", "mined"]
    assert not any(callable(getattr(Ledger(), f.name)) for f in dataclasses.fields(Ledger))


def test_the_analyses_beside_restart_once_on_the_kept_search(monkeypatch):
    ledgers: list[Ledger] = []
    restarts: list[bool] = []

    class Keeping(Ledger):
        @classmethod
        def keeping(cls, models, capped=False):
            ledgers.append(Ledger.keeping(models, capped))
            return ledgers[-1]

    class Beside:
        """In place of the forked child: runs the analyses when restarted, on what the ledger holds then."""

        def __init__(self, run: Callable, again: Callable):
            self.run, self.answer = run, None

        def restart(self) -> None:
            restarts.append(all(space is not None for space in ledgers[-1].wanted.values()))
            self.answer = self.run()

        def result(self):
            return self.answer if self.answer is not None else self.run()

        def close(self) -> None:
            pass

    monkeypatch.setattr(runner, "Ledger", Keeping)
    monkeypatch.setattr(runner, "Alongside", Beside)
    monkeypatch.setattr(runner, "free_cpus", lambda: 2)
    (beside,) = check_model(MODEL, OPTIONS)
    assert restarts == [True]                        # once, with the claims' complete search kept
    monkeypatch.setattr(runner, "free_cpus", lambda: 1)
    (after,) = check_model(MODEL, OPTIONS)
    assert restarts == [True]                        # no analyses beside: after the claims, in this process
    assert [(r.property.id, r.verdict) for r in beside.results] == [(r.property.id, r.verdict) for r in after.results]
    assert beside.findings == after.findings


def test_the_portfolio_yields_after_each_step_with_its_results_in_place():
    from verifier.lang import load_properties
    from verifier.runner import load_variants

    (model,), _ = load_variants(MODEL, OPTIONS)
    claims = load_properties(OPTIONS.properties, model)
    concrete = model.instantiate()
    ledger = Ledger.keeping([concrete])
    into: dict = {}
    seen = []
    for step in Portfolio(make_engine("auto", ledger=ledger), Budget(), ledger).steps(model, claims, into):
        seen.append((step, len(into), ledger.search_of(concrete) is not None))
    assert seen[0][0] is Step.DIRECT and seen[0][2]              # the model's own search, kept at the first step
    assert [n for _step, n, _kept in seen] == sorted(n for _step, n, _kept in seen)   # results only accrue
    assert set(into) == {c.id for c in claims}
