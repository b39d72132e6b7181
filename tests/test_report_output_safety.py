"""`report` never deletes or replaces what it did not write (issue #29): it writes into the output
folder, removes only files its own previous manifest lists with the content recorded there,
refuses a folder that holds the project or the report's inputs, and refuses a game folder named
as one of the report's own files (issue #28)."""
from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from report_helpers import MINI, MINI_PROPS, ROOT, mini_runs

from verifier.cli import main
from verifier.diagnostics import UsageError
from verifier.report.pages import build_game
from verifier.report.site import MANIFEST, TOP_FILES, check_names, write_site

pytestmark = pytest.mark.xdist_group("test_report_output_safety")   # its module fixture: built once, on one worker


@pytest.fixture(scope="module")
def page():
    return build_game(mini_runs())


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_files_put_there_by_hand_stay(page, tmp_path):
    out = tmp_path / "site"
    (out / "mini").mkdir(parents=True)
    (out / "notes.txt").write_text("mine")
    (out / "mini" / "notes.txt").write_text("mine too")
    write_site([page], out)
    write_site([page], out)                                          # a second run over its own report
    assert (out / "notes.txt").read_text() == "mine" and (out / "mini" / "notes.txt").read_text() == "mine too"
    assert (out / "mini" / "index.html").is_file()


def test_only_unchanged_files_of_the_previous_manifest_are_removed(page, tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "old-game").mkdir()
    files = {"old-game/index.html": "old page", "old.html": "old index", "edited.html": "as written"}
    for name, text in files.items():
        (out / name).write_text(text)
    (out / "edited.html").write_text("edited by hand since")
    (out / "unlisted.html").write_text("never in a manifest")
    (out / MANIFEST).write_text(json.dumps({"generator": "turnproof report",
                                            "files": {n: _digest(t) for n, t in files.items()}}))
    write_site([page], out)
    assert not (out / "old.html").exists() and not (out / "old-game").exists()
    assert (out / "edited.html").read_text() == "edited by hand since"
    assert (out / "unlisted.html").read_text() == "never in a manifest"


def test_a_planted_manifest_deletes_nothing(page, tmp_path):
    """A manifest naming files outside the folder, or in it without their content, removes nothing."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    out = tmp_path / "site"
    out.mkdir()
    (out / "model.yaml").write_text("model: x\n")
    (out / MANIFEST).write_text(json.dumps({
        "generator": "turnproof report",
        "files": {"../victim.txt": _digest("keep"), str(victim): _digest("keep"), "model.yaml": None,
                  "a/b/c.html": None}}))
    write_site([page], out)
    assert victim.read_text() == "keep" and (out / "model.yaml").read_text() == "model: x\n"


def test_a_file_of_the_same_name_not_written_by_turnproof_is_refused(page, tmp_path):
    out = tmp_path / "docs"
    out.mkdir()
    (out / "index.html").write_text("my own page")
    with pytest.raises(UsageError, match="not written by turnproof"):
        write_site([page], out)
    assert (out / "index.html").read_text() == "my own page"
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]    # nothing written
    write_site([page], out, force=True)                               # --force overwrites it
    assert (out / "index.html").read_text() != "my own page"


def test_a_foreign_index_is_refused_before_the_models_are_checked(tmp_path, monkeypatch, capsys):
    out = tmp_path / "docs"
    out.mkdir()
    (out / "index.html").write_text("my own page")
    monkeypatch.setattr("verifier.runner.check_model", lambda *a, **k: pytest.fail("the models were checked"))
    assert main(["report", str(ROOT / MINI), "-o", str(out), "-q"]) == 2
    assert "not written by turnproof" in capsys.readouterr().err
    assert (out / "index.html").read_text() == "my own page"


def test_a_link_in_the_way_is_refused(page, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "site"
    out.mkdir()
    (out / "mini").symlink_to(elsewhere)
    with pytest.raises(UsageError, match="in the way"):
        write_site([page], out, force=True)
    assert list(elsewhere.iterdir()) == []
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    with pytest.raises(UsageError, match="not a folder"):
        write_site([page], link)


def test_output_dir_models_with_a_planted_manifest_is_refused(tmp_path, monkeypatch, capsys):
    """The case of issue #29: `output-dir = "models"` and a planted models/manifest.json."""
    (tmp_path / "models").mkdir()
    (tmp_path / "properties").mkdir()
    shutil.copy(ROOT / MINI, tmp_path / "models" / "mini.yaml")
    shutil.copy(ROOT / MINI_PROPS, tmp_path / "properties" / "mini.yaml")
    (tmp_path / "models" / MANIFEST).write_text(json.dumps({"generator": "turnproof report"}))
    (tmp_path / "pyproject.toml").write_text('[tool.turnproof]\noutput-dir = "models"\n')
    monkeypatch.chdir(tmp_path)
    before = {p.name: p.read_bytes() for p in (tmp_path / "models").iterdir()}
    assert main(["report", "models/mini.yaml", "--quiet", "--no-consistency", "--no-graph", "--playouts", "0"]) == 2
    assert "holds models/mini.yaml, an input of this report" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in (tmp_path / "models").iterdir()} == before
    for folder in (".", str(tmp_path), "properties"):                  # the project, and the claims' folder
        assert main(["report", "models/mini.yaml", "-o", folder, "--quiet", "--no-consistency", "--no-graph",
                     "--playouts", "0"]) == 2
    assert not (tmp_path / "index.html").exists() and not (tmp_path / "properties" / "index.html").exists()


