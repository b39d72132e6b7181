"""Step claims judged on the model's own complete compiled search (`compiled/moves.py`), against
today's way, the monitor product watched with the other monitored claims (in the python store):
random models, step claims mixed with ordering patterns and bounded responses, budgets that cut the
model's search short. The same verdicts, reasons, stops and traces (each replays on the designer's
model); a step claim judged without a product reports the model's search (states, transitions, depth).
The judging pass itself, with the recorded state graph (only the states with a move that may set a flag
expanded) and without, against the first breaking moves the reference semantics find on the flags' product."""
from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st
from test_compiled_claims import STEPS, ordering
from test_compiled_store import MODELS
from tiers import examples

from verifier.engines.bfsgen import packing_of
from verifier.engines.compiled.moves import first_breaks, judged_only, setters
from verifier.engines.compiled.search import explore_compiled
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.ledger import Ledger
from verifier.ir.expr import FALSE, App, Const, Index, Local, Op, Quant, QuantKind, Var
from verifier.ir.model import Action, Assign, Choice, IntType, Model, Variable
from verifier.ir.props import BoundedResponse, DeadlockFree, Event, StepInvariant
from verifier.portfolio.plan import run_claims
from verifier.props.monitor import compile_together
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import iter_transitions, layout
from verifier.trace import replay

ACTIONS = st.sampled_from(["act0", "act1", "act2", "act3"])
# step claims the judging pass may show unsettable from a move's guard (its facts, sums, one slot's values)
JUDGED = st.one_of(STEPS, st.integers(-1, 3).map(lambda k: App(Op.NE, (Var("prev:x"), Const(k)))),
                   st.integers(0, 3).map(lambda k: App(Op.LE, (Var("x"), Const(k)))),
                   st.integers(0, 2).map(lambda k: App(Op.NE, (Var("prev:e"), Const(k, enum="Colour")))),
                   st.integers(1, 2).map(lambda k: App(Op.NE, (Var("e"), Const(k, enum="Colour")))),  # e := k, k: Colour
                   st.integers(-1, 1).map(lambda k: App(Op.LE, (App(Op.SUB, (Var("x"), Var("prev:x"))), Const(k)))),
                   st.sampled_from([App(Op.AND, (App(Op.GE, (Var("prev:x"), Const(2))), App(Op.GE, (Var("x"), Const(2))))),
                                    App(Op.IMPLIES, (Index("prev:m", Var("prev:e")), Index("m", Var("e")))),
                                    App(Op.LE, (Quant(QuantKind.COUNT, "n", Const(0), Const(2),     # n: a choice's name too
                                                      App(Op.NE, (Index("a", Local("n")), Index("prev:a", Local("n"))))),
                                                Const(1)))]))


def counter(top: int) -> Model:
    """`n` from 0 to `top`: `step` adds one, `reset` (from 1 on) goes back to 0."""
    n = Var("n")
    return Model("counter", variables=(Variable("n", IntType(Const(0), Const(top)), init=(Const(0),)),),
                 actions=(Action("step", App(Op.LT, (n, Const(top))), (Assign(n, App(Op.ADD, (n, Const(1)))),)),
                          Action("reset", App(Op.GT, (n, Const(0))), (Assign(n, Const(0)),))))


@st.composite
def claims(draw) -> list:
    out: list = [draw(ordering(k)) for k in range(draw(st.integers(0, 1)))]
    for k in range(draw(st.integers(1, 3))):
        out.append(StepInvariant(id=f"step{k}", expr=draw(STEPS), actions=tuple(draw(st.lists(ACTIONS, max_size=2)))))
    if draw(st.booleans()):
        out.append(BoundedResponse(id="bounded", trigger=Event(action=draw(ACTIONS)),
                                   response=Event(action=draw(ACTIONS)), within=draw(st.integers(1, 3))))
    return out


@settings(max_examples=examples(6), deadline=None)
@given(MODELS, claims(), st.sampled_from([None, None, 3, 40]))
def test_step_claims_judged_on_the_models_search_find_what_the_product_finds(model, surface, max_states):
    """Against the product searched in the python store (the compiled store's product search is the
    same: test_compiled_store; compiling the product too would be another cold compile per draw)."""
    surface = [*surface, DeadlockFree(id="deadlock-free")]     # the model's own search, which the ledger keeps
    budget = Budget(max_states=max_states)
    want = run_claims(model, surface, ExplicitEngine(), budget)        # no ledger: the product
    ledger = Ledger.keeping([model.instantiate()])
    got = run_claims(model, surface, ExplicitEngine(store="compiled", ledger=ledger), budget, ledger=ledger)
    space = ledger.compiled_search_of(model.instantiate())
    errors = any("model error" in r.reason for r in want)
    for claim, w, g in zip(surface, want, got):
        assert (g.verdict, g.reason, g.stop) == (w.verdict, w.reason, w.stop), claim.id
        assert g.trace == w.trace, claim.id
        if g.trace is not None and not errors:
            replay(layout(model), g.trace)
        if "moves" in g.evidence:           # judged without a product: the model's complete search
            assert isinstance(claim, StepInvariant) and space is not None and space.complete
            assert (g.stats.states, g.stats.transitions, g.depth) == (len(space), space.transitions, space.max_depth)
    judged = space is not None and not errors and any(isinstance(c, StepInvariant) for c in surface)
    assert judged == any("moves" in g.evidence for g in got)


