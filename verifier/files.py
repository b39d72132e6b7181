"""Files written whole or not at all, with the permissions the user's umask gives."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
