"""`turnproof lint --format junit|sarif`: the documents `check` writes, read back by parsing them
(the JUnit structure against the XSD-driven validator, SARIF against the 2.1.0 schema)."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from test_analysis_support import fixture
from test_gate_junit import junit_errors
from test_gate_sarif import errors as sarif_errors

from verifier.cli import main


def _lint(tmp_path, model: str, fmt: str, *extra: str) -> tuple[int, str]:
    out = tmp_path / f"lint.{fmt}"
    code = main(["lint", fixture(model), "-q", "--format", fmt, "-o", str(out), *extra])
    return code, out.read_text(encoding="utf-8")


def test_junit_one_failure_per_new_finding(tmp_path):
    code, text = _lint(tmp_path, "conflict_yes", "junit")
    assert code == 1
    assert junit_errors(text) == []
    suite = ET.fromstring(text).find("testsuite")
    failures = suite.findall("testcase/failure")
    assert suite.get("failures") == str(len(failures)) == "2"          # the two conflicts of the fixture
    assert {f.get("type") for f in failures} == {"conflict"}
    assert any("protected_hand" in f.text for f in failures)


def test_junit_acknowledged_findings_pass(tmp_path):
    code, text = _lint(tmp_path, "gap_ack", "junit")
    assert code == 0 and junit_errors(text) == []
    suite = ET.fromstring(text).find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "0"
    assert "acknowledged finding: gap" in suite.findtext("system-out")


def test_junit_analyses_cut_short_are_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr("verifier.analysis.beyond.BEYOND_UNITS", 0)   # nothing decided past the 2 states
    monkeypatch.setattr("verifier.analysis.beyond.WALK_RUNS", 0)
    code, text = _lint(tmp_path, "conflict_yes", "junit", "--max-states", "2")
    assert code == 1 and junit_errors(text) == []
    error = ET.fromstring(text).find("testsuite/testcase/error")
    assert error is not None and error.get("type") == "UNKNOWN" and "--max-states 2" in error.get("message")


def test_sarif_findings_on_their_lines(tmp_path):
    code, text = _lint(tmp_path, "conflict_yes", "sarif")
    assert code == 1
    doc = json.loads(text)
    assert sarif_errors(doc) == []
    results = doc["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["finding/conflict"] * 2
    lines = Path(fixture("conflict_yes")).read_text(encoding="utf-8").splitlines()
    for r in results:                                    # at the line of one of the actions it names
        line = lines[r["locations"][0]["physicalLocation"]["region"]["startLine"] - 1]
        assert any(name in line for name in r["properties"]["subject"].split("|")), (line, r["properties"])
        assert r["level"] == "warning" and r["codeFlows"]


def test_sarif_acknowledged_is_suppressed_and_cut_short_is_notified(tmp_path, monkeypatch):
    code, text = _lint(tmp_path, "gap_ack", "sarif")
    assert code == 0
    doc = json.loads(text)
    assert sarif_errors(doc) == []
    assert all(r["suppressions"][0]["justification"] == "the hand limit is card-specific"
               for r in doc["runs"][0]["results"])
    assert doc["runs"][0]["invocations"][0]["toolExecutionNotifications"] == []
    monkeypatch.setattr("verifier.analysis.beyond.BEYOND_UNITS", 0)   # nothing decided past the 2 states
    monkeypatch.setattr("verifier.analysis.beyond.WALK_RUNS", 0)
    code, text = _lint(tmp_path, "conflict_yes", "sarif", "--max-states", "2")
    notes = json.loads(text)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == 1 and "UNKNOWN" in notes[0]["message"]["text"]
