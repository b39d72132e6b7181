"""The compact visited set: packed states in a numpy hash table, with parent links, spilling to disk.

A table of `capacity` slots in buckets of BUCKET: slot k holds ``key + 1`` (0 is
empty; keys are packed states of at most 63 bits) and ``ref[k]``, the parent
link, NONE for an initial state. A table of `words` > 1 holds wider states as
rows of words (`words.py`): word 0 plus 1 in `keys`, the others in `high`, and
hashes the whole row. The parent link is, for an initial state NONE, else:

- "hash" links (uint32): the parent's `fingerprint`, the high 32 bits of its
  hash. Every key with those bits has the same home bucket, so the parent is one
  of the few keys along that bucket's probe sequence (or in a disk run). Where
  several stored states share the bits (a chance of about states / 2^32 for
  each link), `parent_of` keeps those with a firing to the child, then the one
  with the shortest chain: traces stay shortest and replay, and are the
  reference search's unless two parents at the same depth share the bits. The
  link names no place in the table, so a growth moves keys without rewriting
  links.
- "key" links (uint64): ``parent key + 1``, for the distributed search (the
  parents are in other partitions). A `stamped` table (the distributed search's)
  also marks each slot with the BFS level it was inserted in (`stamps`, one byte,
  STAMPS levels before they are all cleared and counted again): `offer` keeps, for a
  state inserted in the current level, the smallest parent link offered during it,
  so a state's parent does not depend on the order its offers arrived in.

A key lives in the first bucket along its probe sequence (home bucket, then the
next ones) that had room when it was inserted, so a lookup stops at the first
bucket holding it or an empty slot. Everything is vectorised over a batch of
keys. The table grows by GROWTH when it passes MAX_LOAD full (load between
MAX_LOAD / GROWTH and MAX_LOAD: 13 to 15.7 bytes a state with hash links).

A growth moves the old slots in order, REHASH_SLOTS at a time, and gives each
moved slice's whole pages back to the system at once (`give_back_pages`). Home
buckets follow the hash's order in both tables (multiplicative range
reduction), so the new table's pages are written in the same order as the old
ones are given back: at the peak of a growth the process holds about the new
table alone, not the old and the new one.

With a byte budget, a table that would outgrow it is spilled instead: runs of
(hash, parent link) sorted by hash (`mix` is a bijection: the hash names the
key; a table of several words adds the rows, which their hash does not name)
are written under a temporary directory and read back memory-mapped; the table
starts empty again.
"""
from __future__ import annotations

import math
import os
import shutil
import tempfile
import weakref
from collections.abc import Callable

import numpy as np

from verifier.engines.memory import give_back_pages
from verifier.engines.words import as_ints, as_rows, rows_at

BUCKET = 8
MAX_LOAD = 0.92
GROWTH = 1.2
REHASH_SLOTS = 1 << 18      # old slots moved at a time when the table grows
MIX = np.uint64(0x9E3779B97F4A7C15)
UNMIX = np.uint64(pow(0x9E3779B97F4A7C15, -1, 1 << 64))
NONE = 0
STAMPS = 255                # a stamped table's levels counted before every stamp is cleared (0: none)

Reaches = Callable[[int, int], bool]     # reaches(source, target): source has a firing to target


