"""The packed-state engine against the reference semantics, on random models that use
every feature the code generator specialises: negative and single-value ranges, enums,
arrays with dynamic (possibly out-of-range) indices, aliasing writes, all overflow
policies, quantifiers with constant and state-dependent bounds (some binding a choice's
name), division and modulo by possibly non-positive numbers, constant, state-dependent,
empty and raising choice domains, enum choices of three values (compared, stored, indexing
an array), bool choices, prohibitions and an `initially` filter."""
from __future__ import annotations

from dataclasses import replace
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from verifier.engines.bfsgen import compile_model, compile_predicate, compile_search, packed_predicate, packing_of
from verifier.engines.compiled.search import explore_compiled
from verifier.engines.explicit import explore
from verifier.ir.expr import App, Const, Index, Local, Op, Quant, QuantKind, Var
from verifier.ir.model import Action, Assign, BoolType, Choice, EnumType, IntType, Modality, Model, Overflow, Variable
from verifier.resources import Budget
from verifier.semantics import EvalError, evaluate, initial_states, layout, transitions

COLOUR = EnumType("Colour", ("red", "green", "blue"))


def c(v: int) -> Const:
    return Const(v)


def variables(draw) -> tuple[Variable, ...]:
    pol = lambda: draw(st.sampled_from(list(Overflow)))  # noqa: E731
    return (
        Variable("x", IntType(c(0), c(3)), init=(c(0),), overflow=pol()),
        Variable("y", IntType(c(-2), c(2)), init=(None,), overflow=pol()),      # any value: 5 initial states
        Variable("b", BoolType(), init=(Const(0, is_bool=True),)),
        Variable("e", COLOUR, init=(Const(1, enum="Colour"),)),
        Variable("a", IntType(c(0), c(3)), index=IntType(c(0), c(2)), init=(c(1), c(0), c(2)), overflow=pol()),
        Variable("z", IntType(c(5), c(5)), init=(c(5),)),                       # a field of width 0
        Variable("m", BoolType(), index=COLOUR, init=(Const(0, is_bool=True),)),
    )


LEAVES = [Var("x"), Var("y"), Var("z"), Var("e"), Index("a", c(0)), Index("a", c(2))]
BINDERS = st.sampled_from(["q", "q", "n"])         # a quantifier's name: "n" hides a choice n where there is one
COLOURS = [Const(v, enum="Colour") for v in range(3)]


@cache
def ints(locals_: tuple[str, ...] = ()):
    leaves = st.one_of(st.integers(-2, 4).map(c), st.sampled_from(LEAVES + [Local(n) for n in locals_]))

    def grow(inner):
        safe = st.tuples(st.sampled_from([Op.ADD, Op.SUB, Op.MIN, Op.MAX, Op.MUL]), inner, inner).map(
            lambda t: App(t[0], (t[1], t[2])))
        step = st.tuples(st.sampled_from(LEAVES), st.sampled_from([Op.ADD, Op.SUB]), st.integers(1, 2)).map(
            lambda t: App(t[1], (t[0], c(t[2]))))                                # x + 1: counters move
        divisor = st.one_of(st.integers(-1, 3).map(c), st.sampled_from(LEAVES))   # may be 0 or negative
        in_range = inner.map(lambda i: Index("a", App(Op.MOD, (i, c(3)))))         # dynamic index, in range
        return st.one_of(
            safe, safe, step, step, step, in_range, in_range,
            st.tuples(st.sampled_from([Op.DIV, Op.MOD]), inner, divisor).map(lambda t: App(t[0], (t[1], t[2]))),
            inner.map(lambda i: Index("a", i)),                                   # dynamic index
            st.tuples(bools_flat(locals_), inner, inner).map(lambda t: App(Op.ITE, t)),
            st.tuples(st.sampled_from([QuantKind.SUM, QuantKind.COUNT]), st.booleans(), BINDERS).map(
                lambda t: Quant(t[0], t[2], c(0), c(2) if t[1] else Var("x"),
                                Index("a", Local(t[2])) if t[0] is QuantKind.SUM
                                else App(Op.LT, (Index("a", Local(t[2])), Var("x"))))),
            inner.map(lambda i: App(Op.ABS, (i,))),
            inner.map(lambda i: App(Op.NEG, (i,))),
        )

    return st.recursive(leaves, grow, max_leaves=4)


