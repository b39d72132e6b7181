"""Same input, same verdict under load (issue #25): the measurements, one command.

Run: python -m bench.determinism [--games G,...] [--diffs N] [--together] [--busy K] [--timeout S] [--skip PART,...]
                                 [--json FILE]

Four parts, one after the other, each in fresh processes of `python -m verifier`:

- `diffs`: N runs of `diff models/<game>.yaml models/<game>.yaml --quiet` per game beside K busy
  loops (`python -c 'while 1: pass'`); every run must exit 0 (a model compared with itself).
- `main-job`: the README's main job, `report models/*.yaml -o DIR --gate`, twice beside the busy
  loops, into two temporary folders (never reports/ of the checkout); both must exit 0 and the
  two folders must hold the same files with the same bytes.
- `printed`: each game at its printed numbers with every reading (`check models/<game>.yaml
  --printed --format json`), once without busy loops and once beside them; the two JSON documents
  must be equal apart from timing fields (`seconds`), and so must their exit codes.
- `committed`: the main job once beside the busy loops, into a temporary folder; it must exit 0 and
  hold the committed `reports/` byte for byte (made on another machine at another load: `.ci/run`
  runs this part, with `--together` diffs, on every change).

`--together` starts each round of diffs (one per game) at once, so that they load the machine
beside the busy loops and one another.

Each line says the load average (one minute) when the run started and ended, the wall time and the
CPU seconds of the command and every process it started (reaped). `--timeout S` is handed to every
command (default: the tool's own default deadline, 600 s of CPU, with a wall-clock limit eight
times as long against hangs only, so a loaded machine slows a run but does not cut it).
The machine's own load counts: on a shared machine "without busy loops" is not load 0, and the
lines say what the load was. Exit 0 when every check held, 1 when one did not.
"""
from __future__ import annotations

import argparse
import filecmp
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAMES = ("aeons_end", "wtactics", "alpha_clash", "shadow_era", "alice")
TIMING_KEYS = frozenset({"seconds"})


@dataclass
class Run:
    part: str
    what: str
    exit: int
    seconds: float
    load_before: float
    load_after: float
    ok: bool
    note: str = ""
    cpu: float = 0.0          # CPU seconds (user + system) of the command and the processes it started

    def line(self) -> str:
        mark = "ok " if self.ok else "BAD"
        return (f"{mark} {self.part:8} {self.what:40} exit {self.exit}  {self.seconds:7.1f} s  {self.cpu:6.1f} s CPU  "
                f"load {self.load_before:5.2f} -> {self.load_after:5.2f}" + (f"  {self.note}" if self.note else ""))


def load() -> float:
    return os.getloadavg()[0]


@contextmanager
def busy(loops: int) -> Iterator[None]:
    """`loops` busy loops beside what runs inside (each ended by its own pid after)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(loops)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


TIMEOUT: list[str] = []     # ["--timeout", S] where given


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def verifier(*args: str) -> tuple[int, float, float, float, float]:
    """`python -m verifier ARGS` in the checkout: (exit code, seconds, load before, load after, CPU
    seconds: the command's and its children's, counted when it is reaped)."""
    before, start, cpu = load(), time.monotonic(), children_cpu()
    done = subprocess.run([sys.executable, "-m", "verifier", *args, *TIMEOUT], cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, check=False)
    return done.returncode, time.monotonic() - start, before, load(), children_cpu() - cpu


def diffs(games: list[str], runs: int) -> list[Run]:
    out = []
    for game in games:
        for k in range(runs):
            model = f"models/{game}.yaml"
            code, secs, before, after, cpu = verifier("diff", model, model, "--quiet")
            out.append(Run("diffs", f"{game} #{k + 1}", code, secs, before, after, code == 0, cpu=cpu))
            print(out[-1].line(), flush=True)
    return out


def diffs_together(games: list[str], runs: int) -> list[Run]:
    """Each round: every game's diff with itself started at once (their CPU is not told apart)."""
    out = []
    for k in range(runs):
        before, start, cpu = load(), time.monotonic(), children_cpu()
        procs = {game: subprocess.Popen([sys.executable, "-m", "verifier", "diff", f"models/{game}.yaml",
                                         f"models/{game}.yaml", "--quiet", *TIMEOUT], cwd=ROOT,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for game in games}
        codes = {game: proc.wait() for game, proc in procs.items()}
        secs, after, spent = time.monotonic() - start, load(), children_cpu() - cpu
        for game, code in codes.items():
            out.append(Run("diffs", f"{game} #{k + 1} (together)", code, secs, before, after, code == 0, cpu=spent))
            print(out[-1].line(), flush=True)
    return out


def main_job(tmp: Path) -> list[Run]:
    out, folders = [], []
    models = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "models").glob("*.yaml"))
    for k in (1, 2):
        folder = tmp / f"report-{k}"
        code, secs, before, after, cpu = verifier("report", *models, "-o", str(folder), "--gate")
        folders.append(folder)
        out.append(Run("main-job", f"report models/*.yaml --gate #{k}", code, secs, before, after, code == 0, cpu=cpu))
        print(out[-1].line(), flush=True)
    differing = _tree_differences(folders[0], folders[1])
    out.append(Run("main-job", "the two report folders", 0, 0.0, load(), load(), not differing,
                   "identical bytes" if not differing else "differ: " + ", ".join(differing[:10])))
    print(out[-1].line(), flush=True)
    return out


