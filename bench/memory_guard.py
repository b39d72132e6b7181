"""How closely the memory guard holds --max-memory: peak resident size against the limit.

Run: python -m bench.memory_guard [--repeat N] [--model MODEL.yaml] [MB ...]

Each case is `python -m verifier lint MODEL --max-memory MB -q` in a fresh process; the peak
resident size is the child's own (`ru_maxrss` from `os.wait4`). The default model
(bench/models/counters400.yaml: three counters 0..400, 64 million states) needs far more than
any of the default limits (100, 150, 200 MB), so every run should end UNKNOWN (exit 3) with
its peak at or under the limit. The table gives the median peak over the repetitions, its
ratio to the limit and the exit codes. Peak sizes hardly depend on the machine's load.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "bench" / "models" / "counters400.yaml"
MB = 2**20


def peak_of(model: Path, limit_mb: int) -> tuple[int, int]:
    """(peak resident bytes, exit code) of one guarded lint."""
    child = subprocess.Popen([sys.executable, "-m", "verifier", "lint", str(model), "--max-memory", str(limit_mb),
                              "-q"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss * 1024, child.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memory_guard", description=__doc__.split("\n")[0])
    parser.add_argument("limits", nargs="*", type=int, default=[100, 150, 200], metavar="MB")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--model", type=Path, default=MODEL)
    args = parser.parse_args(argv)
    print("| --max-memory | median peak | peak / limit | exit codes |")
    print("|---:|---:|---:|---|")
    for limit in args.limits:
        runs = [peak_of(args.model, limit) for _ in range(args.repeat)]
        peak = statistics.median(p for p, _ in runs)
        codes = ", ".join(str(c) for _, c in runs)
        print(f"| {limit} MB | {peak / MB:.0f} MB | {peak / (limit * MB):.2f} | {codes} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
