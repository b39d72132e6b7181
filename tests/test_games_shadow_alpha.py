"""Shipped game models Shadow Era and Alpha Clash: they load, cite rules, keep their
default state spaces small, and every claim's verdict at the default parameters is
pinned, per interpretation variant.

A pinned verdict that changes means the model, the language or an engine changed what
the rules page is shown to allow; update the table only together with the model's doc.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from verifier.engines.explicit import explore
from verifier.ir.model import ActionKind, Modality
from verifier.lang import load_model
from verifier.result import Verdict
from verifier.runner import RunOptions, check_model

ROOT = Path(__file__).resolve().parent.parent

# claim id -> verdict in every variant, or {variant: verdict}
PINNED: dict[str, dict[str, str | dict[str, str]]] = {
    "shadow_era": {
        "start-before-draw": "HOLDS",
        "draw-step-resolved": "HOLDS",
        "sacrifice-decided": "HOLDS",
        "damage-before-healing": "HOLDS",
        "hand-max": "HOLDS",
        "full-hand-skips-draw": "HOLDS",
        "empty-deck-hurts": {"literal": "HOLDS", "freeze_game_turns": "HOLDS",
                             "full_hand_no_damage": "VIOLATED", "stalwart_until_next_turn": "HOLDS",
                             "death_after_healing": "HOLDS"},
        "deck-out-can-kill": "HOLDS",
        "rabble-draw-from-empty-deck": "HOLDS",
        "first-player-no-se-in-turn-one": "HOLDS",
        "second-player-gains-se-in-first-turn": "HOLDS",
        "one-sacrifice-per-turn": "HOLDS",
        "resources-never-overspent": "HOLDS",
        "resources-renewed-at-start": "HOLDS",
        "allies-ready-at-start": "HOLDS",
        "bonus-gone-next-turn": "HOLDS",
        "bonus-reachable": "HOLDS",
        "frozen-two-controller-turns": {"literal": "HOLDS", "freeze_game_turns": "VIOLATED",
                                        "full_hand_no_damage": "HOLDS", "stalwart_until_next_turn": "HOLDS",
                                        "death_after_healing": "HOLDS"},
        "freeze-never-too-long": "HOLDS",
        "freeze-runs-out": "HOLDS",
        "frozen-ally-never-attacks": "HOLDS",
        "stalwart-once-per-turn": "HOLDS",
        "stalwart-only-in-own-turn": {"literal": "HOLDS", "freeze_game_turns": "HOLDS",
                                      "full_hand_no_damage": "HOLDS", "stalwart_until_next_turn": "VIOLATED",
                                      "death_after_healing": "HOLDS"},
        "stalwart-trigger-reachable": "HOLDS",
        "zero-health-ends-game": {"literal": "HOLDS", "freeze_game_turns": "HOLDS",
                                  "full_hand_no_damage": "HOLDS", "stalwart_until_next_turn": "HOLDS",
                                  "death_after_healing": "VIOLATED"},
        "game-can-end": "HOLDS",
        "no-deadlock": "HOLDS",
        "second-player-reaches-turn": "HOLDS",
    },
    "alpha_clash": {
        "expansion-before-primary": "HOLDS",
        "ready-step-readies": "HOLDS",
        "clash-steps-complete": "HOLDS",
        "clash-has-attacker": "HOLDS",
        "procedure-within-its-phase": "HOLDS",
        "defender-acts-in-own-steps": "HOLDS",
        "one-clash-per-turn": {"flowchart": "VIOLATED", "decline_returns": "VIOLATED",
                               "one_clash": "HOLDS", "reverse_dead_end": "VIOLATED"},
        "clashes-limited-by-units": "HOLDS",
        "decline-ends-turn": {"flowchart": "HOLDS", "decline_returns": "VIOLATED",
                              "one_clash": "HOLDS", "reverse_dead_end": "HOLDS"},
        "first-turn-clash": "HOLDS",
        "second-clash-possible": {"flowchart": "HOLDS", "decline_returns": "HOLDS",
                                  "one_clash": "VIOLATED", "reverse_dead_end": "HOLDS"},
        "resources-never-overspent": "HOLDS",
        "one-resource-per-turn": "HOLDS",
        "unpayable-cost-after-legal-check": "HOLDS",
        "reversal-reachable": "HOLDS",
        "defender-buff-reachable": "HOLDS",
        "reversal-after-reveal": "VIOLATED",
        "no-deadlock": {"flowchart": "HOLDS", "decline_returns": "HOLDS",
                        "one_clash": "HOLDS", "reverse_dead_end": "VIOLATED"},
        "draw-from-empty-deck": "VIOLATED",
        "damage-ends-nothing": "VIOLATED",
    },
}

VARIANTS = {
    "shadow_era": ["literal", "freeze_game_turns", "full_hand_no_damage", "stalwart_until_next_turn",
                   "death_after_healing"],
    "alpha_clash": ["flowchart", "decline_returns", "one_clash", "reverse_dead_end"],
}

# the gaps each model leaves to the verifier on purpose: (action, variable)
GAPS = {
    "shadow_era": {("summon_rabble", "deck")},
    "alpha_clash": {("determine_cost", "avail"), ("determine_activation_cost", "avail")},
}

# defaults are meant to stay small enough for a full check in seconds
MAX_STATES = 200_000


def model_path(game: str) -> str:
    return str(ROOT / "models" / f"{game}.yaml")


@pytest.fixture(scope="module", params=sorted(PINNED))
def game_runs(request):
    game = request.param
    runs = check_model(model_path(game), RunOptions(consistency=False))
    return game, runs


@pytest.mark.parametrize("game", sorted(PINNED))
def test_model_loads_with_every_variant(game):
    first = load_model(model_path(game))
    assert first.players == 2
    assert [v.name for v in first.variants] == VARIANTS[game]
    for name in VARIANTS[game]:
        model = load_model(model_path(game), variant=name)
        assert model.variant == name


@pytest.mark.parametrize("game", sorted(PINNED))
def test_every_phase_and_action_cites_a_rule(game):
    for name in VARIANTS[game]:
        model = load_model(model_path(game), variant=name)
        for phase in model.phases:
            assert phase.rule is not None and phase.rule.section and phase.rule.text, phase.name
        for action in model.actions:
            if action.kind is ActionKind.RULE:
                assert action.rule is not None and action.rule.section and action.rule.text, action.name


@pytest.mark.parametrize("game", sorted(PINNED))
def test_doc_has_coverage_abstraction_bounds_and_variants(game):
    doc = load_model(model_path(game)).doc
    for heading in ("ABSTRACTION", "ASSUMPTIONS", "BOUNDS", "DEFAULT SIZES", "VARIANTS", "COVERAGE"):
        assert heading in doc, heading
    assert "out of scope" in doc
    for name in VARIANTS[game]:
        assert name in doc, name


def test_default_state_space_is_small_and_complete(game_runs):
    game, runs = game_runs
    for run in runs:
        for result in run.results:
            assert result.engine == "explicit", (game, run.model.variant, result.property.id)
            assert result.stats.states is not None
            assert 1_000 <= result.stats.states <= MAX_STATES, (game, run.model.variant, result.stats.states)


@pytest.mark.parametrize("game", sorted(PINNED))
def test_gaps_left_to_the_verifier_are_reached(game):
    """Where the page is silent the model states no overflow policy; the explicit search
    must meet exactly those gaps (and no others) in the first variant."""
    model = load_model(model_path(game)).instantiate()
    space, _ = explore(model)
    seen = {(model.actions[head].name, var) for (head, var) in space.gaps}
    assert seen == GAPS[game]


def test_pinned_verdicts(game_runs):
    game, runs = game_runs
    assert [r.model.variant for r in runs] == VARIANTS[game]
    seen = set()
    for run in runs:
        for result in run.results:
            want = PINNED[game][result.property.id]
            want = want if isinstance(want, str) else want[run.model.variant]
            assert result.verdict is Verdict(want), (game, run.model.variant, result.property.id)
            assert result.as_expected, (game, run.model.variant, result.property.id)
            seen.add(result.property.id)
    assert seen == set(PINNED[game])


def test_violations_come_with_traces(game_runs):
    _, runs = game_runs
    for run in runs:
        for result in run.results:
            if result.verdict is Verdict.VIOLATED and result.property.kind != "reachable":
                assert result.trace is not None and len(result.trace) > 0, result.property.id
                assert result.property.why, result.property.id


def test_every_obligation_is_in_a_phase(game_runs):
    """must modalities only bind within a phase (docs/LANGUAGE.md), so every one names its phase."""
    _, runs = game_runs
    for run in runs:
        for action in run.model.actions:
            if action.modality in (Modality.MUST, Modality.MUST_NOT):
                assert action.phase is not None, action.name
