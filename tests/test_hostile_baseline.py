"""A baseline is untrusted input (issue 29.1): whatever JSON a pull request puts in
baselines/, reading and comparing it ends in a usage error (exit 2) or a comparison, never
another exception, and the comparison's text holds no control character. Hypothesis replaces
one value of a real baseline (at any depth) with an arbitrary JSON value."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from verifier import baseline
from verifier.diagnostics import UsageError
from verifier.result import ModelRun
from verifier.runner import RunOptions, check_model

GATE = Path(__file__).parent / "fixtures" / "gate"
RUNS: list[ModelRun] = check_model(str(GATE / "gate.yaml"), RunOptions(
    engine="explicit", properties=str(GATE / "gate_props.yaml"), consistency=False))
RECORDED = baseline.record(RUNS, config={"engine": "explicit", "max-depth": None})

TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["HOLDS", "VIOLATED", "gate", "limit-at-draw", "\x1b[2J", "\x1b]0;t\x07", "\u202e"])
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                    max_leaves=12)


def places(doc: Any, path: tuple = ()) -> list[tuple]:
    """Every place in `doc`: the key paths of its values."""
    out = [path]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += places(value, (*path, key))
    elif isinstance(doc, list):
        for n, value in enumerate(doc):
            out += places(value, (*path, n))
    return out


def replaced(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    copy = json.loads(json.dumps(doc))
    at = copy
    for step in path[:-1]:
        at = at[step]
    at[path[-1]] = value
    return copy


@settings(max_examples=examples(300), deadline=None)
@given(place=st.sampled_from(places(RECORDED)), value=JSON)
def test_any_value_anywhere_is_a_usage_error_or_a_comparison(tmp_path_factory, place, value):
    path = tmp_path_factory.mktemp("baseline") / "gate.json"
    path.write_text(json.dumps(replaced(RECORDED, place, value)), encoding="utf-8")
    try:
        doc = baseline.load(path)
        comparison = baseline.compare(RUNS, doc, {"engine": "explicit", "max-depth": None})
    except UsageError as err:
        assert "\x1b" not in err.render()
        return
    text = comparison.text()
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert comparison.exit_code in (0, 1, 3)


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deep_nesting_is_a_usage_error(tmp_path, depth):
    path = tmp_path / "gate.json"
    path.write_text('{"turnproof_baseline": 1, "variants": ' + "[" * depth + "]" * depth + "}", encoding="utf-8")
    with pytest.raises(UsageError):
        baseline.compare(RUNS, baseline.load(path))
