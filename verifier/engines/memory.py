"""How much memory a run may use, and how much it uses: the memory guard of the engines.

The limit is the lowest of: --max-memory, the memory cgroup this process is in (its own
cgroup and every parent, v2 `memory.max` or v1 `memory.limit_in_bytes`, read from
/proc/self/cgroup), RLIMIT_AS, and physical memory; without --max-memory only
MEMORY_SHARE of it is used, leaving room for what the guard does not see (Z3, the
interpreter). Forked workers share it: each gets its part (`set_workers`), not the whole.
"""
from __future__ import annotations

import os
import resource
from pathlib import Path

MEMORY_SHARE = 0.7          # default memory guard: this share of the memory available
CGROUP_ROOT = Path("/sys/fs/cgroup")
_workers = 1                # processes sharing the limit (set in forked workers)


def set_workers(n: int) -> None:
    """This process is one of `n` that share the memory limit (a forked worker)."""
    global _workers
    _workers = max(1, n)


def memory_limit_bytes(max_memory_mb: int | None = None) -> int | None:
    """This process's share of the memory the run may use (None: nothing known)."""
    if max_memory_mb:
        return max_memory_mb * 2**20 // _workers
    limits = [x for x in (_physical(), _rlimit_as(), *cgroup_limits()) if x]
    return int(min(limits) * MEMORY_SHARE) // _workers if limits else None


def limit_words(max_memory_mb: int | None) -> str:
    if max_memory_mb:
        return f"--max-memory {max_memory_mb} MB reached" + (f" (shared by {_workers} workers)" if _workers > 1 else "")
    return f"memory guard reached ({MEMORY_SHARE:.0%} of the memory available; set --max-memory to choose)"


def resident_bytes() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


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


def _physical() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            return int(fh.readline().split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None


def _rlimit_as() -> int | None:
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft
