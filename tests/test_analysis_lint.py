"""`turnproof lint`: the analyses alone, text and JSON, exit codes."""
from __future__ import annotations

import json
import re
from pathlib import Path

from test_analysis_support import fixture

from verifier.cli import main


def test_new_finding_fails(capsys):
    assert main(["lint", fixture("conflict_yes"), "-q"]) == 1
    out = capsys.readouterr().out
    assert "Combat" in out and "Discard" in out and "attack|defend" in out
    assert "2 findings, 2 unacknowledged" in out


def test_acknowledged_findings_pass(capsys):
    assert main(["lint", fixture("gap_ack"), "-q"]) == 0
    assert "acknowledged: the hand limit is card-specific" in capsys.readouterr().out



def test_acknowledged_findings_are_a_line_each_unless_all_traces_are_asked(capsys):
    """`lint models/alpha_clash.yaml` printed 931 lines for nine findings, all acknowledged: each in a
    table, then again with its evidence and its trace. Now an acknowledged finding is one line, as
    `check` keeps quiet about what is as expected; --traces all prints them in full, none without traces."""
    assert main(["lint", fixture("gap_ack"), "-q"]) == 0
    out = capsys.readouterr().out
    assert "gap hand|draw: acknowledged: the hand limit" in out and "established by" not in out
    assert "(initial state)" not in out and "--traces all shows the acknowledged ones in full" in out
    assert main(["lint", fixture("gap_ack"), "-q", "--traces", "all"]) == 0
    full = capsys.readouterr().out
    assert full.count("established by") == 2 and "(initial state)" in full
    assert main(["lint", fixture("gap_ack"), "-q", "--traces", "none"]) == 0
    bare = capsys.readouterr().out
    assert bare.count("established by") == 2 and "(initial state)" not in bare
    assert main(["lint", fixture("conflict_yes"), "-q"]) == 1          # new findings: in full by default
    assert capsys.readouterr().out.count("established by") == 2


def test_clean_model_passes(capsys):
    assert main(["lint", fixture("conflict_no"), "-q"]) == 0
    assert "No consistency findings" in capsys.readouterr().out


def test_json_to_a_file(tmp_path):
    out = tmp_path / "lint.json"
    assert main(["lint", fixture("order_yes"), "-q", "--format", "json", "--output", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert doc["results"] == []
    (f,) = doc["findings"]
    assert f["kind"] == "order-dependence" and f["subject"] == "double|add_one" and len(f["traces"]) == 2


def test_parameters_and_variant(capsys):
    assert main(["lint", fixture("order_unreached"), "-q", "--param", "N=0"]) == 0
    assert main(["lint", fixture("variants_yes"), "-q", "--variant", "strict"]) == 1
    out = capsys.readouterr().out
    assert "variant-difference" not in out and "inc|reset" in out


def test_model_error_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: bad\nvariables:\n  x: {type: 0..3, init: 5}\nactions: []\nfoo: 1\n")
    assert main(["lint", str(bad), "-q"]) == 2


def test_a_claim_file_given_with_p_is_looked_at_for_vacuous_claims(tmp_path, capsys):
    """`lint -p FILE` warns about the vacuous claims of a claim file that is not properties/<model>.yaml
    (a model and its claims side by side); a file given so that does not load is an error (exit 2)."""
    props = tmp_path / "claims.yaml"
    props.write_text('claims:\n  - id: never-triggered\n    says: "a hand of five means nothing"\n'
                     '    invariant: "hand == 5 -> attacked"\n', encoding="utf-8")
    assert main(["lint", fixture("conflict_no"), "-q", "-p", str(props)]) == 0
    assert "never-triggered" in capsys.readouterr().out
    props.write_text('claims:\n  - id: bad\n    says: x\n    invariant: "nope"\n', encoding="utf-8")
    assert main(["lint", fixture("conflict_no"), "-q", "-p", str(props)]) == 2
    assert "nope" in capsys.readouterr().err


def test_the_hint_for_a_new_finding_is_an_acknowledgement_that_works(tmp_path, capsys):
    """lint (and check) end a new finding with how to acknowledge it; pasted into the model with a
    reason, that entry acknowledges it."""
    assert main(["lint", fixture("order_yes"), "-q"]) == 1
    out = capsys.readouterr().out
    assert "\n1 finding, 1 unacknowledged" in out
    entries = re.search(r"\nacknowledge:\n((?:  - \{.*\}\n)+)", out)
    assert entries, out[-400:]
    model = tmp_path / "order_yes.yaml"
    model.write_text(Path(fixture("order_yes")).read_text(encoding="utf-8") + "acknowledge:\n"
                     + entries.group(1).replace('"..."', '"the order is the player\'s"'), encoding="utf-8")
    assert main(["lint", str(model), "-q"]) == 0
    assert "to acknowledge" not in capsys.readouterr().out
