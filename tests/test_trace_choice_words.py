"""Choices are written in the page's words: an enum's value names and true/false, in traces and in
the findings' sentences, while the trace keeps the numbers it replays with."""
from __future__ import annotations

from test_analysis_support import analyse, of_kind

from verifier.lang import load_model
from verifier.semantics import Layout
from verifier.trace import replay

MODEL = """model: gems
enums:
  Gem: [red, green]
variables:
  has_red: {type: bool, init: true}
  has_green: {type: bool, init: true}
  done: {type: bool, init: false, reset: turn}
phases:
  - name: Refine
    rule: "Step 1: a gem must be refined"
actions:
  - name: refine
    phase: Refine
    must: true
    choose: {g: Gem, keep: bool}
    chooser: unstated
    when: "not done and ((g == red and has_red) or (g == green and has_green))"
    do:
      has_red: "if g == red then keep else has_red"
      has_green: "if g == green then keep else has_green"
      done: true
    rule: "Step 1: one gem is refined"
"""


def test_enum_and_bool_choices_read_as_words(tmp_path):
    path = tmp_path / "gems.yaml"
    path.write_text(MODEL, encoding="utf-8")
    (found,) = of_kind(analyse(str(path)), "nondeterministic-must").values()
    assert "g = red, keep = false" in found.message and "g = 0" not in found.message
    step = found.traces[0].steps[-1]
    assert step.label.startswith("refine(g=") and "keep=" in step.label
    assert "=red" in step.label or "=green" in step.label
    assert all(isinstance(v, int) for _k, v in step.choice)        # what replays
    model = load_model(str(path)).instantiate()
    replay(Layout(model), found.traces[0])
