"""The layered ranking synthesis on small models whose termination arguments are known: one
needing two lexicographic layers, one needing a supporting invariant, one whose layer is
blocked by transitions that only a fact over several slots excludes, and near misses that do
not terminate (never PROVED; the explicit engine finds the lasso)."""
from __future__ import annotations

import gc

import numpy as np
import z3

from verifier.engines.explicit import explore
from verifier.engines.symbolic import SymbolicEngine, seen, strengthen
from verifier.engines.symbolic import engine as symbolic_engine
from verifier.engines.symbolic.core import Effort, Outcome, Safety
from verifier.engines.symbolic.encode import FALSE as NEVER
from verifier.engines.symbolic.encode import Encoding, negate
from verifier.engines.symbolic.encode import conj as both
from verifier.engines.symbolic.engine import _Run
from verifier.engines.symbolic.examples import gt, rng, sub
from verifier.engines.symbolic.pdr import pdr
from verifier.engines.symbolic.ranking import synthesize
from verifier.engines.symbolic.seen import Seen
from verifier.engines.symbolic.strengthen import exclude, recheck
from verifier.ir.expr import FALSE, TRUE, Const, Op, Param, Var, app, conj, disj, eq, neg
from verifier.ir.model import Action, Assign, BoolType, Model, ParamDecl, Variable
from verifier.ir.props import Terminates
from verifier.portfolio.auto import AutoEngine
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

BUDGET = Budget(rlimit=60_000_000)
GAME = Terminates(id="game-ends", scope="game")


def nested_countdown(n: int | None = None) -> Model:
    """x counts down from N; each step of x refills y to N, which counts down too. For N free
    and unbounded no single linear function decreases on both: (x, y) lexicographically does."""
    N, x, y = Param("N"), Var("x"), Var("y")
    return Model(name="nested", params=(ParamDecl("N", 3, lo=1),), param_values=(("N", n),),
                 variables=(Variable("x", rng(0, N), init=(N,)), Variable("y", rng(0, N), init=(N,))),
                 actions=(Action("outer", guard=gt(x, 0), effects=(Assign(x, sub(x, 1)), Assign(y, N))),
                          Action("inner", guard=gt(y, 0), effects=(Assign(y, sub(y, 1)),))),
                 end=conj(eq(x, 0), eq(y, 0)))


def exclusive_marks(both_reachable: bool = False) -> Model:
    """n counts down to the end; a player may set mark a or mark b, never both (unless
    `both_reachable`). With both marks set, `spin` loops forever: the game terminates exactly
    when that state is unreachable, which the declared ranges alone do not say."""
    n, a, b, c = Var("n"), Var("a"), Var("b"), Var("c")
    set_b_guard = TRUE if both_reachable else neg(a)
    return Model(name="marks", variables=(
        Variable("n", rng(0, 3), init=(Const(3),)), Variable("a", BoolType(), init=(FALSE,)),
        Variable("b", BoolType(), init=(FALSE,)), Variable("c", BoolType(), init=(FALSE,))),
        actions=(Action("step", guard=gt(n, 0), effects=(Assign(n, sub(n, 1)),)),
                 Action("set_a", guard=conj(neg(a), neg(b)), effects=(Assign(a, TRUE),)),
                 Action("set_b", guard=conj(neg(b), set_b_guard), effects=(Assign(b, TRUE),)),
                 Action("spin", guard=conj(a, b), effects=(Assign(c, neg(c)),))),
        end=conj(eq(n, 0), app(Op.OR, a, b), neg(conj(a, b))))


def weak_support(enc: Encoding):
    return both(enc.param_constraints(), enc.ranges(enc.cur))


def test_two_layers_when_no_single_linear_function_exists():
    enc = Encoding(nested_countdown(None))
    ranking = synthesize(enc, list(enc.actions), negate(enc.end), weak_support(enc), Effort(60_000_000))
    assert ranking.components is not None, ranking.reason
    first, second = ranking.components
    names = lambda acts: [enc.model.actions[i].name for i in acts]  # noqa: E731
    assert names(first.strict) == ["outer"] and names(first.kept) == ["inner"]
    assert names(second.strict) == ["inner"] and second.kept == []
    (r,) = SymbolicEngine().check(nested_countdown(None), [GAME], BUDGET)
    assert r.verdict is Verdict.PROVED and r.engine == "ranking", r.reason
    assert r.evidence["ranking"].startswith("lexicographic: first x")


