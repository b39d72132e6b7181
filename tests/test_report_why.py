"""A claim's `why` follows the terminal's rule in every format: shown only under the readings
where the claim's violation is expected (`report.explain.shown_why`)."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from verifier.cli import main
from verifier.report.findings_md import findings_markdown
from verifier.runner import RunOptions, check_model

MINI = str(Path(__file__).parent / "fixtures" / "core" / "mini.yaml")
CLAIM = """claims:
  - id: empty-hand
    says: "player 0 never holds a card"
    invariant: "hand[0] == 0"
    expected: {strict: HOLDS, loose: VIOLATED}
    why: "WHY-MARK"
"""
ARGS = ["--engine", "explicit", "--no-consistency", "-q"]


def _props(tmp_path: Path) -> str:
    props = tmp_path / "claims.yaml"
    props.write_text(CLAIM, encoding="utf-8")
    return str(props)


def test_junit_shows_why_only_in_the_reading_that_expects_the_violation(tmp_path):
    out = tmp_path / "out.xml"
    assert main(["check", MINI, "-p", _props(tmp_path), *ARGS, "-f", "junit", "-o", str(out)]) == 1
    suites = {s.get("name"): ET.tostring(s, encoding="unicode") for s in ET.parse(out).getroot()}
    assert "WHY-MARK" in suites["mini[loose]"]
    assert "WHY-MARK" not in suites["mini[strict]"]                   # there it fails, not a known flaw
    assert "empty-hand" in suites["mini[strict]"]


def test_sarif_shows_why_only_in_the_reading_that_expects_the_violation(tmp_path):
    out = tmp_path / "out.sarif"
    assert main(["check", MINI, "-p", _props(tmp_path), *ARGS, "-f", "sarif", "-o", str(out)]) == 1
    results = json.loads(out.read_text(encoding="utf-8"))["runs"][0]["results"]
    by_variant = {r["properties"]["variant"]: json.dumps(r) for r in results}
    assert "WHY-MARK" in by_variant["loose"]
    assert "WHY-MARK" not in by_variant["strict"]


def test_findings_md_shows_why_once(tmp_path):
    runs = check_model(MINI, RunOptions(engine="explicit", consistency=False, properties=_props(tmp_path)))
    text = findings_markdown([runs])
    assert text.count("WHY-MARK") == 1
