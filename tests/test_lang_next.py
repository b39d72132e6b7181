"""Language v2, part 2: deterministic `next:` (first match wins, `otherwise:`), `next_any:` (alternatives),
the old `next:` lists, and `on_enter` when a phase is entered again."""
from __future__ import annotations

import pytest
from test_lang_errors import the_error, where, write

from verifier.engines.explicit import explore
from verifier.ir.expr import pretty
from verifier.lang import check_model, load_model

MODEL = """\
model: nxt
players: 2
variables:
  c: {type: bool, init: false}
  k: {type: 0..3, init: 0}
phases:
  - name: A
    on_enter: {k: "min(k + 1, 3)"}
    next:
      - {to: B, when: "c", label: "on"}
      - {to: TURN_END, when: "k == 3"}
      - {otherwise: A}
  - name: B
  - name: C
    steps:
      - name: C1
        on_enter: {c: false}
      - name: C2
        next: [{to: C, when: "k < 3"}, {otherwise: TURN_END}]
    on_enter: {k: 0}
actions:
  - {name: flip, phase: A, when: "not c", do: {c: true}}
"""


def other(tmp_path, text: str):
    """A second model file beside the first."""
    (tmp_path / "other").mkdir(exist_ok=True)
    return write(tmp_path / "other", text=text)


def actions(model) -> dict[str, tuple[str, dict[str, str]]]:
    show = model.enum_value_name
    return {a.name: (pretty(a.guard, show), {pretty(e.target): pretty(e.value, show) for e in a.effects})
            for a in model.actions}


def test_first_match_wins_and_otherwise(tmp_path):
    model, warnings = check_model(str(write(tmp_path, text=MODEL)))
    got = actions(model)
    assert not warnings
    assert got["end A -> B"][0] == "(phase == A) and c"
    assert got["pass turn from A"][0] == "(phase == A) and (k == 3) and (not c)"
    assert got["end A -> A"][0] == "(phase == A) and (not c) and (not (k == 3))"


def test_a_phase_that_loops_to_itself_runs_on_enter_again(tmp_path):
    got = actions(load_model(str(write(tmp_path, text=MODEL))))
    assert got["end A -> A"][1] == {"phase": "A", "k": "min(k + 1, 3)"}


def test_next_to_the_enclosing_phase_enters_it_again(tmp_path):
    got = actions(load_model(str(write(tmp_path, text=MODEL))))
    assert got["end C2 -> C1"][1] == {"phase": "C1", "k": "0", "c": "false"}
    assert got["end C1"][1] == {"phase": "C2"}      # the default next step does not re-enter C


def test_next_any_keeps_the_alternatives(tmp_path):
    text = MODEL.replace("    next:\n      - {to: B", "    next_any:\n      - {to: B") \
        .replace("      - {otherwise: A}\n", "      - {to: A}\n")
    model, warnings = check_model(str(write(tmp_path, text=text)))
    got = actions(model)
    assert not warnings
    assert got["end A -> A"][0] == "phase == A" and got["end A -> B"][0] == "(phase == A) and c"


def test_an_old_list_that_only_makes_sense_as_alternatives_is_read_so_with_a_warning(tmp_path):
    text = MODEL.replace('      - {to: B, when: "c", label: "on"}\n', '      - {to: B, label: "on"}\n') \
        .replace("      - {otherwise: A}\n", "")
    path = write(tmp_path, text=text)
    model, warnings = check_model(str(path))
    assert [str(w.span) for w in warnings] == [where(path, "- {to: B")]
    assert "read as next_any:" in warnings[0].message and "next_any:" in warnings[0].hint
    alternatives = load_model(str(other(tmp_path, text.replace("    next:\n      - {to: B",
                                                                            "    next_any:\n      - {to: B"))))
    assert actions(model) == actions(alternatives)


def test_an_unconditional_last_entry_is_read_first_match_with_a_warning(tmp_path):
    path = write(tmp_path, text=MODEL.replace("      - {otherwise: A}\n", "      - {to: A}\n"))
    model, warnings = check_model(str(path))
    assert [str(w.span) for w in warnings] == [where(path, "{to: A}")]
    assert "otherwise" in warnings[0].hint
    assert actions(model) == actions(load_model(str(other(tmp_path, MODEL))))


def test_deterministic_next_changes_the_state_space_as_documented(tmp_path):
    """First match: from A with c, play must go to B; with next_any it may also stay in A."""
    first = load_model(str(write(tmp_path, text=MODEL))).instantiate()
    text = MODEL.replace("    next:\n      - {to: B", "    next_any:\n      - {to: B") \
        .replace("      - {otherwise: A}\n", "      - {to: A}\n")
    alt = load_model(str(other(tmp_path, text))).instantiate()
    assert explore(first).transitions < explore(alt).transitions


CASES = [
    # (what, old, new, message, needle, hint)
    ("otherwise not last", "      - {otherwise: A}\n", "      - {otherwise: A}\n      - {to: B}\n",
     "'otherwise' is the last entry", "{otherwise: A}", "put it last"),
    ("otherwise with a condition", "{otherwise: A}", '{otherwise: A, when: "c"}', "'otherwise' is the last entry",
     "{otherwise: A,", "without when"),
    ("entry with to and otherwise", "{otherwise: A}", "{otherwise: A, to: B}", "needs either 'to' or 'otherwise'",
     "{otherwise: A, to", "as the last entry"),
    ("otherwise names an unknown phase", "{otherwise: A}", "{otherwise: Q}", "next names an unknown phase 'Q'",
     "{otherwise: Q}", "phases"),
    ("next and next_any together", "  - name: B\n", "  - name: B\n    next: [{to: C}]\n    next_any: [{to: C}]\n",
     "phase B has both next: and next_any:", "[{to: C}]\n  - name: C", "keep one"),
    ("next not a list", "  - name: B\n", "  - name: B\n    next: C\n", "next must be a list of entries",
     "C\n  - name: C", "otherwise"),
    ("unknown key in an entry", '{to: B, when: "c", label: "on"}', '{to: B, whne: "c"}',
     "unknown field 'whne' in a next entry", "whne", "did you mean 'when'"),
]


@pytest.mark.parametrize("what,old,new,message,needle,hint", CASES, ids=[c[0] for c in CASES])
def test_error(tmp_path, what, old, new, message, needle, hint):
    path = write(tmp_path, old, new, text=MODEL)
    error = the_error(path, message)
    assert str(error.span) == where(path, needle)
    assert error.hint and hint in error.hint, error.hint
