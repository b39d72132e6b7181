"""Same input, same verdict: each shipped game checked again while its process is starved of CPU
(pinned to one core beside a busy loop pinned to the same core) gives the same JSON, timings aside,
and the CI gate comparing the two checks (`diff`'s comparison of claims and findings) finds no change;
`turnproof diff` of a shipped model with itself, run as a command under the same load, exits 0
(with --slow).

Nothing here measures time: the load only changes how fast the run goes, and these tests show that
nothing else depends on it (every effort is counted in states, steps and Z3 resource units; the
default deadline counts CPU seconds, far from reached, so a starved run is not cut by it either)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from conftest import STARVED_REASON
from shipped_runs import GAMES, ROOT, model_path, on_its_worker, runs_of

from verifier import runner
from verifier.cli.common import DEFAULT_TIMEOUT
from verifier.diffing.changes import ModelDiff
from verifier.diffing.compare import compare_checks
from verifier.diffing.versions import Version
from verifier.report.json_out import runs_json
from verifier.resources import Backstop, Budget, CpuDeadlineClock, signals
from verifier.runner import RunOptions, check_model

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs os.sched_setaffinity (Linux)")

SPIN = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"


@contextmanager
def starved() -> Iterator[None]:
    """This process (and the children it forks) pinned to one core, beside a busy loop pinned there too."""
    before = os.sched_getaffinity(0)
    core = min(before)
    spinner = subprocess.Popen([sys.executable, "-c", SPIN, str(core)])
    os.sched_setaffinity(0, {core})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)
        spinner.kill()
        spinner.wait()


def differences(a: Any, b: Any, at: str = "") -> list[str]:
    """Where two JSON documents differ (paths), for a readable failure."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in differences(a.get(k), b.get(k), f"{at}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{at}[{i}]")]
    return [] if a == b else [f"{at}: {a!r:.120} != {b!r:.120}"]


def untimed(doc: Any) -> Any:
    """`doc` without its timing fields (`seconds`), the only part of a check that may differ."""
    if isinstance(doc, dict):
        return {k: untimed(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [untimed(v) for v in doc]
    return doc


QUICK = ("aeons_end",)     # the quickest at its defaults (5 s of CPU); the others take 15 to 21 s each, twice that
                           # starved: with --slow (all five under load: bench/README.md, bench/determinism.py)


def _game(game: str):
    """aeons_end in the full tier (its busy loop burns a core for as long: 7 s of CPU the quick tier
    leaves out), the others with --slow."""
    param = on_its_worker(game)
    extra = pytest.mark.full_tier(reason=STARVED_REASON) if game in QUICK else pytest.mark.slow
    return pytest.param(*param.values, marks=(*param.marks, extra), id=param.id)


@pytest.mark.parametrize("game", [_game(g) for g in GAMES])
def test_a_starved_check_gives_the_same_json_and_the_gate_finds_no_change(game):
    """The check starved as the command runs it: under the default deadline, its engines looking at
    the CPU seconds of the run and its workers (far from reached), each reading in a forked child."""
    quiet = runs_of(game)
    with starved(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "free_cpus", lambda: 1)       # as `runs_of`: the analyses after the claims
        clock = CpuDeadlineClock.started(time.monotonic(), from_process_start=False)
        budget = Budget(backstop=Backstop.default_deadline(signals.engines_stop(DEFAULT_TIMEOUT, 0.0), DEFAULT_TIMEOUT,
                                                           clock))
        loaded = check_model(model_path(game), RunOptions(budget=budget))
    assert differences(untimed(runs_json(quiet)), untimed(runs_json(loaded))) == []
    version = Version(model_path(game), model_path(game))
    gate = ModelDiff(version, version, game, game)
    compare_checks(quiet, loaded, gate)
    assert (gate.changed, gate.incomplete, gate.exit_code) == (False, False, 0)


@pytest.mark.slow      # two starved checks and the busy loop beside them, 23 s of CPU: the starved check above covers them
def test_a_starved_diff_of_a_model_with_itself_finds_nothing():
    path = model_path("aeons_end")
    with starved():
        done = subprocess.run([sys.executable, "-m", "verifier", "diff", path, path, "--quiet"], cwd=ROOT,
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_untimed_drops_only_the_timings():
    doc = {"seconds": 1.5, "results": [{"stats": {"states": 3, "seconds": 0.1}, "verdict": "HOLDS"}]}
    assert untimed(doc) == {"results": [{"stats": {"states": 3}, "verdict": "HOLDS"}]}