def committed(tmp: Path) -> list[Run]:
    models = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "models").glob("*.yaml"))
    folder = tmp / "report-committed"
    code, secs, before, after, cpu = verifier("report", *models, "-o", str(folder), "--gate")
    differing = _tree_differences(ROOT / "reports", folder) if code == 0 else []
    out = [Run("committed", "report models/*.yaml --gate", code, secs, before, after, code == 0, cpu=cpu),
           Run("committed", "against the committed reports/", 0, 0.0, load(), load(), code == 0 and not differing,
               "identical bytes" if code == 0 and not differing else "differ: " + ", ".join(differing[:10]))]
    for run in out:
        print(run.line(), flush=True)
    return out


def _tree_differences(a: Path, b: Path) -> list[str]:
    files_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    missing = sorted(str(p) for p in files_a ^ files_b)
    changed = sorted(str(p) for p in files_a & files_b if not filecmp.cmp(a / p, b / p, shallow=False))
    return missing + changed


def printed(games: list[str], loops: int, tmp: Path) -> list[Run]:
    out = []
    for game in games:
        docs, codes = [], []
        for label, extra in (("without busy loops", 0), (f"beside {loops} busy loops", loops)):
            target = tmp / f"{game}-{extra}.json"
            with busy(extra):
                code, secs, before, after, cpu = verifier("check", f"models/{game}.yaml", "--printed", "--quiet",
                                                          "--format", "json", "-o", str(target))
            docs.append(without_timings(json.loads(target.read_text())) if target.exists() else None)
            codes.append(code)
            out.append(Run("printed", f"{game} {label}", code, secs, before, after, code in (0, 1, 3), cpu=cpu))
            print(out[-1].line(), flush=True)
        same = docs[0] is not None and docs[0] == docs[1] and codes[0] == codes[1]
        out.append(Run("printed", f"{game}: the two JSON documents", 0, 0.0, load(), load(), same,
                       "equal apart from seconds" if same else "differ: " + ", ".join(_paths_differing(*docs)[:10])))
        print(out[-1].line(), flush=True)
    return out


def without_timings(doc):
    if isinstance(doc, dict):
        return {k: without_timings(v) for k, v in doc.items() if k not in TIMING_KEYS}
    if isinstance(doc, list):
        return [without_timings(v) for v in doc]
    return doc


def _paths_differing(a, b, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(a.keys() | b.keys()) for d in _paths_differing(a.get(k), b.get(k), f"{path}/{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _paths_differing(x, y, f"{path}[{i}]")]
    return [] if a == b else [path or "/"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.determinism", description=__doc__.splitlines()[0])
    ap.add_argument("--games", default=",".join(GAMES), help="comma-separated games (models/<game>.yaml)")
    ap.add_argument("--diffs", type=int, default=10, help="runs of diff per game (default 10)")
    ap.add_argument("--together", action="store_true", help="start each round of diffs (one per game) at once")
    ap.add_argument("--busy", type=int, default=2, help="busy loops beside the loaded runs (default 2)")
    ap.add_argument("--timeout", help="--timeout for every command (default: the tool's default deadline)")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: diffs, main-job, printed, committed")
    ap.add_argument("--json", help="also write every run as JSON to this file")
    args = ap.parse_args(argv)
    games, skip = args.games.split(","), set(filter(None, args.skip.split(",")))
    TIMEOUT[:] = ["--timeout", args.timeout] if args.timeout else []
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="turnproof-determinism-") as folder:
        tmp = Path(folder)
        if "diffs" not in skip:
            with busy(args.busy):
                runs += (diffs_together if args.together else diffs)(games, args.diffs)
        if "main-job" not in skip:
            with busy(args.busy):
                runs += main_job(tmp)
        if "printed" not in skip:
            runs += printed(games, args.busy, tmp)
        if "committed" not in skip:
            with busy(args.busy):
                runs += committed(tmp)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in runs], indent=1))
    bad = [r for r in runs if not r.ok]
    print(f"{len(runs) - len(bad)} of {len(runs)} checks held" + (f"; failed: {len(bad)}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
