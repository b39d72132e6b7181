"""The default deadline counts CPU seconds (issue #25): a run given no --timeout is cut when it and its
workers have computed for 600 s, however much of the machine they got, or, against hangs only, at eight
times that in wall clock; each cut says which limit it was. An explicit --timeout stays wall clock.

No test here waits on a clock: the run's clocks are ones the tests move by hand; the CPU a child spends
is counted in CPU seconds it spins for, not in time it takes."""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.cli.common import DEFAULT_TIMEOUT
from verifier.portfolio.auto import AutoEngine
from verifier.resources import Backstop, CpuDeadlineClock, ManualClock, MonotonicClock, StopKind, TreeCpuClock, signals
from verifier.resources import clock as clocks
from verifier.resources.clock import HANG_FACTOR, UnstarvedClock, own_times, tree_waits

FIXTURES = Path(__file__).parent / "fixtures" / "core"
MINI = str(FIXTURES / "mini.yaml")
CHECK = ["check", MINI, "-p", str(FIXTURES / "mini_props.yaml"), "--variant", "loose", "-q", "--no-consistency"]
CPU_WORDS = f"cut short by the default CPU budget of {DEFAULT_TIMEOUT:g} s"
HANG_WORDS = ("cut short by the default deadline's wall-clock limit against hangs "
              f"({DEFAULT_TIMEOUT * HANG_FACTOR:,.0f} s)")


def _spin(cpu_seconds: float) -> None:
    """Compute until this process has spent `cpu_seconds` of CPU (however long that takes)."""
    start = os.times()
    while (lambda t: t.user + t.system - start.user - start.system)(os.times()) < cpu_seconds:
        sum(range(1000))


def _fork(body) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            body()
        finally:
            os._exit(0)
    return pid


def test_the_tree_clock_counts_running_children_and_the_grandchildren_they_reaped():
    """os.times counts only reaped children: a reading's child still running, with a grandchild it has
    reaped, is counted by the tree clock alone."""
    if not os.path.exists(f"/proc/{os.getpid()}/stat"):
        pytest.skip("the tree clock reads /proc (elsewhere it counts this process and its reaped children)")
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()

    def child() -> None:
        grandchild = _fork(lambda: _spin(0.2))
        os.waitpid(grandchild, 0)               # reaped: its CPU goes into this child's cutime
        _spin(0.1)
        os.write(ready_w, b"x")
        os.read(go_r, 1)                        # still running while the parent reads the clock

    before, times_before = TreeCpuClock().now(), own_times()
    pid = _fork(child)
    try:
        assert os.read(ready_r, 1) == b"x"
        assert TreeCpuClock().now() - before >= 0.3 - 0.03       # a tick (10 ms) of rounding per process
        assert own_times() - times_before < 0.2                  # the child runs on: not in os.times
    finally:
        os.write(go_w, b"x")
        os.waitpid(pid, 0)
        for fd in (ready_r, ready_w, go_r, go_w):
            os.close(fd)


def test_the_tree_clock_reads_the_same_descendants_as_a_scan_of_every_process(monkeypatch):
    """The run's processes are found from its own /proc entries (each thread's children) as a scan of
    every process's parent finds them: a running grandchild, and a child a thread other than the
    main one started, among them."""
    if not clocks._lists_children():
        pytest.skip("this kernel does not list a thread's children in /proc")
    go_r, go_w = os.pipe()
    ready_r, ready_w = os.pipe()

    def child() -> None:
        _fork(lambda: os.read(go_r, 1))          # a grandchild, running
        os.write(ready_w, b"x")
        os.read(go_r, 1)

    def thread() -> None:                       # its child is listed under it while it runs
        pids.append(_fork(lambda: os.read(go_r, 1)))
        forked.set()
        read.wait()

    pids = [_fork(child)]
    forked, read = threading.Event(), threading.Event()
    started = threading.Thread(target=thread)
    started.start()
    try:
        assert os.read(ready_r, 1) == b"x" and forked.wait(60)
        found = clocks._descendants(os.getpid())
        monkeypatch.setattr(clocks, "_lists_children", lambda: False)
        assert sorted(found) == sorted(clocks._descendants(os.getpid()))
        assert set(pids) <= set(found) and len(found) >= 3
    finally:
        read.set()
        started.join()
        os.write(go_w, b"xxx")
        for pid in pids:
            os.waitpid(pid, 0)
        for fd in (ready_r, ready_w, go_r, go_w):
            os.close(fd)


