"""`turnproof diff`: the fixture pairs report exactly their known differences; a model
diffed with itself reports nothing.

tests/fixtures/gate/gate.yaml is a one-player turn (Draw one card, optional Play,
Discard down to LIMIT 2, deck of 3). Each edited copy changes one rule:

- gate_tight: play needs two cards in hand (a tightened guard). The hand then
  never empties again, so the game cannot end (claim game-can-end) and every state
  with an empty hand after the first draw disappears, plus the two Draw states that
  only an empty hand leads to.
- gate_limit: LIMIT 3 (a changed limit). A hand of three now survives Discard, so a
  turn can start with three cards (claim limit-at-draw) in three new states.
- gate_nophase: no Play phase (a removed phase). No card ever leaves the hand below
  the limit: the game cannot end, and every Play state and every state that needs a
  play disappears; nothing new appears.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.diffing.changes import ModelDiff
from verifier.diffing.compare import compare_checks, diff_versions
from verifier.diffing.versions import Version
from verifier.report.diff import diff_json, render_markdown, render_text, summary_line
from verifier.lang import load_model
from verifier.result import Finding
from verifier.runner import RunOptions, check_model
from verifier.semantics import initial_states, layout, successors
from verifier.trace import replay

HERE = Path(__file__).parent
GATE = HERE / "fixtures" / "gate"
PROPS = str(GATE / "gate_props.yaml")
OPTIONS = RunOptions(engine="explicit", properties=PROPS, consistency=False)


def diff(new: str, old: str = "gate", limit: int = 10, options: RunOptions = OPTIONS):
    return diff_versions(str(GATE / f"{old}.yaml"), str(GATE / f"{new}.yaml"), options, limit=limit)


def S(phase: str, deck: int, hand: int, drawn: bool) -> dict:
    return {"phase": phase, "active": 0, "deck": deck, "hand": hand, "drawn": drawn}


def oracle(path: Path) -> set[tuple]:
    """Reachable states by a naive search over the reference semantics (independent of the engine)."""
    lay = layout(load_model(str(path)).instantiate())
    seen = set(initial_states(lay))
    todo = list(seen)
    while todo:
        for t in successors(lay, todo.pop()):
            if t.target not in seen:
                seen.add(t.target)
                todo.append(t.target)
    return {tuple(sorted(lay.as_dict(s).items())) for s in seen}


def key(state: dict) -> tuple:
    return tuple(sorted(state.items()))


@pytest.mark.parametrize("model", ["gate", "gate_tight", "gate_limit", "gate_nophase"])
def test_a_model_diffed_with_itself_reports_nothing(model, capsys):
    d = diff(model, model)
    assert not d.changed and d.exit_code == 0 and summary_line(d) == "nothing changed"
    (b,) = d.behaviours
    assert b.complete and b.new_only.count == b.old_only.count == 0 and b.old_states == b.new_states
    doc = diff_json(d)
    assert doc["claims"] == {"changed": [], "left_open": [], "added": [], "removed": []}
    assert doc["findings"] == {"appeared": [], "disappeared": []}
    assert main(["diff", str(GATE / f"{model}.yaml"), str(GATE / f"{model}.yaml"), "-p", PROPS,
                 "--engine", "explicit", "--no-consistency", "-q"]) == 0
    assert "= nothing changed" in capsys.readouterr().out


def _with_findings() -> RunOptions:
    return RunOptions(engine="explicit", properties=PROPS)


def test_a_model_diffed_with_itself_reports_no_findings_either():
    d = diff_versions(str(GATE / "gate.yaml"), str(GATE / "gate.yaml"), _with_findings())
    assert not d.changed and not d.findings_appeared and not d.findings_gone


@pytest.mark.parametrize("model,appeared", [("gate_tight", []), ("gate_nophase", []),
                                            ("gate_limit", ["dead-rule:discard"])])
def test_findings_of_the_fixture_pairs(model, appeared):
    """With LIMIT 3 no hand (at most three cards) ever exceeds the limit: discard is dead."""
    d = diff_versions(str(GATE / "gate.yaml"), str(GATE / f"{model}.yaml"), _with_findings())
    assert [f.key for _, f in d.findings_appeared] == appeared and d.findings_gone == []


def test_tightened_guard():
    d = diff("gate_tight")
    assert [(c.claim, c.old_verdict, c.new_verdict) for c in d.claims_changed] == \
        [("game-can-end", "HOLDS", "VIOLATED")]
    assert not (d.claims_added or d.claims_removed or d.findings_appeared or d.findings_gone)
    (b,) = d.behaviours
    assert b.new_only.count == 0
    gone = {key(S("Play", 2, 0, True)), key(S("Play", 1, 0, True)), key(S("Play", 0, 0, True)),
            key(S("Play", 0, 0, False)), key(S("Discard", 2, 0, True)), key(S("Discard", 1, 0, True)),
            key(S("Draw", 2, 0, False)), key(S("Draw", 1, 0, False)),
            key(S("Draw", 1, 1, True)), key(S("Draw", 0, 1, True))}
    assert b.old_only.count == len(gone) == 10
    assert oracle(GATE / "gate.yaml") - oracle(GATE / "gate_tight.yaml") == gone
    # where OLD first departs from NEW: an empty hand after a play, shortest first
    assert [dict(s.state) for s in b.old_only.listed] == [S("Play", 2, 0, True), S("Play", 1, 0, True),
                                                          S("Play", 0, 0, True), S("Play", 0, 0, False)]
    assert b.old_only.departures == 4
    assert [s.trace.steps[-1].action for s in b.old_only.listed] == ["play"] * 4
    assert d.exit_code == 1


def test_changed_limit():
    d = diff("gate_limit")
    assert [(c.claim, c.old_verdict, c.new_verdict) for c in d.claims_changed] == \
        [("limit-at-draw", "HOLDS", "VIOLATED")]
    (b,) = d.behaviours
    assert b.old_only.count == 0
    new = {key(S("Draw", 0, 3, False)), key(S("Play", 0, 3, False)), key(S("Discard", 0, 3, False))}
    assert oracle(GATE / "gate_limit.yaml") - oracle(GATE / "gate.yaml") == new
    assert b.new_only.count == 3 and b.new_only.departures == 1
    (first,) = b.new_only.listed
    assert dict(first.state) == S("Draw", 0, 3, False) and first.depth == 9
    assert [s.action for s in first.trace.steps][-3:] == ["draw", "end Draw -> Discard", "pass turn"]
    # the claim's counterexample in NEW is the same shortest trace
    assert d.claims_changed[0].new.trace.steps == first.trace.steps


def test_removed_phase():
    d = diff("gate_nophase")
    assert [(c.claim, c.old_verdict, c.new_verdict) for c in d.claims_changed] == \
        [("game-can-end", "HOLDS", "VIOLATED")]
    (b,) = d.behaviours
    assert b.new_only.count == 0
    old, new = oracle(GATE / "gate.yaml"), oracle(GATE / "gate_nophase.yaml")
    assert new <= old and b.old_only.count == len(old - new) == 24
    plays = {s for s in old if dict(s)["phase"] == "Play"}
    assert plays <= old - new and len(plays) == 12
    assert all(dict(s)["phase"] != "Play" and dict(s)["hand"] < 3 for s in old - new - plays)
    assert [dict(s.state) for s in b.old_only.listed] == [S("Play", 2, 1, True), S("Play", 1, 2, True),
                                                          S("Play", 0, 3, True), S("Play", 0, 2, False)]
    assert all(dict(s.novel) == {"phase": "Play"} for s in b.old_only.listed)


@pytest.mark.parametrize("model", ["gate_tight", "gate_limit", "gate_nophase"])
def test_every_listed_trace_replays_to_its_state(model):
    d = diff(model)
    (b,) = d.behaviours
    for path, side in ((GATE / f"{model}.yaml", b.new_only), (GATE / "gate.yaml", b.old_only)):
        lay = layout(load_model(str(path)).instantiate())
        for s in side.listed:
            states = replay(lay, s.trace)
            assert len(s.trace) == s.depth
            assert {k: v for k, v in lay.as_dict(states[-1]).items() if k in b.shared} == dict(s.state)


def test_limit_keeps_the_counts():
    d = diff("gate_nophase", limit=1)
    (b,) = d.behaviours
    assert len(b.old_only.listed) == 1 and b.old_only.departures == 4 and b.old_only.count == 24
    assert "(1 listed)" in render_text(d, full=True)


def test_reverse_direction_swaps_the_sides():
    d = diff("gate", old="gate_limit")
    (b,) = d.behaviours
    assert b.new_only.count == 0 and b.old_only.count == 3
    assert [(c.claim, c.old_verdict, c.new_verdict) for c in d.claims_changed] == \
        [("limit-at-draw", "VIOLATED", "HOLDS")]


def test_renderings(capsys):
    d = diff("gate_limit")
    text = render_text(d, full=True)
    assert "limit-at-draw: HOLDS -> VIOLATED" in text
    assert "NEW allows 3 states OLD does not; it first departs from OLD in 1:" in text
    assert "phase=Draw, active=0, deck=0, hand=3, drawn=false" in text
    summary = render_text(d)
    assert "  limit-at-draw: HOLDS -> VIOLATED; trace [1]\n" in summary
    assert "NEW allows 3 states OLD does not (1 where it first departs); the shortest: after pass turn (step 9): " \
           "OLD does not allow pass turn" in summary
    assert summary.count("[1] limit-at-draw: NEW counterexample (9 steps):") == 1   # the departure's trace too
    assert "[2]" not in summary and len(summary.splitlines()) < len(text.splitlines())
    md = render_markdown(d)
    assert md.startswith("## turnproof diff:") and "| `limit-at-draw` |" in md and "<details>" in md
    assert "**NEW allows 3 states that OLD does not**" in md
    doc = json.loads(json.dumps(diff_json(d)))
    assert doc["changed"] is True and doc["exit_code"] == 1
    assert doc["claims"]["changed"][0]["new_trace"]["steps"][-1]["action"] == "pass turn"
    assert doc["behaviours"][0]["new_only"]["listed"][0]["state"] == S("Draw", 0, 3, False)
    for fmt in ("text", "json", "markdown"):
        code = main(["diff", str(GATE / "gate.yaml"), str(GATE / "gate_limit.yaml"), "-p", PROPS,
                     "--engine", "explicit", "--no-consistency", "-q", "-f", fmt])
        assert code == 1
        assert capsys.readouterr().out
    code = main(["diff", str(GATE / "gate.yaml"), str(GATE / "gate_limit.yaml"), "-p", PROPS,
                 "--engine", "explicit", "--no-consistency", "-q", "--full"])
    assert code == 1 and "shortest trace (9 steps):" in capsys.readouterr().out


def test_the_summary_gives_a_change_in_several_variants_one_line_and_its_shortest_trace():
    d = diff("gate_limit")
    (c,) = d.claims_changed
    assert c.new is not None and c.new.trace is not None
    short = replace(c.new, trace=replace(c.new.trace, steps=c.new.trace.steps[:2]))
    d.claims_changed = [replace(c, variant="a"), replace(c, variant="b", new=short)]
    text = render_text(d)
    assert text.count("limit-at-draw [variants a, b]: HOLDS -> VIOLATED; trace [1]") == 1
    assert "[1] limit-at-draw [variant b]: NEW counterexample (2 steps):" in text
    assert "<summary>limit-at-draw \\[variant b\\]: NEW counterexample (2 steps)</summary>" in render_markdown(d)


def test_the_summary_lists_the_shortest_departure_only():
    d = diff("gate_nophase")
    (b,) = d.behaviours
    assert len(b.old_only.listed) == 4
    text, full = render_text(d), render_text(d, full=True)
    assert text.count("OLD allows 24 states NEW does not (4 where it first departs)") == 1
    assert "phase=Play, active=0, deck=2, hand=1, drawn=true" in text
    assert "phase=Play, active=0, deck=1, hand=2, drawn=true" not in text and \
        "phase=Play, active=0, deck=1, hand=2, drawn=true" in full
    md, md_full = render_markdown(d), render_markdown(d, full=True)
    assert "(shortest first, 1 listed)" in md and "(shortest first, 4 listed)" in md_full


def test_variables_and_findings(tmp_path):
    renamed = tmp_path / "gate_renamed.yaml"
    renamed.write_text((GATE / "gate.yaml").read_text().replace("drawn", "took"))
    d = diff_versions(str(GATE / "gate.yaml"), str(renamed), RunOptions(engine="explicit", consistency=False,
                                                                        use_properties=False))
    (b,) = d.behaviours
    assert b.only_old_vars == ("drawn",) and b.only_new_vars == ("took",) and "drawn" not in b.shared
    assert b.new_only.count == b.old_only.count == 0 and d.changed and d.exit_code == 1
    runs = check_model(str(GATE / "gate.yaml"), OPTIONS)
    dead = Finding("dead-rule", "discard", "Discard never happens")
    gap = Finding("gap", "hand", "Hand may overflow")
    out = ModelDiff(Version("a", "a"), Version("b", "b"), "gate", "gate")
    compare_checks([replace(runs[0], findings=(gap,))], [replace(runs[0], findings=(dead,))], out)
    assert [f.key for _, f in out.findings_appeared] == ["dead-rule:discard"]
    assert [f.key for _, f in out.findings_gone] == ["gap:hand"]
    assert out.changed and out.exit_code == 1
    assert "+ dead-rule:discard" in render_text(out) and "| gone | `gap:hand` |" in render_markdown(out)


def test_an_incomplete_exploration_is_not_a_change():
    from verifier.engines.base import Budget
    d = diff("gate", options=replace(OPTIONS, budget=Budget(max_states=5)))
    assert not d.changed and d.incomplete and d.exit_code == 3
    assert "exploration incomplete" in render_text(d)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_revisions(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "rules"
    (repo / "models").mkdir(parents=True)
    (repo / "properties").mkdir()
    shutil.copy(GATE / "gate.yaml", repo / "models" / "gate.yaml")
    shutil.copy(GATE / "gate_props.yaml", repo / "properties" / "gate.yaml")

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=repo,
                       check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "rules v1")
    shutil.copy(GATE / "gate_limit.yaml", repo / "models" / "gate.yaml")
    monkeypatch.chdir(repo)
    args = ["--engine", "explicit", "--no-consistency", "-q", "-f", "json"]
    assert main(["diff", "git:HEAD:models/gate.yaml", "models/gate.yaml", *args]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["old"] == "git:HEAD:models/gate.yaml"
    assert [c["claim"] for c in doc["claims"]["changed"]] == ["limit-at-draw"]   # properties read at HEAD too
    assert main(["diff", "git:HEAD:models/gate.yaml", "git:HEAD:./models/gate.yaml", *args]) == 0
    capsys.readouterr()
    assert main(["diff", "git:nosuchrev:models/gate.yaml", "models/gate.yaml", *args]) == 2
    assert "git:nosuchrev:models/gate.yaml" in capsys.readouterr().err
    assert main(["diff", "git:HEAD", "models/gate.yaml", *args]) == 2
    assert main(["diff", "models/absent.yaml", "models/gate.yaml", *args]) == 2


def test_departures_say_why(tmp_path):
    (tight,) = diff("gate_tight").behaviours
    assert tight.old_only.listed[0].why == "NEW does not allow play in the state before it (NEW allows only end Play)"
    (limit,) = diff("gate_limit").behaviours
    assert limit.new_only.listed[0].why == \
        "OLD does not allow pass turn in the state before it (OLD allows only discard)"
    back = tmp_path / "gate.yaml"                             # a played card goes back into the deck
    back.write_text((GATE / "gate.yaml").read_text().replace("hand: hand - 1\n    rule: \"Play",
                                                             "hand: hand - 1\n      deck: deck + 1\n    rule: \"Play"))
    d = diff_versions(str(GATE / "gate.yaml"), str(back), OPTIONS)
    (b,) = d.behaviours
    first = b.new_only.listed[0]
    assert first.trace.steps[-1].action == "play" and dict(first.state) == S("Play", 3, 0, True)
    assert first.why == "in OLD, play from the state before it leads to deck=2 instead of 3"


def test_readings_added_are_named_in_words():
    """A model that gains readings: the summary and the text name them, and the old model's one
    unnamed reading in words (not Python's `[None]`)."""
    diff = ModelDiff(Version("a.yaml", "a.yaml"), Version("b.yaml", "b.yaml"), "m", "m",
                     variants_added=["strict", "loose"], variants_removed=[None])
    assert "readings added: strict, loose; removed: the one reading of a model without variants" in summary_line(diff)
    text = render_text(diff)
    assert "readings only in NEW: strict, loose" in text and "None" not in text


def test_a_model_that_gains_readings_is_compared_reading_by_reading(tmp_path, capsys):
    """OLD declares no readings, NEW two: the old rules are compared with each new reading, so the
    reading that tightens Play (gate_tight's rule) shows its broken claim and its lost states, and
    the reading that keeps the rule shows nothing but the readings added."""
    text = (GATE / "gate.yaml").read_text(encoding="utf-8")
    assert '    when: "hand > 0"\n' in text
    readings = text.replace("players: 1\n", "players: 1\nvariants:\n  same: {doc: the old rule}\n"
                                            "  tight: {doc: play needs two cards}\n") \
        .replace('    when: "hand > 0"\n', '    when: {same: "hand > 0", tight: "hand > 1"}\n')
    new = tmp_path / "gate.yaml"
    new.write_text(readings, encoding="utf-8")
    diff = diff_versions(str(GATE / "gate.yaml"), str(new), RunOptions(properties=PROPS, engine="explicit"))
    assert diff.variants_added == ["same", "tight"] and diff.variants_removed == [None]
    assert [(c.variant, c.claim, c.new_verdict) for c in diff.claims_changed] == [("tight", "game-can-end", "VIOLATED")]
    assert {b.variant: b.changed for b in diff.behaviours} == {"same": False, "tight": True}
    assert "OLD declares no readings: its rules compared with each reading of NEW" in render_text(diff)


def _with_readings(readings: dict[str, tuple[str, str]]) -> str:
    """gate.yaml with `readings` (name -> (doc, Play's condition))."""
    text = (GATE / "gate.yaml").read_text(encoding="utf-8")
    declared = "".join(f"  {name}: {{doc: \"{doc}\"}}\n" for name, (doc, _) in readings.items())
    when = ", ".join(f'{name}: "{guard}"' for name, (_, guard) in readings.items())
    return text.replace("players: 1\n", f"players: 1\nvariants:\n{declared}") \
        .replace('    when: "hand > 0"\n', f"    when: {{{when}}}\n")


def test_readings_renamed_are_compared_and_a_new_one_is_listed(tmp_path, capsys):
    """OLD's readings `same` and `tight`; NEW renames `same` to `kept` (the same rules), `tight` to
    `strict` (the same doc, play now needs three cards) and adds `loose`: kept and strict are each
    compared with the reading they were, the note says how they were paired; loose, which nothing
    pairs, has its claims listed as added, and the notes say so. Before, nothing was compared."""
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(_with_readings({"same": ("the old rule", "hand > 0"),
                                   "tight": ("play needs more cards", "hand > 1")}), encoding="utf-8")
    new.write_text(_with_readings({"kept": ("the old rule, kept", "hand > 0"),
                                   "strict": ("play needs more cards", "hand > 2"),
                                   "loose": ("play from any hand", "hand > 0 or deck == 0")}), encoding="utf-8")
    diff = diff_versions(str(old), str(new), OPTIONS)
    assert diff.variants_added == ["kept", "strict", "loose"] and diff.variants_removed == ["same", "tight"]
    assert diff.notes == [
        "reading same of OLD is kept in NEW (renamed, the same rules): compared as one",
        "reading tight of OLD is strict in NEW (renamed, the same doc and rule citation): compared as one",
        "reading loose only in NEW: no reading of OLD has its name, its rules or its doc; its claims and findings "
        "are listed as added"]
    assert {b.variant: b.changed for b in diff.behaviours} == {"kept": False, "strict": True}
    assert {c.variant for c in diff.claims_added} == {"loose"} and not diff.claims_removed
    assert {c.claim for c in diff.claims_added} == {c.property.id for c in diff_runs(new, "loose")}
    assert main(["diff", str(old), str(new), "-p", PROPS, "--no-consistency", "-f", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["variants"] == {"added": ["kept", "strict", "loose"], "removed": ["same", "tight"]}
    assert doc["notes"] == diff.notes
    assert doc["readings_compared"] == [{"old": "same", "new": "kept", "paired_by": "the same rules"},
                                        {"old": "tight", "new": "strict", "paired_by": "the same doc and rule citation"}]
    text = render_text(diff)
    assert "readings only in NEW: kept, strict, loose; only in OLD: same, tight" in text
    assert all(f"note: {n}" in text for n in diff.notes)


def diff_runs(path: Path, variant: str):
    return check_model(str(path), replace(OPTIONS, variant=variant))[0].results
