"""Budgets bound the whole run, and what a budget cut short is UNKNOWN (exit 3), in the claims
and in the consistency analyses alike: never 'no findings'."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.cli import main

DEEP = """\
model: deep
doc: a counter that runs to 5000, where play is stuck
variables:
  n: {type: 0..5000, init: 0}
actions:
  - name: step
    when: "n < 5000"
    do: {n: n + 1}
    rule: "Count: one more"
"""


@pytest.fixture
def deep(tmp_path) -> str:
    path = tmp_path / "deep.yaml"
    path.write_text(DEEP, encoding="utf-8")
    return str(path)


def test_a_budget_that_cuts_the_analyses_short_is_unknown_not_success(deep, capsys):
    code = main(["check", deep, "--no-properties", "--max-states", "1000", "-q", "-f", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 3
    assert doc["as_expected"] is False
    assert doc["analyses"][0]["complete"] is False and "1,000 states" in doc["analyses"][0]["reason"]


def test_lint_under_a_budget_says_unknown(deep, capsys):
    code = main(["lint", deep, "--max-states", "1000", "-q"])
    out = capsys.readouterr().out
    assert code == 3 and "UNKNOWN" in out and "No consistency findings" not in out


def test_without_the_budget_the_deadlock_is_found(deep, capsys):
    code = main(["lint", deep, "-q"])
    out = capsys.readouterr().out
    assert code == 1 and "deadlock" in out
