"""The --timeout shared among the claims (`props/schedule.py`, `runner`) and, within one
`auto` call, between the explicit search and Z3: a search too large to finish within the
time does not take all of it, a hard claim does not starve the claims after it, and what
the time cuts short stays UNKNOWN."""
from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import DEEP_COUNTER

from verifier import runner, signals
from verifier.cli import main
from verifier.engines import auto, explicit, walk
from verifier.engines.auto import AutoEngine
from verifier.engines.base import Budget
from verifier.engines.explicit import ExplicitEngine, seconds_to_finish
from verifier.ir.expr import App, Const, Op, Var
from verifier.ir.model import Action, Assign, IntType, Model, Variable
from verifier.ir.props import Invariant, Reachable, Terminates
from verifier.lang import load_model, load_properties
from verifier.props import schedule
from verifier.props.plan import PRODUCT_STATES, run_claims
from verifier.props.schedule import FIRST_PASS, MIN_SECONDS, first_pass, second_pass
from verifier.result import CheckResult, Verdict
from verifier.semantics import layout
from verifier.trace import replay

MINI = Path(__file__).parent / "fixtures" / "core" / "mini.yaml"     # one parameter, DECK
ORDER = Path(__file__).parent / "fixtures" / "props"                   # order.yaml: 41 states, monitored claims
SIDE = 400      # three counters 0..SIDE: 64 M states, far more than a search covers in a few seconds


def _counters() -> Model:
    names = ("a", "b", "c")
    variables = tuple(Variable(n, IntType(Const(0), Const(SIDE)), init=(Const(0),)) for n in names)
    actions = tuple(Action(f"up-{n}", App(Op.LT, (Var(n), Const(SIDE))),
                           (Assign(Var(n), App(Op.ADD, (Var(n), Const(1)))),)) for n in names)
    return Model("counters", variables=variables, actions=actions)


def _timed(seconds: float) -> Budget:
    return Budget(timeout=seconds, deadline=time.monotonic() + seconds)


def test_a_search_that_cannot_finish_leaves_z3_its_share(monkeypatch):
    monkeypatch.setattr(auto, "EXPLICIT_SHARE", 0.5)      # Z3 gets seconds enough on a loaded machine
    model = _counters()
    total = App(Op.ADD, (App(Op.ADD, (Var("a"), Var("b"))), Var("c")))
    props = [Invariant(id="bounded", expr=App(Op.LE, (total, Const(3 * SIDE)))),
             Reachable(id="corner", expr=App(Op.EQ, (Var("a"), Const(SIDE))))]
    engine = AutoEngine()
    start = time.monotonic()
    bounded, corner = engine.check(model, props, _timed(6.0))
    assert time.monotonic() - start < 6.0 + 4.0       # the budget kept (a grace for a loaded machine)
    assert bounded.verdict is Verdict.PROVED and bounded.engine in ("k-induction", "pdr"), bounded.reason
    assert bounded.evidence["auto"].startswith("symbolic: explicit search stopped (exploration incomplete: ")
    # (its share, or the cap where a search projected to finish went on past its share: a quiet machine)
    assert corner.verdict is Verdict.HOLDS and corner.engine in ("walk", "k-induction", "pdr", "bmc")
    replay(layout(model.instantiate()), corner.trace)
    # a second call (the runner's second pass, a monitor product) does not search again
    (again,) = engine.check(model, props[:1], _timed(4.0))
    assert again.evidence["auto"].startswith("symbolic first: an explicit search of the model it extends "
                                             "stopped ")


def test_without_a_run_deadline_the_search_keeps_the_whole_budget():
    model = _counters()
    total = App(Op.ADD, (App(Op.ADD, (Var("a"), Var("b"))), Var("c")))
    props = [Reachable(id="far", expr=App(Op.EQ, (total, Const(100))))]       # deeper than 5,000 states go
    (r,) = AutoEngine(explicit_states=5_000).check(model, props, Budget(timeout=30.0))
    assert (r.verdict, r.engine) == (Verdict.HOLDS, "walk")
    assert r.evidence["auto"].startswith("random runs: explicit search stopped (exploration incomplete: "
                                         "the python store's state cap (5,000) reached)")


