"""Shared pytest options.

The tiers (`tiers`): by default a run is the quick tier: Hypothesis tests draw a quarter of CI's
examples and the tests marked ``full_tier`` (the checks of the four big shipped games at their
defaults, and the check of aeons_end beside a busy loop) skip, each with its marker's reason. Where
the ``CI`` variable is true (CI sets it), or with ``--full``, the run is the full tier, CI's suite:
every test, at CI's examples. ``--slow`` runs the tests marked ``slow`` too,
and Hypothesis draws five times CI's examples, at random. The run's last lines name its tier.
``--regen-golden`` rewrites the golden files of the report tests (tests read
``TURNPROOF_REGEN_GOLDEN``); without it a golden mismatch fails.

A test still running after ``HANG_LIMIT`` seconds of wall clock is a hang, not a slow machine, and
so is one that for ``STALL_LIMIT`` seconds of wall clock used no CPU, nor did any process it started
(a deadlock: a loaded machine slows a test down but still runs it, a tenth of a core at load 20 on
two cores, while a test waiting on a lock nobody will release uses none, and would otherwise hold
its worker for the whole hang limit): its process prints the test's name, why, and every thread's
stack, ends the processes the test started (a command it waits for), and raises ``Hang`` in the
test, which fails it like any error; the run goes on with the next test. A test that does not
stop within ``HANG_GRACE`` seconds more (a call into a library that never returns to Python) ends
its whole process instead: pytest-xdist then reports it "worker crashed while running" it and goes
on with a fresh worker, without running it again (``pytest_handlecrashitem``). The two limits are
the suite's only wall-clock bounds: a test waits for the commands it starts without a timeout of
its own, which a loaded machine would trip. ``TURNPROOF_TEST_LIMIT`` sets another hang limit in seconds (0: none, nor a
stall limit), ``TURNPROOF_TEST_STALL`` another stall limit; ``--slow``, ``--pdb`` and ``--trace``
have neither.

``--cpu-durations=N`` lists the N tests that took the most CPU time (0: all), from setup to
teardown with the processes each waited for (forked readings, commands), then the N files whose
tests took the most: unlike ``--durations`` (wall clock), the same figures on a loaded machine.

A test that leaves Z3 interrupted errors at its own teardown (`_z3_left_usable`).

Hypothesis runs without a deadline per example and without the health check on how long its data
takes to generate (as its own profile for CI does): both measure wall clock, which a loaded machine
stretches. Its other health checks stay on. In the full and quick tiers it draws the same examples in
every run (derandomized: a failure recurs; the models the compiled differentials draw are compiled
once, then found in the compile cache: drawn afresh each run, they cost about 60 s of CPU of Numba
compiles in the three files compiled_moves, compiled_product and compiled_claims alone); ``--slow``
draws at random, as does ``--hypothesis-seed``, and ``--hypothesis-profile`` still picks another
profile. A test that names no count draws the tier's share of Hypothesis's 100.

Under PYTHONDONTWRITEBYTECODE the Python processes of a run (the test workers, and the
`python -m verifier` and bench processes the tests start) share compiled code, and later runs
reuse it, in a folder of the compile cache outside the checkout (`_share_compiled_code`). The
test workers compile each generated Numba module once between them (`_compile_each_module_once`).
"""
from __future__ import annotations

import contextlib
import faulthandler
import fcntl
import gc
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from tiers import TIER, Tier, chosen, count

from verifier.resources.clock import CLOCK_TICKS, tree_ticks

HYPOTHESIS = settings()     # Hypothesis's own profile ("ci" where the CI variable is set), under the suite's
TIER_KEY = pytest.StashKey[Tier]()
FULL_TIER_REASON = ("the four big shipped games are checked in the full tier (CI, or --full); locally the main "
                    "job `turnproof report models/*.yaml -o reports --gate` gates their verdicts")
STARVED_REASON = ("a check beside a busy loop is run in the full tier (CI, or --full), which loads the machine on "
                  "purpose; CI also runs the main job and every shipped model's diff beside one (bench/determinism.py)")
