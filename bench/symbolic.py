"""Symbolic-engine scaling: the same proofs with the deck size at 10, 1,000, 1,000,000 and free.

Run: python -m bench.symbolic [--repeat N] [--no-explicit]

The model is the two-player deck-drawing game of
`verifier.engines.symbolic.examples.deck_game` (a shared draw pile of DECK
cards; Draw / Main / Discard; the hand limit of seven enforced in Discard).
Each claim is proved by k-induction and by PDR; the table gives the median
wall time (encoding included) over the repetitions, and the ratio of the
slowest to the fastest deck size. The explicit engine's cost at DECK = 10 and
1,000 is given for comparison (its state space grows with the deck).
"""
from __future__ import annotations

import argparse
import statistics
import time

from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic import SymbolicEngine
from verifier.engines.symbolic.examples import HAND_LIMIT, deck_game, le, passive_hand_limit
from verifier.ir.expr import Index, Op, Var, app, conj, eq, neg
from verifier.ir.props import DeadlockFree, Invariant
from verifier.resources import Budget
from verifier.result import Verdict

SIZES: list[int | None] = [10, 1_000, 1_000_000, None]


def claims():
    from verifier.engines.symbolic.examples import DRAW
    turn_start = Invariant(id="turn-start-hand-limit",
                           statement="when a turn starts, the active player holds at most seven",
                           expr=app(Op.IMPLIES, conj(eq(Var("phase"), DRAW), neg(Var("drawn"))),
                                    le(Index("hand", Var("active")), HAND_LIMIT)))
    return [passive_hand_limit(), turn_start, DeadlockFree(id="no-deadlock")]


def timed(engine, model, claim, budget) -> tuple[float, object]:
    start = time.perf_counter()
    (result,) = engine.check(model, [claim], budget)
    return time.perf_counter() - start, result


def label(size: int | None) -> str:
    return "DECK free" if size is None else f"DECK={size:,}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-explicit", action="store_true", help="skip the explicit-engine comparison")
    args = ap.parse_args(argv)
    budget = Budget(rlimit=240_000_000, max_depth=30)
    rows = []
    for claim in claims():
        for strategy, method in (("kind", "k-induction"), ("pdr", "pdr")):
            times, verdicts = [], []
            for size in SIZES:
                model = deck_game(size)
                samples = []
                for _ in range(args.repeat):
                    seconds, result = timed(SymbolicEngine(strategy), model, claim, budget)
                    samples.append(seconds)
                times.append(statistics.median(samples))
                verdicts.append(result.verdict)
                extra = result.evidence.get("k", "")
                if result.verdict not in (Verdict.PROVED, Verdict.HOLDS):
                    extra = f"{result.verdict.value}: {result.reason}"
            rows.append((claim.id, method, times, verdicts, extra))
    width = 17
    print(f"{'claim':24s} {'method':12s}" + "".join(f"{label(s):>{width}s}" for s in SIZES) + f"{'max/min':>9s}")
    for claim_id, method, times, verdicts, extra in rows:
        cells = "".join(f"{t * 1000:>{width - 3}.1f} ms" for t in times)
        ratio = max(times) / min(times)
        print(f"{claim_id:24s} {method:12s}{cells}{ratio:>9.2f}" + (f"   k={extra}" if extra != "" else ""))
        print(f"{'':37s}" + "".join(f"{v.value:>{width}s}" for v in verdicts))
    print("(fixed DECK: HOLDS, an unbounded proof for that value; DECK free: PROVED, for every DECK >= 1)")
    if not args.no_explicit:
        print()
        print("explicit engine (whole state space, every claim at once):")
        for size in (10, 1_000):
            model = deck_game(size)
            start = time.perf_counter()
            results = ExplicitEngine().check(model, claims(), Budget(rlimit=1200_000_000))
            seconds = time.perf_counter() - start
            states = results[0].stats.states
            print(f"  {label(size):>12s}: {seconds * 1000:10.1f} ms, {states:,} states, "
                  f"{', '.join(r.verdict.value for r in results)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
