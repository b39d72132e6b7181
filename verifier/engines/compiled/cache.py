"""Generated modules on disk, so that Numba compiles a model once.

A module's text (`numbagen.module_source`) determines its machine code, so it is stored under
a name made from a hash of that text, Numba's and Python's versions: a later run of the same
model with the same parameter values and claims imports it and Numba loads the machine code it
cached beside it (`cache=True` writes `__pycache__` next to the module). The folder is
`$TURNPROOF_CACHE_DIR`, else `$XDG_CACHE_HOME/turnproof/compiled`, else
`~/.cache/turnproof/compiled`; never the checkout (the modules' bytecode is kept there too, also under
PYTHONDONTWRITEBYTECODE: `_imported`). Where it cannot be written, a private folder
under the system's temporary directory serves (this user's, writable by no one else: `_private`;
compiled again in each process that cannot reuse it). A module is imported under an exclusive
lock on its file (`_compiling`): processes that need a module none has compiled yet (readings
forked together, test workers) compile it once, the others waiting, then loading the machine code
the first cached.

A warm start need not even write the text: `load_generated` finds the module by a digest of
what its text is generated from (`digest_of`: the generator's kind, its inputs pickled, the
verifier's own source files, Numba's and Python's versions), through a small file naming the
module (`<digest>.key`) that the first run wrote beside it. Two inputs that pickle to the same
bytes are the same inputs, and the same code generates the same text from them, so a digest
never names the module of another text; inputs it cannot pickle are generated every time.
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import io
import os
import pickle
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from verifier.engines.compiled import start
from verifier.files import cache_dir

_loaded: dict[str, ModuleType] = {}
_keyed: dict[str, str] = {}          # digest -> module key, found or noted in this process


def module_key(text: str) -> str:
    digest = hashlib.sha256(f"{start.numba().__version__}\n{sys.version}\n{text}".encode()).hexdigest()
    return f"m{digest[:32]}"


def module_name(text: str) -> str:
    """The name the module of `text` is imported under (`load`)."""
    return _import_name(module_key(text))


def load(text: str) -> tuple[ModuleType, bool]:
    """The module of `text`, and whether it was on disk already (its machine code then too,
    unless Numba's cache of it was dropped)."""
    key = module_key(text)
    module = _loaded.get(key)
    if module is not None:
        return module, True
    path, known = _stored(key, text)
    return _imported(key, path), known


def load_generated(digest: str | None, generate: Callable[[], str]) -> tuple[ModuleType, bool, str]:
    """The module of the text `generate()` writes, whether it was on disk already, and the name it
    is imported under; where `digest` (`digest_of` its inputs) names a module an earlier run
    loaded, that module, without generating the text."""
    key = None if digest is None else _key_of(digest)
    if key is not None:
        module = _loaded.get(key)
        path = None if module is not None else _file(f"{key}.py")
        if path is not None:
            module = _imported(key, path)
        if module is not None:
            return module, True, _import_name(key)
    text = generate()
    module, known = load(text)
    made = module_key(text)
    if digest is not None:
        _keyed[digest] = made
        _write(f"{digest}.key", made)
    return module, known, _import_name(made)


def _key_of(digest: str) -> str | None:
    """The module key noted for `digest` in this process or by an earlier run (None where none was)."""
    key = _keyed.get(digest)
    if key is None:
        path = _file(f"{digest}.key")
        try:
            key = path.read_text(encoding="ascii").strip() if path is not None else None
        except (OSError, UnicodeDecodeError):
            key = None
        if key is None or not _KEY.fullmatch(key):
            return None
        _keyed[digest] = key
    return key


def digest_of(kind: str, *inputs: object) -> str | None:
    """A digest of everything the text of a generated module of `kind` is made from: `inputs`
    (the instantiated model, the watched predicates, ...), the generator's code (every source
    file of the verifier), Numba's and Python's versions; None where an input cannot be pickled."""
    data = io.BytesIO()
    pickler = pickle.Pickler(data, protocol=5)
    pickler.fast = True           # no memo: equal inputs pickle alike whatever objects they share
    try:
        pickler.dump(inputs)
    except (pickle.PicklingError, TypeError, AttributeError, ValueError, RecursionError):
        return None
    return "d" + hashlib.sha256(_code_version() + kind.encode() + b"\0" + data.getvalue()).hexdigest()[:32]


@lru_cache(maxsize=1)
def _code_version() -> bytes:
    """A digest of the verifier's source files, Numba's and Python's versions (once a process)."""
    h = hashlib.sha256(f"{start.numba().__version__}\n{sys.version}\n".encode())
    package = Path(__file__).resolve().parents[2]
    for path in sorted(package.rglob("*.py")):
        h.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.digest()


def _import_name(key: str) -> str:
    """The name the module of `key` is imported under (Numba's cached machine code finds it by it)."""
    return f"turnproof_compiled_{key}"


def _imported(key: str, path: Path) -> ModuleType:
    """The generated module at `path`, imported; its bytecode kept beside it (`__pycache__`, as Numba's
    machine code) even under PYTHONDONTWRITEBYTECODE: the folder is this cache's own, never the
    checkout, and a module's file never changes (its name is its text's hash), so every later
    process reads the bytecode instead of compiling the text again (0.1 s of CPU a reading)."""
    spec = importlib.util.spec_from_file_location(_import_name(key), path)
    assert spec is not None and spec.loader is not None, "a generated module's file is a Python file"
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # Numba's cached machine code finds its globals by module name
    kept, sys.dont_write_bytecode = sys.dont_write_bytecode, False
    try:
        with _compiling(path):
            spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = kept
    _loaded[key] = module
    return module


@contextmanager
def _compiling(path: Path) -> Iterator[None]:
    """An exclusive lock on the module's file while it is imported (Numba compiles it, or loads
    the machine code cached beside it): a second process that needs it meanwhile waits, then loads
    what the first cached rather than compiling it again (two forked readings compiled the same
    model-independent kernels side by side: 4 s of CPU of a cold WTactics check). Released when
    the file is closed, also where the process dies; where the file cannot be locked, no lock."""
    try:
        held = path.open("rb")
    except OSError:
        yield
        return
    with held:
        try:
            fcntl.flock(held, fcntl.LOCK_EX)
        except OSError:
            pass
        yield


def _folders() -> tuple[Path, ...]:
    """The cache folder, and the private one under the system's temporary directory that serves
    where it cannot be written (left out where it is not private: `_private`)."""
    own = Path(tempfile.gettempdir()) / f"turnproof-{os.getuid()}"
    return (cache_dir(), own / "compiled") if _private(own) else (cache_dir(),)


def _private(folder: Path) -> bool:
    """Whether `folder` is (or, made now, becomes) a directory of this user's that no one else may
    write: the temporary directory is shared, and another user could have made a folder of that name
    first, with modules and machine code of theirs in it, which this process would import."""
    try:
        folder.mkdir(mode=0o700)
    except OSError:
        pass
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _file(name: str) -> Path | None:
    """The first of the folders' files `name`, None where none has it."""
    for folder in _folders():
        path = folder / name
        if path.is_file():
            return path
    return None


_KEY = re.compile(r"m[0-9a-f]{32}")


def _write(name: str, text: str) -> None:
    """`text` into the first folder's file `name` that can be written (all at once: a reader sees
    the old file or the new one); nothing where none can."""
    for folder in _folders():
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            partial = folder / f".{name}.{os.getpid()}.tmp"
            partial.write_text(text, encoding="utf-8")
            os.replace(partial, folder / name)
            return
        except OSError:
            continue


def _stored(key: str, text: str) -> tuple[Path, bool]:
    """The module's file (written now where it was not there), and whether it was there."""
    for folder in _folders():
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