def test_a_supporting_invariant_is_proved_and_stated():
    enc = Encoding(exclusive_marks())
    ranking = synthesize(enc, list(enc.actions), negate(enc.end), weak_support(enc), Effort(60_000_000))
    assert ranking.components is not None, ranking.reason
    assert "by Houdini" in ranking.reason
    # the invariant it needed: never both marks
    c = {s.name: x for s, x in zip(enc.slots, enc.cur.slots)}
    lemmas = exclude(enc, weak_support(enc), [[3, 1, 1, 0]], Effort(60_000_000), Seen(enc).states)
    assert not isinstance(lemmas, str)
    s = z3.Solver()
    s.add(lemmas.term, c["a"] == 1, c["b"] == 1)
    assert s.check() == z3.unsat
    assert recheck(enc, weak_support(enc), lemmas.term, Effort(60_000_000)) == ""
    (r,) = SymbolicEngine().check(exclusive_marks(), [GAME], BUDGET)
    assert r.verdict is Verdict.PROVED and r.engine == "ranking", r.reason


def test_a_reachable_loop_is_never_proved_to_end():
    model = exclusive_marks(both_reachable=True)
    enc = Encoding(model)
    ranking = synthesize(enc, list(enc.actions), negate(enc.end), weak_support(enc), Effort(60_000_000))
    assert ranking.components is None
    # the clause "never both marks" is no invariant here: Houdini drops it, and the re-check refutes it
    lemmas = exclude(enc, weak_support(enc), [[3, 1, 1, 0]], Effort(60_000_000), Seen(enc).states)
    assert not isinstance(lemmas, str)
    c = {s.name: x for s, x in zip(enc.slots, enc.cur.slots)}
    assert "internal" in recheck(enc, weak_support(enc), z3.Not(z3.And(c["a"] == 1, c["b"] == 1)), Effort(60_000_000))
    (r,) = SymbolicEngine().check(model, [GAME], BUDGET)
    assert r.verdict is Verdict.UNKNOWN, r.reason
    (a,) = AutoEngine().check(model, [GAME], BUDGET)
    assert a.verdict is Verdict.VIOLATED and a.trace.loop_start is not None
    states = replay(layout(model), a.trace)
    assert states[-1] == states[a.trace.loop_start]


def test_the_nested_countdown_with_a_fixed_bound_needs_one_layer():
    (r,) = SymbolicEngine().check(nested_countdown(4), [GAME], BUDGET)
    assert r.verdict is Verdict.HOLDS and r.engine == "ranking", r.reason


def spend_then_refill(refill_once: bool = True) -> Model:
    """Rounds r count down; in each, cards h are spent (phase p = 0), then the hand is refilled
    once (p = 1) before the next round. No linear function of (r, p, h) ranks spending and
    refilling, which happen in different phases; "refill can fire" falls from 1 to 0 when it
    fires. Without `refill_once` the refill may fire again and again (it takes a card back)."""
    p, h, r = Var("p"), Var("h"), Var("r")
    refill_guard = conj(eq(p, 1), app(Op.LT, h, Const(3))) if refill_once else eq(p, 1)
    refill_to = Const(3) if refill_once else app(Op.ITE, app(Op.LT, h, Const(3)), Const(3), Const(2))
    return Model(name="refill", variables=(
        Variable("p", rng(0, 1), init=(Const(0),)), Variable("h", rng(0, 3), init=(Const(3),)),
        Variable("r", rng(0, 3), init=(Const(3),))),
        actions=(Action("spend", guard=conj(eq(p, 0), gt(h, 0)), effects=(Assign(h, sub(h, 1)),)),
                 Action("advance", guard=eq(p, 0), effects=(Assign(p, Const(1)),)),
                 Action("refill", guard=refill_guard, effects=(Assign(h, refill_to),)),
                 Action("next", guard=conj(eq(p, 1), gt(r, 0)), effects=(Assign(p, Const(0)), Assign(r, sub(r, 1))))),
        end=conj(eq(r, 0), eq(p, 1)))


