"""SIGTERM as an exception, so that a terminated run unwinds like an interrupted one: forked
workers are stopped and temporary folders removed by the `finally` blocks on the way out."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator


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


def default_signals_in_child() -> None:
    """In a forked worker: SIGTERM kills at once and SIGINT is left to the parent, which stops
    its workers itself (a worker must not unwind into the parent's handlers)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