def reference_breaks(space, product: Model, flags: list[str]) -> list:
    """Each flag's first setting move, (state, action, choice), by the reference semantics on the
    flags' product: the model's states in BFS order (flags clear), their moves in firing order."""
    lay = layout(product)
    packing = packing_of(lay)
    slots = [lay.offsets[f][0] for f in flags]
    found: list = [None] * len(flags)
    for i in range(len(space)):
        for t in iter_transitions(lay, packing.unpack(space.key(i))):
            for k, slot in enumerate(slots):
                if found[k] is None and t.target is not None and t.target[slot]:
                    found[k] = (i, product.actions.index(t.action), t.choice)
    return found


@settings(max_examples=examples(4), deadline=None)
@given(MODELS, st.lists(st.builds(StepInvariant, id=st.just("s"), expr=JUDGED,
                                  actions=st.lists(ACTIONS, max_size=2).map(tuple)), min_size=1, max_size=4))
def test_the_judging_pass_finds_the_reference_first_breaks_with_and_without_the_graph(model, steps):
    steps = [replace(c, id=f"step{k}") for k, c in enumerate(steps)]
    product, parts = compile_together(model, steps)
    flags = [part.monitor_vars[0] for part in parts]
    space = explore_compiled(model.instantiate(), edges=True)
    graph = space.edges
    plain = first_breaks(space, product.instantiate(), flags)
    assert first_breaks(space, product.instantiate(), flags, graph=graph) == plain
    if plain is not None:
        want = reference_breaks(space, product.instantiate(), flags)
        assert [None if f is None else (f[0], *space.labels.items[f[1]]) for f in plain] == want


def rounds() -> Model:
    """`p` goes round 0 -> 1 -> 2 -> 0: `grow` (in 0) adds a choice n of 1..2 to x while it stays
    within 5, `spend` (in 1, x > 0) takes one off, `rest` (in 1) and `turn` (in 2) only move on."""
    p, x, n = Var("p"), Var("x"), Local("n")
    return Model("rounds", variables=(Variable("p", IntType(Const(0), Const(2)), init=(Const(0),)),
                                      Variable("x", IntType(Const(0), Const(5)), init=(Const(0),))),
                 actions=(Action("grow", App(Op.AND, (App(Op.EQ, (p, Const(0))),
                                                      App(Op.LE, (App(Op.ADD, (x, n)), Const(5))))),
                                 (Assign(x, App(Op.ADD, (x, n))), Assign(p, Const(1))),
                                 (Choice("n", IntType(Const(1), Const(2))),)),
                          Action("spend", App(Op.AND, (App(Op.EQ, (p, Const(1))), App(Op.GT, (x, Const(0))))),
                                 (Assign(x, App(Op.SUB, (x, Const(1)))), Assign(p, Const(2)))),
                          Action("rest", App(Op.EQ, (p, Const(1))), (Assign(p, Const(2)),)),
                          Action("turn", App(Op.EQ, (p, Const(2))), (Assign(p, Const(0)),))))


def test_the_graph_spares_the_states_without_a_move_that_may_set_a_flag_left():
    """Flags shown unsettable (the guard's phase, the moves' sums), one broken at once, one later, one
    holding only on the states searched (every state with a `spend` move judged to the end)."""
    x, prev_x, prev_p = Var("x"), Var("prev:x"), Var("prev:p")
    steps = [StepInvariant(id="grow-in-0", expr=App(Op.EQ, (prev_p, Const(0))), actions=("grow",)),
             StepInvariant(id="by-one", expr=App(Op.LE, (x, App(Op.ADD, (prev_x, Const(1))))), actions=("grow",)),
             StepInvariant(id="spend-one", expr=App(Op.EQ, (App(Op.SUB, (prev_x, x)), Const(1))), actions=("spend",)),
             StepInvariant(id="below-5", expr=App(Op.LE, (x, Const(4))), actions=("grow",)),
             StepInvariant(id="spend-leaves-some", expr=App(Op.GE, (x, Const(0))), actions=("spend",))]
    model = rounds()
    product, parts = compile_together(model, steps)
    flags = [part.monitor_vars[0] for part in parts]
    space = explore_compiled(model.instantiate(), edges=True)
    assert space.edges is not None
    judged = judged_only(product.instantiate(), flags)
    assert setters(layout(judged), flags).tolist() == [[0, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0],
                                                       [0, 1, 0, 0]]
    plain = first_breaks(space, product.instantiate(), flags)
    assert first_breaks(space, product.instantiate(), flags, graph=space.edges) == plain
    assert plain is not None and [f is not None for f in plain] == [False, True, False, True, False]
    assert [None if f is None else (f[0], *space.labels.items[f[1]]) for f in plain] == \
        reference_breaks(space, product.instantiate(), flags)
    unsettable = [steps[0], steps[2]]                   # no move may set them: nothing expanded
    product, parts = compile_together(model, unsettable)
    assert first_breaks(space, product.instantiate(), [part.monitor_vars[0] for part in parts]) == [None, None]


