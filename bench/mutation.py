"""Mutation scores of the shipped games' claims: how many single-point rule changes they notice.

Run: python -m bench.mutation [--max-mutants N] [GAME ...]
Each game is `python -m verifier mutate models/<game>.yaml -f json` in a fresh
process (its first reading, its default parameters); the table gives the
mutants made, those checked, and how they ended. Score = killed / (killed +
survived): equivalent mutants (proved: same reachable states and labelled
transitions) and invalid ones are left out.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAMES = ["aeons_end", "alice", "alpha_clash", "shadow_era", "wtactics"]


def mutate_game(game: str, out: Path, max_mutants: int | None) -> dict:
    cmd = [sys.executable, "-m", "verifier", "mutate", str(ROOT / "models" / f"{game}.yaml"), "-q",
           "--format", "json", "-o", str(out)]
    if max_mutants is not None:
        cmd += ["--max-mutants", str(max_mutants)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 3):
        sys.exit(f"{game}: mutate failed with exit code {done.returncode}\n{done.stderr}")
    return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.mutation", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("games", nargs="*", default=GAMES, help="game model names (default: all five)")
    ap.add_argument("--max-mutants", type=int, help="check N mutants per game, spread evenly (an estimate)")
    args = ap.parse_args(argv)
    print("| game | reading | mutants | checked | invalid | equivalent | killed | survived | unknown | score | "
          "wall time |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for game in args.games:
            doc = mutate_game(game, Path(tmp) / "run.json", args.max_mutants)
            c = doc["counts"]
            score = "-" if doc["score"] is None else f"{100 * doc['score']:.1f} %"
            print(f"| {game} | {doc['variant'] or '-'} | {doc['generated']} | {doc['checked']} | {c['invalid']} | "
                  f"{c['equivalent']} | {c['killed']} | {c['survived']} | {c['unknown']} | {score} | "
                  f"{doc['seconds']:.0f} s |", flush=True)


if __name__ == "__main__":
    main()
