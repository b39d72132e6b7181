"""What the compiled engine spends compiling: cold compiles per module, and the modules of a cold check.

Run: python -m bench.compile_cost [--check GAME] [--keep DIR] [GAME ...]

For each shipped game (`models/GAME.yaml` at its printed numbers, its first reading) it generates
three modules and compiles each cold in a fresh process with an empty cache folder (Numba's
machine code included; the model-independent runtime is compiled before and
not counted): the base model's search module (`numbagen.module_source`, no watched predicate),
the product of its ordering claims watched together (`props.monitor.compile_together`, watching
their invariants: what `portfolio.plan` searches) and the analyses' scan module
(`compiled_scan.scan_source`: the model's `expand` and `applies`; the scan kernel that calls them,
`compiled_scan.kernel_source`, is model-independent and not counted). The table gives each one's CPU seconds (user + system of the
process, from before the module's import to after it), its jitted functions and lines.

`--check GAME` runs `python -m verifier check models/GAME.yaml --printed -q` with an empty
`TURNPROOF_CACHE_DIR` (as a new user's first run), counts the modules it compiled and how many
times the run's processes compiled each (Numba's cache log: a function's machine code saved once
a compile; more than once where two processes compiled it side by side), then compiles each of
them cold again alone, the modules it imports kept warm, so that the table names where the run's
compile time went. `--keep DIR` keeps that cache folder.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAMES = ["alpha_clash", "aeons_end", "wtactics", "alice", "shadow_era"]

WRITE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from bench.compile_cost import module_texts
for kind, text in module_texts(sys.argv[2]).items():
    with open(f"{sys.argv[3]}/{kind}.txt", "w") as f:
        f.write(text)
"""

COMPILE = r"""
import json, re, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from verifier.engines.compiled import cache
from verifier.engines.compiled.numbagen import RUNTIME
text = Path(sys.argv[2]).read_text()
if text != RUNTIME:
    cache.load(RUNTIME)
def deps(text):
    # the generated modules `text` imports, loaded first (warm where their code is cached)
    for key in re.findall(r"^from turnproof_compiled_(m\w+) import", text, re.M):
        path = cache.cache_dir() / f"{key}.py"
        if path.is_file():
            dep = path.read_text()
            deps(dep)
            cache.load(dep)
deps(text)
cpu = time.process_time()
_module, known = cache.load(text)
print(json.dumps({"cpu": time.process_time() - cpu, "known": known}))
"""


def module_texts(game: str) -> dict[str, str]:
    """The base, product and scan modules' texts of `game` at its printed numbers, first reading."""
    from verifier.analysis.compiled_scan import scan_source
    from verifier.engines.compiled.numbagen import module_source
    from verifier.ir.props import Invariant, Ordering
    from verifier.props.monitor import compile_together
    from verifier.runner import RunOptions, claims_for, load_variants
    from verifier.semantics import layout

    path = str(ROOT / "models" / f"{game}.yaml")
    options = RunOptions(printed=True)
    first = load_variants(path, options)[0][0]
    model = first.instantiate()
    lay = layout(model)
    texts = {"base": module_source(lay, ()).text, "scan": scan_source(lay, ()).text}
    orderings = [c for c in claims_for(path, first, options)[0] if isinstance(c, Ordering)]
    if orderings:
        product, parts = compile_together(model, orderings)
        watched = [c.expr for part in parts for c in part.claims if isinstance(c, Invariant)]
        texts["product"] = module_source(layout(product), watched).text
    return texts


