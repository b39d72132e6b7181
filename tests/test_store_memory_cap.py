"""The compiled store's cap follows --max-memory down (`stores.states_in`, never above the fixed caps): a
function of the option and the model's words a state, never of the memory free, the CPUs or the load; --max-states still
bounds it; without --max-memory the fixed caps stand; a search it stops is UNKNOWN and says so."""
from __future__ import annotations

from test_auto_store import _wide, holds, order_model

from verifier.ir.model import Model
from verifier.portfolio import stores
from verifier.portfolio.auto import AutoEngine
from verifier.portfolio.stores import (COMPILED_STATES, MAX_COMPILED_STATES, MB, MEMORY_SHARE, Caps, Stage, Store,
                                       choose_store, states_in, words_of)
from verifier.resources import Budget, StopKind
from verifier.resources import memory as memory_guard
from verifier.result import Verdict

PYTHON, COMPILED = Store.PYTHON, Store.COMPILED


def test_the_cap_is_what_the_memory_option_holds_for_the_words_of_a_state():
    assert states_in(5000, 1) == int(5000 * MB * MEMORY_SHARE / 16)
    assert states_in(5000, 2) == int(5000 * MB * MEMORY_SHARE / 24.5) < states_in(5000, 1)
    assert states_in(1, 40) >= 1 and states_in(10**9, 1) == MAX_COMPILED_STATES
    assert [states_in(m, 1) for m in (100, 200, 400)] == sorted({states_in(m, 1) for m in (100, 200, 400)})


def test_a_plan_under_max_memory_caps_the_compiled_stage_there():
    model, _ = order_model()
    words = words_of(model.instantiate())
    held = states_in(700, words)
    assert choose_store(model, Budget(max_memory_mb=700)).stages == (Stage(PYTHON, 250_000), Stage(COMPILED, held))
    assert choose_store(model, Budget(max_memory_mb=700, max_states=10**6)).stages[-1] == Stage(COMPILED, 10**6)
    assert choose_store(model, Budget(max_memory_mb=700), named=COMPILED).stages == (Stage(COMPILED, held),)
    assert choose_store(model, Budget()).stages[-1] == Stage(COMPILED, COMPILED_STATES)      # no option: the fixed cap
    assert choose_store(model, Budget(max_memory_mb=10**6)).stages[-1] == Stage(COMPILED, COMPILED_STATES)   # never raised
    big = Caps().for_product(10**8)       # a product's 48 M gives way to what the memory holds
    assert choose_store(model, Budget(max_memory_mb=700), extends=COMPILED, caps=big).stages == (Stage(COMPILED, held),)
    assert choose_store(model, Budget(max_memory_mb=700), caps=Caps(by_memory=False)).stages[-1] == \
        Stage(COMPILED, COMPILED_STATES)


def test_wider_states_get_fewer_of_them():
    two: Model = _wide(None)
    assert words_of(two.instantiate()) == 2
    assert choose_store(two, Budget(max_memory_mb=700)).stages[-1] == Stage(COMPILED, states_in(700, 2))


def test_the_cap_never_reads_the_machine(monkeypatch):
    """The memory free, the guard's default share and the CPUs change nothing."""
    model, _ = order_model()
    want = choose_store(model, Budget(max_memory_mb=900))
    monkeypatch.setattr(memory_guard, "_available", lambda: 1 << 20)
    monkeypatch.setattr(memory_guard, "resident_bytes", lambda: 1 << 40)
    memory_guard.set_workers(7, 1 << 30)
    try:
        assert choose_store(model, Budget(max_memory_mb=900)) == want
    finally:
        memory_guard.set_workers(1)


def test_a_search_the_memory_cap_stops_is_unknown_and_names_the_option(monkeypatch):
    """With a share that makes 100,000 MB hold four states (the guard never near), the 41-state
    model's compiled stage stops at the fourth: UNKNOWN, naming --max-memory (not a silent pass)."""
    model, _ = order_model()
    monkeypatch.setattr(stores, "MEMORY_SHARE", 4.0 * 16 / (100_000 * MB))
    (r,) = AutoEngine(caps=Caps(switch=2)).check_explicit(model, [holds()], Budget(max_memory_mb=100_000))
    assert r.verdict is Verdict.UNKNOWN and r.engine == "explicit/compiled"
    assert r.stop is not None and r.stop.kind is StopKind.STATES and r.stats.states == 4
    assert "the compiled store's cap for --max-memory 100000" in r.stop.words


