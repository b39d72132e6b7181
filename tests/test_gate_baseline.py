"""Baselines: record verdicts and findings, then fail only on changes."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from verifier import baseline
from verifier.cli import main
from verifier.diagnostics import UsageError
from verifier.report.sarif import runs_sarif
from verifier.result import Finding, ModelRun, Verdict
from verifier.runner import RunOptions, check_model

HERE = Path(__file__).parent
GATE = HERE / "fixtures" / "gate"
MINI = HERE / "fixtures" / "core"
PROPS = str(GATE / "gate_props.yaml")


def runs_of(model: str) -> list[ModelRun]:
    return check_model(str(GATE / f"{model}.yaml"), RunOptions(engine="explicit", properties=PROPS,
                                                                 consistency=False))


def check(capsys, model: str, *extra: str) -> tuple[int, str, str]:
    code = main(["check", str(GATE / f"{model}.yaml"), "-p", PROPS, "--engine", "explicit", "--no-consistency",
                 "-q", *extra])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def with_finding(runs: list[ModelRun], *findings: Finding) -> list[ModelRun]:
    return [replace(runs[0], findings=tuple(findings))] + list(runs[1:])


DEAD = Finding("dead-rule", "discard", "Discard never happens")


def test_round_trip(tmp_path):
    runs = runs_of("gate")
    doc = baseline.record(runs)
    assert doc == {"turnproof_baseline": 1, "model": "gate", "params": {},
                   "variants": [{"variant": None, "findings": [], "acknowledged": {},
                                 "claims": {"limit-at-draw": "HOLDS", "game-can-end": "HOLDS",
                                            "no-stuck-player": "HOLDS", "turn-ends": "HOLDS"}}]}
    path = tmp_path / "gate.json"
    path.write_text(baseline.dumps(doc))
    again = baseline.load(path)
    assert again == doc
    comparison = baseline.compare(runs, again)
    assert comparison.unchanged and comparison.exit_code == 0
    assert baseline.dumps(baseline.record(runs_of("gate"), again)) == path.read_text()     # stable bytes


def test_variants_are_recorded_and_kept(tmp_path):
    runs = check_model(str(MINI / "mini.yaml"), RunOptions(engine="explicit", consistency=False,
                                                           properties=str(MINI / "mini_props.yaml")))
    doc = baseline.record(runs)
    assert [e["variant"] for e in doc["variants"]] == ["loose", "strict"]
    assert doc["variants"][1]["claims"]["hand-full-reachable"] == "VIOLATED"
    only_strict = [r for r in runs if r.model.variant == "strict"]
    edited = json.loads(json.dumps(doc))
    edited["variants"][0]["claims"]["turn-ends"] = "VIOLATED"
    merged = baseline.record(only_strict, edited)                     # the loose entry is kept as it was
    assert merged["variants"][0] == edited["variants"][0]
    assert baseline.compare(only_strict, doc).unchanged


def test_a_changed_verdict_fails_whichever_way_it_moves():
    doc = baseline.record(runs_of("gate"))
    comparison = baseline.compare(runs_of("gate_limit"), doc)
    assert [(c.claim, c.old, c.new) for c in comparison.changed] == [("limit-at-draw", "HOLDS", "VIOLATED")]
    assert comparison.exit_code == 1
    back = baseline.compare(runs_of("gate"), baseline.record(runs_of("gate_limit")))
    assert [(c.claim, c.old, c.new) for c in back.changed] == [("limit-at-draw", "VIOLATED", "HOLDS")]
    assert back.exit_code == 1
    assert "limit-at-draw: VIOLATED -> HOLDS" in back.text()


def test_findings_new_acknowledged_and_gone():
    runs = runs_of("gate")
    doc = baseline.record(runs)
    assert baseline.compare(with_finding(runs, DEAD), doc).exit_code == 1
    acknowledged = replace(DEAD, acknowledged="card-specific, out of scope")
    comparison = baseline.compare(with_finding(runs, acknowledged), doc)     # an acknowledgement is configuration:
    assert comparison.exit_code == 1 and [f.key for _, f in comparison.new_findings] == ["dead-rule:discard"]
    assert "(acknowledged: card-specific, out of scope)" in comparison.text()       # recorded, it passes
    assert baseline.compare(with_finding(runs, acknowledged), baseline.record(with_finding(runs, acknowledged))) \
        .exit_code == 0
    recorded_ack = baseline.record(with_finding(runs, acknowledged))
    assert recorded_ack["variants"][0]["acknowledged"] == {"dead-rule:discard": "card-specific, out of scope"}
    reworded = baseline.compare(with_finding(runs, replace(DEAD, acknowledged="fine")), recorded_ack)
    assert reworded.exit_code == 1 and ('configuration changed: acknowledgement of dead-rule:discard: '
                                        '"card-specific, out of scope" -> "fine"') in reworded.text()
    assert "acknowledgement of dead-rule:discard" in baseline.compare(with_finding(runs, DEAD), recorded_ack).text()
    with_dead = baseline.record(with_finding(runs, DEAD))
    assert with_dead["variants"][0]["findings"] == ["dead-rule:discard"]
    assert baseline.compare(with_finding(runs, DEAD), with_dead).exit_code == 0      # recorded: no change
    gone = baseline.compare(runs, with_dead)
    assert gone.gone_findings == [(None, "dead-rule:discard")] and gone.exit_code == 0


def test_claims_added_and_removed():
    runs = runs_of("gate")
    doc = baseline.record(runs)
    del doc["variants"][0]["claims"]["turn-ends"]
    doc["variants"][0]["claims"]["retired-claim"] = "HOLDS"
    comparison = baseline.compare(runs, doc)
    assert [c.claim for c in comparison.added] == ["turn-ends"]
    assert [c.claim for c in comparison.removed] == ["retired-claim"]
    assert comparison.exit_code == 0                       # the new claim is as expected
    limit = runs_of("gate_limit")
    doc = baseline.record(limit)
    del doc["variants"][0]["claims"]["limit-at-draw"]
    assert baseline.compare(limit, doc).exit_code == 1     # a new claim not as expected fails as without baseline


def test_check_update_then_compare(tmp_path, capsys):
    target = tmp_path / "baselines" / "gate.json"
    code, out, err = check(capsys, "gate", "--baseline", str(tmp_path / "baselines") + "/", "--update-baseline")
    assert code == 0 and target.is_file()
    assert f"baseline written: {target}" in out
    recorded = target.read_text()
    assert str(tmp_path) not in recorded and str(HERE) not in recorded       # no paths in the file
    code, out, err = check(capsys, "gate", "--baseline", str(target))
    assert code == 0 and "no change" in out
    code, out, err = check(capsys, "gate_limit", "--baseline", str(target))
    assert code == 1 and "changed: limit-at-draw: HOLDS -> VIOLATED" in out
    # the violated claim, once recorded, no longer fails the gate; without a baseline it does
    check(capsys, "gate_limit", "--baseline", str(target), "--update-baseline")
    assert check(capsys, "gate_limit", "--baseline", str(target))[0] == 0
    assert check(capsys, "gate_limit")[0] == 1


def test_a_verdict_left_unknown_is_left_open_exit_3():
    runs = runs_of("gate")
    doc = baseline.record(runs)
    first = runs[0].results[0]
    cut = [replace(runs[0], results=(replace(first, verdict=Verdict.UNKNOWN, reason="--max-states 1 reached"),
                                     *runs[0].results[1:]))]
    comparison = baseline.compare(cut, doc)
    assert comparison.exit_code == 3 and not comparison.changed
    assert f"left open: {first.property.id}: HOLDS -> UNKNOWN" in comparison.text()
    assert baseline.compare(runs, baseline.record(cut)).exit_code == 0          # decided now, as expected


def test_a_changed_budget_is_a_change(tmp_path, capsys):
    target = tmp_path / "gate.json"
    check(capsys, "gate", "--baseline", str(target), "--update-baseline")
    assert json.loads(target.read_text())["config"]["engine"] == "explicit"
    code, out, _ = check(capsys, "gate", "--baseline", str(target), "--max-states", "1")
    assert code == 1 and "configuration changed: max-states: (default) -> 1" in out
    assert "left open: " in out and "HOLDS -> UNKNOWN" in out


def test_machine_formats_carry_the_comparison(tmp_path, capsys):
    target = tmp_path / "gate.json"
    check(capsys, "gate", "--baseline", str(target), "--update-baseline")
    code, out, err = check(capsys, "gate_limit", "--baseline", str(target), "-f", "json")
    doc = json.loads(out)
    assert code == 1 and doc["baseline"]["exit_code"] == 1
    assert doc["baseline"]["changed"] == [{"variant": None, "claim": "limit-at-draw", "old": "HOLDS",
                                           "new": "VIOLATED", "as_expected": False}]
    assert "gate fails" in err
    code, out, err = check(capsys, "gate_limit", "--baseline", str(target), "-f", "junit")
    assert code == 1 and "changed: limit-at-draw" in out
    comparison = baseline.compare(runs_of("gate_limit"), baseline.load(target))
    doc = runs_sarif(runs_of("gate_limit"), include_passing=True, baseline=comparison)
    states = {r["properties"]["claim"]: r["baselineState"] for r in doc["runs"][0]["results"]}
    assert states == {"limit-at-draw": "updated", "game-can-end": "unchanged", "no-stuck-player": "unchanged",
                      "turn-ends": "unchanged"}


@pytest.mark.parametrize("problem", ["missing", "not json", "not a baseline", "other model", "update alone"])
def test_baseline_errors_exit_2(tmp_path, capsys, problem):
    target = tmp_path / "gate.json"
    args = ["--baseline", str(target)]
    if problem == "not json":
        target.write_text("{nope")
    elif problem == "not a baseline":
        target.write_text('{"hello": 1}')
    elif problem == "other model":
        target.write_text(baseline.dumps({**baseline.record(runs_of("gate")), "model": "wtactics"}))
    elif problem == "update alone":
        args = ["--update-baseline"]
    code, out, err = check(capsys, "gate", *args)
    assert code == 2 and "error:" in err and "hint:" in err
    assert out == ""


def test_baseline_path_of_a_folder(tmp_path):
    assert baseline.baseline_path(str(tmp_path), "models/wtactics.yaml") == tmp_path / "wtactics.json"
    assert baseline.baseline_path("baselines/", "models/alice.yaml") == Path("baselines/alice.json")
    assert baseline.baseline_path("b/x.json", "models/alice.yaml") == Path("b/x.json")
    with pytest.raises(UsageError):
        baseline.load(tmp_path / "absent.json")


SHIPPED = sorted((Path(__file__).resolve().parent.parent / "models").glob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_baselines_record_every_claim_as_expected(path):
    """The recorded baseline of each shipped game names every claim of its property file, with
    a verdict the claim allows (the shipped checks are all as expected), in every reading;
    regenerate with `turnproof check MODEL --baseline baselines/ --update-baseline`."""
    from verifier.lang import default_properties_path, load_model, load_properties

    recorded = json.loads((path.parent.parent / "baselines" / f"{path.stem}.json").read_text())
    first = load_model(str(path))
    readings = [v.name for v in first.variants] or [None]
    entries = {v.get("variant"): v for v in recorded["variants"]}
    assert set(entries) == set(readings)
    for variant in readings:
        entry = entries[variant]
        claims = load_properties(default_properties_path(str(path)), load_model(str(path), variant=variant))
        assert set(entry["claims"]) == {c.id for c in claims}, variant
        for c in claims:        # no expected verdict: it must not be violated
            allowed = {c.expected} if c.expected else {"HOLDS", "PROVED"}
            assert entry["claims"][c.id] in allowed, (variant, c.id)