def test_an_action_enabled_once_per_phase_is_ranked_by_its_guard():
    enc = Encoding(spend_then_refill())
    ranking = synthesize(enc, list(enc.actions), negate(enc.end), weak_support(enc), Effort(60_000_000))
    assert ranking.components is not None, ranking.reason
    assert any("[refill enabled]" in c.text for c in ranking.components), [c.text for c in ranking.components]
    (r,) = SymbolicEngine().check(spend_then_refill(), [GAME], BUDGET)
    assert r.verdict is Verdict.PROVED and r.engine == "ranking", r.reason


def test_a_refill_that_can_fire_forever_is_never_ranked():
    model = spend_then_refill(refill_once=False)
    (r,) = SymbolicEngine().check(model, [GAME], BUDGET)
    assert r.verdict is Verdict.UNKNOWN and "with the guards of the actions left as terms" in r.reason, r.reason
    (a,) = AutoEngine().check(model, [GAME], BUDGET)
    assert a.verdict is Verdict.VIOLATED and a.trace.loop_start is not None


def rounds(cards: int = 2, second_may_skip: bool = False, reset_each_turn: bool = False) -> Model:
    """Two players take turns, each drawing a card while their deck has one (forced: `advance`
    waits for it), and the game ends in the second player's turn once both decks are empty.
    `drew_round` (somebody drew this round) is cleared when the second player passes (with
    `reset_each_turn`, at every pass). Once the draws are ranked, a pass needs
    ``2*drew_round - active``: a pass back to the first player with nobody having drawn this
    round is unreachable, which only a fact over three slots says (in the second player's turn,
    with nobody having drawn this round, the first deck is empty). With `second_may_skip` the
    second player need not draw, and passes back and forth for ever."""
    a, ph, d0, d1, drew, dr, over = (Var(x) for x in ("active", "phase", "d0", "d1", "drew", "drew_round", "over"))
    mine = app(Op.ITE, eq(a, 0), d0, d1)
    empty = conj(eq(d0, 0), eq(d1, 0))
    forced = disj(drew, eq(mine, 0), eq(a, 1)) if second_may_skip else disj(drew, eq(mine, 0))
    cleared = FALSE if reset_each_turn else app(Op.ITE, eq(a, 1), FALSE, dr)
    return Model(name="rounds", variables=(
        Variable("active", rng(0, 1), init=(Const(0),)), Variable("phase", rng(0, 1), init=(Const(0),)),
        Variable("d0", rng(0, cards), init=(Const(cards),)), Variable("d1", rng(0, cards), init=(Const(cards),)),
        Variable("drew", BoolType(), init=(FALSE,)), Variable("drew_round", BoolType(), init=(FALSE,)),
        Variable("over", BoolType(), init=(FALSE,))),
        actions=(Action("draw", guard=conj(eq(ph, 0), neg(drew), gt(mine, 0)),
                        effects=(Assign(d0, app(Op.ITE, eq(a, 0), sub(d0, 1), d0)),
                                 Assign(d1, app(Op.ITE, eq(a, 1), sub(d1, 1), d1)), Assign(drew, TRUE), Assign(dr, TRUE))),
                 Action("advance", guard=conj(eq(ph, 0), forced), effects=(Assign(ph, Const(1)),)),
                 Action("finish", guard=conj(eq(ph, 1), eq(a, 1), empty), effects=(Assign(over, TRUE),)),
                 Action("pass", guard=conj(eq(ph, 1), neg(conj(eq(a, 1), empty))),
                        effects=(Assign(a, sub(Const(1), a)), Assign(ph, Const(0)), Assign(drew, FALSE),
                                 Assign(dr, cleared)))),
        end=over)


def test_a_layer_blocked_by_an_unreachable_change_is_found_past_it():
    enc = Encoding(rounds())

    def prove(target, share):
        return pdr(Safety(enc, target, NEVER), Effort(int(60_000_000 * share)))

    ranking = synthesize(enc, list(enc.actions), negate(enc.end), weak_support(enc), Effort(60_000_000), prove)
    assert ranking.components is not None, ranking.reason
    assert "by PDR" in ranking.reason and not any("enabled]" in c.text for c in ranking.components), \
        (ranking.reason, [c.text for c in ranking.components])
    (r,) = SymbolicEngine().check(rounds(), [GAME], BUDGET)
    assert r.verdict is Verdict.PROVED and "by PDR" in r.evidence["ranking_support"], (r.reason, r.evidence)
    assert "enabled]" not in r.evidence["ranking"], r.evidence


