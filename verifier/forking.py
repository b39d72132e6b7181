"""Independent jobs in forked children, one per free CPU: `fork_map`; one job beside the
caller's own work: `Alongside`.

A forked child sees everything the parent holds (models, generated code)
without copying; only its result travels back, pickled (`send`, `receive`: the
arrays in it, a reading's states, written and read as they lie in memory). Where `fork` is
missing (not POSIX) or one CPU is free, or when a child fails, the job runs
in the parent instead, so results never depend on how they were computed
(and an error is raised here, with its traceback, as without forking).
"""
from __future__ import annotations

import gc
import mmap
import multiprocessing
import os
import pickle
import signal
import struct
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Generic, TypeVar, cast

from verifier.resources.memory import resident_bytes, rewatch_in_child, set_workers
from verifier.resources.signals import default_signals_in_child

T = TypeVar("T")
R = TypeVar("R")


_child_process = False       # set in a forked worker


def in_child() -> bool:
    """This process is a worker `fork_map` or `Alongside` forked."""
    return _child_process


def forks() -> bool:
    """Jobs can be forked here (`fork_map` with `fresh` forks every item)."""
    return "fork" in multiprocessing.get_all_start_methods()


def free_cpus() -> int:
    if not forks():
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


_frozen_blocks = 0          # `frozen_heap` blocks open in this process


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Within the block, the objects made before it (and before any block it is in) are left out of
    the garbage collector's passes (`gc.freeze`): the children forked in it neither scan them again
    nor copy the memory pages their scans would write, and the parent's own passes after the
    readings skip them (Shadow Era --printed: 215,000 objects; the collector's passes 0.55 -> 0.32 s of
    CPU in the parent, 0.50 -> 0.25 s in its five children). The outermost block's end unfreezes
    everything frozen (nothing else here freezes; a block a signal cut short in its end is mended by
    the next), and cycles among those objects are collected again."""
    global _frozen_blocks
    gc.freeze()
    _frozen_blocks += 1
    try:
        yield
    finally:
        _frozen_blocks -= 1
        if _frozen_blocks == 0:
            gc.unfreeze()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Within the block the garbage collector does not run (afterwards as before it): for loading
    code that makes many long-lived objects and hardly any garbage, frozen next by `frozen_heap`
    (the compiled store's code loaded ahead of Shadow Era's readings: 225 passes, 0.18 of its 0.88 s)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def fork_map(fn: Callable[[T], R], items: Sequence[T], workers: int | None = None,
             arrived: Callable[[R], None] | None = None, fresh: bool = False) -> list[R]:
    """`[fn(x) for x in items]`, with up to `workers` (default: the free CPUs) children at once;
    `arrived(result)` is called here as each result comes in, before later children start
    (so that they can build on it). `fresh`: each item in a child of its own even with one
    worker, so that no item runs in a process an earlier item left its state in (Z3's among
    them): what an item computes is then the same on a machine of one CPU as of many."""
    workers = free_cpus() if workers is None else workers
    if len(items) < 2 or (workers < 2 and not (fresh and forks())):
        out = []
        for x in items:
            out.append(fn(x))
            if arrived is not None:
                arrived(out[-1])
        return out
    workers = max(workers, 1)
    context = multiprocessing.get_context("fork")
    results: dict[int, R] = {}
    failed: list[int] = []
    running: dict[Any, tuple[int, Any]] = {}      # pipe -> (item index, process)
    todo = list(range(len(items)))[::-1]
    try:
        while todo or running:
            while todo and len(running) < workers:
                k = todo.pop()
                pipe, child_end = context.Pipe(duplex=False)
                process = context.Process(target=_child, args=(fn, items[k], child_end, workers, resident_bytes()),
                                          daemon=True)
                _start(process)
                child_end.close()
                running[pipe] = (k, process)
            for ready in wait(list(running)):
                k, process = running.pop(ready)
                pipe = cast(Connection, ready)
                try:
                    ok, value = receive(pipe)
                except (EOFError, OSError):
                    ok, value = False, None
                pipe.close()
                process.join()
                if ok:
                    results[k] = value
                    if arrived is not None:
                        arrived(value)
                else:
                    failed.append(k)
    finally:                                 # interrupted, terminated or failed: no orphaned workers
        _stop(running)
    for k in sorted(failed):
        results[k] = fn(items[k])
        if arrived is not None:
            arrived(results[k])
    return [results[k] for k in range(len(items))]


class Alongside(Generic[R]):
    """`fn()` in a forked child started at once, while the caller goes on with its own work
    (the consistency analyses beside the claims); `result()` waits for it. The two processes
    share the memory limit as two workers do. Where `fork` is missing, `result()` runs `fn`
    here; where the child fails, `fallback` (default `fn`: an error is then raised here, with
    its traceback)."""

    def __init__(self, fn: Callable[[], R], fallback: Callable[[], R] | None = None):
        self.fn = fn
        self.fallback = fallback or fn
        self.pipe: Any = None
        self.process: Any = None
        self._fork()

    def _fork(self) -> None:
        if "fork" not in multiprocessing.get_all_start_methods():
            return
        context = multiprocessing.get_context("fork")
        self.pipe, child_end = context.Pipe(duplex=False)
        self.process = context.Process(target=_child, args=(_call, self.fn, child_end, 2, resident_bytes()),
                                       daemon=True)
        _start(self.process)
        child_end.close()
        set_workers(2, resident_bytes())
        self.answer: tuple[bool, Any] = (False, None)
        self.reader = threading.Thread(target=self._read, daemon=True)   # the child never waits on a full pipe
        self.reader.start()

    def _read(self) -> None:
        try:
            self.answer = receive(self.pipe)
        except Exception:                   # the child died, or `close` closed the pipe under it
            self.answer = (False, None)

    def result(self) -> R:
        if self.process is None:
            return self.fn()
        try:
            self.reader.join()
            ok, value = self.answer
        finally:
            self.close()
        return value if ok else self.fallback()

    def restart(self) -> None:
        """Start `fn` again in a new child, forked now (it sees what the caller holds now), also
        where the child has already answered or failed: which of them is used never depends on
        how fast the child was (the answer may differ, a Z3 witness say); nothing once `result`
        has been taken."""
        if self.process is None:
            return
        reader = self.reader
        self.close()
        reader.join()                       # its closed pipe ends it: it sets no answer after the new child's
        self._fork()

    def close(self) -> None:
        """Stop the child if it still runs (the caller was interrupted or cut short)."""
        if self.process is None:
            return
        _stop({self.pipe: (0, self.process)})
        self.process = None
        set_workers(1)


def _call(fn: Callable[[], R]) -> R:
    return fn()


def _stop(running: dict) -> None:
    for pipe, (_k, process) in running.items():
        process.terminate()
        process.join(timeout=5)
        if process.is_alive():
            process.kill()
            process.join()
        pipe.close()
    running.clear()


HELD = {signal.SIGTERM, signal.SIGINT}     # held back while a worker is forked


def _start(process) -> None:
    """Fork a worker with SIGTERM and SIGINT held back: one arriving during the fork is delivered
    just after it, in the parent's own code (raised inside a library's at-fork hook, the handler's
    exception would be swallowed and the signal lost). The worker lets them through again."""
    if not hasattr(signal, "pthread_sigmask"):
        process.start()
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        process.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _child(fn, item, pipe, workers: int, shared: int) -> None:
    global _child_process
    _child_process = True
    try:
        default_signals_in_child()
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD)
        set_workers(workers, shared)  # the memory limit is shared, not each worker's
        rewatch_in_child()
        packed = Pickled.of((True, fn(item)))
    except BaseException as err:
        try:                        # out of memory pickling the result, say: pickling the error may fail too
            packed = Pickled.of((False, repr(err)))
        except BaseException:       # the parent reads an end of file and runs the job itself, no traceback
            pipe.close()
            return
    try:                            # once written in part, nothing else is (the parent reads an end of file)
        packed.write(pipe)
    except BaseException:
        pass
    finally:
        pipe.close()


_SIZES = struct.Struct("<QQ")     # the pickle's length, the number of buffers beside it


@dataclass(frozen=True)
class Pickled:
    """A value pickled (protocol 5) with its large buffers (numpy arrays) out of band, to `write`
    down a pipe for `receive`: each buffer written from where it lies and read straight into its
    own memory, no copy of it in the pickle (a reading's states, 66 MB in Shadow Era, were copied
    twice by `Connection.send` and three times by `recv`)."""

    head: bytes
    buffers: tuple[memoryview, ...]

    @staticmethod
    def of(value: Any) -> Pickled:
        buffers: list[pickle.PickleBuffer] = []
        head = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
        return Pickled(head, tuple(b.raw() for b in buffers))

    def write(self, pipe: Connection) -> None:
        fd = pipe.fileno()
        sizes = b"".join(struct.pack("<Q", b.nbytes) for b in self.buffers)
        _write_all(fd, _SIZES.pack(len(self.head), len(self.buffers)) + sizes)
        _write_all(fd, self.head)
        for raw in self.buffers:
            _write_all(fd, raw)


def receive(pipe: Connection) -> Any:
    """The value a `Pickled` wrote down `pipe`; EOFError where the pipe ends first, OSError where it
    is closed meanwhile."""
    head_size, count = _SIZES.unpack(_read_exactly(pipe, _SIZES.size))
    sizes = struct.unpack(f"<{count}Q", _read_exactly(pipe, 8 * count))
    head = _read_exactly(pipe, head_size)
    return pickle.loads(head, buffers=[_read_exactly(pipe, size) for size in sizes])


def _write_all(fd: int, data) -> None:
    view = memoryview(data).cast("B")
    while view:
        view = view[os.write(fd, view):]


MAPPED_FROM = 1 << 20      # bytes: a buffer this large is read into a mapping of its own (`_buffer`)


def _read_exactly(pipe: Connection, size: int) -> bytearray | mmap.mmap:
    out = _buffer(size)
    view, got = memoryview(out), 0
    while got < size:
        n = os.readv(pipe.fileno(), [view[got:]])     # fileno() each time: OSError once `close` closed it
        if n == 0:
            raise EOFError(f"the pipe ended after {got:,} of {size:,} bytes")
        got += n
    return out


def _buffer(size: int) -> bytearray | mmap.mmap:
    """Writable room for `size` bytes about to be read: from MAPPED_FROM on, an anonymous mapping
    with its pages made at once (MAP_POPULATE, where the system has it), not a bytearray, which
    fills them with zeros first (a WTactics --printed check receives 300 MB of its readings'
    states: 0.3 -> 0.2 s of CPU)."""
    if size < MAPPED_FROM:
        return bytearray(size)
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_POPULATE", 0)
    return mmap.mmap(-1, size, flags=flags)
