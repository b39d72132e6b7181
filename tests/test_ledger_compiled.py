"""The claims' compiled search handed to the analyses through the reading's ledger (`engines.ledger`,
`analysis.context.takes`): where the analyses' own store plan would end in the compiled store, they read
the claims' search instead of searching (and compiling) again, and find what they find on their own
search; where it would not (--store compiled on a model their plan keeps in the python store), they
explore as before. The thresholds are lowered so that tiny models pass them; each drawn example is a cold Numba
compile, so they are few (`tiers.examples`)."""
from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, assume, given, settings
from test_analysis_beyond import RULEBOOKS
from test_analysis_compact import _shown
from test_analysis_support import assert_replay
from test_auto_store import FIX
from test_compiled_store import MODELS
from tiers import examples

import verifier.runner as runner
from verifier.analysis import analyse_model, compact_states, context
from verifier.engines import compact
from verifier.engines.base import SearchOptions
from verifier.engines.compiled.search import explore_compiled
from verifier.engines.explicit import explore
from verifier.engines.ledger import KeptCompact, Ledger
from verifier.portfolio import auto, stores
from verifier.portfolio.auto import AutoEngine
from verifier.portfolio.stores import Caps, Stage, Store, StorePlan, choose_store
from verifier.resources import Budget

PYTHON, COMPACT, COMPILED = Store.PYTHON, Store.COMPACT, Store.COMPILED
TINY = Caps(switch=2)            # python up to 2 states, then compiled


def test_a_plan_finishes_in_the_stage_its_caps_and_levels_say():
    compiled = StorePlan((Stage(PYTHON, 100), Stage(COMPILED, 10_000)))
    wide, deep = (lambda cap: 1), (lambda cap: 50)
    assert compiled.finishes_in(100, wide) == 0 and compiled.finishes_in(101, wide) == 1
    assert compiled.finishes_in(101, deep) == 1 and compiled.finishes_in(10_000, deep) == 1
    assert compiled.finishes_in(10_001, wide) is None                   # past the last cap
    compact = StorePlan((Stage(PYTHON, 100), Stage(COMPACT, 10_000)))
    assert compact.finishes_in(101, wide) == 1
    assert compact.finishes_in(101, deep) is None                       # narrow: the compact store does not take it


@settings(max_examples=examples(2), deadline=None)
@given(MODELS)
def test_the_python_store_stops_at_a_cap_where_the_compiled_search_says(model):
    """`takes` reads where the python store's search would stop from a complete compiled search: at
    the cap, in the depth of the parent of the first state past it."""
    concrete = model.instantiate()
    whole = explore_compiled(concrete)
    assume(whole.complete)
    for cap in range(1, min(len(whole), 40)):
        stopped = explore(concrete, Budget(max_states=cap))
        assert (len(stopped), stopped.max_depth) == (cap, max(0, whole.depth_of(cap) - 1)), cap


def _tiny_everywhere(monkeypatch, level_cost: int, caps: Caps = TINY) -> dict[str, int]:
    """The claims' and the analyses' store plans at the `caps` thresholds, the compact store's levels
    paying off (`level_cost` 0) or not (a large one), readings one after the other in this process;
    the analyses' own explorations, counted by store."""
    monkeypatch.setattr(auto, "Caps", lambda: caps)
    monkeypatch.setattr(context, "choose_store", functools.partial(choose_store, caps=caps))
    monkeypatch.setattr(compact, "LEVEL_COST", level_cost)
    monkeypatch.setattr(runner, "fork_map", lambda fn, items, **_kw: [fn(x) for x in items])
    monkeypatch.setattr(runner, "free_cpus", lambda: 1)
    searched = {"python": 0, "compact": 0, "compiled": 0}

    def counted(name, real):
        def spy(*args, **kw):
            searched[name] += 1
            return real(*args, **kw)
        return spy

    monkeypatch.setattr(context.Context, "_explore_python", counted("python", context.Context._explore_python))
    monkeypatch.setattr(compact_states, "explore_big", counted("compact", compact_states.explore_big))
    monkeypatch.setattr(compact_states, "explore_compiled_states",
                        counted("compiled", compact_states.explore_compiled_states))
    return searched


def _check_order():
    options = runner.RunOptions(properties=str(FIX / "order_props.yaml"))
    return runner.check_model(str(FIX / "order.yaml"), options)


def _outcome(runs) -> tuple:
    claims = [(r.property.id, r.variant, r.verdict, r.trace, r.reason) for run in runs for r in run.results]
    return claims, _shown([f for run in runs for f in run.findings]), [run.vacuous for run in runs], \
        [(run.analyses_unknown, run.analyses_beyond) for run in runs]