TIER_LINES = {
    Tier.QUICK: "quick tier: Hypothesis at 1/4 of CI's examples, the four big shipped games and the starved "
                "check skipped (--full runs CI's suite)",
    Tier.FULL: "full tier: CI's suite, Hypothesis at CI's examples, every shipped game checked",
    Tier.SLOW: "slow tier: the slow tests too, Hypothesis at 5 times CI's examples, drawn at random",
}
CPU_AT_START = pytest.StashKey[float]()
HANG_LIMIT = 600.0    # seconds per test; the longest takes under 30 s on a quiet 2-core machine
HANG_GRACE = 30.0     # seconds a test past the limit has to stop once Hang is raised in it
STALL_LIMIT = 120.0   # seconds of wall clock in which a test and the processes it started used no CPU: a deadlock
STALL_CPU = 0.2       # CPU seconds below which they count as having used none (the watch's own reads of /proc)
STALL_TICK = 10.0     # seconds between two looks at their CPU
DEEP_COUNTER = str(Path(__file__).parent / "models" / "deep_counter.yaml")   # 5,001 states in a line, stuck at the end


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", default=False,
                     help="the full tier, CI's suite (as where the CI variable is true): every test, "
                          "Hypothesis at CI's examples")
    parser.addoption("--slow", action="store_true", default=False,
                     help="run slow tests and the long Hypothesis profiles (five times CI's examples, at random)")
    parser.addoption("--regen-golden", action="store_true", default=False,
                     help="rewrite the golden files under tests/golden/ from the current output "
                          "(same as TURNPROOF_REGEN_GOLDEN=1); review the diff before committing")
    parser.addoption("--cpu-durations", type=int, default=None, metavar="N",
                     help="list the N tests that took the most CPU time (0: all), the processes they waited "
                          "for included, then the N files whose tests took the most")


COMPILE_LOCKS = "TURNPROOF_TEST_COMPILE_LOCKS"      # the run's folder of lock files, one per generated module


def pytest_configure(config):
    _share_compiled_code(config)
    _compile_each_module_once(config)
    tier = config.stash[TIER_KEY] = chosen(config.getoption("--full"), config.getoption("--slow"), os.environ)
    os.environ[TIER] = tier                   # for the test modules (`tiers.examples`), here and in the workers
    _load_hypothesis_profile(config, tier)
    if config.getoption("--regen-golden"):
        os.environ["TURNPROOF_REGEN_GOLDEN"] = "1"


def _load_hypothesis_profile(config, tier: Tier) -> None:
    """Hypothesis untimed, derandomized but in the slow tier, and for a test that names no count
    the tier's share of Hypothesis's 100 (module doc); unless ``--hypothesis-profile`` picks another."""
    untimed = {"deadline": None,
               "suppress_health_check": sorted({*HYPOTHESIS.suppress_health_check, HealthCheck.too_slow}, key=str)}
    settings.register_profile("turnproof", parent=HYPOTHESIS, derandomize=tier is not Tier.SLOW,
                              max_examples=count(HYPOTHESIS.max_examples, tier), **untimed)
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("turnproof")


