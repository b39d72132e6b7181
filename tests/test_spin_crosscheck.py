"""SPIN counts the same state space as the explicit engine (through the Promela exporter)."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from verifier.engines.compact import explore_compact
from verifier.engines.explicit import explore
from verifier.lang import load_model
from verifier.report.promela import setup_steps, to_promela

TESTS = Path(__file__).parent
BENCH = TESTS.parent / "bench" / "models"
CASES = [(TESTS / "models" / "phils.yaml", None), (TESTS / "models" / "peterson.yaml", None),
         (TESTS / "models" / "hanoi.yaml", None), (TESTS / "models" / "priority.yaml", None),
         (TESTS / "fixtures" / "lang" / "turn_start.yaml", None), (TESTS / "fixtures" / "lang" / "grid.yaml", None),
         (TESTS / "fixtures" / "lang" / "stack.yaml", None), (TESTS / "fixtures" / "lang" / "until.yaml", None),
         (TESTS / "fixtures" / "lang" / "next_player.yaml", None), (TESTS / "fixtures" / "lang" / "rounds.yaml", None),
         (TESTS / "fixtures" / "lang" / "must_once.yaml", None),
         (TESTS / "fixtures" / "core" / "mini.yaml", "strict"), (TESTS / "fixtures" / "core" / "mini.yaml", "loose"),
         (TESTS / "fixtures" / "props" / "order.yaml", "loose")]

pytestmark = pytest.mark.skipif(shutil.which("spin") is None or shutil.which("gcc") is None,
                                reason="needs SPIN and gcc (Debian packages spin, gcc; .ci/run installs spin)")


def spin_counts(promela: str, workdir: Path) -> tuple[int, int]:
    """SPIN's stored states and transitions; `-o2` keeps write-only variables in its states, as we do.
    pan is compiled unoptimised: the counts are the same, and gcc -O0 takes a third of -O1's CPU."""
    (workdir / "model.pml").write_text(promela)
    subprocess.run(["spin", "-a", "-o2", "model.pml"], cwd=workdir, check=True, capture_output=True)
    subprocess.run(["gcc", "-O0", "-DNOREDUCE", "-DSAFETY", "-DNOCLAIM", "-o", "pan", "pan.c"], cwd=workdir,
                   check=True, capture_output=True)
    out = subprocess.run(["./pan", "-E", "-m10000000"], cwd=workdir, check=True, capture_output=True,
                         text=True).stdout
    states = int(re.search(r"(\d+) states, stored", out).group(1))
    transitions = int(re.search(r"(\d+) transitions \(= stored\+matched\)", out).group(1))
    return states, transitions


@pytest.mark.parametrize("path,variant", CASES, ids=lambda x: getattr(x, "stem", x))
def test_same_state_count_as_spin(tmp_path, path, variant):
    model = load_model(str(path), variant=variant).instantiate()
    space = explore(model)
    states, transitions = spin_counts(to_promela(model), tmp_path)
    setup = setup_steps(model)      # a first step setting arrays that start with different values
    assert states == len(space.states) + setup
    assert transitions == space.transitions + 1 + setup    # SPIN also counts the step into the initial state


def test_the_bench_clock_model_at_a_small_table(tmp_path):
    """bench/models/phils19clock.yaml (the 50 M-state row of bench/README.md) with 5 philosophers:
    SPIN, the explicit engine and the compact store count its states alike, K = 3 times phils's."""
    def small(name: str) -> Path:
        text = (BENCH / name).read_text()
        assert "N: 19\n" in text
        (tmp_path / name).write_text(text.replace("N: 19\n", "N: 5\n"))
        return tmp_path / name
    model = load_model(str(small("phils19clock.yaml"))).instantiate()
    phils = len(explore(load_model(str(small("phils19.yaml"))).instantiate()).states)
    space = explore(model)
    states, transitions = spin_counts(to_promela(model), tmp_path)
    assert states == len(space.states) == len(explore_compact(model)) == 3 * phils == 246
    assert transitions == space.transitions + 1


@pytest.mark.slow
@pytest.mark.parametrize("game", ["aeons_end", "alpha_clash", "shadow_era", "wtactics"])
def test_the_compiled_store_counts_the_shipped_games_as_spin(tmp_path, game):
    """The shipped games at their defaults (first reading; Alice has two initial states, which the
    exporter does not write): SPIN stores as many states, and makes as many transitions, as the
    compiled store (Shadow Era's state takes two words). Slow the first time: each game is compiled."""
    from verifier.engines.compiled.search import explore_compiled

    model = load_model(str(TESTS.parent / "models" / f"{game}.yaml")).instantiate()
    space = explore_compiled(model)
    assert space.complete
    states, transitions = spin_counts(to_promela(model), tmp_path)
    setup = setup_steps(model)
    assert states == len(space) + setup
    assert transitions == space.transitions + 1 + setup
