"""The names a user picks engines and reductions by (`--engine`, `--reduce`, `[tool.turnproof]`);
data only, so that the command line can offer them without importing the engines."""
from __future__ import annotations

ENGINES = ("auto", "explicit", "symbolic", "bmc", "kind", "pdr")
REDUCTIONS = ("symmetry",)
