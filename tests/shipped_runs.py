"""The shipped games, each checked once per test process and shared by every test that reads
the outcome: the pinned verdicts, the analyses' findings, the forked-readings comparison.

A test (or fixture parameter) that reads a game's runs carries `xdist_group(<game>)`: pytest runs
with `--dist loadgroup` (pyproject.toml), so all of a game's tests go to one worker, which
checks the game once. Those of the four big games carry `full_tier` too (tests/tiers.py).
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
FULL_TIER_GAMES = ("alice", "alpha_clash", "shadow_era", "wtactics")


def model_path(game: str) -> str:
    return str(ROOT / "models" / f"{game}.yaml")


def marks_of(game: str) -> tuple[pytest.MarkDecorator, ...]:
    """The marks of a test that reads `runs_of(game)`: its game's xdist group, and for the four big games
    (9 to 13 s of CPU each) `full_tier`: aeons_end (3 s) checks a shipped game end to end in every tier."""
    return (pytest.mark.xdist_group(game), *((pytest.mark.full_tier,) if game in FULL_TIER_GAMES else ()))


def on_its_worker(game: str):
    """`game` as a test parameter, with its marks (`marks_of`)."""
    return pytest.param(game, marks=marks_of(game), id=game)


@functools.cache
def runs_of(game: str) -> tuple[ModelRun, ...]:
    """`turnproof check models/<game>.yaml` at the defaults: every reading's claims, then the
    analyses on the state space the claims' search kept; the readings one after the other in
    this process, never in forked children."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(forking, "free_cpus", lambda: 1)      # the readings one after the other
        patch.setattr(runner, "free_cpus", lambda: 1)       # the analyses after the claims, not beside
        return tuple(check_model(model_path(game)))
