"""What a forked reading spends starting the compiled store, with and without the parent's load ahead.

Run: python -m bench.reading_start [--readings N] [--words W]

In a fresh process each way: the runner imported, then (`ahead`) the compiled store's
model-independent code loaded first (`engines.compiled.ahead.load_ahead`, as the runner does
before the readings fork where it expects them to search in the compiled store) or not
(`each`); then N readings forked as the runner forks them (`forking.fork_map`, each in a child
of its own), each loading what a reading searching in the compiled store loads of that code
itself (Numba, the runtime, the search loop for states of W words, the graph code, the lasso
kernels). Prints the CPU seconds of the parent's load and of each reading's, and their sum:
what a check with N readings pays for it. A warm compile cache is assumed (run it twice).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

PROBE = r"""
import json, sys, time
import verifier.runner  # noqa: F401  (what the parent holds when it forks the readings)
from verifier.forking import fork_map

ahead, readings, words = sys.argv[1] == "ahead", int(sys.argv[2]), int(sys.argv[3])

def start(_k):
    began = time.process_time()
    from verifier.engines.compiled import cache, cycles
    from verifier.engines.compiled.graph import graph_source
    from verifier.engines.compiled.numbagen import RUNTIME, loop_source
    cache.load(RUNTIME)
    cache.load(loop_source(words))
    cache.load(graph_source(words))
    cycles.kernels()
    return time.process_time() - began

began = time.process_time()
if ahead:
    from verifier.engines.compiled.ahead import load_ahead
    load_ahead([words], graphs=True)
parent = time.process_time() - began
print(json.dumps({"parent": parent, "readings": fork_map(start, range(readings), fresh=True)}))
"""


def measure(way: str, readings: int, words: int) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, way, str(readings), str(words)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readings", type=int, default=4)
    parser.add_argument("--words", type=int, default=1)
    args = parser.parse_args(argv)
    print("| way | parent's load | each reading's | all |")
    print("|---|---:|---:|---:|")
    for way in ("each", "ahead"):
        got = measure(way, args.readings, args.words)
        each = " ".join(f"{s:.2f}" for s in got["readings"])
        print(f"| {way} | {got['parent']:.2f} s | {each} s | {got['parent'] + sum(got['readings']):.2f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
