"""How much memory a run may use, and how much it uses: the memory guard of the whole run.

The limit is the lowest of: --max-memory, the memory cgroup this process is in (its own
cgroup and every parent, v2 `memory.max` or v1 `memory.limit_in_bytes`, read from
/proc/self/cgroup), RLIMIT_AS, and physical memory; without --max-memory only
MEMORY_SHARE of it is used, leaving room for what the guard does not see (the
interpreter's address space, the kernel). Forked workers share it: what the parent held
when they were forked counts once, the rest is split among them (`set_workers`).

Three guards hold it (`watching` sets the run's limit and starts the third):
- the searches stop on their own, UNKNOWN with the reason, at SOFT_SHARE of the limit or
  before a growth of their tables would pass it (`over_soft`, on the size the watchdog saw
  last: cheap enough to test every few hundred states);
- Z3 is told how much it may still allocate (`bound_z3`, its `memory_max_size`);
- a watchdog looks at the resident size every WATCH_CPU_SECONDS of CPU time (SIGPROF) and
  raises `OutOfMemory` in whatever step passed the limit: loading, code generation,
  analyses, state graphs. The runner turns it into UNKNOWN for what it cut short.

The resident size is the process's whole one, but while a search keeps states spilled to a
file (`hold_spill_file`) only its anonymous and shared memory: the file's pages are the page
cache's, which the system writes back and drops when memory runs short, so the limit bounds
what cannot be dropped (counting them, the spill saved little: reading a spilled state maps
its page and its neighbours).
"""
from __future__ import annotations

import ctypes
import functools
import gc
import os
import resource
import signal
import sys
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from verifier.resources.signals import holds_logging_lock, safe_to_raise

MEMORY_SHARE = 0.7          # default memory guard: this share of the memory available
SOFT_SHARE = 0.9            # searches stop gracefully at this share of the limit
ADDRESS_SHARE = 0.9         # under RLIMIT_AS: the watchdog stops the run at this share of it
WATCH_CPU_SECONDS = 0.005   # CPU time between two looks of the watchdog
DEFER_LOOKS = 200           # looks an OutOfMemory waits for the run's own code (`safe_to_raise`)
Z3_START_BYTES = 32 * 2**20  # what Z3 takes when it starts (its context and tables; 26 MB measured)
Z3_MIN_BYTES = 4 * 2**20     # the least left for a Z3 stage once it has started
CGROUP_ROOT = Path("/sys/fs/cgroup")
MB = 2**20


class OutOfMemory(BaseException):
    """The run's memory limit was passed (a BaseException: no `except Exception` swallows it)."""

    def __init__(self, words: str):
        super().__init__(words)
        self.words = words


class _Run:
    """The run's memory budget as this process sees it."""

    max_memory_mb: int | None = None    # --max-memory of the run being watched
    workers = 1                         # processes sharing the limit (set in forked workers)
    shared = 0                          # bytes the parent held when this worker was forked
    resident = 0                        # the resident size the watchdog saw last
    floor = 0                           # bytes by which a step cut short left the limit raised
    spill_files = 0                     # mappings of spilled states alive (`hold_spill_file`)


_run = _Run()


def set_workers(n: int, shared: int = 0) -> None:
    """This process is one of `n` forked workers that share the memory limit; `shared`: the
    bytes their parent held when it forked them (mapped in each worker, counted once)."""
    _run.workers = max(1, n)
    _run.shared = shared if n > 1 else 0


def memory_limit_bytes(max_memory_mb: int | None = None) -> int | None:
    """This process's share of the memory the run may use (None: nothing known)."""
    mb = max_memory_mb or _run.max_memory_mb
    if mb:
        total = mb * MB
    else:
        available = _available()
        if available is None:
            return None
        total = int(available * MEMORY_SHARE)
    shared = min(_run.shared, total)
    return shared + (total - shared) // _run.workers


def limit_words(max_memory_mb: int | None = None) -> str:
    mb = max_memory_mb or _run.max_memory_mb
    if mb:
        return f"--max-memory {mb} MB reached" + (f" (shared by {_run.workers} workers)" if _run.workers > 1 else "")
    least = _least_available()
    of = f"of the {least[0] // MB:,} MB {least[1]} allows" if least else "of the memory available"
    return f"memory guard reached ({MEMORY_SHARE:.0%} {of}; set --max-memory to choose)"


