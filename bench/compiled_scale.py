"""The compiled store at scale: bytes a state, the spill to disk, 10^8 states.

Run: python -m bench.compiled_scale [--clock K] [--max-memory MB] [CASE ...]

Cases: the game-shaped models of bench.compiled (WTactics DRAW_PILE=1, 6.9 M states of one
word; Shadow Era at its printed numbers, 3.2 M states of two words), `wtactics-large` (WTactics
at its printed hand limit and opening hand with DRAW_PILE=5 and ARMY=4: a game-shaped model of
123,530,778 states, 80 levels deep, one word) and `clock`:
bench/models/phils19clock.yaml with a clock of K positions (`--clock`, default 6), whose
states are exactly K times phils19's 18,738,638 (K = 6: 112,431,828, one word of 60 bits).
Each case runs in a fresh process: a 1,000-state search loads the model's module (compiling
it where the cache is cold), then the whole search is measured as `check --store compiled`
runs it: with `--max-memory` the states spill to a file at half the limit and the memory guard
stops the search at 90 % of it (the row then says `stopped`). Reported: states, CPU seconds
of the search (user + system), the process's peak resident size over its size before the
search, per state, the largest anonymous memory seen between two slices (what the memory guard
counts once the states spilled: the file's pages are the page cache's), the arrays' largest
size per state (table included), and whether the states spilled.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ("wtactics-small-deck", "shadow_era", "wtactics-large", "clock")
LARGE = (("DRAW_PILE", 5), ("ARMY", 4))      # wtactics-large: WTactics' parameters beyond the printed ones

PROBE = r"""
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
from verifier.engines.compiled.search import explore_compiled
from verifier.resources import Budget, Stop, StopKind
from verifier.resources.memory import anonymous_bytes, limit_words, memory_limit_bytes, over_soft, resident_bytes
name, clock, mb = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) or None
if name == "clock":
    import tempfile
    from verifier.lang import load_model
    text = open(os.path.join(sys.argv[1], "bench/models/phils19clock.yaml")).read().replace("  K: 3", f"  K: {clock}")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "phils19clock.yaml")
        with open(path, "w") as fh:
            fh.write(text)
        model = load_model(path).instantiate()
elif name == "wtactics-large":
    from bench.compiled import Case
    from bench.compiled_scale import LARGE
    model = Case(name, "wtactics", "literal", LARGE).load()
else:
    from bench.compiled import CASES
    model = next(c for c in CASES if c.name == name).load()
explore_compiled(model, Budget(max_states=1000))
limit = memory_limit_bytes(mb)
stop = Stop(StopKind.MEMORY, "--max-memory", limit_words(mb))
base, anon = resident_bytes(), [anonymous_bytes()]
def tick(states, depth):
    anon[0] = max(anon[0], anonymous_bytes())
    return stop if over_soft(mb) else None
cpu = time.process_time()
space = explore_compiled(model, tick=tick, spill_bytes=None if limit is None else limit // 2)
cpu = time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
n = max(1, len(space))
print(json.dumps({"states": len(space), "words": space.words, "cpu": cpu, "complete": space.complete,
                  "reason": space.reason, "rss_per_state": (peak - base) / n, "arrays_per_state": space.peak_bytes / n,
                  "peak_mb": peak / 2**20, "anon_mb": anon[0] / 2**20, "spilled": space.spilled}))
"""


def run(case: str, clock: int, max_memory: int | None) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT), case, str(clock), str(max_memory or 0)],
                         capture_output=True, text=True, cwd=ROOT, env=dict(os.environ))
    if out.returncode:
        raise SystemExit(f"{case}: the probe failed\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", choices=[[], *CASES], default=[])
    parser.add_argument("--clock", type=int, default=6, help="positions of phils19clock's clock (states: K x 18,738,638)")
    parser.add_argument("--max-memory", type=int, default=None, help="MB, as check --max-memory")
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.1f}; --max-memory {args.max_memory or 'none (the default guard)'}")
    print("| case | states | words | CPU s | states per CPU s | peak RSS MB | peak anonymous MB | RSS B/state"
          " | arrays B/state | spilled | finished |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for case in args.cases or CASES:
        r = run(case, args.clock, args.max_memory)
        name = f"clock K={args.clock}" if case == "clock" else case
        print(f"| {name} | {r['states']:,} | {r['words']} | {r['cpu']:.1f} | {r['states'] / max(r['cpu'], 1e-9) / 1e6:.2f} M"
              f" | {r['peak_mb']:,.0f} | {r['anon_mb']:,.0f} | {r['rss_per_state']:.1f} | {r['arrays_per_state']:.1f}"
              f" | {'yes' if r['spilled'] else 'no'} | {'yes' if r['complete'] else 'stopped: ' + r['reason']} |",
              flush=True)
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
