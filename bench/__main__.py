"""Explicit-engine throughput: states/s and bytes/state on models with a million states or more.

Run: python -m bench [--repeat N] [--spin] [--store compact|compiled] [--workers N] [--printed] [MODEL.yaml ...]
Each model is explored in a fresh process (so memory figures do not mix);
the table gives the median over the repetitions of the whole exploration's
time (with --workers, starting the local cluster included), of the search
alone (the engine's own clock: the BFS levels, without the cluster start),
the CPU seconds of the exploration (with --workers, the client's process
and every worker's since its partition started: on a loaded machine, their
ratio to one process's CPU seconds bounds what more cores can give), the
resident bytes per stored state (growth over the search) and the peak
resident memory of the process. --store compact times the compact store
(`verifier/engines/compact.py`), --workers N the compact search across N
local Dask worker processes (with --store compiled, each expanding by the
model's compiled code): then bytes/state is the workers' growth added
up, "worker MB" the largest worker's peak and "client MB" the peak of the
process that starts the cluster and the levels. The python store and the
workers store one state per orbit where the model declares `symmetry:
players`, as the engine searches it; the compact store in one process never. With --spin, the same model
is exported to Promela and SPIN's exhaustive search (compiled pan, no partial
order reduction, its depth-first stack cycled to disk: -DSC) is timed too, by
pan's own clock: both must store the same number of states. With --printed, each
model is explored at the values its rules print (its `printed:` map).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
SPIN_STACK = 1_000_000      # pan -m: the depth-first stack frames held in memory; -DSC cycles the rest to disk
SPIN_FLAGS = ["-O2", "-DNOREDUCE", "-DSAFETY", "-DNOCLAIM", "-DSC"]
DEFAULT = [HERE / "models" / "hanoi13.yaml", HERE / "models" / "peterson4.yaml"]

PROBE = r"""
import json, os, resource, sys, time
from verifier.lang import load_model
from verifier.resources import Budget
from verifier.engines.explicit import explore
from verifier.engines.compact import explore_compact
from verifier.engines.distributed import explore_distributed
def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
if __name__ == "__main__":
    model = load_model(sys.argv[1])
    if sys.argv[4] == "printed":
        model = load_model(sys.argv[1], dict(model.printed))
    model = model.instantiate()
    store, workers = sys.argv[2], int(sys.argv[3])
    before, cpu = rss(), time.process_time()
    start = time.perf_counter()
    if workers > 1:
        space = explore_distributed(model, Budget(), None, [], [], None, workers, compiled=store == "compiled",
                                    symmetric=True)
    elif store == "compact":
        space = explore_compact(model)
    else:
        space = explore(model, symmetric=True)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    growth, peak = rss() - before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    client = peak
    usage = getattr(space, "worker_usage", None)      # the compact and distributed stores only
    if usage:
        growth, peak = sum(u[0] for u in usage), max(u[1] for u in usage)
        cpu += sum(u[2] for u in usage)
    print(json.dumps({"states": len(space), "transitions": space.transitions, "seconds": seconds,
                      "search": space.seconds or seconds, "cpu": cpu, "bytes": growth, "peak": peak,
                      "client": client}))