@cache
def bools_flat(locals_: tuple[str, ...] = ()):
    colours = [Var("e")] + ([Local("k")] if "k" in locals_ else [])      # the enum slot, an enum choice
    leaves = [Var("b"), Index("m", Const(0, enum="Colour"))] + [Index("m", k) for k in colours] + \
        ([Local("f")] if "f" in locals_ else [])                              # a bool choice
    cmp = st.tuples(st.sampled_from([Op.LT, Op.LE, Op.EQ, Op.NE, Op.GT, Op.GE]),
                    st.one_of(st.integers(-1, 3).map(c), st.sampled_from(LEAVES + [Local(n) for n in locals_])),
                    st.one_of(st.integers(-1, 3).map(c), st.sampled_from(LEAVES))).map(
        lambda t: App(t[0], (t[1], t[2])))
    enum = st.tuples(st.sampled_from([Op.EQ, Op.NE]), st.sampled_from(colours), st.sampled_from(COLOURS + colours)).map(
        lambda t: App(t[0], (t[1], t[2])))
    return st.one_of(cmp, st.sampled_from(leaves), enum)


@cache
def bools(locals_: tuple[str, ...] = ()):
    def grow(inner):
        return st.one_of(
            st.tuples(st.sampled_from([Op.AND, Op.OR, Op.IMPLIES]), inner, inner).map(
                lambda t: App(t[0], (t[1], t[2]))),
            inner.map(lambda b: App(Op.NOT, (b,))),
            st.tuples(st.sampled_from([QuantKind.FORALL, QuantKind.EXISTS]), st.booleans(), BINDERS).flatmap(
                lambda t: ints(tuple(dict.fromkeys((*locals_, t[2])))).map(
                    lambda body: Quant(t[0], t[2], c(0), c(2) if t[1] else Var("x"),
                                       App(Op.LE, (Index("a", Local(t[2])), body))))),
            st.tuples(st.sampled_from([Op.LT, Op.EQ, Op.NE]), ints(locals_), ints(locals_)).map(
                lambda t: App(t[0], (t[1], t[2]))),
        )

    return st.recursive(bools_flat(locals_), grow, max_leaves=4)


@cache
def facts(moving):
    """Guards the generator reads slot values from (`x == 1 and not (y == 0) and b`), mostly
    about the slot the action moves: negated and mirrored equalities must fix nothing."""
    static = st.one_of(st.just(moving), st.sampled_from([Var("x"), Var("y"), Index("a", c(0)), Index("a", c(2))]))
    equal = st.tuples(static, st.integers(-2, 3).map(c), st.booleans()).map(
        lambda t: App(Op.EQ, (t[0], t[1]) if t[2] else (t[1], t[0])))
    flag = st.sampled_from([Var("b"), Index("m", Const(1, enum="Colour")), App(Op.NE, (Var("b"), c(0)))])
    conjunct = st.one_of(equal, equal.map(lambda e: App(Op.NOT, (e,))), flag, flag.map(lambda f: App(Op.NOT, (f,))))
    return st.lists(conjunct, min_size=1, max_size=3).map(
        lambda cs: cs[0] if len(cs) == 1 else App(Op.AND, tuple(cs)))


CHOICES = st.sampled_from([
    (), (Choice("n", IntType(c(0), c(1))),),
    (Choice("n", IntType(c(0), Var("x"))),),                 # state-dependent
    (Choice("n", IntType(c(1), Var("x"))),),                 # empty where x is 0
    (Choice("n", IntType(c(-1), Index("a", Var("x")))),),    # a model error where x is 3
    (Choice("n", IntType(c(0), c(1))), Choice("k", COLOUR)), (Choice("k", COLOUR),), (Choice("k", COLOUR),),
    (Choice("f", BoolType()), Choice("n", IntType(c(-1), c(1))))])


