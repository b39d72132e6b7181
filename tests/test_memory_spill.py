"""The memory guard and spilled states (`resources.memory.hold_spill_file`): while a mapping of
a file of spilled states is alive, the resident size the guards count is the process's
anonymous memory, not the file's pages in the page cache (the system writes those back and
drops them); before and after, the whole resident size."""
from __future__ import annotations

import gc
import mmap
import os
import tempfile

from test_compact_store import counter

from verifier.engines.compiled.search import explore_compiled
from verifier.resources import memory

FILE_MB = 48


def file_pages() -> int:
    """The resident pages the guards leave out while a spill file is held (file-backed ones)."""
    with open("/proc/self/statm") as fh:
        size = fh.read().split()
    return (int(size[1]) * mmap.PAGESIZE) - memory.anonymous_bytes()


def written_file_mapping(mb: int) -> mmap.mmap:
    """A mapping of an unlinked temporary file, every page of it written (resident)."""
    fd, path = tempfile.mkstemp(prefix="turnproof-test-spill-")
    os.unlink(path)
    os.ftruncate(fd, mb * memory.MB)
    mapping = mmap.mmap(fd, mb * memory.MB)
    os.close(fd)
    for at in range(0, mb * memory.MB, mmap.PAGESIZE):
        mapping[at] = 1
    return mapping


def test_a_held_spill_file_s_pages_are_not_counted_against_the_limit():
    mapping = written_file_mapping(FILE_MB)
    assert file_pages() >= FILE_MB * memory.MB                         # resident, file-backed
    counted = memory.resident_bytes()
    assert counted - memory.anonymous_bytes() >= FILE_MB * memory.MB   # not held: counted
    limit_mb = int((memory.anonymous_bytes() + FILE_MB // 2 * memory.MB) / memory.SOFT_SHARE) // memory.MB
    assert memory.over_soft(limit_mb)                                  # the file's pages pass the limit
    memory.hold_spill_file(mapping)
    assert abs(memory.resident_bytes() - memory.anonymous_bytes()) < 4 * memory.MB
    assert memory.resident_bytes() < counted - FILE_MB * memory.MB + 4 * memory.MB
    assert not memory.over_soft(limit_mb)                              # held: the anonymous memory is within it
    del mapping
    gc.collect()
    assert memory.resident_bytes() - memory.anonymous_bytes() > mmap.PAGESIZE   # let go of: all counted again


def test_a_spilled_compiled_search_holds_its_file_while_its_states_live():
    before = memory.resident_bytes() - memory.anonymous_bytes()
    assert before > mmap.PAGESIZE                                      # the libraries' pages count
    space = explore_compiled(counter(300), spill_bytes=0)
    assert space.spilled and len(space) == 90_000
    assert abs(memory.resident_bytes() - memory.anonymous_bytes()) < 4 * memory.MB
    del space
    gc.collect()
    assert memory.resident_bytes() - memory.anonymous_bytes() > mmap.PAGESIZE
    in_memory = explore_compiled(counter(300))
    assert not in_memory.spilled
    assert memory.resident_bytes() - memory.anonymous_bytes() > mmap.PAGESIZE
