"""Shipped game models Shadow Era and Alpha Clash: they load, cite rules, keep their
default state spaces small, and every claim's verdict at the default parameters is
pinned, per interpretation variant.

A pinned verdict that changes means the model, the language or an engine changed what
the rules page is shown to allow; update the table only together with the model's doc.
"""
from __future__ import annotations

from dataclasses import replace

import pytest
from shipped_runs import ROOT, model_path, on_its_worker, runs_of

from verifier.engines.explicit import ExplicitEngine, explore
from verifier.ir.model import ActionKind, Modality
from verifier.lang import load_model, load_properties
from verifier.portfolio.plan import run_claims
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout, successors
from verifier.trace import Trace, replay

# claim id -> verdict in every variant, or {variant: verdict}
PINNED: dict[str, dict[str, str | dict[str, str]]] = {
    "shadow_era": {
        "start-before-draw": "HOLDS",
        "draw-step-resolved": "HOLDS",
        "sacrifice-decided": "HOLDS",
        "damage-before-healing": "HOLDS",
        "hand-max": "PROVED",
        "hand-max-larger-draws": "VIOLATED",
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
        # ordering, termination and bounded response
        "se-before-triggers": "HOLDS",
        "one-sacrifice": "HOLDS",
        "renew-before-next-turn": "HOLDS",
        "bonus-lasts-the-turn": "HOLDS",
        "freeze-thaws": "HOLDS",
        "turn-ends": "HOLDS",
        "game-ends": "VIOLATED",
        # the Action phase is optional play: it can end with each kind still affordable
        "action-ends-with-card-payable": "HOLDS",
        "action-ends-with-curse-payable": "HOLDS",
        "action-ends-with-blessing-payable": "HOLDS",
        "action-ends-with-stalwart-payable": "HOLDS",
        "action-ends-with-freeze-payable": "HOLDS",
        "action-ends-with-attacker-ready": "HOLDS",
        # what each move does (claims the mutation analysis showed missing)
        "defeated-only-at-zero": "HOLDS",
        "draw-phase-does-one-thing": "HOLDS",
        "draw-moves-one-card": "HOLDS",
        "deck-out-damage-is-one": "HOLDS",
        "sacrifice-turns-card-into-resource": "HOLDS",
        "last-card-can-be-sacrificed": "HOLDS",
        "plays-pay-their-cost": "HOLDS",
        "played-card-leaves-hand": "HOLDS",
        "rabble-summon-draws": "HOLDS",
        "stalwart-summon-adds-ally": "HOLDS",
        "freeze-costs-se": "HOLDS",
        "attack-exhausts-and-hits": "HOLDS",
        "start-heal-needs-blessing": "HOLDS",
        "start-damage-needs-curse": "HOLDS",
        "start-damage-survived": "HOLDS",
        "second-player-sacrifices": "HOLDS",
        "start-begins-clean": "HOLDS",
        "every-ally-can-attack": "HOLDS",
        "lone-ally-can-be-frozen": "HOLDS",
        "second-turn-is-second-players": "HOLDS",
        "rabble-in-first-turn": "HOLDS",
        "stalwart-in-first-turn": "HOLDS",
        "arcane-in-first-turn": "HOLDS",
        "curse-in-first-turn": "HOLDS",
        "blessing-in-first-turn": "HOLDS",
        # the whole mutation run's survivors that a claim true of the page notices
        "stalwart-spent-for-the-turn": "HOLDS",
        "readying-after-end-effects": "HOLDS",
        "renewal-after-readying": "HOLDS",
        "sacrifice-in-later-turn": "HOLDS",
        "ally-attacks-beside-frozen-one": "HOLDS",
        # the rule moves' survivors (hp, stal_ready with a reset changed)
        "hero-damage-kept": "HOLDS",
        "stalwart-ready-each-own-turn": "HOLDS",
    },
    "alpha_clash": {
        "expansion-before-primary": "HOLDS",
        "ready-step-readies": "HOLDS",
        "clash-steps-complete": "HOLDS",
        "clash-step-numbers": "HOLDS",
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
        "resources-never-overspent": "PROVED",
        "one-resource-per-turn": "HOLDS",
        "unpayable-cost-after-legal-check": "HOLDS",
        "reversal-reachable": "HOLDS",
        "defender-buff-reachable": "HOLDS",
        "reversal-after-reveal": "VIOLATED",
        "no-deadlock": {"flowchart": "HOLDS", "decline_returns": "HOLDS",
                        "one_clash": "HOLDS", "reverse_dead_end": "VIOLATED"},
        "draw-from-empty-deck": "VIOLATED",
        "damage-ends-nothing": "VIOLATED",
        # ordering, termination and bounded response
        "expansion-order": "HOLDS",
        "clash-step-order": "HOLDS",
        "one-attacker-per-clash": "HOLDS",
        "legality-before-cost": "HOLDS",
        "no-cost-after-illegal": "HOLDS",
        "targets-before-check": "HOLDS",
        "procedure-completes": "HOLDS",
        "counter-step-ends": "VIOLATED",
        "turn-ends": "VIOLATED",
        "game-ends": "VIOLATED",
        # claims the mutation analysis showed missing (issue 15)
        "phase-moves-follow-chart": "HOLDS",
        "card-play-follows-601": "HOLDS",
        "activation-follows-602": "HOLDS",
        "card-with-choices": "HOLDS",
        "card-without-choices": "HOLDS",
        "card-with-division": "HOLDS",
        "card-without-division": "HOLDS",
        "effect-with-choices": "HOLDS",
        "effect-without-choices": "HOLDS",
        "effect-with-division": "HOLDS",
        "effect-without-division": "HOLDS",
        "draw-moves-deck-to-hand": "HOLDS",
        "resource-comes-from-hand": "HOLDS",
        "resource-step-optional": "HOLDS",
        "resource-every-turn": "HOLDS",
        "damage-step-resolves": "HOLDS",
        "obstruct-reachable": "HOLDS",
        "attack-can-go-unobstructed": "HOLDS",
        "primary-can-end-with-cards": "HOLDS",
        "standby-empty-when-idle": "HOLDS",
        "clash-over-in-primary": "HOLDS",
        "reversal-returns-card": "HOLDS",
        "activation-has-a-source": "HOLDS",
        "defender-can-counter": "HOLDS",
        "reveal-from-single-card": "HOLDS",
        "activate-with-single-unit": "HOLDS",
        "obstructer-is-a-unit": "HOLDS",
        "clash-question-answered-once": "HOLDS",
        "attacker-acts-in-own-steps": "HOLDS",
        # the whole mutation run's survivors that a claim true of the page notices
        "ready-step-readies-everything": "HOLDS",
        "one-resource-per-step": "HOLDS",
        "decline-reaches-end-of-turn": "HOLDS",
        "lone-unit-obstructs": "HOLDS",
        "only-activations-reveal": "HOLDS",
        "card-found-illegal": "HOLDS",
        "activation-found-illegal": "HOLDS",
    },
}