def test_without_proc_the_cpu_clock_counts_this_process_and_the_children_it_reaped(monkeypatch):
    """The documented limit outside Linux: a running child is counted once it is reaped, not before."""
    monkeypatch.setattr(clocks, "tree_ticks", lambda _root: None)
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    before = TreeCpuClock().now()

    def child() -> None:
        _spin(0.2)
        os.write(ready_w, b"x")
        os.read(go_r, 1)

    pid = _fork(child)
    try:
        assert os.read(ready_r, 1) == b"x"
        assert TreeCpuClock().now() - before < 0.2                  # it has computed 0.2 s, still running: not counted
    finally:
        os.write(go_w, b"x")
        os.waitpid(pid, 0)
        for fd in (ready_r, ready_w, go_r, go_w):
            os.close(fd)
    assert TreeCpuClock().now() - before >= 0.2 - 0.01               # reaped: counted


def test_the_default_deadline_clock_is_cpu_or_the_wall_clock_over_the_hang_factor():
    cpu, wall = ManualClock(50.0), ManualClock(1000.0)
    clock = CpuDeadlineClock(cpu, wall, cpu_origin=50.0, wall_origin=1000.0)
    cpu.advance(30.0)
    wall.advance(100.0)                          # a loaded machine: 30 s of CPU in 100 s
    assert clock.now() == 30.0 and not clock.hung()
    wall.advance(100.0 * HANG_FACTOR)            # waiting, not computing
    assert clock.now() == pytest.approx(100.0 + 100.0 / HANG_FACTOR) and clock.hung()
    assert not clock.real() and CpuDeadlineClock.started(0.0, from_process_start=True).real()


def test_each_cut_names_the_limit_that_cut():
    cpu, wall = ManualClock(), ManualClock()
    clock = CpuDeadlineClock(cpu, wall, 0.0, 0.0)
    backstop = Backstop.default_deadline(570.0, DEFAULT_TIMEOUT, clock)
    cpu.advance(570.0)
    assert backstop.expired() and backstop.stop().words == CPU_WORDS and backstop.stop().kind is StopKind.BACKSTOP
    cpu2, wall2 = ManualClock(), ManualClock()
    hung = Backstop.default_deadline(570.0, DEFAULT_TIMEOUT, CpuDeadlineClock(cpu2, wall2, 0.0, 0.0))
    cpu2.advance(3.0)
    wall2.advance(570.0 * HANG_FACTOR)
    assert hung.expired() and hung.stop().words == HANG_WORDS
    explicit = Backstop.after(600.0, "--timeout (600 s)", ManualClock())
    assert explicit.hang is None and explicit.cut_by() == "--timeout (600 s)"


class Waits:
    """A run's processes and the seconds each has waited for a CPU, as `tree_waits` would read them."""

    def __init__(self) -> None:
        self.seconds: dict[int, float] = {}
        self.readable = True

    def __call__(self, _root: int) -> dict[int, int] | None:
        return {pid: round(s * 1e9) for pid, s in self.seconds.items()} if self.readable else None


def test_the_unstarved_clock_leaves_out_the_time_the_run_waited_for_a_cpu():
    wall, waits = ManualClock(100.0), Waits()
    waits.seconds = {1: 2.0}                                    # waited before the run: not counted
    clock = UnstarvedClock(100.0, wall, root=1, waits=waits)
    wall.advance(16.0)
    waits.seconds[1] += 15.0                                    # a sixteenth of a core: waiting for a CPU the rest
    assert clock.now() == pytest.approx(101.0)
    wall.advance(10.0)                                          # a hang: sleeping, waiting for no CPU
    assert clock.now() == pytest.approx(111.0)
    wall.advance(10.0)
    waits.seconds.update({1: waits.seconds[1] + 9.0, 2: 9.0})   # two processes waiting: never below none
    assert clock.now() == pytest.approx(111.0)
    wall.advance(4.0)
    del waits.seconds[2]                                        # a process reaped: nothing goes back
    assert clock.now() == pytest.approx(115.0)
    waits.readable = False                                      # where the system does not say: the wall clock
    wall.advance(6.0)
    assert clock.now() == pytest.approx(121.0)
    assert not clock.real() and UnstarvedClock(0.0).real()


