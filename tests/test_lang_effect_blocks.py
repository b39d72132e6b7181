"""Blocks of effects named under `define:` (docs/LANGUAGE.md, "Repetition"): used by name wherever
effects are written, with arguments, in lists with mappings; each use is the block's assignments
(the engines see plain effects); unknown names, cycles, built-in names and double assignments are
errors at their position."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_lang_errors import where

from verifier.cli import main
from verifier.diagnostics import ModelError
from verifier.ir.expr import pretty
from verifier.lang import effect_blocks, load_model

FIXTURES = Path(__file__).parent / "fixtures" / "lang"
MODEL = FIXTURES / "effect_blocks.yaml"
ROOT = Path(__file__).resolve().parents[1]


def effects(model, action: str) -> dict[str, str]:
    return {pretty(e.target): pretty(e.value) for e in model.action(action).effects}


def test_a_use_is_the_blocks_assignments_with_its_arguments():
    model = load_model(str(MODEL))
    assert effects(model, "reset") == {"hand[0]": "2", "mana[0]": "1", "hand[1]": "2", "mana[1]": "1"}
    # on_enter of the first phase runs at the turn change: refill(active) for the player whose turn starts
    turn = effects(model, "pass turn")
    assert turn["hand[(active + 1) % 2]"] == "2" and turn["mana[(active + 1) % 2]"] == "1"
    assert turn["drawn"] == "false"


def test_written_out_the_model_is_the_same(tmp_path):
    plain = MODEL.read_text().replace("on_enter: [refill(active), {drawn: false}]",
                                      "on_enter:\n      hand[active]: HAND\n      mana[active]: 1\n      drawn: false")
    plain = plain.replace("do: both", "do:\n      for p in player:\n        hand[p]: HAND\n        mana[p]: 1")
    path = tmp_path / "plain.yaml"
    path.write_text(plain)
    a, b = load_model(str(MODEL)), load_model(str(path))
    assert a.actions == b.actions


def test_alpha_clash_counts_its_clash_steps_with_one_block():
    model = load_model(str(ROOT / "models" / "alpha_clash.yaml"))
    into = [a for a in model.actions if a.target_phase in ("C2Counter", "C3Obstruct", "C6Damage")]
    assert into and all(effects(model, a.name)["cseq"] == "min(cseq + 1, 6)" for a in into)


BAD = [
    # (what, old, new, message, needle of the reported place)
    ("an unknown block", "do: both", "do: bothh", "unknown block of effects 'bothh' in action reset", "bothh"),
    ("a block that uses itself", "    - refill(1)\n", "    - refill(1)\n    - both\n",
     "block of effects both uses itself (both → both)", "both\n  ready"),
    ("two blocks that use each other", "  ready:", "  ping: [pong]\n  pong: [ping]\n  ready:",
     "block of effects ping uses itself (ping → pong → ping)", "ping]"),
    ("a built-in name", "  both:", "  phase: {drawn: true}\n  both:", "phase", "phase: {"),
    ("an expression used as a block", "do: both", "do: ready",
     "'ready' is a definition of an expression, not a block of effects", "ready\n"),
    ("a wrong argument count", "[refill(active), {", "[\"refill(active, 1)\", {", "block refill takes 1 argument, "
     "found 2", "refill(active, 1)"),          # in a flow list, a use with two arguments is quoted
    ("an element assigned twice", "do: both", "do: [both, refill(0)]",
     "assigns hand[0] twice: in block both and in block refill(0)", "refill(0)]"),
    ("a caller's choice read in a block", "    mana[p]: 1\n", "    mana[p]: n\n", "unknown name 'n'", "n\n  both"),
    ("an error in a block nothing uses", "  ready:", "  unused: {drawn: nope}\n  ready:", "unknown name 'nope'",
     "nope"),
    ("a number as a block", "do: both", "do: [3]", "the effects of action reset are a mapping, a block's name",
     "3]"),
]


@pytest.mark.parametrize(("what", "old", "new", "message", "needle"), BAD, ids=[c[0] for c in BAD])
def test_a_bad_use_is_an_error_at_its_position(tmp_path, what, old, new, message, needle):
    text = MODEL.read_text()
    assert old in text
    path = tmp_path / "bad.yaml"
    path.write_text(text.replace(old, new, 1))
    if what == "a caller's choice read in a block":
        path.write_text(path.read_text().replace("    do: both", "    choose: {n: 0..1}\n    do: both"))
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    found = [d for d in info.value.diagnostics if message in d.message]
    assert found, [d.message for d in info.value.diagnostics]
    assert str(found[0].span) == where(path, needle), what
    assert main(["lint", str(path), "-q"]) == 2


def _chain(tmp_path, blocks: list[str], use: str) -> Path:
    text = "\n".join(["model: hostile", "variables:", "  x: {type: 0..3, per: 0..3, init: 0}", "define:",
                      "  b0(p):", "    x[p]: 1", *blocks, "actions:", "  - name: a", f"    do: {use}", ""])
    path = tmp_path / "hostile.yaml"
    path.write_text(text)
    return path


def test_a_long_chain_of_blocks_is_an_error_not_a_crash(tmp_path, capsys):
    """400 blocks each using the next overflowed Python's stack (exit 4); now a positioned error."""
    path = _chain(tmp_path, [f"  b{k}(p): [b{k - 1}(p)]" for k in range(1, 400)], "b399(0)")
    assert main(["lint", str(path), "-q"]) == 2
    err = capsys.readouterr().err
    assert "is used inside more than 32 nested blocks" in err and "Traceback" not in err


