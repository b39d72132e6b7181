"""How many Hypothesis examples the compiled store's differential tests draw: each example is a
model compiled afresh by Numba (a second or more of CPU, cold), so a few by default and five
times as many with ``--slow`` (``TURNPROOF_SLOW``)."""
from __future__ import annotations

import os


def examples(default: int) -> int:
    return default * 5 if os.environ.get("TURNPROOF_SLOW") else default
