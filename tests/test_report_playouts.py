"""`turnproof report`: the Playouts section (seeded statistics and SVG plots, the same files on
every run) and the vacuity notes of the claims."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.playout.play import PlayoutOptions, simulate
from verifier.lang import load_model
from verifier.report import plots

HERE = Path(__file__).parent / "fixtures" / "mutation"


pytestmark = pytest.mark.xdist_group("test_report_playouts")   # its module fixtures are built once, on one worker


@pytest.fixture(scope="module")
def game(tmp_path_factory) -> Path:
    """The tally game laid out as a project: models/tally.yaml and properties/tally.yaml."""
    root = tmp_path_factory.mktemp("project")
    (root / "models").mkdir()
    (root / "properties").mkdir()
    shutil.copy(HERE / "tally.yaml", root / "models" / "tally.yaml")
    shutil.copy(HERE / "tally_props.yaml", root / "properties" / "tally.yaml")
    return root / "models" / "tally.yaml"


@pytest.fixture(scope="module")
def reports(game, tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("out")
    first, second = out / "first", out / "second"
    for folder in (first, second):
        plots.forget_drawn()                # each run draws its charts anew: matplotlib's SVG is compared
        assert main(["report", str(game), "-o", str(folder), "-q"]) == 0
    return first, second


def test_the_playouts_section_is_written_the_same_each_time(reports):
    first, second = reports
    names = sorted(str(p.relative_to(first)) for p in first.rglob("*") if p.is_file())
    assert names == sorted(str(p.relative_to(second)) for p in second.rglob("*") if p.is_file())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    plots = [n for n in names if "/playouts." in n]
    assert "tally/playouts.game-lengths.svg" in plots and "tally/playouts.actions.svg" in plots
    assert all(n.endswith(".svg") for n in plots)             # no DOT source for a plot
    assert set(plots) <= set(json.loads((first / "manifest.json").read_text())["files"])


def test_the_game_page_shows_the_playouts(reports):
    page = (reports[0] / "tally" / "index.md").read_text()
    assert "## <a id=\"playouts\"></a>Playouts" in page and "[Playouts](#playouts)" in page
    assert "200 random playouts" in page and "seed 0" in page
    assert "| `gain` |" in page
    assert "([SVG](playouts.turn-lengths.svg))" in page
    html = (reports[0] / "tally" / "index.html").read_text()
    assert 'id="fig-playouts.game-lengths"' in html and 'loading="lazy" src="playouts.game-lengths.svg"' in html


def test_the_claims_that_hold_vacuously_are_noted(reports):
    for name in ("tally/index.md", "tally/index.html"):
        page = (reports[0] / name).read_text()
        assert "Vacuous:" in page and "full-purse-means-bonus" in page and "debt-answered" in page


def test_no_playouts_when_asked(game, tmp_path):
    assert main(["report", str(game), "-o", str(tmp_path / "r"), "-q", "--playouts", "0"]) == 0
    assert not list((tmp_path / "r").rglob("playouts.*"))
    assert "Playouts" not in (tmp_path / "r" / "tally" / "index.md").read_text()
    assert main(["report", str(game), "-o", str(tmp_path / "r"), "--playouts", "-1"]) == 2


def test_lint_warns_about_vacuous_claims(game, tmp_path, capsys):
    out = tmp_path / "lint.json"
    code = main(["lint", str(game), "-f", "json", "-o", str(out)])
    vacuous = {(v["claim"], v["part"]) for v in json.loads(out.read_text())["vacuous"]}
    assert vacuous == {("debt-answered", "trigger"), ("full-purse-means-bonus", "antecedent")}
    main(["lint", str(game)])
    text = capsys.readouterr().out
    assert "warning: claim full-purse-means-bonus: its antecedent" in text
    broken = tmp_path / "models"
    broken.mkdir()
    (tmp_path / "properties").mkdir()
    shutil.copy(game, broken / "tally.yaml")
    (tmp_path / "properties" / "tally.yaml").write_text("model: tally\nclaims: [{id: x, invariant: 'nope +'}]\n")
    assert main(["lint", str(broken / "tally.yaml")]) == code          # a warning never changes the exit code
    assert "vacuity not checked" in capsys.readouterr().out


def test_a_chart_is_drawn_once_for_the_same_statistics(game):
    """Charts are pure functions of their words and counts: the same statistics give the very same
    charts without drawing again (a report of the README's five identical stand-ins draws four, not
    twenty); other statistics are drawn anew."""
    model = load_model(str(game)).instantiate()
    one, other = (simulate(model, [], PlayoutOptions(games=games, seed=0)) for games in (20, 3))
    first = plots.simulation_plots(one, png=False)
    assert all(a is b for a, b in zip(first, plots.simulation_plots(one, png=False), strict=True))
    assert [p.svg for p in plots.simulation_plots(other, png=False)][0] != first[0].svg
