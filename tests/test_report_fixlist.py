"""FINDINGS.md leads with what a designer must fix: ranked by kind, each claim or finding once across
readings (a reading-dependent claim as one ambiguity, the readings side by side), the behaviours the
claims show on purpose apart, one line each with a link to their trace."""
from __future__ import annotations

from pathlib import Path

import pytest

from verifier.report.findings_md import findings_markdown
from verifier.report.fixlist import game_findings
from verifier.runner import RunOptions, check_model

MINI = str(Path(__file__).parent / "fixtures" / "core" / "mini.yaml")
CLAIMS = """claims:
  - id: hands-stay-empty
    says: "player 0 never holds a card"
    invariant: "hand[0] == 0"
    expected: VIOLATED
    why: "BEHAVIOUR-MARK"
  - id: hand-within-one
    says: "player 0 never holds more than one card"
    invariant: "hand[0] <= 1"
    expected: VIOLATED
    why: "PROBLEM-MARK"
    finding: problem
  - id: hand-within-limit
    says: "player 0 never holds more than the limit"
    invariant: "hand[0] <= LIMIT"
    expected: {strict: HOLDS, loose: VIOLATED}
    why: "AMBIGUITY-MARK"
  - id: two-cards
    says: "player 0 can hold two cards"
    reachable: "hand[0] == 2"
  - id: deck-bounded
    says: "a deck never grows"
    invariant: "deck[0] <= DECK"
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    props = tmp_path_factory.mktemp("fixlist") / "claims.yaml"
    props.write_text(CLAIMS, encoding="utf-8")
    return check_model(MINI, RunOptions(engine="explicit", properties=str(props)))


def test_ranked_once_across_readings(runs):
    g = game_findings(runs)
    assert g.readings == ("strict", "loose")
    kinds = [i.kind for i in g.to_fix]
    assert kinds == sorted(kinds, key=["unexpected", "broken", "contradiction", "gap", "ambiguity", "dead"].index)
    titles = [i.title for i in g.to_fix]
    assert len(titles) == len(set(titles))          # once each, whatever the number of readings
    broken = next(i for i in g.to_fix if i.title == "hand-within-one")
    assert broken.kind == "broken" and broken.readings == () and "PROBLEM-MARK" in broken.text
    ambiguity = next(i for i in g.to_fix if i.title == "hand-within-limit")
    assert ambiguity.kind == "ambiguity" and ambiguity.side_by_side == (("strict", "HOLDS"), ("loose", "VIOLATED"))
    assert "nondeterministic-must draw" in titles and "dead-rule discard" in titles
    pair = [i for i in g.to_fix if i.title.startswith("readings ")]
    assert len(pair) == 1 and {r for r, _ in pair[0].side_by_side} == {"strict", "loose"}


def test_behaviours_shown_apart_and_what_holds(runs):
    g = game_findings(runs)
    assert [s.claim for s in g.shown] == ["hands-stay-empty", "two-cards"]
    assert all(s.evidence is not None and s.evidence.trace is not None for s in g.shown)
    assert g.held == {"HOLDS": ["deck-bounded"]}


def test_the_markdown(runs):
    text = findings_markdown([runs])
    for mark in ("BEHAVIOUR-MARK", "PROBLEM-MARK", "AMBIGUITY-MARK"):
        assert text.count(mark) == 1, mark
    to_fix, shown = text.index("### To fix"), text.index("### Behaviours shown")
    assert to_fix < text.index("PROBLEM-MARK") < text.index("AMBIGUITY-MARK") < shown < text.index("BEHAVIOUR-MARK")
    assert "strict HOLDS · loose VIOLATED" in text
    assert "- [hands-stay-empty](mini/claim.hands-stay-empty.md#trace-hands-stay-empty-strict)" in text
    assert "| [mini](#mini) |  | 1 |  | 1 | 2 | 1 | 2 | 1 |  |" in text


def test_finding_takes_problem_or_behaviour(tmp_path):
    from verifier.diagnostics import PropertyError
    from verifier.lang import load_model, load_properties

    props = tmp_path / "claims.yaml"
    props.write_text(CLAIMS.replace("finding: problem", "finding: bug"), encoding="utf-8")
    with pytest.raises(PropertyError) as err:
        load_properties(str(props), load_model(MINI))
    assert "finding: 'bug' is neither of problem and behaviour" in str(err.value)


def test_a_step_claims_last_row_shows_the_value_that_broke_it(tmp_path):
    from verifier.report.pages import build_game, trace_table

    props = tmp_path / "step.yaml"
    props.write_text("""claims:
  - id: play-draws
    says: "playing a card takes one from the deck"
    step: "deck[0] == prev(deck[0]) - 1"
    actions: [play]
    expected: VIOLATED
    why: "playing leaves the deck alone"
    finding: problem
