"""reports/ holds the current reports of the shipped games: this test fails when a model or
claim file changed after the reports were generated, or a model has no page.

Regenerate with the README's main command: `turnproof report models/*.yaml -o reports`.
"""
from __future__ import annotations

import json
import os

import pytest

from report_helpers import ROOT
from verifier.report.site import MANIFEST, stale_games

REPORTS = ROOT / "reports"
REGENERATE = "regenerate them: turnproof report models/*.yaml -o reports (then commit reports/)"


def test_shipped_reports_are_current():
    manifest = REPORTS / MANIFEST
    if not manifest.is_file():
        message = f"reports/ holds no generated report; {REGENERATE}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message + " (this fails in CI)")
    data = json.loads(manifest.read_text(encoding="utf-8"))
    listed = {game["model"] for game in data["games"].values()}
    missing = sorted(f"models/{p.name}" for p in (ROOT / "models").glob("*.yaml") if f"models/{p.name}" not in listed)
    assert not missing, f"no report page for {', '.join(missing)}: {REGENERATE}"
    stale = stale_games(REPORTS, ROOT)
    assert not stale, f"the reports of {', '.join(stale)} are older than their model or claim file: {REGENERATE}"
    for slug in data["games"]:
        for ext in (".html", ".md"):
            assert (REPORTS / f"{slug}{ext}").is_file(), f"reports/{slug}{ext} is missing: {REGENERATE}"
