"""SIGTERM as an exception, so that a terminated run unwinds like an interrupted one: forked
workers are stopped and temporary folders removed by the `finally` blocks on the way out;
SIGALRM as the --timeout backstop (`OutOfTime`)."""
from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType


class Terminated(BaseException):
    """The process received SIGTERM (a BaseException: no `except Exception` swallows it)."""


def _raise_terminated(_signum, _frame) -> None:
    raise Terminated()


@contextmanager
def terminate_on_sigterm() -> Iterator[None]:
    """Within the block SIGTERM raises `Terminated` (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class OutOfTime(BaseException):
    """The run's --timeout (plus a grace) passed inside a step that does not watch the clock."""

    words = "cut short by --timeout"


PACKAGE = (str(Path(__file__).parent), str(Path(__file__).resolve().parent))   # as imported, and resolved
DEFER_SECONDS = 0.05     # an asynchronous exception waits this long for the run's own code ...
DEFER_TIMES = 40         # ... at most this many times


def safe_to_raise(frame: FrameType | None) -> bool:
    """Whether an exception raised asynchronously (by a signal handler) in `frame` unwinds only
    through turnproof's own code, which is written for it, and not inside a library that may
    be left half-way (an object half built)."""
    name = frame.f_code.co_filename if frame is not None else ""
    return name.startswith((*PACKAGE, "<turnproof"))


def _raise_out_of_time(_signum, frame) -> None:
    if not safe_to_raise(frame) and _backstop.deferred < DEFER_TIMES:
        _backstop.deferred += 1
        signal.setitimer(signal.ITIMER_REAL, DEFER_SECONDS)
        return
    raise OutOfTime()


class _Backstop:
    at: float | None = None       # time.monotonic() when the backstop fires
    grace = 0.0
    deferred = 0                  # times it waited for the run's own code (`safe_to_raise`)


_backstop = _Backstop()


def grace_seconds(seconds: float) -> float:
    """How long after --timeout the backstop fires: a tenth of it, at least 2 s."""
    return max(2.0, seconds / 10)


@contextmanager
def hard_deadline(seconds: float | None) -> Iterator[None]:
    """Within the block, `OutOfTime` is raised once `seconds` and a grace have passed: the
    backstop behind the engines' own clocks (main thread only). The runner catches it where
    it can keep what was decided (`cut_short`); forked workers get it a little earlier
    (`rearm_in_child`), so that their part arrives before the parent's backstop fires."""
    if seconds is None or not 0 < seconds < 1e8 or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer"):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _raise_out_of_time)
    _backstop.grace = grace_seconds(seconds)
    _backstop.at = time.monotonic() + seconds + _backstop.grace
    _backstop.deferred = 0
    signal.setitimer(signal.ITIMER_REAL, seconds + _backstop.grace)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _backstop.at = None


def past_deadline() -> bool:
    """Whether the run's --timeout has passed (the backstop's grace aside): what is left to do is
    writing what was decided, not new work such as laying out diagrams."""
    return _backstop.at is not None and time.monotonic() > _backstop.at - _backstop.grace


def after_cut() -> None:
    """After the backstop cut a step short: one more grace for what is left (writing what was
    decided); past it, the run ends with nothing decided."""
    if _backstop.at is not None and threading.current_thread() is threading.main_thread():
        _backstop.at = time.monotonic() + _backstop.grace
        _backstop.deferred = 0
        signal.setitimer(signal.ITIMER_REAL, _backstop.grace)


def _rearm_in_child() -> None:
    """Interval timers are not inherited by a forked child: the backstop again, fired a
    little before the parent's."""
    if _backstop.at is None:
        return
    margin = min(1.0, _backstop.grace / 2)
    _backstop.deferred = 0
    signal.signal(signal.SIGALRM, _raise_out_of_time)
    signal.setitimer(signal.ITIMER_REAL, max(0.01, _backstop.at - margin - time.monotonic()))


def default_signals_in_child() -> None:
    """In a forked worker: SIGTERM kills at once and SIGINT is left to the parent, which stops
    its workers itself (a worker must not unwind into the parent's handlers); the --timeout
    backstop is armed again."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _rearm_in_child()
