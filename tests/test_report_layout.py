"""Readable drawings and pages: a small state graph is drawn as labelled boxes (not numbered
circles), and a table wider than the page scrolls inside its frame instead of widening the page
(checked on the generated HTML, and in headless Chromium where one is installed)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from report_helpers import ROOT
from test_report_browser import BROWSER, Browser

from verifier.lang import load_model
from verifier.report import diagrams, html
from verifier.report.doc import Defs, Document, Para, Table, code
from verifier.stategraph import explore_graph

SMALL = ROOT / "tests" / "fixtures" / "core" / "mini.yaml"      # 10 states with DECK=1
WIDE = Document("wide", "wide", [Para("A page with one table far wider than any screen."),
                                 Table([f"column {i}" for i in range(12)],
                                       [[f"value_{i}_" + "x" * 40 for i in range(12)] for _ in range(3)])])
NARROW = 420                                                      # CSS pixels: a phone


def _small_graph():
    sg = explore_graph(load_model(str(SMALL), {"DECK": 1}))
    assert sg.states <= diagrams.SMALL_GRAPH_LIMIT and sg.complete
    return sg


def test_a_small_state_graph_is_drawn_as_labelled_boxes():
    sg = _small_graph()
    assert diagrams.state_graph_kind(sg) == "boxes"
    dot = diagrams.state_dot(sg, name="mini states")
    assert "shape=box" in dot and "shape=circle" not in dot and "doublecircle" not in dot
    labels = dict(re.findall(r'^\s*(s\d+) \[label="([^"]*)"', dot, re.M))
    assert len(labels) == sg.states
    for label in labels.values():                                  # the values that tell states apart
        assert "deck=[" in label and "hand=[" in label and "phase=" not in label   # the phase is the cluster
    assert len(set(labels.values())) == sg.states
    shown, cluster = set(), None                                   # (phase, box text): tells each state apart
    for line in dot.splitlines():
        if m := re.match(r'\s*subgraph "cluster_(\w+)"', line):
            cluster = m.group(1)
        elif m := re.match(r'\s*s\d+ \[label="s\d+\\n([^"]*)"', line):
            shown.add((cluster, m.group(1)))
    assert len(shown) == sg.states


def test_the_values_every_state_shares_are_said_once(tmp_path):
    path = tmp_path / "const.yaml"
    path.write_text(SMALL.read_text(encoding="utf-8").replace(
        "  drawn: {type: bool, init: false, reset: turn}\n",
        "  drawn: {type: bool, init: false, reset: turn}\n  colour: {type: 0..3, init: 2}\n"), encoding="utf-8")
    sg = explore_graph(load_model(str(path), {"DECK": 1}))
    dot = diagrams.state_dot(sg, name="x")
    assert re.search(r'graph \[label="in every state: colour=2', dot), dot[:400]
    assert not re.search(r's\d+ \[label="[^"]*colour', dot)


def test_a_larger_graph_keeps_numbered_circles():
    sg = explore_graph(load_model(str(ROOT / "tests" / "fixtures" / "report" / "mini.yaml"), {"DECK": 1}))
    assert diagrams.SMALL_GRAPH_LIMIT < sg.states <= diagrams.WHOLE_GRAPH_LIMIT
    assert diagrams.state_graph_kind(sg) == "whole" and "shape=circle" in diagrams.state_dot(sg)


def test_every_table_sits_in_a_scrolling_frame():
    page = html.render(WIDE)
    assert page.count("<table") == page.count('<div class="scroll"><table') == 1
    assert re.search(r"\.scroll \{[^}]*overflow-x: auto", page)


@pytest.mark.skipif(BROWSER is None, reason="no Chromium binary found (install the Debian package 'chromium'; "
                                            ".ci/run does) — the layout was not checked in a browser")
def test_wide_tables_scroll_and_the_page_does_not(tmp_path):
    wide = tmp_path / "wide.html"
    wide.write_text(html.render(WIDE), encoding="utf-8")
    b = Browser(BROWSER)
    try:
        b.call("Emulation.setDeviceMetricsOverride",
               {"width": NARROW, "height": 800, "deviceScaleFactor": 1, "mobile": False}, session=True)
        b.open(wide.resolve().as_uri())
        page, frame = b.evaluate("(() => { const d = document.documentElement, s = document.querySelector('.scroll');"
                                 " return [[d.scrollWidth, d.clientWidth], [s.scrollWidth, s.clientWidth]]; })()")
        assert page[0] <= page[1], f"the page is {page[0]} px wide in a {page[1]} px window"
        assert frame[0] > frame[1]                                 # the table is wider: its frame scrolls
    finally:
        b.close()


def _page_width_overflow(path: Path) -> tuple[int, int]:
    b = Browser(BROWSER)
    try:
        b.call("Emulation.setDeviceMetricsOverride",
               {"width": NARROW, "height": 800, "deviceScaleFactor": 1, "mobile": False}, session=True)
        b.open(path.resolve().as_uri())
        return tuple(b.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]"))
    finally:
        b.close()


@pytest.mark.skipif(BROWSER is None, reason="no Chromium binary found (install the Debian package 'chromium'; "
                                            ".ci/run does) — the layout was not checked in a browser")
def test_long_names_and_paths_wrap_on_a_narrow_screen(tmp_path):
    doc = Document("long", "long", [Para("path: properties/" + "a_very_long_claim_file_name" * 4 + ".yaml")])
    doc.add(Defs([("Model", [code("models/" + "x" * 120 + ".yaml")])]))
    path = tmp_path / "long.html"
    path.write_text(html.render(doc), encoding="utf-8")
    width, window = _page_width_overflow(path)
    assert width <= window, f"the page is {width} px wide in a {window} px window"