# Where each move is made (issue 26.5, the move-phase mutants): every reading, HOLDS.
MOVES_IN_PHASE: dict[str, list[str]] = {
    "shadow_era": [
        "gain-se-only-in-start", "start-damage-only-in-start", "start-heal-only-in-start",
        "draw-card-only-in-draw", "hand-full-only-in-draw", "empty-deck-damage-only-in-draw",
        "sacrifice-only-in-sacrifice", "skip-sacrifice-only-in-sacrifice", "summon-rabble-only-in-action",
        "summon-stalwart-only-in-action", "cast-arcane-only-in-action", "cast-curse-only-in-action",
        "cast-blessing-only-in-action", "eladwen-freeze-only-in-action", "attack-hero-only-in-action",
        "end-of-turn-effects-only-in-end", "ready-all-only-in-end", "renew-resources-only-in-end",
    ],
    "alpha_clash": [
        "ready-step-only-in-ready", "draw-step-only-in-draw", "place-resource-only-in-resource",
        "initiate-clash-only-in-clashquestion", "decline-clash-only-in-clashquestion",
        "declare-attacker-only-in-c1attack", "obstruct-only-in-c3obstruct", "resolve-damage-only-in-c6damage",
    ],
}
for _game, _claims in MOVES_IN_PHASE.items():
    PINNED[_game].update(dict.fromkeys(_claims, "HOLDS"))
# the init and reset mutants of the rule moves the claims above did not see (issue 26)
PINNED["alpha_clash"].update(dict.fromkeys([
    "turn-starts-fresh", "no-clash-before-first-primary", "end-turn-straight-from-primary",
    "hand-kept-between-turns", "units-stay-in-play", "exhausted-until-ready-step",
    "unspent-resource-stays-ready", "clash-damage-kept", "first-player-can-activate",
    "second-player-can-activate"], "HOLDS"))

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

