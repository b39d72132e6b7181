"""Packed states as numpy rows: one uint64 per state, or one row of several 64-bit words.

A packing of one word (`codegen.Packing.words`, states of at most 63 bits) keeps a batch of
states as a one-dimensional uint64 array, as the compact store always did. A wider packing
keeps one row of `words` columns per state: column j holds bits 64 j to 64 j + 63 of the
packed int (no slot straddles two words). These helpers convert between the two forms and
the packed ints of the reference code, and compare rows.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

WORD_MASK = (1 << 64) - 1


def as_rows(packed: Sequence[int], words: int) -> np.ndarray:
    """Packed ints as a batch of states of `words` words."""
    if words == 1:
        return np.asarray(packed, np.uint64).reshape(-1)
    return np.asarray([[(x >> (64 * j)) & WORD_MASK for j in range(words)] for x in packed],
                      np.uint64).reshape(-1, words)


def as_ints(S: np.ndarray) -> list[int]:
    """A batch of states as packed ints."""
    if S.ndim == 1:
        return S.tolist()
    out = S[:, 0].tolist()
    for j in range(1, S.shape[1]):
        out = [x | y << (64 * j) for x, y in zip(out, S[:, j].tolist())]
    return out


def key_at(S: np.ndarray, i: int) -> int:
    """The packed int of state `i` of a batch."""
    return int(S[i]) if S.ndim == 1 else as_ints(S[i:i + 1])[0]


def no_states(words: int) -> np.ndarray:
    """A batch of no states."""
    return np.zeros(0 if words == 1 else (0, words), np.uint64)


def rows_at(S: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The states of a batch at these indices (`np.take` gathers rows of words several times
    faster than indexing)."""
    return S[at] if S.ndim == 1 else np.take(S, at, axis=0)


def sort_keys(S: np.ndarray) -> tuple[np.ndarray, ...]:
    """The columns of a batch as `np.lexsort` keys (the states sorted by them: equal ones together)."""
    return (S,) if S.ndim == 1 else tuple(S[:, j] for j in reversed(range(S.shape[1])))


def differs_from_previous(S: np.ndarray) -> np.ndarray:
    """For each state of a batch but the first, whether it differs from the one before it."""
    if S.ndim == 1:
        return S[1:] != S[:-1]
    unequal = S[1:, 0] != S[:-1, 0]
    for j in range(1, S.shape[1]):
        unequal |= S[1:, j] != S[:-1, j]
    return unequal


M1, M2, M4 = np.uint64(0x5555555555555555), np.uint64(0x3333333333333333), np.uint64(0x0F0F0F0F0F0F0F0F)
H01 = np.uint64(0x0101010101010101)


def popcount(x: np.ndarray) -> np.ndarray:
    """The number of set bits of each uint64 (numpy before 2.0 has no `bitwise_count`)."""
    x = x - ((x >> np.uint64(1)) & M1)
    x = (x & M2) + ((x >> np.uint64(2)) & M2)
    x = (x + (x >> np.uint64(4))) & M4
    with np.errstate(over="ignore"):
        return ((x * H01) >> np.uint64(56)).astype(np.int64)
