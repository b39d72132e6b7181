"""The Dominion example (examples/models/dominion.yaml, a new user's model from issue #27's probe)
checks as its claims expect under both readings, its one variant difference acknowledged; at one
Province, a few seconds, where the default two take about twice as long."""
from __future__ import annotations

import json
from pathlib import Path

from verifier.cli import main

ROOT = Path(__file__).resolve().parents[1]
MODEL = str(ROOT / "examples" / "models" / "dominion.yaml")


def test_the_dominion_example_checks_as_its_claims_expect(capsys):
    assert main(["check", MODEL, "-D", "PROV=1", "-q", "--format", "json", "-o", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    verdicts = {(r["id"], r["variant"]): r["verdict"] for r in doc["results"]}
    assert verdicts[("no-treasure-after-buy", "second_edition")] == "HOLDS"
    assert verdicts[("no-treasure-after-buy", "first_edition")] == "VIOLATED"
    assert verdicts[("provinces-can-run-out", "first_edition")] == "HOLDS"          # the witness exists
    assert verdicts[("game-may-not-end", "second_edition")] == "VIOLATED"
    (finding,) = doc["findings"]
    assert finding["kind"] == "variant-difference" and finding["acknowledged"]
