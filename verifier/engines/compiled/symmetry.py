"""Player symmetry in the compiled store: one stored state per orbit, as the python store stores.

For a model that declares `symmetry: players`, the python store keeps the canonical form of
every successor (`engines/symmetry.py`: the smallest packed state among its player rotations).
`symmetric_source` writes a small module beside the model's: `canon(x)`, the same rotations
compiled (`symmetry.canon_lines`; for a state of several words `canon_row`, the same rotations
word by word, the rotated rows compared from the most significant word), and an `expand` that
calls the model's `expand` and replaces
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
from verifier.engines.symmetry import Canon, Rotation, canon_lines, canonicalizer, rotation_parts
from verifier.semantics import Layout

POSITIVE = (1 << 63) - 1


def symmetric_source(lay: Layout, model_module: str) -> str | None:
    """The module canonicalising the successors of the model's module (imported under the name
    `model_module`; None where no rotation moves a bit: the search needs no reduction)."""
    packing = packing_of(lay)
    parts = rotation_parts(lay, packing)
    if parts is None:
        return None
    rows = packing.words > 1
    canon = row_canon_lines(parts, packing.words) if rows else canon_lines(lay, packing)
    assert canon is not None
    return "\n".join([
        "from numba import njit, types",
        "",
        f"from {cache.module_name(RUNTIME)} import EXPAND_ROWS_SIGNATURE, EXPAND_SIGNATURE, INT, OPTIONS, ROWS, _bad_index",
        f"from {model_module} import expand as _expand",
        "",
        "",
        "@njit(types.void(ROWS, INT), **OPTIONS)" if rows else "@njit(INT(INT), **OPTIONS)",
        *canon,
        "",
        "",
        "@njit(EXPAND_ROWS_SIGNATURE, **OPTIONS)" if rows else "@njit(EXPAND_SIGNATURE, **OPTIONS)",
        "def expand(keys, i, out, acts, count, n):" if rows else "def expand(s, out, acts, count, n):",
        "    done = False",
        "    final = False",
        "    try:",
        f"        final = _expand({'keys, i' if rows else 's'}, out, acts, count, n)",
        "        done = True",
        "    except Exception:",
        "        pass",
        "    for j in range(n, count[0]):",
        "        canon_row(out, j)" if rows else "        out[j] = canon(out[j])",
        "    if not done:",
        "        _bad_index(0)             # the model error, raised again",
        "    return final",
        "",
    ])


def row_canon_lines(parts: Rotation, words: int) -> list[str]:
    """The source of `canon_row(out, j)`: row j of `out` (a state of several words) replaced by its
    canonical form, the smallest packed int among its rotations (`symmetry.canon_lines` for one
    word): the rotated words compared from the last (most significant) one. No field straddles
    two words, and each word keeps below 2^63 (the int64 arithmetic's positive values)."""
    n = parts.players
    lines = ["def canon_row(out, j):"]
    lines += [f"    x{k} = out[j, {k}]" for k in range(words)]
    lines += [f"    best{k} = x{k}" for k in range(words)]
    lines += [f"    rest{k} = x{k} & {~(parts.moved >> (64 * k)) & POSITIVE}" for k in range(words)]
    for shift, w in parts.blocks:
        k, at = divmod(shift, 64)
        lines.append(f"    b{shift} = (x{k} >> {at}) & {(1 << (w * n)) - 1}")
    for shift, w, lo in parts.scalars:
        k, at = divmod(shift, 64)
        lines.append(f"    a{shift} = ((x{k} >> {at}) & {(1 << w) - 1}) + {lo}")
    for shift, w, lo in parts.aims:
        k, at = divmod(shift, 64)
        lines += [f"    e{shift}_{p} = ((x{k} >> {at + p * w}) & {(1 << w) - 1}) + {lo}" for p in range(n)]
    smaller = "y0 < best0"
    for k in range(1, words):
        smaller = f"y{k} < best{k} or (y{k} == best{k} and ({smaller}))"
    for r in range(1, n):
        terms: list[list[str]] = [[f"rest{k}"] for k in range(words)]
        for shift, w in parts.blocks:
            k, at = divmod(shift, 64)
            mask = (1 << (w * n)) - 1
            terms[k].append(f"((((b{shift} << {r * w}) | (b{shift} >> {(n - r) * w})) & {mask}) << {at})")
        for shift, _w, lo in parts.scalars:
            k, at = divmod(shift, 64)
            terms[k].append(f"((((a{shift} + {r}) % {n}) - {lo}) << {at})")
        for shift, w, lo in parts.aims:       # player p's target t becomes player p + r's target t + r
            k, at = divmod(shift, 64)
            terms[k] += [f"((((e{shift}_{p} + {r}) % {n}) - {lo}) << {at + ((p + r) % n) * w})" for p in range(n)]
        lines += [f"    y{k} = {' | '.join(terms[k])}" for k in range(words)]
        lines += [f"    if {smaller}:", *[f"        best{k} = y{k}" for k in range(words)]]
    lines += [f"    out[j, {k}] = best{k}" for k in range(words)]
    return lines


@dataclass(frozen=True)
class Reduction:
    """The search's successor function storing canonical forms, and the same canonical form in
    Python (initial states, traces)."""

    expand: Callable
    canon: Canon


def reduction(lay: Layout, module: ModuleType, name: str) -> Reduction | None:
    """The reduction of a model that declares `symmetry: players` (`module`, imported under
    `name`, is the model's); None where the search stores every state.
    Where no rotation moves a bit the canonical form is the state itself, as in the python store."""
    packing = packing_of(lay)
    if lay.model.symmetry != "players":
        return None
    text = symmetric_source(lay, name)
    expand = module.expand if text is None else cache.load(text)[0].expand
    return Reduction(expand, canonicalizer(lay, packing))
