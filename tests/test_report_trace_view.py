"""Traces as people read them (`report.trace_view`): the start compact, changes only, each rule's
text once, repeated steps folded; checked on fixed examples and on generated traces."""
from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from verifier.cli import main
from verifier.report import trace_view
from verifier.report.junit import trace_text
from verifier.trace import Step, Trace

RULES = ("Draw: take a card", "Draw: take two", "Pass the turn", "")


def _step(action: str, player: int, rule: str, changes) -> Step:
    return Step(action, (), player, rule, tuple(changes))


def test_repeats_fold_and_rules_are_referred_to_by_section():
    trace = Trace((("phase", "Draw"), ("hand[0]", 2), ("hand[1]", 0), ("drew", False), ("seen[0]", True),
                   ("seen[1]", True)),
                  (_step("draw", 0, RULES[0], [("hand[0]", (2, 3))]),
                   _step("draw", 0, RULES[0], [("hand[0]", (3, 4))]),
                   _step("draw", 0, RULES[0], [("hand[0]", (4, 5))]),
                   _step("pass", 0, RULES[2], []),
                   _step("draw", 1, RULES[0], [("hand[1]", (0, 1))])))
    rows = trace_view.rows(trace)
    assert [(r.steps, r.move, r.rule, r.changes_text()) for r in rows] == [
        ("1–3", "draw × 3", RULES[0], "hand[0]: 2→5"),
        ("4", "pass", RULES[2], ""),
        ("5", "draw", "Draw (see step 1)", "hand[1]: 0→1")]
    assert trace_view.start_text(trace) == "phase=Draw, hand=[2,0], seen=true, drew=false"
    two = Trace((("a", False), ("b", False), ("c[0]", True), ("c[1]", True), ("d", True)))
    assert trace_view.start_text(two) == "true: c, d; false: a, b"
    grid = [(f"loc[{c}][{r}]", "deck" if r < 3 else "hand") for c in ("red", "blue") for r in (1, 2, 3)]
    assert trace_view.compact_items(grid + [("n[0][0]", 1), ("n[0][1]", 2), ("n[1][0]", 3), ("n[1][1]", 4)]) == \
        ["loc=[red:[1:deck,2:deck,3:hand],blue:[1:deck,2:deck,3:hand]]", "n=[[1,2],[3,4]]"]   # was loc=[red][1:deck,...
    text = trace_text(trace)
    assert text.count(RULES[0]) == 1 and "draw x 3" in text and "1-3" in text and text.isascii()


def test_a_loop_start_begins_a_row_and_a_round_trip_shows_the_way():
    flip = [_step("flip", 0, RULES[2], [("up", (False, True))]), _step("flip", 0, RULES[2], [("up", (True, False))])]
    trace = Trace((("up", False),), (*flip, *flip), loop_start=2)
    rows = trace_view.rows(trace)
    assert [(r.steps, r.loop_start, r.changes_text()) for r in rows] == [
        ("1–2", False, "up: false→…→false"), ("3–4", True, "up: false→…→false")]


def test_an_enum_index_keeps_its_labels():
    trace = Trace((("score[red]", 1), ("score[blue]", 2)))
    assert trace_view.start_items(trace) == ["score=[red:1,blue:2]"]


@st.composite
def traces(draw) -> tuple[Trace, list[dict[str, int]]]:
    names = ["a", "b[0]", "b[1]"]
    state = {n: draw(st.integers(0, 3)) for n in names}
    states, steps = [dict(state)], []
    for _ in range(draw(st.integers(0, 12))):
        changed = draw(st.lists(st.sampled_from(names), unique=True, max_size=2))
        new = {n: (state[n] + draw(st.integers(1, 3))) % 4 for n in changed}
        steps.append(_step(draw(st.sampled_from(["x", "y"])), draw(st.integers(0, 1)), draw(st.sampled_from(RULES)),
                           [(n, (state[n], new[n])) for n in names if n in new]))
        state.update(new)
        states.append(dict(state))
    loop = draw(st.none() | st.integers(0, len(steps) - 1)) if steps else None
    return Trace(tuple((n, states[0][n]) for n in names), tuple(steps), loop), states


TRACES = traces()


@given(TRACES)
def test_rows_cover_every_step_with_its_net_change(case):
    trace, states = case
    rows = trace_view.rows(trace)
    assert sum(r.count for r in rows) == len(trace.steps)
    first = 1
    for r in rows:
        assert r.first == first
        before, after = states[first - 1], states[first - 1 + r.count]
        assert r.changes == tuple((k, (before[k], after[k])) for k, _ in trace.steps[first - 1].changes)
        assert r.loop_start == (trace.loop_start == first - 1)
        if r.count > 1:
            assert len({(s.label, s.player, s.rule) for s in trace.steps[first - 1:first - 1 + r.count]}) == 1
        first += r.count
    assert trace.loop_start is None or any(r.first == trace.loop_start + 1 for r in rows)
    for rule in {s.rule for s in trace.steps if s.rule}:
        assert sum(r.rule == rule for r in rows) == 1           # its text once, then referred to


def test_check_prints_the_compact_trace(tmp_path, capsys):
    claim = tmp_path / "claims.yaml"
    claim.write_text("claims:\n  - id: never-two\n    says: never two cards\n    invariant: \"hand[0] < 2\"\n",
                     encoding="utf-8")
    model = str(Path(__file__).parent / "fixtures" / "core" / "mini.yaml")
    assert main(["check", model, "-p", str(claim), "--engine", "explicit", "--no-consistency", "-q",
                 "--variant", "loose"]) == 1
    out = capsys.readouterr().out
    assert "deck=[4,4]" in out and "deck[0]=" not in out         # the start, compact