def test_no_lasso_search_once_the_time_is_spent():
    model = _counters()
    claim = Terminates(id="ends", scope="game")
    spent = Budget(timeout=1.0, deadline=time.monotonic() - 1.0)
    (r,) = ExplicitEngine().check(model, [claim], spent)
    assert r.verdict is Verdict.UNKNOWN
    assert r.reason.endswith("no time was left to look for a lasso among the states found")
    (capped,) = ExplicitEngine().check(model, [claim], Budget(max_states=50))
    assert capped.verdict is Verdict.UNKNOWN and "lasso" not in capped.reason     # searched, none among 50


def test_calls_share_the_pass_in_proportion_to_their_claims():
    props = [Invariant(id=f"c{i}", expr=Const(True)) for i in range(10)]
    step = first_pass(_timed(100.0), len(props))
    pass_seconds = 100.0 * FIRST_PASS
    assert pass_seconds - 1 < step.end - time.monotonic() <= pass_seconds
    big = step.share(props[:5])                    # half the claims: half the pass
    assert pass_seconds / 2 - 1 < big.time_left() <= pass_seconds / 2
    tried = step.share(props[5:], reached=False)   # a first try: counts nothing
    assert pass_seconds - 1 < tried.time_left() <= pass_seconds and step.claims == 5
    product = [replace(props[5], statement="safety part"), replace(props[5], statement="liveness part")]
    assert pass_seconds / 5 - 1 < step.share(product).time_left() <= pass_seconds / 5    # one surface claim
    assert step.claims == 4
    searching = step.share(props[6:7], at_least=0.75)                     # the search of the model itself
    assert 0.75 * pass_seconds - 1 < searching.time_left() <= 0.75 * pass_seconds and step.claims == 3
    assert step.share(props[7:]).time_left() > pass_seconds - 1            # the last call: all that is left
    untimed = first_pass(Budget(timeout=100.0), len(props))                  # no run deadline: no shares
    assert untimed.end is None and untimed.share(props[:1]) == Budget(timeout=100.0)
    assert second_pass(Budget(timeout=100.0), 3) is None

    assert step.share(props[:1]).finish_by == step.budget.deadline     # the last call: a search about to finish
    #                                           may run to the run's end (else the second pass starts it again) ...
    again = first_pass(_timed(100.0), 2)
    assert again.share(props[:1]).finish_by == again.end    # ... one that a claim after it waits for, the pass's


def test_the_projection_of_a_search_that_is_about_to_finish():
    # levels of 100, 200, 100, 50 states from index 0: the last complete one half the one before
    shrinking = [0, 100, 300, 400, 450]
    assert seconds_to_finish(shrinking, head=400, stored=470, elapsed=4.0) == pytest.approx((500 - 400) / 100)
    assert seconds_to_finish(shrinking, 400, 470, 4.0, cap=500) == pytest.approx(1.0)
    assert seconds_to_finish(shrinking, 400, 470, 4.0, cap=480) is None        # the state cap stops it first
    assert seconds_to_finish([0, 100, 300], 150, 400, 2.0) is None          # still growing
    assert seconds_to_finish([0, 1], 1, 3, 1.0) is None                     # too few levels to tell
    assert seconds_to_finish(shrinking, 0, 470, 0.0) is None
    # grown to level 2 (200 states, ending at 500); its first 100 have 60 successors: the next
    # level projected at 120 (0.6 of it), then 72, ...: 800 states in all
    assert seconds_to_finish([0, 100, 300], 400, 560, 4.0, level_end=500) == pytest.approx((800 - 400) / 100)
    assert seconds_to_finish([0, 100, 300], 400, 700, 4.0, level_end=500) is None     # 200 from 100: growing


def test_a_search_past_its_share_goes_on_only_while_projected_to_finish_in_time():
    now = [0.0]
    budget = Budget(timeout=60.0, deadline=time.monotonic() + 10.0, finish_by=time.monotonic() + 20.0)
    space = SimpleNamespace(levels=[0, 100, 300, 400, 450], seen=set(), state_limit=-1)
    tick = explicit._ticker(space, budget, None, 0.0, clock=lambda: now[0])
    now[0] = 5.0
    assert tick(400, 470, 4) is None                        # within its share
    now[0] = 12.0                                           # past it: 3 s more projected, 8 s to go
    assert tick(400, 470, 4) is None
    space.state_limit = 480                                 # 500 states projected: the cap stops it first
    assert tick(400, 470, 4) is not None
    space.state_limit = -1
    assert tick(100, 470, 4) is not None                    # 4 x 12 s more projected: it stops
    space.levels = [0, 100, 300, 500, 800]                  # growing again: it stops
    assert tick(400, 900, 4).words == "--timeout 60 s reached"
    space.levels = [0, 100, 300, 400, 450]
    now[0] = 21.0                                           # past finish_by: it stops whatever the projection
    assert tick(440, 460, 4) is not None
    plain = explicit._ticker(space, replace(budget, finish_by=None), None, 0.0, clock=lambda: 12.0)
    assert plain(400, 470, 4) is not None                   # no finish_by: the share is the limit


