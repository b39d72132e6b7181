"""Traces in the page's words: a bounded sequence reads as one list (a pop as a shorter list), its
length variable and the `until:` companions are left out; the trace itself is unchanged."""
from __future__ import annotations

from pathlib import Path

from verifier.report import trace_view
from verifier.runner import RunOptions, check_model

FIXTURES = Path(__file__).parent / "fixtures" / "lang"


def _witness(tmp_path: Path, model: str, reachable: str):
    props = tmp_path / "claims.yaml"
    props.write_text(f'claims:\n  - id: seen\n    says: "it happens"\n    reachable: "{reachable}"\n', encoding="utf-8")
    (run,) = check_model(str(FIXTURES / model), RunOptions(engine="explicit", properties=str(props),
                                                           consistency=False))
    (result,) = run.results
    assert result.trace is not None
    return result.trace


def test_a_push_and_a_pop_read_as_lists(tmp_path):
    trace = _witness(tmp_path, "stack.yaml", "resolved == 1")
    start = trace_view.start_text(trace)
    assert "stack=[]" in start and "ctrl=[]" in start and "stack_len" not in start
    changes = [row.changes_text() for row in trace_view.rows(trace)]
    assert not any("_len" in c or "stack[" in c for c in changes)
    assert any("stack: []→[" in c for c in changes)                 # the push
    assert changes[-1].startswith("stack: [") and "→[]" in changes[-1]     # the pop: back to the empty list
    assert any(name == "stack_len" for name, _ in trace.initial)       # what replays keeps the helpers


def test_until_companions_are_left_out(tmp_path):
    trace = _witness(tmp_path, "until.yaml", "silenced")
    assert any("_until" in name for name, _ in trace.initial)
    assert "_until" not in trace_view.start_text(trace)
    assert not any("_until" in row.changes_text() for row in trace_view.rows(trace))
    assert any("silenced: false→true" in row.changes_text() for row in trace_view.rows(trace))
