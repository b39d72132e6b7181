"""Readings checked in forked children give exactly what checking them in turn gives; a child
that fails leaves its job to the parent."""
from __future__ import annotations

import gc
import multiprocessing
import os
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest
from shipped_runs import model_path, runs_of

from verifier import forking
from verifier.runner import check_model

ROOT = Path(__file__).resolve().parent.parent
needs_fork = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="no fork on this platform: every job runs in the parent")


def square_in_a_child(x: int) -> tuple[int, bool]:
    return x * x, os.getpid() != PARENT


PARENT = os.getpid()


@needs_fork
def test_results_in_order_and_computed_in_children():
    seen = []
    out = forking.fork_map(square_in_a_child, range(5), workers=2, arrived=seen.append)
    assert [v for v, _ in out] == [0, 1, 4, 9, 16] and all(child for _, child in out)
    assert sorted(seen) == sorted(out)


@needs_fork
def test_a_failing_child_leaves_the_job_to_the_parent():
    def fragile(x: int) -> int:
        if os.getpid() != PARENT and x == 2:
            raise RuntimeError("lost in the child")
        return -x

    assert forking.fork_map(fragile, range(4), workers=2) == [0, -1, -2, -3]
    with pytest.raises(ZeroDivisionError):           # an error of the job itself surfaces here
        forking.fork_map(lambda x: 1 // x, [1, 0], workers=2)


class Unsendable:
    """A result the child cannot send, failing as a child out of memory fails: pickling it raises
    an error whose own repr raises again."""

    def __reduce__(self):
        raise Exhausted()


class Exhausted(MemoryError):
    def __repr__(self) -> str:
        raise MemoryError()


@needs_fork
def test_a_child_that_cannot_send_its_result_nor_its_error_leaves_the_job_to_the_parent_quietly(capfd):
    """Seen on a reading of 128 M states: out of memory pickling its result, then again sending the
    error, the child printed a traceback."""
    out = forking.fork_map(lambda x: (x, Unsendable()) if os.getpid() != PARENT else (x, None), range(3), workers=2)
    assert out == [(0, None), (1, None), (2, None)]
    assert "Traceback" not in capfd.readouterr().err


def summary(runs):
    return ([(r.model.variant, x.property.id, x.verdict, x.trace, x.evidence) for r in runs for x in r.results],
            [f for r in runs for f in r.findings])


@needs_fork
def test_forked_and_sequential_readings_agree_on_a_small_model(monkeypatch):
    """A small model with several readings."""
    path = str(ROOT / "tests/fixtures/report/mini.yaml")
    monkeypatch.setattr(forking, "free_cpus", lambda: 1)
    one = summary(check_model(path))
    monkeypatch.setattr(forking, "free_cpus", lambda: 2)
    assert summary(check_model(path)) == one


@needs_fork
@pytest.mark.xdist_group("aeons_end")
def test_forked_and_sequential_readings_agree_on_a_shipped_game(monkeypatch):
    """A shipped game with two readings, forked, against its sequential check (`shipped_runs`,
    shared with its pinned verdicts; alpha_clash twice took 45 s)."""
    monkeypatch.setattr(forking, "free_cpus", lambda: 2)
    assert summary(check_model(model_path("aeons_end"))) == summary(runs_of("aeons_end"))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="without fork the job runs in the caller, and os._exit would end the tests")
def test_alongside_answers_while_the_caller_works_and_falls_back_when_the_child_fails():
    from verifier.forking import Alongside

    big = Alongside(lambda: list(range(300_000)))     # more than a pipe holds: read while the caller works
    assert sum(range(1000)) == 499500
    assert big.result() == list(range(300_000))
    failed = Alongside(lambda: os._exit(1), lambda: "ran here")
    assert failed.result() == "ran here"


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="without fork the job runs in the caller, which has no child to restart")
def test_alongside_restarts_on_what_the_caller_holds_now():
    from verifier.forking import Alongside

    held: dict = {"space": None}
    job = Alongside(lambda: held["space"] or threading.Event().wait())   # waits for what it needs, until restarted
    held["space"] = "complete"
    job.restart()
    assert job.result() == "complete"
    job.restart()                                                   # taken: nothing to restart
    assert job.process is None


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="without fork the job runs in the caller, which has no child to restart")
def test_alongside_restarts_even_once_its_child_has_answered():
    """Which answer is used does not depend on how fast the first child was (issue #25)."""
    from verifier.forking import Alongside

    held = {"answer": "first"}
    job = Alongside(lambda: held["answer"])
    job.reader.join()                                               # the first child has answered
    held["answer"] = "second"
    job.restart()
    assert job.result() == "second"


LEFT_BEHIND: list[int] = []


def count_what_earlier_items_left(item: int) -> int:
    LEFT_BEHIND.append(item)
    return len(LEFT_BEHIND)