# violated liveness claims: variant -> "lasso" (a loop that can repeat forever) or "stuck"
# (play stops); a variant not listed is "lasso"
LIVENESS_SHAPE = {
    ("shadow_era", "game-ends"): {},
    ("alpha_clash", "turn-ends"): {"reverse_dead_end": "stuck"},
    ("alpha_clash", "game-ends"): {"reverse_dead_end": "stuck"},
}

# defaults are meant to stay small enough for a full check in seconds (a violated step claim's search
# runs on the model times its monitor's flag)
MAX_STATES = 400_000


@pytest.fixture(params=[on_its_worker(game) for game in sorted(PINNED)])
def game_runs(request):
    """The game's check at the defaults (claims and analyses), done once per worker (`shipped_runs`)."""
    game = request.param
    return game, runs_of(game)


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
    """Every claim is decided by exhaustive search at the defaults, except those over every value
    of a parameter (`for_every`), which the symbolic engine decides."""
    game, runs = game_runs
    for run in runs:
        for result in run.results:
            if result.property.for_every:       # PROVED, or VIOLATED as expected with the witness's values
                assert result.as_expected and result.engine == "k-induction", result.property.id
                continue
            assert result.engine.startswith("explicit/"), (game, run.model.variant, result.property.id)
            assert result.stats.states is not None
            assert 1_000 <= result.stats.states <= MAX_STATES, (game, run.model.variant, result.stats.states)


@pytest.mark.parametrize("game", sorted(PINNED))
def test_gaps_left_to_the_verifier_are_reached(game):
    """Where the page is silent the model states no overflow policy; the explicit search
    must meet exactly those gaps (and no others) in the first variant."""
    model = load_model(model_path(game)).instantiate()
    space = explore(model)
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


# ---------------------------------------------------------------- ordering, termination, bounded response

def _results(runs, claim_id):
    for run in runs:
        lay = layout(run.model.instantiate())
        for result in run.results:
            if result.property.id == claim_id:
                yield run.model.variant, lay, result


def test_monitor_claims_report_their_monitor(game_runs):
    _, runs = game_runs
    for run in runs:
        for result in run.results:
            if result.property.kind in ("ordering", "bounded-response"):
                assert "monitor" in result.evidence, result.property.id


def test_every_trace_replays_on_its_variant(game_runs):
    """Monitor variables are stripped from the traces of ordering and bounded-response claims,
    so every trace replays on the designer's model of its reading; a lasso's loop closes."""
    _, runs = game_runs
    for run in runs:
        lay = layout(run.model.instantiate())
        for result in run.results:
            if result.trace is None:
                continue
            assert not any(name.startswith("monitor.") for name, _ in result.trace.initial)
            # a claim over every value of a parameter (`for_every`) is violated at the witness's values
            at = layout(run.model.instantiate(dict(result.params))) if result.property.for_every else lay
            states = replay(at, result.trace)
            if result.trace.loop_start is not None:
                assert states[-1] == states[result.trace.loop_start], result.property.id


def test_violated_liveness_claims_have_the_pinned_shape(game_runs):
    """Termination: a lasso whose loop, taken twice, still replays; or a stem ending where play stops."""
    game, runs = game_runs
    for (g, claim_id), shapes in LIVENESS_SHAPE.items():
        if g != game:
            continue
        for variant, lay, result in _results(runs, claim_id):
            assert result.verdict is Verdict.VIOLATED, (claim_id, variant)
            trace = result.trace
            if shapes.get(variant, "lasso") == "lasso":
                assert trace.loop_start is not None and trace.loop_start < len(trace), (claim_id, variant)
                twice = Trace(trace.initial, trace.steps + trace.steps[trace.loop_start:], trace.loop_start)
                states = replay(lay, twice)
                assert states[-1] == states[trace.loop_start]
            else:
                assert trace.loop_start is None, (claim_id, variant)
                states = replay(lay, trace)
                assert not list(successors(lay, states[-1])), (claim_id, variant)


def _one(runs, variant, claim_id):
    return next((lay, r) for v, lay, r in _results(runs, claim_id) if v == variant)


