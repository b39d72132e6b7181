"""The report folder: what `turnproof report` writes, atomic replacement, the manifest and
staleness, self-contained HTML, and the report layer's independence from z3."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
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
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_folder_contents(page, tmp_path):
    out = tmp_path / "site"
    written = write_site([page], out)
    names = set(snapshot(out))
    assert names == set(written)
    assert set(os.listdir(out)) == {"index.html", "index.md", "FINDINGS.md", MANIFEST, "mini"}
    assert {"mini/index.html", "mini/index.md", "mini/phases.svg", "mini/phases.dot", "mini/states.svg",
            "mini/states.dot", "mini/claim.turn-ends.html", "mini/claim.turn-ends.md"} <= names
    for svg in [n for n in names if n.endswith(".svg") and ".playouts." not in n]:
        assert svg[:-4] + ".dot" in names                            # every SVG has its DOT source beside it
    for page_name in [n for n in names if n.endswith((".md", ".html"))]:   # every file a page links to exists
        text = (out / page_name).read_text()
        refs = re.findall(r"\]\(([^)#]+)", text) + re.findall(r'(?:href|src)="([^"#]+)', text)
        for ref in refs:
            assert (out / page_name).parent.joinpath(ref).resolve().is_file(), f"{page_name} links to {ref}"
    index = (out / "index.md").read_text()
    assert "[mini](mini/index.md)" in index and "(mini/claim.turn-ends.md)" in index
    assert "order-dependence fight|play" in index or "order-dependence fight\\|play" in index
    assert (out / "FINDINGS.md").read_text().startswith("# Findings")
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["games"]["mini"]["model"] == MINI
    assert set(manifest["games"]["mini"]["sources"]) == {MINI, MINI_PROPS}
    assert manifest["files"] == {n: hashlib.sha256((out / n).read_bytes()).hexdigest() for n in written
                                 if n != MANIFEST}


def test_a_finding_trace_has_a_page_of_its_own(page, tmp_path):
    runs = list(page.runs)
    last = runs[-1].findings[0]
    shorter = replace(last.traces[0], steps=last.traces[0].steps[:-1])      # not any claim's trace
    runs[-1] = replace(runs[-1], findings=(replace(last, traces=(shorter,)),))
    page = build_game(runs)
    [view] = page.trace_pages()
    out = tmp_path / "site"
    write_site([page], out)
    game = (out / "mini" / "index.md").read_text()
    assert f"]({view.page}.md)" in game
    trace_page = (out / "mini" / f"{view.page}.md").read_text()
    assert "[← mini](index.md#finding-1)" in trace_page and f"({view.page}.svg)" in trace_page


def test_pages_are_light_and_diagrams_load_on_demand(page, tmp_path):
    out = tmp_path / "site"
    write_site([page], out)
    for name in ("index.html", "mini/index.html", "mini/claim.turn-ends.html"):
        text = (out / name).read_text()
        assert "<script" not in text
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), "no network resources"
        assert "<link" not in text and "@import" not in text
        assert "<?xml" not in text and "<!DOCTYPE svg" not in text
    game = (out / "mini" / "index.html").read_text()
    assert game.count("<svg") == 2                                  # the phase diagram and the state graph
    claim = (out / "mini" / "claim.turn-ends.html").read_text()
    assert "<svg" not in claim
    assert '<img class="diagram" loading="lazy" src="trace.turn-ends.strict.svg"' in claim
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
    assert [p.name for p in tmp_path.iterdir()] == ["site"]
    assert not [p for p in out.iterdir() if p.name.startswith(".")], "no staging folder is left behind"

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(site_mod, "index_html", boom)               # interrupted while rendering
    with pytest.raises(KeyboardInterrupt):
        write_site([page], out)
    assert snapshot(out) == before
    assert sorted(p.name for p in out.iterdir()) == sorted(["index.html", "index.md", "FINDINGS.md", MANIFEST, "mini"])


def test_a_failed_first_write_leaves_no_folder(page, tmp_path):
    def fail(path):
        raise OSError("disk full (simulated)")

    with pytest.raises(OSError, match="simulated"):
        write_site([page], tmp_path / "new", on_file=fail)
    assert list(tmp_path.iterdir()) == []


def test_folders_of_killed_runs_are_removed(page, tmp_path):
    out = tmp_path / "site"
    dead = out / ".turnproof-staging-999999999-abc"
    alive = out / f".turnproof-staging-{os.getpid()}-def"
    for d in (dead, alive):
        d.mkdir(parents=True)
    write_site([page], out)
    assert not dead.exists() and alive.exists()


def test_permissions_follow_the_umask(page, tmp_path):
    old = os.umask(0o022)
    try:
        write_site([page], tmp_path / "site")
    finally:
        os.umask(old)
    for path in [tmp_path / "site", tmp_path / "site" / "mini"]:
        assert path.stat().st_mode & 0o777 == 0o755, path
    for path in [tmp_path / "site" / "index.html", tmp_path / "site" / "mini" / "index.md"]:
        assert path.stat().st_mode & 0o777 == 0o644, path


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
                 "--no-consistency", "--graph-limit", "500", "--playouts", "0"])   # playouts: test_report_playouts
    assert code == 0
    assert "wrote" in capsys.readouterr().err
    md = (out / "mini" / "index.md").read_text()
    assert "Every reachable state" in md                             # 385 states <= 500: drawn whole
    assert not re.search(r"\d s \|", (out / "mini" / "claim.turn-ends.md").read_text())   # no run times unless --timings
    assert main(["report", str(ROOT / MINI), "-p", str(ROOT / MINI_PROPS), "-o", str(out), "--engine", "explicit",
                 "--no-consistency", "--no-graph", "--playouts", "0", "--gate", "--quiet"]) == 0
    assert "Explored states" in (out / "mini" / "index.md").read_text()


def test_a_verdict_left_open_is_undecided_not_a_failure_on_the_pages(tmp_path):
    """A claim expecting VIOLATED that a budget leaves UNKNOWN (exit 3) is 'undecided' on the game's page
    and not counted 'not as expected' on it or on the index (it was NO and counted there)."""
    props = tmp_path / "claims.yaml"
    props.write_text('claims:\n  - id: hand-grows\n    says: "a hand never grows past one"\n'
                     '    invariant: "hand[0] <= 1"\n    expected: VIOLATED\n    why: "draw takes two"\n',
                     encoding="utf-8")
    out = tmp_path / "r"
    assert main(["report", str(ROOT / MINI), "-p", str(props), "-o", str(out), "--engine", "explicit", "--no-consistency",
                 "--max-states", "1", "--playouts", "0", "--no-graph", "--variant", "strict", "-q"]) == 3
    md = (out / "mini" / "index.md").read_text()
    assert "| *undecided* |" in md and "**NO**" not in md and "not as expected" not in md.split("## ")[0]
    assert "Every decided verdict is as expected" in md


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
