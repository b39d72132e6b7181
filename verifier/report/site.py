"""Write a report folder: the index, FINDINGS.md and a manifest at the top, and one folder per
game holding its page (`<game>/index.html`, `index.md`), a page per claim (with its traces) and
per finding's trace, and the diagrams (SVG and their DOT source).

The folder may hold other files: `report` writes into it and never deletes or replaces what it
did not write. Every page is rendered into a staging folder inside the output folder first, so
a failed or interrupted rendering leaves the previous report as it was; the files are then
moved into place one by one. The manifest lists every file written with its SHA-256: the next
run removes a file of an earlier report only when that manifest lists it and the file still has
the recorded content, and overwrites an existing file only then (or with `force`). An output
folder that holds the models or claim files being reported, or the project itself, is refused.

The manifest also records, per game, the SHA-256 of the model and claim files the pages were
made from; `stale_games` compares them with the files as they are now.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path, PurePosixPath

from verifier import __version__
from verifier.diagnostics import Diagnostic, UsageError
from verifier.report.findings_md import findings_markdown
from verifier.report.html import claim_html, game_html, index_html, trace_html
from verifier.report.markdown import claim_markdown, game_markdown, index_markdown, trace_markdown
from verifier.report.pages import GamePage, claim_page, file_digest

MANIFEST = "manifest.json"
GENERATOR = "turnproof report"
TOP_FILES = ("index.html", "index.md", "FINDINGS.md", MANIFEST)   # no game folder may take these names
STAGING = ".turnproof-staging-"
MANIFEST_BYTES = 64 * 2**20      # a manifest of ours is a few hundred KB


def write_site(pages: Sequence[GamePage], out_dir: str | os.PathLike, timings: bool = True,
               force: bool = False, on_file: Callable[[Path], None] | None = None,
               left: list[str] | None = None) -> list[str]:
    """Write the report for `pages` into `out_dir`; returns the paths written (relative to it,
    with `/`). With `force`, files of the same names that turnproof did not write are overwritten
    (never deleted). `on_file` is called after each file is staged (progress, tests); `left`, when
    given, receives the files of the previous report this one no longer writes that were left in
    place (changed since, or listed by an older manifest without their SHA-256)."""
    target = Path(out_dir)
    check_names([(p.slug, p.runs[0].path) for p in pages])
    check_output(target, [path for p in pages for path in (p.runs[0].path, p.runs[0].properties_path) if path], force)
    previous = _previous_files(target)
    created = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    _remove_stale(target)
    staging = Path(tempfile.mkdtemp(dir=target, prefix=f"{STAGING}{os.getpid()}-"))
    digests: dict[str, str] = {}
    try:
        def put(name: str, text: str) -> None:
            path = staging / name
            path.parent.mkdir(exist_ok=True)
            data = text.encode("utf-8")
            path.write_bytes(data)
            digests[name] = hashlib.sha256(data).hexdigest()
            if on_file is not None:
                on_file(path)

        for page in pages:
            folder = page.slug
            for d in page.diagrams():
                if d.dot:                       # a plot has no DOT source
                    put(f"{folder}/{d.stem}.dot", d.dot)
                put(f"{folder}/{d.stem}.svg", d.svg)
            for cid in page.claim_ids():
                put(f"{folder}/{claim_page(cid)}.md", claim_markdown(page, cid, timings))
                put(f"{folder}/{claim_page(cid)}.html", claim_html(page, cid, timings))
            for view in page.trace_pages():
                put(f"{folder}/{view.page}.md", trace_markdown(page, view))
                put(f"{folder}/{view.page}.html", trace_html(page, view))
            put(f"{folder}/index.md", game_markdown(page, timings))
            put(f"{folder}/index.html", game_html(page, timings))
        put("index.md", index_markdown(pages))
        put("index.html", index_html(pages))
        put("FINDINGS.md", findings_markdown([p.runs for p in pages]))
        _check_overwrites(target, list(digests) + [MANIFEST], previous, force)
        put(MANIFEST, json.dumps(manifest(pages, digests), indent=2) + "\n")
        _move_in(staging, target, list(digests))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created and not any(target.iterdir()):
            target.rmdir()                 # nothing was written: no empty folder left behind
    kept = _remove_old(target, previous, set(digests))
    if left is not None:
        left += kept
    return sorted(digests)


def check_names(games: Iterable[tuple[str, str]]) -> None:
    """Refuse two games that would share a folder, or a game folder named as one of the report's own
    files (`index.html`, `FINDINGS.md`...); compared without case, as some file systems do.
    `games`: (folder name, the model file it comes from)."""
    seen: dict[str, str] = {}
    reserved = {name.casefold() for name in TOP_FILES}
    for slug, path in games:
        key = slug.casefold()
        if key in reserved:
            raise UsageError(Diagnostic(f"the model of {path} would be written as the folder {slug}/, the name "
                                        f"of one of the report's own files", hint="give the model another "
                                                                                 "`model:` name"))
        if key in seen:
            raise UsageError(Diagnostic(f"{seen[key]} and {path} would both be written to the folder {slug}/",
                                        hint="give each model its own `model:` name"))
        seen[key] = path


# ---------------------------------------------------------------- what may be written where

def check_output(out_dir: str | os.PathLike, inputs: Sequence[str], force: bool = False) -> None:
    """The output folder is a folder (or absent), not a link, and holds neither the project nor
    the models and claim files being reported; the report's own top files there, if any, are the
    previous report's (or `force`). `report` asks before checking the models, so that a refusal
    costs no minutes; the files of the games' folders are looked at when they are written."""
    target = Path(out_dir)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise UsageError(Diagnostic(f"{target} is not a folder", hint="choose a new or existing folder for the report"))
    where = target.resolve()
    project = Path.cwd().resolve()
    if where == project or where in project.parents or (where / ".git").exists():
        raise UsageError(Diagnostic(f"{target} is, or holds, the project's own folder: the report goes into a "
                                    "folder of its own", hint="e.g. -o reports"))
    for path in inputs:
        source = Path(path).resolve()
        if where in source.parents:
            raise UsageError(Diagnostic(f"{target} holds {path}, an input of this report: the report goes "
                                        "into a folder of its own", hint="e.g. -o reports"))
    if target.is_dir():
        _check_overwrites(target, TOP_FILES, _previous_files(target), force)


