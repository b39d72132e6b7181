"""SIGTERM as an exception, so that a terminated run unwinds like an interrupted one: forked
workers are stopped and temporary folders removed by the `finally` blocks on the way out."""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


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


def _raise_out_of_time(_signum, _frame) -> None:
    raise OutOfTime()


@contextmanager
def hard_deadline(seconds: float | None) -> Iterator[None]:
    """Within the block, `OutOfTime` is raised once `seconds` and a grace (a tenth of them, at
    least 2 s) have passed: the backstop behind the engines' own clocks (main thread only)."""
    if seconds is None or not 0 < seconds < 1e8 or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer"):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _raise_out_of_time)
    signal.setitimer(signal.ITIMER_REAL, seconds + max(2.0, seconds / 10))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def default_signals_in_child() -> None:
    """In a forked worker: SIGTERM kills at once and SIGINT is left to the parent, which stops
    its workers itself (a worker must not unwind into the parent's handlers)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
