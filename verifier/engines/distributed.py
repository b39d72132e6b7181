"""The compact search partitioned across processes (`--workers N`, `--scheduler tcp://HOST:PORT`).

Each Dask worker holds one `Partition` (a Dask actor): the states whose hash
falls to it, in its own visited table (`visited.VisitedTable`, parent links as
keys, spilling to disk under a byte budget), and its share of the current BFS
level. Level by level, every partition expands its share (`compact.Expansion`:
vectorised where the model allows), drops the repeats among each chunk's
successors, and sends each successor, with its parent, to the partition that
owns it, directly (an actor method call from worker to worker, received on the
owner's event loop while it expands its own share), in batches of at most
about `INSERT` per owner with one in flight per owner. The owner inserts each batch as
it arrives and keeps the ones it had not seen as its share of the next level: it
orders each slice of a batch by hash (two 16-bit radix passes, which also drop
nearly every repeat and visit the visited table's buckets in order), inserts
that, and keeps the new states in the order received (neighbours in a level
share many successors, so the next level's chunks drop more repeats). So a
worker holds, beyond its table, its current and next level and a few batches,
not a level's worth of successors. The client only starts each level
and adds up the reports; no state passes through it. The search visits exactly
the states of the single-process search, so counts and verdicts are the same; a
trace is a shortest one (a witness in the shallowest level where one exists).

Traces do not depend on the order the batches arrive in, nor on the number of
partitions: a state's parent is its predecessor with the smallest packed state in
the level before (each chunk's and each received slice's repeats keep their smallest
parent, and the visited table, stamped with each slot's level, keeps the smallest
offered during the level: `VisitedTable.offer`), and each witness is the smallest
packed state of its level that is one (a watched predicate holding or raising, a
deadlock, a model error: a chunk with one is expanded on past it; a tracked action's
firing: the smallest state firing it, then the smallest successor), the client
taking the smallest of the partitions' reports. Not always the single-process
search's trace, which follows its order of discovery.

For a model that declares `symmetry: players` each partition stores canonical forms only (the
smallest packed state among the player rotations, the python store's: `symmetry.array_canonicalizer`
over the compact store's successors, the compiled store's canonicalising `expand` with `--store
compiled`), so a state is owned by its canonical form's hash and the search stores one state
per orbit, as many as the single-process symmetric search; traces are lifted back to the model
(`symmetry.lift`, through `compact.trace_along` with `canon`).

By default the cluster is a `LocalCluster` of N single-threaded worker
processes on this machine, with the Dask settings of `LOCAL_CLUSTER`; with a
scheduler address the workers of that cluster are used, as they are (every
worker needs turnproof installed).
"""
from __future__ import annotations

import asyncio
import os
import resource
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from verifier.engines.actiongen import Labels
from verifier.engines.base import ProgressFn, ProgressInfo
from verifier.engines.bfsgen import packing_of
from verifier.engines.compact import TRIM_FROM, CompactSpace, Expansion, TooWide, Watch, depth_cap, level_chunks
from verifier.engines.symmetry import NAME as SYMMETRY
from verifier.engines.symmetry import array_canonicalizer, canonicalizer
from verifier.engines.vecgen import MAX_BITS
from verifier.engines.visited import VisitedTable, mix
from verifier.ir.expr import Expr
from verifier.ir.model import Model
from verifier.resources import Budget, Stop, StopKind, model_error
from verifier.resources.memory import MB, SOFT_SHARE, give_back_freed, limit_words, memory_limit_bytes, resident_bytes
from verifier.semantics import EvalError, initial_states, layout

if TYPE_CHECKING:
    from tornado.ioloop import IOLoop

    from verifier.engines.compiled.chunks import CompiledExpansion

