"""User text is escaped for every medium it lands in: terminal (rich markup, control
sequences), Markdown (FINDINGS.md, the diff comment), Mermaid, file names, git arguments."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.files import file_stem
from verifier.lang import load_model
from verifier.report.escaping import markdown_code, markdown_text, mermaid_text
from verifier.report.findings_md import findings_markdown
from verifier.report.mermaid import phase_mermaid
from verifier.runner import RunOptions, check_model

GATE = Path(__file__).parent / "fixtures" / "gate"
MODEL = (GATE / "gate.yaml").read_text(encoding="utf-8")
PROPS = (GATE / "gate_props.yaml").read_text(encoding="utf-8")
HOSTILE_RULE = 'Draw [/]: one [bold]card[/bold] <img src=x onerror=alert(1)> | `x` [link](javascript:alert(1))'


def _write(tmp_path: Path, model: str, props: str = PROPS) -> tuple[str, str]:
    (tmp_path / "m.yaml").write_text(model, encoding="utf-8")
    (tmp_path / "p.yaml").write_text(props, encoding="utf-8")
    return str(tmp_path / "m.yaml"), str(tmp_path / "p.yaml")


pytestmark = pytest.mark.xdist_group("test_hardening_escaping")   # its module fixtures are built once, on one worker


@pytest.fixture(scope="module")
def hostile_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    model = MODEL.replace('rule: "Draw: one card while the deck has cards"', f"rule: '{HOSTILE_RULE}'") \
        .replace("LIMIT: 2", "LIMIT: 3") \
        .replace("players: 1\n", "players: 1\nvariants:\n  \"a/b <i>x</i>\": {doc: \"<script>x</script>\"}\n"
                                  "  plain: {doc: the other reading}\n")
    props = PROPS.replace("  - id: limit-at-draw", "  - id: limit-at-draw-" + "y" * 300)
    m, p = _write(tmp, model, props)
    return m, p, check_model(m, RunOptions(properties=p, engine="explicit"))


def test_rich_markup_in_rule_text_is_printed_literally(hostile_runs, capsys):
    m, p, _ = hostile_runs
    code = main(["check", m, "-p", p, "-q", "--engine", "explicit"])
    out = capsys.readouterr()
    assert code == 1 and "Traceback" not in out.err
    flat = " ".join(out.out.split())
    assert "[/]" in flat and "[bold]card[/bold]" in flat


def test_findings_markdown_escapes_model_text(hostile_runs):
    _m, _p, runs = hostile_runs
    text = findings_markdown([runs])
    assert "\\<script\\>" in text and "a/b \\<i\\>x\\</i\\>" in text
    assert not re.search(r"(?<!\\)<(script|i>|img)", text)


def test_markdown_helpers():
    assert markdown_text("a\n# heading <b>x</b> | *y*") == "a # heading \\<b\\>x\\</b\\> \\| \\*y\\*"
    span = markdown_code("x ` y", in_table=False)
    assert span.startswith("``") and span.endswith("``") and "x ` y" in span
    assert "\n" not in markdown_code("a\nb")


def test_a_newline_in_the_model_name_injects_no_mermaid_statement(tmp_path):
    name = 'gate\nclick Draw href "javascript:alert(1)"\n'
    m, _ = _write(tmp_path, MODEL.replace("model: gate", "model: " + json.dumps(name)))
    text = phase_mermaid(load_model(m))
    assert not any(line.strip().startswith("click") for line in text.splitlines())
    assert "\n" not in mermaid_text("a\nb") and '"' not in mermaid_text('say "x"')


@pytest.mark.parametrize("raw", ["a/b", "../../etc/passwd", "x" * 500, ".hidden", "a b", "", "/"])
def test_file_stems_are_safe(raw):
    stem = file_stem(raw)
    assert "/" not in stem and not stem.startswith(".") and 0 < len(stem) <= 60
    assert file_stem("a/b") != file_stem("a-b")


def test_claim_ids_and_variant_names_become_safe_file_names(hostile_runs, tmp_path):
    m, p, _ = hostile_runs
    out = tmp_path / "site"
    code = main(["report", m, "-p", p, "-o", str(out), "-q", "--no-graph", "--engine", "explicit"])
    assert code == 0
    files = [f for f in out.rglob("*") if f.is_file()]
    assert all(f.parent in (out, *out.iterdir()) for f in files)      # the top, or a game's folder
    names = [f.name for f in files]
    assert all(len(n) < 120 and "/" not in n for n in names)
    assert any(n.startswith("trace.") for n in names) and any(n.startswith("claim.") for n in names)


@pytest.mark.parametrize("spec", ["git:--output=/tmp/pwned:models/gate.yaml", "git:-p:x.yaml"])
def test_diff_passes_no_option_to_git(spec, capsys, tmp_path):
    code = main(["diff", spec, str(GATE / "gate.yaml"), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "not a git revision" in err and not Path("/tmp/pwned").exists()


def test_diff_markdown_escapes_model_text(hostile_runs, tmp_path, capsys):
    m, p, _ = hostile_runs
    other = tmp_path / "other.yaml"
    other.write_text(Path(m).read_text().replace("LIMIT: 1", "LIMIT: 2"))
    main(["diff", m, str(other), "-p", p, "-f", "markdown", "-q", "--no-behaviours", "--engine", "explicit"])
    text = capsys.readouterr().out
    assert not re.search(r"(?<!\\)<(script|i>|img)", text)
