"""Files written whole or not at all, with the permissions the user's umask gives; file names
made from user text."""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

STEM_LENGTH = 60         # characters of a file name taken from user text


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
