"""Write a report folder: index and one page per game, as HTML and Markdown, with the
diagrams (SVG and their DOT source) beside them, FINDINGS.md, and a manifest.

The folder is written atomically: everything is built in a temporary folder next
to it, then swapped in at once, so an interrupted or failed run leaves the
previous report as it was. A folder that does not look like a turnproof report
(no `manifest.json` of ours) is never replaced unless asked to.

The manifest records, per game, the SHA-256 of the model and claim files the
pages were made from; `stale_games` compares them with the files as they are now.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from verifier import __version__
from verifier.diagnostics import Diagnostic, UsageError
from verifier.report.findings_md import findings_markdown
from verifier.report.html import game_html, index_html
from verifier.report.markdown import game_markdown, index_markdown
from verifier.report.pages import GamePage, file_digest

MANIFEST = "manifest.json"
GENERATOR = "turnproof report"


def is_report_dir(path: Path) -> bool:
    """An absent or empty folder, or one holding our manifest."""
    if not path.exists():
        return True
    if not path.is_dir():
        return False
    if not any(path.iterdir()):
        return True
    try:
        return json.loads((path / MANIFEST).read_text(encoding="utf-8")).get("generator") == GENERATOR
    except (OSError, ValueError, AttributeError):
        return False


def write_site(pages: Sequence[GamePage], out_dir: str | os.PathLike, timings: bool = True,
               force: bool = False, on_file: Callable[[Path], None] | None = None) -> list[str]:
    """Write the report for `pages` to `out_dir` atomically; returns the file names written.

    `on_file` is called after each file is written in the temporary folder (progress, tests).
    """
    target = Path(out_dir)
    if not force and not is_report_dir(target):
        raise UsageError(Diagnostic(
            f"{target} exists and is not a turnproof report folder (no {MANIFEST} written by turnproof)",
            hint="choose a new or empty folder, or pass --force to replace it"))
    _check_slugs(pages)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(target)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.tmp-{os.getpid()}-"))
    written: list[str] = []
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)

        def put(name: str, text: str) -> None:
            path = tmp / name
            path.write_text(text, encoding="utf-8")
            written.append(name)
            if on_file is not None:
                on_file(path)

        for page in pages:
            for d in page.diagrams():
                if d.dot:                       # a plot has no DOT source
                    put(f"{d.stem}.dot", d.dot)
                put(f"{d.stem}.svg", d.svg)
            put(f"{page.slug}.md", game_markdown(page, timings))
            put(f"{page.slug}.html", game_html(page, timings))
        put("index.md", index_markdown(pages))
        put("index.html", index_html(pages))
        put("FINDINGS.md", findings_markdown([p.runs for p in pages]))
        put(MANIFEST, json.dumps(manifest(pages, written), indent=2) + "\n")
        _swap_in(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return written


def _remove_stale(target: Path) -> None:
    """Temporary folders of earlier runs on `target` that were killed (SIGKILL leaves no chance
    to clean up): those whose process is gone."""
    for tmp in target.parent.glob(f".{glob.escape(target.name)}.tmp-*"):
        pid = tmp.name[len(target.name) + 6:].partition("-")[0]
        if tmp.is_dir() and (not pid.isdigit() or not _alive(int(pid))):
            shutil.rmtree(tmp, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def manifest(pages: Sequence[GamePage], files: Sequence[str]) -> dict:
    return {
        "generator": GENERATOR,
        "version": __version__,
        "games": {p.slug: {"model": p.runs[0].path, "properties": p.runs[0].properties_path,
                           "variants": [r.model.variant for r in p.runs if r.model.variant],
                           "params": dict(p.model.param_values),
                           "sources": dict(sorted(p.sources.items()))} for p in pages},
        "files": sorted(files),
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


def _check_slugs(pages: Sequence[GamePage]) -> None:
    seen: dict[str, str] = {}
    for p in pages:
        if p.slug in seen or p.slug == "index":
            raise UsageError(Diagnostic(f"two models would both be written as {p.slug}.html "
                                        f"({seen.get(p.slug, 'the index')} and {p.runs[0].path})",
                                        hint="give each model a different `model:` name"))
        seen[p.slug] = p.runs[0].path


# ---------------------------------------------------------------- the swap

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two paths (Linux renameat2); False where unsupported."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return rc == 0


def _swap_in(new: Path, target: Path) -> None:
    """Put the folder `new` in place of `target`; `new` ends up holding the old content."""
    if not target.exists():
        os.rename(new, target)
        return
    if _exchange(new, target):
        return
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    os.rename(target, old)
    try:
        os.rename(new, target)
    except BaseException:
        os.rename(old, target)
        raise
    os.rename(old, new)
