"""Mermaid import (flowcharts -> model skeleton) and the export round trips (Mermaid, DOT, JSON)."""
from __future__ import annotations

import dataclasses
import itertools
import json
import math
import random
from pathlib import Path

import pytest
from report_helpers import FIXTURES, MINI, ROOT

from verifier.cli import main
from verifier.ir.evaluate import evaluate, layout
from verifier.ir.expr import state_vars
from verifier.ir.model import Action, ActionKind, VariantDecl
from verifier.lang import load_model
from verifier.lang.mermaid_import import MermaidError, claims_yaml, extract_blocks, import_mermaid, parse_flowchart, skeleton_yaml
from verifier.result import Verdict
from verifier.runner import RunOptions, check_model

FLOW = str(FIXTURES / "flow.md")
THREE_CHARTS = ROOT / "tests" / "fixtures" / "mermaid" / "three_charts.md"   # a turn chart and two procedures


def write_skeleton(tmp_path: Path, source: str, blocks=None) -> tuple[str, str]:
    sk = import_mermaid(source, blocks=blocks)
    model, claims = tmp_path / "skeleton.yaml", tmp_path / "claims.yaml"
    model.write_text(skeleton_yaml(sk), encoding="utf-8")
    claims.write_text(claims_yaml(sk), encoding="utf-8")
    return str(model), str(claims)


def results(path: str, claims: str, consistency: bool = False):
    runs = check_model(path, RunOptions(engine="explicit", properties=claims, consistency=consistency))
    return runs[0], {r.property.id: r for r in runs[0].results}


# ---------------------------------------------------------------- reading Mermaid

def test_parser_reads_shapes_labels_chains_and_subgraphs():
    blocks = extract_blocks(Path(FLOW).read_text(encoding="utf-8"), FLOW)
    assert [h for h, _, _ in blocks] == ["Turn", "Shopping (a procedure)"]      # the sequence diagram is skipped
    turn = parse_flowchart(blocks[0][2], FLOW, blocks[0][1], blocks[0][0])
    assert turn.nodes["Q"].decision and turn.nodes["Q"].label == "Attack?"
    assert turn.nodes["B1"].label == "Declare (one) attacker"                     # quotes and parentheses
    assert turn.nodes["B2"].label == "Roll: dice & compare"
    assert turn.nodes["H"].classes == {"optional"}
    edges = {(e.src, e.dst): (e.label, e.kind) for e in turn.edges}
    assert edges[("Q", "B")] == ("Yes", "normal") and edges[("Q", "E")] == ("No", "normal")
    assert edges[("M", "E")] == ("skip all", "dotted")
    assert ("S", "M") in edges                                                     # a statement ending in ';'
    sub = turn.subgraphs["subgraph1"]
    assert sub.title == "Battle Phase Steps" and sub.members == ["B1", "B2", "B3"]
    shop = parse_flowchart(blocks[1][2], FLOW, blocks[1][1])
    assert {(e.src, e.dst) for e in shop.edges} >= {("P3", "P5"), ("P4", "P5")}   # '&'
    assert shop.nodes["P1"].shape == "([" and shop.nodes["P3"].shape == "[["


@pytest.mark.parametrize("body, message, line", [
    ("sequenceDiagram\n  A->>B: hi", "starts with 'graph' or 'flowchart'", 10),
    ("graph TD\n  A --> B\n  subgraph S\n  C --> D", "has no 'end'", 12),
    ("graph TD\n  A[never closed --> B", "never closed", 11),
    ("graph TD\n\n  A --> B %% x ??", "cannot read", 12),
])
def test_parser_errors_name_the_line(body, message, line):
    with pytest.raises(MermaidError) as err:
        parse_flowchart(body, "chart.md", 10)
    text = err.value.render()
    assert message in text and f"chart.md:{line}:" in text


def test_a_file_without_flowcharts_is_an_error(tmp_path):
    empty = tmp_path / "notes.md"
    empty.write_text("# Notes\n\n```mermaid\nsequenceDiagram\n  A->>B: x\n```\n", encoding="utf-8")
    with pytest.raises(MermaidError, match="no Mermaid flowchart"):
        import_mermaid(str(empty))


# ---------------------------------------------------------------- the skeleton

def test_skeleton_structure_of_the_fixture():
    sk = import_mermaid(FLOW)
    assert [v for v, _, _ in sk.chart_values] == ["Turn", "Shopping"]
    assert sk.dead_ends == ["HelpScreen", "CloseShop"]
    assert sk.unreached == ["HelpScreen"]
    assert sk.loops == [["Main", "Attack", "Declare", "Roll", "Resolve"]]


