"""The benchmarks still run (smoke tests: one small case each, one repetition, nothing timed)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bench(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_explicit_throughput_bench():
    out = bench("bench", "--repeat", "1", str(ROOT / "tests" / "models" / "phils.yaml"))
    assert "phils" in out


def test_compact_store_bench():
    out = bench("bench", "--repeat", "1", "--store", "compact", str(ROOT / "tests" / "models" / "phils.yaml"))
    assert "phils" in out


def test_workers_bench_reports_the_workers_memory():
    out = bench("bench", "--repeat", "1", "--store", "compact", "--workers", "2",
                str(ROOT / "tests" / "models" / "phils.yaml"))
    header, row = out.splitlines()[:2]
    assert "worker MB" in header and "client MB" in header and "CPU s" in header and row.startswith("phils")


def test_games_bench(tmp_path):
    """On a small model with several readings and its claims, laid out as the shipped games are
    (models/, properties/); a shipped game took 14 s here (they run in bench/README.md)."""
    for folder, name in (("models", "mini.yaml"), ("properties", "mini_props.yaml")):
        (tmp_path / folder).mkdir()
        shutil.copy(ROOT / "tests" / "fixtures" / "report" / name, tmp_path / folder / "mini.yaml")
    out = bench("bench.games", "--repeat", "1", str(tmp_path / "models" / "mini.yaml"))
    assert re.search(r"^\| mini \| 2 \| [1-9][\d,]* \| [1-9]\d* \| \d+ \| [\d.]+ s \|$", out, re.MULTILINE), out


def test_simulate_bench():
    out = bench("bench.simulate", "--games", "5", "--repeat", "1", "aeons_end")
    assert "| aeons_end | defaults | 5 |" in out


def test_memory_guard_bench():
    out = bench("bench.memory_guard", "--repeat", "1", "100")
    assert "| 100 MB |" in out and out.rstrip().endswith("| 3 |")
