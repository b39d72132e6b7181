"""Ordering patterns, termination and bounded response on tiny models with hand-computed answers."""
from __future__ import annotations

from pathlib import Path


from verifier.result import Verdict
from verifier.runner import RunOptions, check_model
from verifier.semantics import layout
from verifier.trace import Trace, replay

FIX = Path(__file__).parent / "fixtures" / "props"

EXPECTED = {  # claim id -> verdict, the same under both variants
    "no-reap-after-heal": Verdict.HOLDS, "heal-needs-reap": Verdict.VIOLATED,
    "one-heal-per-turn": Verdict.HOLDS, "reap-every-turn": Verdict.VIOLATED,
    "reap-answered": Verdict.VIOLATED, "healed-means-heal": Verdict.HOLDS,
    "turn-ends": Verdict.HOLDS, "game-ends": Verdict.HOLDS,
    "other-soon": Verdict.HOLDS, "other-in-three": Verdict.VIOLATED, "other-at-once": Verdict.VIOLATED,
}


def run(path: Path, props: Path):
    return check_model(str(path), RunOptions(properties=str(props), consistency=False, engine="explicit"))


def test_patterns_scopes_and_bounded_response():
    runs = run(FIX / "order.yaml", FIX / "order_props.yaml")
    assert [r.model.variant for r in runs] == ["strict", "loose"]
    for r in runs:
        lay = layout(r.model.instantiate())
        assert {x.property.id: x.verdict for x in r.results} == EXPECTED
        for x in r.results:
            if x.trace is not None:
                replay(lay, x.trace)   # monitor variables are stripped: it replays on the model itself
                assert not any(name.startswith("monitor.") for name, _ in x.trace.initial)
            if x.property.kind == "ordering":
                assert "monitor" in x.evidence


def test_shortest_counterexamples():
    (strict, _) = run(FIX / "order.yaml", FIX / "order_props.yaml")
    by_id = {x.property.id: x for x in strict.results}
    assert [s.action for s in by_id["heal-needs-reap"].trace.steps] == ["end Reap -> Heal", "heal"]
    assert [s.action for s in by_id["reap-every-turn"].trace.steps] == ["end Reap -> Other", "pass turn"]
    # within k: the response must be one of the k transitions after the trigger (pass turn)
    assert [s.action for s in by_id["other-at-once"].trace.steps] == ["end Reap -> Other", "pass turn", "reap"]
    assert [s.action for s in by_id["other-in-three"].trace.steps] == [
        "end Reap -> Other", "pass turn", "reap", "end Reap -> Heal", "heal"]


LOOPING = """
model: looping
players: 2
variables:
  lamp: {type: bool, init: false}
  rounds: {type: 0..1, init: 0}
end: "rounds == 1"
round_end: {rounds: rounds + 1}
progress: [rounds]
phases:
  - name: Main
actions:
  - name: toggle
    phase: Main
    do: {lamp: "not lamp"}
    rule: "Main: the lamp may be switched any number of times"
"""


def test_lasso_for_a_turn_that_need_not_end(tmp_path):
    model = tmp_path / "looping.yaml"
    model.write_text(LOOPING)
    props = tmp_path / "props.yaml"
    props.write_text("claims:\n"
                     "  - {id: turn-ends, says: every turn ends, terminates: turn}\n"
                     "  - {id: turn-ends-fair, says: every turn ends if passing is fair, terminates: turn,"
                     " fairness: [pass turn]}\n")
    (r,) = run(model, props)
    plain, fair = r.results
    assert plain.verdict is Verdict.VIOLATED and fair.verdict is Verdict.HOLDS
    trace = plain.trace
    assert trace.loop_start is not None
    assert "non-progress cycle" in plain.evidence["cycle"]
    lay = layout(r.model.instantiate())
    states = replay(lay, trace)
    assert states[-1] == states[trace.loop_start]
    loop = trace.steps[trace.loop_start:]
    replay(lay, Trace(trace.initial, trace.steps + loop + loop, trace.loop_start))   # stem, loop three times
    assert all(s.rule.startswith("Main") for s in loop)
