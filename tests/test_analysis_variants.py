"""variant-difference: claims and reachable behaviours that depend on the reading."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_analysis_support import analyse, assert_replay, fixture, load_all, of_kind

from verifier.analysis import variants
from verifier.runner import RunOptions, check_model


def _runs(name):
    return check_model(fixture(name), RunOptions(properties=fixture("variants_props"), engine="explicit"))


def test_claims_and_behaviours_that_differ():
    runs = _runs("variants_yes")
    assert [r.model.variant for r in runs] == ["strict", "loose"]
    first, loose = runs
    claims = of_kind(first.findings, "variant-difference")
    assert set(claims) == {"at-most-two"}
    f = claims["at-most-two"]
    assert f.variant is None and f.evidence["verdicts"] == {"strict": "HOLDS", "loose": "VIOLATED"}
    assert "holds under the reading 'strict' but does not under the reading 'loose'" in f.message
    behaviour = of_kind(loose.findings, "variant-difference")
    assert set(behaviour) == {"loose|strict"}
    b = behaviour["loose|strict"]
    assert b.variant == "loose" and "x = 3" in b.message and "never allows" in b.message
    assert b.rules[0] == "Count: up to three"
    assert [s.action for s in b.traces[0].steps] == ["inc", "inc", "inc"]
    assert_replay([r.model for r in runs], [f for r in runs for f in r.findings])


def test_findings_common_to_every_reading_are_reported_once():
    runs = _runs("variants_yes")
    od = [f for r in runs for f in r.findings if f.kind == "order-dependence"]
    assert [(f.subject, f.variant) for f in od] == [("inc|reset", None)]


def test_equivalent_readings_do_not_differ():
    assert of_kind(analyse("variants_no"), "variant-difference") == {}
    runs = _runs("variants_no")
    assert not [f for r in runs for f in r.findings if f.kind == "variant-difference"]


def test_single_reading_has_no_variant_findings():
    models = load_all(fixture("variants_yes"))[:1]
    from verifier.analysis import consistency_findings
    from verifier.engines.base import Budget
    assert not [f for f in consistency_findings(models, [[]], Budget()) if f.kind == "variant-difference"]


def _nearest_by_loop(x: int, states: set[int], fields: list[tuple[int, int]]) -> int:
    """The scan `variants._nearest_packed` does once no state is one field away, state by state in
    the set's order (what it did before it counted in numpy)."""
    best, best_n = x, len(fields) + 1
    for y in states:
        n = sum(1 for sh, w in fields if (x ^ y) >> sh & ((1 << w) - 1))
        if n < best_n:
            best, best_n = y, n
            if n == 2:
                break
    return best


@st.composite
def _far_states(draw):
    """Fields (shift, width) in a word or past it, a state `x`, and states none of which is one field from it."""
    widths = draw(st.lists(st.integers(1, 3), min_size=2, max_size=5))
    gap = draw(st.sampled_from([0, 60]))                    # past 64 bits: the Python-int scan
    fields, sh = [], 0
    for w in widths:
        fields.append((sh, w))
        sh += w + gap
    value = st.builds(lambda parts: sum(v << s for v, (s, _w) in zip(parts, fields)),
                      st.tuples(*(st.integers(0, (1 << w) - 1) for _s, w in fields)))
    x = draw(value)
    apart = lambda y: sum(1 for s, w in fields if (x ^ y) >> s & ((1 << w) - 1))   # noqa: E731
    return x, {y for y in draw(st.lists(value, max_size=40)) if apart(y) >= 2}, fields


@settings(max_examples=200, deadline=None)
@given(_far_states())
def test_the_nearest_state_is_the_one_the_scan_state_by_state_finds(case):
    x, states, fields = case
    assert variants._nearest_packed(x, lambda y: y in states, lambda: states, fields) == \
        _nearest_by_loop(x, states, fields)


FREE = """\
model: free
players: 2
params:
  N: {default: 2, min: 1, max: 5}
variables:
  x: {type: 0..N, init: 0}
variants:
  a: {doc: "go while below N"}
  b: {doc: "go never"}
phases:
  - name: A
actions:
  - name: go
    phase: A
    when: {a: "x < N", b: "false"}
    do: {x: "x + 1"}
"""


def test_a_difference_found_with_a_parameter_left_free_replays_its_trace_where_it_was_found(tmp_path):
    """README's `check models/wtactics.yaml --param DRAW_PILE='*' --engine symbolic` ended, after 564 s of
    CPU, in an internal error (exit 4): a claim violated in one reading only gave a variant-difference
    whose trace (found at N=1) was replayed on the model with N free."""
    model, props = tmp_path / "free.yaml", tmp_path / "claims.yaml"
    model.write_text(FREE, encoding="utf-8")
    props.write_text('claims:\n  - id: stays\n    says: "x stays 0"\n    invariant: "x < 1"\n'
                     '    expected: {a: VIOLATED, b: HOLDS}\n    why: "go"\n', encoding="utf-8")
    runs = check_model(str(model), RunOptions(properties=str(props), engine="symbolic", params={"N": None}))
    (f,) = [f for f in runs[0].findings if f.kind == "variant-difference"]
    assert f.evidence["trace_at"] == {"N": 1} and "internal_error" not in f.evidence
    assert [s.action for s in f.traces[0].steps] == ["go"]


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 3), st.lists(st.integers(0, (1 << 190) - 1), max_size=30), st.integers(0, (1 << 190) - 1),
       st.lists(st.integers(0, (1 << 190) - 1), max_size=3))
def test_a_searchs_states_masked_in_numpy_make_the_set_the_states_one_by_one_make(words, states, mask, extra):
    """The same set, built in the same order (its iteration order picks the nearest state)."""
    from verifier.analysis.compact_states import CompiledStates
    from verifier.engines.words import as_rows

    cut = (1 << (64 * words)) - 1 if words > 1 else (1 << 63) - 1
    space = CompiledStates.__new__(CompiledStates)
    space.order, space.n = as_rows([x & cut for x in states], words), len(states)
    space.extra = [x & cut for x in extra]
    packed = [x & cut for x in states] + space.extra
    got, want = variants._masked_set(space, mask & cut), {x & mask & cut for x in packed}
    assert got == want and list(got) == list(want)
