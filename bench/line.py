"""The new user's large WTactics line: CPU, exit and what it decided, per run.

Run: python -m bench.line [--repeat N] [CHECK OPTION ...]

Runs `python -m verifier check models/wtactics.yaml -D HAND_LIMIT=7 -D OPENING=7 -D DECK=20
-f json -o <temporary file>` (and any further check options) in a fresh process N times, and
prints for each run the load average at its start, its CPU seconds (user + system, its forked
readings included: `getrusage` of the reaped children), its exit code, the verdicts of its claims
by method, the claims left UNKNOWN (by id and reading), whether every reading's consistency
analyses completed, and whether the run's JSON equals the first run's apart from `seconds`
(same input, same verdict). The line is issue #24's: every claim of every reading answered, far
below the default CPU budget of 600 s (bench/README.md, "The new user's large WTactics line").
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.determinism import children_cpu, without_timings

LINE = ["models/wtactics.yaml", "-D", "HAND_LIMIT=7", "-D", "OPENING=7", "-D", "DECK=20"]
ROOT = Path(__file__).resolve().parent.parent


def run_once(options: list[str]) -> tuple[float, int, dict]:
    """One check in a fresh process: its CPU seconds, exit code and JSON."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "line.json"
        before = children_cpu()
        code = subprocess.run([sys.executable, "-m", "verifier", "check", *LINE, *options, "-q", "-f", "json",
                               "-o", str(out)], cwd=ROOT, check=False).returncode
        return children_cpu() - before, code, json.loads(out.read_text(encoding="utf-8"))


def summary(found: dict) -> str:
    methods = collections.Counter(f"{r['verdict']} {r['engine']}" for r in found["results"])
    unknown = [f"{r['id']} ({r['variant']})" for r in found["results"] if r["verdict"] == "UNKNOWN"]
    analysed = all(a["complete"] for a in found["analyses"])
    return (f"{len(found['results'])} claims: " + ", ".join(f"{n} {k}" for k, n in sorted(methods.items()))
            + f"; UNKNOWN: {', '.join(unknown) or 'none'}; analyses complete in every reading: {analysed}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    args, options = parser.parse_known_args(argv)
    first = None
    for k in range(args.repeat):
        load = os.getloadavg()[0]
        cpu, code, found = run_once(options)
        same = "" if first is None else f"; JSON equal to run 1 apart from seconds: {without_timings(found) == first}"
        first = without_timings(found) if first is None else first
        print(f"run {k + 1}: load {load:.1f}, CPU {cpu:.1f} s, exit {code}; {summary(found)}{same}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