MOVING = st.sampled_from([Var("x"), Var("y"), Index("a", c(0)), Index("a", c(1))])
STEPS = st.sampled_from([Op.ADD, Op.SUB])
TARGETS = st.lists(st.sampled_from(["x", "y", "z", "a0", "a2", "a?", "a?", "b", "e", "m?"]), min_size=0, max_size=3)


@cache
def enum_values(with_k: bool):
    """What an action writes to the enum slot `e`."""
    return st.sampled_from([Const(0, enum="Colour"), Const(2, enum="Colour"), Local("k") if with_k else Var("e")])


@cache
def flag_indices(with_k: bool):
    """Where an action writes in the bool array `m`."""
    return st.sampled_from([Var("e"), Const(1, enum="Colour")] + ([Local("k")] if with_k else []))


@cache
def guards(names: tuple[str, ...], moving):
    return st.one_of(bools(names), bools(names).map(lambda g: App(Op.OR, (g, App(Op.NE, (Var("x"), c(3)))))),
                     facts(moving), facts(moving))


@st.composite
def actions(draw, i: int):
    """An action; its strategies built once (`cache`, module level), not on every draw."""
    choices = draw(CHOICES)
    names = tuple(ch.name for ch in choices)
    moving = draw(MOVING)
    effects = [Assign(moving, App(draw(STEPS), (moving, c(1))))]                   # a counter moves
    if "k" in names and draw(st.booleans()):
        effects.append(Assign(Var("e"), Local("k")))                                   # an enum choice kept
    for target in draw(TARGETS):
        if target in ("x", "y", "z"):
            effects.append(Assign(Var(target), draw(ints(names))))
        elif target == "b":
            effects.append(Assign(Var("b"), draw(bools(names))))
        elif target == "e":
            effects.append(Assign(Var("e"), draw(enum_values("k" in names))))
        elif target == "m?":
            effects.append(Assign(Index("m", draw(flag_indices("k" in names))), draw(bools(names))))
        else:
            index = c(int(target[1])) if target[1] != "?" else draw(ints(names))
            effects.append(Assign(Index("a", index), draw(ints(names))))
    guard = draw(guards(names, moving))
    modality = Modality.MUST_NOT if i and draw(st.integers(0, 7)) == 0 else Modality.MAY    # a prohibition: never fired
    return Action(f"act{i}", guard, tuple(effects), choices, modality)


INITIALLY = st.sampled_from([Const(1, is_bool=True), Const(1, is_bool=True), App(Op.GE, (Var("y"), c(0))),
                             App(Op.NE, (Var("y"), Index("a", c(0))))])


@st.composite
def models(draw):
    acts = tuple(draw(actions(i)) for i in range(draw(st.integers(1, 4))))
    end = draw(st.one_of(st.just(Const(0, is_bool=True)), bools_flat()))
    return Model("random", variables=variables(draw), actions=acts, end=end, initially=draw(INITIALLY))


def naive_bfs(model: Model):
    """States in BFS order, transitions, deadlocks, first gap per (action, slot), error index."""
    lay = layout(model)
    seen = list(dict.fromkeys(initial_states(lay)))
    index = {s: i for i, s in enumerate(seen)}
    count, stuck, gaps, head = 0, [], {}, 0
    while head < len(seen):
        s = seen[head]
        try:
            firing = transitions(lay, s)
        except EvalError:
            return seen, count, stuck, gaps, head
        moved = False
        for t in firing:
            if t.gap is not None:
                gaps.setdefault((model.actions.index(t.action), t.gap.slot), (head, t.choice, t.gap))
            if t.target is None:
                continue
            moved = True
            count += 1
            if t.target not in index:
                index[t.target] = len(seen)
                seen.append(t.target)
        if not moved and not evaluate(lay, model.end, s):
            stuck.append(head)
        head += 1
    return seen, count, stuck, gaps, None


