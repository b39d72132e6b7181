"""The --timeout backstop's steps (`resources.signals`): within --timeout plus a tenth and one
second, counted from the process's start; Z3 interrupted where the alarm cannot reach it. No test
here waits on a clock: the run's clock is a ManualClock, and the alarm is rung by hand (`fire`)."""
from __future__ import annotations

import logging
import threading
import time

import pytest
import z3

from verifier.cli.common import DEFAULT_TIMEOUT
from verifier.resources import CpuDeadlineClock, ManualClock, MonotonicClock, signals


def test_the_steps_fit_in_the_allowance():
    for seconds in (0.5, 5, 15, 600):
        alarm = signals.Alarm.after(seconds, 1000.0)
        spare = signals.allowance(seconds)
        assert spare == pytest.approx(seconds / 10 + 1)
        assert 1000 + seconds * (1 - signals.RESERVE) == alarm.timeout_at < alarm.cut_at < alarm.end_at
        assert 1000 + seconds < alarm.end_at < 1000 + seconds + spare
        assert alarm.cut_at + alarm.defer < alarm.end_at


def test_the_process_start_is_before_now():
    now = time.monotonic()
    assert now - 60 <= signals.process_started() <= time.monotonic()


def test_the_alarm_waits_briefly_for_the_run_own_code_then_cuts():
    """Rung inside a library's frame, the alarm waits (`defer`, on the run's clock) for turnproof's
    own code; past that it cuts wherever the run is."""
    clock = ManualClock(0.0)
    with signals.run_clock(clock), signals.hard_deadline(5.0):
        clock.advance(signals.Alarm.after(5.0, 0.0).cut_at)      # the parent's cut is due
        signals.fire(None)                                        # in a library: not yet
        assert signals.past_deadline()
        clock.advance(1.0)
        with pytest.raises(signals.OutOfTime):
            signals.fire(None)
    assert not signals.past_deadline()


def test_the_alarm_never_cuts_where_the_logging_lock_is_held():
    """Raised between the logging lock's taking and its `try`, OutOfTime would leave the lock held
    and Dask's event-loop thread waiting for it forever (seen once in a whole suite run)."""
    clock = ManualClock(0.0)
    with signals.run_clock(clock), signals.hard_deadline(5.0):
        clock.advance(signals.Alarm.after(5.0, 0.0).cut_at + 60.0)   # long past the deferral
        with logging._lock:                                          # type: ignore[attr-defined]
            assert signals.holds_logging_lock()
            signals.fire(None)                                        # waits for the lock's release
        assert not signals.holds_logging_lock()
        with pytest.raises(signals.OutOfTime):
            signals.fire(None)


def test_after_a_cut_the_writing_has_until_its_own_step():
    clock = ManualClock(0.0)
    with signals.run_clock(clock), signals.hard_deadline(10.0):
        clock.advance(10.5)
        signals.after_cut()                                        # the parent was cut: now the writing
        signals.fire(None)                                         # not due yet
        clock.advance(signals.allowance(10.0))
        with pytest.raises(signals.OutOfTime):
            signals.fire(None)


def test_a_z3_call_is_interrupted_where_the_alarm_cannot_reach():
    """A solver call holds the main thread inside C, where no signal handler runs: the backstop's
    watchdog thread interrupts Z3 (here as soon as the call runs), and the call answers unknown."""
    solver = z3.Solver()
    solver.set("rlimit", 2_000_000_000)        # a bound, should the interrupt not come: the test then fails
    holes, pigeons = 10, 11
    x = [[z3.Bool(f"p{i}h{j}") for j in range(holes)] for i in range(pigeons)]
    for i in range(pigeons):
        solver.add(z3.Or(x[i]))
    for j in range(holes):
        for i in range(pigeons):
            for k in range(i + 1, pigeons):
                solver.add(z3.Not(z3.And(x[i][j], x[k][j])))
    done = threading.Event()

    def interrupt_until_done() -> None:
        while not done.is_set():
            signals.interrupt_z3()
            done.wait(0.01)

    thread = threading.Thread(target=interrupt_until_done, daemon=True)
    thread.start()
    try:
        answer = solver.check()
    finally:
        done.set()
        thread.join()
        signals.clear_z3_interrupt()           # an interrupt after the call returned: not left to later tests
    assert answer == z3.unknown and solver.reason_unknown() in ("interrupted", "canceled")


def test_z3_simplifies_again_after_a_block_that_interrupted_it(monkeypatch):
    """An interrupt that came while no Z3 call ran left Z3's context cancelled past the block, and
    `z3.simplify` then returned its argument unrewritten until the next solver call (an in-process
    run cut by its --timeout, in the fuzz tests, made a later test's `3 % 0` defined where `0 > 0`).
    Here the watchdog thread interrupts Z3 between its calls; after the block Z3 simplifies again."""
    interrupted = threading.Event()
    real = signals.interrupt_z3

    def interrupt() -> None:
        real()
        interrupted.set()

    monkeypatch.setattr(signals, "interrupt_z3", interrupt)
    assert z3.is_false(z3.simplify(z3.IntVal(0) > 0))              # Z3 started, its context not cancelled
    cpu = ManualClock()
    clock = CpuDeadlineClock(cpu, MonotonicClock(), 0.0, time.monotonic())   # polled: the watchdog thread runs
    with signals.run_clock(clock), pytest.raises(signals.OutOfTime), signals.hard_deadline(DEFAULT_TIMEOUT, 0.0):
        try:
            cpu.advance(10 * DEFAULT_TIMEOUT)                          # every step due: the watchdog rings
            interrupted.wait()
        except signals.OutOfTime:                                      # rung before it interrupts Z3
            interrupted.wait()
            raise
    assert z3.is_false(z3.simplify(z3.IntVal(0) > 0))