@needs_fork
def test_fresh_items_each_start_from_the_callers_state_even_on_one_worker():
    """`fresh`: with one worker the items still run in children of their own, one after the
    other, so none sees what an earlier one left in its process (a machine of one CPU computes
    what one of many does); without it, one worker runs them here, in turn."""
    assert forking.fork_map(count_what_earlier_items_left, range(3), workers=1, fresh=True) == [1, 1, 1]
    assert LEFT_BEHIND == []
    assert forking.fork_map(count_what_earlier_items_left, range(3), workers=1) == [1, 2, 3]
    LEFT_BEHIND.clear()


def arrays_in_a_child(seed: int) -> dict:
    """Arrays of several kinds (C and Fortran order, a strided view, empty, a 0-d one) beside plain objects."""
    rng = np.random.default_rng(seed)
    big = rng.integers(0, 2**63, size=(3000, 2), dtype=np.uint64)
    return {"big": big, "fortran": np.asfortranarray(rng.random((7, 5))), "strided": big[::3, 1],
            "empty": np.zeros((0, 3), np.int32), "scalar": np.array(7), "text": "é" * seed, "list": list(range(seed))}


@needs_fork
def test_a_childs_arrays_arrive_as_they_were_sent():
    for got, want in zip(forking.fork_map(arrays_in_a_child, [1, 2], workers=2), map(arrays_in_a_child, [1, 2])):
        assert got.keys() == want.keys()
        for key, value in want.items():
            if isinstance(value, np.ndarray):
                assert got[key].dtype == value.dtype and got[key].shape == value.shape
                assert np.array_equal(got[key], value), key
            else:
                assert got[key] == value


def test_pickled_values_round_trip_and_a_cut_stream_ends_in_eof():
    value = (True, {"rows": np.arange(100_000, dtype=np.uint64).reshape(-1, 4), "words": ["a", 1, None],
                    "mapped": np.arange(forking.MAPPED_FROM // 4 + 3, dtype=np.int32)})   # read into a mapping
    reader, writer = multiprocessing.Pipe(duplex=False)
    done = threading.Thread(target=forking.Pickled.of(value).write, args=(writer,))
    done.start()                       # a pipe holds less than the value: written while it is read
    ok, got = forking.receive(reader)
    done.join()
    assert ok and np.array_equal(got["rows"], value[1]["rows"]) and got["words"] == ["a", 1, None]
    assert np.array_equal(got["mapped"], value[1]["mapped"]) and got["mapped"].flags.writeable
    packed = forking.Pickled.of(value)
    assert packed.buffers, "the array travels out of band"
    whole = sent_bytes(packed)
    for cut in (0, 9, len(whole) // 2, len(whole) - 1):
        reader, writer = multiprocessing.Pipe(duplex=False)

        def write_cut(part: bytes = whole[:cut], end=writer) -> None:
            with end:
                view = memoryview(part)
                while view:
                    view = view[os.write(end.fileno(), view):]

        feeder = threading.Thread(target=write_cut)
        feeder.start()
        with pytest.raises(EOFError):
            forking.receive(reader)
        feeder.join()


def sent_bytes(packed: forking.Pickled) -> bytes:
    """What `packed` writes down a pipe, as bytes."""
    reader, writer = multiprocessing.Pipe(duplex=False)
    chunks: list[bytes] = []

    def read_all() -> None:
        while chunk := os.read(reader.fileno(), 1 << 16):
            chunks.append(chunk)

    drain = threading.Thread(target=read_all)
    drain.start()
    packed.write(writer)
    writer.close()
    drain.join()
    return b"".join(chunks)


class _Node:
    other: _Node | None = None


def _garbage_cycle() -> weakref.ref:
    """A reference cycle nothing else holds (only the collector frees it), and a weak reference to it."""
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_the_heap_stays_frozen_until_the_outermost_block_ends():
    """Told by what the collector can free, not by `gc.get_freeze_count()`: frozen objects that die
    by their reference counts leave the count meanwhile (in a test worker, other tests' objects do)."""
    with forking.frozen_heap():
        assert gc.get_freeze_count() > 0
        with forking.collector_paused():            # no pass frees the cycle before the inner block freezes it
            alive = _garbage_cycle()
            with forking.frozen_heap():
                pass
        gc.collect()
        assert alive() is not None, "an inner block's end unfreezes nothing"
    gc.collect()
    assert alive() is None, "the outermost block's end unfreezes what the blocks froze"
    assert gc.get_freeze_count() == 0


def test_a_check_forks_its_readings_with_the_heap_frozen_and_leaves_it_as_it_was(monkeypatch):
    import verifier.runner as runner

    seen = []

    def watched(*args, **kwargs):
        seen.append(gc.get_freeze_count())
        return forking.fork_map(*args, **kwargs)

    monkeypatch.setattr(runner, "fork_map", watched)
    check_model(str(ROOT / "tests/fixtures/report/mini.yaml"))
    assert seen and all(n > 0 for n in seen) and gc.get_freeze_count() == 0


def test_the_collector_is_paused_within_the_block_and_as_before_after_it():
    assert gc.isenabled()
    with forking.collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with forking.collector_paused():
            pass
        assert not gc.isenabled(), "a collector paused before stays paused"
    finally:
        gc.enable()
