"""Where the CPU of a `check`'s parent process goes, without a profiler.

Run: python -m bench.parent_cpu MODEL [CHECK OPTION ...]

Runs `check MODEL OPTIONS -q -f json -o <temporary file>` in this process as `python -m verifier`
runs it, with the parent's stages (the runner's steps before the readings fork and after they
return) timed on `time.process_time()` (this process's CPU only) and the garbage collector's passes
timed through `gc.callbacks`; then prints each stage's CPU seconds and calls, and the parent's and
its reaped children's CPU (`getrusage`). cProfile's own cost inflates Python-heavy stages (it put
1.3 s in Shadow Era's `json.dumps`, which takes 0.09 s): compare these rows with `/usr/bin/time`.
A stage's time includes the stages it calls (`check_loaded` holds `fork_map`, which holds `receive`).
"""
from __future__ import annotations

import functools
import gc
import importlib
import os
import resource
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

# (module, attribute): a function, or Class.method
STAGES = [("verifier.runner", "resolve_derived"), ("verifier.runner", "load_variants"),
          ("verifier.runner", "claims_for"), ("verifier.runner", "_ask_ahead"),
          ("verifier.runner", "_compiled_ahead"), ("verifier.runner", "fork_map"),
          ("verifier.forking", "receive"), ("verifier.analysis", "across_readings"),
          ("verifier.analysis", "behaviour_findings"), ("verifier.runner", "check_loaded"),
          ("verifier.runner", "check_model"), ("verifier.report.json_out", "runs_json"), ("json", "dumps")]

seconds: dict[str, float] = defaultdict(float)
calls: dict[str, int] = defaultdict(int)


def timed(module: str, attribute: str) -> None:
    """Replace the function with one that adds its CPU seconds to its row."""
    owner = importlib.import_module(module)
    *classes, name = attribute.split(".")
    for cls in classes:
        owner = getattr(owner, cls)
    fn, row = getattr(owner, name), f"{module.rsplit('.', 1)[-1]}.{attribute}"

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            seconds[row] += time.process_time() - start
            calls[row] += 1

    setattr(owner, name, wrapper)


def collector_timed() -> None:
    started: list[float] = []

    def watch(phase: str, _info: dict) -> None:
        if phase == "start":
            started.append(time.process_time())
        elif started:
            seconds["the collector's passes"] += time.process_time() - started.pop()
            calls["the collector's passes"] += 1

    gc.callbacks.append(watch)


def main(argv: list[str]) -> int:
    from verifier.cli import main as cli

    for module, attribute in STAGES:
        timed(module, attribute)
    collector_timed()
    with tempfile.TemporaryDirectory() as tmp:
        code = cli(["check", *argv, "-q", "-f", "json", "-o", str(Path(tmp) / "check.json")])
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"exit {code}; parent {own.ru_utime + own.ru_stime:.2f} s of CPU, children "
          f"{children.ru_utime + children.ru_stime:.2f} s; load {os.getloadavg()[0]:.1f}")
    for row, spent in seconds.items():
        print(f"  {row:42s} {spent:7.2f} s  x{calls[row]}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