# Dask settings of the local cluster. Its defaults were measured to take CPU time from the search:
# the nanny's MALLOC_TRIM_THRESHOLD_ turns glibc's adaptive mmap threshold off, so every large numpy
# array is a fresh mapping (page faults took about 30% of a worker's CPU); the statistical profiler
# samples the worker's thread every 10 ms; the 20 ms event-loop tick, the system monitor and work
# stealing (actors are never stolen) keep the client and the workers busy while they wait.
LOCAL_CLUSTER = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "10s",
    "distributed.scheduler.work-stealing": False,
    # a worker's share of --max-memory: the partitions stop at SOFT_SHARE of it, the nanny ends the worker at 95 %;
    # a worker that paused at 80 % (Dask's default) would leave a level waiting on it
    "distributed.worker.memory.target": False,
    "distributed.worker.memory.spill": False,
    "distributed.worker.memory.pause": False,
}
INSERT = 1 << 20          # successors are sent, and received ones inserted, this many at a time: the table grows
                          # by what it needs, and the batches are small enough for the allocator to reuse


def owner(keys: np.ndarray, parts: int) -> np.ndarray:
    """The partition of each packed state (uint64)."""
    h = mix(keys)
    h >>= np.uint64(16)
    h %= np.uint64(parts)
    return h


def _digit(h: np.ndarray, k: int) -> np.ndarray:
    """Bits 16k to 16k + 15 of each value (a strided view, no copy)."""
    return h.view(np.uint16)[(k if sys.byteorder == "little" else 3 - k)::4]


def _one_of_each(succ: np.ndarray, refs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The index of one occurrence of each distinct value, and the smallest of its `refs`."""
    order = np.argsort(succ)
    s = succ[order]
    first = np.ones(s.shape[0], bool)
    first[1:] = s[1:] != s[:-1]
    return _least(order, first, refs)


def _nearly_one_of_each(succ: np.ndarray, refs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the values in the order of their hash's top 32 bits (two radix passes), skipping
    a value equal to the one before: every distinct value is kept, nearly every repeat dropped
    (one is kept only where another value with the same 32 hash bits comes between); with the
    smallest of the `refs` of each run of equal values."""
    h = mix(succ)
    order = np.argsort(_digit(h, 2), kind="stable")
    order = order[np.argsort(_digit(h, 3)[order], kind="stable")]
    s = h[order]
    first = np.empty(s.shape[0], bool)
    first[:1] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    return _least(order, first, refs)


def _least_hit(w: Watch, S: np.ndarray) -> tuple[int, str | None] | None:
    """The smallest state of the chunk where the watched predicate holds or raises (with the
    error's words), None where nowhere."""
    if w.first(S)[0] is None:
        return None
    S = np.sort(S)
    lane, message = w.first(S)
    return int(S[lane]), message


def _keep_least(found: dict, k: int, witness: tuple | None) -> None:
    """Keep the witness of `k` with the smaller state (its first element)."""
    if witness is not None and (k not in found or witness[0] < found[k][0]):
        found[k] = witness


def _least(order: np.ndarray, first: np.ndarray, refs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first index of each run of equal values (`order`, `first` marking where a run starts),
    and the smallest ref of the run: a state's parent does not depend on the order of its offers."""
    starts = np.flatnonzero(first)
    if not starts.size:
        return starts, refs[:0]
    return order[starts], np.minimum.reduceat(refs[order], starts)


def _cpu_seconds() -> float:
    """CPU time of this process, user and system."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Partition:
    """One worker's share of the search (a Dask actor; every method runs in the worker).

    Memory at scale: the level is a queue of arrays that shrinks as it is expanded; successors
    leave in batches of about `INSERT` per owner (one chunk's more at most), with one batch per
    owner in flight; a received
    batch is inserted into the visited table as it arrives (on a thread of its own, under
    `self.lock`), so what a level holds beyond the table is its new states and a few batches,
    not every successor it produced."""

    def __init__(self, model: Model, index: int, parts: int, watch: Sequence[Expr], track: Sequence[int],
                 visited_budget: int | None, memory_limit: int | None = None, compiled: bool = False,
                 symmetric: bool = False):
        """`compiled`: expand by the model's compiled code (`compiled/chunks.py`), else by the compact
        store's; `symmetric`: store the canonical form of each successor (`reduced`)."""
        self.lay = layout(model)
        self.index, self.parts = index, parts
        self.labels = Labels()
        self.expansion: Expansion | CompiledExpansion
        self.canon = None              # the canonical forms of the compact store's successors
        if compiled:                   # the compiled expansion gives them canonical
            from verifier.engines.compiled.chunks import CompiledExpansion
            self.expansion = CompiledExpansion(self.lay, reduced(model, symmetric))
        else:
            self.expansion = Expansion(self.lay, self.labels)
            if reduced(model, symmetric):
                self.canon = array_canonicalizer(self.lay, packing_of(self.lay))
        self.watches = [Watch(self.lay, e) for e in watch]
        self.track = set(track)
        self.table = VisitedTable(links="key", budget_bytes=visited_budget, stamped=True)
        self.lock = threading.Lock()                              # the table and `fresh`
        self.inserter = ThreadPoolExecutor(1, thread_name_prefix="partition-insert")
        self.level: deque[np.ndarray] = deque()                   # the level being expanded (or next)
        self.fresh: list[np.ndarray] = []                         # new states received for the next level
        self.peers: list = []                                     # the partitions' actor handles, by index
        self.freed = 0                                            # bytes let go of since the last heap trim
        self.resident, self.cpu = resident_bytes(), _cpu_seconds()   # before the search
        self.memory_limit = memory_limit                          # this worker's share of --max-memory (bytes)
        self.heavy = False                                        # past it while receiving (`over_memory`)

    def connect(self, peers: list) -> None:
        """The other partitions' actor handles (this one's own entry is not used)."""
        self.peers = peers

    async def stage(self, succ: np.ndarray, refs: np.ndarray) -> int:
        """A batch of successors from another partition, inserted before the call returns (runs on
        the worker's event loop, so it is served while this partition's own `expand` is running;
        the insertion runs on the partition's inserter thread, leaving the event loop free)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.inserter, self.receive, [(succ, refs)])

    def commit(self) -> int:
        """Make the new states received during this level the next level; their number."""
        with self.lock:
            fresh, self.fresh = self.fresh, []
            self.table.next_level()
        self.level = deque(fresh)
        return sum(piece.shape[0] for piece in fresh)

    def receive(self, batches: list[tuple[np.ndarray, np.ndarray]]) -> int:
        """Successors (with parent links) sent to this partition: keep the unseen ones for the next
        level, in the order received (neighbours in a level share many successors); their number."""
        kept = 0
        for succ, refs in batches:
            self.freed += succ.nbytes + refs.nbytes
            for first in range(0, succ.shape[0], INSERT):
                some = succ[first:first + INSERT]
                pick, least = _nearly_one_of_each(some, refs[first:first + INSERT])
                new = np.zeros(some.shape[0], bool)
                with self.lock:
                    new[pick[self._insert(some[pick], least)]] = True
                    self.fresh.append(some[new])
                kept += int(new.sum())
        self.heavy = self.heavy or self.over_memory()
        if self.freed >= TRIM_FROM:        # measured: without a trim this often, glibc keeps what the
            self.freed = 0                 # threads freed and a worker's peak is 1.2x to 1.7x higher
            give_back_freed()
        return kept

    def _insert(self, succ: np.ndarray, refs: np.ndarray) -> np.ndarray:
        """Insert received successors (they may repeat a state) into the visited table, a state new
        in this level keeping the smallest parent offered (`VisitedTable.offer`); the mask of the
        new ones."""
        self.table.reserve(succ.shape[0])
        if self.table.runs:
            fresh = np.ones(succ.shape[0], bool)
            order = np.argsort(succ)
            fresh[order] = ~self.table.in_runs(succ[order])
            new = np.zeros(succ.shape[0], bool)
            new[fresh] = self.table.offer(succ[fresh], refs[fresh])
        else:
            new = self.table.offer(succ, refs)
        return new

    def expand(self, found: Sequence[int] = (), fired: Sequence[int] = (), deadlock: bool = True) -> dict:
        """Expand this partition's share of the current level, send each other partition its
        successors directly (worker to worker) and wait until they have them; returns the report.
        The report names, of each watched predicate but those `found` already, of each tracked
        action but those `fired` already, of deadlock (while `deadlock`) and of model errors, the
        witness with the smallest packed state of the level (a firing: then the smallest
        successor), whatever order the level's states arrived in; a model error's chunk is
        expanded on past it, so that the level's smallest one is named."""
        self.freed += sum(piece.nbytes for piece in self.level)
        report: dict = {"transitions": 0, "watch": {}, "deadlock": None, "fired": {}, "error": None, "memory": None}
        watches = [(k, w) for k, w in enumerate(self.watches) if k not in set(found)]
        wanted = sorted(self.track.difference(fired))
        out = [_Outbox() for _ in range(self.parts)]     # per owner: successors, parents not yet sent
        in_flight: list = [None] * self.parts            # per owner: the batch sent and not yet taken
        for S in level_chunks(self.level):
            while S.shape[0]:
                for k, w in watches:
                    _keep_least(report["watch"], k, _least_hit(w, S))
                f = self.expansion(S)
                live = S.shape[0] if f.error is None else f.error[0]
                report["transitions"] += int(f.lanes.shape[0])
                if deadlock:
                    moved = np.bincount(f.lanes, minlength=S.shape[0])[:live] > 0
                    stuck = S[:live][~moved & ~f.final[:live]]
                    if stuck.size and (report["deadlock"] is None or int(stuck.min()) < report["deadlock"]):
                        report["deadlock"] = int(stuck.min())
                for a, firing in self.expansion.first_firings(S, f, wanted).items() if wanted else ():
                    _keep_least(report["fired"], a, firing)
                stored = f.succ if self.canon is None else self.canon(f.succ)
                pick, refs = _one_of_each(stored, S[f.lanes] + np.uint64(1))
                succ = stored[pick]
                dest = owner(succ, self.parts)
                for p, box in enumerate(out):
                    mine = dest == p
                    box.add(succ[mine], refs[mine])
                    if box.size >= INSERT:
                        in_flight[p] = self._send(p, box.take(), in_flight[p])
                if f.error is None:
                    break
                error = (int(S[f.error[0]]), f.error[1])
                if report["error"] is None or error < report["error"]:
                    report["error"] = error
                S = S[f.error[0] + 1:]
            if self.heavy or self.over_memory():
                report["memory"] = resident_bytes()
                break
        for p, box in enumerate(out):
            in_flight[p] = self._send(p, box.take(), in_flight[p])
        for future in in_flight:
            if future is not None:
                future.result()
        return report

    def over_memory(self) -> bool:
        """Whether this worker has passed SOFT_SHARE of its share of the memory limit: the search
        then stops, UNKNOWN, before the cluster's nanny or the system kills the worker."""
        return self.memory_limit is not None and resident_bytes() > self.memory_limit * SOFT_SHARE

    def _send(self, p: int, batch: tuple[np.ndarray, np.ndarray], before):
        """Send partition p a batch once the one sent to it before is taken (its own batches are
        inserted here); the call in flight, or None."""
        if before is not None:
            before.result()
        if not batch[0].shape[0]:
            return None
        if p == self.index:
            self.receive([batch])
            return None
        self.freed += batch[0].nbytes + batch[1].nbytes
        return self.peers[p].stage(*batch)

    def pending(self) -> np.ndarray:
        """The stored states not yet expanded (the next level)."""
        with self.lock:
            pieces = [*self.level, *self.fresh]
        return np.concatenate(pieces) if pieces else np.zeros(0, np.uint64)

    def parent_of(self, key: int) -> int | None:
        return self.table.parent_of(key)

    def size(self) -> int:
        return len(self.table)

    def usage(self) -> tuple[int, int, float]:
        """This worker's resident growth since the partition started and its peak resident size
        (bytes), and the CPU seconds it has used since the partition started."""
        give_back_freed()                  # as the single-process search does at its end
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        return resident_bytes() - self.resident, peak, _cpu_seconds() - self.cpu


@dataclass
class _Outbox:
    """Successors and their parent links bound for one partition, gathered chunk by chunk."""

    succ: list[np.ndarray] = field(default_factory=list)
    refs: list[np.ndarray] = field(default_factory=list)
    size: int = 0

    def add(self, succ: np.ndarray, refs: np.ndarray) -> None:
        if succ.shape[0]:
            self.succ.append(succ)
            self.refs.append(refs)
            self.size += succ.shape[0]

    def take(self) -> tuple[np.ndarray, np.ndarray]:
        """What was gathered, as one batch; the outbox is emptied."""
        empty = np.zeros(0, np.uint64)
        batch = (np.concatenate(self.succ) if self.succ else empty, np.concatenate(self.refs) if self.refs else empty)
        self.succ, self.refs, self.size = [], [], 0
        return batch


class ChainTable:
    """The parent links of the states a verdict names, fetched from the partitions before the
    cluster closes (a `CompactSpace` reads only `parent_of` and the size)."""

    def __init__(self, states: int):
        self.parents: dict[int, int | None] = {}
        self.states = states
        self.runs: list = []

    def __len__(self) -> int:
        return self.states

    def parent_of(self, key: int, _reaches: object = None) -> int | None:
        return self.parents[key]

    def close(self) -> None:
        pass


# Without --dashboard the scheduler and the workers serve no HTTP route (distributed starts an HTTP
# server whatever `dashboard_address` says: None meant its default port, 8787, open while the run lasts)
NO_HTTP_ROUTES: dict[str, list[str]] = {"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []}


def local_cluster(workers: int, dashboard: bool = False, memory_limit: int | None = None):
    """The local cluster: `workers` single-threaded processes and their scheduler on the loopback
    interface, every connection TLS with a key made for this run and held in memory
    (`Security.temporary()`), so that nothing else on the machine can join it or submit work to it;
    its HTTP server on a free loopback port, with the dashboard only when asked. `memory_limit`:
    each worker's share of the run's memory (bytes), which its nanny enforces (the partitions stop
    before it: `Partition.over_memory`)."""
    from distributed import LocalCluster
    from distributed.security import Security

    with _workers_ignore_sigint():
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                            security=Security.temporary(), dashboard_address="127.0.0.1:0",
                            scheduler_kwargs={"dashboard": dashboard}, silence_logs=50,
                            memory_limit=memory_limit or 0, loop=io_loop())


_IO_LOOPS: dict[int, IOLoop] = {}      # the running IO loop of each process that started one (a forked child starts its own)


def io_loop() -> IOLoop:
    """This process's IO loop for Dask's cluster and client, run in a daemon thread of its own, started
    once and waited for without a clock: Dask's own start gives its loop thread 10 s of wall clock and
    then fails on an assertion, which a loaded machine reached (load 15 to 20 on two cores). It is
    never stopped: an idle loop costs nothing, and the next run in the process reuses it."""
    from tornado.ioloop import IOLoop

    pid = os.getpid()
    if pid not in _IO_LOOPS:
        ready = threading.Event()
        failure: list[BaseException] = []

        async def serve() -> None:
            _IO_LOOPS[pid] = IOLoop.current()
            ready.set()
            await asyncio.Event().wait()

        def run() -> None:
            try:
                asyncio.run(serve())
            except BaseException as e:      # a failure to start reaches the caller, not the thread's end
                failure.append(e)
            finally:
                ready.set()

        threading.Thread(target=run, daemon=True, name="turnproof-dask-loop").start()
        ready.wait()
        if failure:
            raise failure[0]
    return _IO_LOOPS[pid]


@contextmanager
def _workers_ignore_sigint() -> Iterator[None]:
    """Ctrl-C reaches the whole process group: the worker processes started within ignore it (an
    ignored signal stays ignored in a child), so that only this process stops the run, closing
    the cluster, and no worker prints a KeyboardInterrupt traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def holds(model: Model) -> bool:
    """Whether the distributed search can hold this (instantiated) model's states: in one word."""
    return packing_of(layout(model)).words == 1


def reduced(model: Model, symmetric: bool) -> bool:
    """Whether a search asked to be `symmetric` stores one state per orbit of the player rotations:
    where the model declares `symmetry: players` (as `explicit.explore` and the compiled store)."""
    return symmetric and model.symmetry == "players"


def explore_distributed(model: Model, budget: Budget, progress: ProgressFn | None, watch: Sequence[Expr],
                        track: Sequence[int], tick: Callable[[int, int], Stop | None] | None, workers: int,
                        scheduler: str | None = None, visited_budget: int | None = None,
                        dashboard: bool = False, compiled: bool = False, symmetric: bool = False) -> CompactSpace:
    """`compact.explore_compact` with the states partitioned across `workers` Dask workers (a
    local cluster, or the workers of `scheduler`); `dashboard`: serve Dask's dashboard (on a free
    loopback port of the local cluster's scheduler, which the log names). The run's memory limit
    left beside this process is split among the local workers (`worker_share`); a limit that
    cannot hold them, or a worker that dies (killed by the system), stops the search UNKNOWN.
    `compiled`: the workers expand by the model's compiled code, compiled here first (the workers
    load it from the disk cache). `symmetric`: one state per orbit of the player rotations where the
    model declares `symmetry: players` (see the module docstring)."""
    import dask
    from distributed import Client

    lay = layout(model)
    if not holds(model):
        raise TooWide(f"{packing_of(lay).bits} bits of state (the distributed search holds at most {MAX_BITS})")
    if compiled:
        from verifier.engines.compiled.chunks import prepare
        prepare(lay, reduced(model, symmetric))
    with dask.config.set(LOCAL_CLUSTER if scheduler is None else {}), \
            dask.config.set({} if dashboard else NO_HTTP_ROUTES):
        cluster, client, share = None, None, None
        try:
            if scheduler is None:
                share = worker_share(budget, workers)
                if share is not None and share < WORKER_FLOOR:
                    return _unstarted(model, watch, track, Stop(
                        StopKind.MEMORY, "--max-memory", f"{limit_words(budget.max_memory_mb)}: each of {workers} "
                        f"Dask workers would get {share // MB:,} MB, less than the {WORKER_FLOOR // MB} MB one takes "
                        "before it stores a state (give more --max-memory, or fewer --workers)"))
                cluster = local_cluster(workers, dashboard, share)
            client = Client(cluster if cluster is not None else scheduler,
                            security=cluster.security if cluster is not None else None, loop=io_loop())
            return _search(client, model, budget, progress, watch, track, tick, workers, visited_budget, share, compiled,
                           symmetric)
        except BaseException:           # cut short (the backstop, a signal), the cluster's start included:
            _kill_workers()             # its worker processes end at once
            raise
        finally:
            hurry = cluster is not None and budget.expired()   # stopped by the backstop: no graceful close
            if hurry:
                _kill_workers()
            if client is not None:
                client.close(timeout=CLOSE_SECONDS if hurry else None)
            if cluster is not None:
                cluster.close(timeout=CLOSE_SECONDS if hurry else None)


def _kill_workers() -> None:
    """End this process's local Dask worker processes at once (SIGKILL): a run cut short does not
    wait for them to finish their level, start or close (seconds past the backstop's allowance)."""
    import multiprocessing

    for child in multiprocessing.active_children():
        if child.name.startswith("Dask Worker process") and child.pid is not None:
            with suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGKILL)


WORKER_FLOOR = 150 * MB     # what a Dask worker process takes before it stores a state (numpy, the model's code)
POLL = 1.0                  # seconds between two looks at the workers while a call is in flight
CLOSE_SECONDS = 0.5         # the client's and the cluster's close once the backstop has cut


def worker_share(budget: Budget, workers: int) -> int | None:
    """Each local worker's share of the run's memory limit (bytes): what this process does not hold
    yet, split evenly (None where no limit is known)."""
    limit = memory_limit_bytes(budget.max_memory_mb)
    return None if limit is None else max(0, limit - resident_bytes()) // max(1, workers)


class WorkerLost(Exception):
    """A worker of the cluster died while the search waited on it (the system killed it: memory)."""


def _search(client, model: Model, budget: Budget, progress: ProgressFn | None, watch: Sequence[Expr],
            track: Sequence[int], tick, workers: int, visited_budget: int | None,
            memory_limit: int | None = None, compiled: bool = False, symmetric: bool = False) -> CompactSpace:
    start = time.perf_counter()
    addresses = sorted(client.scheduler_info()["workers"])
    parts = workers if client.cluster is not None or workers > 1 else len(addresses)
    actors = [client.submit(Partition, model, i, parts, list(watch), list(track), visited_budget, memory_limit,
                            compiled, symmetric, actor=True, workers=[addresses[i % len(addresses)]],
                            pure=False).result()
              for i in range(parts)]

    def lost() -> bool:              # a worker restarted by its nanny has a new address
        return not set(addresses) <= set(client.scheduler_info()["workers"])

    try:
        return search_partitions(model, actors, budget, progress, watch, track, tick, start, lost, symmetric)
    except WorkerLost as err:
        if memory_limit is None:
            return _unstarted(model, watch, track, Stop(StopKind.MEMORY, "the system", str(err)))
        return _unstarted(model, watch, track, Stop(StopKind.MEMORY, "--max-memory", (
            f"{limit_words(budget.max_memory_mb)}: {err} (each worker's share: {memory_limit // MB:,} MB, "
            "which its nanny enforces)")))


def _unstarted(model: Model, watch: Sequence[Expr], track: Sequence[int], stop: Stop) -> CompactSpace:
    """A search that could not run, or lost what it held: nothing stored, `stop` says why."""
    space = CompactSpace(layout(model), Labels(), ChainTable(0), watch=[None] * len(watch), fired=dict.fromkeys(track))
    space.complete, space.stop = False, stop
    return space


def _results(futures: list, lost: Callable[[], bool] | None) -> list:
    """The results of calls in flight on the partitions; with `lost` (a Dask cluster), looked at every
    POLL seconds, and `WorkerLost` where a worker is gone (killed by the system, its calls would
    otherwise be waited on until the backstop)."""
    if lost is None:
        return [f.result() for f in futures]
    out = []
    for f in futures:
        while True:
            try:
                out.append(f.result(timeout=POLL))
                break
            except TimeoutError:
                if lost():
                    raise WorkerLost("a Dask worker died while the search waited on it (killed by the system, "
                                     "out of memory?): the search stopped") from None
            except OSError as err:       # the connection to the worker holding the partition closed
                raise WorkerLost(f"a Dask worker died while the search waited on it ({type(err).__name__}: "
                                 "killed by the system, out of memory?): the search stopped") from None
    return out


def search_partitions(model: Model, actors: list, budget: Budget, progress: ProgressFn | None,
                      watch: Sequence[Expr], track: Sequence[int], tick, start: float,
                      lost: Callable[[], bool] | None = None, symmetric: bool = False) -> CompactSpace:
    """The level-by-level search over the partitions, given their handles (Dask actors, whose
    method calls return futures; `start` is when the search began, by `time.perf_counter`;
    `lost`: whether a worker of the cluster is gone, `WorkerLost` then; `symmetric`: the
    partitions store canonical forms, made with the same `symmetric`)."""
    lay = layout(model)
    parts = len(actors)
    labels = Labels()
    table = ChainTable(0)
    space = CompactSpace(lay, labels, table, watch=[None] * len(watch), fired=dict.fromkeys(track))
    pack, canon = packing_of(lay).pack, None
    if reduced(model, symmetric):
        canon = space.canon = canonicalizer(lay, packing_of(lay))
        space.reductions = (SYMMETRY,)
    try:
        packed = (pack(s) for s in initial_states(lay))
        inits = np.asarray(list(dict.fromkeys(packed if canon is None else map(canon, packed))), np.uint64)
    except EvalError as err:
        space.complete, space.stop = False, model_error(f"model error in the initial states: {err}")
        return space
    for actor in actors:
        actor.connect(actors).result()
    dest = owner(inits, parts)
    for p, actor in enumerate(actors):
        actor.receive([(inits[dest == p], np.zeros(int((dest == p).sum()), np.uint64))]).result()
    stored = sum(f.result() for f in [a.commit() for a in actors])
    depth_limit, depth_stop = depth_cap(budget)
    frontier = stored
    if budget.max_states is not None and stored > budget.max_states:
        space.complete, space.stop = False, budget.states_stop()
    while space.complete and frontier:
        if space.levels >= depth_limit:
            space.complete, space.stop = False, depth_stop
            break
        status = tick(stored, space.levels) if tick is not None else None
        if status is not None:
            space.complete, space.stop = False, status
            break
        space.levels += 1
        found = [k for k, key in enumerate(space.watch) if key is not None or k in space.watch_errors]
        fired = [a for a, firing in space.fired.items() if firing is not None]
        reports = _results([a.expand(found, fired, not space.deadlocks) for a in actors], lost)
        _merge(space, reports)
        if space.error is not None:
            space.complete, space.stop = False, model_error(f"model error: {space.error[1]}")
            break
        frontier = sum(_results([a.commit() for a in actors], lost))
        heavy = max((r["memory"] for r in reports if r.get("memory")), default=None)
        if heavy is not None:
            stored += frontier
            space.complete, space.stop = False, Stop(StopKind.MEMORY, "--max-memory", (
                f"{limit_words(budget.max_memory_mb)}: a Dask worker held {heavy // MB:,} MB of its share"))
            break
        stored += frontier
        if budget.max_states is not None and stored > budget.max_states:
            space.complete, space.stop = False, budget.states_stop()
            break
        if progress is not None:
            progress(ProgressInfo(stored, space.levels, time.perf_counter() - start))
    if not space.complete and any(w is None for w in space.watch):
        _watch_pending(space, actors, lay, watch)
    table.states = stored if space.complete or budget.max_states is None else min(stored, budget.max_states)
    _fetch_chains(space, actors, parts)
    space.seconds = time.perf_counter() - start
    space.worker_usage = [a.usage().result() for a in actors]
    return space


def _merge(space: CompactSpace, reports: list[dict]) -> None:
    """Add a level's reports to what the search found: of each witness kind, the one with the
    smallest state among the partitions' (each names its smallest), where none was found before."""
    space.transitions += sum(r["transitions"] for r in reports)
    for k in range(len(space.watch)):
        if space.watch[k] is None and k not in space.watch_errors:
            _name_watch(space, k, [r["watch"][k] for r in reports if k in r["watch"]])
    stuck = [r["deadlock"] for r in reports if r["deadlock"] is not None]
    if stuck and not space.deadlocks:
        space.deadlocks.append(min(stuck))
    for a in space.fired:
        firings = [r["fired"][a] for r in reports if a in r["fired"]]
        if space.fired.get(a) is None and firings:
            key, firing, target = min(firings, key=lambda hit: (hit[0], hit[2]))
            space.fired[a] = (key, space.labels(*firing), target)
    errors = [r["error"] for r in reports if r["error"] is not None]
    if errors and space.error is None:
        space.error = min(errors)


def _watch_pending(space: CompactSpace, actors: list, lay, watch: Sequence[Expr]) -> None:
    """Watched predicates on the states stored but not expanded when the search stopped (the
    smallest such state, as in a level)."""
    pending = [a.pending().result() for a in actors]
    for k, e in enumerate(watch):
        if space.watch[k] is not None or k in space.watch_errors:
            continue
        w = Watch(lay, e)
        _name_watch(space, k, [hit for S in pending if (hit := _least_hit(w, S)) is not None])


def _name_watch(space: CompactSpace, k: int, hits: list) -> None:
    """The smallest of the hits (state, error message or None) as watched predicate k's witness:
    a state where it holds, or one where evaluating it is a model error."""
    if hits:
        key, message = min(hits)
        if message is None:
            space.watch[k] = key
        else:
            space.watch_errors[k] = (key, message)


def _fetch_chains(space: CompactSpace, actors: list, parts: int) -> None:
    """Parent links from each named state back to an initial state."""
    named = [k for k in space.watch if k is not None] + [k for k, _ in space.watch_errors.values()]
    named += space.deadlocks + [f[0] for f in space.fired.values() if f is not None]
    if space.error is not None:
        named.append(space.error[0])
    table = space.table
    for key in named:
        while key is not None and key not in table.parents:
            p = int(owner(np.asarray([key], np.uint64), parts)[0])
            table.parents[key] = parent = actors[p].parent_of(key).result()
            key = parent
