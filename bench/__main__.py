"""Explicit-engine throughput: states/s and bytes/state on models with a million states or more.

Run: python -m bench [--repeat N] [--spin] [MODEL.yaml ...]
Each model is explored in a fresh process (so memory figures do not mix);
the table gives the median over the repetitions. With --spin, the same model
is exported to Promela and SPIN's exhaustive search (compiled pan, no partial
order reduction) is timed too: both must store the same number of states.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
DEFAULT = [HERE / "models" / "hanoi13.yaml", HERE / "models" / "peterson4.yaml"]

PROBE = r"""
import json, os, sys, time
from verifier.lang import load_model
from verifier.engines.explicit import explore
def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
model = load_model(sys.argv[1]).instantiate()
before = rss()
start = time.perf_counter()
space, _ = explore(model)
seconds = time.perf_counter() - start
print(json.dumps({"states": len(space.states), "transitions": space.transitions, "seconds": seconds,
                  "bytes": rss() - before}))
"""


def measure(path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def measure_spin(path: Path) -> dict:
    """SPIN on the exported model: states stored and seconds of the search (compilation excluded)."""
    from verifier.lang import load_model
    from verifier.report.promela import to_promela

    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "model.pml").write_text(to_promela(load_model(str(path)).instantiate()))
        subprocess.run(["spin", "-a", "model.pml"], cwd=tmp, check=True, capture_output=True)
        subprocess.run(["gcc", "-O2", "-DNOREDUCE", "-DSAFETY", "-DNOCLAIM", "-o", "pan", "pan.c"], cwd=tmp,
                       check=True, capture_output=True)
        start = time.perf_counter()
        out = subprocess.run(["./pan", "-E", "-m100000000", "-w22"], cwd=tmp, check=True, capture_output=True,
                             text=True).stdout
        seconds = time.perf_counter() - start
    return {"states": int(re.search(r"(\d+) states, stored", out).group(1)), "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", type=Path, default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spin", action="store_true", help="also time SPIN on the same model")
    args = parser.parse_args()
    if args.spin and shutil.which("spin") is None:
        parser.error("--spin needs SPIN (apt-get install spin)")
    print(f"{'model':<16}{'states':>12}{'transitions':>14}{'median s':>10}{'states/s':>12}{'bytes/state':>13}")
    for path in args.models:
        runs = [measure(path) for _ in range(args.repeat)]
        secs = statistics.median(r["seconds"] for r in runs)
        states = runs[0]["states"]
        per_state = statistics.median(r["bytes"] for r in runs) / states
        print(f"{path.stem:<16}{states:>12,}{runs[0]['transitions']:>14,}{secs:>10.2f}"
              f"{states / secs:>12,.0f}{per_state:>13,.0f}")
        if args.spin:
            spin = [measure_spin(path) for _ in range(args.repeat)]
            spin_secs = statistics.median(r["seconds"] for r in spin)
            same = "same states" if spin[0]["states"] == states else f"DIFFERENT: {spin[0]['states']:,}"
            print(f"{'  SPIN':<16}{spin[0]['states']:>12,}{'':>14}{spin_secs:>10.2f}"
                  f"{spin[0]['states'] / spin_secs:>12,.0f}  ({same}; turnproof/SPIN time {secs / spin_secs:.1f}x)")


if __name__ == "__main__":
    main()
