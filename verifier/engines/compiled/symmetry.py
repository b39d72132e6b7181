"""Player symmetry in the compiled store: one stored state per orbit, as the python store stores.

For a model that declares `symmetry: players`, the python store keeps the canonical form of
every successor (`engines/symmetry.py`: the smallest packed state among its player rotations).
`symmetric_source` writes a small module beside the model's: `canon(x)`, the same rotations
compiled (`symmetry.canon_lines`), and an `expand` that calls the model's `expand` and replaces
each successor by its canonical form (those before a model error too, as the python store
stores them as they fire). The search loop runs it in place of the model's, so it stores the
python store's states in its order; traces go through the canonical states and are lifted back
to the model (`compact.trace_along` with `canon`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from verifier.engines.bfsgen import packing_of
from verifier.engines.compiled import cache
from verifier.engines.compiled.numbagen import RUNTIME
from verifier.engines.symmetry import Canon, canon_lines, canonicalizer
from verifier.semantics import Layout


def symmetric_source(lay: Layout, model_text: str) -> str | None:
    """The module canonicalising the successors of the model's module `model_text` (None where no
    rotation moves a bit: the search needs no reduction)."""
    lines = canon_lines(lay, packing_of(lay))
    if lines is None:
        return None
    return "\n".join([
        "from numba import njit",
        "",
        f"from {cache.module_name(RUNTIME)} import EXPAND_SIGNATURE, INT, OPTIONS, _bad_index",
        f"from {cache.module_name(model_text)} import expand as _expand",
        "",
        "",
        "@njit(INT(INT), **OPTIONS)",
        *lines,
        "",
        "",
        "@njit(EXPAND_SIGNATURE, **OPTIONS)",
        "def expand(s, out, acts, count, n):",
        "    done = False",
        "    final = False",
        "    try:",
        "        final = _expand(s, out, acts, count, n)",
        "        done = True",
        "    except Exception:",
        "        pass",
        "    for j in range(n, count[0]):",
        "        out[j] = canon(out[j])",
        "    if not done:",
        "        _bad_index(0)             # the model error, raised again",
        "    return final",
        "",
    ])


@dataclass(frozen=True)
class Reduction:
    """The search's successor function storing canonical forms, and the same canonical form in
    Python (initial states, traces)."""

    expand: Callable
    canon: Canon


def reduction(lay: Layout, module: ModuleType, model_text: str) -> Reduction | None:
    """The reduction of a model that declares `symmetry: players` and whose state is one word
    (`module`, of text `model_text`, is the model's); None where the search stores every state.
    Where no rotation moves a bit the canonical form is the state itself, as in the python store."""
    packing = packing_of(lay)
    if lay.model.symmetry != "players" or packing.words != 1:
        return None
    text = symmetric_source(lay, model_text)
    expand = module.expand if text is None else cache.load(text)[0].expand
    return Reduction(expand, canonicalizer(lay, packing))
