"""Ordering and bounded-response monitors searched over the model's recorded state graph
(`compiled/product.py`), against the product's own compiled search: random models and a phased
model with turns and rounds, ordering patterns in every scope with action, phase, turn, round and
state events, bounded responses, budgets that cut the product's search short. The same states in
the same order (packed keys), parents, levels, transitions, first deadlock, first state of each
watched predicate, stop; through the portfolio's steps, the same verdicts, reasons, stops, stats,
depths and traces (replayed)."""
from __future__ import annotations

from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from test_compiled_store import MODELS
from tiers import examples

from verifier.engines.compiled import product as over_graph
from verifier.engines.compiled.product import MAX_GROUP_BITS, MEMO, GraphProduct, eligible, explore_over_graph
from verifier.engines.compiled.search import CompiledSpace, explore_compiled
from verifier.engines.explicit import ExplicitEngine, explore
from verifier.engines.ledger import Ledger
from verifier.ir.expr import App, Const, Op, Var, neg
from verifier.ir.model import Model
from verifier.ir.props import BoundedResponse, DeadlockFree, Event, Ordering, Property
from verifier.lang import load_model
from verifier.portfolio.plan import run_claims
from verifier.props.monitor import compile_together
from verifier.resources import Budget
from verifier.semantics import layout
from verifier.trace import replay

FIX = Path(__file__).resolve().parent / "fixtures" / "props"
PATTERNS = st.sampled_from(["absence", "existence", "universality", "precedence", "response", "bounded-existence"])
RANDOM_SCOPES = st.sampled_from(["globally", "before", "after", "between", "after-until"])
BUDGETS = st.sampled_from([Budget(), Budget(), Budget(max_states=3), Budget(max_states=40), Budget(max_depth=3)])
ORDER = load_model(str(FIX / "order.yaml"), variant="loose")
MEMOS = st.sampled_from([MEMO, MEMO, 1, 2])       # the monitor updates remembered: few, so that pairs share a slot
GROUPS = st.sampled_from([MAX_GROUP_BITS, MAX_GROUP_BITS, 0])   # the predicates' tables: one per predicate at 0


def random_events(model: Model) -> st.SearchStrategy[Event]:
    """An action event, or a state event over the random models' `x`."""
    return st.one_of(st.sampled_from([a.name for a in model.actions]).map(lambda a: Event(action=a)),
                     st.integers(0, 2).map(lambda k: Event(expr=App(Op.LE, (Var("x"), Const(k))))))


def phased_events() -> st.SearchStrategy[Event]:
    """Every kind of event of the phased model."""
    phases = ["Step2", "Reap", "Heal", "Other"]
    return st.one_of(st.sampled_from([Event(action=a.name) for a in ORDER.actions]),
                     st.sampled_from([Event(enter=p) for p in phases] + [Event(leave=p) for p in phases]),
                     st.just(Event(turn_end=True)), st.just(Event(round_end=True)),
                     st.sampled_from([Event(expr=Var("healed")), Event(expr=App(Op.EQ, (Var("rounds"), Const(1)))),
                                      Event(expr=App(Op.AND, (Var("reaped"), App(Op.LT, (Var("rounds"), Const(2))))))]))


@st.composite
def monitored(draw, events: st.SearchStrategy[Event], scopes: st.SearchStrategy[str]) -> list[Property]:
    """One to three eligible ordering claims, and maybe a bounded response."""
    out: list[Property] = []
    while len(out) < draw(st.integers(1, 3)):
        pattern, scope = draw(PATTERNS), draw(scopes)
        q = Event(enter="Step2") if scope == "phase" else draw(events)
        claim = Ordering(id=f"o{len(out)}", pattern=pattern, scope=scope, p=draw(events), s=draw(events), q=q,
                         r=Event(leave="Step2") if scope == "phase" else draw(events),
                         bound=draw(st.integers(0, 2)) if pattern == "bounded-existence" else None)
        if eligible(claim):
            out.append(claim)
    if draw(st.booleans()):
        out.append(BoundedResponse(id="bounded", trigger=draw(events), response=draw(events),
                                   within=draw(st.integers(1, 3))))
    return out


