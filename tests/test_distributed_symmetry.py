"""Player symmetry in the distributed search (`--workers N`, `engines/distributed.py`): each
partition stores the canonical form of every successor (`symmetry.array_canonicalizer`, the
python store's `canon` in numpy; with the compiled expansion, the compiled store's canonicalising
`expand`) and a state belongs to the partition of its canonical form's hash, so the search
stores one state per orbit. Against the single-process symmetric search on the random symmetric
models of `test_reduce_symmetry`: the partitions' level loop in this process (one to three
partitions, under budgets; the compact and the compiled expansion), and two worker processes of
a loopback Dask cluster shared by the module's tests (the compact and the compiled expansion):
the same state counts, transitions, depths and verdicts, `symmetry` among the reductions, traces
lifted back to the model and replayed; a cut by --max-states is UNKNOWN with the budget's words;
the cluster's witnesses and traces those of the partitions in this process (`test_distributed_determinism`).
The cluster also serves the two-worker searches of a model without symmetry (the compact and the
compiled expansion) that test_distributed_search and test_compiled_workers would each start one for."""
from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_distributed_determinism import shuffled_search, witnesses
from test_distributed_search import InProcess
from test_reduce_symmetry import MODELS, SYMMETRIC, claims
from tiers import examples

from verifier.cli import main
from verifier.engines.bfsgen import packing_of
from verifier.engines.compiled.chunks import prepare
from verifier.engines.distributed import Partition, explore_distributed, search_partitions
from verifier.engines.explicit import ExplicitEngine, explore
from verifier.engines.symmetry import array_canonicalizer, canonicalizer
from verifier.ir.expr import App, Const, Index, Local, Op, Quant, QuantKind
from verifier.ir.props import DeadlockFree, Invariant, Reachable, Terminates
from verifier.lang import load_model, load_properties
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import EvalError, layout, successors
from verifier.trace import replay

ROOT = Path(__file__).resolve().parent.parent
PRIORITY = ROOT / "tests" / "fixtures" / "lang" / "priority_sym.yaml"
PRIORITY_CLAIMS = ROOT / "tests" / "fixtures" / "lang" / "priority_sym_props.yaml"
PETERSON = ROOT / "bench" / "models" / "peterson4.yaml"
BUDGETS = st.sampled_from([Budget(), Budget(max_depth=2)])   # a --max-states cut: the python store stops inside a level


@settings(max_examples=examples(30), deadline=None)
@given(MODELS)
def test_the_array_canon_is_the_python_stores_canon(model):
    lay = layout(model)
    packing = packing_of(lay)
    states = np.asarray(explore(model).packed, np.uint64)       # every reachable state, unreduced
    canon = canonicalizer(lay, packing)
    assert array_canonicalizer(lay, packing)(states).tolist() == [canon(int(x)) for x in states]


def watched_of(props) -> list:
    return [p.expr for p in props if isinstance(p, (Invariant, Reachable)) and p.expr is not None]


@settings(max_examples=examples(30), deadline=None)
@given(MODELS, st.data(), st.integers(1, 3), BUDGETS)
def test_symmetric_partitions_store_the_single_process_orbits(model, data, parts, budget):
    same_orbits(model, data, parts, budget, compiled=False)


@settings(max_examples=examples(2), deadline=None)
@given(MODELS, st.data(), st.integers(1, 3), BUDGETS)
def test_compiled_symmetric_partitions_store_the_single_process_orbits(model, data, parts, budget):
    prepare(layout(model), symmetric=True)
    same_orbits(model, data, parts, budget, compiled=True)


def same_orbits(model, data, parts: int, budget: Budget, compiled: bool) -> None:
    """The partitions' level loop in this process (symmetric) against the python store's symmetric
    search: the same states, transitions and depth, first witnesses as shallow, traces replayed."""
    watched = watched_of(data.draw(claims(model.players)))
    track = range(len(model.actions))
    want = explore(model, budget, watch=watched, track=track, symmetric=True)
    partitions = [Partition(model, i, parts, watched, list(track), None, compiled=compiled, symmetric=True)
                  for i in range(parts)]
    got = search_partitions(model, [InProcess(p) for p in partitions], budget, None, watched, track, None,
                            time.perf_counter(), symmetric=True)
    assert got.reductions == want.reductions == ("symmetry",)
    assert got.complete == want.complete
    if want.complete:
        assert (len(got), got.transitions, got.max_depth) == (len(want), want.transitions, want.max_depth)
        keys = np.asarray(want.packed, np.uint64)
        assert sum((p.table.find(keys) >= 0).sum() for p in partitions) == len(want)   # the same states
    lay = layout(model)
    assert [len(got.trace_to(g).steps) for g in got.deadlocks] == \
        [len(want.trace_to(w).steps) for w in want.deadlocks[:1]]
    for k in range(len(watched)):
        assert (got.watch[k] is None) == (want.watch[k] is None)
        if got.watch[k] is not None:
            trace = got.trace_to(got.watch[k])
            assert len(trace.steps) == len(want.trace_to(want.watch[k]).steps)
            replay(lay, trace)
    for a, w in want.fired.items():
        assert (got.fired[a] is None) == (w is None)
        if w is not None:
            replay(lay, got.trace_through(*got.fired[a]))


