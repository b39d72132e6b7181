"""2-D arrays (`per: [player, Zone]`, indexed `x[p][z]`): stored flat, so every engine and the Promela
export see an ordinary array; the elements keep their two-index names in traces."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_lang_errors import the_error, where

from verifier.engines.explicit import ExplicitEngine, explore
from verifier.engines.symbolic.engine import SymbolicEngine
from verifier.ir.props import DeadlockFree, Invariant, Reachable
from verifier.lang import load_model
from verifier.lang.expressions import parse_expression
from verifier.lang.properties import model_scope
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

MODEL = Path(__file__).parent / "fixtures" / "lang" / "grid.yaml"


def claims(model):
    scope = model_scope(model)

    def read(text: str):
        return parse_expression(text, scope, "bool")

    return [Invariant(id="conserved", statement="cards are conserved",
                      expr=read("forall p in player: cards[p][deck] + cards[p][hand] + cards[p][board] == 3")),
            Reachable(id="board-full", statement="a board fills", expr=read("cards[1][board] == 3 and seen[2][board]")),
            DeadlockFree(id="df", statement="no deadlock")]


def test_elements_are_named_by_both_indices():
    model = load_model(str(MODEL)).instantiate()
    names = [s.name for s in layout(model).slots]
    assert names[2:5] == ["cards[0][deck]", "cards[0][hand]", "cards[0][board]"]
    assert names[-1] == "seen[2][board]" and len(names) == 2 + 6 + 6


def test_explicit_and_symbolic_agree():
    model = load_model(str(MODEL)).instantiate()
    props = claims(model)
    explicit = ExplicitEngine().check(model, props, Budget())
    compact = ExplicitEngine(store="compact").check(model, props, Budget())
    symbolic = SymbolicEngine().check(model, props, Budget())
    assert [r.verdict for r in explicit] == [Verdict.HOLDS] * 3 == [r.verdict for r in compact]
    assert [r.verdict for r in symbolic] == [Verdict.PROVED, Verdict.HOLDS, Verdict.PROVED]
    assert len(explore(model).states) == 166                     # SPIN agrees: test_spin_crosscheck


def test_an_inner_index_out_of_its_domain_is_a_model_error_with_a_trace(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text(MODEL.read_text().replace("seen[active + 1][hand]: true", "seen[hand][active + 2]: true")
                    .replace("per: [1..2, Zone]", "per: [Zone, 1..2]").replace("seen[q + 1][z]", "seen[z][q + 1]")
                    .replace("not seen[2][deck]", "not seen[deck][2]"))
    model = load_model(str(path)).instantiate()
    (result,) = ExplicitEngine().check(model, [DeadlockFree(id="df", statement="no deadlock")], Budget())
    assert result.verdict is Verdict.UNKNOWN and "out of range for seen (a 2-D array" in result.reason
    assert result.trace is not None and replay(layout(model), result.trace)


GRID = MODEL.read_text()
CASES = [
    ("one domain in a list", "per: [1..2, Zone]", "per: [Zone]", "two, found 1", "[Zone]", "per: [player, Zone]"),
    ("three domains", "per: [1..2, Zone]", "per: [1..2, Zone, Zone]", "two, found 3", "[1..2, Zone, Zone]",
     "per: [player, Zone]"),
    ("comma index", 'when: "cards[active][deck] > 0', 'when: "cards[active, deck] > 0', "brackets each",
     "cards[active, deck]", "write cards[i][j]"),
    ("one index of two", 'when: "cards[active][deck] > 0', 'when: "cards[active] > 0', "give two indices, found 1",
     "cards[active] >", "write cards[i][j]"),
    ("two indices of one", "  seen:", "  flat: {type: bool, per: Zone, init: false}\n  seen:",
     "has one index, found 2", "flat[deck][deck]", "write flat[i]"),
    ("rows of the wrong width", "per: [1..2, Zone], init: false", "per: [1..2, Zone], init: [[true], [true]]",
     "is 2 by 3", "[[true], [true]]", "init: [[1, 0, 0], [1, 0, 0]]"),
    ("symmetry", "players: 2\n", "players: 2\nsymmetry: players\n", "does not cover 2-D arrays", "cards:",
     "remove the symmetry line"),
    ("inner type", "cards[active][deck] - 1", "cards[active][1] - 1", "needs a value of enum Zone",
     "1]", "cannot be mixed"),
]


@pytest.mark.parametrize("what,old,new,message,needle,hint", CASES, ids=[c[0] for c in CASES])
def test_error(tmp_path, what, old, new, message, needle, hint):
    text = GRID.replace(old, new, 1)
    if what == "two indices of one":
        text = text.replace("not seen[2][deck]", "not flat[deck][deck]")
    path = tmp_path / "model.yaml"
    path.write_text(text)
    error = the_error(path, message)
    assert str(error.span).startswith(where(path, needle)), (str(error.span), where(path, needle))
    assert error.hint and hint in error.hint, error.hint