def _cut_when_starved(unstarved: bool) -> tuple[float, str]:
    """A run given a sixteenth of a core (each 16 s of wall clock: 1 s of CPU, 15 s waiting for one)
    under the default deadline, its limit against hangs on the wall clock less the time it waited for a
    CPU (`unstarved`) or on the plain wall clock: the wall-clock seconds at its cut, and who cut it."""
    cpu, machine, waits = ManualClock(), ManualClock(), Waits()
    wall = UnstarvedClock(0.0, machine, root=1, waits=waits) if unstarved else machine
    backstop = Backstop.default_deadline(signals.engines_stop(DEFAULT_TIMEOUT, 0.0), DEFAULT_TIMEOUT,
                                         CpuDeadlineClock(cpu, wall, 0.0, 0.0))
    while not backstop.expired():
        cpu.advance(1.0)
        machine.advance(16.0)
        waits.seconds[1] = waits.seconds.get(1, 0.0) + 15.0
    return machine.at, backstop.cut_by()


def test_a_run_starved_below_an_eighth_of_a_core_is_cut_by_its_cpu_budget_not_as_a_hang():
    """On the plain wall clock its limit against hangs (eight times the budget) came first; without
    the time the run waited for a CPU, the run is cut by the CPU budget, having computed for as long
    as a quiet run may."""
    cut = signals.engines_stop(DEFAULT_TIMEOUT, 0.0)
    at, owner = _cut_when_starved(unstarved=True)
    assert owner == f"the default CPU budget of {DEFAULT_TIMEOUT:g} s" and at == pytest.approx(16 * cut, abs=16)
    plain_at, plain_owner = _cut_when_starved(unstarved=False)
    assert plain_owner.startswith("the default deadline's wall-clock limit against hangs")
    assert plain_at == pytest.approx(HANG_FACTOR * cut, abs=16)


def test_the_tree_waits_count_a_child_kept_waiting_for_its_core():
    """A child computing on one core beside a busy loop pinned there waits for it part of the time (the
    scheduler shares a core between the two in slices of milliseconds): read from /proc, its run-queue
    wait is counted under this process's tree."""
    if tree_waits(os.getpid()) is None:
        pytest.skip("the system gives no run-queue delays (/proc/<pid>/schedstat): the limit against hangs "
                    "keeps to the wall clock there")
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("needs os.sched_setaffinity to share one core")
    core = min(os.sched_getaffinity(0))
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()

    def pinned(body):
        def run() -> None:
            os.sched_setaffinity(0, {core})
            body()
        return run

    def child() -> None:
        _spin(0.2)
        os.write(ready_w, b"x")
        os.read(go_r, 1)

    def spin_there() -> None:
        os.write(ready_w, b"s")                  # pinned: the child starts beside it
        _spin(1e9)

    spinner = _fork(pinned(spin_there))
    pid = -1
    try:
        assert os.read(ready_r, 1) == b"s"
        pid = _fork(pinned(child))
        assert os.read(ready_r, 1) == b"x"
        waits = tree_waits(os.getpid())
        assert waits is not None and waits.get(pid, 0) > 0
    finally:
        os.write(go_w, b"x")
        os.kill(spinner, 9)
        for p in (pid, spinner):
            if p > 0:
                os.waitpid(p, 0)
        for fd in (ready_r, ready_w, go_r, go_w):
            os.close(fd)


def _before_engines(monkeypatch, before) -> None:
    """`before(budget)` at the start of each call of the auto engine's methods the portfolio calls."""
    def calling(decide):
        def call(self, model, properties, budget, progress=None):
            before(budget)
            return decide(self, model, properties, budget, progress)
        return call

    monkeypatch.setattr(AutoEngine, "check", calling(AutoEngine.check))
    monkeypatch.setattr(AutoEngine, "check_explicit", calling(AutoEngine.check_explicit))


def _check(clock, spend, capsys, monkeypatch) -> tuple[int, dict, str]:
    """`check MINI` with the run's clock `clock`; each engine call first runs `spend()` (which moves
    it) and rings the alarm as the watchdog would, then decides as it does."""
    def before_each_call(_budget) -> None:
        spend()
        signals.fire(None)

    _before_engines(monkeypatch, before_each_call)
    with signals.run_clock(clock):
        code = main([*CHECK, "-f", "json"])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def test_a_default_run_is_cut_by_its_cpu_budget_and_says_so(capsys, monkeypatch):
    cpu, wall = ManualClock(), ManualClock()
    code, doc, err = _check(CpuDeadlineClock(cpu, wall, 0.0, 0.0),
                            lambda: (cpu.advance(DEFAULT_TIMEOUT), wall.advance(10.0)), capsys, monkeypatch)
    assert code == 3
    assert {r["reason"] for r in doc["results"]} == {CPU_WORDS}
    assert "the backstop: the default CPU budget of 600 s" in " ".join(err.split())
    assert "--timeout 600" not in err and "--timeout (600" not in json.dumps(doc)


