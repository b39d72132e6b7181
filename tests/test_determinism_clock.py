"""A starved run is one whose clock runs fast: every look at the clock finds much more time gone.
Effort is counted in states, steps and Z3 resource units, and only the backstop reads the clock
(issue #25), so such a run decides the same claims the same way as one whose clock stands still,
until the backstop itself cuts; the run then says so and exits 3. Nothing here waits on a clock:
the run's clock (`signals.run_clock`) is one this file moves."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier import runner
from verifier.cli import main
from verifier.resources import ManualClock, signals

FIXTURES = Path(__file__).parent / "fixtures" / "core"
MODEL = str(FIXTURES / "mini.yaml")
FOR_EVERY = """
  - id: hand-within-its-range
    says: "No hand holds more than four cards, however many cards the decks hold"
    invariant: "hand[0] <= 4 and hand[1] <= 4"
    for_every: [DECK]
"""


class Racing(ManualClock):
    """A clock that moves `step` seconds each time it is read: the run as if it were starved of CPU."""

    def __init__(self, step: float):
        super().__init__(0.0)
        self.step, self.reads = step, 0

    def now(self) -> float:
        self.reads += 1
        self.at += self.step
        return self.at


@pytest.fixture
def claims(tmp_path: Path) -> str:
    """The fixture's claims (explicit searches, a monitor product, a termination claim) and one that
    holds for every deck size (the symbolic engine's Z3 units)."""
    path = tmp_path / "claims.yaml"
    path.write_text((FIXTURES / "mini_props.yaml").read_text() + FOR_EVERY)
    return str(path)


def _check(clock: ManualClock, claims: str, timeout: str, capsys) -> tuple[int, dict, str]:
    with signals.run_clock(clock):
        code = main(["check", MODEL, "-p", claims, "--variant", "loose", "--timeout", timeout, "-q", "-f", "json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def _untimed(doc):
    if isinstance(doc, dict):
        return {k: _untimed(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [_untimed(v) for v in doc]
    return doc


@pytest.fixture
def here(monkeypatch):
    """The reading and its analyses in this process, one after the other (the clock is this process's)."""
    monkeypatch.setattr(runner, "free_cpus", lambda: 1)


def test_a_starved_run_decides_as_a_run_whose_clock_stands_still(claims, capsys, here):
    code, still, _err = _check(ManualClock(0.0), claims, "1e7", capsys)
    starved = Racing(step=1000.0)
    code_starved, doc, _err = _check(starved, claims, "1e7", capsys)
    assert code == code_starved
    assert starved.reads > 2                                   # the backstop looked, and found much time gone
    assert _untimed(doc) == _untimed(still)
    assert {r["engine"] for r in doc["results"]} >= {"explicit/python", "k-induction"}


def test_the_backstop_cuts_a_starved_run_where_a_quiet_one_passes_and_says_so(claims, capsys, here):
    quiet = Racing(step=1.0)
    _code, decided, _err = _check(quiet, claims, "1e7", capsys)
    timeout = quiet.reads / 2 / (1 - signals.RESERVE)            # the engines' backstop halfway through the run
    code, doc, err = _check(Racing(step=1.0), claims, f"{timeout:g}", capsys)
    assert code == 3
    words = f"cut short by --timeout ({timeout:g} s)"
    by_id = {r["id"]: r for r in _untimed(decided["results"])}
    cut = [r for r in doc["results"] if r["verdict"] == "UNKNOWN"]
    assert all(r["reason"] == words and r["stop"]["kind"] == "backstop" for r in cut)
    assert all(r == by_id[r["id"]] for r in _untimed(doc["results"]) if r["verdict"] != "UNKNOWN")
    assert cut or words in doc["analyses"][0]["reason"]
    assert "--timeout" in err


def test_a_claim_explicit_search_cannot_decide_stops_at_its_store_cap_named():
    """`--engine explicit` without --max-states searches up to its store's cap (never to the memory
    limit or the backstop), and the claim left open says whose cap it was."""
    from verifier.engines.explicit import ExplicitEngine
    from verifier.engines.ledger import Ledger
    from verifier.lang import load_properties
    from verifier.portfolio.decide import Portfolio
    from verifier.portfolio.stores import Caps
    from verifier.resources import Budget, StopKind
    from verifier.runner import RunOptions, load_variants

    (model,), _ = load_variants(MODEL, RunOptions(variant="loose"))
    claims = [c for c in load_properties(str(FIXTURES / "mini_props.yaml"), model) if c.id == "hand-limit-after-discard"]
    into: dict = {}
    Portfolio(ExplicitEngine(), Budget(), Ledger(), caps=Caps.every_store(20)).decide(model, claims, into)
    (result,) = into.values()
    assert result.verdict.value == "UNKNOWN" and result.stop is not None
    assert (result.stop.kind, result.stop.owner) == (StopKind.STATES, "the python store's cap")
    assert "20 states" in result.stop.words


def test_after_a_cut_no_verdict_keeps_a_trace_a_quiet_run_would_not_give():
    """The backstop stops the search of a counter halfway to the state that breaks the claim: nothing then
    goes on to random runs, which would find it with a longer trace than the search's (and hand it to the
    ledger, which keeps it past the cut); what the cut run keeps is what the quiet run decided, trace and all."""
    from verifier.engines.ledger import Ledger
    from verifier.ir.expr import App, Const, Op, Var
    from verifier.ir.model import Action, Assign, IntType, Model, Variable
    from verifier.ir.props import Invariant
    from verifier.portfolio.auto import AutoEngine
    from verifier.portfolio.decide import Portfolio
    from verifier.resources import Backstop, Budget
    from verifier.resources.signals import OutOfTime

    x, y = Var("x"), Var("y")

    def move(name: str, var: Var, op: Op, guard: App) -> Action:
        return Action(name, guard, (Assign(var, App(op, (var, Const(1)))),))

    model = Model("counters", variables=tuple(Variable(v, IntType(Const(0), Const(30)), init=(Const(0),)) for v in "xy"),
                  actions=(move("x-up", x, Op.ADD, App(Op.LT, (x, Const(30)))),
                           move("x-down", x, Op.SUB, App(Op.GT, (x, Const(0)))),
                           move("y-up", y, Op.ADD, App(Op.LT, (y, Const(30)))),
                           move("y-down", y, Op.SUB, App(Op.GT, (y, Const(0))))))
    claims = [Invariant(id="x-below-top", expr=App(Op.LT, (x, Const(30))))]

    def decide(budget: Budget) -> dict:
        ledger, into = Ledger(), {}
        try:
            Portfolio(AutoEngine(ledger=ledger), budget, ledger).decide(model, claims, into)
        except OutOfTime:
            pass
        return into

    quiet = decide(Budget())["x-below-top"]
    assert quiet.verdict.value == "VIOLATED" and quiet.trace is not None and len(quiet.trace) == 30   # x: 0 to 30
    clock = Racing(step=1.0)
    cut = decide(Budget(backstop=Backstop(2.0, "--timeout (1 s)", clock)))    # expires at the search's 2nd look
    assert clock.reads >= 2
    assert all(r.verdict.value == "UNKNOWN" or (r.verdict, r.trace) == (quiet.verdict, quiet.trace)
               for r in cut.values())
