"""SARIF output: valid against the official SARIF 2.1.0 schema, results on the right lines,
traces as code flows whose locations are the model lines of each step's action."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from verifier.cli import main
from verifier.report.sarif import CLAIM_KINDS, FINDING_KINDS, artifact_uri, runs_sarif
from verifier.resources import Budget
from verifier.result import Finding, ModelRun
from verifier.runner import RunOptions, check_model

HERE = Path(__file__).parent
REPO = HERE.parent
GATE = HERE / "fixtures" / "gate"
MINI = HERE / "fixtures" / "core"
SCHEMA = json.loads((HERE / "schemas" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def errors(doc) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)]


def runs_of(model: str, props: Path = GATE / "gate_props.yaml", **kw) -> list[ModelRun]:
    return check_model(str(GATE / f"{model}.yaml") if "/" not in model else model,
                       RunOptions(engine="explicit", properties=str(props), consistency=False, **kw))


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def with_findings(runs: list[ModelRun]) -> list[ModelRun]:
    trace = next(r.trace for r in runs[0].results if r.trace is not None)
    found = (Finding("dead-rule", "discard", "Discard never happens", ("Discard: cards above the limit go",)),
             Finding("order-dependence", "play|discard", "Play and discard do not commute", traces=(trace, trace)),
             Finding("gap", "hand[0]", "Hand may overflow", acknowledged="the rules cap the hand elsewhere"),
             Finding("brand-new-kind", "nothing", "A kind the report does not know yet"))
    return [replace(runs[0], findings=found)] + list(runs[1:])


def test_the_schema_is_the_official_one():
    assert SCHEMA["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    assert SCHEMA["properties"]["version"]["enum"] == ["2.1.0"]
    jsonschema.Draft4Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("case", ["violated", "variants", "findings", "unknown", "passing"])
def test_output_is_valid(case):
    if case == "violated":
        doc = runs_sarif(runs_of("gate_limit"), root=str(REPO))
    elif case == "variants":
        doc = runs_sarif(runs_of(str(MINI / "mini.yaml"), MINI / "mini_props.yaml"), root=str(REPO))
    elif case == "findings":
        doc = runs_sarif(with_findings(runs_of("gate_limit")), root=str(REPO))
    elif case == "unknown":
        doc = runs_sarif(runs_of("gate", budget=Budget(max_states=1)), root=str(REPO))
    else:
        doc = runs_sarif(runs_of("gate"), root=str(REPO), include_passing=True)
    assert errors(doc) == []
    assert len(doc["runs"]) == 1


def test_the_schema_rejects_broken_logs():
    doc = runs_sarif(runs_of("gate_limit"), root=str(REPO))
    assert errors(doc) == []
    broken = json.loads(json.dumps(doc))
    del broken["runs"][0]["results"][0]["message"]
    assert errors(broken)
    broken = json.loads(json.dumps(doc))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    assert errors(broken)
    broken = json.loads(json.dumps(doc))
    broken["runs"][0]["results"][0]["codeFlows"][0]["threadFlows"][0]["locations"] = []
    assert errors(broken)


def test_rules_are_claim_and_finding_kinds():
    doc = runs_sarif(with_findings(runs_of("gate_limit")), root=str(REPO))
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert ids[:len(CLAIM_KINDS)] == [f"claim/{k}" for k in CLAIM_KINDS]
    assert set(ids) == {f"claim/{k}" for k in CLAIM_KINDS} | {f"finding/{k}" for k in FINDING_KINDS} \
        | {"finding/brand-new-kind"}
    for result in doc["runs"][0]["results"]:
        assert ids[result["ruleIndex"]] == result["ruleId"]


def test_a_violated_claim_sits_on_its_line_with_its_trace_as_a_code_flow():
    runs = runs_of("gate_limit")
    doc = runs_sarif(runs, root=str(REPO))
    (result,) = doc["runs"][0]["results"]                  # only the claim not as expected
    assert result["ruleId"] == "claim/invariant" and result["level"] == "error"
    assert "limit-at-draw" in result["message"]["text"] and "expected not VIOLATED" in result["message"]["text"]
    loc = result["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "tests/fixtures/gate/gate_props.yaml"
    assert loc["region"]["startLine"] == line_of(GATE / "gate_props.yaml", "id: limit-at-draw")
    trace = next(r.trace for r in runs[0].results if r.property.id == "limit-at-draw")
    (flow,) = result["codeFlows"]
    locations = flow["threadFlows"][0]["locations"]
    assert len(locations) == len(trace.steps) + 1                  # the initial state, then every step
    model = runs[0].model
    for item, step in zip(locations[1:], trace.steps):
        phys = item["location"]["physicalLocation"]
        assert phys["artifactLocation"]["uri"] == "tests/fixtures/gate/gate_limit.yaml"
        assert phys["region"]["startLine"] == model.action(step.action).span.line
        assert step.label in item["location"]["message"]["text"]
    draws = [i for i, s in enumerate(trace.steps, 1) if s.action == "draw"]
    assert draws and all(locations[i]["location"]["physicalLocation"]["region"]["startLine"]
                         == line_of(GATE / "gate_limit.yaml", "- name: draw") for i in draws)
    assert [item["executionOrder"] for item in locations] == list(range(len(locations)))


def test_known_flaws_and_acknowledged_findings_are_suppressed():
    doc = runs_sarif(runs_of(str(MINI / "mini.yaml"), MINI / "mini_props.yaml"), root=str(REPO))
    results = doc["runs"][0]["results"]
    assert results and all(r["level"] == "note" and r["suppressions"][0]["kind"] == "inSource" for r in results)
    assert {r["properties"]["claim"] for r in results} == {"hand-full-reachable", "hand-never-three"}
    doc = runs_sarif(with_findings(runs_of("gate")), root=str(REPO))
    by_rule = {r["ruleId"]: r for r in doc["runs"][0]["results"]}
    assert by_rule["finding/gap"]["suppressions"][0]["justification"] == "the rules cap the hand elsewhere"
    assert by_rule["finding/dead-rule"]["level"] == "warning" and "suppressions" not in by_rule["finding/dead-rule"]


def test_findings_sit_on_the_line_of_what_they_concern():
    runs = with_findings(runs_of("gate"))
    doc = runs_sarif(runs, root=str(REPO))
    by_rule = {r["ruleId"]: r for r in doc["runs"][0]["results"]}

    def line(rule: str) -> int:
        return by_rule[rule]["locations"][0]["physicalLocation"]["region"]["startLine"]

    assert line("finding/dead-rule") == line_of(GATE / "gate.yaml", "- name: discard")
    assert line("finding/order-dependence") == line_of(GATE / "gate.yaml", "- name: play")
    assert line("finding/gap") == line_of(GATE / "gate.yaml", "  hand: {type")
    assert len(by_rule["finding/order-dependence"]["codeFlows"]) == 2


def test_unknown_claims_are_warnings_and_passing_ones_optional():
    doc = runs_sarif(runs_of("gate", budget=Budget(max_states=1)), root=str(REPO))
    results = doc["runs"][0]["results"]
    assert results and all(r["level"] == "warning" and "UNKNOWN" in r["message"]["text"] for r in results)
    assert runs_sarif(runs_of("gate"), root=str(REPO))["runs"][0]["results"] == []
    passing = runs_sarif(runs_of("gate"), root=str(REPO), include_passing=True)["runs"][0]["results"]
    assert len(passing) == 4 and all(r["kind"] == "pass" and r["level"] == "none" for r in passing)


def test_uris_are_relative_below_the_root():
    assert artifact_uri(str(GATE / "gate.yaml"), str(REPO)) == "tests/fixtures/gate/gate.yaml"
    assert artifact_uri(str(GATE / "gate.yaml"), str(GATE / "elsewhere")).startswith("file:///")


def test_check_writes_sarif(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    out = tmp_path / "gate.sarif"
    code = main(["check", "tests/fixtures/gate/gate_limit.yaml", "-p", "tests/fixtures/gate/gate_props.yaml",
                 "--engine", "explicit", "--no-consistency", "-q", "-f", "sarif", "-o", str(out)])
    assert code == 1
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert errors(doc) == []
    assert doc["runs"][0]["automationDetails"]["id"] == "turnproof/gate/"
    assert str(REPO) not in out.read_text(encoding="utf-8")         # no machine paths in the log


def test_real_findings_are_valid_and_placed():
    runs = check_model(str(GATE / "gate_limit.yaml"),
                       RunOptions(engine="explicit", properties=str(GATE / "gate_props.yaml")))
    doc = runs_sarif(runs, root=str(REPO))
    assert errors(doc) == []
    dead = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "finding/dead-rule"]
    assert [d["properties"]["subject"] for d in dead] == ["discard"]
    assert dead[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == \
        line_of(GATE / "gate_limit.yaml", "- name: discard")