""", encoding="utf-8")
    runs = check_model(MINI, RunOptions(engine="explicit", properties=str(props), consistency=False))
    view = build_game(runs).claim_traces[("play-draws", "strict")]
    assert view.reads == ("deck",)
    last = trace_table(view.trace, view.reads).rows[-1][-1]
    assert "hand[0]" in last and "unchanged: deck[0] = " in last and "deck[1]" not in last.split("unchanged")[0]
    # FINDINGS.md links the item to that trace (the table is on the claim's page)
    assert "([trace](mini/claim.play-draws.md#trace-play-draws-strict))" in findings_markdown([runs])


def test_the_game_page_opens_with_what_to_fix(runs):
    from verifier.report.markdown import game_markdown
    from verifier.report.pages import build_game

    page = game_markdown(build_game(runs))
    table = page[page.index('<a id="to-fix"></a>What to fix'):page.index("Turn structure")]
    assert "[hand-within-one](claim.hand-within-one.md)" in table and "strict HOLDS · loose VIOLATED" in table
    assert "strict and loose" in table and "hands-stay-empty" not in table     # a behaviour, not to fix
    assert "2 behaviours the claims show on purpose" in table


def test_a_claim_and_its_why_read_as_two_sentences():
    from verifier.report.fixlist import sentences

    assert sentences("No treasure after a buy", "the first edition allows it") == \
        "No treasure after a buy. The first edition allows it."
    assert sentences("A claim", "hand[0] may exceed it") == "A claim. hand[0] may exceed it."   # a name stays


def test_findings_documented_with_one_reason_are_one_entry(runs):
    """The stuck states of one documented reading (one reason, one kind) are one line, each linked."""
    from verifier.report.findings_md import game_section
    from verifier.report.fixlist import Evidence, GameFindings, Item

    why = "variant loose only: nothing follows"
    items = [Item("gap", f"deadlock {p}", "Rule", f"stuck in {p}", ("loose",), (), why, Evidence("loose", None))
             for p in ("Draw", "Play", "Discard")]
    items.append(Item("gap", "gap hand|draw", "Rule", "SILENT-MARK", (), (), "another reason", Evidence(None, None)))
    text = "\n".join(game_section(runs, GameFindings(("strict", "loose"), items)))
    assert "1. **deadlock** ×3: [Draw](mini/index.md#findings), [Play](mini/index.md#findings), " \
           "[Discard](mini/index.md#findings) (in reading loose)" in text
    assert text.count(why) == 1 and "stuck in" not in text
    assert "2. **gap hand\\|draw** — Rule ([details](mini/index.md#findings))" in text and "SILENT-MARK" in text


def test_verdicts_of_many_readings_and_documented_readings_parting_ways(runs):
    """Past two readings, the common verdict reads `in the other N`; two documented readings that
    part ways are one line (their positions are on the game's page), new ones keep both sentences."""
    from verifier.report.findings_md import game_section
    from verifier.report.fixlist import Evidence, GameFindings, Item

    side = (("a", "HOLDS"), ("b", "VIOLATED"), ("c", "HOLDS"), ("d", "HOLDS"))
    items = [Item("ambiguity", "claim-x", "", "CLAIM-MARK", (), side, None, Evidence("b", None, "claim-x")),
             Item("ambiguity", "readings a and b", "R", "", (), (("a", "A-ONLY-MARK"), ("b", "B-ONLY-MARK")),
                  "documented", Evidence("a", None)),
             Item("ambiguity", "readings a and c", "R", "", (), (("a", "A-NEW-MARK"), ("c", "C-NEW-MARK")),
                  None, Evidence("a", None))]
    text = "\n".join(game_section(runs, GameFindings(("a", "b", "c", "d"), items)))
    assert "**claim-x**: VIOLATED in b · HOLDS in the other 3" in text and "CLAIM-MARK" in text
    assert "A-ONLY-MARK" not in text and "B-ONLY-MARK" not in text and "*Documented in the model*: documented" in text
    assert "A-NEW-MARK" in text and "C-NEW-MARK" in text
