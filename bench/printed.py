"""The shipped games at their printed numbers: how much of each check is decided, and how fast.

Run: python -m bench.printed [--repeat N] [--timeout S] [--wall S] [CASE ...]
     python -m bench.printed --whole [--cache cold,warm] [--timeout S] [--wall S] [GAME ...]

Each case is `python -m verifier check MODEL -D NAME=VALUE... --variant V --timeout S`
with the model's printed values (its `printed:` map) and the case's other values, in
a fresh process (claims and consistency analyses, as a designer runs it), stopped
from outside after --wall seconds if the tool's own budget does not stop it first.
The table gives the load average when the runs started, the median wall time and
CPU time (user + system, the forked processes included) over the repetitions, the
largest search, the verdict counts and what is left UNKNOWN (the claims, by id, and
the consistency analyses). The machine is shared: medians, and expect noise; the CPU
time says more than the wall time under load.

The cases: the issue's target (WTactics, literal reading, HAND_LIMIT=7 OPENING=7
DECK=20) and every other game at its printed hand / board numbers with the smallest
deck (and model bounds) that let every rule fire.

With --whole, each case is a shipped game as a designer checks it at its printed
numbers: `python -m verifier check models/GAME.yaml --printed` (every reading, every
claim, the consistency analyses), with the compiled store's code cache cold (a fresh,
empty TURNPROOF_CACHE_DIR) and then warm (the same folder again), one row each;
"decided" counts the claims not left UNKNOWN, "by search" those an explicit search decided,
by the store it ran in.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE_ENV = "TURNPROOF_CACHE_DIR"   # the compiled store's code cache (`verifier.engines.compiled.cache.ENV`)
MAX_NAMES = 8          # UNKNOWN claims named in the table; the rest are counted


@dataclass(frozen=True)
class Case:
    name: str
    game: str
    variant: str
    params: tuple[str, ...]      # -D values beyond the printed ones
    whole: bool = False          # every reading at the printed values alone (`check --printed`)

    @property
    def path(self) -> Path:
        return ROOT / "models" / f"{self.game}.yaml"

    def values(self) -> list[str]:
        if self.whole:
            return ["--printed"]
        from verifier.lang import load_model
        return [f"{k}={v}" for k, v in load_model(str(self.path)).printed or ()] + list(self.params)

    def command(self, timeout: float, out: Path, claims_only: bool = False) -> list[str]:
        cmd = [sys.executable, "-m", "verifier", "check", str(self.path), "--timeout", str(timeout), "-q",
               "--format", "json", "-o", str(out)]
        if claims_only:
            cmd.append("--no-consistency")
        if self.whole:
            return cmd + ["--printed"]
        cmd += ["--variant", self.variant]
        for p in self.values():
            cmd += ["-D", p]
        return cmd


CASES = [
    Case("wtactics-target", "wtactics", "literal", ("DRAW_PILE=13",)),
    Case("wtactics-small-deck", "wtactics", "literal", ("DRAW_PILE=1",)),
    Case("alice", "alice", "literal", ("DECK=1",)),
    Case("aeons_end", "aeons_end", "flip_on_draw", ("DECK=1", "GAINS=1")),
    Case("shadow_era", "shadow_era", "literal", ("DECK=2",)),
    Case("alpha_clash", "alpha_clash", "flowchart", ()),
]
GAMES = [Case(game, game, "", (), whole=True) for game in ("aeons_end", "alice", "alpha_clash", "shadow_era", "wtactics")]


@dataclass
class Outcome:
    seconds: float
    cpu: float                  # user + system seconds of the run and its forked children
    load: float                 # the one-minute load average when it started
    finished: bool
    report: dict | None


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(case: Case, timeout: float, wall: float, out: Path, claims_only: bool,
             cache: Path | None = None) -> Outcome:
    """One run of `case`; `cache`: the compiled store's code cache it uses (TURNPROOF_CACHE_DIR)."""
    out.unlink(missing_ok=True)
    env = os.environ if cache is None else {**os.environ, CACHE_ENV: str(cache)}
    load, cpu = os.getloadavg()[0], _children_cpu()
    start = time.perf_counter()
    try:
        done = subprocess.run(case.command(timeout, out, claims_only), check=False, cwd=ROOT, capture_output=True,
                              text=True, timeout=wall, env=env)
    except subprocess.TimeoutExpired:
        return Outcome(time.perf_counter() - start, _children_cpu() - cpu, load, False, None)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1, 3):
        sys.exit(f"{case.name}: check failed with exit code {done.returncode}\n{done.stderr}")
    return Outcome(seconds, _children_cpu() - cpu, load, True, json.loads(out.read_text()) if out.is_file() else None)


