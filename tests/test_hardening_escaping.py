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


SIGNS = 'R&D <b>"x"</b> &lt; #35; $1 ~s~ *e*'        # a label of the signs a designer may write (`labels.py`)


@pytest.fixture(scope="module")
def signs_model(tmp_path_factory):
    """The gate model with `hand` labelled SIGNS and read by an arrow's condition (so diagrams say it)."""
    model = MODEL.replace("hand: {type: 0..3, init: 0}", f"hand: {{type: 0..3, init: 0, label: {json.dumps(SIGNS)}}}") \
        .replace('    rule: "Play: cards may be played"',
                 '    rule: "Play: cards may be played"\n    exit_when: "hand <= LIMIT"') \
        .replace("LIMIT: 2", "LIMIT: 3")       # a claim is violated: its trace says the label
    return _write(tmp_path_factory.mktemp("signs"), model)


def test_a_label_of_signs_is_said_literally_in_json_and_the_terminal(signs_model, tmp_path, capsys):
    m, p = signs_model
    assert load_model(m).var("hand").label == SIGNS
    sarif = tmp_path / "out.sarif"
    main(["check", m, "-p", p, "-q", "--engine", "explicit", "-f", "sarif", "-o", str(sarif)])
    doc = json.loads(sarif.read_text(encoding="utf-8"))
    assert any(SIGNS in r["message"]["text"] for run in doc["runs"] for r in run["results"])
    capsys.readouterr()
    main(["check", m, "-p", p, "--engine", "explicit", "--traces", "all"])
    assert SIGNS in capsys.readouterr().out


def test_a_label_of_signs_is_escaped_in_html_markdown_and_svg(signs_model, tmp_path):
    m, p = signs_model
    out = tmp_path / "rep"
    main(["report", m, "-p", p, "-o", str(out), "-q", "--no-gate", "--playouts", "0"])
    page = (out / "gate" / "index.html").read_text(encoding="utf-8")
    assert "deck=3, R&amp;D &lt;b&gt;&quot;x&quot;&lt;/b&gt; &amp;lt; #35; $1 ~s~ *e*=0" in page    # HTML text
    assert ">when: R&amp;D &lt;b&gt;&quot;x&quot;&lt;/b&gt; &amp;lt; #35; $1 ~s~</text>" in page   # inline SVG
    assert "<b>" not in page
    markdown = (out / "FINDINGS.md").read_text(encoding="utf-8") + (out / "gate" / "index.md").read_text(encoding="utf-8")
    assert 'R\\&D \\<b\\>"x"\\</b\\> \\&lt; #35; \\$1 \\~s\\~ \\*e\\*' in markdown


def test_a_label_of_signs_is_escaped_in_mermaid_and_dot_and_imports_back(signs_model, tmp_path):
    m, _ = signs_model
    text = phase_mermaid(load_model(m))
    assert "R#amp;D #lt;b#gt;#quot;x#quot;#lt;/b#gt; #amp;lt; #35;35; $1" in text
    assert not re.search(r'&(?!amp;)|<b>', text.split("%% turnproof")[0])
    mmd, back = tmp_path / "m.mmd", tmp_path / "back.yaml"
    mmd.write_text(text, encoding="utf-8")
    assert main(["import-mermaid", str(mmd), "-o", str(back), "-q"]) == 0
    assert load_model(str(back)).var("hand").label == SIGNS
    dot = tmp_path / "m.dot"
    assert main(["export", m, "--to", "dot", "-o", str(dot)]) == 0
    assert "R&amp;D <b>\\\"x\\\"</b> &amp;lt; #35;" in dot.read_text(encoding="utf-8")
