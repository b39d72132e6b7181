"""Readings analysed in forked children give exactly the findings of analysing them in turn,
and a child that fails leaves the work to the parent."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from verifier.analysis import analyse_model, background
from verifier.engines.base import Budget
from verifier.lang import load_model
from verifier.runner import check_model

ROOT = Path(__file__).resolve().parent.parent
needs_fork = pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(),
                                reason="no fork on this platform: the analyses always run in the parent")


def findings(monkeypatch, fork: bool):
    monkeypatch.setattr(background, "can_fork", lambda: fork)
    runs = check_model(str(ROOT / "models" / "aeons_end.yaml"))
    return [f for r in runs for f in r.findings]


@needs_fork
def test_background_and_inline_analyses_agree(monkeypatch):
    inline = findings(monkeypatch, False)
    assert inline and findings(monkeypatch, True) == inline


@needs_fork
def test_a_failing_child_leaves_the_work_to_the_parent():
    parent = os.getpid()

    def analyse(model, budget, memo):
        if os.getpid() != parent:
            raise RuntimeError("lost in the child")
        return analyse_model(model, budget, memo)

    model = load_model(str(ROOT / "tests" / "fixtures" / "analysis" / "dead_yes.yaml"))
    job = background.Job(analyse, model, Budget(), {}, fork=True)
    ctx, got = job.result()
    assert job.process is None                  # the child's failure was seen
    assert got == analyse_model(model)[1] and ctx.complete
