"""Files written whole or not at all, with the permissions the user's umask gives; file names
made from user text; untrusted input files read only when they are regular files inside the
project (`read_input`); the folder runs keep what they work out once in (`cache_dir`)."""
from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
from pathlib import Path

STEM_LENGTH = 60         # characters of a file name taken from user text
CACHE_ENV = "TURNPROOF_CACHE_DIR"


def cache_dir() -> Path:
    """Where runs keep what they work out once for later runs (the compiled store's generated modules
    and machine code, the expression parser's tables): `$TURNPROOF_CACHE_DIR`, else
    `$XDG_CACHE_HOME/turnproof/compiled`, else `~/.cache/turnproof/compiled`."""
    folder = os.environ.get(CACHE_ENV)
    if folder:
        return Path(folder)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "turnproof" / "compiled"


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(target: str | os.PathLike, text: str | bytes) -> None:
    """Write `text` (UTF-8) or bytes to `target` through a temporary file beside it: a failed or interrupted run
    never leaves half a file. The file gets mode 0666 less the umask (0644 usually), as any
    file the user creates, not the 0600 of a temporary file."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8") if isinstance(text, str) else text)
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def file_stem(text: object) -> str:
    """A file-name part from user text: letters, digits, `_ . -` only, never `/` or a leading dot,
    at most STEM_LENGTH characters (spaces become `-`); text cut short or holding other characters
    gets a short digest of the original, so that two names never share a file."""
    raw = str(text)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", raw).strip("-.") or "x"
    if re.fullmatch(r"[A-Za-z0-9_. -]*", raw) and stem.replace("-", "") == raw.replace(" ", "").replace("-", "") \
            and len(stem) <= STEM_LENGTH:
        return stem
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{stem[:STEM_LENGTH - 9].rstrip('-.')}-{digest}"


def claims_places(model_path: str | os.PathLike) -> tuple[Path, ...]:
    """Where a model's claims are looked for without -p, in order: `properties/<stem>.yaml` beside
    the model's folder (`models/x.yaml` -> `properties/x.yaml`), then inside it (a model in a
    project's top folder, named by its full path, finds `properties/` there as it does named bare)."""
    p = Path(model_path)
    places = (p.parent.parent / "properties" / f"{p.stem}.yaml", p.parent / "properties" / f"{p.stem}.yaml")
    return places[:1] if places[0] == places[1] else places


def claims_beside(model_path: str | os.PathLike) -> Path:
    """The first of `claims_places` that is a file, else the first place."""
    places = claims_places(model_path)
    return next((c for c in places if c.is_file()), places[0])


SYSTEM_TREES = (Path("/proc"), Path("/sys"), Path("/dev"))   # kernel files, never a project's input


class NotAnInput(Exception):
    """A path that is not a regular file inside the project. The message names the path as given,
    never what the file holds nor where a link leads."""


def input_root(path: str | os.PathLike, project: str | os.PathLike | None = None) -> Path:
    """Where `path` must lead: `project` (the folder of the configuration that named it), else the
    working tree (the current folder) when the path, read as written, lies under it, else the
    folder the path names (a file named on the command line outside the working tree)."""
    if project is not None:
        return Path(project).resolve()
    here = Path.cwd()
    written = Path(os.path.abspath(path))
    return here.resolve() if written.is_relative_to(here) else Path(os.path.abspath(written.parent)).resolve()


def read_input(path: str | os.PathLike, project: str | os.PathLike | None = None,
               limit: int | None = None) -> bytes:
    """The bytes of an untrusted input file (a model, property, Mermaid, configuration or baseline
    file). Refused with `NotAnInput` unless it resolves, symbolic links followed, to a regular file
    under `input_root(path, project)` and outside the kernel's trees (/proc, /sys, /dev): a link to
    a secret, a device, a FIFO or a folder is never opened for reading (a FIFO is opened without
    waiting, then refused). With `limit`, at most `limit + 1` bytes are read, so that a file past
    the limit is known to be past it without reading it whole. A missing file raises
    FileNotFoundError."""
    shown = str(path)
    resolved = Path(path).resolve(strict=True)
    root = input_root(path, project)
    if any(resolved.is_relative_to(tree) for tree in SYSTEM_TREES):
        raise NotAnInput(f"{shown} is a system file (under /proc, /sys or /dev), not a file of the project")
    if not resolved.is_relative_to(root):
        raise NotAnInput(f"{shown} leads outside the project (a symbolic link out of {root.name or root}/)")
    fd = os.open(resolved, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else \
                "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) \
                else "not a regular file"
            raise NotAnInput(f"{shown} is {kind}, not a regular file")
        chunks, size = [], 0
        while limit is None or size <= limit:
            chunk = os.read(fd, 1 << 20 if limit is None else min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
