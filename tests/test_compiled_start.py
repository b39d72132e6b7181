"""engines/compiled/start.py: Numba started without scipy's linear algebra, which stays importable
(in fresh interpreters: this one may have imported either already), its operators' typing remembered."""
from __future__ import annotations

import operator
import re
import subprocess
import sys


def _printed(code: str) -> list[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()


def test_numba_starts_without_scipy_linalg_which_imports_after():
    assert _printed("import sys\n"
                    "from verifier.engines.compiled import start\n"
                    "start.numba()\n"
                    "import numba.np.arraymath\n"
                    "print('scipy.linalg' in sys.modules, numba.np.arraymath._HAVE_BLAS)\n"
                    "import scipy.linalg\n"
                    "print(scipy.linalg.__name__)\n") == ["False", "False", "scipy.linalg"]


def test_scipy_linalg_imported_before_is_left_as_it_was():
    assert _printed("import scipy.linalg\n"
                    "from verifier.engines.compiled import start\n"
                    "start.numba()\n"
                    "import numba.np.arraymath\n"
                    "print(numba.np.arraymath._HAVE_BLAS)\n") == ["True"]


def test_numba_types_an_operators_call_once_per_argument_types():
    from unittest import mock

    from verifier.engines.compiled import start
    start.numba()
    from numba.core import types, utils
    from numba.core.registry import cpu_target
    context = cpu_target.typing_context
    context.refresh()
    add = context.resolve_value_type(operator.add)
    with mock.patch.object(utils, "order_by_target_specificity", wraps=utils.order_by_target_specificity) as asked:
        first = add.get_call_type(context, (types.int16, types.uint32), {})
        again = add.get_call_type(context, (types.int16, types.uint32), {})
        other = add.get_call_type(context, (types.float32, types.int8), {})
    assert first == again and first.return_type == types.int64
    assert other.return_type == types.float32
    assert asked.call_count <= 2          # each argument types' templates tried once (none where asked before)


def test_the_remembered_typing_compiles_the_same_machine_code():
    # in a fresh interpreter: a function compiled before the typing is remembered and again after
    # (in a second function of the same text), with its first answers remembered on the way
    code = ("from verifier.engines.compiled import start\n"
            "remember = start._remember_call_types\n"
            "start._remember_call_types = lambda: None\n"
            "start.numba()\n"
            "from numba import njit, types\n"
            "SIG = types.int64(types.int64, types.int64)\n"
            "TEXT = '''\n"
            "def f(s, n):\n"
            "    a = (s >> 3) & 15\n"
            "    b = min(a + n, 7) if a > 2 else -a\n"
            "    c = (b << 2) | (s == n) | ((a != 1) & (n >= b))\n"
            "    return c * 3 - n // 5 + (1 if (a < 4) ^ (b <= 2) else 2)\n"
            "'''\n"
            "def asm():\n"
            "    scope = {}\n"
            "    exec(TEXT, scope)\n"
            "    return njit(SIG)(scope['f']).inspect_asm(SIG.args)\n"
            "before = asm()\n"
            "remember()\n"
            "asm()\n"
            "after = asm()\n"
            "print(before)\n"
            "print('=====')\n"
            "print(after)\n")
    before, after = (re.sub(r"B\d+v\d+B", "B_v_B", part) for part in
                     subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout.split("=====\n"))
    assert before == after and "retq" in before
