"""The compiled store's disk cache found by a digest of what a module is generated from
(`cache.digest_of`, `cache.load_generated`): a warm start writes no text, and the digest is
exact: inputs that generate different text never share one (a changed model, watched
predicate, generator kind or generator code misses)."""
from __future__ import annotations

import fcntl
import importlib.util
import os
import pickle
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from test_compact_store import counter
from test_compiled_store import MODELS
from tiers import examples

from verifier.analysis import compiled_scan
from verifier.engines.compiled import cache, search
from verifier.engines.compiled.numbagen import RUNTIME, loop_source, module_source
from verifier.engines.compiled.search import explore_compiled
from verifier.files import CACHE_ENV
from verifier.ir.expr import App, Const, Op, Var
from verifier.semantics import layout

WATCH = (App(Op.EQ, (Var("x"), Const(2))),)


def _model_independent() -> dict:
    """The model-independent modules these tests' searches load (the runtime, the one-word search loop),
    from the run's cache folder (compiled there once a run), by module key. The tests look at the
    model's module only; compiled again in each empty folder, these took 3-4 s of CPU a test."""
    texts = (RUNTIME, loop_source(1))
    return {cache.module_key(text): cache.load(text)[0] for text in texts}


@pytest.fixture
def fresh_cache(monkeypatch, tmp_path):
    """An empty cache folder, and what this process found or loaded so far forgotten (but the
    model-independent modules, `_model_independent`)."""
    loaded = _model_independent()
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(cache, "_keyed", {})
    monkeypatch.setattr(cache, "_loaded", loaded)
    return tmp_path


def _new_process(monkeypatch) -> None:
    """Forget what this process found or loaded (but the model-independent modules): as a later run
    that has only the cache folder."""
    monkeypatch.setattr(cache, "_keyed", {})
    monkeypatch.setattr(cache, "_loaded", _model_independent())
    search._source.cache_clear()


def test_a_warm_start_loads_the_module_without_writing_its_text(fresh_cache, monkeypatch):
    cold = explore_compiled(counter(4), watch=WATCH)
    assert not cold.cached and list(fresh_cache.glob("d*.key"))
    _new_process(monkeypatch)

    def no_text(*_args):
        raise AssertionError("a warm start generated the module's text")

    monkeypatch.setattr(search, "_source", no_text)
    warm = explore_compiled(counter(4), watch=WATCH)
    assert warm.cached and warm.watch == cold.watch and warm.packed() == cold.packed()
    assert warm.module.__name__ == cold.module.__name__


def test_a_changed_model_or_watch_misses_and_generates_its_own_module(fresh_cache, monkeypatch):
    explore_compiled(counter(4), watch=WATCH)
    _new_process(monkeypatch)
    generated = []
    real = search._source

    def spy(lay, watch):
        generated.append(lay.model)
        return real(lay, watch)

    monkeypatch.setattr(search, "_source", spy)
    assert len(explore_compiled(counter(5), watch=WATCH)) == 25
    assert len(explore_compiled(counter(4))) == 16
    assert generated == [counter(5), counter(4)]
    assert len(list(fresh_cache.glob("d*.key"))) == 3


def test_the_digest_changes_with_each_input():
    base = cache.digest_of("search", counter(4), WATCH)
    assert base == cache.digest_of("search", counter(4), WATCH)       # built again: the same
    assert base == cache.digest_of("search", pickle.loads(pickle.dumps(counter(4))), WATCH)
    others = [cache.digest_of("search", counter(5), WATCH),
              cache.digest_of("search", counter(4), ()),
              cache.digest_of("search", counter(4), (App(Op.EQ, (Var("x"), Const(3))),)),
              cache.digest_of("scan", counter(4), WATCH),
              cache.digest_of("search", replace(counter(4), actions=counter(4).actions[::-1]), WATCH),
              cache.digest_of("search", replace(counter(4), name="other"), WATCH)]
    assert base is not None and len({base, *others}) == 1 + len(others)
    assert compiled_scan._digest(layout(counter(4)), ()) != compiled_scan._digest(layout(counter(4)), (0,))


