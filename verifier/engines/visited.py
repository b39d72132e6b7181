"""The compact visited set: packed states in a numpy hash table, with parent links, spilling to disk.

A table of `capacity` slots in buckets of BUCKET: slot k holds ``key + 1`` (0 is
empty; keys are packed states of at most 63 bits) and ``ref[k]``, the parent
link: 0 for an initial state, else ``parent slot + 1`` (uint32, "slot" links)
or ``parent key + 1`` (uint64, "key" links: when partitions or disk runs hold
the parents). A key lives in the first bucket along its probe sequence (home
bucket, then the next ones) that had room when it was inserted, so a lookup
stops at the first bucket holding it or an empty slot. Everything is vectorised
over a batch of keys. The table grows by GROWTH when it passes MAX_LOAD full
(load between MAX_LOAD / GROWTH and MAX_LOAD), so with slot links it keeps
12 / load, 13 to 15.7 bytes per stored state; a growth moves the keys a slice
of the old table at a time, so it needs about 33 bytes a state at its peak.

With a byte budget, a table that would outgrow it is spilled instead: sorted
(key, parent key) runs are written under a temporary directory and read back
memory-mapped; the table starts empty again, with key links from then on.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import weakref

import numpy as np

BUCKET = 8
MAX_LOAD = 0.92
GROWTH = 1.2
REHASH_SLOTS = 1 << 18      # old slots moved at a time when the table grows
MIX = np.uint64(0x9E3779B97F4A7C15)
NONE = 0


def _first_byte(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For an (m, BUCKET) boolean matrix: (any per row, index of the first True per row)."""
    bits = rows.view(np.uint64).reshape(-1)
    low = bits & (~bits + np.uint64(1))
    return bits != 0, (np.log2(np.maximum(low, np.uint64(1)).astype(np.float64)) / 8).astype(np.int64)


def mix(keys: np.ndarray) -> np.ndarray:
    """A well-spread 64-bit hash of each key (Fibonacci hashing; wraps)."""
    h = keys >> np.uint64(29)
    h ^= keys
    with np.errstate(over="ignore"):
        h *= MIX
    return h


