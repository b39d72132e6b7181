"""`--workers 2`: the compact search partitioned across two worker processes of a loopback Dask
LocalCluster gives the single-process engine's state counts, verdicts and shortest traces
(replayed). The partitions' level loop, run in this process on random models (one to three
partitions, with and without spilling), against the single-process compact search; the visited
table's insertion of batches that repeat a state; the receiver's radix de-duplication."""
from __future__ import annotations

import asyncio
import inspect
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compact_store import counter
from test_explicit_differential import bools, models

from verifier.engines import distributed
from verifier.engines.compact import explore_compact
from verifier.engines.distributed import Partition, _nearly_one_of_each, search_partitions
from verifier.engines.explicit import ExplicitEngine
from verifier.engines.visited import VisitedTable, mix
from verifier.ir.expr import App, Const, Index, Local, Op, Quant, QuantKind
from verifier.ir.props import DeadlockFree, Invariant, Reachable
from verifier.lang import load_model
from verifier.resources import Budget
from verifier.semantics import layout
from verifier.trace import replay

PETERSON = Path(__file__).parent.parent / "bench" / "models" / "peterson4.yaml"
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


def test_two_workers_match_the_single_process_search(tmp_path):
    three = tmp_path / "peterson3.yaml"                    # 12,498 states (BEEM peterson.1)
    three.write_text(PETERSON.read_text().replace("  N: 4", "  N: 3"))
    model = load_model(str(three))
    want = ExplicitEngine(store="compact").check(model, CLAIMS, Budget())
    got = ExplicitEngine(workers=2).check(model, CLAIMS, Budget())
    assert want[0].stats.states == 12498
    lay = layout(model.instantiate())
    for w, g in zip(want, got):
        assert (g.verdict, g.depth, g.stats.states, g.stats.transitions) == \
            (w.verdict, w.depth, w.stats.states, w.stats.transitions)
        assert (g.trace is None) == (w.trace is None)
        if g.trace is not None:
            assert len(g.trace.steps) == len(w.trace.steps)
            replay(lay, g.trace)


class Done:
    """A finished call, read the way a Dask future is."""

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


class InProcess:
    """A partition in this process, called the way the search calls a Dask actor handle."""

    def __init__(self, partition: Partition):
        self.partition = partition

    def __getattr__(self, name):
        method = getattr(self.partition, name)

        def call(*args):
            out = method(*args)
            return Done(asyncio.run(out) if inspect.iscoroutine(out) else out)
        return call


def search_in_process(model, parts: int, budget: Budget = Budget(), watch=(), visited_budget=None):
    partitions = [Partition(model, i, parts, list(watch), list(range(len(model.actions))), visited_budget)
                  for i in range(parts)]
    space = search_partitions(model, [InProcess(p) for p in partitions], budget, None, watch,
                              range(len(model.actions)), None, time.perf_counter())
    return space, partitions


@settings(max_examples=40, deadline=None)
@given(models(), st.lists(bools(), max_size=2), st.integers(1, 3), st.sampled_from([None, 256]),
       st.sampled_from([Budget(), Budget(max_depth=2)]))
def test_partitions_store_the_states_of_the_single_process_search(model, watched, parts, visited_budget, budget):
    want = explore_compact(model, budget, watch=watched, track=range(len(model.actions)))
    got, _ = search_in_process(model, parts, budget, watched, visited_budget)
    assert (got.error is None) == (want.error is None)
    if want.error is not None:
        assert got.depth_of(got.error[0]) == want.depth_of(want.error[0])
        return
    assert (len(got), got.transitions, got.levels, got.complete) == \
        (len(want), want.transitions, want.levels, want.complete)
    assert bool(got.deadlocks) == bool(want.deadlocks)
    for g, w in zip(got.deadlocks, want.deadlocks):
        assert got.depth_of(g) == want.depth_of(w)             # both in the shallowest level with one
    for k in range(len(watched)):              # the first state where it holds or raises: same level
        g, w = _first_hit(got, k), _first_hit(want, k)
        assert (g is None) == (w is None)
        if g is not None:
            assert got.depth_of(g) == want.depth_of(w)
        if got.watch[k] is not None:
            replay(layout(model), got.trace_to(got.watch[k]))
    for a, w in want.fired.items():
        assert (got.fired[a] is None) == (w is None)
        if w is not None:
            replay(layout(model), got.trace_through(*got.fired[a]))


def _first_hit(space, k: int) -> int | None:
    """The state where watch k was seen to hold, or to raise a model error (within a level, the
    partitions and the single search may meet either first)."""
    return space.watch[k] if space.watch[k] is not None else space.watch_errors.get(k, (None, ""))[0]