def test_the_analyses_read_the_claims_compiled_search_where_their_plan_ends_there(monkeypatch):
    want = _outcome(_check_order())                      # every search in the python store
    searched = _tiny_everywhere(monkeypatch, level_cost=0)
    kept: list = []
    real_keep = Ledger.keep
    monkeypatch.setattr(Ledger, "keep", lambda self, m, s: (kept.append(s), real_keep(self, m, s))[1])
    got = _check_order()
    assert any(hasattr(s, "keys") and s.complete for s in kept), "the claims' search was compiled and kept"
    assert searched == {"python": 0, "compact": 0, "compiled": 0}      # the analyses searched nothing again
    assert _outcome(got) == want


def test_the_analyses_read_the_claims_compact_search_where_it_completed(monkeypatch, tmp_path):
    """The claims' search of a model the compiled store cannot hold finished in the compact store
    (kept with its states in BFS order): the analyses read it and search nothing again."""
    claims = tmp_path / "claims.yaml"
    claims.write_text('claims:\n  - {id: rounds-bounded, says: "at most two rounds", invariant: "rounds <= 2"}\n'
                      '  - {id: heal-reachable, says: "heal happens", reachable: {action: heal}}\n')
    options = runner.RunOptions(properties=str(claims))
    want = _outcome(runner.check_model(str(FIX / "order.yaml"), options))
    searched = _tiny_everywhere(monkeypatch, level_cost=0)
    monkeypatch.setattr(stores, "compiles", lambda model: False)
    kept: list = []
    real_keep = Ledger.keep
    monkeypatch.setattr(Ledger, "keep", lambda self, m, s: (kept.append(s), real_keep(self, m, s))[1])
    got = runner.check_model(str(FIX / "order.yaml"), options)
    assert {r.engine for run in got for r in run.results} == {"explicit/compact"}
    assert any(isinstance(s, KeptCompact) and s.complete for s in kept), "the claims' compact search was kept"
    assert searched == {"python": 0, "compact": 0, "compiled": 0}
    assert _outcome(got) == want


def test_the_analyses_explore_themselves_where_their_plan_ends_in_another_store(monkeypatch):
    """--store compiled searched a model whose plan ends in the python store: the analyses explore it
    there themselves, as without the ledger's compiled search."""
    searched = _tiny_everywhere(monkeypatch, level_cost=0)
    options = runner.RunOptions(properties=str(FIX / "order_props.yaml"), engine="explicit",
                                search=SearchOptions(store="compiled"))
    kept: list = []
    real_keep = Ledger.keep
    monkeypatch.setattr(Ledger, "keep", lambda self, m, s: (kept.append(s), real_keep(self, m, s))[1])
    monkeypatch.setattr(context, "choose_store", choose_store)        # the analyses' plan at the real caps
    got = _outcome(runner.check_model(str(FIX / "order.yaml"), options))
    assert any(hasattr(s, "keys") and s.complete for s in kept), "the claims' search was compiled and kept"
    assert searched["python"] > 0 and searched["compiled"] == 0
    monkeypatch.setattr(Ledger, "compiled_search_of", lambda self, m: None)
    assert got == _outcome(runner.check_model(str(FIX / "order.yaml"), options))


def test_the_analyses_read_the_claims_compiled_search_its_cap_stopped(monkeypatch):
    """The claims' compiled search stopped at the compiled store's cap, where the analyses' own would
    stop too (the same states in the same order): they read it, stopped as their own search (its words),
    and search nothing again; the same claims, findings and words as where they search themselves."""
    searched = _tiny_everywhere(monkeypatch, level_cost=0, caps=Caps(switch=2, compiled=20))
    kept: list = []
    real_keep = Ledger.keep
    monkeypatch.setattr(Ledger, "keep", lambda self, m, s: (kept.append(s), real_keep(self, m, s))[1])
    got = _check_order()
    assert any(hasattr(s, "keys") and not s.complete for s in kept), "the claims' search was compiled and capped"
    assert searched["compiled"] == 0                                 # (their python stage's 2 states, as before)
    monkeypatch.setattr(Ledger, "capped_search_of", lambda self, m: None)
    want = _check_order()
    assert searched["compiled"] == len(want)
    assert _outcome(got)[1:] == _outcome(want)[1:]          # (a Z3 witness may differ in one process: not compared)
    assert [[r.verdict for r in run.results] for run in got] == [[r.verdict for r in run.results] for run in want]
    assert [r.analyses_stop for r in got] == [r.analyses_stop for r in want]
    assert {r.analyses_stop.owner for r in got if r.analyses_stop is not None} == {"the analyses' state cap"}


