"""Signals and files: SIGTERM stops forked workers and exits 143; `-o -` is standard output;
outputs and baselines get the user's umask (0644), not 0600; killed runs' folders are removed."""
from __future__ import annotations

import gc
import os
import pty
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.resources import signals
from verifier.resources.signals import Terminated, leave, terminate_on_sigterm, was_terminated

REPO = Path(__file__).parent.parent
GATE = REPO / "tests" / "fixtures" / "gate"
ARGS = [str(GATE / "gate.yaml"), "-p", str(GATE / "gate_props.yaml"), "-q", "--no-consistency"]


def test_dash_output_is_standard_output(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["check", *ARGS, "-f", "json", "-o", "-"]) == 0
    assert capsys.readouterr().out.lstrip().startswith("{")
    assert not (tmp_path / "-").exists()


def test_leaving_exits_with_its_code_and_every_object_out_of_the_teardowns_collections(monkeypatch):
    monkeypatch.setattr(signals._state, "timed_out", False)     # else it ends this process at once
    try:
        with pytest.raises(SystemExit) as left:
            leave(3)
        assert left.value.code == 3 and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


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


def _ends(pid: int, within: float) -> bool:
    """Whether process `pid` (not a child of this one) has ended or ends within `within` seconds: the
    wait is on its pidfd, which becomes readable when it exits (an event, not a clock)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], within)[0])
    finally:
        os.close(fd)


def _first_progress(stream: int) -> bytes:
    """What the check writes to its terminal until its first progress line (a reading's search has
    begun, in a forked worker), or until it ends; read as it comes, no waiting on a clock."""
    seen = b""
    while b"states" not in seen:
        try:
            chunk = os.read(stream, 4096)
        except OSError:             # the terminal's other side closed: the check ended
            return seen
        if not chunk:
            return seen
        seen += chunk
    return seen


def _rest(stream: int) -> bytes:
    rest = b""
    while True:
        try:
            chunk = os.read(stream, 4096)
        except OSError:
            return rest
        if not chunk:
            return rest
        rest += chunk


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or not hasattr(os, "pidfd_open"),
                    reason="needs /proc to see the forked workers and pidfds to wait for their end")
def test_sigterm_stops_the_forked_workers():
    terminal, their_side = pty.openpty()      # progress is drawn on a terminal only: it says a search began
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.Popen([sys.executable, "-m", "verifier", "check", "models/wtactics.yaml", "--no-consistency"],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=their_side, env=env)
    os.close(their_side)
    try:
        seen = _first_progress(terminal)
        workers = _children(proc.pid)
        if not workers:
            proc.kill()
            proc.wait()
            pytest.skip("the check forked no worker on this machine (one free CPU)")
        proc.send_signal(signal.SIGTERM)
        err = (seen + _rest(terminal)).decode(errors="replace")
        proc.wait()
    finally:
        os.close(terminal)
    assert proc.returncode == 143 and "Traceback" not in err and "terminated" in err, (proc.returncode, err[-800:])
    assert [pid for pid in workers if not _ends(pid, within=60.0)] == []


def test_a_sigterm_whose_exception_was_swallowed_is_still_remembered():
    """Python only prints 'Exception ignored' for an exception raised in some hooks (a fork's
    after-fork lock release): the run went on and exited 0. The handler remembers the signal, and
    the command's exit turns it into 'terminated' (143)."""
    with terminate_on_sigterm():
        assert not was_terminated()
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(10_000):          # where Z3's wrapper returned first: raised here
                pass
        except Terminated:                   # swallowed, as the hook does
            pass
        assert was_terminated()
    with terminate_on_sigterm():
        assert not was_terminated()           # each run starts afresh


def _inside_z3(thread_id: int) -> bool:
    frame = sys._current_frames().get(thread_id)
    while frame is not None:
        if frame.f_code.co_name.startswith("Z3_solver_check"):
            return True
        frame = frame.f_back
    return False


LONG_QUERY = 300_000_000       # Z3's resource units for a query that runs for a minute or more


def test_a_sigterm_reaches_a_run_waiting_in_z3():
    """Python runs a signal's handler only between two bytecodes of the main thread: a SIGTERM that
    came while a Z3 query ran had to wait for the query's end (minutes for the Spacer query of a
    small model), and the Terminated its handler raised inside a Z3 callback was dropped by ctypes.
    The watch thread interrupts Z3 (the query ends with a small part of its resource units spent)
    and the handler raises in the run's own code. The signal is sent once the main thread is
    inside the query (read from its frames: no clock)."""
    import z3
    x, y, z = z3.Ints("x y z")
    solver = z3.Solver()
    solver.set("rlimit", LONG_QUERY)
    solver.add(x > 0, y > 0, z > 0, x * x * x + y * y * y == z * z * z)
    main = threading.get_ident()

    def send() -> None:
        while not _inside_z3(main):
            threading.Event().wait(0.01)
        os.kill(os.getpid(), signal.SIGTERM)

    sender = threading.Thread(target=send, daemon=True)
    answers = []
    with terminate_on_sigterm():
        sender.start()
        with pytest.raises(Terminated):
            answers.append(solver.check())
            for _ in range(10_000):          # where Z3's wrapper returned first: raised here
                pass
    sender.join()
    spent = solver.statistics().get_key_value("rlimit count")
    assert answers in ([], [z3.unknown]) and spent < LONG_QUERY // 2 and was_terminated()