def test_a_received_batch_is_in_the_table_when_its_call_returns(monkeypatch):
    """The memory fix of issue #11: no level's successors wait in a worker until the level ends."""
    monkeypatch.setattr(distributed, "INSERT", 16)
    staged = []
    stage = Partition.stage

    async def checked(self, succ, refs):
        kept = await stage(self, succ, refs)
        staged.append((succ.shape[0], kept, bool((self.table.find(succ) >= 0).all())))
        return kept
    monkeypatch.setattr(Partition, "stage", checked)
    space, partitions = search_in_process(counter(60), 2)
    assert len(space) == 3600 and space.levels == 119 and space.complete
    assert len(staged) > 119, "the widest levels were meant to go out in several batches"
    assert all(inserted for _, _, inserted in staged)
    assert sum(kept for _, kept, _ in staged) < len(space)        # the rest were each partition's own
    assert all(not p.fresh and not p.level for p in partitions)


def test_partitions_that_spill_keep_every_state_and_parent():
    model = counter(60)                        # 3,600 states over 119 levels
    far = (59, 59)
    space, partitions = search_in_process(model, 2, watch=[_at(far)], visited_budget=8 * 1024)
    assert all(p.table.runs for p in partitions), "the budget was meant to make both partitions spill"
    assert len(space) == 3600 and space.levels == 119 and space.complete
    assert len(space.chain(space.watch[0])) == 119
    replay(layout(model), space.trace_to(space.watch[0]))


def _at(values):
    from verifier.ir.expr import App, Const, Op, Var
    return App(Op.AND, tuple(App(Op.EQ, (Var(v), Const(x))) for v, x in zip(("x", "y"), values)))


KEYS = st.lists(st.integers(0, (1 << 63) - 2), min_size=1, max_size=60, unique=True)


@settings(deadline=None)
@given(KEYS, st.lists(st.integers(0, 5), min_size=1, max_size=200), st.sampled_from(["key", "hash"]))
def test_a_batch_that_repeats_states_stores_each_once(keys, picks, links):
    stored_before = keys[: len(keys) // 2]
    table = VisitedTable(capacity=8, links=links)
    table.reserve(len(stored_before))
    table.insert(np.asarray(stored_before, np.uint64), np.zeros(len(stored_before), table.refs.dtype))
    batch = np.asarray([keys[i % len(keys)] for i in picks], np.uint64)
    parents = np.arange(1, batch.shape[0] + 1, dtype=table.refs.dtype) if links == "key" else \
        np.zeros(batch.shape[0], table.refs.dtype)
    table.reserve(batch.shape[0])
    new = table.insert(batch, parents, distinct=False)
    unseen = set(batch.tolist()) - set(stored_before)
    assert sorted(batch[new].tolist()) == sorted(unseen)
    assert len(table) == len(set(stored_before) | unseen)
    assert (table.find(np.asarray(sorted(set(keys) & (set(stored_before) | unseen)), np.uint64)) >= 0).all()
    if links == "key":
        for x in unseen:
            assert table.parent_of(x) in {int(parents[j]) - 1 for j in np.flatnonzero(batch == x)}


@settings(deadline=None)
@given(st.lists(st.integers(0, (1 << 63) - 1), max_size=300), st.randoms(use_true_random=False))
def test_the_receivers_radix_pass_keeps_every_state(values, rnd):
    succ = np.asarray(values + rnd.sample(values, len(values) // 2), np.uint64)
    pick = _nearly_one_of_each(succ)
    assert set(succ[pick].tolist()) == set(values)
    assert np.unique(pick).shape[0] == pick.shape[0]
    distinct = np.unique(succ)
    if np.unique(mix(distinct) >> np.uint64(32)).shape[0] == distinct.shape[0]:     # no two share the bits sorted on
        assert pick.shape[0] == distinct.shape[0]


def test_the_local_cluster_is_closed_to_others():
    """The local cluster listens on loopback only, TLS with a key made for the run: a client with
    other credentials cannot join it (it could submit code to the workers); no HTTP route is served
    (the dashboard had opened 127.0.0.1:8787) unless --dashboard asks for it."""
    import dask
    from distributed import Client
    from distributed.security import Security

    with dask.config.set(distributed.NO_HTTP_ROUTES):
        cluster = distributed.local_cluster(1)
    try:
        addresses = [cluster.scheduler_address] + [w.worker_address for w in cluster.workers.values()]
        assert all(a.startswith("tls://127.0.0.1:") for a in addresses), addresses
        assert not cluster.scheduler.http_application.applications
        with pytest.raises((OSError, TimeoutError)):
            Client(cluster.scheduler_address, security=Security.temporary(), timeout=5)
        with Client(cluster) as client:          # the run's own client holds the key
            assert client.submit(sum, [1, 2]).result() == 3
    finally:
        cluster.close()
