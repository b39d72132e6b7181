"""The run's signals: SIGTERM as an exception (`Terminated`), so that a terminated run unwinds like
an interrupted one (forked workers stopped, temporary folders removed by the `finally` blocks on
the way out); the --timeout backstop (`hard_deadline`, `OutOfTime`); worker signal settings.

The backstop keeps one promise: the run ends within --timeout plus a tenth of it and one second
(`allowance`), counted from when the process started (interpreter start-up and imports included,
`process_started`). Its steps, after the start:

- RESERVE of the timeout before it, the engines' own `Backstop` expires (they stop by themselves
  where they look), and forked workers are cut (SIGALRM in each: `OutOfTime`, caught where what
  they decided is kept and sent to the parent): the rest of the timeout is for writing it;
- HANDOVER of the allowance later, the parent is cut: the workers' parts have arrived, or the
  workers are stopped; what was decided is written;
- at --timeout and WRITING of the allowance, the writing itself is cut and the run ends with
  nothing decided.

The default deadline (no --timeout given) keeps the same steps on another clock (`cpu_deadline`):
the CPU seconds of the run and every process it started (`clock.CpuDeadlineClock`), so that whether
a run ends inside it depends on the machine's speed, never on its load; with a wall-clock limit
against hangs only, HANG_FACTOR times as long, in which the time the run waited for a CPU does not
count (`clock.UnstarvedClock`). A watchdog thread in each process reads that clock
every POLL_SECONDS and rings the alarm (SIGALRM) when a step is due. An explicit --timeout stays
wall clock (a timer rings the alarm), as the user asked.

A signal handler runs between two bytecodes of the main thread, never inside a call into C: where
the main thread waits in Z3 (a solver call may run for all its resource units), a watchdog thread
interrupts Z3 at the cut (`z3.Context.interrupt`) and again every INTERRUPT_EVERY seconds, so that
the handler gets its turn. Tests give the run a clock they move by hand (`run_clock`): no timer
is then armed, and the test rings the alarm itself (`fire`), so that none waits on a clock.
"""
from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import NoReturn

from verifier.resources.clock import Clock, CpuDeadlineClock, MonotonicClock

RESERVE = 0.05          # share of the timeout left, once the engines stop, for writing what they decided
HANDOVER = 0.3          # share of the allowance the parent gives its workers to hand over what they decided
WRITING = 0.8           # share of the allowance by which what was decided is written (the rest: the exit)
DEFER_SHARE = 0.1       # share of the allowance an OutOfTime may wait for the run's own code ...
DEFER_MOST = 2.0        # ... at most this many seconds (and this long inside Z3's wrapper, which is interrupted)
DEFER_SECONDS = 0.05    # between two looks
INTERRUPT_EVERY = 0.05  # seconds between two interrupts of Z3 once the cut is due
POLL_SECONDS = 0.5      # between two looks of the default deadline's watchdog at the run's CPU seconds
WATCH_STACK = 256 << 10  # the signal watch thread's stack: it reads a pipe and interrupts Z3
PACKAGE = (str(Path(__file__).parent.parent), str(Path(__file__).resolve().parent.parent))   # as imported, resolved


class Terminated(BaseException):
    """The process received SIGTERM (a BaseException: no `except Exception` swallows it)."""


_terminated = [False]     # SIGTERM came: kept where the `Terminated` it raised was swallowed
STOPPING = {signal.SIGTERM: Terminated, signal.SIGINT: KeyboardInterrupt}


def _raise_terminated(_signum, _frame) -> None:
    _terminated[0] = True
    raise Terminated()


class _SignalWatch(threading.Thread):
    """SIGTERM and SIGINT heard where the main thread cannot act on them: Python's own handler only
    writes the signal's number to the wakeup pipe while the main thread is inside a call into C
    (a Z3 query may run for minutes), and the exception a handler raises inside one of Z3's
    callbacks is only printed and dropped by ctypes. Once one of them came, this thread interrupts
    Z3 every INTERRUPT_EVERY seconds until the block ends, and sends the signal again each time its
    exception was dropped (`_unraisable`), so that it is raised in the run's own code."""

    def __init__(self, reader: int):
        super().__init__(daemon=True, name="turnproof-signals")
        self.reader = reader
        self.stopped = threading.Event()
        self.dropped: list[int] = []       # the signals whose exception was dropped, to send again
        self.interrupted = False           # it interrupted Z3 at least once
        self.main = threading.main_thread().ident

    def run(self) -> None:
        heard: int | None = None
        while heard is None:
            try:
                numbers = os.read(self.reader, 64)
            except OSError:
                return
            if not numbers or self.stopped.is_set():
                return
            heard = next((n for n in numbers if n in STOPPING), None)
        while not self.stopped.wait(INTERRUPT_EVERY):
            interrupt_z3()
            self.interrupted = True
            while self.dropped and self.main is not None:
                signal.pthread_kill(self.main, self.dropped.pop())


