"""Guards, conditions and antecedents quoted to people read the model's display names (`label:`,
`values:`): `declared mode is defend`, not `mode == 1`, in every place that quotes one."""
from __future__ import annotations

import json
import re

import pytest
from shipped_runs import GAMES, model_path
from test_analysis_support import analyse, fixture, of_kind

from verifier.analysis import vacuity
from verifier.analysis.context import own_guard
from verifier.cli import main as cli_main
from verifier.ir.expr import Const, Index, Local, Op, Var, app, pretty
from verifier.ir.model import Model
from verifier.lang import load_model, load_properties
from verifier.report.phase_actions import edge_condition
from verifier.resources import Budget
from verifier.trace import Names, expr_words

WORDS = fixture("words")
CLAIMS = fixture("words_props")


def said(model: Model, op: Op, left, right) -> str:
    return pretty(app(op, left, right), None, Names.of(model))


def test_a_comparison_with_a_named_value_reads_the_names_it_allows():
    model = load_model(WORDS)
    mode, hand = Var("mode"), Var("hand")
    assert said(model, Op.EQ, mode, Const(1)) == "declared mode is defend"
    assert said(model, Op.EQ, Const(1), mode) == "declared mode is defend"          # mirrored
    assert said(model, Op.GT, mode, Const(0)) == "declared mode in {defend, pass}"
    assert said(model, Op.GT, Const(1), mode) == "declared mode is attack"           # 1 > mode
    assert said(model, Op.NE, mode, Const(2)) == "declared mode in {attack, defend}"
    # a comparison every value or no value meets, or one with a value out of the range, keeps its number
    assert said(model, Op.LE, mode, Const(2)) == "declared mode <= 2"
    assert said(model, Op.EQ, mode, Const(5)) == "declared mode == 5"
    # a variable with a label but no named values keeps its numbers; the model's names are untouched without words
    assert said(model, Op.GT, hand, Const(1)) == "cards in hand > 1"
    assert pretty(app(Op.EQ, mode, Const(1))) == "mode == 1"
    assert said(model, Op.EQ, Index("mode", Local("p")), Const(0)) == "declared mode[p] is attack"


def test_dead_rule_and_conflict_quote_the_display_names():
    found = analyse("words")
    dead = of_kind(found, "dead-rule")["counter"]
    assert "`declared mode is defend`" in dead.message and "mode == 1" not in dead.message
    assert dead.evidence["condition"] == "declared mode is defend"
    conflict = of_kind(found, "conflict")["discard|kept"]
    assert conflict.evidence["prohibition"] == "declared mode in {defend, pass}"


def test_a_vacuous_antecedent_reads_the_display_names():
    model = load_model(WORDS)
    (v,) = vacuity.vacuous_claims(model, load_properties(CLAIMS, model), Budget())
    assert (v.claim, v.text) == ("defence-costs", "declared mode is defend")


def test_a_diagram_arrow_carries_its_condition_in_display_names():
    model = load_model(WORDS)
    conditions = {edge_condition(model, e) for e in model.phase_edges}
    assert "when: declared mode is pass" in conditions


def test_findings_md_game_page_and_sarif_quote_no_model_numbers(tmp_path):
    out = tmp_path / "rep"
    assert cli_main(["report", WORDS, "-p", CLAIMS, "-o", str(out), "-q", "--no-gate", "--playouts", "0"]) == 0
    for page in (out / "FINDINGS.md", out / "words" / "index.md", out / "words" / "index.html"):
        text = page.read_text(encoding="utf-8")
        assert "declared mode is defend" in text, page.name
        assert "mode == 1" not in text and "mode &gt; 0" not in text and "mode > 0" not in text, page.name
    sarif = tmp_path / "out.sarif"
    cli_main(["check", WORDS, "-p", CLAIMS, "-q", "-f", "sarif", "-o", str(sarif)])
    texts = [r["message"]["text"] for run in json.loads(sarif.read_text())["runs"] for r in run["results"]]
    assert any("`declared mode is defend`" in t for t in texts)
    assert not any("mode == 1" in t for t in texts)


def bare_numbers(model: Model, text: str) -> list[str]:
    """The comparisons in `text` of a variable whose values are named (by its name or its label) with a number."""
    named = [n for v in model.variables if v.value_names for n in (v.name, v.label) if n]
    return [m.group(0) for n in named
            for m in re.finditer(rf"(?<!\w){re.escape(n)}(\[[^\]]*\])?\s*(==|!=|<=|>=|<|>)\s*-?\d", text)]


@pytest.mark.parametrize("game", GAMES)
def test_shipped_models_quote_no_named_variable_against_a_number(game):
    """Every guard a finding could quote (an action's own condition, a phase arrow's condition) of
    each reading of each shipped game."""
    first = load_model(model_path(game))
    for reading in [None] + [v.name for v in first.variants[1:]]:
        model = load_model(model_path(game), variant=reading).instantiate()
        quoted = [expr_words(model, own_guard(a, model)) for a in model.actions]
        quoted += [edge_condition(model, e) for e in model.phase_edges]
        assert not [b for q in quoted for b in bare_numbers(model, q)], (game, reading)
