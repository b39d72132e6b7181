"""engines/compiled/start.py: Numba started without scipy's linear algebra, which stays importable;
in fresh interpreters (this one may have imported either already)."""
from __future__ import annotations

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
