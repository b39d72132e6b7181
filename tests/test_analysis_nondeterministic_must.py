"""nondeterministic-must: a mandatory step whose choice nobody is said to make."""
from __future__ import annotations

from test_analysis_support import analyse, fixture, of_kind

from verifier.lang import load_model
from verifier.semantics import layout
from verifier.trace import replay


def test_draw_one_or_two():
    found = of_kind(analyse("nondet_yes"), "nondeterministic-must")
    assert set(found) == {"draw"}
    f = found["draw"]
    assert f.evidence["options"] == [{"n": 1}, {"n": 2}]
    assert "between n = 1 or n = 2" in f.message and "(Draw)" in f.message
    lay = layout(load_model(fixture("nondet_yes")).instantiate())
    ends = [replay(lay, t)[-1] for t in f.traces]
    assert ends[0] != ends[1] and [t.steps[-1].choice for t in f.traces] == [(("n", 1),), (("n", 2),)]


def test_forced_or_irrelevant_choices_are_fine():
    assert of_kind(analyse("nondet_no"), "nondeterministic-must") == {}
