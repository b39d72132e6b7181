"""Generated modules on disk, so that Numba compiles a model once.

A module's text (`numbagen.module_source`) determines its machine code, so it is stored under
a name made from a hash of that text, Numba's and Python's versions: a later run of the same
model with the same parameter values and claims imports it and Numba loads the machine code it
cached beside it (`cache=True` writes `__pycache__` next to the module). The folder is
`$TURNPROOF_CACHE_DIR`, else `$XDG_CACHE_HOME/turnproof/compiled`, else
`~/.cache/turnproof/compiled`; never the checkout. Where it cannot be written, a private folder
under the system's temporary directory serves (compiled again in each process that cannot
reuse it).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

ENV = "TURNPROOF_CACHE_DIR"
_loaded: dict[str, ModuleType] = {}


def cache_dir() -> Path:
    """Where generated modules and their machine code are kept."""
    folder = os.environ.get(ENV)
    if folder:
        return Path(folder)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "turnproof" / "compiled"


def module_key(text: str) -> str:
    import numba
    digest = hashlib.sha256(f"{numba.__version__}\n{sys.version}\n{text}".encode()).hexdigest()
    return f"m{digest[:32]}"


def module_name(text: str) -> str:
    """The name the module of `text` is imported under (`load`)."""
    return f"turnproof_compiled_{module_key(text)}"


def load(text: str) -> tuple[ModuleType, bool]:
    """The module of `text`, and whether it was on disk already (its machine code then too,
    unless Numba's cache of it was dropped)."""
    key = module_key(text)
    module = _loaded.get(key)
    if module is not None:
        return module, True
    path, known = _stored(key, text)
    spec = importlib.util.spec_from_file_location(module_name(text), path)
    assert spec is not None and spec.loader is not None, "a generated module's file is a Python file"
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # Numba's cached machine code finds its globals by module name
    spec.loader.exec_module(module)
    _loaded[key] = module
    return module, known


def _stored(key: str, text: str) -> tuple[Path, bool]:
    """The module's file (written now where it was not there), and whether it was there."""
    for folder in (cache_dir(), Path(tempfile.gettempdir()) / f"turnproof-{os.getuid()}" / "compiled"):
        path = folder / f"{key}.py"
        try:
            if path.is_file() and path.read_text(encoding="utf-8") == text:
                return path, True
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            partial = folder / f".{key}.{os.getpid()}.tmp"
            partial.write_text(text, encoding="utf-8")
            os.replace(partial, path)
            return path, False
        except OSError:
            continue
    raise OSError("no folder to write the compiled store's generated code to")
