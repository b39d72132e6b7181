"""Generated Python compiled once: code objects kept in the process and in the compile cache.

`code_of(source, filename)` is `compile(source, filename, "exec")`, but the code object of a
source compiled before is taken from memory (the last KEEP_CODES sources of this process) or
from the compile cache folder (`files.cache_dir()/code`, beside Numba's modules), where it is kept
marshalled under a digest of the source, the interpreter's bytecode magic and -O level, so that a forked
reading, another process and the next run find it (a search loop of a shipped game: 20 ms to
compile, well under 1 ms to read back). Only sources of at least MIN_STORED characters are
written: a smaller one compiles about as fast as its file is read. The code object is then
given `filename` (its functions' `co_filename`), so tracebacks show the lines registered for it.

A file holds the magic, a SHA-256 of the marshalled bytes and the bytes; one that is short, of
another magic or whose bytes do not match is ignored and written again. Files are written whole
(a temporary file, then renamed), at most KEEP_FILES of them (random models tried once would
otherwise pile up); where the folder cannot be written, nothing is kept on disk.
"""
from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import sys
import tempfile
from collections import OrderedDict
from pathlib import Path
from types import CodeType

from verifier.files import cache_dir

KEEP_CODES = 64          # code objects kept in the process, the least recently used dropped first
MIN_STORED = 4096        # sources shorter than this are not written to disk
KEEP_FILES = 1024        # files kept on disk; past it, the oldest written are removed
MAGIC = importlib.util.MAGIC_NUMBER
_HEAD = len(MAGIC) + 32

_codes: OrderedDict[str, CodeType] = OrderedDict()


def code_of(source: str, filename: str) -> CodeType:
    """`source` compiled (mode "exec") under `filename`."""
    key = _key(source)
    code = _codes.pop(key, None)
    if code is None:
        code = _read(key) if len(source) >= MIN_STORED else None
        if code is None:
            code = compile(source, filename, "exec")
            if len(source) >= MIN_STORED:
                _write(key, code)
    code = _codes[key] = _named(code, filename)
    while len(_codes) > KEEP_CODES:
        _codes.popitem(last=False)
    return code


def _key(source: str) -> str:
    return hashlib.sha256(MAGIC + bytes([sys.flags.optimize]) + source.encode()).hexdigest()[:32]


def _named(code: CodeType, filename: str) -> CodeType:
    """`code` and the code objects inside it under `filename`."""
    if code.co_filename == filename:
        return code
    consts = tuple(_named(c, filename) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _folder() -> Path:
    return cache_dir() / "code"


def _path(key: str) -> Path:
    return _folder() / f"{key}.code"


def _read(key: str) -> CodeType | None:
    """The code object stored under `key`; None where there is none or the file is not one."""
    try:
        data = _path(key).read_bytes()
    except OSError:
        return None
    body = data[_HEAD:]
    if len(data) <= _HEAD or data[:len(MAGIC)] != MAGIC or hashlib.sha256(body).digest() != data[len(MAGIC):_HEAD]:
        return None
    try:
        code = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


def _write(key: str, code: CodeType) -> None:
    """`code` stored under `key`, whole or not at all."""
    body = marshal.dumps(code)
    folder = _folder()
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, partial = tempfile.mkstemp(dir=folder, prefix=f".{key}.", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(MAGIC + hashlib.sha256(body).digest() + body)
        os.replace(partial, _path(key))
    except BaseException as err:
        Path(partial).unlink(missing_ok=True)
        if not isinstance(err, OSError):
            raise
        return
    _prune(folder)


def _prune(folder: Path) -> None:
    """Past KEEP_FILES files in `folder`, the oldest written tenth of them removed."""
    try:
        files = [e for e in os.scandir(folder) if e.name.endswith(".code")]
        if len(files) <= KEEP_FILES:
            return
        files.sort(key=lambda e: e.stat().st_mtime_ns)
        for entry in files[:len(files) // 10]:
            os.unlink(entry.path)
    except OSError:         # another process removed them first
        pass