def _unraisable(watch: _SignalWatch, previous):
    """sys.unraisablehook: a Terminated or KeyboardInterrupt dropped (raised inside a C library's
    callback or an at-fork hook) is sent again by `watch`; anything else is printed as before."""
    def hook(unraisable) -> None:
        for signum, kind in STOPPING.items():
            if isinstance(unraisable.exc_value, kind):
                watch.dropped.append(signum)
                return
        previous(unraisable)
    return hook


@contextmanager
def _watching_signals() -> Iterator[None]:
    """Within the block (main thread), SIGTERM and SIGINT reach the run even while it waits in Z3."""
    reader, writer = os.pipe()
    os.set_blocking(writer, False)
    watch = _SignalWatch(reader)
    previous_fd = signal.set_wakeup_fd(writer, warn_on_full_buffer=False)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _unraisable(watch, previous_hook)
    stack = threading.stack_size(WATCH_STACK)    # not the default 8 MB of address space (a run under ulimit -v)
    try:
        watch.start()
    finally:
        threading.stack_size(stack)
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        signal.set_wakeup_fd(previous_fd)
        watch.stopped.set()
        os.write(writer, b"\0")         # wakes its read (a forked worker may hold the pipe open)
        watch.join()
        if watch.interrupted:
            clear_z3_interrupt()
        os.close(writer)
        os.close(reader)


def was_terminated() -> bool:
    """Whether SIGTERM came within the last `terminate_on_sigterm` block, even where the exception
    it raised was swallowed (one raised inside a fork's after-fork hook is only 'ignored' by Python,
    and the run went on to exit 0)."""
    return _terminated[0]


@contextmanager
def terminate_on_sigterm() -> Iterator[None]:
    """Within the block SIGTERM raises `Terminated` and SIGINT `KeyboardInterrupt`, even where the
    main thread waits in Z3 (`_SignalWatch`) (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _terminated[0] = False
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        with _watching_signals():
            yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class OutOfTime(BaseException):
    """The run's --timeout passed inside a step that does not watch the clock."""

    words = "cut short by --timeout"


def allowance(seconds: float) -> float:
    """How long after --timeout the run may take to end: a tenth of it and one second."""
    return seconds / 10 + 1


