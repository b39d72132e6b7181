"""The compiled search's arrays, their growth and their spill to disk.

The loop (`numbagen.loop_source`) keeps, for n stored states of w words:

- `keys`: the states in BFS order, 8w bytes each; the frontier is the range of it not yet
  expanded. It grows by a sixteenth at a time (`realloc`, whose pages are moved, not copied):
  at most 8w/16 bytes a state of room held ahead;
- `table`: the visited table, 4-byte slots, at most MAX_LOAD full; the old one is let go of and
  the new one filled from the stored states (`_regrow`: never two tables at once; the states read
  in order, the slots written ahead), each growth filling it again from every state stored. In a
  search with a state cap (every search the portfolio runs: the cap follows --max-memory) it
  doubles (CAPPED_GROWTH) once CAPPED_LOAD full while the states are fewer than 1/JUMP of the cap,
  and a growth past that goes straight to the table of the cap's states (and one state's
  successors), which fills up to MAX_LOAD: between 6.7 and 13.3 bytes a state stored while small,
  at most 5 a state of the cap. So a large search fills its table again once, while it is small,
  not at every doubling up to it (a WTactics reading's 6.9 M states: 11 growths, the last two from
  3.1 and 6.3 M states, at up to 60 % full; now 8, the last from 0.8 M), and its table runs less
  full; without a cap it grows by GROWTH once MAX_LOAD full: between 4 / MAX_LOAD
  and 4 * GROWTH / MAX_LOAD bytes, 5 to 7, a state. Linear probing's lookups grow long as the table
  fills (a successful one at 80 % full took twice the time of one at 40 % in a probe of 23.5 M lookups:
  bench/README.md, "The search loop's per-state speed"), so a table the cap leaves room to grow does
  so before that;
- `links`, `marks`: the parent links, a bit string of at most 2 bits a state;
- `levels`: the first index of each level.

So a state of one word takes at most 8.5 + 7.0 + 0.25 < 16 bytes at the peak of a search without a
cap, and each further word 8.5 more; with a cap at most 8.75 bytes a state stored and 5 a state of
the cap, so at most 13.75 < 16 a state of the cap (what --max-memory's arithmetic counts:
`portfolio/stores.py`, `states_in`), but up to 22.1 a state stored just after the table doubled
in a search that stops well short of its cap (doubling fills the table again from about 1 times
the states of its last growth in all where growing by 1.4 fills it from 2.5 times: bench/README.md,
"The visited table's growth"), and up to 5 * JUMP just after it grew to the cap's table (80 MB
at the compiled store's cap of 16 M states). A search that records its state graph (`EdgeArrays`: the lassos'
claims ask for it) takes 9 bytes a state more (`offsets`, `stuck`, grown with `keys`) and 8 a
transition (`dst`, `lab`, grown by 1/KEY_GROWTH of them at a time, at least MIN_KEY_GROWTH),
never spilled: the memory guard counts them, and stops the search (UNKNOWN, with the reason)
where they would pass the limit. With `spill_bytes` (the share of the memory limit the states may
take), states that would pass it are kept in a file instead (an unlinked temporary file,
memory-mapped: `spill`): the process holds the table and the links, and the system's page cache
(or the disk) the states; the memory guard counts the process's anonymous memory from then on
(`resources.memory.hold_spill_file`), so the file's pages, which the system writes back and
drops when memory runs short, are not held against the limit. Lookups read a state only where
its slot's tag matches. A search known to store at least some states (a monitor product: its
model's; `search.first_capacity`) is given room for them from the start: its table is not filled
again on the way there (in the file at once where they would pass `spill_bytes`). With a cap its
first table is FIRST_LOAD full with them (10 bytes a state it is known to store), so it first
doubles past 1.5 times them: a WTactics product has 1.2 times its model's states, an Aeon's End
product exactly as many (where a table sized for them at CAPPED_LOAD filled again from all of them
at once to make room for the last state's successors).
"""
from __future__ import annotations