def over_soft(max_memory_mb: int | None = None, upcoming: int = 0) -> bool:
    """Whether a search should stop now: the resident size is past SOFT_SHARE of the limit, or
    `upcoming` bytes (an allocation about to be made, see `table_growth`) would pass the limit
    (with the watchdog running, the resident size it saw last; otherwise a look at /proc)."""
    limit = memory_limit_bytes(max_memory_mb)
    if limit is None:
        return False
    resident = _run.resident if _watching.active else resident_bytes()
    return resident > limit * SOFT_SHARE or resident + upcoming > limit


def table_growth(table: set | dict) -> int:
    """The bytes the next resize of a large set or dict allocates (twice its table; for a moment
    the old and the new one are both held) once that resize is near (an eighth more entries
    away), else 0: what a search accounts for before it allocates."""
    size = sys.getsizeof(table)
    slots, fill = (size // 16, 0.6) if isinstance(table, set) else (size // 20, 2 / 3)
    return 2 * size if len(table) * 9 // 8 >= slots * fill else 0


def resident_bytes() -> int:
    """What this process holds in memory as the guards count it (see the module docstring)."""
    if _run.spill_files:
        return anonymous_bytes()
    return _statm(1)


def anonymous_bytes() -> int:
    """The process's resident anonymous and shared memory: what the system cannot drop
    (without swap), its file-backed pages left out; the resident size less the file-backed
    pages where /proc/self/status is not there to read."""
    try:
        with open("/proc/self/status") as fh:
            kb = {k: v for k, _sep, v in (line.partition(":") for line in fh) if k in ("RssAnon", "RssShmem")}
        return sum(int(v.split()[0]) for v in kb.values()) * 1024 if kb else _statm(1) - _statm(2)
    except (OSError, ValueError, IndexError):
        return _statm(1) - _statm(2)


def hold_spill_file(mapping: object) -> None:
    """While `mapping` (a memory mapping of a file of spilled states) lives, the resident size
    the guards see is the anonymous memory (`resident_bytes`)."""
    _run.spill_files += 1
    weakref.finalize(mapping, _let_go_spill_file)


def _let_go_spill_file() -> None:
    _run.spill_files -= 1


def address_bytes() -> int:
    return _statm(0)


PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def _open_statm() -> int:
    try:
        return os.open("/proc/self/statm", os.O_RDONLY)
    except OSError:
        return -1


class _Statm:
    """/proc/self/statm, kept open: the watchdog reads it 200 times a CPU second, and opening it
    cost 8 times a read. A forked child opens its own (the parent's names the parent)."""

    fd = _open_statm()

    @classmethod
    def reopen(cls) -> None:
        if cls.fd >= 0:
            os.close(cls.fd)
        cls.fd = _open_statm()


os.register_at_fork(after_in_child=_Statm.reopen)


def _statm(field: int) -> int:
    try:
        return int(os.pread(_Statm.fd, 256, 0).split()[field]) * PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return 0


# ---------------------------------------------------------------- Z3

def bound_z3() -> None:
    """Before a Z3 stage: let Z3 allocate at most what is left of the limit (its global
    `memory_max_size`, in MB; setting it also clears the out-of-memory state an earlier stage
    left). Where too little is left for Z3 to start (Z3_START_BYTES the first time), the stage
    is cut short at once (`OutOfMemory`) rather than after the allocation."""
    limit = memory_limit_bytes()
    if limit is None:
        return
    import z3

    left = limit + _run.floor - resident_bytes()
    started = z3.z3._main_ctx is not None
    if left < (Z3_MIN_BYTES if started else Z3_START_BYTES):
        raise OutOfMemory(limit_words() + ", no room left for Z3")
    z3.set_param("memory_max_size", max(1, (z3.Z3_get_estimated_alloc_size() + left) // MB))


def z3_out_of_memory(text: object) -> str | None:
    """The reason to give when Z3 said `text` because it reached its memory bound, else None."""
    return f"Z3 ran out of memory: {limit_words()}" if "out of memory" in str(text) else None


# ---------------------------------------------------------------- the watchdog

class _Watching:
    active = False
    address_limit: int | None = None
    deferred = 0                    # looks that found the limit passed inside a library's code


_watching = _Watching()


@contextmanager
def watching(max_memory_mb: int | None) -> Iterator[None]:
    """Within the block, the run's memory limit is `max_memory_mb` (None: the default share of
    what is available) and the watchdog runs (main thread, where SIGPROF exists)."""
    previous_mb = _run.max_memory_mb
    _run.max_memory_mb = max_memory_mb
    if max_memory_mb:
        _start_z3()
    started = _start_watchdog()
    try:
        yield
    finally:
        if started:
            _stop_watchdog()
        _run.max_memory_mb = previous_mb


def _start_z3() -> None:
    """Z3 takes tens of MB at once when it starts, in one call no guard can interrupt: under a
    chosen limit it starts first, so that the searches and analyses see what is left."""
    import z3

    z3.main_ctx()


def rewatch_in_child() -> None:
    """In a forked worker: interval timers are not inherited; start the watchdog again."""
    if _watching.active:
        _watching.active = False
        _start_watchdog()


def _start_watchdog() -> bool:
    if _watching.active or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer") or memory_limit_bytes() is None:
        return False
    rlimit = _rlimit_as()
    _watching.address_limit = None if rlimit is None else int(rlimit * ADDRESS_SHARE)
    _watching.active = True
    _run.resident = resident_bytes()
    signal.signal(signal.SIGPROF, _look)
    signal.setitimer(signal.ITIMER_PROF, WATCH_CPU_SECONDS, WATCH_CPU_SECONDS)
    return True


def _stop_watchdog() -> None:
    signal.setitimer(signal.ITIMER_PROF, 0)
    signal.signal(signal.SIGPROF, signal.SIG_DFL)
    _watching.active = False
    _run.floor = 0


def _look(_signum, frame) -> None:
    limit = memory_limit_bytes()
    if limit is None:
        return
    resident = _run.resident = resident_bytes()
    if resident > limit + _run.floor:
        words = limit_words()
    elif _watching.address_limit is not None and address_bytes() > _watching.address_limit:
        words = f"the address-space limit (ulimit -v) of {(_rlimit_as() or 0) // MB:,} MB nearly reached"
    else:
        _watching.deferred = 0
        return
    if not holds_logging_lock() and (safe_to_raise(frame) or _watching.deferred >= DEFER_LOOKS):
        _watching.deferred = 0
        raise OutOfMemory(words)
    _watching.deferred += 1         # in a library's code: at the next look, in all likelihood in ours


def give_back_freed() -> None:
    """Return the free pages of the C heap to the system. glibc keeps freed blocks (numpy arrays
    of up to 32 MB) for reuse; a search that frees its BFS levels would otherwise keep them."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):      # not glibc
        pass


def after_cut() -> None:
    """After the guard cut a step short: give back what the step freed, and let the rest of
    the run (writing what was decided) grow by at most a tenth of the limit from here."""
    _run.floor = 1 << 62            # no second cut while the first one is being cleaned up
    _watching.address_limit = None  # from here, only a failed allocation (MemoryError) stops the run
    gc.collect()
    give_back_freed()
    limit = memory_limit_bytes()
    _run.floor = 0 if limit is None else max(0, resident_bytes() + limit // 10 - limit)


# ---------------------------------------------------------------- what the system allows

def cgroup_limits(proc_cgroup: str = "/proc/self/cgroup", root: Path = CGROUP_ROOT) -> list[int]:
    """The memory limits of this process's own cgroup and of its parents (v2 and v1)."""
    try:
        lines = Path(proc_cgroup).read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        _id, _sep, rest = line.partition(":")
        controllers, _sep, path = rest.partition(":")
        if controllers == "":                                  # v2: 0::/path
            out += _along(root, path, "memory.max")
        elif "memory" in controllers.split(","):               # v1: N:memory:/path
            out += _along(root / "memory", path, "memory.limit_in_bytes")
    return out


def _along(base: Path, path: str, name: str) -> list[int]:
    """`name` in the cgroup at `path` under `base` and in each of its parents (a limit set
    higher up binds too); where the namespace hides the path, `base` itself."""
    parts = [p for p in path.strip("/").split("/") if p]
    out = []
    for k in range(len(parts), -1, -1):
        value = _read_limit(base.joinpath(*parts[:k], name))
        if value is not None:
            out.append(value)
    return out


def _read_limit(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and int(text) < 1 << 60 else None


def _available() -> int | None:
    """The least of what the machine, RLIMIT_AS and the cgroups allow (read once)."""
    least = _least_available()
    return None if least is None else least[0]


@functools.lru_cache(maxsize=1)
def _least_available() -> tuple[int, str] | None:
    """The least of what the machine, RLIMIT_AS and the cgroups allow, and which of them it is."""
    limits = [(x, what) for x, what in ((_physical(), "physical memory"), (_rlimit_as(), "ulimit -v"),
                                         *((c, "the memory cgroup") for c in cgroup_limits())) if x]
    return min(limits) if limits else None


def _physical() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            return int(fh.readline().split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None


def _rlimit_as() -> int | None:
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft
