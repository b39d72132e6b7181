"""One reading's claims spend at most a total of Z3 resource units together (issue #25): each claim has
its own units (--rlimit, default 120,000,000), and the reading's claims together READING_CLAIMS times
that, so a model with many claims no method decides ends in units, not at the deadline. The units are
Z3's own count: which claims the total leaves open does not depend on the machine or its load."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from verifier.cli import main
from verifier.engines.symbolic import engine as symbolic
from verifier.resources import Budget

FIXTURES = Path(__file__).parent / "fixtures" / "core"
MODEL, PROPS = str(FIXTURES / "mini.yaml"), str(FIXTURES / "mini_props.yaml")
TOTAL = 20_000        # far less than the first claim needs (hand-limit-after-discard: 270,000 to 670,000 units)


SETUP = f"""
import json
from verifier.engines.symbolic import SymbolicEngine
from verifier.engines.symbolic import engine as symbolic
from verifier.lang import load_properties
from verifier.resources import Budget, UnitsSpent
from verifier.runner import RunOptions, load_variants
(model,), _ = load_variants({MODEL!r}, RunOptions(variant="loose"))
props = load_properties({PROPS!r}, model)
def words(results):
    return [[r.verdict.name, r.stop and [r.stop.kind.name, r.stop.owner, r.stop.words], r.stats.z3_units]
            for r in results]
"""


def in_a_fresh_process(code: str):
    """What `code` prints as JSON, run after SETUP in an interpreter of its own: these tests compare Z3
    runs, which must not share a process with what other tests left in Z3's global state (its memory
    bound, its context) on the same worker."""
    done = subprocess.run([sys.executable, "-c", SETUP + code], capture_output=True, text=True,
                          cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_default_total_is_four_claims_worth():
    assert symbolic.reading_total(Budget(), symbolic.DEFAULT_RLIMIT) == 4 * 120_000_000
    assert symbolic.reading_total(Budget(rlimit=5_000_000), symbolic.DEFAULT_RLIMIT) == 20_000_000


def test_claims_past_the_reading_total_are_unknown_and_name_it():
    (first, *rest), spent = in_a_fresh_process(f"""
symbolic.reading_total = lambda _budget, _default: {TOTAL}
spent = UnitsSpent()
print(json.dumps([words(SymbolicEngine(reading=spent).check(model, props, Budget())), spent.spent]))
""")
    owner = f"the Z3 units of one reading's claims together ({TOTAL:,}: 4 times the default units per claim)"
    verdict, (kind, who, said), _units = first
    assert (verdict, kind, who) == ("UNKNOWN", "RLIMIT", owner)
    assert said.startswith(f"{owner} ran out during this claim ({TOTAL:,} were left)")
    assert rest and all(r[0] == "UNKNOWN" and r[1] == ["RLIMIT", owner, f"not tried: {owner} were spent on the "
                                                                           f"claims before it"] for r in rest)
    assert spent >= TOTAL


def test_within_the_total_the_claims_decide_as_without_one():
    alone, together, spent = in_a_fresh_process("""
alone = SymbolicEngine().check(model, props, Budget())
spent = UnitsSpent()
together = SymbolicEngine(reading=spent).check(model, props, Budget())
print(json.dumps([words(alone), words(together), spent.spent]))
""")
    assert [r[0] for r in together] == [r[0] for r in alone]
    assert 0 < spent == sum(r[2] or 0 for r in together)


def test_the_command_says_which_total_left_the_claims_open(monkeypatch, capsys):
    monkeypatch.setattr(symbolic, "reading_total", lambda _budget, _default: TOTAL)
    code = main(["check", MODEL, "-p", PROPS, "--variant", "loose", "--engine", "symbolic", "--no-consistency",
                 "-q", "-f", "json"])
    out = capsys.readouterr()
    assert code == 3
    stops = {r["stop"]["owner"] for r in json.loads(out.out)["results"] if r["verdict"] == "UNKNOWN"}
    assert any(s.startswith("the Z3 units of one reading's claims together") for s in stops)
    assert "stopped by the Z3 units of one reading's claims together" in " ".join(out.err.split())
