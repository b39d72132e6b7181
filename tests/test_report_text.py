"""The terminal report: a summary table by default, the traces of verdicts not as expected,
every trace with --traces all; a claim's `why` (why the rules break it) is shown only under the
readings where the violation is expected."""
from __future__ import annotations

import json
import re
from pathlib import Path

from verifier.cli import main
from verifier.report.text import acknowledge_hint
from verifier.result import Finding

MINI = str(Path(__file__).parent / "fixtures" / "core" / "mini.yaml")
CLAIM = """claims:
  - id: empty-hand
    says: "player 0 never holds a card"
    invariant: "hand[0] == 0"
    expected: {strict: HOLDS, loose: VIOLATED}
    why: "WHY-MARK"
"""


def test_why_only_where_the_violation_is_expected(tmp_path, capsys):
    props = tmp_path / "claims.yaml"
    props.write_text(CLAIM, encoding="utf-8")
    assert main(["check", MINI, "-p", str(props), "--engine", "explicit", "--no-consistency", "--traces", "all"]) == 1
    out = capsys.readouterr().out
    assert out.count("empty-hand: VIOLATED") == 2                    # violated under both readings
    assert out.count("(expected: WHY-MARK)") == 1                    # but expected only under loose


def test_by_default_a_summary_and_the_unexpected_traces_only(tmp_path, capsys):
    props = tmp_path / "claims.yaml"
    props.write_text(CLAIM + """  - id: hand-can-fill
    says: "a hand can hold a card"
    reachable: "hand[0] > 0"
""", encoding="utf-8")
    args = ["check", MINI, "-p", str(props), "--engine", "explicit", "--no-consistency"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert re.search(r"\nVIOLATED +NO \(strict\) +1 +empty-hand", out)   # grouped across readings
    assert re.search(r"\nHOLDS +yes +1 +hand-can-fill", out)
    assert "empty-hand [strict]: VIOLATED, expected HOLDS" in out                    # the one not as expected
    assert out.count("(initial state)") == 1                         # its trace, and no other (no witness)
    assert "2 claims × 2 readings = 4 verdicts, 3 as expected" in out
    assert main([*args, "--traces", "none"]) == 1
    assert "(initial state)" not in capsys.readouterr().out
    assert main([*args, "--traces", "all"]) == 1
    assert capsys.readouterr().out.count("(initial state)") == 4     # both violations, each reading's witness


def test_a_verdict_left_open_is_never_counted_as_expected(tmp_path, capsys):
    """A claim without `expected:` that a budget leaves UNKNOWN is "left open" in the table and the
    last line (exit 3), as one expecting a verdict is; only `expected: UNKNOWN` makes it as expected."""
    props = tmp_path / "claims.yaml"
    props.write_text("""claims:
  - id: no-expectation
    says: "player 0 holds at most two cards"
    invariant: "hand[0] <= 2"
  - id: expects-unknown
    says: "the same, expected to be left open"
    invariant: "hand[0] <= 2"
    expected: UNKNOWN
""", encoding="utf-8")
    args = ["check", MINI, "-p", str(props), "--engine", "explicit", "--no-consistency", "--max-states", "1",
            "--variant", "strict"]
    assert main(args) == 3
    out = capsys.readouterr().out
    assert re.search(r"\nUNKNOWN +left open +1 +no-expectation", out)
    assert re.search(r"\nUNKNOWN +yes +1 +expects-unknown", out)
    assert "2 claims, 1 as expected, 1 left open," in out


def test_the_acknowledge_entries_cover_each_finding_once():
    """A pair found both ways round (a|b, b|a) is one entry, since one acknowledgement covers both;
    acknowledged findings get none, and nothing at all is said when every finding is acknowledged."""
    found = [Finding("variant-difference", "original|stacking", "m"),
             Finding("variant-difference", "stacking|original", "m"),
             Finding("variant-difference", "attacked-twice", "m"), Finding("gap", "hand|draw", "m", acknowledged="why")]
    hint = acknowledge_hint(found)
    assert hint.count("  - {kind:") == 2 and '"attacked-twice"' in hint and '"hand|draw"' not in hint
    assert acknowledge_hint(found[3:]) == ""


def test_the_verdicts_one_reason_left_open_are_one_line(tmp_path, capsys):
    """`check models/wtactics.yaml --printed --timeout 60` on a loaded machine printed 403 lines: one
    'UNKNOWN because cut short by --timeout' line per claim and reading, and every claim in the table.
    More than three verdicts left open for one reason are one line; --traces all lists each."""
    props = few_claims(tmp_path, 6)
    args = ["check", MINI, "-p", str(props), "--engine", "explicit", "--no-consistency", "--max-states", "1"]
    assert main(args) == 3
    out = capsys.readouterr().out
    assert out.count("UNKNOWN because") == 1
    assert re.search(r" 12 verdicts UNKNOWN because .*: c0, c1, c2, c3, c4, c5 \(--traces all lists each\)",
                     " ".join(out.split()))                         # one line, wrapped at the width
    assert re.search(r"\nUNKNOWN +left open +6 +c0, c1, c2, c3, c4, c5", out)
    assert main([*args, "--traces", "all"]) == 3
    assert capsys.readouterr().out.count("UNKNOWN because") == 12
    assert main([*args, "--variant", "strict", "-p", str(few_claims(tmp_path, 3))]) == 3    # three: one line each
    assert capsys.readouterr().out.count("UNKNOWN because") == 3


def few_claims(tmp_path, n: int):
    path = tmp_path / f"claims{n}.yaml"
    path.write_text("claims:\n" + "".join(f'  - id: c{k}\n    says: "claim {k}"\n    invariant: "hand[0] <= {k}"\n'
                                          for k in range(n)), encoding="utf-8")
    return path


def test_no_claims_says_where_they_were_looked_for(tmp_path, capsys):
    """A new user's model beside its claim file got 'write properties/<model>.yaml', which did not say
    that the folder is looked for beside the model's folder, not in it."""
    games = tmp_path / "games"
    games.mkdir()
    (games / "mini.yaml").write_text(Path(MINI).read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["check", str(games / "mini.yaml"), "--no-consistency", "--variant", "strict"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (f"no claims: none at {tmp_path / 'properties' / 'mini.yaml'} or {games / 'properties' / 'mini.yaml'} "
            "(properties/ beside the model's folder, or in it)") in out


def test_a_model_named_by_its_full_path_finds_the_claims_it_finds_named_bare(tmp_path, monkeypatch, capsys):
    """A new user's `check hanabi.yaml` found `properties/hanabi.yaml` in the current folder, but the
    same file named by its full path looked only in the folder above (issue 27's Hanabi session)."""
    game = tmp_path / "game"
    (game / "properties").mkdir(parents=True)
    (game / "mini.yaml").write_text(Path(MINI).read_text(encoding="utf-8"), encoding="utf-8")
    (game / "properties" / "mini.yaml").write_text('claims:\n  - id: small\n    says: "small"\n'
                                                    '    invariant: "hand[0] <= 9"\n', encoding="utf-8")
    monkeypatch.chdir(game)
    outs = []
    for written in ("mini.yaml", str(game / "mini.yaml")):
        assert main(["check", written, "--no-consistency", "--variant", "strict", "-f", "json"]) == 0
        outs.append(json.loads(capsys.readouterr().out)["properties"])
    assert outs == ["properties/mini.yaml", str(game / "properties" / "mini.yaml")]


def test_a_finding_table_counts_the_steps_of_its_trace():
    """'trace of 1 step', 'trace of 2 steps' (the table said 'trace of 1 steps')."""
    from rich.console import Console

    from verifier.report.text import findings_text
    from verifier.trace import Step, Trace

    def table(steps: int) -> str:
        finding = Finding("gap", "draw", "A draw can leave the range.",
                          traces=(Trace((("x", 0),), tuple(Step("draw") for _ in range(steps))),))
        console = Console(width=200, record=True)
        console.print(findings_text([finding]))
        return console.export_text()

    assert "trace of 1 step " in table(1) and "trace of 2 steps" in table(2)