def test_blocks_that_multiply_are_bounded(tmp_path, capsys, monkeypatch):
    """Each block using the one before twice doubles the assignments: a use may give at most MAX_SLOTS."""
    monkeypatch.setattr(effect_blocks, "MAX_SLOTS", 40)
    blocks = [f'  b{k}(p): ["b{k - 1}(2 * p)", "b{k - 1}(2 * p + 1)"]' for k in range(1, 30)]
    path = _chain(tmp_path, blocks, "b29(0)")
    assert main(["lint", str(path), "-q"]) == 2
    err = capsys.readouterr().err
    assert "the effects of block b6 come to more than 40 assignments" in err


SHIELD = "  shield:\n    drawn: {value: true, until: next_turn_of(active)}\n  ready:"


@pytest.mark.parametrize("use_in_action, use_on_enter", [(True, False), (True, True), (False, True), (False, False)])
def test_a_block_with_a_duration_is_judged_where_it_is_used(tmp_path, use_in_action, use_on_enter):
    """`until:` is for actions' effects: a block holding one may be used by an action, never in on_enter
    (even after an action used it), and a block nothing uses is not blamed for it."""
    text = MODEL.read_text().replace("  ready:", SHIELD, 1)
    if use_in_action:
        text = text.replace("do: both", "do: [both, shield]")
    if use_on_enter:
        text = text.replace("on_enter: [refill(active), {drawn: false}]", "on_enter: [refill(active), shield]")
    path = tmp_path / "shield.yaml"
    path.write_text(text)
    if use_on_enter:
        with pytest.raises(ModelError) as info:
            load_model(str(path))
        assert any("until: is for the effects of actions (in block shield" in d.message
                   for d in info.value.diagnostics), [d.message for d in info.value.diagnostics]
        return
    model = load_model(str(path))
    assert ("drawn_until" in effects(model, "reset")) == use_in_action


def test_a_caller_passes_its_choice_as_an_argument(tmp_path):
    path = tmp_path / "choice.yaml"
    path.write_text(MODEL.read_text().replace("    do: both", "    choose: {q: player}\n    do: [refill(q)]"))
    model = load_model(str(path))
    assert effects(model, "reset") == {"hand[q]": "2", "mana[q]": "1"}
