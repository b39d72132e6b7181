"""reports/ holds the current reports of the shipped games: this test fails when a model or
claim file changed after the reports were generated, or a model has no page, or the folder is
not laid out as `report` writes it now (an entry page, a folder per game, every page light).

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
PAGE_LIMIT = 300_000          # bytes: a page opens at once (diagrams other than the first two are files)


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
    for name in ("index.html", "index.md", "FINDINGS.md"):
        assert (REPORTS / name).is_file(), f"reports/{name} is missing: {REGENERATE}"
    for slug in data["games"]:
        for ext in (".html", ".md"):
            assert (REPORTS / slug / f"index{ext}").is_file(), f"reports/{slug}/index{ext} is missing: {REGENERATE}"
    assert isinstance(data["files"], dict), f"reports/ was written by an older turnproof: {REGENERATE}"
    listed_files = set(data["files"])
    on_disk = {str(p.relative_to(REPORTS)) for p in REPORTS.rglob("*") if p.is_file()} - {MANIFEST}
    assert on_disk == listed_files, (f"reports/ holds files its manifest does not list, or lacks some it lists: "
                                     f"{sorted(on_disk ^ listed_files)[:5]}: {REGENERATE}")
    heavy = sorted(f"{p.relative_to(REPORTS)} ({p.stat().st_size:,} bytes)" for p in REPORTS.rglob("*")
                   if p.suffix in (".html", ".md") and p.stat().st_size > PAGE_LIMIT)
    assert not heavy, f"pages over {PAGE_LIMIT:,} bytes: {', '.join(heavy)}"