def process_started() -> float:
    """When this process started, on `time.monotonic()`'s clock (the interpreter's start-up and
    imports count against --timeout); now where the system does not say."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])      # field 22, starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - min(max(0.0, age), 60.0)


def safe_to_raise(frame: FrameType | None) -> bool:
    """Whether an exception raised asynchronously (by a signal handler) in `frame` unwinds only
    through turnproof's own code, which is written for it, and not inside a library that may
    be left half-way (an object half built)."""
    name = frame.f_code.co_filename if frame is not None else ""
    return name.startswith((*PACKAGE, "<turnproof"))


def holds_logging_lock() -> bool:
    """Whether this thread holds the logging module's lock. An exception raised asynchronously
    while it does (between the lock's taking and the `try` that gives it back) leaves it held, and
    every other thread that logs (Dask's event loop) then waits forever: never raised there."""
    logging = sys.modules.get("logging")        # not imported: nobody holds its lock
    owned = getattr(getattr(logging, "_lock", None), "_is_owned", None)
    return bool(owned is not None and owned())


@dataclass
class Alarm:
    """The backstop's steps, in seconds on `time.monotonic()`'s clock (see the module doc)."""

    timeout_at: float       # RESERVE before --timeout: the engines' backstop, the workers' cut
    cut_at: float           # the parent's cut
    end_at: float           # the writing's cut
    defer: float            # how long an OutOfTime may wait for the run's own code

    @classmethod
    def after(cls, seconds: float, started: float) -> Alarm:
        spare = allowance(seconds)
        stop = started + seconds * (1 - RESERVE)
        return cls(stop, stop + HANDOVER * spare, started + seconds + WRITING * spare,
                   min(DEFER_MOST, DEFER_SHARE * spare))


class _State:
    clock: Clock = MonotonicClock()
    alarm: Alarm | None = None
    due = 0.0               # when the pending OutOfTime is due (its deferral counts from there)
    worker = False          # this process is a forked worker: cut at --timeout
    timed_out = False       # the last run's --timeout passed before it ended (`leave`)
    interrupter: _Interrupter | None = None


_state = _State()


class _Interrupter(threading.Thread):
    """Interrupts Z3 from `at` on, every INTERRUPT_EVERY seconds, until stopped: the signal handler
    cannot run while the main thread is inside a solver call. On the default deadline's clock, which
    no timer follows, it looks at the clock every POLL_SECONDS and rings the alarm itself at `at`."""

    def __init__(self, at: float, rings: bool = False):
        super().__init__(daemon=True, name="turnproof-backstop")
        self.at = at
        self.rings = rings
        self.stopped = threading.Event()
        self.interrupted = False        # it interrupted Z3 at least once
        self.main = threading.main_thread().ident

    def run(self) -> None:
        if self.rings:
            while now() < self.at:
                if self.stopped.wait(POLL_SECONDS):
                    return
            if self.main is not None:
                signal.pthread_kill(self.main, signal.SIGALRM)
        elif self.stopped.wait(max(0.0, self.at - time.monotonic())):
            return
        while True:
            interrupt_z3()
            self.interrupted = True
            if self.stopped.wait(INTERRUPT_EVERY):
                return


def interrupt_z3() -> None:
    """Interrupt what Z3 is doing now, where Z3 is loaded and has started (its calls then answer
    `unknown`, "canceled")."""
    z3 = sys.modules.get("z3")
    ctx = getattr(getattr(z3, "z3", None), "_main_ctx", None)
    if ctx is not None:
        ctx.interrupt()


def clear_z3_interrupt() -> None:
    """Once the interrupts have ended: Z3 keeps one that came while none of its calls ran (its context
    stays cancelled, and `z3.simplify` returns its argument unrewritten) until its next solver call,
    which clears it: an empty one here."""
    z3 = sys.modules.get("z3")
    if z3 is not None and getattr(z3.z3, "_main_ctx", None) is not None:
        with contextlib.suppress(z3.Z3Exception):
            z3.Solver().check()


def now() -> float:
    """The time on the run's clock (`time.monotonic()`, or the one a test gave `run_clock`)."""
    return _state.clock.now()


def clock() -> Clock:
    """The run's clock, for the engines' `Backstop`."""
    return _state.clock


@contextmanager
def cpu_deadline(started: float, from_process_start: bool) -> Iterator[float]:
    """Within the block the run's clock is the default deadline's (`CpuDeadlineClock`: the CPU
    seconds of the run and its workers, or its wall-clock seconds since `started`, on
    `time.monotonic()`'s clock, less the time it waited for a CPU, divided by HANG_FACTOR); yields when
    the run started on it. A clock a
    test gave `run_clock` is kept (and the start read on it)."""
    if not isinstance(_state.clock, MonotonicClock):
        yield now()
        return
    previous = _state.clock
    _state.clock = CpuDeadlineClock.started(started, from_process_start)
    try:
        yield 0.0
    finally:
        _state.clock = previous


@contextmanager
def run_clock(moved: Clock) -> Iterator[None]:
    """Within the block the backstop reads `moved`, a clock a test moves by hand, and arms no timer:
    the test rings the alarm itself (`fire`) once it has moved the clock past the cut."""
    previous = _state.clock
    _state.clock = moved
    try:
        yield
    finally:
        _state.clock = previous


def _arm(at: float) -> None:
    """The next OutOfTime at `at` (SIGALRM), and Z3 interrupted from then on."""
    _state.due = at
    _stop_interrupter()
    if _timed():
        signal.setitimer(signal.ITIMER_REAL, max(0.001, at - time.monotonic()))
    elif not _polled():
        return
    _state.interrupter = _Interrupter(at, rings=_polled())
    _state.interrupter.start()


def _stop_interrupter() -> None:
    """End the watchdog thread (waited for, so that it rings and interrupts nothing after this)."""
    thread = _state.interrupter
    if thread is not None:
        _state.interrupter = None
        thread.stopped.set()
        if thread is not threading.current_thread() and thread.is_alive():
            thread.join()
        if thread.interrupted:
            clear_z3_interrupt()


def fire(frame: FrameType | None) -> None:
    """What SIGALRM does once its step is due: raise OutOfTime, or wait a little (DEFER_SECONDS,
    until the alarm's `defer` has passed) where `frame` is inside a library's code, and wait in any
    case where it is inside the backstop's own setting up or ending (`hard_deadline`) or holds the
    logging module's lock (`holds_logging_lock`)."""
    assert _state.alarm is not None, "the backstop is armed"
    wait = DEFER_MOST if _in_z3(frame) else _state.alarm.defer     # Z3 is interrupted meanwhile: it returns soon
    if _in_block_edges(frame) or holds_logging_lock() or (not safe_to_raise(frame) and now() < _state.due + wait):
        if _timed() or _polled():
            signal.setitimer(signal.ITIMER_REAL, DEFER_SECONDS)
        return
    raise OutOfTime()


def _in_block_edges(frame: FrameType | None) -> bool:
    """Whether `frame` runs inside `hard_deadline`'s own setting up or ending (its frame is on the
    stack only then: the block's body runs in the caller's frame). An OutOfTime raised there would
    leave the alarm set and the watchdog thread running past the block, to interrupt later Z3 calls
    of this process; waited for instead, it is never due again once the ending has disarmed it."""
    while frame is not None:
        if frame.f_code is _BLOCK_CODE:
            return True
        frame = frame.f_back
    return False


def _in_z3(frame: FrameType | None) -> bool:
    """Whether `frame` is Z3's Python wrapper (an exception raised there can come out of ctypes as
    an `ArgumentError` of its own, which no handler of the backstop's recognises)."""
    return frame is not None and f"{os.sep}z3{os.sep}" in frame.f_code.co_filename


def _timed() -> bool:
    """Whether the backstop keeps to the machine's clock (a timer rings it), not to one a test moves."""
    return isinstance(_state.clock, MonotonicClock)


def _polled() -> bool:
    """Whether the backstop keeps to the default deadline's clock on the machine (its watchdog
    thread rings it), not to one a test moves."""
    return isinstance(_state.clock, CpuDeadlineClock) and _state.clock.real()


def _on_alarm(_signum, frame) -> None:
    if _state.alarm is not None:
        fire(frame)


@contextmanager
def hard_deadline(seconds: float | None, started: float | None = None) -> Iterator[None]:
    """Within the block, the backstop of a run given `seconds` (--timeout) that started at
    `started` (on the run's clock, `now`; default now): see the module doc. Main thread only."""
    if seconds is None or not 0 < seconds < 1e8 or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer"):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        _state.alarm = Alarm.after(seconds, now() if started is None else started)
        _state.worker = False
        _state.timed_out = False
        _arm(_state.alarm.cut_at)
        yield
    finally:
        # no alarm may ring past here (an OutOfTime raised inside this ending would leave the alarm set,
        # and the caller's `after_cut` would arm a watchdog that outlives the run and interrupts the
        # next one's Z3 calls in this process): the alarm does not raise here (`_in_block_edges`), is
        # ignored first, and the watchdog thread is ended and waited for
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        signal.setitimer(signal.ITIMER_REAL, 0)
        _stop_interrupter()
        _state.timed_out = past_deadline()
        _state.alarm = None
        signal.signal(signal.SIGALRM, previous)


_BLOCK_CODE = hard_deadline.__wrapped__.__code__     # type: ignore[attr-defined]  # the generator under contextmanager


def engines_stop(seconds: float, started: float) -> float:
    """When the engines' `Backstop` of a run given `seconds` (--timeout) that started at `started`
    expires: the rest of the timeout is for writing what they decided."""
    return Alarm.after(seconds, started).timeout_at


def deadline_name() -> str:
    """The run's backstop in a user's words: the default deadline where the run keeps to its clock."""
    return "the default deadline" if isinstance(_state.clock, CpuDeadlineClock) else "the --timeout"


def past_deadline() -> bool:
    """Whether the engines' time has passed (`engines_stop`): what is left to do is writing what
    was decided, not new work such as laying out diagrams."""
    return _state.alarm is not None and now() > _state.alarm.timeout_at


def after_cut() -> None:
    """After the backstop cut a step short: what is left (writing what was decided, or in a worker,
    sending it) is cut in turn at the next step; past it, the run ends with nothing decided."""
    alarm = _state.alarm
    if alarm is not None and threading.current_thread() is threading.main_thread():
        _arm(alarm.cut_at if _state.worker else alarm.end_at)


def default_signals_in_child() -> None:
    """In a forked worker: SIGTERM kills at once and SIGINT is left to the parent, which stops
    its workers itself (a worker must not unwind into the parent's handlers); the backstop is
    armed again (interval timers and threads are not inherited), cutting the worker at --timeout."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if threading.current_thread() is threading.main_thread():
        signal.set_wakeup_fd(-1)        # the parent's pipe: its watch thread is not in this process
    _state.interrupter = None           # the parent's thread: not in this process
    if _state.alarm is None:
        return
    _state.worker = True
    signal.signal(signal.SIGALRM, _on_alarm)
    _arm(_state.alarm.timeout_at)


def leave(code: int) -> NoReturn:
    """End the process with `code`. Once the run's --timeout has passed, at once: the output
    flushed, without the interpreter's teardown of what the run held (freeing millions of objects
    one by one can take seconds the allowance does not have); not where processes were started
    through multiprocessing's resource tracker (a Dask cluster's), which the teardown tells that
    their semaphores are gone (it warns of leaked ones otherwise). Else through the teardown, every
    object there is left out of its garbage collections (`gc.freeze`): they walked all of them,
    Numba's, Z3's and what the run kept (0.45 s of CPU after a WTactics --printed check); what
    the teardown frees it frees as it drops the modules, and the exit handlers run as before."""
    tracker = sys.modules.get("multiprocessing.resource_tracker")
    if _state.timed_out and getattr(getattr(tracker, "_resource_tracker", None), "_fd", None) is None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    gc.freeze()
    raise SystemExit(code)
