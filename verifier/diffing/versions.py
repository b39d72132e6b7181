"""The versions `turnproof diff` compares: a model file, or `git:REV:path` (the file at a git
revision, with its default property file `properties/<stem>.yaml` from the same revision).

A revision comes from a pull request's history, so `git:REV:path` is read defensively: REV
never starts with '-' and follows `--end-of-options`, the path is normalised and refused when
absolute or with '..', and the blobs are read by object id into memory and written under
names made of their hashes, never of the tree's path (a tree may hold entries named '..')."""
from __future__ import annotations

import hashlib
import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from verifier.diagnostics import Diagnostic, UsageError
from verifier.files import NotAnInput, file_stem, read_input
from verifier.lang.limits import MAX_FILE_BYTES


@dataclass(frozen=True)
class Version:
    spec: str            # as given on the command line
    path: str            # a file to load (a temporary copy for git:REV:path)
    rev: str | None = None   # the git revision of git:REV:path

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
OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def resolve(spec: str, workdir: Path) -> Version:
    """A model version: a plain file, or `git:REV:path` read from git (with its default property
    file from the same revision) and written under `workdir` in a folder named by the blobs'
    hashes, never by the tree's path (see `_from_git`)."""
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
    return _from_git(spec, rev, repo_path(spec, path), workdir)


def repo_path(spec: str, path: str) -> PurePosixPath:
    """The path of `git:REV:path` from the repository root: relative, normalised, and refused
    (exit 2) when it is absolute or goes up ('..'); `./path` is relative to the current folder."""
    written = PurePosixPath(path)
    if written.is_absolute() or ".." in written.parts or "\\" in path:
        raise UsageError(Diagnostic(f"'{spec}': the path must stay inside the repository (no '..', not absolute)",
                                    hint="write it from the repository root, e.g. git:HEAD:models/wtactics.yaml"))
    parts = [part for part in written.parts if part != "."]
    if path.startswith("./"):
        prefix = _git(["rev-parse", "--show-prefix"], spec).decode("utf-8", "replace").strip()
        parts = [part for part in PurePosixPath(prefix).parts if part != "."] + parts
    if not parts:
        raise UsageError(Diagnostic(f"'{spec}' names no file", hint="e.g. git:HEAD:models/wtactics.yaml"))
    return PurePosixPath(*parts)


def _blob(rev: str, path: PurePosixPath, spec: str) -> tuple[str, bytes]:
    """The object id and bytes of the blob at `rev:path` (`--end-of-options` before the only
    argument that comes from the user; then `cat-file` of the id into memory, within the size
    limit of an input file)."""
    oid = _git(["rev-parse", "--verify", "--end-of-options", f"{rev}:{path}"], spec) \
        .decode("ascii", "replace").strip()
    if not OBJECT_ID.fullmatch(oid):
        raise UsageError(Diagnostic(f"{spec}: git gave no object for it", hint="check the revision and the path"))
    kind = _git(["cat-file", "-t", oid], spec).decode("ascii", "replace").strip()
    if kind != "blob":
        raise UsageError(Diagnostic(f"{spec} is a {kind}, not a file", hint="name a model file"))
    size = int(_git(["cat-file", "-s", oid], spec).decode("ascii", "replace").strip())
    if size > MAX_FILE_BYTES:
        raise UsageError(Diagnostic(f"{spec} is larger than {MAX_FILE_BYTES // 1_000_000} MB",
                                    hint="a model or property file is a page of YAML"))
    return oid, _git(["cat-file", "blob", oid], spec)


def _from_git(spec: str, rev: str, path: PurePosixPath, workdir: Path) -> Version:
    """Write the model blob, and its `properties/<stem>.yaml` from the same revision when there is
    one, as `<hash>/models/<stem>.yaml` and `<hash>/properties/<stem>.yaml` under `workdir`
    (`<hash>` of both blobs' ids; `<stem>` made safe by `file_stem`), so that the loader finds
    the property file beside the model as it does in a working tree."""
    oid, text = _blob(rev, path, spec)
    props_path = path.parent.parent / "properties" / f"{path.stem}.yaml"
    try:
        props: tuple[str, bytes] | None = _blob(rev, props_path, spec) if ".." not in props_path.parts else None
    except UsageError:
        props = None
    folder = hashlib.sha256(f"{oid}:{props[0] if props else ''}".encode()).hexdigest()[:16]
    stem = file_stem(path.stem)
    target = workdir / folder / "models" / f"{stem}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text)
    if props is not None:
        (workdir / folder / "properties").mkdir(exist_ok=True)
        (workdir / folder / "properties" / f"{stem}.yaml").write_bytes(props[1])
    return Version(spec, str(target), rev)


CONFIG_FILE = "pyproject.toml"
SETTINGS_TABLE = ("tool", "turnproof")


def settings(version: Version) -> dict[str, Any]:
    """The `[tool.turnproof]` table a version comes with: the nearest pyproject.toml holding one
    from the current folder upward, at the version's revision for git:REV:path, in the working
    tree otherwise ({} where there is none; a file that is not TOML gives `{"(not TOML)": true}`,
    so that breaking it is a change too)."""
    if version.rev is None:
        for folder in (Path.cwd(), *Path.cwd().parents):
            try:
                table = _table(read_input(folder / CONFIG_FILE, project=folder, limit=MAX_FILE_BYTES))
            except (OSError, NotAnInput):
                continue
            if table is not None:
                return table
        return {}
    prefix = PurePosixPath(_git(["rev-parse", "--show-prefix"], version.spec).decode("utf-8", "replace").strip())
    for in_repo in (prefix, *prefix.parents):
        try:
            _, text = _blob(version.rev, in_repo / CONFIG_FILE, version.spec)
        except UsageError:
            continue
        found = _table(text)
        if found is not None:
            return found
    return {}


def _table(text: bytes) -> dict[str, Any] | None:
    try:
        doc: Any = tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return {"(not TOML)": True}
    for part in SETTINGS_TABLE:
        doc = doc.get(part) if isinstance(doc, dict) else None
    return doc if isinstance(doc, dict) else None
