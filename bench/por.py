"""Partial-order reduction: states and seconds of the explicit search with and without `--por`.

Run: python -m bench.por [--repeat N] [CASE ...]

Each case is one concrete model and the claims the reduced search serves
(invariants, reachability of states and actions, deadlock freedom: the shipped
games' own such claims at their default parameters, first reading; dining
philosophers with a deadlock claim alone, and with a claim that watches one
philosopher). Both searches run in this process, one after the other, through
`ExplicitEngine.check`; the table gives the states each stored, the median
seconds over the repetitions, and checks that every verdict is the same.
"""
from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from verifier.engines.explicit import ExplicitEngine
from verifier.ir.expr import App, Const, Index, Op
from verifier.ir.model import Model
from verifier.ir.props import DeadlockFree, Invariant, Property, Reachable
from verifier.lang import load_model, load_properties
from verifier.resources import Budget

ROOT = Path(__file__).resolve().parent.parent
GAMES = ("alpha_clash", "alice", "aeons_end", "shadow_era", "wtactics")


@dataclass(frozen=True)
class Case:
    name: str
    model: Path
    watch_one: bool = False          # phils: also a claim on philosopher 0

    def load(self) -> tuple[Model, list[Property]]:
        model = load_model(str(self.model))
        if self.model.parent.name == "models" and self.model.parent.parent == ROOT:
            claims = load_properties(str(ROOT / "properties" / self.model.name), model)
            claims = [p for p in claims if isinstance(p, (Invariant, Reachable, DeadlockFree))]
        else:
            claims = [DeadlockFree(id="deadlock")]
            if self.watch_one:
                eats = App(Op.EQ, (Index("ph", Const(0)), Const(2, enum="Ph")))
                claims.append(Reachable(id="zero-eats", expr=eats))
        return model.instantiate(), claims


CASES = [Case(g, ROOT / "models" / f"{g}.yaml") for g in GAMES] + [
    Case("phils12 deadlock", ROOT / "bench" / "models" / "phils12.yaml"),
    Case("phils12 deadlock + ph[0]", ROOT / "bench" / "models" / "phils12.yaml", watch_one=True),
    Case("phils16 deadlock", ROOT / "bench" / "models" / "phils16.yaml"),
]


def measure(case: Case, por: bool, repeat: int) -> tuple[int, float, list[str]]:
    model, claims = case.load()
    seconds, states, verdicts = [], 0, []
    for _ in range(repeat):
        start = time.perf_counter()
        results = ExplicitEngine(por=por).check(model, claims, Budget())
        seconds.append(time.perf_counter() - start)
        states = max(r.stats.states for r in results)
        verdicts = [f"{r.property.id}={r.verdict.name}" for r in results]
    return states, statistics.median(seconds), verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs per case and setting (median; default 3)")
    parser.add_argument("cases", nargs="*", help=f"case names (default all): {', '.join(c.name for c in CASES)}")
    args = parser.parse_args()
    chosen = [c for c in CASES if not args.cases or c.name in args.cases]
    print("| case | claims | states | states with POR | ratio | seconds | seconds with POR | time ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for case in chosen:
        full, t_full, v_full = measure(case, False, args.repeat)
        red, t_red, v_red = measure(case, True, args.repeat)
        if v_full != v_red:
            raise SystemExit(f"{case.name}: verdicts differ: {v_full} vs {v_red}")
        print(f"| {case.name} | {len(v_full)} | {full:,} | {red:,} | {red / full:.2f} | {t_full:.2f} | {t_red:.2f} | "
              f"{t_red / t_full:.2f} |", flush=True)


if __name__ == "__main__":
    main()
