"""The names a user picks engines, reductions and stores by (`--engine`, `--reduce`, `--store`,
`[tool.turnproof]`); data only, so that the command line can offer them without importing the engines."""
from __future__ import annotations

ENGINES = ("auto", "explicit", "symbolic", "bmc", "kind", "pdr")
REDUCTIONS = ("symmetry",)
STORES = ("python", "compact", "compiled")     # `--store`: how the explicit search keeps its states
