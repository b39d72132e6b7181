"""The compiled store as a stage of the one store policy (`portfolio.stores`): the plans it makes
from sizes alone, the stage a search goes on in, and the auto engine and the consistency analyses
when the plan ends in the compiled store, against the python store (the reference): the same
verdicts, reasons, states and shortest traces, the same findings. The thresholds are lowered so
that tiny models pass them; each example is a cold Numba compile, so they are few
(`tiers.examples`)."""
from __future__ import annotations

import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from test_analysis_beyond import RULEBOOKS
from test_analysis_compact import _shown
from test_analysis_support import analyse, assert_replay, fixture
from test_auto_store import _wide, holds, order_model
from test_compiled_store import CLAIMS, MODELS
from tiers import examples

from verifier.analysis import analyse_model, compact_states, context
from verifier.engines.compiled import cache
from verifier.engines.compiled.numbagen import MAX_WORDS
from verifier.engines.explicit import ExplicitEngine
from verifier.ir.expr import App, Const, Op, Var
from verifier.ir.model import IntType, Model, Variable
from verifier.ir.props import DeadlockFree, Obligation, Terminates
from verifier.lang import load_model
from verifier.portfolio.auto import AutoEngine
from verifier.portfolio.plan import run_claims
from verifier.portfolio.stores import Caps, Stage, Store, StorePlan, choose_store
from verifier.resources import Budget
from verifier.semantics import layout
from verifier.trace import replay

PYTHON, COMPACT, COMPILED = Store.PYTHON, Store.COMPACT, Store.COMPILED
TINY = Caps(switch=2)            # python up to 2 states, then compiled


def test_a_plan_goes_from_the_python_store_to_the_compiled_store_as_the_budget_leaves():
    model, _ = order_model()
    assert choose_store(model, Budget()).stages == (Stage(PYTHON, 250_000), Stage(COMPILED, 16_000_000))
    assert choose_store(model, Budget(max_states=1_000_000)).stages == (Stage(PYTHON, 250_000),
                                                                        Stage(COMPILED, 1_000_000))
    assert choose_store(model, Budget(max_states=9)).stages == (Stage(PYTHON, 9),)
    assert choose_store(model, Budget(), extends=COMPILED).stages == (Stage(COMPILED, 16_000_000),)
    assert choose_store(model, Budget(), extends=COMPACT).stages == (Stage(COMPILED, 16_000_000),)   # past it
    assert choose_store(model, Budget(), named=COMPILED).stages == (Stage(COMPILED, 16_000_000),)
    assert choose_store(model, Budget(), named=COMPACT).stages == (Stage(COMPACT, 16_000_000),)


def test_a_model_the_compiled_store_cannot_hold_goes_on_in_the_compact_store():
    assert [s.store for s in choose_store(_wide(None), Budget()).stages] == [PYTHON, COMPILED]  # two words
    assert [s.store for s in choose_store(_wide(IntType(Const(0), Const(4))), Budget()).stages] == [PYTHON]
    many = Model("many", variables=tuple(Variable(f"v{i}", IntType(Const(0), Const(2**62)), init=(Const(0),))
                                         for i in range(MAX_WORDS + 1)))    # a word each, one more than it holds
    assert choose_store(many, Budget()).stages == (Stage(PYTHON, 250_000), Stage(COMPACT, 16_000_000))
    assert choose_store(many, Budget(), extends=COMPILED).stages == (Stage(PYTHON, 250_000),
                                                                     Stage(COMPACT, 16_000_000))


def test_a_search_goes_on_where_the_sizes_say():
    compiled = StorePlan((Stage(PYTHON, 100), Stage(COMPILED, 10_000)))
    assert compiled.after(0, 99, 5) is None               # it stopped short of the cap
    assert compiled.after(0, 100, 1) == compiled.after(0, 100, 50) == 1     # the compiled store: at any depth
    assert compiled.after(1, 10_000, 0) is None           # the last stage
    compact = StorePlan((Stage(PYTHON, 100), Stage(COMPACT, 10_000)))
    assert compact.after(0, 100, 1) == 1                  # wide levels: the compact store pays off
    assert compact.after(0, 100, 50) is None              # deep and narrow: it stays
    assert compiled.why == "the python store up to 100 states, then the compiled store up to 10,000 states"


