"""The compiled successor function over chunks of states, for the distributed search's workers.

`--workers N --store compiled`: each Dask worker's partition (`distributed.Partition`) expands
its share of a level a chunk at a time; `CompiledExpansion` does that with the model's compiled
`expand` (`numbagen`, loaded from the disk cache the client filled first: `prepare`) in place of
the compact store's vectorised code, and answers as `compact.Expansion` does: per firing its
lane and successor, per lane whether it is final, the first model error (its words from the
reference code). The compiled code reports a firing's action, not its choice: `labels` are -1
and `pos` counts the lane's successors; `first_firings` finds the choice of each tracked
action's firing it names (the smallest state's, then successor's) by re-expanding that one state with the
reference code.
A symmetric expansion (`symmetry: players`) runs the compiled store's canonicalising `expand`
(`compiled/symmetry.py`): each successor is its canonical form, as the single-process search
stores it.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from verifier.engines.compact import Firings, firings_of
from verifier.engines.compiled import cache
from verifier.engines.compiled.numbagen import RUNTIME, SIGNATURES, loop_source, module_shape, module_source
from verifier.engines.compiled.search import CompileError, compile_error_words, error_message
from verifier.engines.compiled.symmetry import reduction
from verifier.semantics import Layout

CHUNKS = SIGNATURES + f"""\
from numba import njit

from {cache.module_name(loop_source(1))} import EXPAND


@njit(types.int64(EXPAND, STATES, types.int64, STATES, STATES, STATES, STATES, STATES, STATES, STATES,
                  types.uint8[::1], STATES), cache=True)
def expand_chunk(expand, S, lane, out, acts, count, lanes, pos, succ, act, final, state):
    # expands S[lane:] into lanes/pos/succ/act from state[0] entries on, until the buffers could
    # not hold one more state's firings; state = [entries, next lane, error lane or -1]
    e = state[0]
    room = lanes.shape[0]
    firings = out.shape[0]
    while lane < S.shape[0]:
        if e + firings > room:
            break
        count[0] = 0
        failed = False
        done = False
        try:
            done = expand(S[lane], out, acts, count, 0)
        except Exception:
            failed = True
        for j in range(count[0]):
            lanes[e] = lane
            pos[e] = j
            succ[e] = out[j]
            act[e] = acts[j]
            e += 1
        final[lane] = 1 if done else 0
        if failed:
            state[2] = lane
            lane += 1
            break
        lane += 1
    state[0] = e
    state[1] = lane
    return e
"""


def prepare(lay: Layout, symmetric: bool = False) -> None:
    """Compile (or load) the modules every worker loads, once, before the workers start; a module
    Numba cannot compile raises `CompileError`."""
    from numba.core.errors import NumbaError
    try:
        CompiledExpansion(lay, symmetric)
    except (NumbaError, OSError) as err:
        raise CompileError(compile_error_words(err)) from err


class CompiledExpansion:
    """`compact.Expansion` for one-word states, by the model's compiled code (see the module docstring)."""

    def __init__(self, lay: Layout, symmetric: bool = False):
        """`symmetric`: successors canonical where the model declares `symmetry: players`."""
        self.lay = lay
        cache.load(RUNTIME)
        cache.load(loop_source(1))
        self.module, _known, name = cache.load_generated(cache.digest_of("search", lay.model, ()),
                                                         lambda: module_source(lay, ()).text)
        reduced = reduction(lay, self.module, name) if symmetric else None
        self.expand = self.module.expand if reduced is None else reduced.expand
        self.canon = None if reduced is None else reduced.canon
        self.runtime, _known = cache.load(CHUNKS)
        self.firings = module_shape(lay).firings

    def __call__(self, S: np.ndarray) -> Firings:
        states = np.ascontiguousarray(S).view(np.int64)
        size = max(1024, 4 * states.shape[0], self.firings)
        lanes, pos, succ, act = (np.empty(size, np.int64) for _ in range(4))
        final = np.zeros(states.shape[0], np.uint8)
        out, acts, count = np.empty(self.firings, np.int64), np.empty(self.firings, np.int64), np.zeros(1, np.int64)
        state = np.array([0, 0, -1], np.int64)
        while True:
            self.runtime.expand_chunk(self.expand, states, int(state[1]), out, acts, count, lanes, pos, succ,
                                      act, final, state)
            if state[1] >= states.shape[0] or state[2] >= 0:
                break
            lanes, pos, succ, act = (_grown(a, int(state[0])) for a in (lanes, pos, succ, act))
        n = int(state[0])
        error = None
        if state[2] >= 0:
            lane = int(state[2])
            error = (lane, error_message(self.lay, int(states[lane])))
        self.actions = act[:n]
        return Firings(lanes[:n], pos[:n], np.full(n, -1, np.int64), succ[:n].view(np.uint64), final.astype(bool),
                       error)

    def first_firings(self, S: np.ndarray, f: Firings, track: Iterable[int]) -> dict[int, tuple[int, tuple, int]]:
        """A firing in the chunk `S` (expanded last, into `f`) of each action of `track`: the one
        with the smallest state, then the smallest successor: (state, (action, choice), successor)."""
        out = {}
        for a in track:
            hits = np.flatnonzero(self.actions == a)
            if not hits.size:
                continue
            j = int(hits[np.lexsort((f.succ[hits], S[f.lanes[hits]]))[0]])
            key, target = int(S[f.lanes[j]]), int(f.succ[j])
            choice = next(c for a2, c, t, _gap in firings_of(self.lay, key)
                          if a2 == a and t is not None and (t if self.canon is None else self.canon(t)) == target)
            out[a] = (key, (a, choice), target)
        return out


def _grown(a: np.ndarray, used: int) -> np.ndarray:
    out = np.empty(2 * a.shape[0], a.dtype)
    out[:used] = a[:used]
    return out
