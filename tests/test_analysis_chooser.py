"""`chooser:` and `by:` tell the analyses who acts: no nondeterministic-must finding when the chooser is
named, and order-dependence only between actions two different players may take at the same moment."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_analysis_support import analyse, fixture, of_kind
from test_lang_errors import the_error, where

from verifier.ir.model import RANDOM, RULES, UNSTATED
from verifier.lang import load_model

CHOOSER = fixture("chooser")


def unnamed(tmp_path) -> str:
    """The same model with every `by:` and `chooser:` line removed."""
    text = re.sub(r"\n    (by|chooser): [^\n]*", "", Path(CHOOSER).read_text())
    path = tmp_path / "unnamed.yaml"
    path.write_text(text)
    return str(path)


def subjects(findings, kind: str) -> list[str]:
    return sorted(of_kind(findings, kind))


def test_without_names_every_action_is_the_active_players(tmp_path):
    """Without `by:` or `chooser:` an action is the active player's for every analysis: the order
    of one player's own moves is theirs (no order-dependence between cast and tap), and they pick
    their own choices (no nondeterministic-must for pay); counter is now the active player's too."""
    findings = analyse(unnamed(tmp_path))
    assert subjects(findings, "nondeterministic-must") == []
    assert subjects(findings, "order-dependence") == []


def test_a_chooser_marked_unstated_is_a_finding(tmp_path):
    path = tmp_path / "unstated.yaml"
    path.write_text(Path(CHOOSER).read_text().replace("    chooser: active\n", "    chooser: unstated\n"))
    assert load_model(str(path)).action("pay").chooser == UNSTATED
    found = of_kind(analyse(str(path)), "nondeterministic-must")
    assert list(found) == ["pay"] and "do not say who chooses" in found["pay"].message


def test_named_choosers_and_actors_remove_them_and_keep_the_race():
    findings = analyse(CHOOSER)
    assert subjects(findings, "nondeterministic-must") == []
    assert subjects(findings, "order-dependence") == ["cast|counter"]
    race = of_kind(findings, "order-dependence")["cast|counter"]
    assert race.evidence["confirmed_on_reached_state"] is True


def test_chooser_forms(tmp_path):
    model = load_model(CHOOSER)
    assert model.action("pay").chooser is not None and model.action("cast").chooser is not None
    assert model.action("counter").chooser is not None       # a written by: names the chooser
    text = Path(CHOOSER).read_text().replace("    chooser: active\n", "    chooser: random\n")
    path = tmp_path / "random.yaml"
    path.write_text(text.replace("  - name: counter\n", "  - name: counter\n    chooser: rules\n"))
    model = load_model(str(path))
    assert model.action("pay").chooser == RANDOM and model.action("counter").chooser == RULES


CASES = [
    ("chooser without choices", "  - name: counter\n", "  - name: counter\n    chooser: random\n",
     "chooser says who picks the values of choose:", "random\n    phase: Main\n    by", "chooser: rules"),
    ("chooser of the wrong type", "    chooser: active\n", "    chooser: paid\n",
     "expected an integer, found a boolean", "paid\n", "if cond"),
]


@pytest.mark.parametrize("what,old,new,message,needle,hint", CASES, ids=[c[0] for c in CASES])
def test_error(tmp_path, what, old, new, message, needle, hint):
    path = tmp_path / "model.yaml"
    path.write_text(Path(CHOOSER).read_text().replace(old, new, 1))
    error = the_error(path, message)
    assert str(error.span) == where(path, needle)
    assert error.hint and hint in error.hint, error.hint