import math
import mmap
import os
import tempfile
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from verifier.resources.memory import hold_spill_file

MAX_LOAD = 0.8                 # the visited table's slots that may be full
CAPPED_LOAD = 0.6              # full past this, a capped search's table doubles (but its cap's table: MAX_LOAD)
FIRST_LOAD = 0.4               # a capped search's first table, this full with the states it is sized for
GROWTH = 1.4                   # the table's growth in a search without a state cap
CAPPED_GROWTH = 2              # and with one (never past the table of the cap's states)
JUMP = 32                      # past 1/JUMP of its cap's states, a capped search's table grows to the cap's
KEY_GROWTH = 16                # the states' array grows by 1/KEY_GROWTH (at least MIN_KEY_GROWTH states)
MIN_KEY_GROWTH = 1 << 12
MARK_BITS = 16                 # numbagen's: one link in 2^MARK_BITS has its place noted


def table_size(states: int, load: float = MAX_LOAD) -> int:
    """Slots of a visited table for `states` states (`load` full at most)."""
    return max(8, math.ceil(states / load) + 1)


def index_bits(size: int) -> int:
    """Bits of a slot that hold index + 1 of a state in a table of `size` slots (the rest: tag)."""
    bits = (room(size) + 1).bit_length()
    if bits > 32:
        raise MemoryError("more than 2^32 states in one visited table")
    return bits


def room(size: int) -> int:
    """States a table of `size` slots takes."""
    return int(size * MAX_LOAD)


class Mapping:
    """An array of int64 rows (or uint32) in a memory mapping of its own, anonymous or of a file:
    given back to the system as soon as it is let go of (not kept by the allocator), grown and
    shrunk in place (`mremap`: the pages are moved, not copied)."""

    def __init__(self, dtype: type, shape: tuple[int, ...], fd: int | None = None):
        self.dtype = np.dtype(dtype)
        self.row = shape[1:]
        self.fd = fd
        size = self._bytes(shape[0])
        if fd is None:            # private: a shared anonymous mapping could not grow past its first size
            self.map = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            if hasattr(mmap, "MADV_HUGEPAGE"):      # huge pages where the system gives them on request:
                # a third of the page faults, and fewer misses of the address cache on the table's random reads
                self.map.madvise(mmap.MADV_HUGEPAGE)
        else:
            os.ftruncate(fd, size)
            self.map = mmap.mmap(fd, size)

    def _bytes(self, rows: int) -> int:
        return max(mmap.PAGESIZE, rows * self.dtype.itemsize * (math.prod(self.row) if self.row else 1))

    def array(self, rows: int) -> np.ndarray:
        """A view of the first `rows` rows (the mapping stays while a view lives)."""
        count = rows * (math.prod(self.row) if self.row else 1)
        return np.frombuffer(self.map, self.dtype, count).reshape((rows, *self.row))

    def resize(self, rows: int) -> None:
        """Room for `rows` rows, the first ones kept (no view may be alive)."""
        self.map.resize(self._bytes(rows))


@dataclass
class EdgeArrays:
    """The state graph a search recorded (`numbagen.loop_source`), by source: state i's transitions
    are offsets[i] to offsets[i + 1] of `dst` (targets) and `lab` (actions), in firing order."""

    offsets: np.ndarray         # int64, a slot per stored state and one more (none past the expanded ones)
    dst: np.ndarray             # int32
    lab: np.ndarray             # int32
    stuck: np.ndarray           # uint8, a slot per expanded state: 1 where it is not final and has no successor