def test_a_claim_whose_flag_repeats_a_test_is_judged_where_it_breaks():
    """`rest` leaves x alone, so the flag of `prev:x >= 2 and x >= 2` on it reads `not (x >= 2 and
    x >= 2)`: set where x < 2 (after `grow` by 1 from 0), never shown unsettable."""
    x, prev_x = Var("x"), Var("prev:x")
    twice = App(Op.AND, (App(Op.GE, (prev_x, Const(2))), App(Op.GE, (x, Const(2)))))
    product, parts = compile_together(rounds(), [StepInvariant(id="rest-from-2", expr=twice, actions=("rest",))])
    space = explore_compiled(rounds().instantiate(), edges=True)
    flags = [parts[0].monitor_vars[0]]
    (first,) = first_breaks(space, product.instantiate(), flags, graph=space.edges)
    assert first is not None and [(first[0], *space.labels.items[first[1]])] == \
        reference_breaks(space, product.instantiate(), flags)


def test_the_first_breaking_move_is_the_first_in_bfs_order_and_firing_order():
    model = counter(6)
    claim = StepInvariant(id="small", expr=App(Op.LE, (Var("n"), Const(3))), actions=("step",))
    product, parts = compile_together(model, [claim])
    space = explore_compiled(model.instantiate())
    (first,) = first_breaks(space, product.instantiate(), [parts[0].monitor_vars[0]])
    assert first is not None
    i, label, target = first
    trace = space.trace_through(i, label, target)
    assert [dict(s)["n"] for s in trace.states] == [0, 1, 2, 3, 4]     # the shortest run past 3
    holding = StepInvariant(id="small", expr=App(Op.LE, (Var("n"), Const(6))), actions=("step",))
    product, parts = compile_together(model, [holding])
    assert first_breaks(space, product.instantiate(), [parts[0].monitor_vars[0]]) == [None]


def test_each_flag_keeps_its_own_first_break_while_the_others_are_looked_for():
    model = counter(6)
    early = StepInvariant(id="early", expr=App(Op.LE, (Var("n"), Const(2))), actions=("step",))   # from n = 2 on
    late = StepInvariant(id="late", expr=App(Op.LE, (Var("n"), Const(5))), actions=("step",))     # from n = 5
    never = StepInvariant(id="never", expr=App(Op.GE, (Var("n"), Const(0))))
    product, parts = compile_together(model, [early, late, never])
    space = explore_compiled(model.instantiate())
    found = first_breaks(space, product.instantiate(), [part.monitor_vars[0] for part in parts])
    assert found is not None and found[2] is None
    assert [dict(space.trace_through(*f).states[-2])["n"] for f in found[:2]] == [2, 5]


def test_flags_spread_over_several_words_each_keep_their_first_break():
    model = counter(80)             # 80 flags: the flags' product takes two words, the model one
    claims = [StepInvariant(id=f"below{k}", expr=App(Op.LE, (Var("n"), Const(k))), actions=("step",)) for k in range(80)]
    product, parts = compile_together(model, claims)
    space = explore_compiled(model.instantiate())
    found = first_breaks(space, product.instantiate(), [part.monitor_vars[0] for part in parts])
    assert found is not None and all(f is not None for f in found)
    assert [dict(space.trace_through(*f).states[-2])["n"] for f in found] == list(range(80))


def test_only_the_judged_actions_fire_in_the_flags_product():
    model = counter(6)
    claim = StepInvariant(id="small", expr=App(Op.LE, (Var("n"), Const(3))), actions=("step",))
    product, parts = compile_together(model, [claim])
    judged = judged_only(product.instantiate(), parts[0].monitor_vars)
    kept = [a.name for a in judged.actions if a.guard != FALSE]
    assert kept == ["step"]


def test_a_search_cut_short_leaves_the_step_claims_to_the_product():
    model = counter(50)
    claim = StepInvariant(id="small", expr=App(Op.LE, (Var("n"), Const(3))), actions=("step",))
    ledger = Ledger.keeping([model.instantiate()])
    (r,) = run_claims(model, [claim], ExplicitEngine(store="compiled", ledger=ledger), Budget(max_states=20),
                      ledger=ledger)
    assert "moves" not in r.evidence and ledger.compiled_search_of(model.instantiate()) is None
    assert r.verdict is Verdict.VIOLATED          # the product's search finds the break within its states