def test_a_call_gets_its_least_share_while_the_pass_has_it():
    props = [Invariant(id=f"c{i}", expr=Const(True)) for i in range(1000)]
    step = first_pass(_timed(10.0), len(props))
    assert MIN_SECONDS - 0.1 < step.share(props[:1]).time_left() <= MIN_SECONDS
    spent = first_pass(Budget(timeout=1.0, deadline=time.monotonic()), len(props))
    assert spent.share(props[:1]).time_left() == 0
    assert second_pass(Budget(timeout=1.0, deadline=time.monotonic() - 1), 3) is None


class _Stubborn:
    """An engine that decides every claim at once, except `hard`, on which it spends its whole
    share and gives up; like the real engines it starts nothing once its time is spent."""

    name = "stub"

    def __init__(self):
        self.shares: dict[str, list[float]] = {}

    def check(self, model, properties, budget, progress=None):
        out = []
        for p in properties:
            left = budget.time_left()
            self.shares.setdefault(p.id, []).append(left)
            if left == 0:
                out.append(CheckResult(p, Verdict.UNKNOWN, "stub", reason="no time"))
            elif p.id == "hard":
                time.sleep(left)
                out.append(CheckResult(p, Verdict.UNKNOWN, "stub", reason="gave up"))
            else:
                out.append(CheckResult(p, Verdict.HOLDS, "stub"))
        return out


@pytest.mark.parametrize("analyses_wait", [False, True])
def test_a_hard_claim_does_not_starve_the_claims_after_it(monkeypatch, analyses_wait):
    engine = _Stubborn()
    monkeypatch.setattr(runner, "make_engine", lambda _name, _search: engine)
    monkeypatch.setattr(runner, "free_cpus", lambda: 1)       # the analyses, if any, after the claims
    model = load_model(str(MINI), variant="strict")
    hard = Invariant(id="hard", expr=Const(True), for_every=("DECK",))    # a call of its own, first ...
    easy = [Invariant(id=f"easy-{i}", expr=Const(True)) for i in range(3)]  # ... then these
    options = runner.RunOptions(budget=_timed(6.0), consistency=analyses_wait, vacuity=False)
    start = time.monotonic()
    (run,) = runner.check_loaded(str(MINI), [model], [([hard, *easy], None)], options)
    assert time.monotonic() - start < 6.0 + 2.0
    verdicts = {r.property.id: (r.verdict, r.reason) for r in run.results}
    assert all(verdicts[f"easy-{i}"][0] is Verdict.HOLDS for i in range(3)), verdicts
    assert verdicts["hard"][0] is Verdict.UNKNOWN
    assert engine.shares["hard"][0] <= MIN_SECONDS + 0.01     # its part of the first pass, not all of it
    if analyses_wait:                                         # the rest of the time is the analyses'
        assert len(engine.shares["hard"]) == 1 and verdicts["hard"][1] == "gave up"
    else:                                                     # a second pass: the time the first left
        assert len(engine.shares["hard"]) == 2 and engine.shares["hard"][1] > 1.0
        assert verdicts["hard"][1] == "gave up; again with the time left: gave up"


def _hang(*_args, **_kwargs):
    while True:                          # only the backstop ends this
        time.sleep(0.01)


