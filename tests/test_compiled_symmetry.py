"""Player symmetry in the compiled store (`engines/compiled/symmetry.py`) against the python store's
reduction on the random symmetric models of `test_reduce_symmetry` (and the same widened to two
words): through the engine the same verdicts, reductions, state counts and traces (lifted back to
the model, each replays), the turn's termination decided on the compiled store's reduced graph,
lassos included; and the search the engine compiled, the same canonical states in the same order
and parents, the same first witnesses, firings and deadlocks."""
from __future__ import annotations

from dataclasses import replace
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from test_reduce_symmetry import MODELS, claims
from tiers import examples

from verifier.engines.compiled import search
from verifier.engines.compiled.search import explore_compiled
from verifier.engines.explicit import ExplicitEngine, explore
from verifier.ir.expr import Const
from verifier.ir.model import IntType, Model, Variable
from verifier.lang.symmetry import SymmetryCheck
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

SETTINGS = settings(max_examples=examples(4), deadline=None)


def widened(model: Model, bits: int) -> Model:
    """`model` with a counter of `bits` bits before its variables, which no action changes: its
    state takes two words (the players' fields in the first or the second)."""
    pad = Variable("pad", IntType(Const(0), Const((1 << bits) - 1)), init=(Const(0),))
    return replace(model, variables=(pad, *model.variables))


ANY_WIDTH = st.one_of(MODELS, st.builds(widened, MODELS, st.integers(50, 62)))


@SETTINGS
@given(ANY_WIDTH, st.data())
def test_the_engine_and_its_reduced_compiled_search_agree_with_the_python_store(model, data):
    """Each draw is a cold compile, so both comparisons run on it with the same module (compiled once):
    the engine's verdicts and traces with either store, then the search the engine compiled (its
    watched predicates, every action tracked) against the python store's, state by state."""
    SymmetryCheck(model).model_parts()
    props = data.draw(claims(model.players))
    want = ExplicitEngine().check(model, props, Budget())
    searched = []

    def recorded(*args, **kwargs):
        searched.append(explore_compiled(*args, **kwargs))
        return searched[-1]

    with mock.patch.object(search, "explore_compiled", recorded):
        got = ExplicitEngine(store="compiled").check(model, props, Budget())
    lay = layout(model)
    for w, g in zip(want, got):
        assert (g.verdict, g.reason, g.depth, g.stats.states, g.reductions) == \
            (w.verdict, w.reason, w.depth, w.stats.states, w.reductions)
        assert (g.engine, g.evidence["store"]) == ("explicit/compiled", "compiled")
        assert g.trace == w.trace
        if g.trace is not None:
            states = replay(lay, g.trace)
            if g.verdict is Verdict.VIOLATED and g.trace.loop_start is not None:
                assert states[-1] == states[g.trace.loop_start]

    (engines,) = searched
    watched = list(engines.watched)        # the claims' invariants and reachability, the turn's termination
    track = range(len(model.actions))
    ref = explore(model, watch=watched, track=track, symmetric=True)
    mine = explore_compiled(model, watch=watched, track=track, symmetric=True)
    assert mine.module is engines.module
    assert mine.reductions == ref.reductions == ("symmetry",)
    assert mine.packed() == list(ref.packed)
    assert mine.parent.tolist() == list(ref.parent)
    assert (mine.complete, mine.transitions, mine.max_depth) == (ref.complete, ref.transitions, ref.max_depth)
    assert mine.deadlocks == ref.deadlocks[:1]
    assert mine.watch == ref.watch
    assert mine.fired == {a: f and (f[0], mine.labels(*ref.labels.items[f[1]]), f[2]) for a, f in ref.fired.items()}
    for a, hit in mine.fired.items():
        if hit is not None:
            assert mine.trace_through(*hit) == ref.trace_through(*ref.fired[a])
