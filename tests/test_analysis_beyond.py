"""The analyses beyond the explored states (`analysis.beyond`) against the complete explicit
analyses: on random models whose whole state space the search can store, a search cut
after a few states and the questions it leaves decided by random runs and Z3 give the same
findings as the complete search, and every trace replays; what is not decided stays UNKNOWN."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import DEEP_COUNTER
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_analysis_support import analyse, assert_replay, fixture, load_all, of_kind
from test_explicit_differential import bools, models
from tiers import examples

from verifier.analysis import analyse_model, beyond
from verifier.cli import main as cli_main
from verifier.engines.explicit import explore
from verifier.engines.symbolic.core import Effort
from verifier.engines.symbolic.encode import Encoding
from verifier.engines.symbolic.mined import Linear, Mined, mine
from verifier.engines.symbolic.strengthen import houdini
from verifier.ir.expr import App, Const, Op, Var
from verifier.ir.model import Action, Assign, IntType, Modality, Model, Variable
from verifier.ir.props import Invariant
from verifier.lang import load_model
from verifier.resources import Budget


@st.composite
def rulebooks(draw):
    """`models()` with some actions demanded (`must`) and maybe a prohibition."""
    model = draw(models())
    acts = [replace(a, modality=draw(st.sampled_from([Modality.MAY, Modality.MUST]))) for a in model.actions]
    if draw(st.booleans()):
        acts.append(Action("ban", draw(bools()), (), modality=Modality.MUST_NOT))
    return replace(model, actions=tuple(acts))


RULEBOOKS = rulebooks()


CLAIMS = st.lists(bools(), max_size=3)


@settings(max_examples=examples(15), deadline=None)
@given(RULEBOOKS, st.integers(1, 12), CLAIMS)
def test_beyond_gives_the_complete_search_findings(model, cap, claims):
    """The random runs are 1,000 steps long here, not 100,000: these models have a few hundred
    states at most, and a longer run only circles through stored ones (measured on 40 drawn
    models: the same questions left undecided, a quarter less CPU). Random invariants, true
    or not, stand for the claims whose inductive ones may decide questions."""
    space = explore(model)
    assume(space.complete and len(space.packed) > 1)
    cap = min(cap, len(space.packed) - 1)        # the search is cut before it is complete
    _full_ctx, full = analyse_model(model)
    lemmas = [Invariant(id=f"claim{k}", expr=e) for k, e in enumerate(claims)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(beyond, "WALK_STEPS", 1_000)
        ctx, cut = analyse_model(model, Budget(max_states=cap), claims=lemmas)
    assert ctx.beyond is not None and ctx.beyond.explored == cap
    assert_replay([model], cut)
    want = {f.key for f in full}
    if not ctx.beyond.undecided:
        assert {f.key for f in cut} == want
        assert ctx.unknown_reason == ""
    else:       # undecided: what was found is real; the analyses say UNKNOWN
        assert {f.key for f in cut if f.kind != "order-dependence"} <= want
        assert "stayed undecided" in ctx.unknown_reason
    for f in cut:
        if f.kind not in ("dead-rule", "order-dependence"):
            assert f.traces          # a witness, never a bare claim


def test_dead_rule_and_gap_decided_beyond_a_cut_search():
    cut = analyse("gap_yes", budget=Budget(max_states=1))
    assert set(of_kind(cut, "gap")) == set(of_kind(analyse("gap_yes"), "gap")) != set()


def _conserved(cards: int = 9) -> Model:
    """Cards move from a deck to a pile one at a time: the pile never overflows, because
    deck + pile stays `cards`, which no induction shorter than the deck shows alone."""
    rng = IntType(Const(0), Const(cards))
    move = Action("move", App(Op.GT, (Var("deck"), Const(0))),
                  (Assign(Var("deck"), App(Op.SUB, (Var("deck"), Const(1)))),
                   Assign(Var("pile"), App(Op.ADD, (Var("pile"), Const(1))))))
    return Model("conserved", variables=(Variable("deck", rng, init=(Const(cards),)),
                                         Variable("pile", rng, init=(Const(0),))), actions=(move,))


def test_a_claim_that_holds_decides_a_gap_with_induction(monkeypatch):
    monkeypatch.setattr(beyond, "_mined", lambda *_args: ([], []))
    model = _conserved()
    kept = Invariant(id="kept", expr=App(Op.EQ, (App(Op.ADD, (Var("deck"), Var("pile"))), Const(9))))
    wrong = Invariant(id="wrong", expr=App(Op.LT, (Var("pile"), Const(5))))      # broken at the sixth move
    ctx, findings = analyse_model(model, Budget(max_states=2), claims=[wrong, kept])
    assert ctx.unknown_reason == "" and of_kind(findings, "gap") == {}
    (gap,) = [q for q in ctx.beyond.questions if (q.kind, q.subject) == ("gap", "pile|move")]
    assert (gap.answer, gap.method) == ("unreachable", "z3 (induction with 1 of the claims' invariants)")
    bare, _ = analyse_model(model, Budget(max_states=2), claims=[wrong])
    assert [q.method for q in bare.beyond.questions if q.subject == "pile|move"] != [gap.method]


def test_counters_one_action_moves_between_give_a_mined_lemma():
    model = _conserved()
    assert beyond._pools(Encoding(model.instantiate())) == [((0, 1), (1, 1))]     # deck + pile
    ctx, findings = analyse_model(model, Budget(max_states=2))
    assert ctx.unknown_reason == "" and of_kind(findings, "gap") == {}
    (gap,) = [q for q in ctx.beyond.questions if (q.kind, q.subject) == ("gap", "pile|move")]
    assert gap.answer == "unreachable" and "mined lemma" in gap.method


def _answers(ctx) -> list[tuple[str, str, str, str]]:
    return [(q.kind, q.subject, q.answer, q.method) for q in ctx.beyond.questions]


def _claims_states(model: Model, budget: Budget):
    """The states the claims' Z3 mines lemmas from where a search under `budget` stopped (the python store's)."""
    return explore(model.instantiate(), budget).sample(beyond.MINE_STATES)


def test_the_lemmas_the_claims_mined_and_proved_decide_as_mining_again_does(monkeypatch):
    """Where the claims' Z3 mined the same states of the same model (the ledger's), beyond takes its
    candidates and assumes those it proved: the largest inductive subset is the same, so are the answers."""
    model, budget = _conserved(), Budget(max_states=2)
    alone, _ = analyse_model(model, budget)
    table = _claims_states(model, budget)
    enc = Encoding(model.instantiate())
    found = mine(enc, table)
    found.alone = houdini(enc, enc.ranges(enc.cur), found.every, Effort(40_000_000))
    assert found.alone
    monkeypatch.setattr(beyond, "mine", lambda *_args: pytest.fail("mined again"))
    shared, _ = analyse_model(model, budget, mined=(table, {"mined": found}))
    assert _answers(shared) == _answers(alone) and any("mined lemma" in a[3] for a in _answers(alone))


def test_lemmas_the_claims_did_not_prove_or_mined_elsewhere_are_never_assumed():
    """A lemma no state satisfies, among the claims' candidates (not proved), or proved for other
    states than beyond mines (not its model's, as far as beyond can tell), decides nothing."""
    model, budget = load_model(fixture("gap_yes")), Budget(max_states=1)
    want = set(of_kind(analyse_model(model, budget)[1], "gap"))
    table = _claims_states(model, budget)
    never = Linear(((0, 1),), "<=", -1)
    for mined in ((table, {"mined": Mined([never], 1)}), (table[:0], {"mined": Mined([never], 1, alone=[never])})):
        _ctx, findings = analyse_model(model, budget, mined=mined)
        assert set(of_kind(findings, "gap")) == want != set()


def test_no_time_for_the_questions_leaves_them_unknown(monkeypatch):
    monkeypatch.setattr(beyond, "BEYOND_UNITS", 0)
    monkeypatch.setattr(beyond, "WALK_RUNS", 0)
    model = load_model(fixture("dead_yes"))
    ctx, findings = analyse_model(model, Budget(max_states=2))
    assert "stayed undecided" in ctx.unknown_reason and "dead-rule" in ctx.unknown_reason
    assert of_kind(findings, "dead-rule") == {}


def test_check_names_the_methods_beyond_the_explored_states(capsys):
    code = cli_main(["check", fixture("dead_yes"), "--max-states", "2", "--no-properties"])
    out = capsys.readouterr().out
    assert code == 1, out          # the dead rule is a finding; the analyses are decided (else 3)
    assert "consistency analyses: beyond the 2 explored states" in out and "UNKNOWN" not in out


FIXTURES = ["conflict_no", "conflict_yes", "dead_no", "dead_yes", "deadlock_no", "deadlock_plain", "deadlock_yes",
            "gap_ack", "gap_no", "gap_yes", "nondet_no", "nondet_yes", "order_mixed", "order_no", "order_unreached",
            "order_yes", "chooser"]


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_findings_decided_beyond_one_state(name):
    full = {f.key for f in analyse(name)}
    models = load_all(fixture(name))
    contexts = [analyse_model(m, Budget(max_states=1))[0] for m in models]
    assert all(ctx.unknown_reason == "" for ctx in contexts), [ctx.unknown_reason for ctx in contexts]
    assert {f.key for f in analyse(name, budget=Budget(max_states=1))} == full


def test_a_deadlock_beyond_a_state_budget_is_found_by_random_runs(capsys):
    code = cli_main(["check", DEEP_COUNTER, "--no-properties", "--max-states", "1000", "-q", "-f", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["analyses"][0]["complete"] is True
    (stuck,) = [f for f in doc["findings"] if f["kind"] == "deadlock"]
    assert stuck["engine"] == "walk" and len(stuck["traces"][0]["steps"]) >= 5000