def test_what_the_search_decided_survives_a_cut_in_a_later_step(monkeypatch, capsys, tmp_path):
    """The backstop fires in the random runs after the capped search, inside the one engine
    call of these claims: the claim the search decided keeps its verdict."""
    monkeypatch.setattr(signals, "safe_to_raise", lambda _frame: True)     # the hang lives in this file
    monkeypatch.setattr(signals, "grace_seconds", lambda _s: 0.5)
    monkeypatch.setattr(walk, "check", _hang)
    props = tmp_path / "deep_props.yaml"
    props.write_text('claims:\n  - id: three\n    says: "Three is reached"\n    reachable: "n == 3"\n'
                     '  - id: below\n    says: "Never past 4000"\n    invariant: "n < 4000"\n', encoding="utf-8")
    code = main(["check", DEEP_COUNTER, "-p", str(props), "--max-states", "100", "--timeout", "1",
                 "--no-consistency", "-q", "-f", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 3
    three, below = doc["results"]
    assert (three["verdict"], three["engine"]) == ("HOLDS", "explicit/python")
    assert below["verdict"] == "UNKNOWN" and "cut short by --timeout" in below["reason"]


def test_z3_rounds_give_every_claim_of_a_call_its_turn(monkeypatch):
    """Within one symbolic call under a time limit: a first round with an even part of half the
    time each (one second at least while the round has it), then the rest for the claims still
    open; a claim that uses all its time does not starve the ones after it."""
    from verifier.engines.symbolic import engine as symbolic

    given: dict[str, list[float]] = {}

    def claim(self, original, share=1.0):
        seconds = share * (self.budget.time_left() or 0.0)
        given.setdefault(original.id, []).append(seconds)
        if original.id.startswith("hard"):
            time.sleep(seconds)
            return CheckResult(original, Verdict.UNKNOWN, "symbolic", reason="timeout")
        return CheckResult(original, Verdict.HOLDS, "k-induction")

    monkeypatch.setattr(symbolic._Run, "claim", claim)
    props = [Invariant(id=f"hard-{i}", expr=Const(True)) for i in range(5)] + [Invariant(id="easy", expr=Const(True))]
    start = time.monotonic()
    results = symbolic.SymbolicEngine().check(_counters(), props, _timed(6.0))
    assert time.monotonic() - start < 6.0 + 1.0
    assert [r.verdict for r in results] == [Verdict.UNKNOWN] * 5 + [Verdict.HOLDS]
    assert len(given["easy"]) == 1
    assert all(len(given[f"hard-{i}"]) == 2 for i in range(5))          # a second round for each
    first_round = sum(given[f"hard-{i}"][0] for i in range(5)) + given["easy"][0]
    assert 2.5 < first_round <= 3.0 + 0.05                                # half the time
    assert all(given[f"hard-{i}"][1] > 0.4 for i in range(5))            # the rest, evenly


def test_a_search_whose_levels_give_no_projection_goes_on_while_its_expected_states_do():
    plateau = [0, 100, 200, 300, 400]          # levels of 100 states each: not shrinking, no projection by them
    assert seconds_to_finish(plateau, 400, 500, 4.0) is None
    assert seconds_to_finish(plateau, 400, 500, 4.0, expected=1000) == pytest.approx((1000 - 400) / 100)
    assert seconds_to_finish(plateau, 400, 1000, 4.0, expected=1000) is None     # as many found: past the estimate
    assert seconds_to_finish(plateau, 400, 500, 4.0, cap=500, expected=1000) is None    # the cap stops it first
    shrinking = [0, 100, 300, 400, 450]        # the levels' projection, where there is one, comes first
    assert seconds_to_finish(shrinking, 400, 470, 4.0, expected=10_000) == pytest.approx(1.0)

    now = [0.0]
    budget = Budget(timeout=60.0, deadline=time.monotonic() + 10.0, finish_by=time.monotonic() + 20.0)

    def ticker(expected):       # at level 4 (states 400 to 500), its first 80 with 100 successors: still growing
        space = SimpleNamespace(levels=plateau, seen=set(), state_limit=-1)
        tick = explicit._ticker(space, replace(budget, expected_states=expected), None, 0.0, clock=lambda: now[0])
        now[0] = 5.0
        assert tick(400, 500, 4) is None                   # within its share
        now[0] = 12.0                                      # past it, 8 s before finish_by
        return tick

    assert ticker(700)(480, 600, 4) is None                # 220 more at 480 in 12 s: 5.5 s
    assert ticker(1000)(480, 600, 4) is not None           # 520 more: 13 s, too late
    assert ticker(600)(480, 600, 4) is not None            # as many as expected found: it stops
    assert ticker(None)(480, 600, 4) is not None           # no estimate: the share is the limit
    compact = explicit._ticker_compact(replace(budget, expected_states=450), 0.0, 100, clock=lambda: now[0])
    now[0] = 1.0
    for stored, depth in [(1, 0), (100, 1), (200, 2), (300, 3)]:    # levels of 100 states: no projection by them
        assert compact(stored, depth) is None
    now[0] = 12.0                  # past its share: 300 expanded in 12 s, 150 more to the 450 expected: 6 s
    assert compact(400, 3) is None
    now[0] = 21.0                                           # past finish_by: it stops whatever the projection
    assert compact(420, 3).words == "--timeout 60 s reached"


def test_a_shared_product_is_expected_to_find_a_multiple_of_its_models_states():
    model = load_model(str(ORDER / "order.yaml"), variant="strict")
    claims = load_properties(str(ORDER / "order_props.yaml"), model)
    asked = []

    def capped(m, cs, cap, expected):
        asked.append((cap, expected))
        return ExplicitEngine().check(m, cs, replace(Budget(), max_states=cap))

    run_claims(model, claims, lambda m, cs: ExplicitEngine().check(m, cs, Budget()), capped)
    ((cap, expected),) = asked                    # one product shared by the monitored claims
    assert expected == PRODUCT_STATES * 41 < cap  # the cap: each claim's product as large as the model


class _Overrunning:
    """An engine that decides every claim at once, except `hard`, on which it moves the (fake)
    clock on by `overrun` seconds the first time, past its share and its pass's end, as a Z3
    call may; the second time it gives up at once."""

    name = "stub"

    def __init__(self, clock: list[float], overrun: float):
        self.clock, self.overrun = clock, overrun
        self.calls: dict[str, int] = {}

    def check(self, model, properties, budget, progress=None):
        for p in properties:
            self.calls[p.id] = self.calls.get(p.id, 0) + 1
        if any(p.id == "hard" for p in properties) and self.calls["hard"] == 1:
            self.clock[0] += self.overrun
        return [CheckResult(p, Verdict.UNKNOWN if p.id == "hard" else Verdict.HOLDS, "stub", reason="gave up"
                            if p.id == "hard" else "") for p in properties]


@pytest.mark.parametrize("analyses_wait", [False, True])
def test_a_call_that_would_start_after_its_pass_is_not_started(monkeypatch, analyses_wait):
    now = [time.monotonic()]
    clock = lambda: now[0]                                                   # noqa: E731
    engine = _Overrunning(now, overrun=70.0)          # the first pass ends at 60 s of the 100, the run at 100
    monkeypatch.setattr(runner, "make_engine", lambda _name, _search: engine)
    monkeypatch.setattr(runner, "free_cpus", lambda: 1)       # the analyses, if any, after the claims
    monkeypatch.setattr(runner, "first_pass", lambda b, n: schedule.first_pass(b, n, clock=clock))
    monkeypatch.setattr(runner, "second_pass", lambda b, n: schedule.second_pass(b, n, clock=clock))
    model = load_model(str(MINI), variant="strict")
    hard = Invariant(id="hard", expr=Const(True), for_every=("DECK",))    # a call of its own, first ...
    easy = [Invariant(id=f"easy-{i}", expr=Const(True)) for i in range(3)]  # ... then these
    budget = Budget(timeout=100.0, deadline=now[0] + 100.0)
    options = runner.RunOptions(budget=budget, consistency=analyses_wait, vacuity=False)
    (run,) = runner.check_loaded(str(MINI), [model], [([hard, *easy], None)], options)
    verdicts = {r.property.id: (r.verdict, r.reason) for r in run.results}
    if analyses_wait:                      # no second pass: the easy claims are left UNKNOWN, never started
        assert engine.calls == {"hard": 1}
        assert all(verdicts[f"easy-{i}"] == (Verdict.UNKNOWN, runner.NOT_STARTED) for i in range(3)), verdicts
    else:                                  # the second pass starts them with the 30 s left
        assert engine.calls == {"hard": 2, "easy-0": 1, "easy-1": 1, "easy-2": 1}
        assert all(verdicts[f"easy-{i}"][0] is Verdict.HOLDS for i in range(3)), verdicts


def test_a_pass_is_over_at_its_end_on_its_clock():
    now = [100.0]
    step = first_pass(Budget(timeout=10.0, deadline=110.0), 10, clock=lambda: now[0])
    assert step.end == pytest.approx(100.0 + FIRST_PASS * 10.0) and not step.over()
    assert step.share([Invariant(id="a", expr=Const(True))]).deadline == pytest.approx(100.0 + MIN_SECONDS)
    now[0] = step.end
    assert step.over()
    assert not first_pass(Budget(timeout=10.0), 2, clock=lambda: now[0]).over()       # no run deadline: never
    later = second_pass(Budget(timeout=10.0, deadline=110.0), 1, clock=lambda: now[0])
    assert later is not None and later.end == 110.0 and not later.over()
