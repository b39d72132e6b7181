"""The compiled store (`--store compiled`) against the python and compact stores and SPIN:
states per CPU second of the exhaustive search, compilation apart.

Run: python -m bench.compiled [--repeat N] [--no-spin] [CASE ...]

Each case is one concrete, game-shaped model (the shipped games at their printed numbers:
deep, with narrow BFS levels) searched without claims (deadlocks are detected in passing,
as SPIN's invalid end states are). Every figure is CPU time (user + system) of a fresh
process, so that the load of a shared machine counts less than in wall time:

- python, compact: the search in that store (`explicit.explore`, `compact.explore_compact`);
- compiled: the search alone (a second search in the process that compiled it), under the
  compiled store's state cap as a check runs it (the visited table's growth follows the cap);
  cold: generating and compiling the model's module with an empty cache folder (the
  model-independent loop and helpers included, compiled once per machine); warm: a new
  process loading it from the cache (Numba's import included);
- SPIN: pan compiled with -O2 -DNOREDUCE -DSAFETY -DNOCLAIM, depth-first (-DSC, its stack
  cycled to disk) and breadth-first (-DBFS, which refuses the exporter's hidden temporaries:
  they are made visible and zeroed after each step), -w sized to the states; gcc's time apart.

The first table gives the median over the repetitions of each store and the compiled store's
states per CPU second; the second SPIN's (its count must be the same; a model the Promela
exporter cannot write, such as one with several initial states, is named and skipped) and the
compiled store's speed over SPIN's better configuration (SPIN's CPU seconds over its own).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from verifier.report.promela import PromelaError, to_promela

ROOT = Path(__file__).resolve().parent.parent
SPIN_STACK = 1_000_000      # pan -m for the depth-first search: frames in memory, -DSC cycles the rest to disk


@dataclass(frozen=True)
class Case:
    name: str
    game: str
    variant: str
    params: tuple[tuple[str, int], ...]      # beyond the printed values

    def load(self):
        from verifier.lang import load_model
        path = str(ROOT / "models" / f"{self.game}.yaml")
        printed = dict(load_model(path).printed or ())
        return load_model(path, {**printed, **dict(self.params)}, variant=self.variant).instantiate()


CASES = [Case("alice", "alice", "literal", (("DECK", 1),)),                                  # 1.9 M states
         Case("aeons_end", "aeons_end", "flip_on_draw", (("DECK", 1), ("GAINS", 1))),          # 6.5 M
         Case("wtactics-small-deck", "wtactics", "literal", (("DRAW_PILE", 1),)),              # 6.9 M
         Case("shadow_era", "shadow_era", "literal", ())]                                      # 3.2 M, two words

PROBE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from bench.compiled import CASES
case = next(c for c in CASES if c.name == sys.argv[2])
store = sys.argv[3]
model = case.load()
def timed(search):
    cpu = time.process_time()
    space = search()
    return space, time.process_time() - cpu
if store == "python":
    from verifier.engines.explicit import explore
    space, cpu = timed(lambda: explore(model))
    first = cpu
elif store == "compact":
    from verifier.engines.compact import explore_compact
    space, cpu = timed(lambda: explore_compact(model))
    first = cpu
else:
    from verifier.engines.compiled.search import explore_compiled
    from verifier.portfolio.stores import COMPILED_STATES
    from verifier.resources import Budget
    capped = Budget(max_states=COMPILED_STATES)
    space, first = timed(lambda: explore_compiled(model, capped))
    space, cpu = timed(lambda: explore_compiled(model, capped))
print(json.dumps({"states": len(space), "transitions": space.transitions, "cpu": cpu, "first": first,
                  "complete": space.complete}))
"""


