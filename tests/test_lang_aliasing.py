"""Two writes of one `do:` that can name the same element (`hand[q]` and `hand[active]` where q may be
the active player): a warning at the later key, with the values that make them one and a hint; none
where the guard keeps the indices apart, the later value agrees in that case, or an index is literal."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_lang_errors import where

from verifier.cli import main
from verifier.lang import aliasing, check_model

GIVE = """\
model: give
players: 3
variables:
  hand: {type: 0..3, per: player, init: 1}
  given: {type: bool, init: false}
phases:
  - name: Play
actions:
  - name: give
    phase: Play
    choose: {q: player}
    when: "not given and hand[active] > 0 and hand[q] < 3"
    do:
      hand[q]: hand[q] + 1
      hand[active]: hand[active] - 1
      given: true
"""
SAYS = "give: hand[active] and hand[q] (line 14) name one element when active == q (e.g. active = 0, q = 0)"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "give.yaml"
    path.write_text(text)
    return path


def warnings_of(tmp_path: Path, text: str) -> list[str]:
    _model, diagnostics = check_model(str(write(tmp_path, text)))
    return [d.message for d in diagnostics if d.severity == "warning"]


def test_two_writes_that_can_name_one_element_are_a_positioned_warning(tmp_path):
    path = write(tmp_path, GIVE)
    _model, (warning,) = check_model(str(path))
    assert warning.severity == "warning" and warning.message.startswith(SAYS)
    assert "the later key wins and the write to hand[q] is dropped" in warning.message
    assert str(warning.span) == where(path, "hand[active]: hand[active] - 1")
    assert 'rule the case out in when: ("active != q")' in (warning.hint or "")


@pytest.mark.parametrize("command", [["lint"], ["check", "--engine", "explicit"]])
def test_lint_and_check_print_it_and_exit_as_before(tmp_path, capsys, command):
    path = write(tmp_path, GIVE)
    assert main([*command, str(path), "-q"]) == 0
    err = capsys.readouterr().err
    assert f"{where(path, 'hand[active]: hand[active] - 1')}: warning: {SAYS}" in err and "hint: give hand" in err


@pytest.mark.parametrize("what,old,new", [
    ("the guard keeps them apart", 'hand[q] < 3"', 'hand[q] < 3 and q != active"'),
    ("the guard keeps them apart, written the other way", 'hand[q] < 3"', 'hand[q] < 3 and not (active == q)"'),
    ("the later value agrees where they meet", "hand[active]: hand[active] - 1",
     'hand[active]: "if active == q then hand[q] + 1 else hand[active] - 1"'),
    ("the earlier value agrees where they meet", "hand[q]: hand[q] + 1",
     'hand[q]: "if q == active then hand[active] - 1 else hand[q] + 1"'),
    ("a literal index (a for block, hand[0])", "hand[q]: hand[q] + 1", "hand[0]: hand[0] + 1"),
    ("two arrays", "hand[active]: hand[active] - 1\n      given: true",
     "given: true\n  - name: other\n    phase: Play\n    do:\n      hand[active]: 0"),
])
def test_no_warning_where_they_cannot_meet_or_agree(tmp_path, what, old, new):
    assert old in GIVE, what
    assert warnings_of(tmp_path, GIVE.replace(old, new)) == [], what


def test_a_choice_that_can_meet_only_some_players_names_the_values_it_meets_at(tmp_path):
    text = GIVE.replace("choose: {q: player}", "choose: {q: 1..2}")
    (message,) = warnings_of(tmp_path, text)
    assert "(e.g. active = 1, q = 1)" in message


def test_a_pair_with_more_values_to_try_than_the_limit_is_not_judged(tmp_path, monkeypatch):
    monkeypatch.setattr(aliasing, "MAX_CASES", 8)          # active 0..2 times q 0..2: nine values
    assert warnings_of(tmp_path, GIVE) == []
    monkeypatch.setattr(aliasing, "MAX_CASES", 9)
    assert len(warnings_of(tmp_path, GIVE)) == 1


def test_love_letter_writes_what_it_means_where_the_target_is_the_player():
    """Its Guard and Baron write `cards[active]` and `cards[t]` (t may be the player, when nobody else
    can be targeted) with values that agree there: no warning."""
    _model, diagnostics = check_model(str(Path(__file__).parents[1] / "examples" / "models" / "love_letter.yaml"))
    assert diagnostics == []


def test_a_model_tries_at_most_its_total_of_values_and_says_what_it_left(tmp_path):
    """200 writes to one array through a choice, no two of which meet: 19,900 pairs, past the model's
    total; the check stops there with one warning at the action (a rule of a thousand effects loads in
    bounded time)."""
    writes = "".join(f'      far[(q + {k}) % 250]: 1\n' for k in range(200))
    text = GIVE.replace("  given:", "  far: {type: 0..1, per: 0..249, init: 0}\n  given:", 1).replace(
        '      hand[q]: hand[q] + 1\n      hand[active]: hand[active] - 1\n', writes)
    assert warnings_of(tmp_path, text) == [
        f"give: not every pair of its writes was checked for naming one element (the check stops after "
        f"{aliasing.TOTAL_CASES:,} values tried in a model)"]


def test_past_its_most_warnings_the_check_says_it_stopped(tmp_path):
    """Writes that all meet: the first pairs are warned about, then one warning says the check stopped."""
    writes = "".join(f'      hand[(q + {3 * k}) % 3]: "{k % 4}"\n' for k in range(12))
    text = GIVE.replace('      hand[q]: hand[q] + 1\n      hand[active]: hand[active] - 1\n', writes)
    said = warnings_of(tmp_path, text)
    assert len(said) == aliasing.MAX_WARNINGS + 1 and all("name one element when" in w for w in said[:-1])
    assert said[-1] == (f"give: not every pair of its writes was checked for naming one element (the check "
                        f"stops after {aliasing.MAX_WARNINGS} pairs warned about in a model)")