ON_THE_CLUSTER = pytest.mark.xdist_group("test_distributed_symmetry")   # the tests of the cluster: on one worker, together
                                                                        # (it starts once: 1.5 s of CPU, 1 s more its first task)


@pytest.fixture(scope="module")
def scheduler():
    """Two worker processes of a Dask cluster on the loopback interface, shared by this module's tests."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=50) as cluster:
        yield cluster.scheduler_address


def same_answers(model, got, want) -> None:
    """The distributed verdicts against the single-process ones: verdicts, reasons, counts, depths,
    the reduction; each trace as long as the single-process one and replayed on the model (a lasso
    closes)."""
    lay = layout(model.instantiate())
    for g, w in zip(got, want, strict=True):
        assert (g.verdict, g.reason, g.depth, g.stats.states, g.stats.transitions, g.reductions) == \
            (w.verdict, w.reason, w.depth, w.stats.states, w.stats.transitions, w.reductions)
        same_trace(lay, g, w)


def same_trace(lay, got, want) -> None:
    """`got`'s trace there where `want`'s is, as long, replayed on the model (a lasso closes)."""
    assert (got.trace is None) == (want.trace is None)
    if got.trace is not None:
        assert len(got.trace.steps) == len(want.trace.steps)
        states = replay(lay, got.trace)
        if got.trace.loop_start is not None:
            assert states[-1] == states[got.trace.loop_start]


@ON_THE_CLUSTER
@settings(max_examples=examples(3), deadline=None)
@given(MODELS, st.data())
def test_two_workers_give_the_single_process_symmetric_verdicts(scheduler, model, data):
    props = data.draw(claims(model.players))
    want = ExplicitEngine().check(model, props, Budget())
    got = ExplicitEngine(store="compact", scheduler=scheduler).check(model, props, Budget())
    same_answers(model, got, want)
    assert all(r.reductions == ("symmetry",) for r in got)


@ON_THE_CLUSTER
@pytest.mark.parametrize("store", ["compact", "compiled"])
def test_two_workers_reduce_a_player_variables_model(scheduler, store):
    model = load_model(str(PRIORITY))
    props = load_properties(str(PRIORITY_CLAIMS), model)
    want = ExplicitEngine().check(model, props, Budget())     # the compact store's own search is not reduced
    got = ExplicitEngine(store=store, scheduler=scheduler).check(model, props, Budget())
    same_answers(model, got, want)
    full = ExplicitEngine().check(replace(model, symmetry=None), props[:1], Budget())
    assert got[0].stats.states * 3 == full[0].stats.states       # three players: orbits of three states
    assert all(r.reductions == ("symmetry",) and r.as_expected for r in got)


@ON_THE_CLUSTER
def test_two_workers_name_the_in_process_witnesses(scheduler):
    """The same witnesses and traces as the partitions in this process, whatever the order of their
    batches (`test_distributed_determinism`)."""
    model = load_model(str(PRIORITY)).instantiate()
    watch = watched_of(load_properties(str(PRIORITY_CLAIMS), model))
    track = range(len(model.actions))
    got = explore_distributed(model, Budget(), None, watch, track, None, 2, scheduler=scheduler, symmetric=True)
    assert witnesses(got) == witnesses(shuffled_search(model, 3, 0, watch, symmetric=True))


@ON_THE_CLUSTER
def test_a_state_budget_cut_is_unknown_with_its_reason(scheduler):
    model = load_model(str(PRIORITY))
    [invariant] = [p for p in load_properties(str(PRIORITY_CLAIMS), model) if p.id == "no-stuck"]
    [r] = ExplicitEngine(store="compact", scheduler=scheduler).check(model, [invariant], Budget(max_states=10))
    assert r.verdict is Verdict.UNKNOWN and r.stop is not None
    assert "--max-states" in r.reason and r.reductions == ("symmetry",)


@ON_THE_CLUSTER
@pytest.mark.parametrize("store, engine", [([], "explicit/compiled"), (["--store", "compact"], "explicit/compact")])
def test_the_command_lines_workers_expand_by_the_compiled_code(scheduler, capsys, monkeypatch, store, engine):
    """`check --workers N` (here `--scheduler`): the workers expand by the model's compiled code
    unless --store compact is given (the command line used to make every distributed search the
    compact store's)."""
    monkeypatch.chdir(ROOT)
    code = main(["check", str(PRIORITY), "-p", str(PRIORITY_CLAIMS), "--engine", "explicit", "--no-consistency",
                 "-q", "-f", "json", "--scheduler", scheduler, *store])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    states = [r for r in out["results"] if r["kind"] != "termination"]   # compact: the python store's edges
    assert states and all(r["engine"] == engine and r["reductions"] == ["symmetry"] for r in states)


# ---------------------------------------------------------------- the same cluster, without symmetry
# test_distributed_search's and test_compiled_workers' `--workers 2` searches, here to share the cluster: a
# start costs 3-5 s of CPU in its two worker processes (their imports). The local cluster's own start is
# tested by test_distributed_search (a worker killed) and test_bench_smoke (`bench --workers 2`).

CS = Const(1, enum="Pc")


def in_cs(p) -> App:
    return App(Op.EQ, (Index("pc", p), CS))


CLAIMS = [
    DeadlockFree(id="deadlock-free"),
    Invariant(id="mutual-exclusion",
              expr=App(Op.LE, (Quant(QuantKind.COUNT, "p", Const(0), Const(2), in_cs(Local("p"))), Const(1)))),
    Invariant(id="process-0-never-enters", expr=App(Op.NOT, (in_cs(Const(0)),))),
    Reachable(id="process-2-enters", action="enter_cs"),
]


def peterson3(folder: Path):
    """BEEM peterson.1 (12,498 states), declaring no symmetry."""
    three = folder / "peterson3.yaml"
    three.write_text(PETERSON.read_text().replace("  N: 4", "  N: 3"))
    return load_model(str(three))


@ON_THE_CLUSTER
def test_two_workers_match_the_single_process_search(scheduler, tmp_path):
    model = peterson3(tmp_path)
    want = ExplicitEngine(store="compact").check(model, CLAIMS, Budget())
    got = ExplicitEngine(scheduler=scheduler).check(model, CLAIMS, Budget())
    assert want[0].stats.states == 12498
    lay = layout(model.instantiate())
    for w, g in zip(want, got):
        assert (g.verdict, g.depth, g.stats.states, g.stats.transitions) == \
            (w.verdict, w.depth, w.stats.states, w.stats.transitions)
        assert (g.trace is None) == (w.trace is None)
        if g.trace is not None:
            assert len(g.trace.steps) == len(w.trace.steps)
            replay(lay, g.trace)


@ON_THE_CLUSTER
def test_two_compiled_workers_match_the_single_process_search(scheduler, tmp_path):
    """test_compiled_workers' `--workers 2 --store compiled`: the workers expand by the compiled code;
    the lasso of the termination claim is decided in this process (it needs the whole graph)."""
    model = peterson3(tmp_path)
    claims = [*CLAIMS, Terminates(id="game-ends", scope="game")]      # a lasso: the processes loop for ever
    want = ExplicitEngine().check(model, claims, Budget())
    got = ExplicitEngine(store="compiled", scheduler=scheduler).check(model, claims, Budget())
    lay = layout(model.instantiate())
    for w, g in zip(want, got):
        assert (g.verdict, g.depth, g.stats.states, g.stats.transitions) == \
            (w.verdict, w.depth, w.stats.states, w.stats.transitions)
        assert (g.engine, g.evidence["store"]) == ("explicit/compiled", "compiled")
        same_trace(lay, g, w)
    assert got[-1].verdict is Verdict.VIOLATED and got[-1].trace == want[-1].trace    # decided in this process


def test_a_model_error_stops_the_symmetric_partitions_with_a_lifted_trace(tmp_path):
    """A draw that marks the slot past the last in a symmetric duel: the partitions stop on the
    error the single-process symmetric search stops on, with its words, and the trace to the
    state where it happens is lifted back to the model (it replays, and the action raises there)."""
    path = tmp_path / "duel.yaml"
    path.write_text(SYMMETRIC.replace("  drew: {type: bool, init: false, reset: turn}",
                                      "  drew: {type: bool, init: false, reset: turn}\n"
                                      "  seen: {type: bool, per: 0..2, init: false}")
                    .replace("      drew: true", "      drew: true\n      seen[hand[active] + 1]: true"))
    model = load_model(str(path)).instantiate()
    want = explore(model, symmetric=True)
    partitions = [Partition(model, i, 2, [], [], None, symmetric=True) for i in range(2)]
    got = search_partitions(model, [InProcess(p) for p in partitions], Budget(), None, [], [], None,
                            time.perf_counter(), symmetric=True)
    assert want.error is not None and got.error is not None and not got.complete
    assert got.error[1] == want.error[1] == "index 3 out of range for seen"
    trace = got.trace_to(got.error[0])
    assert len(trace.steps) == len(want.trace_to(want.error[0]).steps)
    lay = layout(model)
    last = replay(lay, trace)[-1]
    with pytest.raises(EvalError):
        successors(lay, last)
