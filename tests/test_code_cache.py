"""The generated code's compile cache (`engines/codecache.py`): a cached code object behaves as
a fresh one and is named as the caller asks; a bad file is ignored and written again; nothing is
written outside the cache folder; two processes writing one entry leave a whole file."""
from __future__ import annotations

import hashlib
import importlib.util
import marshal
import multiprocessing
import os
from pathlib import Path

import pytest

from verifier.engines import codecache
from verifier.engines.bfsgen import compile_search
from verifier.engines.codecache import code_of
from verifier.ir.expr import Const
from verifier.ir.model import IntType, Model, Variable
from verifier.semantics import layout

MODEL = Model("m", variables=(Variable("x", IntType(Const(0), Const(3)), init=(Const(0),)),),
              end=Const(0, is_bool=True))
SOURCE = "def f(x):\n    return x + 1\n" + "\n".join(f"def g{k}(x):\n    return x * {k}" for k in range(400)) + "\n"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty cache folder and an empty process memo."""
    monkeypatch.setenv("TURNPROOF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(codecache, "_codes", type(codecache._codes)())
    return tmp_path / "cache" / "code"


ONE, TWO = b"\xe9\x01\x00\x00\x00", b"\xe9\x02\x00\x00\x00"       # the constant 1 marshalled (f's), and 2


def run(code) -> int:
    ns: dict = {}
    exec(code, ns)
    return ns["f"](41) + ns["g7"](2)


def stored(cache: Path) -> list[Path]:
    return sorted(cache.iterdir())


def test_cached_code_behaves_as_fresh_code_and_takes_the_callers_name(cache):
    assert len(SOURCE) >= codecache.MIN_STORED
    first = code_of(SOURCE, "<turnproof one>")
    [file] = stored(cache)
    codecache._codes.clear()
    again = code_of(SOURCE, "<turnproof two>")          # read back from the file
    assert run(first) == run(again) == run(compile(SOURCE, "x", "exec")) == 56
    assert again.co_filename == "<turnproof two>"
    assert {c.co_filename for c in again.co_consts if hasattr(c, "co_filename")} == {"<turnproof two>"}
    file.unlink()                                       # in memory now: neither read nor written
    assert code_of(SOURCE, "<turnproof two>") is again and not stored(cache)


def test_small_sources_stay_in_memory_only(cache):
    code_of("def f(x):\n    return x\n", "<turnproof small>")
    assert not cache.exists() or not stored(cache)


@pytest.mark.parametrize("damage", ["truncated", "corrupt", "altered", "foreign magic", "empty", "not code"])
def test_a_bad_file_is_ignored_and_written_again(cache, damage):
    code_of(SOURCE, "<turnproof one>")
    [file] = stored(cache)
    good = file.read_bytes()
    head = len(importlib.util.MAGIC_NUMBER)
    assert good.count(ONE) == 1
    bad = {"truncated": good[:len(good) // 2],
           "corrupt": good[:-10] + bytes(10),
           "altered": good.replace(ONE, TWO, 1),            # still code, but not the source's
           "foreign magic": bytes([good[0] ^ 1]) + good[1:],
           "empty": b"",
           "not code": good[:head] + hashlib.sha256(marshal.dumps(5)).digest() + marshal.dumps(5)}[damage]
    file.write_bytes(bad)
    codecache._codes.clear()
    assert run(code_of(SOURCE, "<turnproof two>")) == 56
    assert file.read_bytes() != bad and run(codecache._read(codecache._key(SOURCE))) == 56


def test_nothing_is_written_outside_the_cache_folder(tmp_path, cache, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr(codecache, "MIN_STORED", 0)
    before = set(tmp_path.rglob("*"))
    search = compile_search(layout(MODEL))
    after = set(tmp_path.rglob("*")) - before
    written = after - {cache.parent, cache}
    assert codecache._path(codecache._key(search.source)) in written            # and the packing's
    assert all(p.parent == cache and p.suffix == ".code" for p in written)


def test_an_unwritable_folder_keeps_the_code_in_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("TURNPROOF_CACHE_DIR", str(tmp_path / "file"))
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setattr(codecache, "_codes", type(codecache._codes)())
    assert run(code_of(SOURCE, "<turnproof one>")) == 56
    assert code_of(SOURCE, "<turnproof one>") is code_of(SOURCE, "<turnproof one>")


def test_the_oldest_files_are_removed_past_the_limit(cache, monkeypatch):
    monkeypatch.setattr(codecache, "KEEP_FILES", 20)
    for k in range(21):
        code_of(SOURCE + f"x = {k}\n", "<turnproof many>")
    names = {p.name for p in stored(cache)}
    assert len(names) == 19 and codecache._path(codecache._key(SOURCE + "x = 20\n")).name in names


def _write_and_read(folder: str, rounds: int) -> None:
    """Write the entry again and again, reading it back each time: a reader sees a whole file."""
    os.environ["TURNPROOF_CACHE_DIR"] = folder
    code, key = compile(SOURCE, "<turnproof racing>", "exec"), codecache._key(SOURCE)
    torn = sum(codecache._write(key, code) or codecache._read(key) is None for _ in range(rounds))
    os._exit(min(torn, 1))


def test_two_processes_writing_one_entry_leave_a_whole_file(cache):
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_write_and_read, args=(str(cache.parent), 300)) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert [w.exitcode for w in workers] == [0, 0]
    [file] = stored(cache)
    assert run(codecache._read(codecache._key(SOURCE))) == 56 and file.suffix == ".code"
