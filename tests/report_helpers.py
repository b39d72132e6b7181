"""Shared pieces of the report tests: the fixture runs and golden-file comparison."""
from __future__ import annotations

import difflib
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "report"
GOLDEN = ROOT / "tests" / "golden"
MINI = "tests/fixtures/report/mini.yaml"            # relative to ROOT: pages show paths as given
MINI_PROPS = "tests/fixtures/report/mini_props.yaml"


def regen() -> bool:
    return os.environ.get("TURNPROOF_REGEN_GOLDEN") == "1"


def normalize(text: str) -> str:
    """Leave out what legitimately changes between releases: the version number."""
    return re.sub(r"turnproof \d+\.\d+\.\d+\S*", "turnproof VERSION", text)


def check_golden(name: str, actual: str) -> None:
    """Compare with tests/golden/NAME; rewrite it only with --regen-golden / TURNPROOF_REGEN_GOLDEN=1."""
    path = GOLDEN / name
    actual = normalize(actual)
    if regen():
        path.parent.mkdir(parents=True, exist_ok=True)
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != actual:
            path.write_text(actual, encoding="utf-8")
            pytest.skip(f"golden file {name} rewritten (--regen-golden): review the diff")
        return
    if not path.exists():
        pytest.fail(f"golden file tests/golden/{name} is missing: run pytest --regen-golden and review it")
    expected = path.read_text(encoding="utf-8")
    if expected != actual:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                            f"golden/{name}", "actual", n=2))
        pytest.fail(f"output differs from tests/golden/{name} (if intended: pytest --regen-golden)\n{diff[:6000]}")


def mini_runs(consistency: bool = False, params: dict | None = None):
    """The fixture model checked with the explicit engine, from the repository root."""
    from verifier.runner import RunOptions, check_model

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return check_model(MINI, RunOptions(params=params or {}, engine="explicit", consistency=consistency,
                                             properties=MINI_PROPS))
    finally:
        os.chdir(cwd)


def with_findings(runs):
    """The runs with two hand-made findings: an acknowledged one without a trace, and a new one
    with a trace (taken from a claim's witness, so that it replays)."""
    from verifier.result import Finding

    witness = next(r.trace for run in runs for r in run.results if r.property.id == "fight-happens" and r.trace)
    acknowledged = Finding("dead-rule", "rage", "The action rage never fires: nobody is angry in Ready",
                           rules=("Start: an angry player calms down",), engine="explicit",
                           scope="for these parameters", acknowledged="kept to show an acknowledged finding")
    new = Finding("order-dependence", "fight|play", "fight and play give different hands when swapped",
                  rules=("Fight: once per turn", "Play: a card leaves the hand"), traces=(witness,),
                  evidence={"first": "fight then play", "second": "play then fight", "states_compared": 2},
                  engine="explicit", scope="for these parameters", variant="loose")
    out = [replace(runs[0], findings=(acknowledged,))]
    out += [replace(r, findings=(new,) if r.model.variant == "loose" else ()) for r in runs[1:]]
    return out


# ---------------------------------------------------------------- engine-independent runs for golden files

def scripted_trace(model, script, loop_start=None):
    """A trace of `model` built on the reference semantics from a script of moves:
    ("rule", action name), ("to", phase entered) for a phase change, ("turn",) for the turn
    passing. Independent of any engine's search order and of the names of implicit actions."""
    from verifier.ir.model import ActionKind
    from verifier.semantics import initial_states, layout, successors
    from verifier.trace import build_trace, replay

    concrete = model.instantiate()
    lay = layout(concrete)
    states, firings = [initial_states(lay)[0]], []
    for move in script:
        options = successors(lay, states[-1])
        if move[0] == "rule":
            pick = [t for t in options if t.action.name == move[1]]
        elif move[0] == "to":
            pick = [t for t in options if t.action.kind is ActionKind.ADVANCE and t.action.target_phase == move[1]]
        else:
            pick = [t for t in options if t.action.kind is ActionKind.TURN_END]
        assert pick, f"scripted move {move} is not enabled after {len(firings)} moves"
        states.append(pick[0].target)
        firings.append((pick[0].action, pick[0].choice))
    trace = build_trace(lay, states, firings, loop_start)
    replay(lay, trace)
    return trace


FIGHT = [("to", "Draw"), ("rule", "draw"), ("to", "Fight"), ("rule", "fight")]
LASSO = FIGHT + [("to", "Play"), ("to", "Fight")]
TWO_CARDS = [("to", "Draw"), ("rule", "draw"), ("to", "Discard"), ("turn",),
             ("to", "Draw"), ("rule", "draw"), ("to", "Discard"), ("turn",),
             ("to", "Draw"), ("rule", "draw")]

# (verdict, states, transitions, depth, reason, trace script, loop start) per claim and reading
GOLDEN_RESULTS = {
    "strict": {"hand-limit": ("HOLDS", 385, 753, 29, "", None, None),
               "no-stuck-player": ("HOLDS", 385, 753, 29, "", None, None),
               "two-cards": ("VIOLATED", 385, 753, 29, "unreachable in the complete state space", None, None),
               "fight-happens": ("HOLDS", 385, 753, 29, "a witness reaches it", FIGHT, None),
               "turn-ends": ("VIOLATED", 385, 753, 29, "the turn never ends", LASSO, 4),
               "one-fight-per-turn": ("HOLDS", 770, 1506, 29, "", None, None)},
    "loose": {"hand-limit": ("HOLDS", 189, 364, 27, "", None, None),
              "no-stuck-player": ("HOLDS", 189, 364, 27, "", None, None),
              "two-cards": ("HOLDS", 189, 364, 27, "a witness reaches it", TWO_CARDS, None),
              "fight-happens": ("HOLDS", 189, 364, 27, "a witness reaches it", FIGHT, None),
              "turn-ends": ("VIOLATED", 189, 364, 27, "the turn never ends", LASSO, 4),
              "one-fight-per-turn": ("UNKNOWN", 100, 180, 12, "--max-states 100 reached", None, None)},
}


def golden_runs():
    """The fixture's claims with fixed, hand-made results (every verdict kind but PROVED and
    HOLDS_TO_DEPTH, a witness, a lasso, an UNKNOWN) and the two findings of `with_findings`:
    the golden Markdown then depends on the report layer only, not on an engine's choices."""
    from verifier.lang import load_model, load_properties
    from verifier.result import CheckResult, ModelRun, Stats, Verdict

    runs = []
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for variant, table in GOLDEN_RESULTS.items():
            model = load_model(MINI, variant=variant)
            claims = {c.id: c for c in load_properties(MINI_PROPS, model)}
            results = []
            for cid, (v, states, transitions, depth, reason, script, loop) in table.items():
                trace = scripted_trace(model, script, loop) if script else None
                evidence = {"cycle": "the loop changes phase"} if loop is not None else {}
                results.append(CheckResult(claims[cid], Verdict(v), "explicit", depth,
                                           Stats(states, transitions, 0.01), trace, reason,
                                           model.param_values, variant, evidence))
            runs.append(ModelRun(model, MINI, tuple(results), (), 0.05, MINI_PROPS))
    finally:
        os.chdir(cwd)
    return with_findings(runs)


def dot_graph_items(dot: str) -> tuple[set[str], set[tuple[str, str]]]:
    """The node names and (src, dst) edges of DOT text, read back through pygraphviz."""
    import pygraphviz

    graph = pygraphviz.AGraph(string=dot)
    return set(graph.nodes()), {(str(a), str(b)) for a, b in graph.edges()}
