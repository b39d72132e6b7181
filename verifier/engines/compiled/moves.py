"""Step claims judged on every move of the model's complete compiled search, without a monitor product.

A step claim's monitor (`props.monitor.compile_step`) is a flag that each judged action sets to
"this move breaks the claim", read in the state before the move and the move's choices: it never
reads itself nor any other monitor, so on the product every move of a model state sets it alike,
whatever the other monitors hold. The product's first state with the flag set (in BFS order) is
therefore reached by the model's first breaking move: from the first model state (BFS order) that
has one, its first breaking move in firing order; its trace is the model's BFS path to that state
and the move (the product's first visit of each model state comes, in order, from the first visit
of the model state's BFS parent, by the same move). So, given the model's complete search, the
flags need no product: `first_breaks` runs the flags' product's `expand` (only the judged actions
fire) on every state the search expanded, in BFS order, and notes where each flag is first set: a
move is looked at flag by flag only where one test a word (the flags not yet set, as a mask) says it
sets one of them, since most moves set none (WTactics' 29 flags a reading: 0.66 -> 0.21 s a reading).

Most flags cannot be set by most of their actions: "X only in phase P" under a guard that opens
with `phase == P` (`settable.may_set` shows such effects false statically). A flag no move may set
is never looked for, and the pass stops once every flag a move may set is set. Where the search
recorded the state graph (its transitions' actions), a state none of whose moves is of an action
that may set a flag not set yet is not expanded at all (a flag is set only by a move, and each move
of the product is one of the model: WTactics' judged states 6.9 M -> 48 k a reading, the flag left
holding only on `game_ends`' moves). Where some flag's effect may raise a model error, every state
is judged as before, since the product's search would meet that error wherever it lies.

The flags' product is `product` (the model extended with the flags alone, `compile_together` of
the step claims); its packing must keep the model's slots where the model's packing has them
(slots pack in order: the flags come after them), so that a model state is a product state with
every flag clear. Where it does not, where the module cannot be compiled, or where a move's flag
raises a model error (the product's search reports that, for all its claims), `first_breaks`
answers None and the caller keeps the product.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from verifier.engines.bfsgen import packing_of
from verifier.engines.compiled import cache
from verifier.engines.compiled.arrays import EdgeArrays
from verifier.engines.compiled.numbagen import SIGNATURES, max_firings, module_source, unfit
from verifier.engines.compiled.search import CompiledSpace
from verifier.engines.compiled.settable import may_set, raises
from verifier.ir.expr import FALSE
from verifier.ir.model import Modality, Model
from verifier.resources import Budget
from verifier.semantics import Layout, iter_transitions, layout

CHUNK = 1 << 20          # states judged between two looks at the run's backstop

_KERNEL = """
from numba import njit

KEYS = {keys}
OUT = {out}
EXPAND = types.FunctionType({expand})
FLAGS = types.uint8[:, ::1]


@njit(types.int64(STATES, FLAGS, types.uint8[::1]), **INNER)
def pending_flags(first, sets, pending):
    # the flags not set yet that some action may set (sets[k, a]); pending[a]: whether action a may set one
    pending[:] = 0
    left = 0
    for k in range(first.shape[0]):
        if first[k] < 0:
            settable = 0
            for a in range(sets.shape[1]):
                if sets[k, a]:
                    pending[a] = 1
                    settable = 1
            left += settable
    return left


@njit(types.int64(EXPAND, KEYS, types.int64, types.int64, ROWS, OUT, STATES, STATES, STATES, STATES, STATES,
                  STATES, STATES, STATES, types.int32[::1], FLAGS, types.uint8[::1]), **OPTIONS)