def random_case():
    return MODELS.flatmap(lambda m: st.tuples(st.just(m), monitored(random_events(m), RANDOM_SCOPES)))


def phased_case():
    scopes = st.sampled_from(["globally", "before", "after", "between", "after-until", "turn", "round", "phase"])
    return st.tuples(st.just(ORDER), monitored(phased_events(), scopes))


def same_search(model: Model, claims: list[Property], budget: Budget, memo: int = MEMO,
                group: int = MAX_GROUP_BITS) -> CompiledSpace | None:
    """The product over the model's graph (its kernel remembering `memo` monitor updates, its
    predicates' tables of `group` bits of slots at most), checked
    against the product's own search (None where the graph product does not apply: the model's search
    is not complete). The product's own search is the reference's (`explicit.explore`), which the
    compiled store's is state for state (test_compiled_store): compiling the product as well would be
    a second cold compile per draw."""
    space = explore_compiled(model.instantiate(), edges=True)
    product, parts = compile_together(model, claims)
    concrete = product.instantiate()
    watch = [concrete.fix_params(neg(c.expr)) for part in parts for c in part.claims]
    offered = GraphProduct(model, tuple(claims), tuple(f"{c.id}." for c in claims))
    assert space.edges is not None
    with mock.patch.object(over_graph, "MEMO", memo), mock.patch.object(over_graph, "MAX_GROUP_BITS", group):
        got = explore_over_graph(offered, space, space.edges, concrete, budget, watch, None)
    if got is None:
        assert not space.complete
        return None
    want = explore(concrete, budget, watch=watch)
    assert got.packed() == list(want.packed)
    assert got.parent.tolist() == list(want.parent)
    assert [got.parent_of(i) for i in range(len(got))] == list(want.parent)
    assert (got.levels, got.transitions, got.head, got.deadlocks, got.watch) == \
        (want.levels, want.transitions, want.head, want.deadlocks[:1], [None if i == -1 else i for i in want.watch])
    assert (got.complete, got.reason) == (want.complete, want.reason)
    return got


@settings(max_examples=examples(8), deadline=None)
@given(random_case(), BUDGETS, MEMOS, GROUPS)
def test_the_product_over_the_models_graph_is_the_products_own_search(case, budget, memo, group):
    same_search(*case, budget, memo, group)


@settings(max_examples=examples(8), deadline=None)
@given(phased_case(), BUDGETS, MEMOS, GROUPS)
def test_phase_turn_and_round_events_over_the_graph_are_the_products_own_search(case, budget, memo, group):
    assert same_search(*case, budget, memo, group) is not None


@settings(max_examples=examples(6), deadline=None)
@given(st.one_of(random_case(), phased_case()), st.sampled_from([None, None, 3, 40]))
def test_the_portfolio_decides_over_the_graph_what_the_product_decides(case, max_states):
    """Against the python store's product search (the compiled store's is the same: test_compiled_store;
    compiling the products as well would be more cold compiles per draw)."""
    model, claims = case
    claims = [*claims, DeadlockFree(id="deadlock-free")]       # the model's own search, which records the graph
    budget = Budget(max_states=max_states)
    want = run_claims(model, claims, ExplicitEngine(), budget)      # no ledger: the product's search
    ledger = Ledger.keeping([model.instantiate()])
    got = run_claims(model, claims, ExplicitEngine(store="compiled", ledger=ledger), budget, ledger=ledger)
    for claim, w, g in zip(claims, want, got):
        assert (g.verdict, g.reason, g.stop, g.stats.states, g.stats.transitions, g.depth) == \
            (w.verdict, w.reason, w.stop, w.stats.states, w.stats.transitions, w.depth), claim.id
        assert g.trace == w.trace, claim.id
        assert {k: v for k, v in g.evidence.items() if k not in ("product_search", "store")} == \
            {k: v for k, v in w.evidence.items() if k != "store"}, claim.id
        assert g.evidence["store"] == "compiled", claim.id
        if g.trace is not None and "model error" not in g.reason:
            replay(layout(model), g.trace)
    space = ledger.compiled_search_of(model.instantiate())
    over = ["product_search" in g.evidence for g in got[:-1]]
    assert any(over) == (space is not None)          # wherever the model's complete search was kept