def _first_byte(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For an (m, BUCKET) boolean matrix: (any per row, index of the first True per row)."""
    bits = rows.view(np.uint64).reshape(-1)
    low = bits & (~bits + np.uint64(1))
    return bits != 0, (np.log2(np.maximum(low, np.uint64(1)).astype(np.float64)) / 8).astype(np.int64)


def mix(keys: np.ndarray) -> np.ndarray:
    """A well-spread 64-bit hash of each key (Fibonacci hashing; wraps; a bijection)."""
    h = keys >> np.uint64(29)
    h ^= keys
    with np.errstate(over="ignore"):
        h *= MIX
    return h


def unmix(hashes: np.ndarray) -> np.ndarray:
    """The keys whose `mix` these are."""
    with np.errstate(over="ignore"):
        k = hashes * UNMIX
    return k ^ (k >> np.uint64(29)) ^ (k >> np.uint64(58))


def hash_rows(keys: np.ndarray) -> np.ndarray:
    """`mix` of each key; for rows of several words, the words mixed in one after the other."""
    if keys.ndim == 1:
        return mix(keys)
    h = mix(keys[:, 0])
    for j in range(1, keys.shape[1]):
        h = mix(h ^ keys[:, j])
    return h


def fingerprint(keys: np.ndarray) -> np.ndarray:
    """The hash link that names these keys as parents: the high 32 bits of their hash, at least 1."""
    return np.maximum(hash_rows(keys) >> np.uint64(32), np.uint64(1)).astype(np.uint32)


class VisitedTable:
    """A set of packed states with one parent link each (see the module docstring)."""

    def __init__(self, capacity: int = 1 << 14, links: str = "hash", budget_bytes: int | None = None,
                 words: int = 1, stamped: bool = False):
        if links not in ("hash", "key") or (links == "key" and words > 1):
            raise ValueError(f"links must be 'hash' or ('key' for one word), not {links!r}")
        if stamped and links != "key":
            raise ValueError("only a table with key links is stamped")
        self.links = links
        self.words = words
        self.stamped = stamped
        self.stamp = 1                 # the current level's stamp (`next_level`)
        self.budget = budget_bytes
        self.count = 0                 # states in the table
        self.spilled = 0               # states in disk runs
        self.runs: list[tuple[np.ndarray, ...]] = []     # (sorted hashes, parent links[, rows])
        self._dir: str | None = None
        if budget_bytes is not None:
            capacity = min(capacity, budget_bytes // self.slot_bytes)
        self._alloc(max(BUCKET, capacity))

    # ---- storage
    @property
    def slot_bytes(self) -> int:
        return 8 * self.words + (4 if self.links == "hash" else 8) + self.stamped

    def _alloc(self, capacity: int) -> None:
        self.buckets = -(-capacity // BUCKET)
        self.keys = np.zeros((self.buckets, BUCKET), np.uint64)
        self.refs = np.zeros((self.buckets, BUCKET), np.uint32 if self.links == "hash" else np.uint64)
        self.high = np.zeros((self.buckets, BUCKET, self.words - 1), np.uint64)
        self.stamps = np.zeros((self.buckets if self.stamped else 0, BUCKET), np.uint8)

    @property
    def capacity(self) -> int:
        return self.buckets * BUCKET

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.refs.nbytes + self.high.nbytes + self.stamps.nbytes

    def __len__(self) -> int:
        return self.count + self.spilled

    def _home(self, keys: np.ndarray) -> np.ndarray:
        return self._home_of_high(hash_rows(keys) >> np.uint64(32))

    def _home_of_high(self, high: np.ndarray) -> np.ndarray:
        """The home bucket of keys whose hash has these high 32 bits."""
        return (high * np.uint64(self.buckets)) >> np.uint64(32)

    def _stored(self, keys: np.ndarray) -> np.ndarray:
        """What `keys` holds for each key: its word 0 plus 1."""
        return (keys if keys.ndim == 1 else keys[:, 0]) + np.uint64(1)

    def _equal(self, rows: np.ndarray, buckets: np.ndarray, stored: np.ndarray, keys: np.ndarray,
               pending: np.ndarray) -> np.ndarray:
        """Which slots of the buckets (their `keys` rows given) hold each pending key."""
        eq = rows == stored[:, None]
        if self.words > 1:                       # the other words, where word 0 matches
            hit = np.flatnonzero(eq.view(np.uint64).reshape(-1))      # a bucket's BUCKET bools: 8 bytes
            if not hit.size:
                return eq
            lane, at = np.nonzero(eq[hit])
            lane = hit[lane]
            other = ~(self.high[buckets[lane], at] == np.take(keys, pending[lane], axis=0)[:, 1:]).all(axis=1)
            eq[lane[other], at[other]] = False
        return eq

    # ---- queries
    def find(self, keys: np.ndarray) -> np.ndarray:
        """The slot of each key in the table, -1 where absent (disk runs not searched)."""
        stored = self._stored(keys)
        bucket = self._home(keys).astype(np.int64)
        out = np.full(keys.shape[0], -1, np.int64)
        pending = np.arange(keys.shape[0])
        while pending.size:
            rows = self.keys[bucket[pending]]
            found, at = _first_byte(self._equal(rows, bucket[pending], stored[pending], keys, pending))
            out[pending[found]] = bucket[pending[found]] * BUCKET + at[found]
            full = ~found & ~_first_byte(rows == 0)[0]
            pending = pending[full]
            bucket[pending] = (bucket[pending] + 1) % self.buckets
        return out

    def in_runs(self, keys: np.ndarray) -> np.ndarray:
        """Whether each key is in a disk run."""
        seen = np.zeros(keys.shape[0], bool)
        hashes = hash_rows(keys)
        for run in self.runs:
            run_hashes = run[0]
            at = np.searchsorted(run_hashes, hashes)
            if self.words == 1:
                ok = at < run_hashes.shape[0]
                seen[ok] |= run_hashes[at[ok]] == hashes[ok]
                continue
            pending = np.flatnonzero(at < run_hashes.shape[0])     # rows sharing a hash lie together
            while pending.size:
                pending = pending[run_hashes[at[pending]] == hashes[pending]]
                hit = (run[2][at[pending]] == keys[pending]).all(axis=1)
                seen[pending[hit]] = True
                pending = pending[~hit]
                at[pending] += 1
                pending = pending[at[pending] < run_hashes.shape[0]]
        return seen

    def refs_of(self, keys: np.ndarray) -> np.ndarray:
        """The parent link that successors of these keys get."""
        return fingerprint(keys) if self.links == "hash" else keys + np.uint64(1)

    def parent_of(self, key: int, reaches: Reaches | None = None) -> int | None:
        """The parent of a stored state, None for an initial state. With hash links, `reaches`
        tells apart the states that share the parent's fingerprint (see the module docstring)."""
        return self._parent(key, reaches, frozenset())

    def _parent(self, key: int, reaches: Reaches | None, visiting: frozenset[int]) -> int | None:
        ref = self._ref(key)
        if ref == NONE:
            return None
        if self.links == "key":
            return ref - 1
        candidates = self._holders(ref)
        if len(candidates) > 1 and reaches is not None:
            candidates = [c for c in candidates if reaches(c, key)]
        if not candidates:
            raise KeyError(f"the parent of {key} is not stored")
        if len(candidates) > 1:
            candidates.sort(key=lambda c: (self._depth(c, reaches, visiting | {key}), c))
        return candidates[0]

    def _depth(self, key: int, reaches: Reaches | None, visiting: frozenset[int]) -> float:
        """The length of `key`'s chain (infinite where it comes back to a state in `visiting`)."""
        steps = 0
        seen = set(visiting)
        current: int | None = key
        while current is not None:
            if current in seen:
                return math.inf
            seen.add(current)
            current = self._parent(current, reaches, frozenset(seen))
            steps += 1
        return steps - 1

    def _ref(self, key: int) -> int:
        """The parent link stored with a key (table or disk run)."""
        k = as_rows([key], self.words)
        slot = int(self.find(k)[0])
        if slot >= 0:
            return int(self.refs.reshape(-1)[slot])
        h = hash_rows(k)
        for run in self.runs:
            run_hashes, run_refs = run[0], run[1]
            at = int(np.searchsorted(run_hashes, h)[0])
            while at < run_hashes.shape[0] and run_hashes[at] == h[0]:
                if self.words == 1 or (run[2][at] == k[0]).all():
                    return int(run_refs[at])
                at += 1
        raise KeyError(key)

    def _holders(self, link: int) -> list[int]:
        """The stored keys whose fingerprint is `link` (table and disk runs)."""
        bucket = int(self._home_of_high(np.asarray([link], np.uint64))[0])
        found: list[int] = []
        for _ in range(self.buckets):
            row = self.keys[bucket]
            stored = row[row != 0] - np.uint64(1)
            if self.words > 1:
                stored = np.concatenate([stored[:, None], self.high[bucket][row != 0]], axis=1)
            found.extend(as_ints(stored[fingerprint(stored) == link]))
            if stored.shape[0] < BUCKET:
                break
            bucket = (bucket + 1) % self.buckets
        lo = np.uint64(0 if link == 1 else link << 32)      # fingerprint 1 also stands for 0
        hi = np.uint64((link + 1) << 32) if link + 1 < 1 << 32 else None
        for run in self.runs:
            run_hashes = run[0]
            first = int(np.searchsorted(run_hashes, lo))
            last = run_hashes.shape[0] if hi is None else int(np.searchsorted(run_hashes, hi))
            found.extend(as_ints(unmix(np.asarray(run_hashes[first:last])) if self.words == 1
                                 else np.asarray(run[2][first:last])))
        return sorted(found)

    # ---- insertion
    def reserve(self, extra: int) -> None:
        """Room for `extra` more keys: grow, or spill when growing would pass the budget."""
        if self.count + extra <= MAX_LOAD * self.capacity:
            return
        capacity = max(int(self.capacity * GROWTH), int((self.count + extra) / MAX_LOAD * GROWTH) + BUCKET)
        if self.budget is not None and capacity * self.slot_bytes > self.budget and self.count:
            self.spill()
            if self.count + extra <= MAX_LOAD * self.capacity:
                return
        self._rehash(capacity)

    def insert(self, keys: np.ndarray, refs: np.ndarray, distinct: bool = True) -> np.ndarray:
        """Insert keys (absent from the disk runs) with their parent links; returns the mask of
        those that were new. Keys repeated within the batch need `distinct=False` (then one of
        each is new). Call `reserve(len(keys))` first."""
        new = self._place(keys, refs, distinct)
        self.count += int(new.sum())
        return new

    def offer(self, keys: np.ndarray, refs: np.ndarray) -> np.ndarray:
        """`insert` (keys may repeat) into a stamped table, the new keys stamped with the current
        level; a key already inserted in this level keeps the smallest link offered for it. Returns
        the mask of the new keys. Call `reserve(len(keys))` first."""
        slots = np.empty(keys.shape[0], np.int64)
        new = self._place(keys, refs, False, slots)
        self.count += int(new.sum())
        flat_refs = self.refs.reshape(-1)
        again = ~new
        again[again] = self.stamps.reshape(-1)[slots[again]] == self.stamp
        np.minimum.at(flat_refs, slots[again], refs[again])
        return new

    def next_level(self) -> None:
        """Stamp the keys inserted from now on with the next level's stamp."""
        self.stamp += 1
        if self.stamp > STAMPS:
            self.stamps.fill(0)
            self.stamp = 1

    def _place(self, keys: np.ndarray, refs: np.ndarray, distinct: bool = True,
               slots_out: np.ndarray | None = None) -> np.ndarray:
        """The mask of the keys placed now (the others were in the table already); `slots_out`,
        where given, receives each key's slot."""
        stored = self._stored(keys)
        bucket = self._home(keys).astype(np.int64)
        new = np.zeros(keys.shape[0], bool)
        flat_keys, flat_refs = self.keys.reshape(-1), self.refs.reshape(-1)
        pending = np.arange(keys.shape[0])
        while pending.size:
            rows = self.keys[bucket[pending]]
            found, at = _first_byte(self._equal(rows, bucket[pending], stored[pending], keys, pending))
            if slots_out is not None:
                slots_out[pending[found]] = bucket[pending[found]] * BUCKET + at[found]
            has_room, free = _first_byte(rows == 0)
            room = ~found & has_room
            claim = pending[room]
            slots = bucket[claim] * BUCKET + free[room]
            if distinct and self.words == 1:
                flat_keys[slots] = stored[claim]         # one key wins each free slot this round
                won = flat_keys[slots] == stored[claim]
            else:                                        # keys alike in word 0 claim a slot: one claim wins
                ticket = np.arange(claim.shape[0], dtype=flat_refs.dtype)
                flat_refs[slots] = ticket
                won = flat_refs[slots] == ticket
                flat_keys[slots[won]] = stored[claim[won]]
            winners = claim[won]
            flat_refs[slots[won]] = refs[winners]
            if self.stamped:
                self.stamps.reshape(-1)[slots[won]] = self.stamp
            if slots_out is not None:
                slots_out[winners] = slots[won]
            if self.words > 1:
                self.high.reshape(self.capacity, self.words - 1)[slots[won]] = np.take(keys, winners, axis=0)[:, 1:]
            new[winners] = True
            nxt = pending[~found & ~room]
            bucket[nxt] = (bucket[nxt] + 1) % self.buckets
            pending = np.concatenate([nxt, claim[~won]])
        return new

    def _rehash(self, capacity: int) -> None:
        """Move every key into a table of `capacity` slots, REHASH_SLOTS old slots at a time in
        order, giving each moved slice's pages back (see the module docstring)."""
        old_keys, old_refs = self.keys.reshape(-1), self.refs.reshape(-1)
        old_high, old_stamps = self.high.reshape(self.capacity, self.words - 1), self.stamps.reshape(-1)
        self._alloc(capacity)
        for lo in range(0, old_keys.shape[0], REHASH_SLOTS):
            occupied = lo + np.flatnonzero(old_keys[lo:lo + REHASH_SLOTS])
            self._bulk_place(self._rows(old_keys, old_high, occupied), old_refs[occupied],
                             old_stamps[occupied] if self.stamped else None)
            give_back_pages(old_keys, lo, lo + REHASH_SLOTS)
            give_back_pages(old_refs, lo, lo + REHASH_SLOTS)
            if self.words > 1:
                give_back_pages(old_high.reshape(-1), lo * (self.words - 1), (lo + REHASH_SLOTS) * (self.words - 1))

    def _rows(self, flat_keys: np.ndarray, flat_high: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """The keys held in these (occupied) slots of a table's flat arrays."""
        first = flat_keys[slots] - np.uint64(1)
        return first if self.words == 1 else np.concatenate([first[:, None], np.take(flat_high, slots, axis=0)], axis=1)

    def _bulk_place(self, keys: np.ndarray, refs: np.ndarray, stamps: np.ndarray | None = None) -> None:
        """Place distinct keys absent from the table (with their `stamps` in a stamped table): each
        home bucket takes them directly into its free slots (a bucket's stored keys are always a
        prefix of it: nothing is ever removed), the rest probe on (`_place`)."""
        if not keys.shape[0]:
            return
        home = self._home(keys).astype(np.int64)
        order = np.argsort(home, kind="stable")
        sorted_home = home[order]
        starts = np.flatnonzero(np.r_[True, sorted_home[1:] != sorted_home[:-1]])
        stored = (self.keys[sorted_home[starts]] != 0).sum(axis=1)
        rank = np.arange(keys.shape[0]) - np.repeat(starts - stored, np.diff(np.r_[starts, keys.shape[0]]))
        direct = rank < BUCKET
        flat = order[direct]
        slots = sorted_home[direct] * BUCKET + rank[direct]
        placed = rows_at(keys, flat)
        self.keys.reshape(-1)[slots] = self._stored(placed)
        self.refs.reshape(-1)[slots] = refs[flat]
        if self.words > 1:
            self.high.reshape(self.capacity, self.words - 1)[slots] = placed[:, 1:]
        if stamps is not None:
            self.stamps.reshape(-1)[slots] = stamps[flat]
        rest = order[~direct]
        if rest.size:
            where = np.empty(rest.shape[0], np.int64)
            self._place(rows_at(keys, rest), refs[rest], slots_out=where)
            if stamps is not None:
                self.stamps.reshape(-1)[where] = stamps[rest]

    def spill(self) -> None:
        """Write the table to a disk run sorted by hash and empty it; a stamped table keeps the keys
        of the current level (their parent links may still change: `offer`)."""
        flat_keys = self.keys.reshape(-1)
        occupied = np.flatnonzero(flat_keys)
        kept = None
        if self.stamped:
            current = self.stamps.reshape(-1)[occupied] == self.stamp
            at = occupied[current]
            kept = (self._rows(flat_keys, self.high.reshape(self.capacity, 0), at), self.refs.reshape(-1)[at])
            occupied = occupied[~current]
        self.spilled += occupied.shape[0]
        rows = self._rows(flat_keys, self.high.reshape(self.capacity, self.words - 1), occupied)
        hashes = hash_rows(rows)
        order = np.argsort(hashes)
        parts = [hashes[order], self.refs.reshape(-1)[occupied[order]]]
        if self.words > 1:
            parts.append(rows[order])
        del occupied, flat_keys, rows, hashes, order
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="turnproof-visited-")
            weakref.finalize(self, shutil.rmtree, self._dir, True)
        n = len(self.runs)
        paths = [os.path.join(self._dir, f"run{n}-{part}.npy") for part in ("hashes", "refs", "rows")[:len(parts)]]
        for path, part in zip(paths, parts):
            np.save(path, part)
        del parts
        self.runs.append(tuple(np.load(path, mmap_mode="r") for path in paths))
        self.count = 0
        capacity = self.capacity
        self.keys = np.zeros((0, BUCKET), np.uint64)          # the old table goes before the new one comes
        self.refs = np.zeros((0, BUCKET), self.refs.dtype)
        self.high = np.zeros((0, BUCKET, self.words - 1), np.uint64)
        self.stamps = np.zeros((0, BUCKET), np.uint8)
        self._alloc(capacity if self.budget is None else min(capacity, max(BUCKET, self.budget // self.slot_bytes)))
        if kept is not None:
            self.reserve(kept[0].shape[0])
            self._bulk_place(*kept, np.full(kept[0].shape[0], self.stamp, np.uint8))
            self.count = kept[0].shape[0]

    def close(self) -> None:
        """Remove the disk runs (also done when the table is collected)."""
        self.runs = []
        if self._dir is not None:
            shutil.rmtree(self._dir, True)
            self._dir = None
