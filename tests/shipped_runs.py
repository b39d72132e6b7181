"""The shipped games, each checked once per test process and shared by every test that reads
the outcome: the pinned verdicts, the analyses' findings, the forked-readings comparison.

A test (or fixture parameter) that reads a game's runs carries `xdist_group(<game>)`: pytest runs
with `--dist loadgroup` (pyproject.toml), so all of a game's tests go to one worker, which
checks the game once.
"""
from __future__ import annotations

import functools
from pathlib import Path

import pytest

from verifier import forking, runner
from verifier.result import ModelRun
from verifier.runner import check_model

ROOT = Path(__file__).resolve().parent.parent
GAMES = ("aeons_end", "alice", "alpha_clash", "shadow_era", "wtactics")


def model_path(game: str) -> str:
    return str(ROOT / "models" / f"{game}.yaml")


def on_its_worker(game: str):
    """`game` as a test parameter, in its game's xdist group."""
    return pytest.param(game, marks=pytest.mark.xdist_group(game), id=game)


@functools.cache
def runs_of(game: str) -> tuple[ModelRun, ...]:
    """`turnproof check models/<game>.yaml` at the defaults: every reading's claims, then the
    analyses on the state space the claims' search kept; the readings one after the other in
    this process, never in forked children."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(forking, "free_cpus", lambda: 1)      # the readings one after the other
        patch.setattr(runner, "free_cpus", lambda: 1)       # the analyses after the claims, not beside
        return tuple(check_model(model_path(game)))