def test_skeleton_loads_as_a_model(tmp_path):
    path, _ = write_skeleton(tmp_path, FLOW)
    model = load_model(path)
    phases = {p.name: p for p in model.phases}
    assert phases["Declare"].parent == phases["Roll"].parent == phases["Resolve"].parent == "Battle"
    assert phases["Upkeep"].rule.section == "Turn" and phases["Upkeep"].rule.text == "Upkeep Phase"
    assert not phases["HelpScreen"].mandatory
    edges = {(e.src, e.dst): e for e in model.phase_edges}
    assert edges[("Attack", "Declare")].label == "Yes" and edges[("Attack", "End")].label == "No"
    assert edges[("Resolve", "Main")]                                    # the subgraph leaves by its node's arrow
    assert edges[("End", "Flowchart")].turn_end                          # "Next player's turn"
    assert not any(e.src == "CloseShop" for e in model.phase_edges)      # a dead end stays one
    assert edges[("Upkeep", "HelpScreen")].guarded                       # reached through a never-taken arrow


def test_checking_the_skeleton_finds_dead_ends_and_loops(tmp_path):
    path, claims = write_skeleton(tmp_path, FLOW)
    _, by_id = results(path, claims)
    stuck = by_id["no-dead-end"]
    assert stuck.verdict is Verdict.VIOLATED
    assert dict(stuck.trace.steps[-1].changes)["phase"][1] == "CloseShop"
    loop = by_id["loop-1-can-end"]
    assert loop.verdict is Verdict.VIOLATED and loop.trace.loop_start is not None
    looped = {s.action for s in loop.trace.steps[loop.trace.loop_start:]}
    assert {"end Roll", "end Resolve"} <= looped
    assert by_id["turn-ends"].verdict is Verdict.VIOLATED


def test_consistency_analyses_report_the_dead_end_and_the_unconnected_node(tmp_path):
    path, claims = write_skeleton(tmp_path, FLOW)
    run, _ = results(path, claims, consistency=True)
    kinds = {(f.kind, f.subject) for f in run.findings}
    assert any(k == "deadlock" for k, _ in kinds), kinds
    assert any(k == "dead-rule" and "HelpScreen" in s for k, s in kinds), kinds


def test_one_block_needs_no_chart_variable(tmp_path):
    path, claims = write_skeleton(tmp_path, FLOW, blocks=[2])
    model = load_model(path)
    assert not any(v.name == "chart" for v in model.variables)
    assert model.leaf_phases()[0].name == "PickItem"
    _, by_id = results(path, claims)
    assert by_id["no-dead-end"].verdict is Verdict.VIOLATED
    assert "turn-ends" not in by_id                              # no arrow of this chart ends a turn


def test_three_flowcharts_with_subgraphs(tmp_path):
    sk = import_mermaid(str(THREE_CHARTS))
    assert len(sk.charts) == 3
    path, claims = write_skeleton(tmp_path, str(THREE_CHARTS))
    model = load_model(path)
    steps = {}
    for p in model.phases:
        steps.setdefault(p.parent, []).append(p.name)
    assert steps["Expansion"] == ["Ready", "Draw", "Resource"]
    assert steps["Clash"][0] == "C1Attack" and steps["Clash"][-2:] == ["C6Damage", "EndOfClash"]
    edges = {(e.src, e.dst): e for e in model.phase_edges}
    assert edges[("InitiateClash", "C1Attack")].label == "Yes"
    assert edges[("InitiateClash", "EndOfTurn")].label == "No"
    assert edges[("EndOfClash", "Primary")] and edges[("EndOfTurn", "Flowchart")].turn_end
    assert len(sk.dead_ends) == 4 and all(n.startswith(("ReverseAction", "ControllerPassesPriority"))
                                          for n in sk.dead_ends)
    assert any({"Primary", "C6Damage"} <= set(loop) for loop in sk.loops)
    _, by_id = results(path, claims)
    assert by_id["no-dead-end"].verdict is Verdict.VIOLATED
    lasso = by_id["loop-1-can-end"]
    assert lasso.verdict is Verdict.VIOLATED
    assert "end C6Damage" in {s.action for s in lasso.trace.steps[lasso.trace.loop_start:]}
    # the turn structure alone has no dead end, only the clash loop
    path1, claims1 = write_skeleton(tmp_path, str(THREE_CHARTS), blocks=[1])
    _, by_id = results(path1, claims1)
    assert by_id["no-dead-end"].verdict is Verdict.HOLDS
    assert by_id["turn-ends"].verdict is Verdict.VIOLATED