def compile_cold(text_file: Path, warm: Path | None = None) -> dict:
    """CPU seconds of compiling the module in `text_file` cold, in a fresh process (the folder
    `warm`'s modules, copied with their machine code, serve its imports)."""
    with tempfile.TemporaryDirectory(prefix="turnproof-compile-cost-") as folder:
        if warm is not None:
            shutil.copytree(warm, folder, dirs_exist_ok=True)
            stem = text_file.stem
            for cached in Path(folder, "__pycache__").glob(f"{stem}.*"):
                cached.unlink()
        env = {**os.environ, "TURNPROOF_CACHE_DIR": folder}
        done = subprocess.run([sys.executable, "-c", COMPILE, str(ROOT), str(text_file)], capture_output=True,
                              text=True, env=env, cwd=ROOT)
    if done.returncode:
        raise SystemExit(f"{text_file}: the compile failed\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def size(text: str) -> tuple[int, int]:
    """The module's jitted functions and lines."""
    return text.count("@njit("), text.count("\n")


def kind_of(text: str) -> str:
    """What a generated module found in the cache folder is, by its text."""
    if "class ModelError" in text:
        return "runtime"
    if "def search(expand" in text:
        return "loop"
    if "def expand_chunk" in text:
        return "chunks"
    if "import expand as _expand" in text:
        return "symmetry"
    if "def scan(expand, applies" in text:
        return "scan kernel"
    if "def applies(" in text:
        return "scan"
    for name, kind in (("def judge(", "moves kernel"), ("def edges(", "graph"), ("def predicates(", "product"),
                       ("def cyclic_components(", "lasso")):
        if name in text:
            return kind
    return "search" if "def watch_all(" in text and "wfound[" in text else "expand"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def games_table(games: list[str]) -> None:
    print(f"{'game':<14}{'module':<9}{'functions':>10}{'lines':>8}{'cold CPU s':>12}")
    for game in games:
        with tempfile.TemporaryDirectory(prefix="turnproof-compile-texts-") as folder:
            subprocess.run([sys.executable, "-c", WRITE, str(ROOT), game, folder], check=True, cwd=ROOT)
            for kind in ("base", "product", "scan"):
                path = Path(folder, f"{kind}.txt")
                if not path.is_file():
                    continue
                functions, lines = size(path.read_text())
                cpu = compile_cold(path)["cpu"]
                print(f"{game:<14}{kind:<9}{functions:>10}{lines:>8}{cpu:>12.2f}", flush=True)


def check_table(game: str, keep: str | None) -> None:
    folder = keep or tempfile.mkdtemp(prefix="turnproof-cold-check-")
    env = {**os.environ, "TURNPROOF_CACHE_DIR": folder, "NUMBA_DEBUG_CACHE": "1"}
    before = children_cpu()
    done = subprocess.run([sys.executable, "-m", "verifier", "check", str(ROOT / "models" / f"{game}.yaml"),
                           "--printed", "-q"], capture_output=True, text=True, env=env, cwd=ROOT)
    total = children_cpu() - before
    saved = Counter(re.findall(r"^\[cache\] data saved to .*[/\\](m[0-9a-f]{32}\.\w+-\d+)\.", done.stdout, re.M))
    modules = sorted(Path(folder).glob("m*.py"))
    print(f"cold check of {game} --printed: exit {done.returncode}, {total:.1f} CPU s, {len(modules)} modules compiled")
    print(f"{'module':<36}{'kind':<12}{'functions':>10}{'lines':>8}{'compiled':>9}{'cold CPU s':>12}")
    spent = 0.0
    for path in modules:
        text = path.read_text()
        functions, lines = size(text)
        cpu = compile_cold(path, Path(folder))["cpu"]
        spent += cpu
        times = max((n for name, n in saved.items() if name.startswith(f"{path.stem}.")), default=0)
        print(f"{path.stem:<36}{kind_of(text):<12}{functions:>10}{lines:>8}{times:>9}{cpu:>12.2f}", flush=True)
    print(f"{'all':<36}{'':<12}{'':>10}{'':>8}{'':>9}{spent:>12.2f}")
    if keep is None:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("games", nargs="*", choices=[[]] + GAMES, default=[])
    parser.add_argument("--check", choices=GAMES, help="a cold check of this game: the modules it compiles")
    parser.add_argument("--keep", help="with --check: the cache folder to use and keep")
    args = parser.parse_args()
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    if args.check:
        check_table(args.check, args.keep)
    if args.games or not args.check:
        games_table(args.games or GAMES)


if __name__ == "__main__":
    main()
