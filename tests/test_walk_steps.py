"""Step claims judged by random runs on the model itself (no monitor product): a run's move that
breaks a claim is VIOLATED with the run as its trace, never where the complete search of the
claim's product finds no break; beyond a capped search the runner decides them this way."""
from __future__ import annotations

from dataclasses import replace

from conftest import DEEP_COUNTER
from hypothesis import event, given, settings
from hypothesis import strategies as st
from test_reduce_symmetry import ACT, MODELS, TOP, c, claims, f, h, over_players
from tiers import examples

from verifier.engines import walk
from verifier.engines.explicit import ExplicitEngine
from verifier.ir.expr import App, Index, Local, Op, QuantKind, Var
from verifier.ir.model import ACTIVE_VAR
from verifier.ir.props import PREV_MARK, StepInvariant
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.runner import RunOptions, check_model
from verifier.semantics import evaluate, layout
from verifier.trace import replay

PREV_ACT = Var(PREV_MARK + ACTIVE_VAR)
RUN_STEPS = 4_000   # per drawn case; the runs stop early once every claim is broken. On the CI sample
                    # 0.05 s breaks what 0.1 s breaks (0.02 s misses some)


def prev_h(i) -> Index:
    return Index(PREV_MARK + "h", i)


def step_claims(n: int):
    """Step claims over the drawn models' hands `h`, flags `f` and counter `g`, some judging
    one action only (an action a model may lack judges nothing there)."""
    grow = App(Op.LE, (h(ACT), App(Op.ADD, (prev_h(PREV_ACT), c(1)))))
    kept = App(Op.EQ, (h(c(0)), prev_h(c(0))))
    newly_set = App(Op.AND, (f(Local("q")), App(Op.NOT, (Index(PREV_MARK + "f", Local("q")),))))
    return st.lists(st.sampled_from([
        StepInvariant(id="grows-by-one", expr=grow),
        StepInvariant(id="first-hand-kept", expr=kept, actions=("steal",)),
        StepInvariant(id="gain-grows", expr=App(Op.GT, (h(PREV_ACT), prev_h(PREV_ACT))), actions=("gain",)),
        StepInvariant(id="g-kept", expr=App(Op.EQ, (Var("g"), Var(PREV_MARK + "g")))),
        StepInvariant(id="no-flag-set", expr=App(Op.NOT, (over_players(n, QuantKind.EXISTS, newly_set),)),
                      actions=("flip",)),
        StepInvariant(id="active-small", expr=App(Op.LT, (h(ACT), c(TOP)))),
    ]), min_size=1, max_size=4, unique_by=lambda s: s.id)


def breaks(model, claim: StepInvariant, before: tuple, after: tuple) -> bool:
    """The reference interpreter's word: does the move `before` -> `after` break `claim`? (Its
    `prev:` names read a copy of the variables that holds `before`.)"""
    pair = replace(model, variables=model.variables +
                   tuple(replace(v, name=PREV_MARK + v.name) for v in model.variables))
    return not evaluate(layout(pair), claim.expr, after + before)


def checked_trace(model, result) -> None:
    """The trace replays, its last move is one the claim judges, and that move breaks it."""
    concrete = model.instantiate()
    states = replay(layout(concrete), result.trace)
    claim = result.property
    assert not claim.actions or result.trace.steps[-1].action in claim.actions
    assert breaks(concrete, claim, states[-2], states[-1])


@settings(max_examples=examples(30), deadline=None)
@given(MODELS, st.data())
def test_random_runs_break_only_what_the_complete_search_breaks(model, data):
    model = replace(model, symmetry=None)
    claims = data.draw(step_claims(model.players))
    engine = ExplicitEngine()
    exact = {r.property.id: r.verdict
             for r in run_claims(model, claims, engine, Budget())}
    for r in walk.check(model, claims, RUN_STEPS):
        event(f"{r.property.id}: {r.verdict.value}")
        assert r.verdict in (Verdict.UNKNOWN, Verdict.VIOLATED)
        if r.verdict is Verdict.VIOLATED:
            assert exact[r.property.id] is Verdict.VIOLATED, r.property.id
            checked_trace(model, r)