def judge(expand, keys, lo, hi, row, out, acts, count, word, shift, mask, first, at, offsets, labels, sets, pending):
    # states lo..hi of `keys` expanded by the flags' product; first[k] / at[k]: the first state where
    # flag k is set by a move, and that move's place among the state's judged moves; mask[w]: the bits
    # of word w of the flags not yet set (cleared as they are). With the recorded graph (`offsets` of
    # more than one slot; `labels` its actions), a state none of whose moves is of a pending action is
    # not expanded. Returns -1, or the state where a move raised a model error (the caller then keeps
    # the product).
    left = pending_flags(first, sets, pending)
    graph = offsets.shape[0] > 1
    for i in range(lo, hi):
        if left == 0:
            break
        if graph:
            wanted = False
            for e in range(offsets[i], offsets[i + 1]):
                if pending[labels[e]]:
                    wanted = True
                    break
            if not wanted:
                continue
{embed}
        count[0] = 0
        try:
            expand({call}, out, acts, count, 0)
        except Exception:
            return i
        for j in range(count[0]):
{hit}
            if hit:
                for k in range(first.shape[0]):
                    if first[k] < 0 and ({flag_word} >> shift[k]) & 1:
                        first[k] = i
                        at[k] = j
                        mask[word[k]] &= ~(1 << shift[k])
                        left = pending_flags(first, sets, pending)
    return -1
