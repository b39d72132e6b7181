"""Shared helpers of the analysis tests (no tests of its own): load a fixture model with all its
variants, run the analyses, and check that every trace a finding carries replays."""
from __future__ import annotations

from pathlib import Path

from verifier.analysis import consistency_findings
from verifier.lang import load_model
from verifier.resources import Budget
from verifier.semantics import layout
from verifier.trace import replay

FIXTURES = Path(__file__).parent / "fixtures" / "analysis"


def fixture(name: str) -> str:
    return str(FIXTURES / f"{name}.yaml")


def load_all(path: str, params: dict | None = None):
    first = load_model(path, params)
    if len(first.variants) < 2:
        return [first]
    return [first] + [load_model(path, params, v.name) for v in first.variants[1:]]


def analyse(name_or_path: str, params: dict | None = None, budget: Budget = Budget(), results=None):
    path = name_or_path if name_or_path.endswith(".yaml") else fixture(name_or_path)
    models = load_all(path, params)
    findings = consistency_findings(models, results or [[] for _ in models], budget)
    assert_replay(models, findings)
    return findings


def model_of(models, variant):
    for m in models:
        if m.variant == variant:
            return m
    return models[0]


def assert_replay(models, findings) -> None:
    """Every trace of every finding replays on the model of its variant (the first for None)."""
    for f in findings:
        if not f.traces:
            continue
        lay = layout(model_of(models, f.variant).instantiate())
        for trace in f.traces:
            replay(lay, trace)


def of_kind(findings, kind: str) -> dict:
    return {f.subject: f for f in findings if f.kind == kind}
