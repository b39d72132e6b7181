"""The compiled store (Numba, `engines/compiled/`) against the reference search
(`explicit.explore`) on random models, some forced wider than one 64-bit word (states of two
or three words): the same states in the same BFS order, transitions,
first deadlock, first witness of each watched predicate, first firing of each tracked action,
model errors (in the search and in a watched predicate), under budgets too, on models whose
guards open with a test of one slot (the calls grouped by its value), models where only some
guards do, and others; the engine's
verdicts and traces (replayed) identical with either store; the shipped games' state counts,
verdicts and traces (`--slow`). Each distinct model is compiled once and cached on disk (the user cache folder,
or $TURNPROOF_CACHE_DIR), so a later run of these tests reuses the machine code."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compact_store import counter, widened
from test_explicit_differential import bools, models, phased_models
from tiers import examples

from verifier.engines.bfsgen import packing_of
from verifier.engines.compiled import cache, search
from verifier.engines.compiled.arrays import SearchArrays
from verifier.engines.compiled.numbagen import RUNTIME, module_source, opaque_literals
from verifier.engines.compiled.search import explore_compiled, why_not
from verifier.engines.explicit import ExplicitEngine, explore
from verifier.files import CACHE_ENV
from verifier.ir.expr import App, Const, Index, Op, Var
from verifier.ir.model import Action, Assign, IntType, Model, Variable
from verifier.ir.props import DeadlockFree, Invariant, Reachable
from verifier.lang import load_model, load_properties
from verifier.resources import Budget
from verifier.semantics import layout
from verifier.trace import replay

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = settings(max_examples=examples(6), deadline=None)


@st.composite
def partly_phased_models(draw):
    """Phased models where some actions' guards lose their opening test: the calls are grouped in
    runs of consecutive actions that keep it."""
    model = draw(phased_models())
    return replace(model, actions=tuple(replace(a, guard=a.guard.args[1]) if draw(st.booleans()) else a
                                        for a in model.actions))


WIDE = st.builds(widened, st.one_of(models(), phased_models()), st.integers(40, 61), st.integers(0, 62),
                 st.booleans())        # (a counter of 62 bits plus one would not fit the int64 arithmetic)
MODELS = st.one_of(models(), phased_models(), partly_phased_models(), WIDE)
BUDGETS = st.sampled_from([Budget(), Budget(), Budget(max_states=7), Budget(max_depth=2)])
CLAIMS = [DeadlockFree(id="deadlock-free"), Invariant(id="x-small", expr=App(Op.LE, (Var("x"), Const(2)))),
          Reachable(id="y-top", expr=App(Op.EQ, (Var("y"), Const(2)))), Reachable(id="fires", action="act0")]


def claims_watching(model: Model, watched: list) -> list:
    """Claims the engine decides by watching `watched`, in that order (its search then loads the module
    compiled for them): an invariant for a negation, reachability for the rest; and whether the model
    deadlocks, and whether its first action fires."""
    return [DeadlockFree(id="deadlock-free"), Reachable(id="fires", action=model.actions[0].name),
            *(Invariant(id=f"w{k}", expr=w.args[0]) if isinstance(w, App) and w.op is Op.NOT
              else Reachable(id=f"w{k}", expr=w) for k, w in enumerate(watched))]


@SETTINGS
@given(MODELS, st.lists(bools(), max_size=2), BUDGETS, st.sampled_from([None, 0]))
def test_the_compiled_search_finds_what_the_reference_finds(model, watched, budget, spill_bytes):
    """The same search as the reference's; and, with the same module (each draw is a cold compile,
    compiled once here), the whole search from one state's room, the visited table filled again from
    the stored states at each growth (spilled or not): the same states, order and parents; and the
    engine's verdicts and traces with either store on claims watching the same predicates."""
    assert why_not(model, watched) == ""
    ref = explore(model, budget, watch=watched, track=range(len(model.actions)))
    mine = explore_compiled(model, budget, watch=watched, track=range(len(model.actions)))
    assert mine.packed() == list(ref.packed)               # the same states in the same order
    assert mine.parent.tolist() == list(ref.parent)
    assert (mine.complete, mine.stop, mine.error) == (ref.complete, ref.stop, ref.error)
    assert mine.max_depth == ref.max_depth
    assert mine.transitions == ref.transitions
    assert mine.deadlocks == ref.deadlocks[:1]
    assert mine.fired == {a: f and (f[0], mine.labels(*ref.labels.items[f[1]]), f[2]) for a, f in ref.fired.items()}
    assert mine.watch == [None if i == -1 else i for i in ref.watch]
    assert mine.watch_errors == ref.watch_errors
    for hit in mine.watch:
        if hit is not None:
            assert mine.trace_to(hit) == ref.trace_to(hit)
    whole = ref if budget == Budget() else explore(model, watch=watched)
    with mock.patch.object(search, "FIRST_CAPACITY", 1):
        grown = explore_compiled(model, watch=watched, spill_bytes=spill_bytes)
    assert grown.packed() == list(whole.packed) and grown.parent.tolist() == list(whole.parent)
    assert (grown.transitions, grown.complete, grown.error) == (whole.transitions, whole.complete, whole.error)
    for at_least in (len(whole) // 2, len(whole) + search.FIRST_CAPACITY):   # sized for some or past all of them
        with mock.patch.object(search, "FIRST_CAPACITY", 1):
            sized = explore_compiled(model, budget, watch=watched, track=range(len(model.actions)), at_least=at_least)
        assert sized.packed() == mine.packed() and sized.parent.tolist() == mine.parent.tolist()
        assert (sized.transitions, sized.complete, sized.stop, sized.error, sized.levels) == \
            (mine.transitions, mine.complete, mine.stop, mine.error, mine.levels)
        assert (sized.watch, sized.fired, sized.deadlocks) == (mine.watch, mine.fired, mine.deadlocks)

    claims = claims_watching(model, watched)
    want = ExplicitEngine().check(model, claims, budget)
    got = ExplicitEngine(store="compiled").check(model, claims, budget)
    errors = any("model error" in r.reason for r in got)     # a path may pass the state that raises
    for w, g in zip(want, got):
        assert (g.verdict, g.reason, g.stop, g.depth, g.stats.states) == \
            (w.verdict, w.reason, w.stop, w.depth, w.stats.states)
        assert (g.engine, g.evidence["store"]) == ("explicit/compiled", "compiled")
        assert g.trace == w.trace
        if g.trace is not None and not errors:
            replay(layout(model), g.trace)


def test_the_arrays_and_table_grow_and_keep_every_parent_link():
    model = counter(300)                       # 90,000 states: the arrays grow from 4,096 several times
    mine = explore_compiled(model)
    assert len(mine) == 90_000 and mine.complete and mine.max_depth == 598
    pack = packing_of(layout(model)).pack
    far = mine.keys.tolist().index(pack((299, 299)))
    assert len(mine.chain(far)) == 599
    replay(layout(model), mine.trace_to(far))
    parents = mine.parent
    assert [mine.parent_of(i) for i in range(0, len(mine), 997)] == parents[::997].tolist()   # past two marks
    assert mine.keys.nbytes == 8 * len(mine) and mine.nbytes <= 8.5 * len(mine)       # states and links
    assert mine.peak_bytes <= 16 * len(mine) and not mine.spilled                       # the table's included


def test_a_search_sized_for_the_states_it_stores_at_least_grows_its_table_only_past_them():
    """`at_least` sizes the arrays from the start (never past the state cap): the same search, the
    visited table not filled again on the way to those states (without a cap at most once at the
    end: the room for the last state's successors; with one not at all, nor sized for 1/1.38 of them)."""
    model = counter(300)
    ref = explore_compiled(model)
    with mock.patch.object(SearchArrays, "_regrow", autospec=True, side_effect=SearchArrays._regrow) as regrow:
        sized = explore_compiled(model, at_least=90_000)
    assert regrow.call_count <= 1 and all(call.args[3] > 89_000 for call in regrow.call_args_list)
    assert np.array_equal(sized.keys, ref.keys) and np.array_equal(sized.parent, ref.parent)
    assert (sized.levels, sized.transitions, sized.complete) == (ref.levels, ref.transitions, True)
    with mock.patch.object(SearchArrays, "_regrow", autospec=True, side_effect=SearchArrays._regrow) as regrow:
        capped = explore_compiled(model, Budget(max_states=10**6), at_least=90_000)   # as the portfolio sizes a product
        shy = explore_compiled(model, Budget(max_states=10**6), at_least=65_000)     # 1.38 times as many states
    assert regrow.call_count == 0                      # its first table FIRST_LOAD full with them: not filled again
    for space in (capped, shy):
        assert np.array_equal(space.keys, ref.keys) and np.array_equal(space.parent, ref.parent)
    spilled = explore_compiled(model, spill_bytes=200_000, at_least=90_000)     # sized past the share: in a file
    assert spilled.spilled and np.array_equal(spilled.keys, ref.keys) and np.array_equal(spilled.parent, ref.parent)
    assert search.first_capacity(10**9, Budget(max_states=10_000)) == 10_000
    assert search.first_capacity(10, Budget()) == search.FIRST_CAPACITY


def test_states_past_the_spill_threshold_are_kept_in_a_file_with_the_same_search():
    model = counter(300)
    mine = explore_compiled(model, spill_bytes=200_000)
    ref = explore_compiled(model)
    assert mine.spilled and not ref.spilled
    assert np.array_equal(mine.keys, ref.keys) and np.array_equal(mine.parent, ref.parent)
    assert (mine.levels, mine.transitions) == (ref.levels, ref.transitions)


def test_a_state_of_several_words_is_searched_in_the_compiled_store():
    model = widened(counter(40), 55, 20, steps=True)         # 4,800 states in two words
    assert packing_of(layout(model)).words == 2 and why_not(model) == ""
    mine = explore_compiled(model)
    ref = explore(model)
    assert mine.packed() == list(ref.packed) and mine.parent.tolist() == list(ref.parent)
    assert mine.keys.nbytes == 16 * len(mine) and mine.nbytes <= 16.5 * len(mine)
    (result,) = ExplicitEngine(store="compiled").check(model, [DeadlockFree(id="d")], Budget())
    assert (result.engine, result.evidence["store"], result.stats.states) == ("explicit/compiled", "compiled", 4_800)


def test_a_variable_wider_than_one_word_goes_to_the_python_store():
    wide = Model("wide", variables=(Variable("v", IntType(Const(0), Const(255)), index=IntType(Const(0), Const(8)),
                                             init=(Const(0),)),),
                 actions=(Action("step", App(Op.LT, (Index("v", Const(0)), Const(3))),
                                 (Assign(Index("v", Const(0)), App(Op.ADD, (Index("v", Const(0)), Const(1)))),)),))
    assert "a variable wider than one 63-bit word" in why_not(wide)
    (result,) = ExplicitEngine(store="compiled").check(wide, [DeadlockFree(id="d")], Budget())
    assert result.evidence["store"].startswith("python: the compiled store cannot search it")
    assert result.stats.states == 4


def test_a_module_numba_cannot_compile_goes_to_the_compact_store(monkeypatch):
    from numba.core.errors import TypingError

    def refuse(text: str):
        raise TypingError("Cannot unify bool and int64")

    monkeypatch.setattr(cache, "load", refuse)
    (result,) = ExplicitEngine(store="compiled").check(counter(3), [DeadlockFree(id="d")], Budget())
    assert result.evidence["store"] == "compact: the compiled store could not compile it: Cannot unify bool and int64"
    assert result.stats.states == 9


def test_generated_modules_are_kept_in_the_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    model = counter(4)
    text = module_source(layout(model), ()).text
    cache.load(RUNTIME)         # what a model's module imports by name (the search loads it first too)
    module, known = cache.load(text)
    assert not known and (tmp_path / f"{cache.module_key(text)}.py").read_text() == text
    assert cache.load(text) == (module, True)
    first = explore_compiled(model)
    assert first.cached and len(first) == 16


@pytest.mark.slow
@pytest.mark.parametrize("game", ["aeons_end", "alice", "alpha_clash", "shadow_era", "wtactics"])
def test_the_shipped_games_give_the_same_verdicts_in_the_compiled_store(game):
    """Each game's state claims at its defaults (first reading): the python store's verdicts, states
    and traces.
    Slow the first time only: the games' compiled code is cached."""
    model = load_model(str(ROOT / "models" / f"{game}.yaml"))
    claims = [p for p in load_properties(str(ROOT / "properties" / f"{game}.yaml"), model)
              if isinstance(p, (Invariant, Reachable, DeadlockFree))]
    want = ExplicitEngine().check(model, claims, Budget())
    got = ExplicitEngine(store="compiled").check(model, claims, Budget())
    for w, g in zip(want, got):
        assert (g.verdict, g.reason, g.stop, g.depth, g.stats.states, g.trace) == \
            (w.verdict, w.reason, w.stop, w.depth, w.stats.states, w.trace)
        assert g.evidence["store"] == "compiled"


LITERAL_OUT_OF_RANGE = """
@njit(INT(INT), _nrt=False)
def fire(s):
    n = 0
    if s > 0:
        n45 = -2
        ok46 = False
        if not 0 <= n45 <= 3:
            pass
        else:
            ok46 = True
        if ok46:
            n47 = abs(_div(1, -1))
            ok46 = False
            if not -2 <= n47 <= 2:
                pass
            else:
                ok46 = True
        if ok46:
            n = n45 + n47
    return n
"""


def test_a_literal_out_of_its_range_leaves_no_local_undefined():
    """The shape a random model's module had (a value set to a literal out of its range, then a
    range-checked value that may fail): Numba prunes the branches the literal decides before
    typing and leaves a local undefined; read through `_opaque`, the function compiles."""
    from numba import njit
    from numba.core.errors import UnsupportedError

    runtime, _ = cache.load(RUNTIME)

    def compiled(text: str):
        names = {"njit": njit, "INT": runtime.INT, "_div": runtime._div, "_opaque": runtime._opaque}
        exec(text, names)
        return names["fire"]

    with pytest.raises(UnsupportedError, match="Undefined"):
        compiled(LITERAL_OUT_OF_RANGE)
    assert compiled(opaque_literals(LITERAL_OUT_OF_RANGE))(1) == 0
