"""Where the CPU of one `check` goes: every process of the run profiled on its CPU clock.

Run: python -m bench.profile_check [--top N] [--keep DIR] MODEL [CHECK OPTION ...]

Runs `python -m verifier check MODEL OPTIONS -q -f json` here, with cProfile on the CPU clock
(`time.process_time`) in the parent and in every child `forking` forks (each reading, the
analyses beside the claims), then prints, per process, the CPU seconds spent inside each stage
of the table below (a stage's time includes what it calls, so a row can include a later one;
"compile or load" is Numba's dispatcher compiling or loading a function from its cache) and
the functions that spent the most themselves. The profiles are kept in --keep (default: a
temporary folder) for `python -m pstats`. Profiling adds its own cost (about a third on
Python-heavy stages), so compare rows, not totals, with `/usr/bin/time`.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

# (row, file ending, function): a stage's CPU is the cumulative time of its first listed function seen
STAGES: list[tuple[str, str, str]] = [
    ("load the model (parent)", "verifier/runner.py", "load_variants"),
    ("initial states", "verifier/ir/evaluate.py", "find_initial_states"),
    ("portfolio: the claims", "verifier/portfolio/decide.py", "steps"),
    ("  explicit search: python store", "verifier/engines/explicit.py", "explore"),
    ("  explicit search: compact store", "verifier/engines/compact.py", "explore_compact"),
    ("  explicit search: compiled store", "verifier/engines/compiled/search.py", "explore_compiled"),
    ("    compiled module text", "verifier/engines/compiled/search.py", "_source"),
    ("    compiled module load (cache.load)", "verifier/engines/compiled/cache.py", "load"),
    ("    Numba compile or cache load", "numba/core/dispatcher.py", "_compile_for_args"),
    ("  lassos (termination, obligations)", "verifier/engines/lasso.py", "_find"),
    ("  compiled state graph", "verifier/engines/compiled/graph.py", "state_graph"),
    ("  random runs", "verifier/engines/walk.py", "random_runs"),
    ("  symbolic engine (Z3)", "verifier/engines/symbolic/engine.py", "check"),
    ("  monitor products compiled", "verifier/props/monitor.py", "compile_together"),
    ("vacuity", "verifier/analysis/vacuity.py", "vacuous_claims"),
    ("analyses of a reading", "verifier/analysis/__init__.py", "analyse_model"),
    ("  their exploration", "verifier/analysis/context.py", "explore"),
    ("  compiled scan", "verifier/analysis/compiled_scan.py", "scan"),
    ("  beyond (Z3, runs)", "verifier/analysis/beyond.py", "decide"),
    ("  order dependence (Z3 pairs)", "verifier/analysis/order_dependence.py", "symbolic_pairs"),
    ("across readings (parent)", "verifier/analysis/__init__.py", "across_readings"),
    ("report writing (JSON)", "verifier/report/json_out.py", "runs_json"),
    ("Z3 solver checks (anywhere)", "z3/z3.py", "check"),
]

_profile: cProfile.Profile | None = None
_folder = Path(".")


def _profiled_child(fn, item, pipe, workers, shared):
    """`forking._child`, profiled on the CPU clock, the profile written on the way out."""
    if _profile is not None:
        _profile.disable()                   # the parent's, inherited by the fork
    profile = cProfile.Profile(time.process_time)
    profile.enable()
    try:
        _original_child(fn, item, pipe, workers, shared)
    finally:
        profile.disable()
        profile.dump_stats(_folder / f"child-{os.getpid()}-{item if isinstance(item, int) else 'beside'}.prof")


def cumulative(stats: pstats.Stats, ending: str, name: str) -> float:
    """The cumulative CPU seconds of every function `name` in a file ending with `ending`."""
    return sum(row[3] for (path, _line, func), row in stats.stats.items()   # type: ignore[attr-defined]
               if func == name and path.endswith(ending))


def table(files: list[Path], top: int) -> str:
    lines = []
    names = [f.stem for f in files]
    lines.append("| stage | " + " | ".join(names) + " | all |")
    lines.append("|---|" + "---:|" * (len(files) + 1))
    stats = [pstats.Stats(str(f)) for f in files]
    totals = [s.total_tt for s in stats]                                     # type: ignore[attr-defined]
    lines.append("| **total CPU (profiled)** | " + " | ".join(f"{t:.1f}" for t in totals) + f" | {sum(totals):.1f} |")
    for row, ending, name in STAGES:
        values = [cumulative(s, ending, name) for s in stats]
        if any(v >= 0.05 for v in values):
            lines.append(f"| {row} | " + " | ".join(f"{v:.1f}" for v in values) + f" | {sum(values):.1f} |")
    merged = pstats.Stats(*(str(f) for f in files))
    own = sorted(merged.stats.items(), key=lambda kv: -kv[1][2])[:top]     # type: ignore[attr-defined]
    lines.append("")
    lines.append("Most CPU spent in the function itself (all processes):")
    for (path, line, func), row in own:
        lines.append(f"  {row[2]:7.1f} s own  {row[3]:7.1f} s cum  {func}  ({Path(path).name}:{line})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    global _profile, _folder, _original_child
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--keep", type=Path, default=None, help="the folder the profiles go to")
    parser.add_argument("model")
    args, options = parser.parse_known_args(argv)
    _folder = args.keep or Path(tempfile.mkdtemp(prefix="profile-check-"))
    _folder.mkdir(parents=True, exist_ok=True)
    out = _folder / "check.json"
    import verifier.forking as forking
    from verifier.cli import main as cli_main

    _original_child = forking._child
    forking._child = _profiled_child                 # type: ignore[attr-defined]
    _profile = cProfile.Profile(time.process_time)
    started = time.process_time()
    _profile.enable()
    try:
        code = cli_main(["check", args.model, *options, "-q", "-f", "json", "-o", str(out)])
    except SystemExit as leave:
        code = leave.code if isinstance(leave.code, int) else 4
    finally:
        _profile.disable()
        _profile.dump_stats(_folder / "parent.prof")
    children = os.times()
    print(f"exit {code}; parent CPU {time.process_time() - started:.1f} s, children "
          f"{children.children_user + children.children_system:.1f} s; profiles in {_folder}")
    files = [_folder / "parent.prof"] + sorted(_folder.glob("child-*.prof"), key=lambda f: f.stat().st_mtime)
    print(table(files, args.top))
    return 0


_original_child = None

if __name__ == "__main__":
    sys.exit(main())