def test_import_cli(tmp_path, capsys):
    out, claims = tmp_path / "m.yaml", tmp_path / "c.yaml"
    assert main(["import-mermaid", FLOW, "-o", str(out), "--claims", str(claims), "--name", "tiny"]) == 0
    assert "dead ends: HelpScreen, CloseShop" in capsys.readouterr().err
    assert load_model(str(out)).name == "tiny" and "no-dead-end" in claims.read_text()
    bad = tmp_path / "bad.md"
    bad.write_text("```mermaid\ngraph TD\n  A --> ((B\n```\n", encoding="utf-8")
    assert main(["import-mermaid", str(bad), "-o", str(tmp_path / "x.yaml")]) == 2
    assert "bad.md:3" in capsys.readouterr().err and not (tmp_path / "x.yaml").exists()


# ---------------------------------------------------------------- export round trips

def _structure(model):
    return ([(p.name, p.parent, p.mandatory) for p in model.phases],
            {(e.src, e.dst, e.turn_end, e.label) for e in model.phase_edges})


def _round_trip_paths():
    paths = [MINI, "tests/fixtures/core/mini.yaml", "tests/fixtures/mermaid/declarations.yaml"] \
        + sorted(f"models/{p.name}" for p in (ROOT / "models").glob("*.yaml")) \
        + sorted(f"examples/models/{p.name}" for p in (ROOT / "examples" / "models").glob("*.yaml"))
    return [p for p in paths if (ROOT / p).is_file()]


def _conditions(model):
    """Each arrow's condition (parameters at their values) as a function of the values of the slots it
    reads (by slot name)."""
    model = model.instantiate()
    lay = layout(model)

    def holds(condition):
        return lambda values: evaluate(lay, condition, tuple(values.get(s.name, s.lo) for s in lay.slots))

    conditions = {e: model.fix_params(e.condition) for e in model.phase_edges}
    return {(e.src, e.dst, e.turn_end): (e.otherwise, holds(c), state_vars(c)) for e, c in conditions.items()}


def _valuations(model, names, count=400):
    """Every valuation of the slots of variables `names`, or `count` drawn at random where they are more."""
    slots = [s for s in layout(model.instantiate()).slots if s.var in names]
    if math.prod(s.hi - s.lo + 1 for s in slots) <= count:
        return [dict(zip((s.name for s in slots), values))
                for values in itertools.product(*(range(s.lo, s.hi + 1) for s in slots))]
    rng = random.Random(27)
    return [{s.name: rng.randint(s.lo, s.hi) for s in slots} for _ in range(count)]


def assert_same_transitions(back, model):
    """The same phases, arrows (labels, ends of turns, `otherwise:`) and conditions (equal on every
    valuation of what they read, or on 400 drawn ones)."""
    assert _structure(back) == _structure(model)
    theirs, ours = _conditions(back), _conditions(model)
    for key, (otherwise, holds, reads) in ours.items():
        assert theirs[key][0] == otherwise, key
        assert theirs[key][2] <= reads | {"active"}, key
        for values in _valuations(model, reads):
            assert bool(theirs[key][1](values)) == bool(holds(values)), (key, values)


# Every field of a declaration is compared unless it is named here with the reason it is not carried
# (a field added to the IR later is compared at once, or must be named here).
NOT_CARRIED = {
    "span": "where the declaration stands in its file",
    "default": "a parameter is declared at the value the chart is drawn at",
}
SKELETON_HAS_NONE = {
    Action: "a node lists its actions' names; the skeleton has no actions (the chart is the turn structure)",
    VariantDecl: "the chart is of one reading, named in its header comment; the skeleton has that reading's rules",
}


def _fields(declaration):
    """A declaration's fields (those compare=False included), but those in NOT_CARRIED."""
    return {f.name: getattr(declaration, f.name) for f in dataclasses.fields(declaration)
            if f.name not in NOT_CARRIED}


