"""Exit code 4: an internal error is a bug, never a finding (exit 1) nor a model error (exit 2)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import verifier.runner
from verifier.cli import build_parser, main

HERE = Path(__file__).parent
GATE = HERE / "fixtures" / "gate"
ARGS = ["check", str(GATE / "gate.yaml"), "-p", str(GATE / "gate_props.yaml"), "-q", "--no-consistency"]


def _broken(*_args, **_kwargs):
    raise ZeroDivisionError("a bug on purpose")


def test_an_internal_error_exits_4_with_one_line_and_no_traceback(monkeypatch, capsys):
    monkeypatch.setattr(verifier.runner, "check_model", _broken)
    code = main(ARGS)
    err = capsys.readouterr().err
    assert code == 4
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "bug in turnproof" in err and "report" in err and "ZeroDivisionError: a bug on purpose" in err


@pytest.mark.parametrize("where", ["after", "before"])
def test_debug_prints_the_traceback(monkeypatch, capsys, where):
    monkeypatch.setattr(verifier.runner, "check_model", _broken)
    code = main([*ARGS, "--debug"] if where == "after" else ["--debug", *ARGS])
    err = capsys.readouterr().err
    assert code == 4 and "Traceback" in err and "ZeroDivisionError" in err


def test_out_of_memory_is_unknown_not_a_bug(monkeypatch, capsys):
    def no_memory(*_a, **_k):
        raise MemoryError()
    monkeypatch.setattr(verifier.runner, "check_model", no_memory)
    assert main(ARGS) == 3
    assert "UNKNOWN" in capsys.readouterr().err


def _no_memory_for_numpy(*_a, **_k):
    """numpy's own wording when its C extensions cannot be mapped (a tight ulimit -v)."""
    try:
        raise ImportError("libgfortran.so.5: failed to map segment from shared object")
    except ImportError as err:
        raise ImportError("Importing the numpy C-extensions failed.") from err


def _no_room_for_a_thread(*_a, **_k):
    """What threading says where the address-space limit leaves no room for a thread's stack."""
    raise RuntimeError("can't start new thread")


def _import_bug(*_a, **_k):
    raise ImportError("cannot import name 'gone' from 'verifier.engines'")


@pytest.mark.parametrize(("broken", "code", "words"), [
    (_no_memory_for_numpy, 3, "UNKNOWN: out of memory: a library could not be loaded"),
    (_no_room_for_a_thread, 3, "UNKNOWN: out of memory: a library could not be loaded or a thread started"),
    (_import_bug, 4, "internal error"),
])
def test_a_library_that_cannot_load_for_want_of_memory_is_unknown_not_a_bug(monkeypatch, capsys, broken, code,
                                                                            words):
    monkeypatch.setattr(verifier.runner, "check_model", broken)
    monkeypatch.setattr(verifier.cli, "_address_space_limited", lambda: True)
    assert main(ARGS) == code
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_no_blas_thread_pool_is_started():
    """Under a tight ulimit -v, OpenBLAS starting its threads in a forked worker spun forever."""
    done = subprocess.run([sys.executable, "-c", "import os, verifier; print(os.environ['OPENBLAS_NUM_THREADS'])"],
                          capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"})
    assert done.stdout.strip() == "1", done.stderr


def test_exit_code_4_is_documented_everywhere_codes_are_listed():
    parser = build_parser()
    assert "4  internal error" in parser.epilog
    commands = parser._subparsers._group_actions[0].choices
    assert {"check", "lint", "report", "diff", "export", "import-mermaid"} <= set(commands)
    for name, command in commands.items():         # every subcommand, those added later included
        assert "4  internal error" in (command.epilog or ""), name
    readme = (HERE.parent / "README.md").read_text(encoding="utf-8")
    assert "| 4 | internal error" in readme


def test_the_command_line_program_exits_4_on_a_bug(tmp_path):
    """Through the real entry point, as CI runs it (a crash must not read as 'claim violated')."""
    script = ("import sys, verifier.runner as r\n"
              "def boom(*a, **k): raise RuntimeError('boom')\n"
              "r.check_model = boom\n"
              "from verifier.cli import main\n"
              f"sys.exit(main({ARGS!r}))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=HERE.parent)
    assert done.returncode == 4 and "Traceback" not in done.stderr