@pytest.fixture
def tiny_plans(monkeypatch):
    monkeypatch.setattr(context, "choose_store", functools.partial(choose_store, caps=TINY))
    monkeypatch.setattr(compact, "LEVEL_COST", 0)


@settings(max_examples=examples(2), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(RULEBOOKS)
def test_random_rulebooks_give_the_same_findings_on_the_claims_kept_searches(tiny_plans, model):
    memo: dict = {}                        # one Z3 answer per pair for both (its witness may vary)
    concrete = model.instantiate()
    whole = explore_compiled(concrete)
    assume(whole.complete)                 # the ledger keeps complete searches only
    want = analyse_model(model, memo=memo)[1]
    ctx, got = analyse_model(model, memo=memo, kept=whole)
    assert_replay([model], got)
    assert _shown(got) == _shown(want)
    assert context.takes(concrete, Budget(), whole) == (len(whole) > TINY.switch)
    if len(whole) > TINY.switch:
        assert isinstance(ctx.space, compact_states.CompiledStates) and ctx.kept is None
    levels: list = []
    stored = KeptCompact(compact.explore_compact(concrete, order=levels), levels)
    ctx, got = analyse_model(model, memo=memo, kept=stored)
    assert_replay([model], got)
    assert _shown(got) == _shown(want)
    assert context.takes(concrete, Budget(), stored) == (len(whole) > TINY.switch)
    if len(whole) > TINY.switch:
        assert type(ctx.space) is compact_states.CompactStates


def test_watch_all_tries_only_the_predicates_whose_code_can_raise():
    """A watched predicate without a checked read, division or helper cannot raise: `watch_all` tests it
    without a try block (a try each made Numba's compile of a product module three times as long)."""
    from verifier.engines.compiled.numbagen import module_source
    from verifier.ir.expr import App, Const, Index, Op, Var
    from verifier.ir.model import Action, Assign, IntType, Model, Variable
    from verifier.semantics import layout

    up = Action("up", App(Op.LT, (Var("x"), Const(3))), (Assign(Var("x"), App(Op.ADD, (Var("x"), Const(1)))),))
    model = Model("m", variables=(Variable("x", IntType(Const(0), Const(3)), init=(Const(0),)),
                                  Variable("a", IntType(Const(0), Const(3)), index=IntType(Const(0), Const(1)),
                                           init=(Const(0),))), actions=(up,))
    plain, raising = App(Op.EQ, (Var("x"), Const(2))), App(Op.EQ, (Index("a", Var("x")), Const(1)))
    text = module_source(layout(model), [plain, raising]).text
    watch_all = text[text.index("def watch_all"):text.index("def watched")]
    assert "if wfound[0] < 0:\n        if (v0 == 2):" in watch_all and "werr[0]" not in watch_all
    assert "try:\n            if bool((_rd(s, v0," in watch_all and "werr[1] = i" in watch_all     # x read once: v0
    space = explore_compiled(model, watch=[plain, raising])      # x reaches 2 and 3: a[3] is out of range
    assert space.watch[0] is not None and 1 in space.watch_errors


def test_a_monitor_product_is_capped_from_the_states_of_the_search_it_extends():
    from test_auto_store import order_model

    from verifier.ir.expr import Const
    from verifier.ir.props import Invariant
    from verifier.portfolio.stores import PRODUCT_FACTOR, PRODUCT_STATES
    from verifier.props.monitor import compile_together

    assert Caps().for_product(1000).compiled == Caps().compiled                    # never below the store's own
    assert Caps().for_product(9_770_897).compiled == PRODUCT_FACTOR * 9_770_897      # Aeon's End's 21.5 M product fits
    assert Caps().for_product(10**9).compiled == PRODUCT_STATES
    model, claims = order_model()
    engine = AutoEngine(caps=Caps(switch=2, compiled=40))
    (base,) = engine.check_explicit(model, [Invariant(id="holds", expr=Const(True))], Budget())
    assert base.engine == "explicit/compiled" and base.stats.states is not None
    product, _parts = compile_together(model, [c for c in claims if c.kind in ("ordering", "bounded-response")][:2])
    (stage,) = engine.plan_store(product, Budget()).stages
    assert stage == Stage(COMPILED, max(40, PRODUCT_FACTOR * base.stats.states))
