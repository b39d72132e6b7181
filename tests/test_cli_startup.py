"""`turnproof --help`, a subcommand's --help and a usage error load no engine: each subcommand
imports what it runs when it runs (tests start many `python -m verifier` processes, users too).
The analyses load Z3 and numpy only when one of them runs (`beyond` an incomplete search)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent
HEAVY = ("verifier.runner", "verifier.lang", "verifier.analysis", "z3", "networkx", "numpy", "rich")


def test_help_and_usage_errors_import_no_engine():
    code = ("import contextlib, io, sys\n"
            "from verifier.cli import main\n"
            "codes = []\n"
            "for argv in (['--help'], ['check', '--help'], ['report', '--help'], ['check', '--engine', 'nope', 'm.yaml']):\n"
            "    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            "        try:\n"
            "            main(argv)\n"
            "        except SystemExit as done:\n"
            "            codes.append(done.code)\n"
            f"print(codes, sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0, 0, 0, 2] []"


def test_the_analyses_load_no_solver_until_one_runs():
    code = ("import sys, verifier.analysis, verifier.analysis.vacuity\n"
            "print(sorted(m for m in ('z3', 'numpy', 'verifier.engines.symbolic') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