@st.composite
def phased_models(draw):
    """Models whose every guard opens with a test of one slot, as desugared phases do (the
    generated code then tests the slot once and fires only the actions of its value)."""
    model = draw(models())
    slot = draw(st.sampled_from([Var("e"), Var("x"), Index("a", c(1))]))
    enum = "Colour" if slot == Var("e") else None
    return replace(model, actions=tuple(
        replace(a, guard=App(Op.AND, (App(Op.EQ, (slot, Const(draw(st.integers(0, 2)), enum=enum))), a.guard)))
        for a in model.actions))


SETTINGS = settings(max_examples=examples(120), deadline=None)


@SETTINGS
@given(models())
def test_search_matches_the_semantics(model):
    search_matches_the_semantics(model)


@settings(SETTINGS, max_examples=examples(60))
@given(phased_models())
def test_search_of_phased_models_matches_the_semantics(model):
    search_matches_the_semantics(model)


def search_matches_the_semantics(model):
    space = explore(model)
    states, count, stuck, gaps, error = naive_bfs(model)
    if error is None:
        assert space.complete and space.error is None
        assert list(space.states) == states                  # same states in the same BFS order
        assert space.transitions == count
        assert space.deadlocks == stuck
    else:
        assert space.error is not None and space.error[0] == error and not space.complete
        assert list(space.states)[:len(states)] == states
        stuck = [i for i in stuck if i < error]
        assert space.deadlocks == stuck
    lay = layout(model)
    mine = {(a, lay.slots[k].name): (i, space.labels.items[x][1], g)
            for (a, k), (i, x, g) in space.slot_gaps.items() if error is None or i < error}
    assert mine == {k: v for k, v in gaps.items() if error is None or v[0] < error}


@SETTINGS
@given(models(), st.data())
def test_firings_match_the_semantics_state_by_state(model, data):
    firings_match_the_semantics(model, data)


@settings(SETTINGS, max_examples=examples(60))
@given(phased_models(), st.data())
def test_firings_of_phased_models_match_the_semantics(model, data):
    firings_match_the_semantics(model, data)


def slot_values(lay):
    """A state: a value in range for each slot, drawn in one draw."""
    return st.tuples(*(st.integers(s.lo, s.hi) for s in lay.slots))


def firings_match_the_semantics(model, data):
    lay = layout(model)
    p = packing_of(lay)
    expand = compile_model(lay).expand
    states = slot_values(lay)
    for _ in range(12):
        state = data.draw(states)
        assert p.unpack(p.pack(state)) == state
        try:
            want = [(model.actions.index(t.action), t.choice, t.target,
                     None if t.gap is None else (t.gap.slot, t.gap.value, t.gap.lo, t.gap.hi))
                    for t in transitions(lay, state)]
        except EvalError:
            try:
                expand(state)
            except EvalError:
                continue
            raise AssertionError("the semantics raise a model error, the generated code does not")
        assert expand(state) == want


@SETTINGS
@given(models(), st.one_of(bools(), ints()), st.data())
def test_predicates_match_the_semantics(model, e, data):
    lay = layout(model)
    p = packing_of(lay)
    on_tuple, on_int = compile_predicate(lay, e), packed_predicate(lay, e)
    states = slot_values(lay)
    for _ in range(12):
        state = data.draw(states)
        try:
            want = bool(evaluate(lay, e, state))
        except EvalError:
            for fn, arg in ((on_tuple, state), (on_int, p.pack(state))):
                try:
                    fn(arg)
                except EvalError:
                    continue
                raise AssertionError(f"no model error from {fn}")
            continue
        assert on_tuple(state) == want == on_int(p.pack(state))