def row(case: Case, outcomes: list[Outcome], wall: float, cache: str = "-") -> str:
    median = statistics.median(o.seconds for o in outcomes)
    cpu = statistics.median(o.cpu for o in outcomes)
    loads = f"{min(o.load for o in outcomes):.1f}" + \
        (f"-{max(o.load for o in outcomes):.1f}" if len(outcomes) > 1 else "")
    report = next((o.report for o in reversed(outcomes) if o.report is not None), None)
    params = " ".join(case.values()) or "-"
    timing = f"{cache} | {loads} | {median:.1f} s | {cpu:.1f} s"
    if report is None and not any(o.finished for o in outcomes):
        return f"| {case.name} | {params} | {timing} | - | - | all: not finished in {wall:.0f} s (stopped from outside) |"
    if report is None:
        return f"| {case.name} | {params} | {timing} | - | - | all: the budget ran out before anything was decided |"
    results = report["results"] if case.whole else \
        [r for r in report["results"] if r["variant"] == case.variant] or report["results"]
    states = max((r["stats"]["states"] or 0 for r in results), default=0)
    counts = Counter(r["verdict"] for r in results)
    unknown = [r for r in results if r["verdict"] == "UNKNOWN"]
    verdicts = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    scales = Counter(r.get("scale") for r in results if r["verdict"] != "UNKNOWN")
    at = ", ".join(f"{n} {s}" for s, n in sorted(scales.items(), key=lambda kv: str(kv[0])))
    analyses = [a for a in report.get("analyses", []) if case.whole or a.get("variant") in (None, case.variant)]
    analyses = analyses if case.whole else analyses[:1]
    undecided = [r["id"] for r in unknown] + [f"(consistency analyses{' of ' + a['variant'] if a.get('variant') else ''})"
                                              for a in analyses if a.get("reason")]
    names = ", ".join(undecided[:MAX_NAMES]) + (f" and {len(undecided) - MAX_NAMES} more" if len(undecided) > MAX_NAMES
                                                else "")
    stores = Counter(r["engine"].removeprefix("explicit/") for r in results
                     if r["verdict"] != "UNKNOWN" and r["engine"].startswith("explicit/"))
    verdicts += f"; decided {len(results) - len(unknown)}/{len(results)}, by search " + \
        (", ".join(f"{n} {store}" for store, n in sorted(stores.items())) or "none")
    return (f"| {case.name} | {params} | {timing} | {states:,} | {verdicts}; known: {at} | "
            f"{len(undecided)}{': ' + names if names else ''} |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.printed", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", help=f"cases to run (default: all): {', '.join(c.name for c in CASES)}; "
                                             f"with --whole: {', '.join(c.name for c in GAMES)}")
    ap.add_argument("--repeat", type=int, default=1, help="runs per case; the median is reported")
    ap.add_argument("--timeout", type=float, default=60, help="the tool's --timeout for each run (default 60)")
    ap.add_argument("--wall", type=float, default=300, help="stop a run from outside after S seconds (default 300)")
    ap.add_argument("--claims-only", action="store_true",
                    help="check the claims only (--no-consistency): what is decided before the analyses")
    ap.add_argument("--whole", action="store_true",
                    help="each shipped game as `check --printed` (every reading at the printed values)")
    ap.add_argument("--cache", default="cold,warm",
                    help="with --whole: the compiled code cache of the runs, in order: cold (a fresh folder) "
                         "and/or warm (the folder the runs before filled); default cold,warm")
    args = ap.parse_args(argv)
    known = GAMES if args.whole else CASES
    chosen = [c for c in known if c.name in (args.cases or [c.name for c in known])]
    if len(chosen) != len(args.cases or chosen):
        ap.error(f"unknown case; choose from {', '.join(c.name for c in known)}")
    caches = args.cache.split(",") if args.whole else ["-"]
    if not set(caches) <= {"cold", "warm", "-"}:
        ap.error("--cache takes cold and/or warm")
    print("| case | parameters (printed values first) | cache | load | median wall time | CPU | largest search (states) "
          "| verdicts | UNKNOWN |")
    print("|---|---|---|---:|---:|---:|---:|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        for case in chosen:
            folder = Path(tempfile.mkdtemp(dir=tmp)) if args.whole else None
            for cache in caches:
                outcomes = []
                for _ in range(args.repeat):
                    if cache == "cold" and folder is not None:
                        shutil.rmtree(folder)
                        folder.mkdir()
                    outcomes.append(run_once(case, args.timeout, args.wall, out, args.claims_only, folder))
                print(row(case, outcomes, args.wall, cache), flush=True)


if __name__ == "__main__":
    main()
