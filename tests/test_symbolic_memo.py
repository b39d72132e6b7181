"""The encoding's memo of an action's guard and effects (`Encoding._memo`): what it returns is what
encoding them afresh gives, for every action, state and choice values asked in any order, and
nothing is shared between models (two models differing in one effect or one parameter)."""
from __future__ import annotations

from dataclasses import replace

import z3

from verifier.engines.symbolic.encode import Encoding, conj
from verifier.engines.symbolic.examples import deck_game, sub
from verifier.ir.expr import Const
from verifier.ir.model import Assign


def _same(a, b) -> bool:
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a.eq(b)


def _asked(enc: Encoding):
    """Every (action, state, choice terms) the encoding asks: the relation's symbols, the
    enumerated values (one differing in one choice value from the next), in `cur` and `nxt`."""
    for a in enc.actions:
        for st in (enc.cur, enc.nxt):
            yield a, st, enc.choices(a, "t")
            yield from ((a, st, env) for env in enc.choice_domain(a, st) or [])


def test_memo_gives_what_a_fresh_encoding_gives_in_any_order():
    model = deck_game(None)
    memo = Encoding(model)
    asked = list(_asked(memo))
    assert any(len(env) == 1 for _, _, env in asked), "some action has a choice"
    for order in (asked, asked[::-1]):
        for a, st, env in order:
            fresh = Encoding(model)
            assert _same(memo.effects(a, st, env), fresh._effects(a, st, env))
            assert _same(memo.guard(a, st, env), fresh.encode(model.actions[a].guard, st, env))


def test_choice_values_and_states_are_told_apart():
    enc = Encoding(deck_game(None))
    draw = next(a for a in enc.actions if enc.model.actions[a].name == "draw")
    one, two = enc.choice_domain(draw, enc.cur)
    pile = enc.offsets["pile"][0]
    assert not enc.effects(draw, enc.cur, one)[0][pile].eq(enc.effects(draw, enc.cur, two)[0][pile])
    assert not enc.effects(draw, enc.cur, one)[0][pile].eq(enc.effects(draw, enc.nxt, one)[0][pile])


def test_a_step_keeps_the_slots_it_does_not_assign_in_any_pair_of_states():
    enc = Encoding(deck_game(None))
    pairs = [(enc.cur, enc.nxt), (enc.cur, enc.state(1)), (enc.state(0), enc.state(1)), (enc.nxt, enc.cur),
             (enc.state(1), enc.nxt)]
    for src, dst in pairs + pairs[::-1]:
        for a in enc.actions:
            env = enc.choices(a, "t")
            new, _, _ = enc.effects(a, src, env)
            direct = conj(enc.enabled(a, src, env), *(x == y for x, y in zip(dst.slots, new)))
            assert enc.step(a, src, dst, env).eq(direct)


def _relation_after_error(model):
    enc = Encoding(model)
    assert enc.error is not None      # fills the memo first with the enumerated choices
    return enc.relation


def test_models_differing_in_one_effect_or_one_parameter_share_nothing():
    base = deck_game(10)
    play = next(i for i, a in enumerate(base.actions) if a.name == "play")
    (effect,) = base.actions[play].effects
    changed = replace(base.actions[play], effects=(Assign(effect.target, sub(effect.target, Const(2))),))
    other_effect = replace(base, actions=base.actions[:play] + (changed,) + base.actions[play + 1:])
    before = _relation_after_error(base)
    assert not before.eq(_relation_after_error(other_effect))
    assert not before.eq(_relation_after_error(deck_game(11)))
    assert before.eq(_relation_after_error(deck_game(10)))
    s = z3.Solver()      # the changed effect is in the relation: play takes two cards there
    enc = Encoding(other_effect)
    hand = enc.offsets["hand"][0]
    s.add(enc.relation, enc.act("t") == play, enc.cur.slots[enc.offsets["active"][0]] == 0,
          enc.nxt.slots[hand] != enc.cur.slots[hand] - 2)
    assert s.check() == z3.unsat
