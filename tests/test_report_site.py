"""The report folder: what `turnproof report` writes, atomic replacement, the manifest and
staleness, self-contained HTML, and the report layer's independence from z3."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from report_helpers import MINI, MINI_PROPS, ROOT, mini_runs, with_findings

from verifier.cli import main
from verifier.report import site as site_mod
from verifier.report.pages import build_game
from verifier.report.site import MANIFEST, stale_games, write_site
from verifier.stategraph import game_graph


pytestmark = pytest.mark.xdist_group("test_report_site")   # its module fixtures are built once, on one worker


@pytest.fixture(scope="module")
def page():
    runs = with_findings(mini_runs())
    return build_game(runs, state_graph=game_graph(runs[0].model))


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_folder_contents(page, tmp_path):
    out = tmp_path / "site"
    written = write_site([page], out)
    names = set(os.listdir(out))
    assert names == set(written)
    assert {"index.html", "index.md", "mini.html", "mini.md", "FINDINGS.md", MANIFEST,
            "mini.phases.svg", "mini.phases.dot", "mini.states.svg", "mini.states.dot"} <= names
    for svg in [n for n in names if n.endswith(".svg")]:
        assert n_dot(svg) in names                                   # every SVG has its DOT source beside it
    md = (out / "mini.md").read_text()
    for ref in re.findall(r"\]\(([^)#]+)\)", md):                    # every file a page links to exists
        if not ref.startswith("index"):
            assert ref in names, ref
    index = (out / "index.md").read_text()
    assert "[mini](mini.md)" in index and "(mini.md#claim-turn-ends)" in index
    assert "order-dependence fight|play" in index or "order-dependence fight\\|play" in index
    assert (out / "FINDINGS.md").read_text().startswith("# Findings")
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["games"]["mini"]["model"] == MINI
    assert set(manifest["games"]["mini"]["sources"]) == {MINI, MINI_PROPS}


def n_dot(svg: str) -> str:
    return svg[:-4] + ".dot"


def test_html_is_self_contained(page, tmp_path):
    out = tmp_path / "site"
    write_site([page], out)
    for name in ("index.html", "mini.html"):
        text = (out / name).read_text()
        assert "<script" not in text
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), "no network resources"
        assert "<link" not in text and "@import" not in text
        assert "<?xml" not in text and "<!DOCTYPE svg" not in text
    game = (out / "mini.html").read_text()
    assert game.count("<svg") == len(page.diagrams())
    ids = re.findall(r'\sid="([^"]+)"', game)
    assert len(ids) == len(set(ids)), "element ids are unique across the inlined diagrams"
    for v in ("PROVED", "HOLDS", "HOLDS_TO_DEPTH", "VIOLATED", "UNKNOWN"):
        assert f"v-{v}" in game                                       # the legend shows every verdict
    assert "acknowledged: kept to show an acknowledged finding" in game


def test_an_interrupted_write_leaves_the_previous_report(page, tmp_path, monkeypatch):
    out = tmp_path / "site"
    write_site([page], out)
    before = snapshot(out)

    calls = []

    def fail_midway(path):
        calls.append(path)
        if len(calls) == 5:
            raise OSError("disk full (simulated)")

    with pytest.raises(OSError, match="simulated"):
        write_site([page], out, on_file=fail_midway)
    assert snapshot(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["site"], "no temporary folder is left behind"

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(site_mod, "index_html", boom)               # interrupted while rendering
    with pytest.raises(KeyboardInterrupt):
        write_site([page], out)
    assert snapshot(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


def test_the_swap_replaces_stale_files_and_keeps_permissions(page, tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / MANIFEST).write_text(json.dumps({"generator": "turnproof report"}))
    (out / "old-game.html").write_text("stale")
    write_site([page], out)
    assert not (out / "old-game.html").exists()
    assert out.stat().st_mode & 0o755 == 0o755


def test_the_fallback_swap(page, tmp_path, monkeypatch):
    out = tmp_path / "site"
    write_site([page], out)
    (out / "extra.md").write_text("x")
    monkeypatch.setattr(site_mod, "_exchange", lambda a, b: False)    # no renameat2
    write_site([page], out)
    assert not (out / "extra.md").exists() and (out / "index.html").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


def test_refuses_to_replace_a_folder_it_did_not_write(page, tmp_path):
    from verifier.diagnostics import UsageError

    out = tmp_path / "docs"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="not a turnproof report folder"):
        write_site([page], out)
    assert (out / "notes.txt").read_text() == "mine"
    write_site([page], out, force=True)
    assert not (out / "notes.txt").exists()


def test_stale_games(tmp_path, monkeypatch):
    work = tmp_path / "repo"
    (work / "models").mkdir(parents=True)
    (work / "properties").mkdir()
    shutil.copy(ROOT / MINI, work / "models" / "mini.yaml")
    shutil.copy(ROOT / MINI_PROPS, work / "properties" / "mini.yaml")
    monkeypatch.chdir(work)
    assert main(["report", "models/mini.yaml", "-o", "reports", "--engine", "explicit", "--no-consistency",
                 "--quiet", "--no-graph", "--playouts", "0"]) == 0     # the manifest is what is read
    assert stale_games("reports") == []
    (work / "properties" / "mini.yaml").write_text((work / "properties" / "mini.yaml").read_text() + "\n# edited\n")
    assert stale_games("reports") == ["mini"]


def test_report_cli(tmp_path, capsys):
    out = tmp_path / "r"
    code = main(["report", str(ROOT / MINI), "-p", str(ROOT / MINI_PROPS), "-o", str(out), "--engine", "explicit",
                 "--no-consistency", "--graph-limit", "500"])
    assert code == 0
    assert "wrote" in capsys.readouterr().err
    md = (out / "mini.md").read_text()
    assert "Every reachable state" in md                             # 385 states <= 500: drawn whole
    assert not re.search(r"\d s \|", md)                             # no run times unless --timings
    assert main(["report", str(ROOT / MINI), "-p", str(ROOT / MINI_PROPS), "-o", str(out), "--engine", "explicit",
                 "--no-consistency", "--no-graph", "--playouts", "0", "--gate", "--quiet"]) == 0
    assert "Explored states" in (out / "mini.md").read_text()


def test_report_cli_errors_write_nothing(tmp_path, capsys):
    out = tmp_path / "r"
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: bad\nphases: 3\n")
    assert main(["report", str(ROOT / MINI), str(bad), "-o", str(out), "--quiet"]) == 2
    assert not out.exists()
    assert "bad.yaml:2" in capsys.readouterr().err
    assert main(["report", str(ROOT / MINI), str(ROOT / MINI), "-o", str(out), "-p", "x.yaml"]) == 2


def test_the_report_layer_never_imports_z3():
    code = ("import sys\n"
            "import verifier.report.pages, verifier.report.html, verifier.report.markdown, verifier.report.site\n"
            "import verifier.report.mermaid, verifier.report.model_json, verifier.cli.report, verifier.cli.export\n"
            "import verifier.lang.mermaid_import, verifier.cli.import_mermaid\n"
            "from verifier.stategraph import explore_graph\n"
            "from verifier.lang import load_model\n"
            f"explore_graph(load_model({str(ROOT / MINI)!r}))\n"
            "assert 'z3' not in sys.modules, 'z3 was imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
