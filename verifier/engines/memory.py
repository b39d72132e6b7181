"""Pages of numpy arrays given back to the system while the rest of the array is still in use (the
searches' tables); the run's memory limit and guards are `resources.memory`'s."""
from __future__ import annotations

import ctypes
import functools
import mmap
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def give_back_pages(flat: np.ndarray, lo: int, hi: int) -> None:
    """Return to the system the whole memory pages that elements lo..hi of a contiguous 1-d array
    lie on (`madvise(MADV_DONTNEED)`: they read as zeros after): the part of an array that is done
    with while the rest is still in use."""
    advise = _madvise()
    if advise is None:
        return
    page = mmap.PAGESIZE
    start = -(-(flat.ctypes.data + lo * flat.itemsize) // page) * page
    end = (flat.ctypes.data + min(hi, flat.shape[0]) * flat.itemsize) // page * page
    if end > start:
        advise(start, end - start, mmap.MADV_DONTNEED)


@functools.lru_cache(maxsize=1)
def _madvise() -> Callable[[int, int, int], int] | None:
    if not hasattr(mmap, "MADV_DONTNEED"):
        return None
    try:
        advise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    advise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    advise.restype = ctypes.c_int
    return advise
