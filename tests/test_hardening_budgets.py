"""Budgets bound the whole run, and what a budget cut short is UNKNOWN (exit 3), in the claims
and in the consistency analyses alike: never 'no findings'."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.engines.symbolic.engine import STATE_UNITS, claim_units
from verifier.engines.symbolic.units import UNITS_PER_SECOND
from verifier.portfolio.auto import AutoEngine
from verifier.resources import Budget, ManualClock, memory, signals


def test_a_budget_that_cuts_the_analyses_short_is_unknown_not_success(deep, capsys):
    code = main(["check", deep, "--no-properties", "--max-states", "1000", "-q", "-f", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 3
    assert doc["as_expected"] is False
    assert doc["analyses"][0]["complete"] is False and "1,000 states" in doc["analyses"][0]["reason"]


def test_lint_under_a_budget_says_unknown(deep, capsys):
    code = main(["lint", deep, "--max-states", "1000", "-q"])
    out = capsys.readouterr().out
    assert code == 3 and "UNKNOWN" in out and "No consistency findings" not in out


def test_without_the_budget_the_deadlock_is_found(deep, capsys):
    code = main(["lint", deep, "-q"])
    out = capsys.readouterr().out
    assert code == 1 and "deadlock" in out


BIG = """\
model: big
doc: three counters that move independently; far too many states for a small memory budget
variables:
  a: {type: 0..400, init: 0}
  b: {type: 0..400, init: 0}
  c: {type: 0..400, init: 0}
actions:
  - {name: inc_a, when: "a < 400", do: {a: a + 1}, rule: "A: up"}
  - {name: inc_b, when: "b < 400", do: {b: b + 1}, rule: "B: up"}
  - {name: inc_c, when: "c < 400", do: {c: c + 1}, rule: "C: up"}