def assert_same_declarations(back, model):
    """The players, and each variable, enum and parameter the imported skeleton declares, declared as in
    the original in every field (a sequence as a sequence, initial values element by element, `null`
    where any value is allowed, a parameter's default the value in effect); every phase's citation and
    doc; no actions, no readings (SKELETON_HAS_NONE)."""
    declared = [v for v in back.variables if not v.implicit]
    assert {v.name for v in declared} >= {n for c in _conditions(model).values() for n in c[2]} - {"phase", "active"}
    for v in declared:
        assert _fields(v) == _fields(model.var(v.name)), v.name
    for p in back.params:
        ours = next(q for q in model.params if q.name == p.name)
        assert _fields(p) == _fields(ours) and p.default == model.params_dict[p.name], p.name
    assert {p.name: _fields(p) for p in back.phases} == {p.name: _fields(p) for p in model.phases}
    assert all(e.values == model.enum(e.name).values for e in back.enums if e.name != "Phase")
    assert back.players == model.players
    assert not [a for a in back.actions if a.kind is ActionKind.RULE] and not back.variants


def test_a_chart_whose_arrows_never_end_the_turn_says_how_to_draw_it(tmp_path, capsys):
    """An arrow labelled "next turn" back to the first phase is a loop within the turn: the import
    says that no arrow ends the turn and how to draw one; a thick arrow ends it, and the note goes."""
    chart = tmp_path / "turn.md"
    chart.write_text("```mermaid\nflowchart TD\n  Action --> Buy\n  Buy --> Cleanup\n"
                     "  Cleanup -->|next turn| Action\n```\n", encoding="utf-8")
    assert main(["import-mermaid", str(chart), "-o", str(tmp_path / "a.yaml")]) == 0
    assert "no arrow ends the turn" in capsys.readouterr().err
    chart.write_text(chart.read_text(encoding="utf-8").replace("Cleanup -->|", "Cleanup ==>|"), encoding="utf-8")
    assert main(["import-mermaid", str(chart), "-o", str(tmp_path / "b.yaml")]) == 0
    assert "no arrow ends the turn" not in capsys.readouterr().err
    assert "to: TURN_END" in (tmp_path / "b.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", _round_trip_paths())
def test_mermaid_export_imports_back_to_the_same_turn_structure(path, tmp_path):
    model = load_model(str(ROOT / path))
    mmd, back = tmp_path / "x.mmd", tmp_path / "back.yaml"
    assert main(["export", str(ROOT / path), "--to", "mermaid", "-o", str(mmd)]) == 0
    assert main(["import-mermaid", str(mmd), "-o", str(back), "-q"]) == 0
    assert_same_transitions(load_model(str(back)), model)
    assert_same_declarations(load_model(str(back)), model)


def test_a_reading_s_chart_names_its_reading(tmp_path):
    """The readings are not carried (SKELETON_HAS_NONE): the chart of one names it in its first comment."""
    out = tmp_path / "mini.mmd"
    assert main(["export", str(ROOT / MINI), "--to", "mermaid", "--variant", "loose", "-o", str(out)]) == 0
    assert out.read_text().splitlines()[1] == "    %% mini, reading loose: turn structure (exported by turnproof)"


def test_dot_export_reads_back(tmp_path):
    from report_helpers import dot_graph_items

    out = tmp_path / "mini.dot"
    assert main(["export", str(ROOT / MINI), "--to", "dot", "-o", str(out)]) == 0
    model = load_model(str(ROOT / MINI))
    nodes, edges = dot_graph_items(out.read_text())
    assert nodes == {p.name for p in model.leaf_phases()} | {"start"}
    assert edges == {(e.src, e.dst) for e in model.phase_edges} | {("start", model.leaf_phases()[0].name)}


def test_state_graph_dot_export(tmp_path):
    from report_helpers import dot_graph_items

    out = tmp_path / "states.dot"
    assert main(["export", str(ROOT / MINI), "--to", "dot", "--graph", "states", "--param", "DECK=1",
                 "-o", str(out)]) == 0
    nodes, _ = dot_graph_items(out.read_text())
    assert len([n for n in nodes if n.startswith("s")]) == 93        # the whole graph: every state