def test_a_step_broken_beyond_the_state_cap(tmp_path):
    """The deep counter's break lies 4,501 moves deep, far past the 1,000-state cap: the
    product's capped search cannot see it, the runner's random runs on the model do, and the
    claims expected to hold are left to a proof, on one product watched by both monitors."""
    props = tmp_path / "deep.yaml"
    props.write_text("""\
claims:
  - id: counts
    says: "the counter stays in range"
    invariant: "n <= 5000"
  - id: stops-before-4500
    says: "wrong: the counter steps past 4500"
    step: "prev(n) < 4500"
    actions: [step]
  - id: one-at-a-time
    says: "each step adds one"
    step: "n == prev(n) + 1"
    expected: HOLDS
  - id: never-back
    says: "the counter never goes back"
    step: "n >= prev(n)"
    expected: HOLDS
""")
    (run,) = check_model(DEEP_COUNTER, RunOptions(properties=str(props), consistency=False, vacuity=False,
                                                  budget=Budget(max_states=1000)))
    by_id = {r.property.id: r for r in run.results}
    broken = by_id["stops-before-4500"]
    assert (broken.verdict, broken.engine, broken.depth) == (Verdict.VIOLATED, "walk", 4501)
    assert "each move judged on the model" in broken.evidence["auto"]
    checked_trace(run.model, broken)
    for proved in ("one-at-a-time", "never-back"):
        assert by_id[proved].verdict in (Verdict.HOLDS, Verdict.PROVED)
        assert by_id[proved].engine in ("lemmas", "k-induction", "pdr")     # a proof on the product
        assert "product_shared_by" not in by_id[proved].evidence     # each on its own product, for Z3


def one_by_one(model, claims, steps_at_most: int) -> list[tuple]:
    """The runs read one position after the other, each claim judged there by the reference
    interpreter, as `walk.check` did before it read them a span at a time: (claim, the states of the
    run up to where it broke or reached it, steps read) for each claim."""
    import random

    from verifier.engines.bfsgen import compile_expander, packing_of
    from verifier.props.moves import chose, named
    from verifier.semantics import EvalError, initial_states

    lay = layout(model)
    packing = packing_of(lay)

    def met(p, before, after, move) -> bool:
        try:
            if p.kind == "invariant":
                return not evaluate(lay, p.expr, after)
            if p.kind == "reachable" and p.expr is not None:
                return bool(evaluate(lay, p.expr, after))
        except EvalError:
            return False
        if move is None:
            return False
        action, choice = model.actions[move[0]], move[1]
        if p.kind == "reachable":
            return named(action, p.action) and chose(choice, p.choice)
        return (not p.actions or action.name in p.actions) and breaks(model, p, before, after)

    found: dict[int, tuple] = {}
    started = steps = 0
    before, path = None, []
    runs = walk.random_runs(compile_expander(lay).expand, [packing.pack(s) for s in initial_states(lay)],
                            random.Random(0), walk.MAX_STEPS)
    for packed, move in runs:
        if move is None:
            if len(found) >= len(claims) or steps + started >= steps_at_most:
                break
            started += 1
            path = []
        else:
            steps += 1
        after = packing.unpack(packed)
        path.append(after)
        for k, p in enumerate(claims):
            if k not in found and met(p, before, after, move):
                found[k] = tuple(path)
        before = after
        if steps >= steps_at_most:
            break
    return [(p.id, found.get(k), steps) for k, p in enumerate(claims)]