@pytest.mark.parametrize("name", [*TOP_FILES, "FINDINGS.MD", "Index.Html"])
def test_each_reserved_name_is_refused(name):
    with pytest.raises(UsageError, match="one of the report's own files"):
        check_names([(name, "models/x.yaml")])


def test_a_model_named_findings_gets_a_folder_of_its_own(page, tmp_path):
    """With a folder per game, `model: FINDINGS` or `model: index` no longer collides with a file."""
    out = tmp_path / "site"
    pages = [build_game(page.runs, slug="FINDINGS"), build_game(page.runs, slug="index")]
    write_site(pages, out)
    assert (out / "FINDINGS.md").read_text().startswith("# Findings")
    assert (out / "FINDINGS" / "index.html").is_file() and (out / "index" / "index.html").is_file()
    assert "Turn structures and their verification" in (out / "index.html").read_text()


def test_two_models_of_one_folder_name_are_refused():
    with pytest.raises(UsageError, match="both be written to the folder"):
        check_names([("Game", "models/a.yaml"), ("game", "models/b.yaml")])


def test_files_of_an_older_manifest_are_left_and_named(page, tmp_path):
    """A manifest of an older turnproof lists its files without their SHA-256: they may be
    overwritten, never deleted; those left in place are named."""
    out = tmp_path / "site"
    out.mkdir()
    for name in ("index.html", "mini.html", "mini.phases.svg"):
        (out / name).write_text("old")
    (out / MANIFEST).write_text(json.dumps({"generator": "turnproof report",
                                            "files": ["index.html", "mini.html", "mini.phases.svg"]}))
    left: list[str] = []
    write_site([page], out, left=left)
    assert (out / "index.html").read_text() != "old"                 # overwritten: a name of ours
    assert left == ["mini.html", "mini.phases.svg"] and (out / "mini.html").read_text() == "old"


def test_a_manifest_that_is_a_link_is_not_read(page, tmp_path):
    """A planted manifest.json linking to /dev/zero (git stores links) would never end: not ours."""
    out = tmp_path / "site"
    out.mkdir()
    (out / MANIFEST).symlink_to("/dev/zero")
    with pytest.raises(UsageError, match="in the way of the report"):
        write_site([page], out)
    assert (out / MANIFEST).is_symlink()