def test_a_second_player_who_need_not_draw_is_never_ranked():
    model = rounds(second_may_skip=True)
    (r,) = SymbolicEngine().check(model, [GAME], BUDGET)
    assert r.verdict is Verdict.UNKNOWN, (r.reason, r.evidence)
    (a,) = AutoEngine().check(model, [GAME], BUDGET)
    assert a.verdict is Verdict.VIOLATED and a.trace.loop_start is not None


def asked_of_pdr(monkeypatch) -> list[Outcome]:
    """The outcomes of the questions a blocked layer asks PDR (`blocking.py`), recorded; the random
    runs off, so that the reachable states the filters read are the engine's only."""
    monkeypatch.setattr(seen, "random_states", lambda *args, **kwargs: set())
    outcomes: list[Outcome] = []
    real = _Run.unreachable

    def unreachable(self, effort):
        prove = real(self, effort)
        return lambda target, share: outcomes.append(prove(target, share)) or outcomes[-1]

    monkeypatch.setattr(_Run, "unreachable", unreachable)
    return outcomes


def test_the_explored_states_keep_reachable_changes_from_pdr(monkeypatch):
    """The moves of the engine's explored states are the reachable ones a blocked layer does not
    ask PDR about: with them, its one question is the unreachable pass, answered safe; with no
    reachable state known, PDR is first asked about moves that are reachable."""
    outcomes = asked_of_pdr(monkeypatch)
    model = rounds()
    explored = explore(model, Budget()).sample(1_000)
    (r,) = SymbolicEngine(explored=explored).check(model, [GAME], BUDGET)
    assert r.verdict is Verdict.PROVED and "by PDR" in r.evidence["ranking_support"], (r.reason, r.evidence)
    assert [o.status for o in outcomes] == ["safe"], outcomes
    outcomes.clear()
    monkeypatch.setattr(symbolic_engine, "_seen_states", lambda enc, explored, params: None)
    SymbolicEngine(explored=explored).check(model, [GAME], BUDGET)
    assert "reached" in [o.status for o in outcomes], outcomes


def test_a_wrong_seed_and_a_believed_candidate_make_no_proof(monkeypatch):
    """Planted: the only state the filters know is one no run reaches (the game over with both
    decks full), and Houdini keeps every candidate left unchecked. The invariants so believed
    exclude the states of the second player's endless passing, and a ranking follows; the re-check
    with fresh solvers refuses them, and the game that need not end is not proved to."""
    asked_of_pdr(monkeypatch)
    unreachable = np.array([[1, 0, 2, 2, 0, 0, 1]], dtype=np.int64)
    monkeypatch.setattr(symbolic_engine, "_seen_states", lambda enc, explored, params: unreachable)
    monkeypatch.setattr(strengthen, "houdini", lambda enc, support, lemmas, effort, *args, **kwargs: list(lemmas))
    (r,) = SymbolicEngine().check(rounds(second_may_skip=True), [GAME], BUDGET)
    assert r.verdict is Verdict.UNKNOWN and "internal: an invariant of the ranking search" in r.reason, r.reason


def test_a_check_leaves_its_terms_to_reference_counting_alone():
    """Z3 gives a freed term's id to the next term made, and Spacer's answers follow the ids: terms
    freed by the garbage collector, whose passes come as other threads allocate, would make a later
    claim's invariant depend on the load. A check's runs, encodings and filters' states are freed as
    soon as it ends (no cycle among them: planted, a `Seen` given the run's own bound method fails)."""
    model = rounds()
    explored = explore(model, Budget()).sample(1_000)
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        (r,) = SymbolicEngine(explored=explored).check(model, [GAME], BUDGET)
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage if isinstance(o, (_Run, Encoding, Seen))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert r.verdict is Verdict.PROVED, r.reason
    assert not left, left