class _Recorder:
    """The growing arrays of the state graph a search records (`EdgeArrays`)."""

    def __init__(self, capacity: int):
        self._offsets = Mapping(np.int64, (capacity + 1,))
        self._stuck = Mapping(np.uint8, (capacity,))
        self._dst = Mapping(np.int32, (capacity,))
        self._lab = Mapping(np.int32, (capacity,))
        self._view(capacity, capacity)

    def _view(self, states: int, edges: int) -> None:
        self.offsets, self.stuck = self._offsets.array(states + 1), self._stuck.array(states)
        self.dst, self.lab = self._dst.array(edges), self._lab.array(edges)

    @property
    def nbytes(self) -> int:
        return int(self.offsets.nbytes + self.stuck.nbytes + self.dst.nbytes + self.lab.nbytes)

    def grow(self, states: int, edges: int) -> None:
        """Room for `states` states and `edges` transitions (the first ones kept)."""
        del self.offsets, self.stuck, self.dst, self.lab
        self._offsets.resize(states + 1)
        self._stuck.resize(states)
        self._dst.resize(edges)
        self._lab.resize(edges)
        self._view(states, edges)

    def finish(self, head: int, stored: int) -> EdgeArrays:
        """The graph of the `head` states expanded among `stored`: the arrays cut to their size."""
        edges = int(self.offsets[head])
        self.offsets[head + 1:stored + 1] = edges
        del self.offsets, self.stuck, self.dst, self.lab
        self._offsets.resize(stored + 1)
        self._stuck.resize(head)
        self._dst.resize(edges)
        self._lab.resize(edges)
        return EdgeArrays(self._offsets.array(stored + 1), self._dst.array(edges), self._lab.array(edges),
                          self._stuck.array(head))


