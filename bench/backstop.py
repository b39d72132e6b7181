"""The --timeout backstop, measured: every command ends within --timeout plus a tenth of it and one
second (issue #29.5), also on a loaded machine.

Run: python -m bench.backstop [--timeouts 5,15] [--busy K] [--commands C,...] [--model M] [--json FILE]

Each command runs in a fresh process of `python -m verifier` (its start-up counted,
as the backstop counts it) on a shipped model at its printed numbers where the command takes
--printed (runs the default budget does not finish within these timeouts), once per timeout, beside
K busy loops (`python -c 'while 1: pass'`, each ended by its own pid after). A line gives the wall
time against the promise (T + T/10 + 1 s), the CPU time the command and its children used, its exit
code and the load average (one minute) before and after. `check --workers` searches a large model
on a local Dask cluster of two workers (its start and close counted). Exit 0 when every run kept
the promise.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.determinism import busy, load

ROOT = Path(__file__).resolve().parent.parent
MODEL = "models/shadow_era.yaml"
WORKERS_MODEL = "bench/models/phils19.yaml"     # a search a local Dask cluster of two workers does not finish
ALWAYS = 'claims:\n  - id: always\n    says: "Always"\n    invariant: "true"\n'


def commands(model: str, out: Path) -> dict[str, list[str]]:
    """Each command on `model`, writing under `out`."""
    return {
        "check": ["check", model, "--printed", "-q"],
        "check --workers": ["check", WORKERS_MODEL, "-p", str(out / "always.yaml"), "--engine", "explicit",
                            "--workers", "2", "--no-consistency", "-q"],
        "report": ["report", model, "--printed", "-o", str(out / "report")],
        "lint": ["lint", model, "--printed", "-q"],
        "simulate": ["simulate", model, "--printed", "--games", "1000000", "-q"],
        "testgen": ["testgen", model, "--printed", "--output", str(out / "test_gen.py"), "-q"],
        "export": ["export", model, "--to", "dot", "--graph", "states", "--graph-limit", "100000000",
                   "-o", str(out / "states.dot")],
        "import-mermaid": ["import-mermaid", str(out / "chart.md"), "-o", str(out / "chart.yaml")],
        "mutate": ["mutate", model, "--printed", "-q"],
        "diff": ["diff", model, model, "--printed", "--quiet"],
    }


def promise(timeout: float) -> float:
    return timeout + timeout / 10 + 1


@dataclass
class Run:
    command: str
    timeout: float
    exit: int
    wall: float
    cpu: float
    load_before: float
    load_after: float

    @property
    def kept(self) -> bool:
        return self.wall <= promise(self.timeout)

    def line(self) -> str:
        mark = "ok " if self.kept else "LATE"
        return (f"{mark:4} {self.command:15} --timeout {self.timeout:<4g} exit {self.exit}  wall {self.wall:6.2f} s "
                f"(promise {promise(self.timeout):5.2f})  cpu {self.cpu:6.2f} s  "
                f"load {self.load_before:5.2f} -> {self.load_after:5.2f}")


def run(command: str, args: list[str], timeout: float) -> Run:
    before_load, before_cpu = load(), _children_cpu()
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "verifier", *args, "--timeout", f"{timeout:g}"], cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.monotonic() - start
    return Run(command, timeout, done.returncode, wall, _children_cpu() - before_cpu, before_load, load())


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def inputs(model: str, out: Path) -> None:
    """A Mermaid chart of `model`'s phases for import-mermaid, and a claim for the workers' search."""
    (out / "always.yaml").write_text(ALWAYS, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "verifier", "export", model, "--to", "mermaid", "-o", str(out / "chart.md")],
                   cwd=ROOT, stdout=subprocess.DEVNULL, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.backstop", description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeouts", default="5,15", help="timeouts to run each command with (seconds, comma-separated)")
    parser.add_argument("--busy", type=int, default=2, help="busy loops beside each run (default 2)")
    parser.add_argument("--commands", help="a comma-separated subset of: " + ", ".join(commands(MODEL, Path())))
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--json", metavar="FILE", help="write the runs as JSON")
    args = parser.parse_args(argv)
    timeouts = [float(t) for t in args.timeouts.split(",")]
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        inputs(args.model, out)
        table = commands(args.model, out)
        chosen = args.commands.split(",") if args.commands else list(table)
        print(f"{os.cpu_count()} CPUs, {args.busy} busy loops, model {args.model}", flush=True)
        with busy(args.busy):
            for timeout in timeouts:
                for name in chosen:
                    runs.append(run(name, table[name], timeout))
                    print(runs[-1].line(), flush=True)
    late = [r for r in runs if not r.kept]
    print(f"{len(runs) - len(late)} of {len(runs)} runs within --timeout + 10 % + 1 s", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in runs], indent=2) + "\n", encoding="utf-8")
    return 1 if late else 0


if __name__ == "__main__":
    sys.exit(main())
