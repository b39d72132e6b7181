"""The versions `turnproof diff` compares: a model file, or `git:REV:path` (the file at a git
revision, with its default property file `properties/<stem>.yaml` from the same revision)."""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from verifier.diagnostics import Diagnostic, UsageError
from verifier.files import file_stem


@dataclass(frozen=True)
class Version:
    spec: str            # as given on the command line
    path: str            # a file to load (a temporary copy for git:REV:path)

    @property
    def label(self) -> str:
        return self.spec


def _git(args: list[str], what: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], capture_output=True, check=False)
    except OSError as err:
        raise UsageError(Diagnostic(f"cannot run git for {what}: {err}", hint="install git or give a file")) from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(Diagnostic(f"{what}: {message[-1] if message else 'git failed'}",
                                    hint="write git:REV:path with a path from the repository root, "
                                         "e.g. git:origin/main:models/wtactics.yaml"))
    return done.stdout


GIT_REV = re.compile(r"[A-Za-z0-9_@][A-Za-z0-9_./~^@{}+-]*")

def resolve(spec: str, workdir: Path) -> Version:
    """A model version: a plain file, or `git:REV:path` copied (with its default property
    file from the same revision) under `workdir`."""
    if not spec.startswith("git:"):
        if not Path(spec).is_file():
            raise UsageError(Diagnostic(f"{spec}: no such model file",
                                        hint="give a model file or git:REV:path"))
        return Version(spec, spec)
    rev, sep, path = spec[4:].partition(":")
    if not sep or not rev or not path:
        raise UsageError(Diagnostic(f"'{spec}' is not git:REV:path", hint="e.g. git:HEAD~1:models/wtactics.yaml"))
    if not GIT_REV.fullmatch(rev):                 # never an option to git (git:--output=...)
        raise UsageError(Diagnostic(f"'{rev}' is not a git revision", hint="a branch, tag or commit, e.g. "
                                    "HEAD~1 or origin/main (it cannot start with '-')"))
    if path.startswith(("./", "../")):
        prefix = _git(["rev-parse", "--show-prefix"], spec).decode().strip()
        repo_path = PurePosixPath(*(PurePosixPath(prefix + path).parts))
        parts: list[str] = []
        for part in repo_path.parts:
            if part == "..":
                parts = parts[:-1]
            elif part != ".":
                parts.append(part)
        repo_path = PurePosixPath(*parts)
    else:
        repo_path = PurePosixPath(path)
    text = _git(["show", f"{rev}:{repo_path}"], spec)
    safe_rev = file_stem(rev)
    root = workdir / safe_rev
    target = root / repo_path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text)
    props = repo_path.parent.parent / "properties" / f"{repo_path.stem}.yaml"
    try:
        props_text = _git(["show", f"{rev}:{props}"], spec)
    except UsageError:
        props_text = None
    if props_text is not None:
        (root / props).parent.mkdir(parents=True, exist_ok=True)
        (root / props).write_bytes(props_text)
    return Version(spec, str(target))
