"""The compiled store: the explicit search in machine code generated per model with Numba
(`--store compiled`). `numbagen` writes the module, `cache` keeps it on disk, `search` runs it."""
