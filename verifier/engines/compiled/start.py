"""Numba started once a process, without scipy's linear algebra.

Numba's import checks for BLAS by importing `scipy.linalg` (its `cython_blas`), to offer `np.dot`
and `np.linalg` inside compiled functions: 0.17 s of a Numba import's 0.39 s of CPU, in every
process that searches in the compiled store. The generated modules and the model-independent
kernels use neither, so `scipy.linalg` is kept out of sight while Numba is imported (Numba then
notes that it has no BLAS) and is importable again right after, as usual.
"""
from __future__ import annotations

import sys
from types import ModuleType

HIDDEN = "scipy.linalg"


def numba() -> ModuleType:
    """The `numba` module, imported here first where nothing imported it or `scipy.linalg` before."""
    if "numba" not in sys.modules and HIDDEN not in sys.modules:
        sys.modules[HIDDEN] = None      # type: ignore[assignment]  # importing it fails: Numba goes on without
        try:
            import numba.np.arraymath  # where Numba looks for BLAS
        finally:
            del sys.modules[HIDDEN]
    import numba
    return numba