@settings(max_examples=examples(40), deadline=None)
@given(MODELS, st.data())
def test_the_runs_read_a_span_at_a_time_decide_where_one_by_one_they_do(model, data):
    """Each claim decided by the move (or state) that decides it reading one position at a time, and
    the same steps read, whatever the steps allowed (a span, or its end, between the runs' ends)."""
    model = replace(model, symmetry=None)
    drawn = [p for p in data.draw(claims(model.players)) if p.kind in ("invariant", "reachable")]
    both = drawn + data.draw(step_claims(model.players))
    group = data.draw(st.lists(st.sampled_from(range(len(both))), min_size=1, unique=True).map(
        lambda ks: [both[k] for k in ks]))    # one alone may be decided in a run's first state
    steps_at_most = data.draw(st.sampled_from([0, 1, 7, 1_000, 1_025, RUN_STEPS]))
    results = walk.check(model, group, steps_at_most)
    lay = layout(model)
    got = [(r.property.id, None if r.trace is None else tuple(replay(lay, r.trace)), r.stats.states) for r in results]
    assert got == one_by_one(model, group, steps_at_most)


def _seen(results) -> list[tuple]:
    return [(r.property.id, r.verdict, r.trace, r.stats.states, r.reason) for r in results]


@settings(max_examples=examples(30), deadline=None)
@given(MODELS, st.data())
def test_checks_handed_one_models_runs_decide_what_each_decides_on_its_own(model, data):
    """The claims' checks and the step claims' read one `walk.Runs`, in either order: the same
    verdicts, traces and steps as each walking alone."""
    model = replace(model, symmetry=None)
    kept = [p for p in data.draw(claims(model.players)) if p.kind in ("invariant", "reachable")]
    steps = data.draw(step_claims(model.players))
    alone = _seen(walk.check(model, kept, RUN_STEPS)) + _seen(walk.check(model, steps, RUN_STEPS))
    first = data.draw(st.booleans())
    runs = walk.Runs(model)
    shared = [_seen(walk.check(model, group, RUN_STEPS, runs)) for group in ((kept, steps) if first else (steps, kept))]
    assert alone == (shared[0] + shared[1] if first else shared[1] + shared[0])


def test_the_claims_and_the_step_claims_beyond_the_cap_read_one_set_of_runs(tmp_path, monkeypatch):
    """The deep counter past a 1,000-state cap: a reachability claim and a step claim are each decided
    by a random run, of the one set of runs the reading makes."""
    made = []
    real = walk.Runs.__init__

    def spy(self, model):
        made.append(model)
        real(self, model)

    monkeypatch.setattr(walk.Runs, "__init__", spy)
    props = tmp_path / "deep.yaml"
    props.write_text("""\
claims:
  - id: far
    says: "the counter gets past 4000"
    reachable: "n == 4100"
  - id: stops-before-4500
    says: "wrong: the counter steps past 4500"
    step: "prev(n) < 4500"
    actions: [step]
  - id: one-at-a-time
    says: "each step adds one"
    step: "n == prev(n) + 1"
""")
    (run,) = check_model(DEEP_COUNTER, RunOptions(properties=str(props), consistency=False, vacuity=False,
                                                  budget=Budget(max_states=1000)))
    by_id = {r.property.id: r for r in run.results}
    assert [(by_id[k].verdict, by_id[k].engine, by_id[k].depth) for k in ("far", "stops-before-4500")] == \
        [(Verdict.HOLDS, "walk", 4100), (Verdict.VIOLATED, "walk", 4501)]
    assert len(made) == 1


def test_a_move_packs_into_the_pair_model_whether_its_slots_move_up_together_or_not():
    from test_compact_store import counter, widened

    from verifier.engines.bfsgen import packing_of
    cases = [(counter(4), (1, 2), (3, 0), 1),                        # the pair's copies move up together
             (widened(counter(4), 50, 30, False), (0, 1, 2, 3), (7, 3, 1, 0), 4),      # ... by two words
             (widened(counter(4), 40, 20, False), (0, 1, 2, 3), (7, 3, 1, 0), 3)]      # not together
    for model, before, after, words in cases:
        plain, pair = packing_of(layout(model)), packing_of(walk._pair_layout(model))
        assert pair.words == words
        join = walk._joiner(plain, pair)
        assert pair.unpack(join(plain.pack(before), plain.pack(after))) == after + before
