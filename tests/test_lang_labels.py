"""Display names (docs/LANGUAGE.md, "Display names"): a variable's `label:`, the names of an int range's
values (`values:`, on variables and choices) shown in traces, findings and reports; JSON keeps the
numbers and gives the names beside them; a bad label is an error at its position."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_lang_errors import where

from verifier.cli import main
from verifier.diagnostics import ModelError
from verifier.lang import load_model
from verifier.report import mermaid, sarif, trace_view
from verifier.report.model_json import model_json
from verifier.runner import RunOptions, check_model
from verifier.trace import Names, expr_words, split_element

FIXTURES = Path(__file__).parent / "fixtures" / "lang"
MODEL, CLAIMS = FIXTURES / "labels.yaml", FIXTURES / "labels_props.yaml"


def _trace():
    (run,) = check_model(str(MODEL), RunOptions(engine="explicit", properties=str(CLAIMS), consistency=False))
    (result,) = run.results
    assert result.trace is not None
    return result.trace


def test_labels_and_value_names_load():
    model = load_model(str(MODEL))
    mode, hand, turns = (model.var(n) for n in ("mode", "hand", "turns"))
    assert (mode.label, mode.value_names) == ("declared mode", ("attack", "defend", "pass"))
    assert (hand.label, hand.value_names, turns.label) == ("cards in hand", (), "")
    (d,) = model.action("declare").choices
    assert d.value_names == ("attack", "defend", "pass")


def test_a_trace_reads_in_the_page_words():
    trace = _trace()
    rows = trace_view.rows(trace)
    assert rows[0].label == "declare(d=defend)"
    assert rows[0].changes_text() == "declared mode: attack→defend"
    assert rows[-1].changes_text() == "cards in hand of player 0: 1→3"     # a per-player element: the player's
    start = trace_view.start_text(trace)
    assert "declared mode=attack" in start and "cards in hand=[1,1]" in start and "turns=0" in start
    # what replays keeps the model's names and numbers
    assert ("mode", 0) in trace.initial and trace.steps[0].choice == (("d", 1),)
    assert trace.steps[0].changes == (("mode", (0, 1)),)


def test_json_keeps_the_numbers_and_gives_the_names(capsys):
    assert main(["check", str(MODEL), "-p", str(CLAIMS), "-f", "json"]) == 0
    trace = json.loads(capsys.readouterr().out)["results"][0]["trace"]
    assert trace["initial"]["mode"] == 0 and trace["steps"][0]["choice"] == {"d": 1}
    assert trace["steps"][0]["changes"] == {"mode": [0, 1]} and trace["steps"][0]["label"] == "declare(d=defend)"
    assert trace["names"] == {"labels": {"mode": "declared mode", "hand": "cards in hand"},
                              "values": {"mode": {"0": "attack", "1": "defend", "2": "pass"}},
                              "per_player": ["hand"], "flags": [], "grids": {}}


def test_text_markdown_and_html_reports_use_the_names(tmp_path, capsys):
    assert main(["check", str(MODEL), "-p", str(CLAIMS), "--traces", "all"]) == 0
    text = capsys.readouterr().out
    assert "declare(d=defend)" in text and "declared mode: attack→defend" in text and "mode: 0" not in text
    assert text.count("1 claims, 1 as expected") == 1        # one reading: its count line is the last line
    out = tmp_path / "site"
    assert main(["report", str(MODEL), "-p", str(CLAIMS), "-o", str(out), "-q"]) == 0
    game = out / "labels"
    for page in ("claim.no-third-card.md", "claim.no-third-card.html"):
        text = (game / page).read_text(encoding="utf-8")
        assert "declare(d=defend)" in text and "declared mode: attack" in text and "cards in hand" in text, page
    assert "declare(d=defend)" in (game / "trace.no-third-card.dot").read_text(encoding="utf-8")
    page = (game / "index.md").read_text(encoding="utf-8")         # the game page's table of variables
    assert "0 to 2 (0 attack, 1 defend, 2 pass)" in page and "shown as “cards in hand”" in page
    states = (game / "states.dot").read_text(encoding="utf-8")     # the state graph's boxes
    assert "declared mode=defend" in states and "mode=1" not in states


def test_a_gap_finding_names_the_label(tmp_path):
    path = tmp_path / "gap.yaml"
    path.write_text(MODEL.read_text().replace('hand[active] < 3"', 'hand[active] <= 3"'))
    (run,) = check_model(str(path), RunOptions(engine="explicit", properties=None))
    (gap,) = [f for f in run.findings if f.kind == "gap"]
    assert "would take cards in hand of player 0 to 4" in gap.message
    assert gap.evidence["slot"] == "hand[0]"          # the evidence keeps the model's name


BAD = [
    # (what, old, new, message, needle of the reported place)
    ("two values named alike", "[attack, defend, pass]", "[attack, defend, attack]",
     "value 2 of variable mode is named 'attack', as value 0 is", "attack]"),
    ("too few names", "[attack, defend, pass]", "[attack, defend]",
     "values: of variable mode gives 2 names for the 3 values 0..2", "&modes"),
    ("too many names for a choice", "values: *modes}", "values: [a, b, c, d]}",
     "values: of choice d gives 4 names for the 3 values 0..2", "[a, b"),
    ("a bar in a label", "label: declared mode", "label: declared|mode",
     "the label of variable mode 'declared|mode' has the character '|'", "declared|"),
    ("a colon in a label", "label: declared mode", 'label: "declared: mode"',
     "the label of variable mode 'declared: mode' has the character ':'", '"declared:'),
    ("an ampersand in a value name", "[attack, defend, pass]", "[attack, \"R&D\", pass]",
     "has the character '&', which a value name may not hold", '"R&D'),
    ("a zero-width space in a value name", "[attack, defend, pass]", "[attack, \"de\\u200bfend\", pass]",
     "has the character '\\u200b'", "\"de"),
    ("a number as a label", "label: declared mode", "label: 3", "the label of variable mode must be text", "3\n"),
    ("a label that is another variable's name", "label: cards in hand", "label: turns",
     "variable hand's label 'turns' is the name of variable turns", "turns}"),
    ("two variables labelled alike", "label: cards in hand", "label: declared mode",
     "variable hand's label 'declared mode' is the label of variable mode", "declared mode}"),
    ("names for a bool", "turns: {type: 0..2, init: 0}", "turns: {type: bool, init: false, values: [no, yes]}",
     "values: names the values of an int range (lo..hi), and variable turns is not one", "[no"),
    ("a long label", "label: cards in hand", "label: " + "x" * 41, "has 41 characters; give 1 to 40", "xxx"),
    ("a label that reads as a player's element", "label: declared mode", "label: player 1 is ready",
     "the label of variable mode 'player 1 is ready' reads as one player's element", "player 1"),
    ("a label ending as a player's element", "label: cards in hand", "label: cards of player 2",
     "the label of variable hand 'cards of player 2' reads as one player's element", "cards of"),
]


@pytest.mark.parametrize(("what", "old", "new", "message", "needle"), BAD, ids=[c[0] for c in BAD])
def test_a_bad_label_is_an_error_at_its_position(tmp_path, what, old, new, message, needle):
    text = MODEL.read_text()
    assert old in text
    path = tmp_path / "bad.yaml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    found = [d for d in info.value.diagnostics if message in d.message]
    assert found, [d.message for d in info.value.diagnostics]
    assert str(found[0].span) == where(path, needle), what
    assert main(["lint", str(path), "-q"]) == 2


def test_export_json_gives_labels_and_value_names(capsys):
    assert main(["export", str(MODEL), "--to", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    mode = next(v for v in doc["variables"] if v["name"] == "mode")
    assert (mode["label"], mode["values"]) == ("declared mode", ["attack", "defend", "pass"])
    (declare,) = [a for a in doc["actions"] if a["name"] == "declare"]
    assert declare["choices"][0]["values"] == ["attack", "defend", "pass"]
    assert doc["names"]["per_player"] == ["hand"]


@pytest.mark.parametrize(("example", "key", "said"), [("love_letter", "flags", ["out", "protected"]),
                                                       ("dominion", "grids", {"cards": ["player", "Zone"]})])
def test_json_names_say_how_an_element_reads(example, key, said, capsys):
    """Which labels are a player's, which name a bool's state, which arrays are 2-D (and over what)."""
    assert main(["export", str(LOVE_LETTER.parent / f"{example}.yaml"), "--to", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["names"][key] == said


def test_sarif_messages_use_the_names(capsys):
    main(["check", str(MODEL), "-p", str(CLAIMS), "-f", "sarif"])
    out = capsys.readouterr().out
    assert "step 1: declare(d=defend) by player 0" in out and "declared mode: attack -> defend" in out
    assert "cards in hand of player 0: 1 -> 2" in out


def test_a_labelled_per_player_element_reads_as_the_players():
    said = Names.of(load_model(str(MODEL)))
    assert [said.slot(k) for k in ("hand[1]", "hand", "mode", "turns")] == \
        ["cards in hand of player 1", "cards in hand", "declared mode", "turns"]
    assert [said.element("hand", i) for i in ("0", "active", "p", "(active + 1) % 2")] == \
        ["cards in hand of player 0", "cards in hand of the active player", "cards in hand of player p",
         "cards in hand of player ((active + 1) % 2)"]
    assert said.element("mode", "p") == "declared mode[p]"              # not per player: its index
    assert [split_element(said.slot(k)) for k in ("hand[1]", "mode", "turns[2]")] == \
        [("cards in hand", "1"), None, ("turns", "2")]
    # a label on an array indexed by anything but the players keeps the index (`per: 0..3`, an enum)
    assert Names(labels=(("pile", "draw pile"),)).slot("pile[2]") == "draw pile[2]"


def test_a_guard_quotes_a_per_player_element_as_the_players():
    model = load_model(str(MODEL))
    draw = model.action("draw")
    assert "cards in hand of the active player < 3" in expr_words(model, draw.guard)


LOVE_LETTER = Path(__file__).parent.parent / "examples" / "models" / "love_letter.yaml"


def test_a_labelled_flag_reads_as_the_state_a_player_is_in():
    model = load_model(str(LOVE_LETTER))
    said = Names.of(model)
    assert said.slot("out[1]") == "player 1 is knocked out"
    assert [said.element("out", i) for i in ("active", "t", "(t + 1) % 3")] == \
        ["the active player is knocked out", "player t is knocked out", "player ((t + 1) % 3) is knocked out"]
    assert said.element("out", "t", negated=True) == "player t is not knocked out"
    guard = expr_words(model, model.action("guard").guard)      # `not out[t]` reads as the player's state
    assert "player t is not knocked out" in guard and "not player" not in guard
    assert split_element("player 1 is knocked out") == ("knocked out", "1")
    state = [("player 0 is knocked out", False), ("player 1 is knocked out", True), ("player 2 is knocked out", False)]
    assert trace_view.compact_items(state) == ["knocked out=[false,true,false]"]


def test_a_knocked_out_player_reads_so_in_a_trace_and_in_sarif(capsys):
    (run,) = check_model(str(LOVE_LETTER), RunOptions(
        engine="explicit", properties=str(LOVE_LETTER.parent.parent / "properties" / "love_letter.yaml"),
        consistency=False))
    (result,) = [r for r in run.results if r.property.id == "nobody-knocks-themselves-out"]
    assert result.trace is not None
    text = " ".join(row.changes_text() for row in trace_view.rows(result.trace))
    assert "player 0 is knocked out: false→true" in text and "out[0]" not in text
    assert ("out[0]", (False, True)) in result.trace.steps[-1].changes      # what replays keeps the names
    assert "player 0 is knocked out: false -> true" in json.dumps(sarif.runs_sarif([run]))


GRID = FIXTURES / "grid.yaml"


def test_a_two_dimensional_array_reads_like_a_one_dimensional_one(tmp_path):
    plain = load_model(str(GRID))                  # no labels: the indices as written, not the flat position
    assert "cards[active][deck] > 0" in expr_words(plain, plain.action("draw").guard)
    assert "not seen[2][deck]" in expr_words(plain, plain.action("play").guard)
    assert Names.of(plain).slot("cards[0][hand]") == "cards[0][hand]"
    path = tmp_path / "grid.yaml"
    path.write_text(GRID.read_text().replace("init: 1}", "init: 1, label: cards in}\n  slots: {type: 0..1, per: "
                                             "[player, 1..4], init: 0, label: slot}")
                    .replace("init: false}", "init: false, label: seen in}"))
    model = load_model(str(path))
    said = Names.of(model)
    assert [said.slot(k) for k in ("cards[0][hand]", "cards[1][board]", "seen[2][deck]", "slots[1][3]")] == \
        ["cards in hand of player 0", "cards in board of player 1", "seen in deck[2]", "slot[3] of player 1"]
    cards = tmp_path / "cards.yaml"          # rows not by player, numbered columns: the indices as written
    cards.write_text("model: cards\nenums:\n  Colour: [red, blue]\n  Place: [deck, hand]\nvariables:\n"
                     "  loc: {type: Place, per: [Colour, 1..3], init: deck, label: card}\nactions: []\n")
    assert Names.of(load_model(str(cards))).slot("loc[blue][3]") == "card[blue][3]"     # was card[3][blue]
    draw = expr_words(model, model.action("draw").guard)
    assert "cards in deck of the active player > 0" in draw and "cards in deck of player p == 0" in draw
    assert [expr_words(model, a.target) for a in model.action("play").effects][-2:] == ["seen in z[1]", "seen in z[2]"]
    assert split_element("cards in hand of player 0") == ("cards in hand", "0")
    dominion = load_model(str(LOVE_LETTER.parent / "dominion.yaml"))        # the example that labels one
    assert Names.of(dominion).slot("cards[1][play]") == "cards in play of player 1"


def test_an_exported_condition_writes_a_two_dimensional_element_as_the_model_does(tmp_path):
    """The Mermaid export's conditions read in display names, as the reports' diagrams do; its `%% turnproof`
    comments keep the model's names and a 2-D element's two indices (not its flat position), so that
    import-mermaid reads them back; so does the JSON export."""
    path = tmp_path / "grid.yaml"
    path.write_text(GRID.read_text().replace("  - name: Draw\n", "  - name: Draw\n    next:\n      - {to: Play, when: "
                                             "\"cards[active][hand] > 0\"}\n      - {to: TURN_END}\n")
                    .replace("init: 1}", "init: 1, label: cards in}"))
    chart = mermaid.phase_mermaid(load_model(str(path)))
    assert "when: cards in hand of the active player #gt; 0" in chart
    assert "%% turnproof when Draw --> Play: cards[active][hand] > 0" in chart
    (draw,) = [a for a in model_json(load_model(str(path)))["actions"] if a["name"] == "draw"]   # export --to json
    assert "cards[active][deck] > 0" in draw["guard"] and draw["effects"]["cards[active][hand]"] == \
        "cards[active][hand] + 1"
