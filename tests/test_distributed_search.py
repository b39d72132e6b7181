"""`--workers 2`: the compact search partitioned across two worker processes of a loopback Dask
LocalCluster gives the single-process engine's state counts, verdicts and shortest traces
(replayed): on the cluster test_distributed_symmetry starts for its module
(`test_two_workers_match_the_single_process_search`). The partitions' level loop, run in this
process on random models (one to three partitions, with and without spilling), against the
single-process compact search; the visited table's insertion of batches that repeat a state; the
receiver's radix de-duplication; the local cluster's start (closed to others, a worker killed)."""
from __future__ import annotations

import asyncio
import inspect
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compact_store import counter
from test_explicit_differential import bools, models
from tiers import examples

from verifier.engines import distributed
from verifier.engines.compact import explore_compact
from verifier.engines.distributed import Partition, _nearly_one_of_each, search_partitions
from verifier.engines.visited import VisitedTable, mix
from verifier.ir.expr import App, Const, Op
from verifier.resources import Budget, StopKind, memory
from verifier.semantics import layout
from verifier.trace import replay


class Done:
    """A finished call, read the way a Dask future is."""

    def __init__(self, value):
        self.value = value

    def result(self, timeout=None):
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


@settings(max_examples=examples(40), deadline=None)
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
    from verifier.ir.expr import Var
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
    refs = np.asarray([rnd.randrange(1, 1 << 63) for _ in range(succ.shape[0])], np.uint64)
    pick, least = _nearly_one_of_each(succ, refs)
    assert set(succ[pick].tolist()) == set(values)
    assert np.unique(pick).shape[0] == pick.shape[0]
    smallest = {int(x): int(refs[succ == x].min()) for x in set(values)}
    distinct = np.unique(succ)
    if np.unique(mix(distinct) >> np.uint64(32)).shape[0] == distinct.shape[0]:     # no two share the bits sorted on
        assert pick.shape[0] == distinct.shape[0]
        assert [smallest[int(x)] for x in succ[pick]] == least.tolist()      # each state's smallest parent


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
            # both on this process's own IO loop, whose start waits on no clock (given a loop, Dask starts
            # no loop thread of its own, which it gives 10 s of wall clock: a loaded machine exceeded them)
            assert cluster.loop is client.loop is distributed.io_loop()
            assert any(t.name == "turnproof-dask-loop" for t in threading.enumerate())
    finally:
        cluster.close()


# ---------------------------------------------------------------- --max-memory across the workers (#29.5)

def test_each_worker_gets_its_share_of_the_memory_limit():
    """What this process does not hold of --max-memory, split evenly among the local workers."""
    held = memory.resident_bytes()
    mb = held // memory.MB + 1000
    share = distributed.worker_share(Budget(max_memory_mb=mb), 2)
    assert share is not None and abs(share - (mb * memory.MB - held) // 2) < 64 * memory.MB


def test_a_limit_that_cannot_hold_the_workers_starts_no_cluster(monkeypatch):
    """--max-memory too small for N worker processes: UNKNOWN at once, with the reason (the run used
    to start them and peak at three times the limit)."""
    monkeypatch.setattr(distributed, "local_cluster", lambda *_a: pytest.fail("no cluster is started"))
    mb = memory.resident_bytes() // memory.MB + 100
    space = distributed.explore_distributed(counter(8).instantiate(), Budget(max_memory_mb=mb), None, [], [], None, 2)
    assert not space.complete and space.stop is not None and space.stop.kind is StopKind.MEMORY
    assert "each of 2 Dask workers would get" in space.stop.words and "fewer --workers" in space.stop.words


def test_a_partition_past_its_share_stops_the_search_unknown():
    """A worker past SOFT_SHARE of its share stops expanding: the search stops with a memory stop
    before the nanny or the system kills the worker."""
    model = counter(8).instantiate()
    partitions = [Partition(model, i, 2, [], [], None, memory_limit=1) for i in range(2)]
    space = search_partitions(model, [InProcess(p) for p in partitions], Budget(max_memory_mb=300), None, [], [],
                              None, time.perf_counter())
    assert not space.complete and space.stop is not None and space.stop.kind is StopKind.MEMORY
    assert "--max-memory 300 MB reached" in space.stop.words and "a Dask worker held" in space.stop.words


class NeverDone:
    """A call in flight on a worker that died: it never answers."""

    def result(self, timeout=None):
        raise TimeoutError()


def test_a_worker_that_dies_stops_the_search_at_once():
    """A worker killed by the system (a cgroup's limit) left the run waiting on its calls until the
    backstop, its claims "not started": a call in flight is looked at every POLL seconds, and a
    worker gone from the cluster ends the search with `WorkerLost`."""
    assert distributed._results([Done(1), Done(2)], lambda: False) == [1, 2]
    with pytest.raises(distributed.WorkerLost, match="a Dask worker died"):
        distributed._results([Done(1), NeverDone()], lambda: True)


def test_a_worker_killed_on_a_loopback_cluster_stops_the_search():
    """A worker process killed mid-search (as the kernel's out-of-memory killer does): the search
    stops UNKNOWN with a memory stop instead of waiting on the dead worker until the backstop."""
    killed: list[int] = []

    def kill_a_worker(_info) -> None:
        if not killed:
            tasks = Path(f"/proc/{os.getpid()}/task")       # the nannies start their workers from a thread
            children = [p for t in tasks.iterdir() for p in (t / "children").read_text().split()]
            workers = [int(p) for p in children if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]
            os.kill(workers[0], signal.SIGKILL)
            killed.append(workers[0])

    space = distributed.explore_distributed(counter(300).instantiate(), Budget(), kill_a_worker, [], [], None, 2)
    assert killed and not space.complete and space.stop is not None and space.stop.kind is StopKind.MEMORY
    assert "a Dask worker died" in space.stop.words