"""


def measure(path: Path, store: str = "python", workers: int = 1, printed: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp, "probe.py")            # a file, so that Dask's worker processes can start
        probe.write_text(PROBE)
        source = str(HERE.parent)                # this checkout's verifier, also in Dask's worker processes
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))}
        out = subprocess.run([sys.executable, str(probe), str(path), store, str(workers),
                              "printed" if printed else "given"], capture_output=True,
                             text=True, check=True, cwd=Path.cwd(), env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_spin(path: Path) -> dict:
    """SPIN on the exported model: states stored, pan's own seconds of the search (compilation
    excluded), its CPU seconds and peak resident memory (`/usr/bin/time`)."""
    from verifier.lang import load_model
    from verifier.report.promela import to_promela

    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "model.pml").write_text(to_promela(load_model(str(path)).instantiate()))
        subprocess.run(["spin", "-a", "model.pml"], cwd=tmp, check=True, capture_output=True)
        subprocess.run(["gcc", *SPIN_FLAGS, "-o", "pan", "pan.c"], cwd=tmp, check=True, capture_output=True)
        start = time.perf_counter()
        run = subprocess.run(["/usr/bin/time", "-f", "peak %M cpu %U %S", "./pan", "-E", f"-m{SPIN_STACK}", "-w26"],
                             cwd=tmp, check=True, capture_output=True, text=True)
        seconds = time.perf_counter() - start
    if "max search depth too small" in run.stdout:
        raise SystemExit(f"SPIN's depth-first search of {path.name} was cut short at -m{SPIN_STACK:,}: "
                         "its count is incomplete")
    own = re.search(r"pan: elapsed time ([0-9.e+]+) seconds", run.stdout)
    if own and float(own.group(1)) > 0:         # pan's clock, when it saw the search take any time
        seconds = float(own.group(1))
    user, system = _figure(r"cpu ([0-9.]+)", run.stderr), _figure(r"cpu [0-9.]+ ([0-9.]+)", run.stderr)
    return {"states": int(_figure(r"(\d+) states, stored", run.stdout)), "seconds": seconds,
            "peak": int(_figure(r"peak (\d+)", run.stderr)) * 1024, "cpu": user + system}


def _figure(pattern: str, text: str) -> float:
    """The number `pattern` finds in SPIN's output (or /usr/bin/time's)."""
    found = re.search(pattern, text)
    if found is None:
        raise SystemExit(f"no '{pattern}' in SPIN's output:\n{text[-2000:]}")
    return float(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", type=Path, default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spin", action="store_true", help="also time SPIN on the same model")
    parser.add_argument("--store", choices=("python", "compact", "compiled"), default="python",
                        help="the explicit engine's store (default python, the reference; compiled: with --workers)")
    parser.add_argument("--workers", type=int, default=1, help="compact search across N Dask worker processes")
    parser.add_argument("--printed", action="store_true", help="explore each model at its printed values")
    args = parser.parse_args()
    if args.spin and shutil.which("spin") is None:
        parser.error("--spin needs SPIN (apt-get install spin)")
    if args.store == "compiled" and args.workers < 2:
        parser.error("--store compiled needs --workers N (python -m bench.compiled times the compiled store alone)")
    if args.spin and args.printed:
        parser.error("--spin exports each model at its given values: leave out --printed")
    workers = args.workers > 1
    print(f"{'model':<16}{'states':>12}{'transitions':>14}{'median s':>10}{'search s':>10}{'states/s':>12}"
          f"{'CPU s':>9}{'bytes/state':>13}" + (f"{'worker MB':>11}{'client MB':>11}" if workers else f"{'peak MB':>9}"))
    for path in args.models:
        runs = [measure(path, args.store, args.workers, args.printed) for _ in range(args.repeat)]
        secs = statistics.median(r["seconds"] for r in runs)
        search = statistics.median(r["search"] for r in runs)
        states = runs[0]["states"]
        per_state = statistics.median(r["bytes"] for r in runs) / states
        peak = statistics.median(r["peak"] for r in runs) / 2**20
        client = statistics.median(r["client"] for r in runs) / 2**20
        cpu = statistics.median(r["cpu"] for r in runs)
        print(f"{path.stem:<16}{states:>12,}{runs[0]['transitions']:>14,}{secs:>10.2f}{search:>10.2f}"
              f"{states / search:>12,.0f}{cpu:>9.2f}{per_state:>13,.1f}"
              + (f"{peak:>11,.0f}{client:>11,.0f}" if workers else f"{peak:>9,.0f}"), flush=True)
        if args.spin:
            spin = [measure_spin(path) for _ in range(args.repeat)]
            spin_secs = statistics.median(r["seconds"] for r in spin)
            spin_peak = statistics.median(r["peak"] for r in spin) / 2**20
            spin_cpu = statistics.median(r["cpu"] for r in spin)
            same = "same states" if spin[0]["states"] == states else f"DIFFERENT: {spin[0]['states']:,}"
            print(f"{'  SPIN':<16}{spin[0]['states']:>12,}{'':>14}{spin_secs:>10.2f}{spin_secs:>10.2f}"
                  f"{spin[0]['states'] / spin_secs:>12,.0f}{spin_cpu:>9.2f}{'':>13}{spin_peak:>9,.0f}"
                  f"  ({same}; turnproof/SPIN time {secs / spin_secs:.2f}x)", flush=True)


if __name__ == "__main__":
    main()
