"""Numba started once a process: without scipy's linear algebra, with its operators' typing remembered.

Numba's import checks for BLAS by importing `scipy.linalg` (its `cython_blas`), to offer `np.dot`
and `np.linalg` inside compiled functions: 0.17 s of a Numba import's 0.39 s of CPU, in every
process that searches in the compiled store. The generated modules and the model-independent
kernels use neither, so `scipy.linalg` is kept out of sight while Numba is imported (Numba then
notes that it has no BLAS) and is importable again right after, as usual.

Compiling a generated module is mostly Numba typing its operations (`_remember_call_types`), and
the messages of the errors it raises and catches on the way are left without colours (a colour
costs 15 us an error, ten thousand errors a module; the compiled store strips them from any
message it shows: `search.compile_error_words`).
"""
from __future__ import annotations

import os
import sys
from types import ModuleType

HIDDEN = "scipy.linalg"


def numba() -> ModuleType:
    """The `numba` module, imported here first where nothing imported it or `scipy.linalg` before."""
    if "numba" not in sys.modules and HIDDEN not in sys.modules:
        os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")
        sys.modules[HIDDEN] = None      # type: ignore[assignment]  # importing it fails: Numba goes on without
        try:
            import numba.np.arraymath  # where Numba looks for BLAS
        finally:
            del sys.modules[HIDDEN]
    import numba
    _remember_call_types()
    return numba


def _remember_call_types() -> None:
    """Numba's typing of a call of a function it provides (an operator, `min`, `bool`, ...), answered
    once per (function, typing context, target, argument types) in this process.

    Numba types every operation of a function twice (inference, then lowering looks the
    implementation up) by trying the operator's templates in turn until one accepts the argument
    types (0.15-0.3 ms a call: a third of a generated module's compile, 3,800 of its 4,000 calls
    asked before). The answer depends on those alone (Numba keeps the implementation chosen per
    argument types on the function type, `_impl_keys`), so it is kept; a call that fails, passes
    keywords or types that cannot be hashed is asked every time. Same signatures, same
    implementations: same machine code."""
    try:
        from numba.core.target_extension import get_local_target
        from numba.core.types.functions import BaseFunction
    except ImportError:       # a Numba whose internals moved: it types every call as it always did
        return

    ask = BaseFunction.get_call_type
    if getattr(ask, "remembered", False):
        return
    answers: dict[tuple, object] = {}

    def get_call_type(self, context, args, kws):
        key = None if kws else (self, context, get_local_target(context), tuple(args))
        try:
            sig = answers.get(key)
        except TypeError:             # a type that cannot be hashed
            key = sig = None
        if sig is None:
            sig = ask(self, context, args, kws)
            if key is not None:
                answers[key] = sig
        return sig

    get_call_type.remembered = True      # type: ignore[attr-defined]
    BaseFunction.get_call_type = get_call_type      # type: ignore[method-assign]
