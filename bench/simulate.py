"""Playout throughput: steps/s and games/s of `turnproof simulate` on the shipped games.

Run: python -m bench.simulate [--games N] [--repeat N] [GAME ...]
Each game model plays N uniform random games (seed 0, the claims of its
property file evaluated on every state) at its default parameters, and
WTactics once more at the printed numbers (hand limit 7, opening hand 7, deck
20). The table gives the median over the repetitions of the playout loop's
time (model loading and code generation excluded).
"""
from __future__ import annotations

import argparse
import statistics

from verifier.lang import load_model, load_properties
from verifier.playout.play import PlayoutOptions, simulate

GAMES = ["wtactics", "alice", "aeons_end", "shadow_era", "alpha_clash"]
PRINTED = {"wtactics": {"HAND_LIMIT": 7, "OPENING": 7, "DRAW_PILE": 13}}


def measure(game: str, params: dict[str, int], games: int, repeat: int) -> tuple[int, float]:
    model = load_model(f"models/{game}.yaml", params).instantiate()
    claims = load_properties(f"properties/{game}.yaml", model)
    runs = [simulate(model, claims, PlayoutOptions(games=games, seed=0)) for _ in range(repeat)]
    return runs[0].steps, statistics.median(r.seconds for r in runs)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.simulate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("games", nargs="*", default=GAMES, help="game model names (default: all five)")
    ap.add_argument("--games", dest="count", type=int, default=1000, help="playouts per model (default 1000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per model; the median is reported")
    args = ap.parse_args(argv)
    print("| game | parameters | games | steps | median | steps/s | games/s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    cases = [(g, {}) for g in args.games] + [(g, p) for g, p in PRINTED.items() if g in args.games]
    for game, params in cases:
        steps, seconds = measure(game, params, args.count, args.repeat)
        label = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
        print(f"| {game} | {label} | {args.count:,} | {steps:,} | {seconds:.2f} s | {steps / seconds:,.0f} | "
              f"{args.count / seconds:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
