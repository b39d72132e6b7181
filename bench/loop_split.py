"""Where a compiled search's time goes: the successor function against the visited table's lookups.

Run: python -m bench.loop_split [--repeat N] [CASE ...]   (cases: `bench.compiled`'s; default all)

For each case, one search under the compiled store's cap (`explore_compiled`), then over its stored
states, each part alone on `time.process_time()` (CPU of this process, min of the repetitions):

- expand: the model's `expand` of every stored state and the hash of each successor (no table);
- fill: the stored states into a fresh table, at 80 % full (`MAX_LOAD`, the cap's table at its end),
  at 60 % (`CAPPED_LOAD`, where a capped search's table doubles) and at 40 % (just after a doubling);
- lookups: every successor of every stored state looked up in that table one at a time, in BFS order
  (`loop.find`, the search loop's probe without its stores and with no slot fetched ahead);
- search: the search itself (its growths, stores, links and the slots fetched ahead; as `bench.compiled`'s),
  again in the same process, its table grown as shipped (`arrays.JUMP`: to the cap's table once the
  states pass 1/JUMP of the cap) and, alternated with it, doubling all the way ("doubling"); the
  median of the repetitions, not their min.
"""
from __future__ import annotations

import argparse
import statistics
import time
from unittest import mock

import numpy as np


def _kernels():
    from numba import njit, types

    from verifier.engines.compiled import cache
    from verifier.engines.compiled.numbagen import RUNTIME, loop_source

    cache.load(RUNTIME)
    loop = cache.load(loop_source(1))[0]
    states = types.int64[::1]
    expand_type = types.FunctionType(types.boolean(types.int64, states, states, states, types.int64))
    hash_of = loop._hash

    @njit(types.int64(expand_type, states, states, states, states, states), _nrt=False)
    def successors(expand, keys, out, acts, count, into):
        # every stored state's successors (into `into` where it has room), their hashes' low bits summed
        m = 0
        total = 0
        for i in range(keys.shape[0]):
            count[0] = 0
            expand(keys[i], out, acts, count, 0)
            for j in range(count[0]):
                total += np.int64(hash_of(out[j]) & np.uint64(1))
                if m < into.shape[0]:
                    into[m] = out[j]
                m += 1
        return total

    @njit(_nrt=False)
    def lookups(find, keys, table, bits, succ):
        total = 0
        for j in range(succ.shape[0]):
            total += find(keys, table, bits, succ, j)
        return total

    return loop, successors, lookups


def split(name: str, repeat: int) -> dict[str, float]:
    from bench.compiled import CASES
    from verifier.engines.compiled import arrays
    from verifier.engines.compiled.arrays import CAPPED_LOAD, MAX_LOAD, Mapping, index_bits, table_size
    from verifier.engines.compiled.search import explore_compiled
    from verifier.portfolio.stores import COMPILED_STATES
    from verifier.resources import Budget

    case = next(c for c in CASES if c.name == name)
    model = case.load()
    space = explore_compiled(model, Budget(max_states=COMPILED_STATES))
    if space.words != 1 or space.expand is None:
        raise SystemExit(f"{name}: states of {space.words} words (this bench measures one-word states)")
    loop, successors, lookups = _kernels()
    keys = space.keys
    out, acts, count = np.empty(1 << 16, np.int64), np.empty(1 << 16, np.int64), np.zeros(1, np.int64)
    succ = np.empty(space.transitions, np.int64)
    result = {"states": float(len(keys)), "transitions": float(space.transitions)}

    def best(run) -> float:
        times = []
        for _ in range(repeat):
            start = time.process_time()
            run()
            times.append(time.process_time() - start)
        return min(times)

    searches: dict[str, list[float]] = {"search": [], "search, doubling": []}
    for _ in range(repeat):
        for part, jump in (("search", arrays.JUMP), ("search, doubling", 0)):
            with mock.patch.object(arrays, "JUMP", jump):
                start = time.process_time()
                explore_compiled(model, Budget(max_states=COMPILED_STATES))
                searches[part].append(time.process_time() - start)
    result.update((part, statistics.median(times)) for part, times in searches.items())
    result["expand"] = best(lambda: successors(space.expand, keys, out, acts, count, succ))
    for load in (MAX_LOAD, CAPPED_LOAD, MAX_LOAD / 2):
        size = table_size(len(keys), load)
        bits = index_bits(size)
        fills = []
        for _ in range(repeat):
            table = Mapping(np.uint32, (size,)).array(size)
            start = time.process_time()
            loop.fill(keys, 0, len(keys), table, bits)
            fills.append(time.process_time() - start)
        result[f"fill {load:.0%}"] = min(fills)
        result[f"lookups {load:.0%}"] = best(lambda table=table, bits=bits: lookups(loop.find, keys, table, bits, succ))
    return result


def main() -> None:
    from bench.compiled import CASES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("cases", nargs="*", default=[c.name for c in CASES if c.name != "shadow_era"])
    args = parser.parse_args()
    for name in args.cases:
        row = split(name, args.repeat)
        parts = "  ".join(f"{k} {v:.3f} s" for k, v in row.items() if k not in ("states", "transitions"))
        print(f"{name}: {int(row['states']):,} states, {int(row['transitions']):,} transitions  {parts}", flush=True)


if __name__ == "__main__":
    main()
