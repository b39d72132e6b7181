"""One reading's claims spend at most a total of Z3 resource units together (issue #25): each claim has
its own units (--rlimit, default 120,000,000), and the reading's claims together READING_CLAIMS times
that, so a model with many claims no method decides ends in units, not at the deadline. The units are
Z3's own count: which claims the total leaves open does not depend on the machine or its load."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.engines.symbolic import SymbolicEngine
from verifier.engines.symbolic import engine as symbolic
from verifier.lang import load_properties
from verifier.resources import Budget, StopKind, UnitsSpent
from verifier.result import Verdict
from verifier.runner import RunOptions, load_variants

FIXTURES = Path(__file__).parent / "fixtures" / "core"
MODEL, PROPS = str(FIXTURES / "mini.yaml"), str(FIXTURES / "mini_props.yaml")
TOTAL = 20_000        # far less than the first claim needs (hand-limit-after-discard: 270,000 to 670,000 units)


@pytest.fixture
def claims():
    (model,), _ = load_variants(MODEL, RunOptions(variant="loose"))
    return model, load_properties(PROPS, model)


def test_the_default_total_is_four_claims_worth():
    assert symbolic.reading_total(Budget(), symbolic.DEFAULT_RLIMIT) == 4 * 120_000_000
    assert symbolic.reading_total(Budget(rlimit=5_000_000), symbolic.DEFAULT_RLIMIT) == 20_000_000


def test_claims_past_the_reading_total_are_unknown_and_name_it(claims, monkeypatch):
    model, props = claims
    monkeypatch.setattr(symbolic, "reading_total", lambda _budget, _default: TOTAL)
    spent = UnitsSpent()
    first, *rest = SymbolicEngine(reading=spent).check(model, props, Budget())
    owner = f"the Z3 units of one reading's claims together ({TOTAL:,}: 4 times the default units per claim)"
    assert first.verdict is Verdict.UNKNOWN and first.stop is not None
    assert (first.stop.kind, first.stop.owner) == (StopKind.RLIMIT, owner)
    assert first.stop.words.startswith(f"{owner} ran out during this claim ({TOTAL:,} were left)")
    assert rest and all(r.verdict is Verdict.UNKNOWN and r.stop is not None and r.stop.owner == owner
                        and r.stop.words == f"not tried: {owner} were spent on the claims before it" for r in rest)
    assert spent.spent >= TOTAL


def test_within_the_total_the_claims_decide_as_without_one(claims):
    model, props = claims
    alone = SymbolicEngine().check(model, props, Budget())
    spent = UnitsSpent()
    together = SymbolicEngine(reading=spent).check(model, props, Budget())
    assert [r.verdict for r in together] == [r.verdict for r in alone]
    assert 0 < spent.spent == sum(r.stats.z3_units or 0 for r in together)


def test_the_command_says_which_total_left_the_claims_open(monkeypatch, capsys):
    monkeypatch.setattr(symbolic, "reading_total", lambda _budget, _default: TOTAL)
    code = main(["check", MODEL, "-p", PROPS, "--variant", "loose", "--engine", "symbolic", "--no-consistency",
                 "-q", "-f", "json"])
    out = capsys.readouterr()
    assert code == 3
    stops = {r["stop"]["owner"] for r in json.loads(out.out)["results"] if r["verdict"] == "UNKNOWN"}
    assert any(s.startswith("the Z3 units of one reading's claims together") for s in stops)
    assert "stopped by the Z3 units of one reading's claims together" in " ".join(out.err.split())
