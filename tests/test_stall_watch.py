"""The suite's own stall watch (conftest `HangWatch`): a test blocked on a lock nobody releases, with
no process of its own using CPU, fails as a deadlock after the stall limit instead of holding its
worker for the hang limit; the failure names the test and why, with every thread's stack, and the run
goes on with the next test. Run in a pytest of its own (`pytester`), with the conftest as it is (and its `tiers`),
looking every 0.2 s instead of every 10 s and a stall limit of 1 s: a blocked test uses no CPU
whatever the load, so the outcome does not depend on the machine's speed."""
from __future__ import annotations

from pathlib import Path

pytest_plugins = ["pytester"]

HERE = Path(__file__).resolve().parent
CONFTEST = HERE / "conftest.py"
BLOCKED = """
import threading

import conftest

conftest.STALL_TICK = 0.2        # look every 0.2 s instead of every 10 s


def test_blocked():
    threading.Event().wait()     # set by nobody


def test_next():
    assert True
"""


def test_a_blocked_test_fails_as_a_deadlock_and_the_run_goes_on(pytester, monkeypatch):
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(tiers=(HERE / "tiers.py").read_text(encoding="utf-8"))     # the conftest's
    pytester.makepyfile(test_blocked=BLOCKED)
    monkeypatch.setenv("TURNPROOF_TEST_STALL", "1")
    monkeypatch.setenv("TURNPROOF_TEST_LIMIT", "60")      # a watch that missed it: failed as a hang
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stderr.fnmatch_lines([
        "*test_blocked.py::test_blocked: no CPU used by it or the processes it started in 1 s of wall clock, "
        "a deadlock (TURNPROOF_TEST_STALL sets the limit); the stacks of its process:",
        "*in test_blocked*"])
    result.stdout.fnmatch_lines(["*Hang: test_blocked.py::test_blocked: no CPU used*"])