def probe(case: Case, store: str, cache: str | None = None) -> dict:
    env = dict(os.environ)
    if cache is not None:
        env["TURNPROOF_CACHE_DIR"] = cache
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT), case.name, store], capture_output=True, text=True,
                         env=env, cwd=ROOT)
    if out.returncode:
        raise SystemExit(f"{case.name} {store}: the probe failed\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not result["complete"]:
        raise SystemExit(f"{case.name} {store}: the search did not finish")
    return result


def compiled(case: Case) -> dict:
    """The compiled store: search CPU, cold compile and warm start (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="turnproof-bench-cache-") as cache:
        cold = probe(case, "compiled", cache)
        warm = probe(case, "compiled", cache)
    search = statistics.median([cold["cpu"], warm["cpu"]])
    return {"states": cold["states"], "cpu": search, "cold": cold["first"] - cold["cpu"],
            "warm": warm["first"] - warm["cpu"]}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def spin(case: Case, states: int, bfs: bool) -> dict:
    """SPIN's exhaustive search of the exported model: states, pan's CPU, gcc's CPU apart."""
    text = to_promela(case.load())
    if bfs:
        text = _visible_temporaries(text)
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "model.pml").write_text(text)
        subprocess.run(["spin", "-a", "-o2", "model.pml"], cwd=tmp, check=True, capture_output=True)
        flags = ["-O2", "-DNOREDUCE", "-DSAFETY", "-DNOCLAIM"] + (["-DBFS"] if bfs else ["-DSC"])
        before = children_cpu()
        subprocess.run(["gcc", *flags, "-o", "pan", "pan.c"], cwd=tmp, check=True, capture_output=True)
        gcc = children_cpu() - before
        width = max(18, math.ceil(math.log2(states)) + 1)
        before = children_cpu()
        run = subprocess.run(["./pan", "-E", f"-w{width}"] + ([] if bfs else [f"-m{SPIN_STACK}"]), cwd=tmp,
                             check=True, capture_output=True, text=True)
        cpu = children_cpu() - before
    if "max search depth too small" in run.stdout:
        raise SystemExit(f"SPIN's depth-first search of {case.name} was cut short at -m{SPIN_STACK:,}")
    found = re.search(r"(\d+) states, stored", run.stdout)
    if found is None:
        raise SystemExit(f"no state count in SPIN's output:\n{run.stdout[-2000:]}")
    return {"states": int(found.group(1)), "cpu": cpu, "gcc": gcc}


def _visible_temporaries(text: str) -> str:
    """The exported program for pan -DBFS, which refuses `hidden` variables: the exporter's
    temporaries become ordinary globals, set back to 0 at the end of each step so that they
    add no state (the same count; 8 bytes more a state vector per effect)."""
    temps = re.findall(r"^hidden int (\w+);$", text, flags=re.M)
    reset = "".join(f"; {t} = 0" for t in temps)
    text = re.sub(r"^hidden int ", "int ", text, flags=re.M)
    return re.sub(r" \}  /\* ", f"{reset} }}  /* ", text)


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", choices=[[]] + [c.name for c in CASES], default=[])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-spin", action="store_true", help="leave SPIN out")
    parser.add_argument("--compiled-only", action="store_true",
                        help="leave the python and compact stores out (their columns show -)")
    args = parser.parse_args()
    use_spin = not args.no_spin
    if use_spin and (shutil.which("spin") is None or shutil.which("gcc") is None):
        parser.error("SPIN comparisons need spin and gcc (apt-get install spin gcc), or --no-spin")
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print("CPU seconds (median of the repetitions); cold and warm: compiling, loading the compiled store's code")
    print(f"{'case':<20}{'states':>11}{'python':>9}{'compact':>9}{'compiled':>9}{'cold':>7}{'warm':>7}"
          f"{'states/CPU s':>14}")
    spins = []
    for case in CASES:
        if args.cases and case.name not in args.cases:
            continue
        mine = [compiled(case) for _ in range(args.repeat)]
        states = mine[0]["states"]
        others = ["-", "-"]
        if not args.compiled_only:
            python = [probe(case, "python") for _ in range(args.repeat)]
            compact = [probe(case, "compact") for _ in range(args.repeat)]
            assert {r["states"] for r in python + compact + mine} == {states}, "the stores count alike"
            others = [f"{median(python, 'cpu'):.2f}", f"{median(compact, 'cpu'):.2f}"]
        cpu = median(mine, "cpu")
        print(f"{case.name:<20}{states:>11,}{others[0]:>9}{others[1]:>9}"
              f"{cpu:>9.2f}{median(mine, 'cold'):>7.1f}{median(mine, 'warm'):>7.2f}{states / cpu:>14,.0f}", flush=True)
        spins.append((case, states, cpu))
    if not use_spin:
        return
    print(f"\n{'case':<20}{'SPIN dfs':>10}{'SPIN bfs':>10}{'gcc':>6}{'SPIN states/CPU s':>19}{'compiled / SPIN':>17}")
    for case, states, cpu in spins:
        try:
            to_promela(case.load())
        except PromelaError as err:
            print(f"{case.name:<20}  not exported: {err}", flush=True)
            continue
        dfs = [spin(case, states, bfs=False) for _ in range(args.repeat)]
        bfs = [spin(case, states, bfs=True) for _ in range(args.repeat)]
        for r in dfs + bfs:
            if r["states"] != states:
                raise SystemExit(f"{case.name}: SPIN stored {r['states']:,} states, turnproof {states:,}")
        best = min(median(dfs, "cpu"), median(bfs, "cpu"))
        print(f"{case.name:<20}{median(dfs, 'cpu'):>10.2f}{median(bfs, 'cpu'):>10.2f}{median(dfs + bfs, 'gcc'):>6.1f}"
              f"{states / best:>19,.0f}{best / cpu:>16.2f}x", flush=True)


if __name__ == "__main__":
    main()