@settings(max_examples=examples(2), deadline=None)
@given(MODELS)
def test_past_the_thresholds_the_compiled_store_decides_as_the_python_store(model):
    """Every claim the search answers, termination and obligations included (the compiled store's
    state graph), once the thresholds are passed."""
    claims = CLAIMS + [Terminates(id="t", scope="game"), Obligation(id="o", pending=App(Op.LE, (Var("x"), Const(1))))]
    want = ExplicitEngine().check(model, claims, Budget())
    got = AutoEngine(caps=TINY).check_explicit(model, claims, Budget())
    errors = any("model error" in r.reason for r in want + got)     # each store stops where it meets one
    moved = (want[0].stats.states or 0) >= TINY.switch
    for w, g in zip(want, got):
        assert g.trace == w.trace, g.property.id
        if not errors:
            assert (g.verdict, g.reason, g.depth, g.stats.states) == (w.verdict, w.reason, w.depth, w.stats.states)
            if g.trace is not None:
                replay(layout(model.instantiate()), g.trace)
        if moved and not errors:
            assert g.engine == "explicit/compiled" and g.evidence["store"] == "compiled", g.property.id


def test_the_monitor_products_of_a_model_whose_search_was_compiled_start_there():
    model, claims = order_model()
    want = {r.property.id: r for r in run_claims(model, claims, ExplicitEngine(), Budget())}
    for r in run_claims(model, claims, AutoEngine(caps=TINY), Budget()):
        w = want[r.property.id]
        assert (r.verdict, r.trace) == (w.verdict, w.trace), r.property.id
        assert r.engine == "explicit/compiled", r.property.id
        assert r.evidence["auto"] == ("explicit, compiled store: the python store's search passed 2 states"
                                      if r.property.kind == "termination" else
                                      "explicit: concrete instance (compiled store)"), r.property.id


def test_a_model_numba_cannot_compile_is_searched_in_the_compact_store_which_says_why(monkeypatch):
    from numba.core.errors import TypingError

    def refuse(text: str):
        raise TypingError("Cannot unify bool and int64")

    monkeypatch.setattr(cache, "load", refuse)
    model, _ = order_model()
    claims = [DeadlockFree(id="d"), holds()]
    want = ExplicitEngine().check(model, claims, Budget())
    got = AutoEngine(caps=TINY).check_explicit(model, claims, Budget())
    for w, g in zip(want, got):
        assert (g.verdict, g.trace, g.stats.states) == (w.verdict, w.trace, w.stats.states)
        assert g.engine == "explicit/compact"
        assert g.evidence["store"] == "compact: the compiled store could not compile it: Cannot unify bool and int64"


# ---- the consistency analyses on the compiled store's states
def _compiled_after(states: int):
    """The store policy with the python store up to `states`, then the compiled store."""
    return lambda model, budget, **_kw: StorePlan((Stage(PYTHON, states), Stage(COMPILED, 10**9)))


@pytest.fixture
def compiled_spaces(monkeypatch):
    """Every exploration past one state goes on in the compiled store; the spaces it made."""
    made: list[compact_states.CompiledStates] = []
    real = compact_states.explore_compiled_states

    def spy(*args, **kw):
        made.append(real(*args, **kw))
        return made[-1]

    monkeypatch.setattr(compact_states, "explore_compiled_states", spy)
    monkeypatch.setattr(context, "choose_store", _compiled_after(1))
    return made


@pytest.mark.parametrize("name", ["gap_yes", "order_mixed", "variants_yes"])
def test_the_compiled_states_give_the_python_findings(name, monkeypatch, compiled_spaces):
    with monkeypatch.context() as python_only:
        python_only.setattr(context, "choose_store", _compiled_after(10**9))
        want = analyse(name)
    got = analyse(name)            # traces replayed there
    assert compiled_spaces and all(s.complete for s in compiled_spaces)
    assert _shown(got) == _shown(want) != []


def test_the_compiled_states_read_as_the_reference_search_and_travel_between_processes(compiled_spaces):
    from verifier.engines.explicit import explore
    ctx, _findings = analyse_model(load_model(fixture("order_mixed")))
    ref = explore(ctx.instance)
    space = pickle.loads(pickle.dumps(ctx)).space
    assert isinstance(space, compact_states.CompiledStates)
    assert list(space.packed) == list(ref.packed) and list(space.parent) == list(ref.parent)
    last = len(ref.packed) - 1
    assert space.path_to(last) == ref.path_to(last)
    assert space.index_of(ref.packed[last]) == last and space.index_of(1 << 62) is None
    stored = set(ref.packed)
    others = {x ^ 1 << k for x in ref.packed for k in range(space.packing.bits + 1)} - stored
    assert all(x in space.seen for x in stored) and not any(x in space.seen for x in others)


@settings(max_examples=examples(2), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(RULEBOOKS)
def test_random_rulebooks_give_the_same_findings_on_the_compiled_states(compiled_spaces, model):
    memo: dict = {}                        # one Z3 answer per pair for both (its witness may vary)
    context.choose_store = _compiled_after(10**9)     # the fixture's patch is undone after the last example
    want = analyse_model(model, memo=memo)[1]
    context.choose_store = _compiled_after(1)
    got = analyse_model(model, memo=memo)[1]
    assert_replay([model], got)
    assert _shown(got) == _shown(want)
