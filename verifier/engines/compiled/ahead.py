"""The compiled store's model-independent code, loaded in a process before it forks readings.

Every process that searches in the compiled store first starts Numba (its import and its CPU
target's registries) and loads the modules no model changes: the runtime (`numbagen.RUNTIME`),
the search loop for the states' words (`numbagen.loop_source`) and, for the termination and
obligation claims, the state graph's code (`graph.graph_source`) and the lasso kernels
(`cycles`): 0.6 to 0.7 s of CPU a process, paid again by every forked reading. Loaded once in
the parent, they are inherited by each reading it forks afterwards (`load_ahead`), which then
loads only its model's own module. The lasso kernels alone serve the python store's large
state graphs too: Numba's start and that one module, without the rest.

Numba is safe to use in a forked child here: loading cached machine code starts none of its
threads (no parallel target, no threading layer), so the fork copies no lock held by another
thread, and each child links the code it loads later into its own copy of the JIT.
"""
from __future__ import annotations

from collections.abc import Iterable

from verifier.engines.compiled import cache, start


def load_ahead(words: Iterable[int], graphs: bool, lasso: bool = False) -> bool:
    """Load the runtime and the search loop for states of each of `words` words (with `graphs`,
    the state graph's code and the lasso kernels too; with `lasso` the lasso kernels, and
    without `words` only those) into this process; whether they all loaded.
    Where one does not (Numba cannot compile it, no folder to keep it in), the rest is left to
    the readings, each of which meets the same error and says so as without this."""
    start.numba()
    from numba.core.errors import NumbaError

    from verifier.engines.compiled import cycles
    from verifier.engines.compiled.graph import graph_source
    from verifier.engines.compiled.numbagen import RUNTIME, loop_source

    wanted = sorted(set(words))
    try:
        if wanted:
            cache.load(RUNTIME)
        for w in wanted:
            cache.load(loop_source(w))
            if graphs:
                cache.load(graph_source(w))
        if graphs or lasso:
            cycles.kernels()
    except (NumbaError, OSError):
        return False
    return True
