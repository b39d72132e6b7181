"""The analyses on a compact-store search (`analysis.compact_states`) against the python store's:
forced on small models (the store policy's switch lowered to one state, and the compiled store, which
would take the search past it, unable to hold them), the same findings word for word with the same
traces, which replay, also for states wider than one 64-bit word; the stored order, parents
and paths are the reference search's; a compact search a budget cuts short leaves its
questions to `beyond`, or UNKNOWN."""
from __future__ import annotations

import pickle

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_analysis_beyond import RULEBOOKS
from test_analysis_support import analyse, assert_replay, fixture, load_all
from test_compact_store import widened
from tiers import examples

from verifier.analysis import analyse_model, beyond, compact_states, context
from verifier.engines import compact
from verifier.engines.compact import fits
from verifier.engines.explicit import explore
from verifier.lang import load_model
from verifier.portfolio import stores
from verifier.resources import Budget, StopKind


def _switch_at(states: int):
    """The store policy with its switch at `states` (past it, the compact store where the compiled store
    cannot hold the model: `compact_spaces`)."""
    return lambda model, budget, **kw: stores.choose_store(model, budget, caps=stores.Caps(switch=states), **kw)


def _shown(findings) -> list[tuple]:
    return sorted((f.kind, f.subject, str(f.variant), f.message, f.engine, repr(f.traces)) for f in findings)


@pytest.fixture
def compact_spaces(monkeypatch):
    """Every exploration past one state goes on in the compact store (as for a model the compiled store
    cannot hold), however narrow its levels; the spaces it made."""
    made: list[compact_states.CompactStates] = []
    real = compact_states.explore_big

    def spy(*args, **kw):
        made.append(real(*args, **kw))
        return made[-1]

    monkeypatch.setattr(compact_states, "explore_big", spy)
    monkeypatch.setattr(context, "choose_store", _switch_at(1))
    monkeypatch.setattr(stores, "compiles", lambda model: False)
    monkeypatch.setattr(compact, "LEVEL_COST", 0)
    return made


@pytest.mark.parametrize("name", ["gap_yes", "deadlock_yes", "dead_yes", "conflict_yes", "nondet_yes",
                                  "order_yes", "order_mixed", "chooser", "variants_yes"])
def test_the_compact_scan_gives_the_python_findings(name, monkeypatch, compact_spaces):
    with monkeypatch.context() as python_only:
        python_only.setattr(context, "choose_store", _switch_at(10**9))
        want = analyse(name)
    got = analyse(name)            # traces replayed there
    assert compact_spaces and all(s.complete for s in compact_spaces)
    assert _shown(got) == _shown(want) != []


@pytest.mark.parametrize("wide", [False, True])
def test_the_stored_order_parents_and_paths_are_the_reference_search(wide):
    model = load_model(fixture("order_mixed")).instantiate()
    if wide:
        model = widened(model, 60, 40, steps=True)
    ref = explore(model)
    space = compact_states.explore_big(model, Budget(), None)
    assert space.complete and list(space.packed) == list(ref.packed)
    assert list(space.parent) == list(ref.parent)
    last = len(ref.packed) - 1
    assert space.path_to(last) == ref.path_to(last)
    assert space.index_of(ref.packed[last]) == last and space.index_of(1 << 62) is None
    assert (space.sample(5) == ref.sample(5)).all()


def test_a_context_on_a_compact_search_travels_between_processes(compact_spaces):
    """A reading analysed in a forked child sends its context back pickled."""
    ctx, _findings = analyse_model(load_model(fixture("chooser")))
    back = pickle.loads(pickle.dumps(ctx))
    last = len(ctx.space.packed) - 1
    assert compact_spaces and list(back.space.packed) == list(ctx.space.packed)
    assert back.trace_to(last) == ctx.trace_to(last)


@pytest.mark.parametrize("name", ["gap_yes", "dead_yes"])
def test_a_cut_compact_search_is_decided_beyond_it(name, compact_spaces):
    full = {f.key for f in analyse(name)}
    contexts = [analyse_model(m, Budget(max_states=2))[0] for m in load_all(fixture(name))]
    assert all(ctx.beyond is not None and ctx.unknown_reason == "" for ctx in contexts)
    assert any(not s.complete for s in compact_spaces)
    assert {f.key for f in analyse(name, budget=Budget(max_states=2))} == full


def test_a_compact_search_stopped_at_its_cap_leaves_the_analyses_unknown(monkeypatch, compact_spaces):
    monkeypatch.setattr(beyond, "BEYOND_UNITS", 0)
    monkeypatch.setattr(beyond, "WALK_RUNS", 0)
    real = compact_states.explore_big
    monkeypatch.setattr(compact_states, "explore_big", lambda model, budget, _cap: real(model, budget, 3))
    ctx, _findings = analyse_model(load_model(fixture("dead_yes")), Budget())
    assert not ctx.space.complete and ctx.space.stop.kind is StopKind.STATES
    assert "the search stopped at 3 states (the analyses' state cap)" in ctx.space.reason
    assert "stayed undecided" in ctx.unknown_reason


@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(RULEBOOKS, st.builds(widened, RULEBOOKS, st.integers(40, 62), st.integers(0, 40), st.just(False))))
def test_random_rulebooks_give_the_same_findings_in_both_stores(compact_spaces, model):
    assume(fits(model.instantiate()))
    memo: dict = {}                        # one Z3 answer per pair for both (its witness may vary)
    context.choose_store = _switch_at(10**9)     # the fixture's patch is undone after the last example
    want = analyse_model(model, memo=memo)[1]
    context.choose_store = _switch_at(1)
    got = analyse_model(model, memo=memo)[1]
    assert_replay([model], got)
    assert _shown(got) == _shown(want)
