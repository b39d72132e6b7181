"""Signals and files: SIGTERM stops forked workers and exits 143; `-o -` is standard output;
outputs and baselines get the user's umask (0644), not 0600; killed runs' folders are removed."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.resources.signals import Terminated, terminate_on_sigterm, was_terminated

REPO = Path(__file__).parent.parent
GATE = REPO / "tests" / "fixtures" / "gate"
ARGS = [str(GATE / "gate.yaml"), "-p", str(GATE / "gate_props.yaml"), "-q", "--no-consistency"]


def test_dash_output_is_standard_output(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["check", *ARGS, "-f", "json", "-o", "-"]) == 0
    assert capsys.readouterr().out.lstrip().startswith("{")
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_outputs_and_baselines_respect_the_umask(tmp_path, capsys, umask):
    old = os.umask(umask)
    try:
        out, base = tmp_path / "out" / "r.json", tmp_path / "base"
        base.mkdir()
        assert main(["check", *ARGS, "-f", "json", "-o", str(out)]) == 0
        assert main(["check", *ARGS, "--baseline", str(base), "--update-baseline"]) == 0
    finally:
        os.umask(old)
    capsys.readouterr()
    for path in (out, next(base.iterdir())):
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask, path


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _still_running(pid: int, within: float) -> bool:
    """Whether process `pid` is still alive (neither gone nor a zombie) after waiting up to `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return False
        if state in ("Z", "X"):
            return False
        if time.monotonic() > deadline:
            return True
        time.sleep(0.1)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc to see the forked workers")
def test_sigterm_stops_the_forked_workers():
    proc = subprocess.Popen([sys.executable, "-m", "verifier", "check", "models/wtactics.yaml", "-q",
                             "--no-consistency"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while not workers and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
        workers = _children(proc.pid)
    if not workers:
        proc.kill()
        proc.communicate()
        pytest.skip("the check forked no worker on this machine (one free CPU)")
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "Traceback" not in err and "terminated" in err, (proc.returncode, err[-800:])
    assert [pid for pid in workers if _still_running(pid, within=10.0)] == []


def test_a_sigterm_whose_exception_was_swallowed_is_still_remembered():
    """Python only prints 'Exception ignored' for an exception raised in some hooks (a fork's
    after-fork lock release): the run went on and exited 0. The handler remembers the signal, and
    the command's exit turns it into 'terminated' (143)."""
    with terminate_on_sigterm():
        assert not was_terminated()
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(10_000):          # the handler runs between two bytecodes
                pass
        except Terminated:                   # swallowed, as the hook does
            pass
        assert was_terminated()
    with terminate_on_sigterm():
        assert not was_terminated()           # each run starts afresh