def test_a_default_run_that_hangs_is_cut_by_the_wall_clock_limit_and_says_so(capsys, monkeypatch):
    cpu, wall = ManualClock(), ManualClock()
    code, doc, _err = _check(CpuDeadlineClock(cpu, wall, 0.0, 0.0),
                             lambda: wall.advance(DEFAULT_TIMEOUT * HANG_FACTOR), capsys, monkeypatch)
    assert code == 3 and {r["reason"] for r in doc["results"]} == {HANG_WORDS}


def test_a_starved_default_run_that_fits_its_cpu_budget_decides_as_a_quiet_one(capsys, monkeypatch):
    """100 s of CPU in 2,000 s of wall clock (a twentieth of a core): neither limit is reached, and the
    verdicts are those of a run whose clocks stand still."""
    code_quiet, quiet, _err = _check(CpuDeadlineClock(ManualClock(), ManualClock(), 0.0, 0.0), lambda: None,
                                     capsys, monkeypatch)
    cpu, wall = ManualClock(), ManualClock()

    def once() -> None:                             # the first engine call: the rest take no time
        if not cpu.at:
            cpu.advance(100.0)
            wall.advance(2000.0)

    code, doc, _err = _check(CpuDeadlineClock(cpu, wall, 0.0, 0.0), once, capsys, monkeypatch)
    assert code == code_quiet and [r["verdict"] for r in doc["results"]] == [r["verdict"] for r in quiet["results"]]
    assert all("cut short" not in r["reason"] for r in doc["results"])


def test_without_a_given_timeout_the_run_keeps_to_cpu_seconds_and_with_one_to_the_wall_clock(capsys, monkeypatch):
    """The clock `cli.main` gives the run: the default deadline's (CPU seconds of the run and its workers,
    read from /proc) where no --timeout was given, the machine's monotonic clock for --timeout 600."""
    seen: list = []
    _before_engines(monkeypatch, lambda budget: seen.append((signals.clock(), budget.backstop)))
    for extra in ([], ["--timeout", f"{DEFAULT_TIMEOUT:g}"]):
        assert main([*CHECK, *extra]) == 0
    capsys.readouterr()
    (default_clock, default), (given_clock, given) = seen[0], seen[-1]
    assert isinstance(default_clock, CpuDeadlineClock) and default_clock.real() and default.clock is default_clock
    assert default.owner == f"the default CPU budget of {DEFAULT_TIMEOUT:g} s" and default.hang is not None
    assert 0 <= default_clock.cpu_seconds() < DEFAULT_TIMEOUT          # counted from the run's start, not pytest's
    assert isinstance(given_clock, MonotonicClock) and given.owner == f"--timeout ({DEFAULT_TIMEOUT:g} s)"
    assert given.hang is None


def test_the_watchdog_rings_the_alarm_once_the_cpu_deadline_is_due():
    """On the default deadline's clock no timer rings: a watchdog thread looks at the clock and sends
    SIGALRM to the main thread when the cut is due (here at once: the CPU clock is far past it)."""
    clock = CpuDeadlineClock(ManualClock(1e6), MonotonicClock(), 0.0, time.monotonic())
    with signals.run_clock(clock), pytest.raises(signals.OutOfTime), signals.hard_deadline(DEFAULT_TIMEOUT, 0.0):
        threading.Event().wait(60)                     # a bound should it never ring: the test then fails


@pytest.mark.parametrize(("extra", "words"), [
    ([], f"UNKNOWN: the default CPU budget of {DEFAULT_TIMEOUT:g} s ran out before the run could finish; nothing was "
         "decided (give --timeout S (wall clock), or --timeout none for no limit)"),
    (["--timeout", "30"], "UNKNOWN: the --timeout of 30 s ran out before the run could finish; nothing was decided "
                          "(give a larger --timeout, or --timeout none for no limit)")])
def test_a_run_cut_before_anything_was_decided_names_its_limit(extra, words, capsys, monkeypatch):
    from verifier.cli import check

    def cut(_args):
        raise signals.OutOfTime()

    monkeypatch.setattr(check, "run", cut)
    with signals.run_clock(ManualClock()):
        assert main([*CHECK, *extra]) == 3
    assert words in " ".join(capsys.readouterr().err.split())