class SearchArrays:
    """The arrays of one compiled search (see the module docstring); `edges`: it records the state
    graph (`graph`, a `_Recorder`; else `graph` is None and the loop is given arrays of one slot)."""

    def __init__(self, words: int, capacity: int, spill_bytes: int | None = None, edges: bool = False,
                 max_states: int | None = None):
        self.words = words
        self.max_states = max_states       # the search's state cap (None: none)
        self.row = () if words == 1 else (words,)
        self._keys = Mapping(np.int64, (capacity, *self.row))
        self.keys = self._keys.array(capacity)
        self.graph = _Recorder(capacity) if edges else None
        size = table_size(capacity)
        if max_states is not None:
            size = max(size, min(table_size(capacity, FIRST_LOAD), table_size(max_states)))
        self._table = Mapping(np.uint32, (size,))
        self.table = self._table.array(size)
        self.bits = index_bits(size)
        self.links = np.zeros(capacity // 32 + 1, np.uint64)
        self.marks = np.zeros((capacity >> MARK_BITS) + 1, np.int64)
        self.levels = np.empty(64, np.int64)
        self.spill_bytes = spill_bytes
        self.peak = 0                      # the arrays' largest total bytes so far
        self.spilled = False               # the states went to a file
        if self._past_spill(capacity):     # sized for more states than the memory share holds
            del self.keys
            self._spill(0, capacity)
            self.keys = self._keys.array(capacity)

    @property
    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.table.nbytes + self.links.nbytes + self.marks.nbytes + self.levels.nbytes
                   + (0 if self.graph is None else self.graph.nbytes))

    def grow(self, loop: ModuleType, head: int, stored: int, nlinks: int, nlevels: int, firings: int) -> None:
        """Room for one more state's successors (and a level, and its transitions where the graph is
        recorded); `nlinks`: the links' bits so far."""
        need = stored + firings
        if need > self.keys.shape[0]:
            self._grow_keys(stored, max(need, self.keys.shape[0] + max(MIN_KEY_GROWTH, self.keys.shape[0] // KEY_GROWTH)))
        if self.graph is not None:
            g = self.graph
            edges = int(g.offsets[head]) + firings
            if edges > g.dst.shape[0] or self.keys.shape[0] > g.stuck.shape[0]:
                g.grow(self.keys.shape[0],
                       max(edges, g.dst.shape[0] + max(MIN_KEY_GROWTH, g.dst.shape[0] // KEY_GROWTH)))
        if need > self.room:
            self._regrow(loop, self._grown(need, firings), stored)
        if nlinks + firings + 1 > 64 * self.links.shape[0]:
            words = max((nlinks + firings + 1) // 64 + 1, self.links.shape[0] + self.links.shape[0] // KEY_GROWTH)
            self.links.resize(words, refcheck=False)     # the new words are zeros
        if (need >> MARK_BITS) + 1 > self.marks.shape[0]:
            self.marks.resize((need >> MARK_BITS) + 2, refcheck=False)
        if nlevels == self.levels.shape[0]:
            self.levels.resize(2 * nlevels, refcheck=False)
        self.peak = max(self.peak, self.nbytes)

    @property
    def room(self) -> int:
        """States the table takes before it grows: MAX_LOAD of its slots without a state cap or in
        the cap's table (the largest it grows to), else CAPPED_LOAD."""
        size = self.table.shape[0]
        if self.max_states is None or size >= table_size(self.max_states):
            return room(size)
        return int(size * CAPPED_LOAD)

    def _grown(self, need: int, firings: int) -> int:
        """Slots of the next table, for `need` states at least: GROWTH times the old one without a
        state cap; with one, CAPPED_GROWTH times (and CAPPED_LOAD full at most), never past the table
        of the most states the search looks up (the cap's and one state's `firings` successors),
        which it grows to at once for `need` past 1/JUMP of the cap."""
        size = self.table.shape[0]
        if self.max_states is None:
            return max(int(size * GROWTH), table_size(need))
        last = table_size(self.max_states + firings)
        if need * JUMP > self.max_states:
            return max(last, table_size(need))
        return max(min(max(size * CAPPED_GROWTH, table_size(need, CAPPED_LOAD)), last), table_size(need))

    def _regrow(self, loop: ModuleType, size: int, stored: int) -> None:
        """A table of `size` slots in place of the old one, let go of first (so that the process
        never holds two tables), filled again from the stored states: they are read in order,
        their slots written ahead of time."""
        self.table = np.empty(0, np.uint32)
        self._table = Mapping(np.uint32, (size,))
        self.table = self._table.array(size)
        self.bits = index_bits(size)
        loop.fill(self.keys, 0, stored, self.table, self.bits)

    def _grow_keys(self, stored: int, capacity: int) -> None:
        del self.keys
        if self._past_spill(capacity):
            self._spill(stored, capacity)
        else:
            self._keys.resize(capacity)
        self.keys = self._keys.array(capacity)

    def _past_spill(self, capacity: int) -> bool:
        """Whether states held in memory, `capacity` of them, would pass the spill share."""
        return not self.spilled and self.spill_bytes is not None \
            and capacity * 8 * self.words + self.table.nbytes > self.spill_bytes

    def _spill(self, stored: int, capacity: int) -> None:
        """Keep the states in an unlinked temporary file from now on, memory-mapped."""
        fd, path = tempfile.mkstemp(prefix="turnproof-states-")
        os.unlink(path)                        # the file goes with its last mapping
        old, self._keys = self._keys, Mapping(np.int64, (capacity, *self.row), fd)
        self._keys.array(stored)[:] = old.array(stored)
        self.spilled = True
        hold_spill_file(self._keys.map)

    def edges(self, head: int, stored: int) -> EdgeArrays | None:
        """The recorded state graph once the search is over (None where it was not recorded)."""
        return None if self.graph is None else self.graph.finish(head, stored)

    def finish(self, stored: int) -> np.ndarray:
        """The states once the search is over (the table let go of; the states' room beyond them too)."""
        del self.table
        self._table = Mapping(np.uint32, (0,))
        del self.keys
        self._keys.resize(stored)
        if self._keys.fd is not None:
            os.close(self._keys.fd)            # the mapping keeps the file's pages
            self._keys.fd = None
        return self._keys.array(stored)