"""


def kernel_source(model_words: int, product_words: int) -> str:
    """The judging kernel for model states of `model_words` words and flags' product states of
    `product_words` (model-independent: one module per pair, compiled once per machine)."""
    rows = product_words > 1
    if not rows:
        embed, call, flag_word = "        s = keys[i]", "s", "out[j]"
    elif model_words == 1:
        embed, call, flag_word = "        row[0, 0] = keys[i]", "row, 0", "out[j, word[k]]"
    else:
        embed = "        for w in range(keys.shape[1]):\n            row[0, w] = keys[i, w]"
        call, flag_word = "row, 0", "out[j, word[k]]"
    hit = ("            hit = False\n            for w in range(out.shape[1]):\n"
           "                if out[j, w] & mask[w]:\n                    hit = True") if rows else \
        "            hit = (out[j] & mask[0]) != 0"
    return SIGNATURES + _KERNEL.format(
        keys="ROWS" if model_words > 1 else "STATES", out="ROWS" if rows else "STATES",
        expand="EXPAND_ROWS_SIGNATURE" if rows else "EXPAND_SIGNATURE", embed=embed, call=call, flag_word=flag_word,
        hit=hit)


def judged_only(product: Model, flags: Sequence[str]) -> Model:
    """`product` with only the actions that may set one of `flags` (the others' guards false: they
    keep their places, so an action's index is the model's)."""
    names = set(flags)

    def judges(action) -> bool:
        return any(e.target.name in names and e.value != FALSE for e in action.effects)

    return replace(product, actions=tuple(a if a.modality is Modality.MUST_NOT or judges(a) else replace(a, guard=FALSE)
                                          for a in product.actions))


def _fits(model: Model, product: Model) -> bool:
    """Whether a packed model state is the packed product state with every flag clear."""
    pm, pp = packing_of(layout(model)), packing_of(layout(product))
    n = len(pm.shifts)
    return bool(pm.words) and bool(pp.words) and pp.words >= pm.words and \
        pp.shifts[:n] == pm.shifts and pp.widths[:n] == pm.widths and pp.los[:n] == pm.los


def first_breaks(space: CompiledSpace, product: Model, flags: Sequence[str], budget: Budget = Budget(),
                 graph: EdgeArrays | None = None) -> list[tuple[int, int, int] | None] | None:
    """For each of `flags` (variables of the instantiated `product`, each a step claim's flag), the
    first move of the complete compiled search `space` of the model that sets it, as (state, label,
    successor) for `space.trace_through`, or None where no move sets it; None (for all) where this
    cannot be judged here (see the module doc) or the run's backstop expired meanwhile. `graph`:
    the state graph `space`'s search recorded, if any (only the states with a move that may set a
    flag not set yet are then expanded)."""
    model = space.model
    if not space.complete or space.reductions or space.head != len(space) or not _fits(model, product):
        return None
    judged = judged_only(product, flags)
    lay = layout(judged)
    if unfit(lay):
        return None
    sets = setters(lay, flags)
    if sets is not None and not sets.any():
        return [None] * len(flags)      # no move may set any: nothing to load or expand (Shadow Era's 32 flags)
    from numba.core.errors import NumbaError
    try:
        module, _known, _name = cache.load_generated(cache.digest_of("moves", judged), lambda: module_source(lay, ()).text)
        kernel, _ = cache.load(kernel_source(space.words, packing_of(lay).words))
    except (NumbaError, OSError):
        return None
    packing = packing_of(lay)
    places = [packing.word(lay.offsets[f][0]) for f in flags]
    word = np.array([w for w, _sh in places], np.int64)
    shift = np.array([sh for _w, sh in places], np.int64)
    mask = np.zeros(packing.words, np.int64)
    for w, sh in places:
        mask[w] |= 1 << sh
    first = np.full(len(flags), -1, np.int64)
    at = np.full(len(flags), -1, np.int64)
    firings = max(1, max_firings(lay))
    shape = (firings,) if packing.words == 1 else (firings, packing.words)
    out, acts, count = np.zeros(shape, np.int64), np.zeros(firings, np.int64), np.zeros(1, np.int64)
    row = np.zeros((1, packing.words), np.int64)
    offsets, labels = (graph.offsets, graph.lab) if graph is not None and sets is not None else \
        (np.zeros(1, np.int64), np.zeros(1, np.int32))
    if sets is None:                # a flag may raise: every flag judged on every state, as the product would
        sets = np.ones((len(flags), len(judged.actions)), np.uint8)
    pending = np.zeros(sets.shape[1], np.uint8)
    for lo in range(0, len(space), CHUNK):
        if budget.expired():
            return None
        hi = min(len(space), lo + CHUNK)
        if kernel.judge(module.expand, space.keys, lo, hi, row, out, acts, count, word, shift, mask, first, at,
                        offsets, labels, sets, pending) >= 0:
            return None
    return [None if first[k] < 0 else _move(space, module, packing.words, int(first[k]), int(at[k]))
            for k in range(len(flags))]


def setters(lay: Layout, flags: Sequence[str]) -> np.ndarray | None:
    """sets[k, a]: 1 where a move of action a of `lay`'s model (the flags' product) may set flag k
    (`settable.may_set`); None where some flag's effect might raise a model error."""
    column = {f: k for k, f in enumerate(flags)}
    sets = np.zeros((len(flags), len(lay.model.actions)), np.uint8)
    for a, action in enumerate(lay.model.actions):
        if action.guard == FALSE or action.modality is Modality.MUST_NOT:
            continue
        for e in action.effects:
            k = column.get(e.target.name)
            if k is None or e.value == FALSE:
                continue
            if raises(lay, action, e.value):
                return None
            sets[k, a] = may_set(lay, action, e.value)
    return sets


def _move(space: CompiledSpace, module, words: int, i: int, j: int) -> tuple[int, int, int]:
    """The `j`-th judged move of state `i` as (state, label, successor): its action's firings in the
    model's order, by the reference semantics (the flags' product fires them alike)."""
    firings = max(1, max_firings(layout(space.model)) + 1)
    out = np.zeros((firings,) if words == 1 else (firings, words), np.int64)
    acts, count = np.zeros(firings, np.int64), np.zeros(1, np.int64)
    if words == 1:
        module.expand(np.int64(space.keys[i]), out, acts, count, 0)
    else:
        row = np.zeros((1, words), np.int64)
        row[0, :space.words] = space.keys[i]
        module.expand(row, 0, out, acts, count, 0)
    a = int(acts[j])
    nth = int(np.count_nonzero(acts[:j] == a))
    lay = layout(space.model)
    action = space.model.actions[a]
    packing = packing_of(lay)
    moves = [(t.choice, t.target) for t in iter_transitions(lay, packing.unpack(space.key(i)))
             if t.action is action and t.target is not None]
    choice, target = moves[nth]
    assert target is not None
    return i, space.labels(a, choice), packing.pack(target)