def test_json_export_round_trips(tmp_path):
    out = tmp_path / "mini.json"
    assert main(["export", str(ROOT / MINI), "--to", "json", "--variant", "loose", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    model = load_model(str(ROOT / MINI), variant="loose")
    assert doc["model"] == "mini" and doc["variant"] == "loose"
    assert [(p["name"], p["parent"], p["mandatory"]) for p in doc["phases"]] == _structure(model)[0]
    assert {(e["from"], e["to"], e["turn_end"], e["label"]) for e in doc["phase_edges"]} == _structure(model)[1]
    assert {a["name"] for a in doc["actions"]} == {a.name for a in model.actions}
    draw = next(a for a in doc["actions"] if a["name"] == "draw")
    assert draw["rule"] == {"section": "Draw", "text": "one card"} and draw["modality"] == "must"


def test_export_usage_errors(capsys):
    assert main(["export", str(ROOT / MINI), "--to", "mermaid", "--graph", "states"]) == 2
    assert "only available with --to dot" in capsys.readouterr().err


def test_names_mermaid_reserves_round_trip(tmp_path):
    """Phase names that are Mermaid keywords, or not capitalised, come back unchanged."""
    src = tmp_path / "lc.yaml"
    src.write_text("model: lc\nphases:\n  - name: upkeep\n  - name: end\n    mandatory: false\n"
                   "  - name: graph\nactions: []\n", encoding="utf-8")
    mmd, back = tmp_path / "lc.mmd", tmp_path / "back.yaml"
    assert main(["export", str(src), "--to", "mermaid", "-o", str(mmd)]) == 0
    assert "p_end[" in mmd.read_text()
    assert main(["import-mermaid", str(mmd), "-o", str(back), "-q"]) == 0
    assert _structure(load_model(str(back))) == _structure(load_model(str(src)))


@pytest.mark.parametrize("comment, message", [
    ("declare {not json", "not followed by a JSON object"),
    ("declare " + "[" * 100_000, "not followed by a JSON object"),
    ('declare {"variables": {"x: 1}\\nphases": {"type": "bool"}}}', "variables maps names to declarations"),
    ('declare {"variables": {"x": {"type": "bool", "do": "evil"}}}', "variables maps names to declarations"),
    ('declare {"players": true}', "players must be a number"),
    ('declare {"enums": {"E": ["a b"]}}', "enums maps names to lists of names"),
    ('declare {"params": {"N": {"min": 1}}}', "params maps names to objects of a whole-number default"),
    ('declare {"params": {"N": {"default": "1\\nx: 2"}}}', "params maps names to objects of a whole-number default"),
    ('declare {"phases": {"A": {"rule": {"section": 1}}}}', "phases maps names to objects of only a rule"),
    ('declare {"phases": {"A": {"doc": "d", "next": []}}}', "phases maps names to objects of only a rule"),
    ("when A -> B: x", "cannot read"),
    ("otherwise A --> B: x", "names an arrow"),
])
def test_round_trip_comments_are_checked(comment, message, tmp_path, capsys):
    """The `%% turnproof` comments are untrusted input: one that is not as the export writes it is a
    positioned error, nothing is written."""
    chart = tmp_path / "chart.mmd"
    chart.write_text(f"flowchart TD\n    A --> B\n    %% turnproof {comment}\n", encoding="utf-8")
    assert main(["import-mermaid", str(chart), "-o", str(tmp_path / "x.yaml")]) == 2
    err = capsys.readouterr().err
    assert message in err and "chart.mmd:3" in err and not (tmp_path / "x.yaml").exists()


def test_round_trip_conditions_are_quoted(tmp_path):
    """A condition is one YAML scalar in the skeleton, whatever it holds."""
    chart = tmp_path / "chart.mmd"
    chart.write_text('flowchart TD\n    A --> B\n    %% turnproof when A --> B: x", evil: "1\n', encoding="utf-8")
    text = skeleton_yaml(import_mermaid(str(chart)))
    assert '{to: B, when: "x\\", evil: \\"1"}' in text


def test_a_once_group_reads_as_one_of_its_actions(tmp_path):
    """Love Letter's four card actions are one `must: {once: play}` group: each alone is a `may` action,
    so the Play node reads `one of guard / baron / handmaid / princess` (one is due each visit), not
    four `may`s, in the Mermaid export and the DOT diagram (the report's phase table says it the same way);
    the JSON export gives each action's group."""
    from verifier.report.diagrams import phase_dot
    from verifier.report.mermaid import phase_mermaid

    model = load_model(str(ROOT / "examples" / "models" / "love_letter.yaml"))
    group = "one of guard / baron / handmaid / princess"
    assert f'Play["Play<br/>{group}"]' in phase_mermaid(model)
    assert group in phase_dot(model) and "may guard" not in phase_dot(model)
    out = tmp_path / "love_letter.json"
    assert main(["export", str(ROOT / "examples" / "models" / "love_letter.yaml"), "--to", "json", "-o", str(out)]) == 0
    groups = {a["name"]: a["once_group"] for a in json.loads(out.read_text())["actions"]}
    assert groups["baron"] == groups["princess"] == "play" and groups["draw"] is None
