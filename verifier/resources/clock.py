"""The clocks the run's backstop reads: the machine's monotonic clock, the CPU seconds of a run and
every process it started (`TreeCpuClock`), the wall clock less the time the run waited for a CPU
(`UnstarvedClock`), the default deadline's clock made of the two (`CpuDeadlineClock`), or clocks a
test moves by hand."""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Protocol

HANG_FACTOR = 8.0      # the default deadline's limit against hangs: this many times its CPU seconds, in wall-clock seconds
                       # the run did not spend waiting for a CPU (on two cores at load 11-15 a run's plain wall clock was
                       # up to 6 times its CPU: bench/README.md; the time it waited for a CPU no longer counts)
SAMPLE_SECONDS = 0.5   # a `TreeCpuClock` reads /proc at most this often (wall clock) in each process


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on this clock (only differences mean anything)."""
        ...


@dataclass(frozen=True)
class MonotonicClock:
    """`time.monotonic()`: the clock a real run's backstop keeps to."""

    def now(self) -> float:
        return time.monotonic()


@dataclass
class ManualClock:
    """A clock that moves only when a test advances it (no test sleeps against a real clock)."""

    at: float = 0.0

    def now(self) -> float:
        return self.at

    def advance(self, seconds: float) -> None:
        assert seconds >= 0, "a clock does not go back"
        self.at += seconds


@dataclass
class TreeCpuClock:
    """CPU seconds (user and system) of the process `root` and of every process it started, at any
    depth, running or ended: each running process's own times from /proc/<pid>/stat, plus the times
    of the processes it has reaped (the kernel adds a reaped child's times, and those of the children
    it reaped, to its parent's `cutime`/`cstime`). Read the same from any process of the run (a forked
    worker reads its root's tree), so every process counts against one total. Where /proc is missing,
    this process's own times and its reaped children's (`os.times`), which leaves out running workers.

    /proc is read at most every SAMPLE_SECONDS in each process (the engines look at the backstop
    every few hundred states); a child reaped between two reads can be missed for one sample, never
    counted twice (a parent's times are read before the list of its children)."""

    root: int = field(default_factory=os.getpid)
    _sampled: float = field(default=float("-inf"), repr=False, compare=False)
    _seconds: float = field(default=0.0, repr=False, compare=False)

    def now(self) -> float:
        wall = time.monotonic()
        if wall - self._sampled >= SAMPLE_SECONDS:
            ticks = tree_ticks(self.root)
            seconds = own_times() if ticks is None else ticks / CLOCK_TICKS
            self._sampled, self._seconds = wall, max(self._seconds, seconds)   # a missed child does not turn it back
        return self._seconds


CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def own_times() -> float:
    """This process's CPU seconds and those of the children it has reaped."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def tree_ticks(root: int) -> int | None:
    """Clock ticks of `root` and its descendants (see `TreeCpuClock`); None where /proc cannot say."""
    own = _stat(root)
    if own is None:
        return None
    total, _parent = own
    for pid in _descendants(root):
        stat = _stat(pid)
        if stat is not None:
            total += stat[0]
    return total


def tree_waits(root: int) -> dict[int, int] | None:
    """Nanoseconds each running process of `root`'s tree (`root` and its descendants) has waited,
    runnable, for a CPU (the kernel's run-queue delay, /proc/<pid>/schedstat); None where the
    system does not say (no /proc, or a kernel without scheduler statistics)."""
    own = _run_queue_wait(root)
    if own is None:
        return None
    waits = {root: own}
    for pid in _descendants(root):
        wait = _run_queue_wait(pid)
        if wait is not None:
            waits[pid] = wait
    return waits


def _descendants(root: int) -> list[int]:
    """The running (or not yet reaped) descendants of `root`, at any depth, from /proc (each parent
    listed before its children, and read before them by the callers): only the run's own processes
    read (`_children`), where the kernel lists each one's children; else the parent of every process
    on the machine (`_children_map`)."""
    children = _children if _lists_children() else _children_map().get
    out: list[int] = []
    todo = list(children(root) or ())
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children(pid) or ()
    return out


@cache
def _lists_children() -> bool:
    """Whether /proc lists each thread's children (a kernel built with CONFIG_PROC_CHILDREN)."""
    pid = os.getpid()
    return os.path.exists(f"/proc/{pid}/task/{pid}/children")


def _children(pid: int) -> list[int]:
    """The running (or not yet reaped) children of `pid`, those each of its threads started
    (/proc/<pid>/task/<tid>/children); none once it is gone."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out += map(int, fh.read().split())
        except OSError:                 # the thread ended meanwhile
            continue
    return out


def _run_queue_wait(pid: int) -> int | None:
    """Nanoseconds `pid` has waited on a run queue (the second field of /proc/<pid>/schedstat)."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as fh:
            return int(fh.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _stat(pid: int) -> tuple[int, int] | None:
    """(utime + stime + cutime + cstime, parent pid) of `pid`, or None where it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None


def _children_map() -> dict[int, list[int]]:
    """Parent pid -> the pids of its running (or not yet reaped) children, from /proc."""
    out: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    parent = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            out.setdefault(parent, []).append(int(name))
    return out


@dataclass
class UnstarvedClock:
    """Wall-clock seconds in which the run was not kept waiting for a CPU: between two samples (at most
    every SAMPLE_SECONDS in each process), the wall clock's seconds less the seconds the processes of
    `root`'s tree waited, runnable, on a run queue (`tree_waits`), never below none. A run starved on a
    loaded machine waits for a CPU nearly all the time and this clock hardly moves; a run that hangs
    (it sleeps, on a lock, a pipe, a child that never answers) waits for no CPU and it keeps to the
    wall clock. Where the system does not say (`waits` answers None), the wall clock itself.

    It reads `origin` when made, at `wall`'s time `origin` (the run's start): where that is the process's
    start (`from_process_start`), what the root process waited before is counted too."""

    origin: float
    wall: Clock = field(default_factory=MonotonicClock)
    root: int = field(default_factory=os.getpid)
    waits: Callable[[int], dict[int, int] | None] = tree_waits
    from_process_start: bool = False
    _sampled: float = field(default=0.0, repr=False, compare=False)
    _seconds: float = field(default=0.0, repr=False, compare=False)
    _waited: dict[int, int] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._sampled = self._seconds = self.origin
        if not self.from_process_start:
            self._waited = self.waits(self.root) or {}

    def now(self) -> float:
        wall = self.wall.now()
        if wall - self._sampled >= SAMPLE_SECONDS:
            waits = self.waits(self.root)
            # a process gone since the last sample is not counted for its last part: the clock goes on, as the wall clock
            waited = 0.0 if waits is None else sum(max(0, w - self._waited.get(pid, 0)) for pid, w in waits.items()) / 1e9
            self._seconds += max(0.0, wall - self._sampled - waited)
            self._sampled, self._waited = wall, waits or {}
        return self._seconds

    def real(self) -> bool:
        """Whether it reads the machine's clock and /proc (else a test moves it by hand)."""
        return isinstance(self.wall, MonotonicClock) and self.waits is tree_waits


@dataclass
class CpuDeadlineClock:
    """The default deadline's clock: the CPU seconds the run has spent (`cpu`, from `cpu_origin`), or,
    where it is further on, the seconds on `wall` since `wall_origin` divided by `hang_factor`. A run
    is cut when it has computed for as long as its budget, however much of the machine it got; one that
    waits instead of computing (a hang) is cut at `hang_factor` times the budget in wall clock. On the
    machine `wall` is an `UnstarvedClock`: the time the run waited for a CPU is not waiting of its own,
    so however little of a core a loaded machine gives it, a run that computes is cut by its CPU budget."""

    cpu: Clock
    wall: Clock
    cpu_origin: float
    wall_origin: float
    hang_factor: float = HANG_FACTOR

    @classmethod
    def started(cls, wall_origin: float, from_process_start: bool) -> CpuDeadlineClock:
        """The run's clock from `wall_origin` (on `time.monotonic()`); its CPU counted from the
        process's start where the run is the whole process, else from now."""
        cpu = TreeCpuClock()
        return cls(cpu, UnstarvedClock(wall_origin, from_process_start=from_process_start),
                   0.0 if from_process_start else cpu.now(), wall_origin)

    def now(self) -> float:
        return max(self.cpu_seconds(), self.wall_seconds() / self.hang_factor)

    def cpu_seconds(self) -> float:
        return self.cpu.now() - self.cpu_origin

    def wall_seconds(self) -> float:
        return self.wall.now() - self.wall_origin

    def hung(self) -> bool:
        """Whether the wall clock is the further on of the two (a run that waits more than it computes)."""
        return self.wall_seconds() / self.hang_factor > self.cpu_seconds()

    def real(self) -> bool:
        """Whether it reads the machine's clocks (else a test moves them by hand)."""
        return isinstance(self.wall, MonotonicClock) or (isinstance(self.wall, UnstarvedClock) and self.wall.real())
