"""Whole-check time of each shipped game: claims, every reading, and the consistency analyses.

Run: python -m bench.games [--repeat N] [GAME ...]   (a GAME may also be a model file's path)
Each check is `python -m verifier check models/<game>.yaml` in a fresh process,
exactly as a designer runs it; the table gives the median wall time over the
repetitions, the readings checked and the largest state space among them.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAMES = ["wtactics", "alice", "aeons_end", "shadow_era", "alpha_clash"]


def model_file(game: str) -> Path:
    """A shipped game's model, or `game` itself where it names a model file."""
    return Path(game).resolve() if game.endswith((".yaml", ".yml")) else ROOT / "models" / f"{game}.yaml"


def check_once(game: str, json_path: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "verifier", "check", str(model_file(game)),
                           "-q", "--format", "json", "-o", str(json_path)], cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"{game}: check failed with exit code {done.returncode}\n{done.stderr}")
    return seconds


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.games", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("games", nargs="*", default=GAMES, help="game model names (default: all five), or model files' paths")
    ap.add_argument("--repeat", type=int, default=3, help="runs per game; the median is reported")
    args = ap.parse_args(argv)
    print("| game | readings | largest search (states) | claim results | findings | median wall time |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        for game in args.games:
            times = [check_once(game, out) for _ in range(args.repeat)]
            report = json.loads(out.read_text())
            readings = len(report["model"]["variants"]) or 1
            states = max((r["stats"]["states"] or 0 for r in report["results"]), default=0)
            claims, findings = len(report["results"]), len(report["findings"])
            print(f"| {model_file(game).stem} | {readings} | {states:,} | {claims} | {findings} | "
                  f"{statistics.median(times):.1f} s |", flush=True)


if __name__ == "__main__":
    main()
