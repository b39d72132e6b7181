"""The backstop's block leaves nothing armed behind it, wherever the alarm rings (issue #25).

A SIGALRM from the default deadline's watchdog that landed inside `hard_deadline`'s own ending raised
OutOfTime there: the alarm stayed set, the watchdog thread (`turnproof-backstop`) went on running,
the caller's `after_cut` armed one more, and later Z3 calls of the same process were interrupted (a
claim UNKNOWN in a later test of the suite). Here the alarm is rung by hand at each line the block's
own setting up and ending run (a tracer on its frame), with the run's clock moved past the cut first.
The watchdog thread, which then finds every step due, may ring once more wherever the main thread is:
what is checked holds wherever it does. No test here waits on a clock. (Fails on the code before the
fix, where the alarm could raise in the setting up or in the ending's first line.)"""
from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable

import pytest

from verifier.cli.common import DEFAULT_TIMEOUT
from verifier.resources import CpuDeadlineClock, ManualClock, MonotonicClock, signals

BLOCK = signals.hard_deadline.__wrapped__.__code__     # the generator under contextmanager
EXIT = type(signals.hard_deadline(None)).__exit__.__code__   # contextlib's, which resumes it at the block's end
WATCHDOG = "turnproof-backstop"


def _run_block(at_line: Callable[[int], None], code=BLOCK) -> bool:
    """One run of the backstop's block, its body empty, on the default deadline's clock with its watchdog
    thread (the CPU clock a ManualClock); `at_line(n)` runs at the n-th line run in `code` (the block's
    own, or contextlib's `__exit__` that ends it). Whether OutOfTime came out of the block."""
    def local(frame, event, _arg):
        if event == "line":
            local.lines += 1                                      # type: ignore[attr-defined]
            at_line(local.lines)                                  # type: ignore[attr-defined]
        return local

    local.lines = 0                                               # type: ignore[attr-defined]
    tracer = sys.gettrace()
    sys.settrace(lambda frame, _event, _arg: local if frame.f_code is code else None)
    try:
        with signals.hard_deadline(DEFAULT_TIMEOUT, 0.0):
            pass
    except signals.OutOfTime:
        return True
    finally:
        sys.settrace(tracer)
    return False


def _lines_run(code) -> int:
    """How many lines of `code` one run of the block executes."""
    seen: list[int] = []
    _run_block(seen.append, code)
    return len(seen)


def _nothing_armed(previous) -> None:
    assert not [t for t in threading.enumerate() if t.name == WATCHDOG and t.is_alive()]
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is previous
    assert not signals.past_deadline()


@pytest.mark.parametrize("code", [BLOCK, EXIT], ids=["hard_deadline", "contextlib-exit"])
def test_an_alarm_ringing_inside_the_block_own_lines_leaves_nothing_armed_after_it(code):
    rang: list[int] = []

    def previous(_signum, _frame) -> None:                        # the handler before the block: records, raises nothing
        rang.append(1)

    cpu = ManualClock()
    clock = CpuDeadlineClock(cpu, MonotonicClock(), 0.0, time.monotonic())   # polled: the watchdog thread runs
    before = signal.signal(signal.SIGALRM, previous)
    try:
        with signals.run_clock(clock):
            lines = _lines_run(code)
            assert lines >= (10 if code is BLOCK else 3)          # the setting up and the ending, both traced
            _nothing_armed(previous)
            for line in range(1, lines + 1):
                def ring(n: int, line: int = line) -> None:
                    if n == line:
                        cpu.advance(10 * DEFAULT_TIMEOUT)         # every step of the backstop is due
                        signal.raise_signal(signal.SIGALRM)      # as the watchdog's pthread_kill, here and now

                _run_block(ring, code)                            # an OutOfTime out of the block is allowed: it was due
                _nothing_armed(previous)
                signals.after_cut()                               # what a caller does after a cut: arms nothing now
                _nothing_armed(previous)
                cpu.at = 0.0
    finally:
        signal.signal(signal.SIGALRM, before)


@pytest.mark.parametrize("ring_in_body", [False, True])
def test_a_cut_in_the_body_still_ends_the_block_cleanly(ring_in_body):
    """The alarm rung by hand in the block's body cuts it (OutOfTime), and the block's ending still
    disarms everything; without it the block ends as it started."""
    clock = ManualClock()
    before = signal.getsignal(signal.SIGALRM)
    with signals.run_clock(clock):
        try:
            with signals.hard_deadline(10.0, 0.0):
                if ring_in_body:
                    clock.advance(100.0)
                    signals.fire(None)
            cut = False
        except signals.OutOfTime:
            cut = True
        assert cut is ring_in_body
        _nothing_armed(before)