def _share_compiled_code(config) -> None:
    """With PYTHONDONTWRITEBYTECODE set, every process the tests start compiled verifier again
    (0.2 s of CPU each, some forty processes a run). From the first process of the run (never
    a worker, which inherits it), processes write and read compiled code through PYTHONPYCACHEPREFIX
    in `pycache` of the compile cache (`files.cache_dir`; an empty $TURNPROOF_CACHE_DIR makes a cold
    run of everything), kept for later runs (Python and pytest check a source's size and time before
    they use its bytecode), but for the tests' temporary folders' files; where it cannot be written,
    in a temporary folder removed at the end. The checkout stays as it was. A prefix hides the
    libraries' own bytecode too: in a folder made anew each run, each worker compiled numpy, Numba,
    Z3, Hypothesis, verifier and the test modules (their assertions rewritten) again, 12 s of CPU;
    with the folder kept, 4 s."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX") \
            or hasattr(config, "workerinput"):
        return
    from verifier.files import cache_dir

    folder, kept = cache_dir() / "pycache", True
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        folder, kept = Path(tempfile.mkdtemp(prefix="turnproof-pycache-")), False
    saved = os.environ.pop("PYTHONDONTWRITEBYTECODE")
    os.environ["PYTHONPYCACHEPREFIX"] = str(folder)

    def restore() -> None:
        os.environ.pop("PYTHONPYCACHEPREFIX", None)
        os.environ["PYTHONDONTWRITEBYTECODE"] = saved
        shutil.rmtree(folder.joinpath(*Path(tempfile.gettempdir()).parts[1:]) if kept else folder, ignore_errors=True)

    config.add_cleanup(restore)


def _compile_each_module_once(config) -> None:
    """The xdist workers start together, and on an empty compile cache (CI's) both compiled the
    same generated modules at once (the runtime, the search loop: 1.5-3 s of CPU each, the
    second compile wasted: Numba's cache beside the module is written only when a compile ends).
    The first process of the run makes a folder of lock files (removed at the end); in each
    worker, `cache.load` of a module holds the module's lock, so a worker wanting a module
    another is compiling waits for it and then loads its machine code from the cache. What a
    test sees of `cache.load` is unchanged (the module, and whether its file was there)."""
    if not hasattr(config, "workerinput"):
        if os.environ.get(COMPILE_LOCKS) is None:
            folder = tempfile.mkdtemp(prefix="turnproof-compile-locks-")
            os.environ[COMPILE_LOCKS] = folder       # the workers inherit it

            def remove() -> None:
                os.environ.pop(COMPILE_LOCKS, None)
                shutil.rmtree(folder, ignore_errors=True)

            config.add_cleanup(remove)
        return
    folder = os.environ.get(COMPILE_LOCKS)
    if not folder:
        return
    from verifier.engines.compiled import cache
    real = cache.load

    def load(text: str):
        with open(Path(folder) / cache.module_key(text), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)         # released when the file closes
            return real(text)

    cache.load = load


# Files of example tests that take seconds each (processes started, Z3 tables, shipped games, SPIN,
# Dask, mypy): sent right after the Hypothesis tests, so that a run ends on short tests. From the
# per-test durations (`--durations=0`); a file missing here only starts later.
EARLY_FILES = ("test_symbolic_table.py", "test_spin_crosscheck.py", "test_bench_smoke.py",
               "test_symbolic_games.py", "test_gate_ci_files.py", "test_mutation_determinism.py",
               "test_gate_exit_codes.py", "test_hardening_budgets.py", "test_hardening_limits.py",
               "test_distributed_search.py", "test_expr_dispatch.py", "test_lang_v2_model.py",
               "test_symbolic_units.py", "test_gate_baseline.py", "test_testgen.py",
               "test_walk_steps.py", "test_ledger_compiled.py", "test_ranking_synthesis.py",
               "test_compiled_workers.py", "test_compiled_ahead.py", "test_memory_spill.py",
               "test_lang_turn_change.py", "test_hostile_input.py", "test_lang_sequence_arrays.py")


def pytest_collection_modifyitems(config, items):
    items.sort(key=_order)                     # stable: within each class, in file order
    skip_outside_tier(items, config.stash[TIER_KEY])


def skip_outside_tier(items, tier: Tier) -> None:
    """The tests marked `slow` skip but in the slow tier, those marked `full_tier` in the quick tier
    (with the marker's `reason`, by default FULL_TIER_REASON)."""
    slow = pytest.mark.skip(reason="slow: run with --slow")
    for item in items:
        full = item.get_closest_marker("full_tier")
        if "slow" in item.keywords and tier is not Tier.SLOW:
            item.add_marker(slow)
        elif full and tier is Tier.QUICK:
            item.add_marker(pytest.mark.skip(reason=full.kwargs.get("reason", FULL_TIER_REASON)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """The hang limit (module doc) around one test, its fixtures' setup and teardown included; where
    --cpu-durations asks, the CPU time it starts from."""
    item.stash[CPU_AT_START] = _cpu_seconds()
    limit = _hang_limit(item.config)
    watch = HangWatch(item, limit, min(limit, float(os.environ.get("TURNPROOF_TEST_STALL", STALL_LIMIT)))) \
        if limit else None
    try:
        yield
    finally:
        if watch is not None:
            watch.stop()


def pytest_sessionfinish(session):
    """The run's last full pass of the garbage collector, then what survives it frozen (`gc.freeze`).
    pytest's cleanup after this makes five more full passes (to report exceptions raised in finalizers,
    which this pass's also reaches); over a worker's whole heap they took seconds, and pytest-xdist, which
    tears its workers down once they send `workerfinished` (after this hook), interrupts one still
    running 5 s later: the KeyboardInterrupt in Hypothesis's collector callback that `.ci/run` printed
    as a PytestUnraisableExceptionWarning. Frozen, the five passes look only at what came after."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched):
    """A test that ended its worker (a hang it could not be stopped in: module doc) is reported
    failed once: pytest-xdist's `--dist loadgroup` would otherwise queue it again with the rest of
    its group, and each fresh worker would hang on it in turn."""
    queue = getattr(sched, "workqueue", {})
    for scope, work in list(queue.items()):
        if work.pop(crashitem, None) is not None and not work:
            del queue[scope]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With --cpu-durations: the test's CPU time from setup to teardown, on its teardown's report
    (which pytest-xdist's workers send to the controller)."""
    outcome = yield
    if call.when == "teardown" and item.config.getoption("--cpu-durations") is not None:
        outcome.get_result().user_properties.append(("cpu_seconds", _cpu_seconds() - item.stash[CPU_AT_START]))


def pytest_terminal_summary(terminalreporter, config):
    terminalreporter.write_sep("-", TIER_LINES[config.stash[TIER_KEY]])
    shown = config.getoption("--cpu-durations")
    if shown is None:
        return
    rows = sorted(((dict(report.user_properties)["cpu_seconds"], report.nodeid)
                   for reports in terminalreporter.stats.values() for report in reports
                   if getattr(report, "when", None) == "teardown"
                   and "cpu_seconds" in dict(getattr(report, "user_properties", ()))), reverse=True)
    terminalreporter.write_sep("=", f"CPU time of the tests: {sum(s for s, _ in rows):.1f} s "
                                    f"(collection and start-up not included)")
    for seconds, nodeid in rows[:shown or None]:
        terminalreporter.write_line(f"{seconds:8.2f}s  {nodeid}")
    by_file: dict[str, list[float]] = {}
    for seconds, nodeid in rows:
        by_file.setdefault(nodeid.split("::", 1)[0], []).append(seconds)
    terminalreporter.write_sep("=", f"CPU time by file: {len(by_file)} files")
    for path, times in sorted(by_file.items(), key=lambda kv: -sum(kv[1]))[:shown or None]:
        terminalreporter.write_line(f"{sum(times):8.2f}s  {len(times):4d} tests  {path}")


def _cpu_seconds() -> float:
    """This process's CPU time and that of the children it has waited for."""
    user, system, children_user, children_system, _ = os.times()
    return user + system + children_user + children_system


def _hang_limit(config) -> float:
    """None (0) with --slow, or where a debugger may hold a test (--pdb, --trace)."""
    if config.getoption("--slow") or config.getoption("usepdb") or config.getoption("trace"):
        return 0.0
    return float(os.environ.get("TURNPROOF_TEST_LIMIT", HANG_LIMIT))


class Hang(BaseException):
    """Raised in a test past the hang limit (a BaseException: no `except Exception` in the code under
    test swallows it)."""


class HangWatch:
    """A thread that cuts the test short `limit` seconds after it starts, or once it and the processes
    it started used no CPU for `stall` seconds (module doc)."""

    def __init__(self, item, limit: float, stall: float):
        self.item, self.limit, self.stall = item, limit, stall
        self.why = ""
        self.ended = threading.Event()
        self.in_main = threading.current_thread() is threading.main_thread()
        self.saved = signal.signal(signal.SIGUSR1, self._raise) if self.in_main else None
        self.thread = threading.Thread(target=self._watch, daemon=True, name="turnproof-hang-watch")
        self.thread.start()

    def stop(self) -> None:
        self.ended.set()
        if self.in_main:
            signal.signal(signal.SIGUSR1, signal.SIG_DFL if self.saved is None else self.saved)

    def _watch(self) -> None:
        """Look at the wall clock and, from STALL_TICK seconds on (most tests are over by then), at the
        CPU of the test's processes every STALL_TICK seconds."""
        start = time.monotonic()
        used, progress = None, start
        while not self.ended.wait(max(0.0, min(STALL_TICK, start + self.limit - time.monotonic()))):
            now = time.monotonic()
            if now - start >= self.limit:
                self.why = (f"still running after {self.limit:g} s of wall clock, a hang "
                            f"(TURNPROOF_TEST_LIMIT sets the limit)")
                break
            cpu = _tree_cpu(os.getpid())
            if used is None or abs(cpu - used) >= STALL_CPU:       # less: a process it started ended
                used, progress = cpu, now
            elif now - progress >= self.stall:
                self.why = (f"no CPU used by it or the processes it started in {self.stall:g} s of wall clock, "
                            f"a deadlock (TURNPROOF_TEST_STALL sets the limit)")
                break
        else:
            return
        self._cut_short()

    def _raise(self, _signum, _frame) -> None:
        if not self.ended.is_set():
            raise Hang(f"{self.item.nodeid}: {self.why}")

    def _cut_short(self) -> None:
        """Print which test hangs and where every thread of its process is, end the processes it
        started, raise Hang in it; end the process where it does not stop."""
        if self.ended.is_set():
            return
        capture = self.item.config.pluginmanager.getplugin("capturemanager")
        if capture is not None:
            capture.suspend_global_capture(in_=True)      # to the terminal, not the test's captured output
        sys.stderr.write(f"\n\n{self.item.nodeid}: {self.why}; the stacks of its process:\n")
        sys.stderr.flush()
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        sys.stderr.flush()
        for pid in _descendants(os.getpid()):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if self.in_main:
            signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1)
            if self.ended.wait(HANG_GRACE):
                return
        sys.stderr.write(f"\n{self.item.nodeid}: did not stop; its process ends\n")
        sys.stderr.flush()
        os._exit(1)


def _tree_cpu(pid: int) -> float:
    """The CPU seconds of process `pid` (this one) and of every process it started, running or
    reaped (`resources.clock.tree_ticks`; this process's and its reaped children's where there is no /proc)."""
    ticks = tree_ticks(pid)
    return _cpu_seconds() if ticks is None else ticks / CLOCK_TICKS


def _descendants(pid: int) -> list[int]:
    """The processes `pid` started and theirs, from /proc (none where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                    parent = int(fh.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _order(item) -> int:
    """0 for a Hypothesis test, 1 for a test of EARLY_FILES, 2 for the rest. The workers take the
    tests in this order (after the xdist groups, largest first), so a run ends on short example
    tests, not with one worker alone on a test of several seconds."""
    if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        return 0
    return 1 if item.path.name in EARLY_FILES else 2


@pytest.fixture(autouse=True)
def _z3_left_usable():
    """A test that leaves Z3's main context interrupted (an interrupt that came between its calls, which
    Z3 keeps until its next solver call: `signals.clear_z3_interrupt`) errors here, at its own teardown,
    rather than a later test of its process failing because `z3.simplify` returned its argument
    unrewritten (test_short_circuit_definedness after the fuzz tests' cut runs)."""
    yield
    z3 = sys.modules.get("z3")
    if z3 is not None and getattr(z3.z3, "_main_ctx", None) is not None:
        assert z3.is_false(z3.simplify(z3.IntVal(0) > 0)), \
            "this test left Z3's context interrupted: `z3.simplify` no longer simplifies"


@pytest.fixture
def deep(monkeypatch) -> str:
    """The deep counter, with no random runs and no Z3 units for the questions beyond the explored
    states (given them, random runs find its deadlock: test_analysis_beyond), so that a state budget
    leaves it UNKNOWN."""
    monkeypatch.setattr("verifier.analysis.beyond.BEYOND_UNITS", 0)
    monkeypatch.setattr("verifier.analysis.beyond.WALK_RUNS", 0)
    return DEEP_COUNTER
