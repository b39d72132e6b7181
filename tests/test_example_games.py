"""The games a new user wrote in issue #27's probes (examples/models/dominion.yaml, uno.yaml,
exploding_kittens.yaml, love_letter.yaml, netrunner.yaml, last_standing.yaml, lost_cities.yaml) check as their claims expect under each
reading, each variant
difference acknowledged. Dominion at one Province: a few seconds, where the default two take about twice as long."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from verifier.cli import main

MODELS = Path(__file__).resolve().parents[1] / "examples" / "models"


def check(capsys, name: str, *options: str) -> tuple[dict, list]:
    assert main(["check", str(MODELS / f"{name}.yaml"), *options, "-q", "--format", "json", "-o", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    return {(r["id"], r["variant"]): r["verdict"] for r in doc["results"]}, doc["findings"]


def test_the_dominion_example_checks_as_its_claims_expect(capsys):
    verdicts, findings = check(capsys, "dominion", "-D", "PROV=1")
    assert verdicts[("no-treasure-after-buy", "second_edition")] == "HOLDS"
    assert verdicts[("no-treasure-after-buy", "first_edition")] == "VIOLATED"
    assert verdicts[("provinces-can-run-out", "first_edition")] == "HOLDS"          # the witness exists
    assert verdicts[("game-may-not-end", "second_edition")] == "VIOLATED"
    (finding,) = findings
    assert finding["kind"] == "variant-difference" and finding["acknowledged"]


def test_the_uno_example_says_who_plays_next(capsys):
    verdicts, findings = check(capsys, "uno")
    assert {verdicts[(c, r)] for c in ("next-player", "skip-skips") for r in ("official", "house")} == {"HOLDS"}
    assert verdicts[("no-play-after-draw", "official")] == "VIOLATED"
    assert verdicts[("reverse-then-win", "house")] == "HOLDS"
    assert findings and all(f["acknowledged"] for f in findings)


def test_the_exploding_kittens_example_reads_the_attack_two_ways(capsys):
    verdicts, findings = check(capsys, "exploding_kittens")
    assert verdicts[("at-most-two-turns-owed", "original")] == "HOLDS"
    assert verdicts[("at-most-two-turns-owed", "stacking")] == "VIOLATED"     # the per-reading turn_end
    assert {verdicts[("attack-passes-the-turn", r)] for r in ("original", "stacking")} == {"HOLDS"}
    assert verdicts[("attacks-lengthen-rounds", "original")] == "VIOLATED"         # rounds by who has played
    assert verdicts[("rounds-at-most-four-turns", "stacking")] == "VIOLATED"
    assert verdicts[("a-kitten-can-be-drawn", "original")] == "HOLDS"                # a move with a choice value
    assert findings and all(f["acknowledged"] for f in findings)


def test_the_love_letter_example_skips_the_players_knocked_out(capsys):
    verdicts, findings = check(capsys, "love_letter")
    holds = ("one-card-between-turns", "out-never-plays", "the-round-ends", "protected-not-targeted",
             "a-guard-can-name-the-princess", "no-stuck-player", "turn-passes-to-a-player-in-the-round",
             "the-deck-can-run-out")
    assert {verdicts[(c, None)] for c in holds} == {"HOLDS"}
    assert verdicts[("nobody-knocks-themselves-out", None)] == "VIOLATED"    # the Princess, a lost Baron
    assert findings == []


def test_the_netrunner_example_gives_each_side_its_clicks(capsys):
    """Two asymmetric sides: `on_turn_start` gives the player whose turn starts its clicks (the first
    turn too), `prev(hand[active])` on `pass turn` reads the player whose turn ended, and a run is
    a phase with steps entered from Action and left back to it."""
    verdicts, findings = check(capsys, "netrunner", "-D", "RND=2")
    holds = ("full-clicks-at-turn-start", "clicks-spent-before-discard", "hand-size-between-turns",
             "corp-draws-every-turn", "runs-are-the-runners", "a-run-ends-in-action", "runner-can-steal",
             "the-game-ends", "no-stuck-player", "no-score-on-the-turn-installed")
    assert {verdicts[(c, None)] for c in holds} == {"HOLDS"}
    assert verdicts[("the-corp-can-deck-out", None)] == "VIOLATED"      # nobody scores: R&D runs out
    assert findings == []


def test_the_last_standing_example_reads_the_turn_order_two_ways(capsys):
    """`skip:` per reading: the turn passes over a player out in one reading, and a player out still
    gets a turn (to pass it) in the other."""
    verdicts, findings = check(capsys, "last_standing")
    assert verdicts[("the-turn-goes-to-a-player-in", "passed_over")] == "HOLDS"
    assert verdicts[("the-turn-goes-to-a-player-in", "ghost_turns")] == "VIOLATED"
    assert {verdicts[(c, r)] for c in ("every-turn-ends", "nobody-is-stuck", "someone-can-win")
            for r in ("passed_over", "ghost_turns")} == {"HOLDS"}
    assert findings and all(f["acknowledged"] for f in findings)


def test_the_lost_cities_example_lays_before_it_draws(capsys):
    """Each card's place in a 2-D array, dealt card by card; the discard piles an array of sequences
    (one per colour, drawn from the top); an ordering event over two actions; a step claim reading the
    draw's choice; the piles and the cards' places agreeing."""
    verdicts, findings = check(capsys, "lost_cities")
    assert set(verdicts) == {(c, None) for c in (
        "lay-before-draw", "no-take-back", "full-hand-at-turn-start", "round-ends", "hand-never-above-the-limit",
        "a-pile-card-can-be-taken", "expeditions-ascend", "own-cards-only", "piles-hold-the-discarded-cards")}
    assert set(verdicts.values()) == {"HOLDS"} and findings == []


def test_the_lost_cities_claims_catch_a_card_taken_back(capsys, tmp_path):
    """Without the rule that a pile just discarded onto is not drawn from, the step claim breaks,
    with the discard and the draw from that pile in its trace."""
    (tmp_path / "models").mkdir()
    shutil.copytree(MODELS.parent / "properties", tmp_path / "properties")
    text = (MODELS / "lost_cities.yaml").read_text(encoding="utf-8")
    assert ' and not dropped[c]"' in text
    (tmp_path / "models" / "lost_cities.yaml").write_text(text.replace(' and not dropped[c]"', '"'), encoding="utf-8")
    assert main(["check", str(tmp_path / "models" / "lost_cities.yaml"), "-q", "-f", "json", "-o", "-"]) == 1
    results = {r["id"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    assert results["no-take-back"]["verdict"] == "VIOLATED"
    assert [s["action"].split("(")[0] for s in results["no-take-back"]["trace"]["steps"]][-3:] == \
        ["discard", "end Lay", "draw_pile"]