def _previous_files(target: Path) -> dict[str, str | None]:
    """The files our previous manifest in `target` lists, with their SHA-256 (None where a manifest
    of an earlier version recorded none: such a file may be overwritten, never deleted), and the
    manifest itself. Nothing when there is no manifest of ours, or it cannot be read."""
    path = target / MANIFEST
    try:                                   # a link (to /dev/zero, say) or a huge file is not ours
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MANIFEST_BYTES:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("generator") != GENERATOR:
        return {}
    files = data.get("files")
    if isinstance(files, list):
        files = dict.fromkeys(files)
    if not isinstance(files, dict):
        return {}
    return {MANIFEST: None, **{name: digest for name, digest in files.items()
                               if _safe_name(name) and (digest is None or isinstance(digest, str))}}


def _safe_name(name: object) -> bool:
    """A relative path of at most two parts, without `..`, `.` or an empty part."""
    if not isinstance(name, str) or not name or "\\" in name or "\0" in name:
        return False
    parts = PurePosixPath(name).parts
    return 0 < len(parts) <= 2 and not name.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def _ours(path: Path, digest: str | None) -> bool:
    """Whether the regular file `path` holds what our manifest recorded (`digest`)."""
    return path.is_file() and not path.is_symlink() and digest is not None and file_digest(str(path)) == digest


def _check_overwrites(target: Path, names: Sequence[str], previous: dict[str, str | None], force: bool) -> None:
    for name in names:
        path = target / name
        for part in (path.parent, path):
            if part != target and (part.is_symlink() or (part.exists() and not (part.is_dir() if part == path.parent
                                                                                   else part.is_file()))):
                raise UsageError(Diagnostic(f"{part} is in the way of the report (a link, or not a "
                                            f"{'folder' if part == path.parent else 'file'})",
                                            hint="move it away, or choose another folder for the report"))
        if not path.exists() or force:
            continue
        if name in previous and (previous[name] is None or _ours(path, previous[name])):
            continue
        raise UsageError(Diagnostic(f"{path} exists and was not written by turnproof (or was changed since)",
                                    hint="move it away, choose another folder, or pass --force to overwrite "
                                         "the files of the report's names (nothing else is touched)"))


def _move_in(staging: Path, target: Path, names: Sequence[str]) -> None:
    umask = os.umask(0)
    os.umask(umask)
    for name in names:
        (target / name).parent.mkdir(exist_ok=True)
        os.chmod(staging / name, 0o666 & ~umask)
        os.replace(staging / name, target / name)


def _remove_old(target: Path, previous: dict[str, str | None], kept: set[str]) -> list[str]:
    """The files of the previous report that this one no longer writes, where they still hold what
    turnproof wrote; then their folders, where that left them empty. Returns those left in place."""
    folders = set()
    left = []
    for name, digest in previous.items():
        path = target / name
        if name in kept or name == MANIFEST or not path.exists():
            continue
        if not _ours(path, digest) or path.parent.is_symlink():
            left.append(name)
            continue
        path.unlink()
        if path.parent != target:
            folders.add(path.parent)
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:                    # not empty: it holds files of someone else
            pass
    return sorted(left)


def _remove_stale(target: Path) -> None:
    """Staging folders of earlier runs on `target` that were killed (SIGKILL leaves no chance to
    clean up): those whose process is gone."""
    for tmp in target.glob(f"{STAGING}*"):
        pid = tmp.name[len(STAGING):].partition("-")[0]
        if tmp.is_dir() and not tmp.is_symlink() and (not pid.isdigit() or not _alive(int(pid))):
            shutil.rmtree(tmp, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def manifest(pages: Sequence[GamePage], files: dict[str, str]) -> dict:
    return {
        "generator": GENERATOR,
        "version": __version__,
        "games": {p.slug: {"model": p.runs[0].path, "properties": p.runs[0].properties_path,
                           "variants": [r.model.variant for r in p.runs if r.model.variant],
                           "params": dict(p.model.param_values),
                           "sources": dict(sorted(p.sources.items()))} for p in pages},
        "files": dict(sorted(files.items())),
    }


def stale_games(out_dir: str | os.PathLike, root: str | os.PathLike = ".") -> list[str]:
    """The games of a report folder whose model or claim file changed since it was written
    (paths in the manifest are read relative to `root`), or whose file is gone."""
    data = json.loads((Path(out_dir) / MANIFEST).read_text(encoding="utf-8"))
    stale = []
    for slug, game in data.get("games", {}).items():
        for path, digest in game.get("sources", {}).items():
            if file_digest(str(Path(root) / path)) != digest:
                stale.append(slug)
                break
    return stale