"""
REPO = Path(__file__).parent.parent


@pytest.fixture
def big(tmp_path) -> str:
    path = tmp_path / "big.yaml"
    path.write_text(BIG, encoding="utf-8")
    return str(path)


def test_timeout_is_a_deadline_for_the_whole_run(capsys, monkeypatch):
    """Every search of every reading shares the one deadline (it was per search: 5 s took 20): once
    it has passed, in the first search of each reading, no other search starts."""
    clock = ManualClock()

    def time_passes(*_args, **_kwargs):
        clock.advance(10.0)
        signals.fire(None)

    monkeypatch.setattr(AutoEngine, "check", time_passes)
    with signals.run_clock(clock):
        code = main(["check", str(REPO / "models" / "wtactics.yaml"), "--timeout", "1", "-q", "-f", "json"])
    out = capsys.readouterr()
    assert code == 3 and "Traceback" not in out.err
    doc = json.loads(out.out)
    assert all(r["verdict"] == "UNKNOWN" and "cut short by --timeout (1 s)" in r["reason"] for r in doc["results"])


def test_max_memory_stops_the_search_unknown(big):
    """In a fresh process: the limit is the whole process's (a test process may hold more already)."""
    done = subprocess.run([sys.executable, "-m", "verifier", "lint", big, "--max-memory", "100", "-q"],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 3 and "--max-memory 100 MB reached" in " ".join(done.stdout.split()), done.stderr


ULIMIT_RUN = """\
import resource, sys
import z3
import verifier.analysis.beyond, verifier.engines.explicit   # loaded before the limit, as a check loads them
from verifier.cli import main
from verifier.resources.memory import address_bytes
z3.main_ctx()
limit = address_bytes() + 40 * 2**20     # 40 MB more address space than the loaded program takes
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
sys.exit(main(["lint", sys.argv[1], "-q"]))
"""


def test_a_run_under_ulimit_v_ends_unknown_not_killed(big):
    """About 4 s: the guard stops the search at its share of what RLIMIT_AS allows."""
    done = subprocess.run([sys.executable, "-c", ULIMIT_RUN, big], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 3, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "UNKNOWN" in done.stdout + done.stderr


def _own_memory_cgroup() -> tuple[Path, str]:
    """This process's memory cgroup folder and the file of its limit (v2, else v1)."""
    lines = Path("/proc/self/cgroup").read_text().splitlines()
    v1 = [line.split(":", 2)[2] for line in lines if "memory" in line.split(":")[1].split(",")]
    if v1 and (memory.CGROUP_ROOT / "memory").is_dir():
        return memory.CGROUP_ROOT / "memory" / v1[0].strip("/"), "memory.limit_in_bytes"
    v2 = [line[3:] for line in lines if line.startswith("0::")]
    if v2 and "memory" in (memory.CGROUP_ROOT / "cgroup.controllers").read_text():
        return memory.CGROUP_ROOT / v2[0].strip("/"), "memory.max"
    raise FileNotFoundError("no memory cgroup")


@pytest.fixture
def limited_cgroup():
    """A function that moves the calling process into a child of this process's own memory cgroup
    limited to 200 MB, as `systemd-run -p MemoryMax=` makes one; skipped where this process may
    not create and use one (no cgroup memory controller, not root, a read-only cgroup file system,
    the v2 controller not delegated)."""
    try:
        own, limit_file = _own_memory_cgroup()
        child = own / f"turnproof-test-{os.getpid()}"
        child.mkdir()
    except OSError as err:
        pytest.skip(f"cannot create a memory cgroup here ({err}): the reader is tested on fake trees above")

    def enter() -> None:
        (child / "cgroup.procs").write_text(str(os.getpid()))

    try:
        try:
            (child / limit_file).write_text(str(200 * 2**20))
            subprocess.run([sys.executable, "-c", "pass"], check=True, preexec_fn=enter)
        except (OSError, subprocess.SubprocessError) as err:
            pytest.skip(f"cannot limit or enter a memory cgroup here ({err})")
        yield enter
    finally:
        child.rmdir()


def test_a_run_in_a_memory_limited_cgroup_ends_unknown_not_killed(big, limited_cgroup):
    enter = limited_cgroup
    probe = subprocess.run([sys.executable, "-c", "from verifier.resources import memory; "
                            "print(min(memory.cgroup_limits()), memory.memory_limit_bytes())"],
                           capture_output=True, text=True, cwd=REPO, preexec_fn=enter)
    assert probe.stdout.split() == [str(200 * 2**20), str(int(200 * 2**20 * memory.MEMORY_SHARE))], probe.stderr
    done = subprocess.run([sys.executable, "-m", "verifier", "lint", big, "-q"], capture_output=True, text=True,
                          cwd=REPO, preexec_fn=enter)
    assert done.returncode == 3, (done.returncode, done.stderr[-2000:])
    assert "memory guard reached" in " ".join(done.stdout.split())


def test_max_states_bounds_z3_too():
    default = 120_000_000
    assert claim_units(Budget(max_states=1000), default) == UNITS_PER_SECOND         # a second's worth at least
    assert claim_units(Budget(max_states=100_000), default) == 100_000 * STATE_UNITS
    assert claim_units(Budget(max_states=10_000_000), default) == default
    assert claim_units(Budget(), default) == default
    assert claim_units(Budget(rlimit=5_000, max_states=10_000_000), default) == 5_000   # --rlimit says it


def _cgroup_tree(tmp_path: Path, lines: str, files: dict[str, str]) -> tuple[str, Path]:
    proc = tmp_path / "cgroup"
    proc.write_text(lines)
    root = tmp_path / "fs"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return str(proc), root


def test_the_memory_limit_is_read_from_the_process_own_cgroup_v2(tmp_path):
    proc, root = _cgroup_tree(tmp_path, "0::/user.slice/job\n",
                              {"memory.max": "max\n", "user.slice/memory.max": "4294967296\n",
                               "user.slice/job/memory.max": "1610612736\n"})
    assert min(memory.cgroup_limits(proc, root)) == 1610612736


def test_the_memory_limit_is_read_from_the_process_own_cgroup_v1(tmp_path):
    proc, root = _cgroup_tree(tmp_path, "4:memory:/process_api/abc\n3:cpu:/\n",
                              {"memory/memory.limit_in_bytes": "9223372036854771712\n",
                               "memory/process_api/abc/memory.limit_in_bytes": "1610612736\n"})
    assert memory.cgroup_limits(proc, root) == [1610612736]


def test_forked_workers_share_the_memory_limit():
    try:
        memory.set_workers(4)
        assert memory.memory_limit_bytes(400) == 100 * 2**20
    finally:
        memory.set_workers(1)
    assert memory.memory_limit_bytes(400) == 400 * 2**20
