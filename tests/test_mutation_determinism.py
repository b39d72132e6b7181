"""Two processes with different string hashing make the same mutants and write the same output.

`--only` ids of one run must name the same mutants in the next, and a model's desugared
effects must not depend on the order of a set: the turn-passing action of
`fixtures/lang/turn_start.yaml` writes two arrays over three blocks of the turn change,
whose order once followed the hash of their names (PYTHONHASHSEED 1 and 4 gave different orders).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = "tests/fixtures/lang/turn_start.yaml"
SEEDS = ("1", "4")


def _run(seed: str, *args: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run([sys.executable, "-m", "verifier", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _without_times(value):
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def test_the_desugared_model_does_not_depend_on_hashing():
    first, second = (_run(seed, "export", "--to", "json", MODEL) for seed in SEEDS)
    assert first == second
    passing = next(a for a in json.loads(first)["actions"] if a["name"] == "pass turn")
    assert [k for k in passing["effects"] if k[:4] in ("mana", "shie")] == \
        ["mana[active]", "shield[(active + 1) % 3]", "mana[(active + 1) % 3]"]


def test_mutants_and_their_outcomes_do_not_depend_on_hashing():
    first, second = (_without_times(json.loads(_run(seed, "mutate", MODEL, "-q", "-j", "1", "-f", "json")))
                     for seed in SEEDS)
    assert first == second
    assert [m["id"] for m in first["mutants"]] == [f"m{k}" for k in range(1, first["generated"] + 1)]