def test_another_version_of_the_generator_misses(monkeypatch):
    before = cache.digest_of("search", counter(4), ())
    monkeypatch.setattr(cache, "_code_version", lambda: b"another generator")
    assert cache.digest_of("search", counter(4), ()) != before


def test_inputs_that_cannot_be_pickled_have_no_digest_and_are_generated(fresh_cache):
    assert cache.digest_of("search", lambda: 0) is None
    text = module_source(layout(counter(3)), ()).text
    cache.load(search.RUNTIME)
    _module, known, name = cache.load_generated(None, lambda: text)
    assert not known and name == cache.module_name(text) and not list(fresh_cache.glob("d*.key"))


@pytest.mark.parametrize("noted", ["garbage\n", "m" + "0" * 32])
def test_a_key_file_naming_no_module_is_a_miss(fresh_cache, noted):
    digest = cache.digest_of("search", counter(3), ())
    (fresh_cache / f"{digest}.key").write_text(noted)
    text = module_source(layout(counter(3)), ()).text
    cache.load(search.RUNTIME)
    module, _known, name = cache.load_generated(digest, lambda: text)
    assert name == cache.module_name(text) and module.expand is not None
    assert (fresh_cache / f"{digest}.key").read_text() == cache.module_key(text)


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MODELS, MODELS)
def test_two_models_share_a_digest_only_where_they_generate_the_same_text(a, b):
    """Exactness: models of one digest are equal, models of different text never share one; and a
    model's copy (other objects, the same values) has its digest."""
    digest = cache.digest_of("search", a, ())
    assert digest is not None and digest == cache.digest_of("search", pickle.loads(pickle.dumps(a)), ())
    same_digest = digest == cache.digest_of("search", b, ())
    if same_digest:
        assert a == b
    if module_source(layout(a), ()).text != module_source(layout(b), ()).text:
        assert not same_digest


def test_a_modules_bytecode_is_kept_in_the_cache_folder_even_where_python_writes_none(fresh_cache, monkeypatch):
    """Under PYTHONDONTWRITEBYTECODE (`sys.dont_write_bytecode`) a generated module's bytecode is still
    written beside it, in the cache's own folder, so a later process reads it instead of compiling the
    text; the flag is as it was afterwards."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    text = "VALUE = 41 + 1\n"
    module, known = cache.load(text)
    assert module.VALUE == 42 and not known
    assert sys.dont_write_bytecode
    path = fresh_cache / f"{cache.module_key(text)}.py"
    assert path.is_file() and Path(importlib.util.cache_from_source(str(path))).is_file()


LOCK_PROBE = """\
import fcntl
with open(__file__, "rb") as probe:
    try:
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        LOCKED = False
    except BlockingIOError:
        LOCKED = True
"""


def test_a_module_is_imported_under_an_exclusive_lock_on_its_file(fresh_cache):
    """Another process that needs the module while it is compiled waits for the lock (flock), then
    loads the machine code cached: the module's own import finds its file locked by another open
    file, and it is free again afterwards."""
    module, _known = cache.load(LOCK_PROBE)
    assert module.LOCKED
    with open(fresh_cache / f"{cache.module_key(LOCK_PROBE)}.py", "rb") as after:
        fcntl.flock(after, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _fallback(tmp_path, monkeypatch) -> Path:
    """The temporary directory's fallback folder of this user, under `tmp_path`."""
    monkeypatch.setattr(cache.tempfile, "gettempdir", lambda: str(tmp_path))
    return tmp_path / f"turnproof-{os.getuid()}"


def test_the_fallback_folder_is_made_private_and_used(tmp_path, monkeypatch):
    own = _fallback(tmp_path, monkeypatch)
    assert cache._folders()[1:] == (own / "compiled",)
    assert own.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("made", ["writable by others", "a link"])
def test_a_fallback_folder_others_could_have_filled_is_not_used(made, tmp_path, monkeypatch):
    """Another user could have made the shared temporary directory's folder first, with modules of
    theirs in it: one that others may write, or a link elsewhere, is left out."""
    own = _fallback(tmp_path, monkeypatch)
    if made == "a link":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        own.symlink_to(tmp_path / "elsewhere")
    else:
        own.mkdir()
        own.chmod(0o777)
    assert cache._folders() == (cache.cache_dir(),)
