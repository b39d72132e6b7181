"""Termination on the compiled store's state graph against the python store's (issue 24).

Run: python -m bench.compiled_lasso [CASE ...]

Each case of `bench.compiled` (a shipped game at its printed numbers, enlarged) is checked for
"every game ends" and "every turn ends" by the explicit engine, once with the python store (the
search keeps every edge) and once with the compiled store (the search, then the graph rebuilt in
compiled code, `engines/compiled/graph.py`), each in a fresh process, its module already in the
disk cache (a first, uncounted run compiles it). Figures: CPU seconds (user + system) and peak
resident memory of the whole process (interpreter and imports included), the verdicts (they must
be the same) and the states.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

from bench.compiled import CASES, ROOT

PROBE = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from bench.compiled import CASES
from verifier.engines.explicit import ExplicitEngine
from verifier.ir.props import Terminates
from verifier.resources import Budget
case = next(c for c in CASES if c.name == sys.argv[2])
model = case.load()
claims = [Terminates(id="game-ends", scope="game"), Terminates(id="turn-ends", scope="turn")]
results = ExplicitEngine(store=sys.argv[3]).check(model, claims, Budget())
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"verdicts": [r.verdict.value for r in results], "engines": [r.engine for r in results],
                  "states": results[0].stats.states, "cpu": usage.ru_utime + usage.ru_stime,
                  "peak_mb": usage.ru_maxrss / 1024}))
"""


def probe(case: str, store: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT), case, store], capture_output=True, text=True,
                         cwd=ROOT)
    if out.returncode:
        raise SystemExit(f"{case} {store}: the probe failed\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", choices=[[]] + [c.name for c in CASES], default=[])
    names = parser.parse_args().cases or [c.name for c in CASES]
    print("| case | states | verdicts | python CPU s | python peak MB | compiled CPU s | compiled peak MB |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name in names:
        probe(name, "compiled")                         # compiles the module (not counted)
        mine, ref = probe(name, "compiled"), probe(name, "python")
        if mine["verdicts"] != ref["verdicts"] or mine["states"] != ref["states"]:
            raise SystemExit(f"{name}: the stores disagree: {mine} {ref}")
        print(f"| {name} | {mine['states']:,} | {', '.join(mine['verdicts'])} | {ref['cpu']:.1f} | "
              f"{ref['peak_mb']:.0f} | {mine['cpu']:.1f} | {mine['peak_mb']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