def test_a_product_past_its_cap_is_not_searched(monkeypatch):
    """A monitor product has at least the states of the model it extends: where the model's complete
    compiled search found more than the product's plan may hold, the product is not searched (UNKNOWN,
    saying why; the symbolic engine and random runs take it, as beyond a cap) and, where it fits, it is."""
    from verifier.props.monitor import compile_together

    model, claims = order_model()
    engine = AutoEngine(caps=Caps(switch=2))
    (base,) = engine.check_explicit(model, [holds()], Budget())
    assert base.verdict is Verdict.HOLDS and base.engine == "explicit/compiled" and base.stats.states == 41
    product, parts = compile_together(model, [c for c in claims if c.kind in ("ordering", "bounded-response")][:2])
    asked = [c for part in parts for c in part.claims]
    searched = engine.check_explicit(product, asked, Budget())
    assert all(r.stats.states is not None and r.stats.states >= 41 for r in searched)
    monkeypatch.setattr(Caps, "for_product", lambda self, states: Caps(switch=2, compiled=40, by_memory=False))
    for r in engine.check_explicit(product, asked, Budget()):
        assert r.verdict is Verdict.UNKNOWN and r.stats.states is None, r.property.id
        assert "at least the 41 states the search of the model it extends found, past the product's cap of 40" in r.reason


def test_a_state_graph_past_what_max_memory_holds_is_not_built(monkeypatch):
    """The termination claims' state graph, counted from the search's states and transitions: past
    GRAPH_SHARE of --max-memory it is not built (the guard would cut the whole reading short), the
    claims are UNKNOWN saying so, and no python-store search starts for them; within it, decided.
    The limit is 1000 MB above what this process holds already (a test worker may hold more than
    1000 MB after earlier tests: the memory guard would then stop the search, whatever its graph)."""
    from verifier.engines import explicit

    model, claims = order_model()
    ends = [c for c in claims if c.kind == "termination"]
    assert ends
    limit = memory_guard.resident_bytes() // MB + 1000
    engine = AutoEngine(caps=Caps(switch=2))
    decided = engine.check_explicit(model, ends, Budget(max_memory_mb=limit))
    assert all(r.verdict is not Verdict.UNKNOWN and r.engine == "explicit/compiled" for r in decided)
    monkeypatch.setattr(explicit, "GRAPH_SHARE", 1e-9)
    for r in AutoEngine(caps=Caps(switch=2)).check_explicit(model, ends, Budget(max_memory_mb=limit)):
        assert r.verdict is Verdict.UNKNOWN and r.engine == "explicit/compiled", r.property.id
        assert r.stop is not None and r.stop.kind is StopKind.STATES and not r.stop.kind.depends_on_the_machine
        assert "the state graph of 41 states and" in r.reason and f"--max-memory {limit} MB it may hold" in r.reason
    assert explicit.graph_past_memory(object(), Budget()) is None       # without the option: the guard alone


def test_a_products_compiled_search_is_sized_for_its_models_states(monkeypatch):
    """The compiled search of a monitor product is told the states of the model it extends (its
    arrays sized for them from the start, `compiled.search.first_capacity`); the model's own is not."""
    from verifier.engines.compiled import search
    from verifier.props.monitor import compile_together

    told: list[int] = []
    explore = search.explore_compiled

    def recording(*args, **kwargs):
        told.append(kwargs["at_least"])
        return explore(*args, **kwargs)

    monkeypatch.setattr(search, "explore_compiled", recording)
    model, claims = order_model()
    engine = AutoEngine(caps=Caps(switch=2))
    engine.check_explicit(model, [holds()], Budget())
    product, parts = compile_together(model, [c for c in claims if c.kind in ("ordering", "bounded-response")][:2])
    engine.check_explicit(product, [c for part in parts for c in part.claims], Budget())
    assert told[0] == 0 and told[1:] and set(told[1:]) == {41}
