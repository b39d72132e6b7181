"""Strong fairness: `fairness: {strong: [...]}` rules out loops that keep passing a state where the
action is enabled without ever taking it (weak fairness only rules out those where it stays enabled)."""
from __future__ import annotations

import pytest
from test_lang_errors import where

from verifier.diagnostics import PropertyError
from verifier.engines.explicit import ExplicitEngine
from verifier.lang import load_model, load_properties
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

MODEL = """\
model: blink
variables:
  x: {type: bool, init: false}
  done: {type: bool, init: false}
end: "done"
actions:
  - {name: toggle, do: {x: "not x"}}
  - {name: finish, when: "x", do: {done: true}}
"""
IDLE = '  - {name: idle, when: "not x", do: {x: false}}\n'


def verdict(tmp_path, fairness: str, model_text: str = MODEL):
    model_path = tmp_path / "blink.yaml"
    model_path.write_text(model_text)
    props = tmp_path / "props.yaml"
    props.write_text(f"claims:\n  - id: ends\n    says: the game ends\n    terminates: game\n"
                     f"    fairness: {fairness}\n")
    model = load_model(str(model_path)).instantiate()
    result = ExplicitEngine().check(model, load_properties(str(props), model), Budget())[0]
    if result.trace is not None:
        replay(layout(model), result.trace)
    return result


def test_weak_fairness_does_not_exclude_a_loop_that_disables_the_action(tmp_path):
    result = verdict(tmp_path, "[finish]")
    assert result.verdict is Verdict.VIOLATED and result.trace.loop_start is not None


def test_strong_fairness_excludes_it(tmp_path):
    assert verdict(tmp_path, "{strong: [finish]}").verdict is Verdict.HOLDS
    assert verdict(tmp_path, "{weak: [toggle], strong: [finish]}").verdict is Verdict.HOLDS


def test_a_loop_that_avoids_the_enabling_states_is_still_found(tmp_path):
    result = verdict(tmp_path, "{strong: [finish]}", MODEL + IDLE)
    assert result.verdict is Verdict.VIOLATED
    loop = [s.action for s in result.trace.steps[result.trace.loop_start:]]
    assert loop == ["idle"]


CASES = [
    ("unknown fairness key", "{strnog: [finish]}", "unknown field 'strnog'", "strnog", "did you mean 'strong'"),
    ("strong not a list", "{strong: finish}", "fairness lists action names", "finish}", "strong: [pass_prio]"),
    ("unknown strong action", "{strong: [finsh]}", "unknown action 'finsh'", "finsh", "did you mean 'finish'"),
]


@pytest.mark.parametrize("what,fairness,message,needle,hint", CASES, ids=[c[0] for c in CASES])
def test_error(tmp_path, what, fairness, message, needle, hint):
    with pytest.raises(PropertyError) as info:
        verdict(tmp_path, fairness)
    error = next(d for d in info.value.diagnostics if message in d.message)
    assert str(error.span) == where(tmp_path / "props.yaml", needle)
    assert error.hint and hint in error.hint, error.hint