def test_shadow_era_game_ends_loop_keeps_full_hands(game_runs):
    """The loop of game-ends: every Drawing phase finds a full hand (hand_full), nobody draws,
    plays or sacrifices, and the decks never run out (under full_hand_no_damage they are empty
    and the full hand spares the damage)."""
    game, runs = game_runs
    if game != "shadow_era":
        pytest.skip("Shadow Era only")
    hand_max = next(p.default for p in runs[0].model.params if p.name == "HAND_MAX")   # no override here
    for variant in VARIANTS[game]:
        lay, result = _one(runs, variant, "game-ends")
        loop = result.trace.steps[result.trace.loop_start:]
        names = [s.action for s in loop]
        assert "hand_full" in names and "pass turn" in names, variant
        assert not {"draw_card", "empty_deck_damage", "sacrifice"} & set(names), variant
        assert not any(name.startswith(("deck", "hand")) for s in loop for name, _ in s.changes), variant
        at_loop = lay.as_dict(replay(lay, result.trace)[result.trace.loop_start])
        assert at_loop["hand[0]"] == at_loop["hand[1]"] == hand_max, variant
        if variant == "full_hand_no_damage":   # a full hand escapes the empty-deck damage too
            assert at_loop["deck[0]"] == at_loop["deck[1]"] == 0, variant
        else:
            assert at_loop["deck[0]"] > 0 and at_loop["deck[1]"] > 0, variant


def test_alpha_clash_turn_loops_on_reversed_plays(game_runs):
    """The loop of turn-ends (and game-ends) wherever Reverse Action leads back: a card is
    proposed, found illegal and reversed back to the hand, again and again, without the turn
    passing; under reverse_dead_end play stops at the first Reverse Action."""
    game, runs = game_runs
    if game != "alpha_clash":
        pytest.skip("Alpha Clash only")
    for claim_id in ("turn-ends", "game-ends"):
        for variant in ("flowchart", "decline_returns", "one_clash"):
            _, result = _one(runs, variant, claim_id)
            names = [s.action for s in result.trace.steps[result.trace.loop_start:]]
            assert names[0] == "propose_card" and "play_illegal" in names, (claim_id, variant)
            assert names[-1] == "reverse_play" and "pass turn" not in names, (claim_id, variant)
        _, result = _one(runs, "reverse_dead_end", claim_id)
        assert result.trace.steps[-1].action in ("play_illegal", "activation_illegal"), claim_id


def test_alpha_clash_counter_step_shows_repeated_free_activations(game_runs):
    """counter-step-ends: once the Counter step begins, the 24 steps allowed pass without leaving
    it (the shortest counterexample stops there), spent on zero-cost activations by the defending
    player."""
    game, runs = game_runs
    if game != "alpha_clash":
        pytest.skip("Alpha Clash only")
    for variant, lay, result in _results(runs, "counter-step-ends"):
        steps = result.trace.steps
        start = max(i for i, s in enumerate(steps) if s.action == "end C1Attack")
        attacker = lay.as_dict(replay(lay, result.trace)[start + 1])["active"]
        after = steps[start + 1:]
        assert len(after) == 24, variant
        assert not any("phase" in dict(s.changes) for s in after), variant
        costs = [dict(s.choice)["total"] for s in after if s.action == "determine_activation_cost"]
        assert len(costs) >= 3 and set(costs) == {0}, variant
        assert {s.player for s in after if s.action == "declare_activation"} == {1 - attacker}, variant


def test_shadow_era_freeze_thaw_bound_is_tight():
    """freeze-thaws: a frozen ally of the second player is still frozen when the third turn
    since the freeze ends (the freezing turn, its controller's first frozen turn, the freezer's
    next turn), so a bound of 2 turn ends is broken and the claim's 3 is tight; the
    counterexample stops on that third turn end, one of the freeze's two turns left."""
    model = load_model(model_path("shadow_era"), variant="literal")
    claims = {c.id: c for c in load_properties(str(ROOT / "properties" / "shadow_era.yaml"), model)}
    assert claims["freeze-thaws"].bound == 3
    tight = replace(claims["freeze-thaws"], id="tight", bound=2, expected=None)
    (r,) = run_claims(model, [tight], ExplicitEngine(), Budget())
    assert r.verdict is Verdict.VIOLATED
    actions = [s.action for s in r.trace.steps]
    freeze = max(i for i, a in enumerate(actions) if a == "eladwen_freeze")
    assert actions[-1] == "pass turn" and actions[freeze:].count("pass turn") == 3
    lay = layout(model.instantiate())
    assert lay.as_dict(replay(lay, r.trace)[-1])["fleft[1]"] == 1
