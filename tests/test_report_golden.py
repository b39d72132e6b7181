"""Golden tests: the DOT and Markdown output for the report fixture model.

The pages are made from hand-made results (`golden_runs`: traces scripted on the reference
semantics), so they change only when the report layer does; the state-graph diagrams come
from the explicit engine's exploration, drawn in an order that does not depend on its search.
Regenerate with `pytest --regen-golden` (or TURNPROOF_REGEN_GOLDEN=1) and review the diff.
"""
from __future__ import annotations

import pytest
from report_helpers import MINI, ROOT, check_golden, golden_runs

from verifier.lang import load_model
from verifier.report import diagrams
from verifier.report.markdown import claim_markdown, game_markdown, index_markdown
from verifier.report.pages import build_game
from verifier.stategraph import explore_graph, game_graph


pytestmark = pytest.mark.xdist_group("test_report_golden")   # its module fixtures are built once, on one worker


@pytest.fixture(scope="module")
def runs():
    return golden_runs()


@pytest.fixture(scope="module")
def page(runs):
    return build_game(runs, state_graph=game_graph(runs[0].model))


def test_phase_diagram_dot():
    model = load_model(str(ROOT / MINI))
    check_golden("mini.phases.dot", diagrams.phase_dot(model, name="mini phases"))


def test_state_graph_quotient_dot():
    sg = explore_graph(load_model(str(ROOT / MINI)))
    assert sg.states > diagrams.WHOLE_GRAPH_LIMIT and sg.complete
    assert diagrams.state_graph_kind(sg) == "phase"
    check_golden("mini.states.dot", diagrams.state_dot(sg, name="mini states"))


def test_state_graph_whole_dot():
    sg = explore_graph(load_model(str(ROOT / MINI), {"DECK": 1}))
    assert sg.states <= diagrams.WHOLE_GRAPH_LIMIT
    assert diagrams.state_graph_kind(sg) == "whole"
    check_golden("mini-deck1.states.dot", diagrams.state_dot(sg, name="mini states"))


def test_trace_dot_highlights_the_lasso(page):
    view = page.claim_traces[("turn-ends", "strict")]
    assert view.trace.loop_start is not None
    check_golden("mini.trace.turn-ends.strict.dot", view.diagram.dot)


def test_game_markdown(page):
    check_golden("mini.md", game_markdown(page, timings=False))


def test_index_markdown(page):
    check_golden("index.md", index_markdown([page]))


def test_claim_page_markdown(page):
    check_golden("mini.claim.turn-ends.md", claim_markdown(page, "turn-ends", timings=False))