@st.composite
def watches(draw):
    """State predicates for a search to watch, many of them false wherever a slot holds another value
    than one (the forms the search loop tests under one test of the slot, `bfsgen.only_where`),
    some raising model errors."""
    slot = draw(st.sampled_from([Var("e"), Var("x"), Index("a", c(1))]))

    def at(value: int) -> App:
        return App(Op.EQ, (slot, Const(value, enum="Colour" if slot == Var("e") else None)))

    def fixed(t):
        value, b, form = t
        return [App(Op.AND, (at(value), b)), App(Op.NOT, (App(Op.IMPLIES, (at(value), b)),)),
                App(Op.NOT, (App(Op.OR, (App(Op.NE, at(value).args), b)),)), App(Op.AND, (Var("b"), at(value), b)),
                App(Op.AND, (b, at(value)))][form]
    phase = st.tuples(st.integers(0, 2), bools(), st.integers(0, 4)).map(fixed)
    return draw(st.lists(st.one_of(phase, phase, bools()), min_size=1, max_size=6))


@settings(SETTINGS, max_examples=examples(60))
@given(st.one_of(phased_models(), models()), watches(), st.sampled_from([None, 2, 7, 40]))
def test_watched_predicates_match_the_semantics(model, watched, cap):
    """Each watched predicate's first state (BFS order) where it holds, or where evaluating it raises, among
    every stored state: the expanded ones (the search loop, the predicates tested under one test of a slot)
    and those stored but not expanded when a cap stops the search (`SearchCode.finish`)."""
    lay = layout(model)
    space = explore(model, Budget(max_states=cap), watch=watched)
    for k, e in enumerate(watched):
        want: tuple[int | None, bool] = (None, False)
        for i, state in enumerate(space.states):
            try:
                if evaluate(lay, e, state):
                    want = (i, False)
                    break
            except EvalError:
                want = (i, True)
                break
        got = (space.watch_errors[k][0], True) if k in space.watch_errors else (space.watch[k], False)
        assert got == want and space.found[k] == (None if want[1] else want[0])


@settings(SETTINGS, max_examples=examples(30))
@given(phased_models(), watches())
def test_generated_source_is_the_same_with_the_model_memo(model, watched):
    """Each model keeps what its firings are made from (`actiongen._prepared`): the search loop and
    `expand` generated with it filled are those generated without it, and a model with one action
    changed (a new model, the other actions the same objects) gets the code of its own."""
    from unittest import mock

    from verifier.engines import actiongen

    changed = replace(model, actions=(replace(model.actions[0], guard=App(Op.NOT, (model.actions[0].guard,))),
                                      *model.actions[1:]))

    def sources(m):
        return compile_search(layout(m), watched).source, compile_model(layout(m)).source

    with mock.patch.object(actiongen, "_prepared", lambda lay: {}):     # a fresh memo every time: none kept
        plain = sources(model), sources(changed)
    sources(model)
    assert (sources(model), sources(changed)) == plain


@pytest.mark.parametrize("guard", [App(Op.EQ, (Var("x"), c(1))),                       # grouped under x's test
                                   App(Op.AND, (App(Op.NOT, (App(Op.EQ, (Var("x"), c(1))),)),
                                                App(Op.EQ, (Var("x"), c(1)))))])       # always false
def test_a_choice_range_is_evaluated_in_every_state_as_the_semantics_do(guard):
    """`0..a[x]` raises where x is 3 whatever `down`'s guard (evaluated after the range): under
    another value's test of x (the firings grouped by it) or where it is always false."""
    x = Var("x")
    model = Model("ranges", variables=(Variable("x", IntType(c(0), c(3)), init=(c(0),)),
                                       Variable("a", IntType(c(0), c(3)), index=IntType(c(0), c(2)),
                                                init=(c(1), c(0), c(2)))),
                  actions=(Action("up", App(Op.EQ, (x, c(0))), (Assign(x, c(3)),)),
                           Action("down", guard, (Assign(x, c(0)),), (Choice("n", IntType(c(0), Index("a", x))),))))
    assert naive_bfs(model)[4] == 1
    assert explore(model).error == explore_compiled(model).error == (1, "index 3 out of range for a")