class VisitedTable:
    """A set of packed states with one parent link each (see the module docstring)."""

    def __init__(self, capacity: int = 1 << 14, links: str = "slot", budget_bytes: int | None = None):
        self.links = links
        self.budget = budget_bytes
        self.count = 0                 # states in the table
        self.spilled = 0               # states in disk runs
        self.followers: list[np.ndarray] = []   # arrays of slots a growth rewrites in place
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []
        self._dir: str | None = None
        if budget_bytes is not None:
            capacity = min(capacity, budget_bytes // 16)
        self._alloc(max(BUCKET, capacity))

    # ---- storage
    def _alloc(self, capacity: int) -> None:
        self.buckets = -(-capacity // BUCKET)
        self.keys = np.zeros((self.buckets, BUCKET), np.uint64)
        self.refs = np.zeros((self.buckets, BUCKET), np.uint32 if self.links == "slot" else np.uint64)

    @property
    def capacity(self) -> int:
        return self.buckets * BUCKET

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.refs.nbytes

    def __len__(self) -> int:
        return self.count + self.spilled

    def _home(self, keys: np.ndarray) -> np.ndarray:
        return ((mix(keys) >> np.uint64(32)) * np.uint64(self.buckets)) >> np.uint64(32)

    # ---- queries
    def find(self, keys: np.ndarray) -> np.ndarray:
        """The slot of each key in the table, -1 where absent (disk runs not searched)."""
        stored = keys + np.uint64(1)
        bucket = self._home(keys).astype(np.int64)
        out = np.full(keys.shape[0], -1, np.int64)
        pending = np.arange(keys.shape[0])
        while pending.size:
            rows = self.keys[bucket[pending]]
            found, at = _first_byte(rows == stored[pending, None])
            out[pending[found]] = bucket[pending[found]] * BUCKET + at[found]
            full = ~found & ~_first_byte(rows == 0)[0]
            pending = pending[full]
            bucket[pending] = (bucket[pending] + 1) % self.buckets
        return out

    def in_runs(self, keys: np.ndarray) -> np.ndarray:
        """Whether each key (sorted) is in a disk run."""
        seen = np.zeros(keys.shape[0], bool)
        for run_keys, _ in self.runs:
            at = np.searchsorted(run_keys, keys)
            ok = at < run_keys.shape[0]
            seen[ok] |= run_keys[at[ok]] == keys[ok]
        return seen

    def refs_of(self, keys: np.ndarray) -> np.ndarray:
        """The parent link that successors of these (stored) keys get."""
        if self.links == "key":
            return keys + np.uint64(1)
        slots = self.find(keys)
        assert (slots >= 0).all(), "a state being expanded is not in the table"
        return (slots + 1).astype(np.uint32)

    def parent_of(self, key: int) -> int | None:
        """The parent of a stored state, None for an initial state."""
        k = np.array([key], np.uint64)
        slot = int(self.find(k)[0])
        if slot >= 0:
            ref = int(self.refs.reshape(-1)[slot])
            if ref == NONE:
                return None
            return int(self.keys.reshape(-1)[ref - 1]) - 1 if self.links == "slot" else ref - 1
        for run_keys, run_refs in self.runs:
            at = int(np.searchsorted(run_keys, k)[0])
            if at < run_keys.shape[0] and int(run_keys[at]) == key:
                ref = int(run_refs[at])
                return None if ref == NONE else ref - 1
        raise KeyError(key)

    # ---- insertion
    def reserve(self, extra: int) -> None:
        """Room for `extra` more keys: grow, or spill when growing would pass the budget."""
        if self.count + extra <= MAX_LOAD * self.capacity:
            return
        capacity = max(int(self.capacity * GROWTH), int((self.count + extra) / MAX_LOAD * GROWTH) + BUCKET)
        grown_bytes = capacity * (self.keys.itemsize + self.refs.itemsize)
        if self.budget is not None and grown_bytes > self.budget and self.count:
            self.spill()
            if extra <= MAX_LOAD * self.capacity:
                return
        self._rehash(capacity)

    def insert(self, keys: np.ndarray, refs: np.ndarray, distinct: bool = True) -> np.ndarray:
        """Insert keys (absent from the disk runs) with their parent links; returns the mask of
        those that were new. Keys repeated within the batch need `distinct=False` (then one of
        each is new). Call `reserve(len(keys))` first."""
        return self.insert_at(keys, refs, distinct)[0]

    def insert_at(self, keys: np.ndarray, refs: np.ndarray, distinct: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """As `insert`, also returning the slot of every key (a growth rewrites the arrays in
        `followers`; a spill leaves no slots)."""
        new, slots = self._place(keys, refs, distinct)
        self.count += int(new.sum())
        return new, slots

    def _place(self, keys: np.ndarray, refs: np.ndarray, distinct: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(mask of the keys placed now, slot of every key)."""
        stored = keys + np.uint64(1)
        bucket = self._home(keys).astype(np.int64)
        new = np.zeros(keys.shape[0], bool)
        where = np.empty(keys.shape[0], np.int64)
        flat_keys, flat_refs = self.keys.reshape(-1), self.refs.reshape(-1)
        pending = np.arange(keys.shape[0])
        while pending.size:
            rows = self.keys[bucket[pending]]
            found, at = _first_byte(rows == stored[pending, None])
            where[pending[found]] = bucket[pending[found]] * BUCKET + at[found]
            has_room, free = _first_byte(rows == 0)
            room = ~found & has_room
            claim = pending[room]
            slots = bucket[claim] * BUCKET + free[room]
            if distinct:
                flat_keys[slots] = stored[claim]         # one key wins each free slot this round
                won = flat_keys[slots] == stored[claim]
            else:                                        # equal keys claim the same slot: one claim wins
                ticket = np.arange(claim.shape[0], dtype=flat_refs.dtype)
                flat_refs[slots] = ticket
                won = flat_refs[slots] == ticket
                flat_keys[slots[won]] = stored[claim[won]]
            winners, slots = claim[won], slots[won]
            flat_refs[slots] = refs[winners]
            new[winners] = True
            where[winners] = slots
            lost = ~won
            nxt = pending[~found & ~room]
            bucket[nxt] = (bucket[nxt] + 1) % self.buckets
            pending = np.concatenate([nxt, claim[lost]])
        return new, where

    def _rehash(self, capacity: int) -> None:
        """Move every key into a table of `capacity` slots, REHASH_SLOTS old slots at a time: at the
        peak, the old and the new table and (slot links) a uint32 map from old slot to new."""
        old_keys, old_refs = self.keys.reshape(-1), self.refs.reshape(-1)
        self._alloc(capacity)
        remap = np.zeros(old_keys.shape[0], np.uint32) if self.links == "slot" else None
        for lo in range(0, old_keys.shape[0], REHASH_SLOTS):
            occupied = lo + np.flatnonzero(old_keys[lo:lo + REHASH_SLOTS])
            slots = self._bulk_place(old_keys[occupied] - np.uint64(1), old_refs[occupied])
            if remap is not None:
                remap[occupied] = slots + 1
        del old_keys, old_refs
        if remap is not None:                      # the parent links and the followers name old slots
            for slots in self.followers:
                slots[:] = remap[slots] - np.uint32(1)
            flat_refs = self.refs.reshape(-1)
            for lo in range(0, flat_refs.shape[0], REHASH_SLOTS):
                part = flat_refs[lo:lo + REHASH_SLOTS]
                linked = np.flatnonzero(part)
                part[linked] = remap[part[linked].astype(np.int64) - 1]

    def _bulk_place(self, keys: np.ndarray, refs: np.ndarray) -> np.ndarray:
        """Place distinct keys absent from the table: each home bucket takes them directly into its
        free slots (a bucket's stored keys are always a prefix of it: nothing is ever removed), the
        rest probe on (`_place`). Returns every key's slot."""
        slots = np.empty(keys.shape[0], np.int64)
        if not keys.shape[0]:
            return slots
        home = self._home(keys).astype(np.int64)
        order = np.argsort(home, kind="stable")
        sorted_home = home[order]
        starts = np.flatnonzero(np.r_[True, sorted_home[1:] != sorted_home[:-1]])
        stored = (self.keys[sorted_home[starts]] != 0).sum(axis=1)
        rank = np.arange(keys.shape[0]) - np.repeat(starts - stored, np.diff(np.r_[starts, keys.shape[0]]))
        direct = rank < BUCKET
        flat = order[direct]
        slots[flat] = sorted_home[direct] * BUCKET + rank[direct]
        self.keys.reshape(-1)[slots[flat]] = keys[flat] + np.uint64(1)
        self.refs.reshape(-1)[slots[flat]] = refs[flat]
        rest = order[~direct]
        if rest.size:
            _, slots[rest] = self._place(keys[rest], refs[rest])
        return slots

    def spill(self) -> None:
        """Write the table to a sorted disk run (parents as keys) and empty it."""
        flat_keys, flat_refs = self.keys.reshape(-1), self.refs.reshape(-1)
        occupied = np.flatnonzero(flat_keys)
        keys = flat_keys[occupied] - np.uint64(1)
        refs = flat_refs[occupied].astype(np.uint64)
        if self.links == "slot":
            linked = refs != NONE
            refs[linked] = flat_keys[refs[linked].astype(np.int64) - 1]     # key + 1 of the parent
        order = np.argsort(keys)
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="turnproof-visited-")
            weakref.finalize(self, shutil.rmtree, self._dir, True)
        n = len(self.runs)
        paths = [os.path.join(self._dir, f"run{n}-{part}.npy") for part in ("keys", "refs")]
        np.save(paths[0], keys[order])
        np.save(paths[1], refs[order])
        del keys, refs, order, flat_keys, flat_refs
        self.runs.append((np.load(paths[0], mmap_mode="r"), np.load(paths[1], mmap_mode="r")))
        self.spilled += self.count
        self.followers = []
        self.count = 0
        capacity = self.capacity
        self.links = "key"
        self._alloc(capacity if self.budget is None else min(capacity, max(BUCKET, self.budget // 16)))

    def close(self) -> None:
        """Remove the disk runs (also done when the table is collected)."""
        self.runs = []
        if self._dir is not None:
            shutil.rmtree(self._dir, True)
            self._dir = None
