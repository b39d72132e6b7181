"""Invariants and deadlock freedom beyond the state cap: induction with mined lemmas, alone.

Run: python -m bench.lemmas [--cap N] [--timeout S] [CASE ...]

Each case is a game at its printed numbers (the cases of `bench.printed`) and the claims
that the capped explicit search leaves open and k-induction alone does not prove. The
command searches the model as `--engine auto` does (capped at --cap states), keeps the
same sample of the states it saw, and hands it with those claims to the symbolic engine
(strategy "all": k-induction, then induction and PDR with the mined lemmas) under one
--timeout for the case. A case whose name ends in "-free" leaves parameters free instead
(`--engine symbolic -D NAME=*`): no search; the engine mines its lemmas from a capped
search at the parameters' defaults and proves the claims for every value. It prints, per
claim: the verdict, the method, the lemmas used and the seconds; per case: the CPU seconds
of the search and of the proofs (this process's own clock: on a shared machine the CPU
time says more than the wall time).
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

from bench.printed import CASES as PRINTED
from verifier.engines.explicit import explore
from verifier.engines.symbolic import SymbolicEngine
from verifier.engines.symbolic.units import UNITS_PER_SECOND
from verifier.lang import load_model
from verifier.lang.properties import load_properties
from verifier.portfolio.auto import MINE_STATES
from verifier.portfolio.stores import PYTHON_STATES
from verifier.resources import Budget


@dataclass(frozen=True)
class Case:
    printed: str                 # the name of the `bench.printed` case (model, variant, values)
    claims: tuple[str, ...]


@dataclass(frozen=True)
class FreeCase:
    name: str
    game: str
    variant: str
    values: tuple[tuple[str, int], ...]     # the parameters fixed; every other one is free
    claims: tuple[str, ...]


CASES = [
    Case("aeons_end", ("no-deadlock",)),
    Case("shadow_era", ("second-player-gains-se-in-first-turn", "frozen-two-controller-turns",
                        "freeze-never-too-long")),
]
FREEZE = ("frozen-two-controller-turns", "freeze-never-too-long")
FREE_CASES = [      # Shadow Era's OPENING may not exceed HAND_MAX + 1 (its initial hand): one of them is fixed
    FreeCase("shadow_era-free", "shadow_era", "literal", (("HAND_MAX", 7),), FREEZE),
    FreeCase("shadow_era-free-hand", "shadow_era", "literal", (("OPENING", 1),), FREEZE),
]


def run_free(case: FreeCase, timeout: float) -> list[str]:
    path = Path(__file__).resolve().parent.parent / "models" / f"{case.game}.yaml"
    fixed = dict(case.values)
    declared = load_model(str(path), fixed, case.variant)
    values: dict[str, int | None] = {p.name: fixed.get(p.name) for p in declared.params}
    model = load_model(str(path), values, case.variant)
    claims = [p for p in load_properties(str(path.parent.parent / "properties" / f"{case.game}.yaml"), model)
              if p.id in case.claims]
    cpu = time.process_time()
    results = SymbolicEngine().check(model, claims, Budget(rlimit=int(timeout * UNITS_PER_SECOND)))
    shown = " ".join(f"{k}={'*' if v is None else v}" for k, v in values.items())
    lines = [f"{case.name} ({shown}): proofs {time.process_time() - cpu:.1f} s CPU"]
    for r in results:
        lines.append(f"  {r.property.id}: {r.verdict.value} by {r.engine} in {r.stats.seconds:.1f} s: {r.reason}")
    return lines


def run(case: Case, cap: int, timeout: float) -> list[str]:
    where = next(c for c in PRINTED if c.name == case.printed)
    values = {k: int(v) for k, v in (p.split("=") for p in where.values())}
    model = load_model(str(where.path), values, where.variant)
    claims = [p for p in load_properties(str(where.path.parent.parent / "properties" / f"{where.game}.yaml"), model)
              if p.id in case.claims]
    cpu = time.process_time()
    space = explore(model.instantiate(), Budget(max_states=cap))
    sample = space.sample(MINE_STATES)
    search_cpu, cpu = time.process_time() - cpu, time.process_time()
    results = SymbolicEngine(explored=sample).check(model, claims, Budget(rlimit=int(timeout * UNITS_PER_SECOND)))
    proof_cpu = time.process_time() - cpu
    lines = [f"{case.printed} ({' '.join(where.values())}): search {len(space):,} states "
             f"({'complete' if space.complete else 'stopped'}), {search_cpu:.1f} s CPU; "
             f"proofs {proof_cpu:.1f} s CPU"]
    for r in results:
        lines.append(f"  {r.property.id}: {r.verdict.value} by {r.engine} in {r.stats.seconds:.1f} s: {r.reason}")
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.lemmas", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    names = [c.printed for c in CASES] + [c.name for c in FREE_CASES]
    ap.add_argument("cases", nargs="*", default=names, help=f"cases to run (default: all): {', '.join(names)}")
    ap.add_argument("--cap", type=int, default=PYTHON_STATES, help="states the search may store (as the python store's cap)")
    ap.add_argument("--timeout", type=float, default=60, help="seconds for the proofs of one case (default 60)")
    args = ap.parse_args(argv)
    for case in CASES:
        if case.printed in args.cases:
            print("\n".join(run(case, args.cap, args.timeout)), flush=True)
    for free in FREE_CASES:
        if free.name in args.cases:
            print("\n".join(run_free(free, args.timeout)), flush=True)


if __name__ == "__main__":
    main()
