"""The compact store (numpy batches, `compact.py`) against the reference search (`explicit.explore`)
on random models, some forced wider than one 64-bit word (a wide counter in front of the
model's variables, another after them: their slots in the second or third word): the same
states in the same BFS order, transitions, first deadlock, first
witness of each watched predicate, first firing of each tracked action, model errors; the
engine's verdicts and traces (replayed) identical with either store; the visited table's
growth and its spilling to disk keep every state and parent link."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_explicit_differential import bools, models
from tiers import examples

from verifier.engines.actiongen import Labels
from verifier.engines.bfsgen import packing_of
from verifier.engines.compact import Expansion, Watch, explore_compact
from verifier.engines.explicit import ExplicitEngine, explore
from verifier.engines.vecgen import NotVectorisable, compile_batch
from verifier.engines.visited import VisitedTable
from verifier.engines.words import as_ints, as_rows
from verifier.ir.expr import App, Const, Expr, Op, Quant, Var, map_expr
from verifier.ir.model import Action, Assign, Choice, IntType, Model, Variable
from verifier.ir.props import DeadlockFree, Invariant, Reachable
from verifier.resources import Budget
from verifier.semantics import layout
from verifier.trace import replay

SETTINGS = settings(max_examples=examples(20), deadline=None)
BUDGETS = st.sampled_from([Budget(), Budget(), Budget(max_states=7), Budget(max_depth=2)])


def widened(model: Model, front: int, back: int, steps: bool) -> Model:
    """`model` with a counter of `front` bits before its variables and one of `back` bits after
    them; with `steps`, an action moves the front one up to 2."""
    pad = Variable("pad", IntType(Const(0), Const((1 << front) - 1)), init=(Const(0),))
    tail = Variable("tail", IntType(Const(0), Const((1 << back) - 1)), init=(Const(0),))
    step = Action("pad_step", App(Op.LT, (Var("pad"), Const(2))), (Assign(Var("pad"), App(Op.ADD, (Var("pad"), Const(1)))),))
    return Model(model.name, variables=(pad, *model.variables, tail),
                 actions=model.actions + ((step,) if steps else ()), end=model.end)


WIDE = st.builds(widened, models(), st.integers(40, 62), st.integers(0, 62), st.booleans())
ANY_WIDTH = st.one_of(models(), WIDE)


def constant_bounds(e: Expr) -> Expr:
    """`e` with each quantifier's state-dependent upper bound replaced by 2 (the batch code
    unrolls quantifiers over constant bounds only)."""
    def fixed(x: Expr) -> Expr | None:
        if isinstance(x, Quant) and not isinstance(x.hi, Const):
            return Quant(x.kind, x.var, x.lo, Const(2), constant_bounds(x.body))
        return None
    return map_expr(e, fixed)


def vectorisable(model: Model) -> Model:
    """`model` with constant quantifier bounds and choice domains, which the batch code expresses."""
    def choice(c: Choice) -> Choice:
        return replace(c, type=IntType(Const(0), Const(1))) if isinstance(c.type, IntType) else c
    return replace(model, end=constant_bounds(model.end), actions=tuple(
        replace(a, guard=constant_bounds(a.guard), choices=tuple(choice(c) for c in a.choices),
                effects=tuple(replace(f, target=constant_bounds(f.target), value=constant_bounds(f.value))
                              for f in a.effects)) for a in model.actions))


@SETTINGS
@given(ANY_WIDTH, st.lists(bools(), max_size=2), BUDGETS)
def test_the_compact_search_finds_what_the_reference_finds(model, watched, budget):
    ref = explore(model, budget, watch=watched, track=range(len(model.actions)))
    levels: list[np.ndarray] = []
    mine = explore_compact(model, budget, watch=watched, track=range(len(model.actions)), order=levels)
    assert len(mine) == len(ref.packed)
    assert [x for level in levels for x in as_ints(level)] == list(ref.packed)
    assert mine.complete == ref.complete
    assert mine.max_depth == ref.max_depth
    key = ref.packed.__getitem__
    if ref.error is None:
        assert mine.error is None
        if ref.complete:
            assert mine.transitions == ref.transitions
    else:
        assert mine.error == (key(ref.error[0]), ref.error[1])
    if ref.complete or ref.error is not None:
        assert mine.deadlocks[:1] == [key(i) for i in ref.deadlocks[:1]]
        assert {a: f and (f[0], mine.labels.items[f[1]], f[2]) for a, f in mine.fired.items()} == \
            {a: f and (key(f[0]), ref.labels.items[f[1]], f[2]) for a, f in ref.fired.items()}
    assert mine.watch == [None if i is None or i == -1 else key(i) for i in ref.watch]
    assert {k: (key(i), m) for k, (i, m) in ref.watch_errors.items()} == mine.watch_errors
    for k, hit in enumerate(mine.watch):
        if hit is not None:
            assert mine.trace_to(hit) == ref.trace_to(ref.watch[k])


@SETTINGS
@given(ANY_WIDTH.map(vectorisable), bools().map(constant_bounds))
def test_the_batch_code_expands_and_judges_as_the_reference_code(model, predicate):
    lay = layout(model)
    expansion = Expansion(lay, Labels())
    assume(expansion.batch is not None)
    states = list(explore(model, Budget(max_states=3000)).packed)
    S = as_rows(states, packing_of(lay).words)
    out = expansion.batch.expand(S)
    if out is not None:              # None: some state might meet a model error
        final, firings = out
        blocks = expansion.block_labels
        got = sorted((int(lane), b, int(blocks[b]), t) for b, lanes, succ in firings
                     for lane, t in zip(lanes, as_ints(succ)))
        want = expansion.one_by_one(S)
        assert want.error is None and (final == want.final).all()
        assert [(lane, label, t) for lane, _b, label, t in got] == \
            list(zip(want.lanes.tolist(), want.labels.tolist(), as_ints(want.succ)))
    watch = Watch(lay, predicate)
    mask = watch.batch(S) if watch.batch is not None else None
    if mask is not None:
        assert mask.tolist() == [bool(watch.reference(x)) for x in states]


CLAIMS = [DeadlockFree(id="deadlock-free"), Invariant(id="x-small", expr=App(Op.LE, (Var("x"), Const(2)))),
          Reachable(id="y-top", expr=App(Op.EQ, (Var("y"), Const(2)))), Reachable(id="fires", action="act0")]


@settings(max_examples=examples(10), deadline=None)
@given(ANY_WIDTH)
def test_the_engine_gives_the_same_verdicts_and_traces_with_either_store(model):
    want = ExplicitEngine().check(model, CLAIMS, Budget())
    got = ExplicitEngine(store="compact").check(model, CLAIMS, Budget())
    errors = any("model error" in r.reason for r in got)     # a path may pass the state that raises
    for w, g in zip(want, got):
        assert (g.verdict, g.reason, g.depth, g.stats.states) == (w.verdict, w.reason, w.depth, w.stats.states)
        assert (g.trace is None) == (w.trace is None)
        if g.trace is not None:
            assert g.trace == w.trace
            if not errors:
                replay(layout(model), g.trace)


def counter(n: int) -> Model:
    """Two counters 0..n-1 moving independently: n * n states, BFS depth 2(n-1)."""
    step = [Action(f"inc_{v}", App(Op.LT, (Var(v), Const(n - 1))), (Assign(Var(v), App(Op.ADD, (Var(v), Const(1)))),))
            for v in ("x", "y")]
    return Model("counters", variables=tuple(Variable(v, IntType(Const(0), Const(n - 1)), init=(Const(0),))
                                             for v in ("x", "y")), actions=tuple(step))


def test_a_model_the_batch_code_expresses_is_vectorised():
    model = counter(5)
    compile_batch(layout(model), packing_of(layout(model)), Labels())
    assert explore_compact(model).vectorised == ""


def test_spilling_to_disk_keeps_every_state_and_parent():
    model = counter(60)                        # 3,600 states over 119 levels
    mine = explore_compact(model, visited_budget=16 * 1024)
    assert mine.table.runs, "the budget was meant to force a spill"
    assert len(mine) == 3600 and mine.complete
    far = packing_of(layout(model)).pack((59, 59))
    assert len(mine.chain(far)) == 119
    mine.table.close()


def test_a_search_that_grows_its_table_keeps_every_parent_link():
    model = counter(130)                       # 16,900 states: the table (16,384 slots at first) grows mid-level
    mine = explore_compact(model)
    assert len(mine) == 16_900 and mine.table.capacity > 1 << 14
    pack = packing_of(layout(model)).pack
    for x, y in [(129, 129), (0, 129), (64, 65), (100, 3)]:
        chain = mine.chain(pack((x, y)))
        assert len(chain) == x + y + 1 and chain[0] == pack((0, 0))
        assert chain[x] == pack((x, 0))        # the first firing (inc_x) first: the reference's parents
    replay(layout(model), mine.trace_to(pack((129, 129))))


def test_the_table_grows_and_keeps_parent_links():
    rng = np.random.default_rng(7)
    keys = np.unique(rng.integers(0, 1 << 62, 20_000, dtype=np.uint64))
    table = VisitedTable(capacity=64)
    table.reserve(1)
    table.insert(keys[:1], np.zeros(1, np.uint32))
    for lo in range(1, keys.shape[0], 4096):
        batch = keys[lo:lo + 4096]
        table.reserve(batch.shape[0])
        parents = table.refs_of(keys[lo - 1:lo])                 # each batch hangs off the previous key
        assert table.insert(batch, np.repeat(parents, batch.shape[0])).all()
    assert len(table) == keys.shape[0] and (table.find(keys) >= 0).all()
    assert table.parent_of(int(keys[5000])) == int(keys[4096])
    assert table.nbytes <= 16 * len(table)


def test_a_state_of_several_words_packs_each_variable_into_one_word():
    model = widened(counter(4), 60, 62, steps=True)
    p = packing_of(layout(model))
    assert p.words == 3 and p.bits == 60 + 2 + 2 + 62
    assert [p.word(k) for k in range(4)] == [(0, 0), (0, 60), (1, 0), (2, 0)]   # y does not fit the bit word 0 has left
    compile_batch(layout(model), p, Labels())
    mine = explore_compact(model)
    assert mine.vectorised == "" and len(mine) == 48 and mine.complete
    far = p.pack((2, 3, 3, 0))
    assert len(mine.chain(far)) == 9
    replay(layout(model), mine.trace_to(far))


def test_a_search_of_two_words_spills_to_disk_and_keeps_every_state_and_parent():
    model = widened(counter(40), 55, 20, steps=False)        # 1,600 states over 79 levels, in 2 words
    mine = explore_compact(model, visited_budget=16 * 1024)
    assert mine.table.runs and mine.table.words == 2, "the budget was meant to force a spill"
    assert len(mine) == 1600 and mine.complete
    far = packing_of(layout(model)).pack((0, 39, 39, 0))
    assert len(mine.chain(far)) == 79
    replay(layout(model), mine.trace_to(far))
    mine.table.close()


def test_a_variable_wider_than_a_word_is_not_vectorised():
    wide = Model("wide", variables=(Variable("v", IntType(Const(0), Const(255)), index=IntType(Const(0), Const(8)),
                                             init=(Const(0),)),), actions=())
    assert packing_of(layout(wide)).words == 0
    try:
        compile_batch(layout(wide), packing_of(layout(wide)), Labels())
    except NotVectorisable as err:
        assert "72 bits" in str(err)
    else:
        raise AssertionError("a 72-bit variable was accepted")