def test_a_watched_predicate_over_model_variables_keeps_the_products_own_search():
    model = ORDER
    claim = Ordering(id="o", pattern="absence", scope="globally", p=Event(action="reap"))
    space = explore_compiled(model.instantiate(), edges=True)
    product, _parts = compile_together(model, [claim])
    concrete = product.instantiate()
    offered = GraphProduct(model, (claim,), ("o.",))
    assert space.edges is not None
    assert explore_over_graph(offered, space, space.edges, concrete, Budget(), [Var("healed")], None) is None


def test_obligations_and_choice_reading_events_are_not_searched_over_the_graph():
    assert not eligible(Ordering(id="o", pattern="response", scope="globally", p=Event(action="reap"),
                                 s=Event(action="heal")))
    assert eligible(Ordering(id="o", pattern="response", scope="turn", p=Event(action="reap"), s=Event(action="heal")))
    from verifier.ir.expr import Local
    assert not eligible(Ordering(id="o", pattern="absence", scope="globally",
                                 p=Event(expr=App(Op.EQ, (Local("n"), Const(1))))))


def _over_graph(claims: list[Property], budget: Budget) -> list[bool]:
    ledger = Ledger.keeping([ORDER.instantiate()])
    results = run_claims(ORDER, claims, ExplicitEngine(store="compiled", ledger=ledger), budget, ledger=ledger)
    return ["product_search" in r.evidence for r in results]


ORDERINGS: list[Property] = [Ordering(id="o", pattern="bounded-existence", scope="turn", p=Event(action="heal"), bound=1),
                             Ordering(id="p", pattern="absence", scope="globally", p=Event(enter="Other"))]


def test_under_max_memory_the_graph_is_recorded_for_the_products_only_where_graph_claims_record_it(monkeypatch):
    from verifier.ir.props import Terminates
    assert _over_graph([*ORDERINGS, DeadlockFree(id="d")], Budget()) == [True, True, False]
    assert _over_graph([*ORDERINGS, DeadlockFree(id="d")], Budget(max_memory_mb=100_000)) == [False, False, False]
    with_lasso = [*ORDERINGS, Terminates(id="t", scope="turn")]
    assert _over_graph(with_lasso, Budget(max_memory_mb=100_000)) == [True, True, False]
    from verifier.engines import explicit
    monkeypatch.setattr(explicit, "GRAPH_SHARE", 0.0)       # the kept graph past its share of --max-memory
    assert _over_graph(with_lasso, Budget(max_memory_mb=100_000)) == [False, False, False]
    assert _over_graph(with_lasso, Budget()) == [True, True, False]


def test_a_product_that_does_not_fit_the_graph_says_why_in_its_evidence():
    phases = ["Step2", "Reap", "Heal", "Other"]
    claims: list[Property] = [Ordering(id=f"o{k}", pattern="absence", scope="globally", p=Event(enter=phase))
                              for k, phase in enumerate(phases)]
    claims += [Ordering(id="s", pattern="absence", scope="globally", p=Event(expr=Var("healed"))),
               Ordering(id="r", pattern="absence", scope="globally", p=Event(expr=Var("reaped"))),
               Ordering(id="n", pattern="absence", scope="globally", p=Event(expr=App(Op.EQ, (Var("rounds"), Const(2)))))]
    ledger = Ledger.keeping([ORDER.instantiate()])
    results = run_claims(ORDER, [*claims, DeadlockFree(id="d")], ExplicitEngine(store="compiled", ledger=ledger),
                         Budget(), ledger=ledger)
    assert {r.evidence.get("product_search") for r in results[:-1]} == \
        {"its own search: the events read more than 6 state predicates"}
