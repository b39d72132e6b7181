"""Player symmetry: the loader's check, one stored state per orbit, lifted traces.

Random models that the check accepts (2 or 3 players, per-player counters and flags,
asymmetric initial values, choices over players, a turn counter or none) are checked
with and without the reduction: the verdicts agree, every trace replays on the
reference semantics, and the reduced search stores exactly one state per orbit of the
reachable states (the orbits computed here, by rotating state tuples)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from verifier.cli import main
from verifier.diagnostics import ModelError, PropertyError
from verifier.engines.explicit import ExplicitEngine, explore
from verifier.ir.expr import App, Const, Index, Local, Op, Quant, QuantKind, Var
from verifier.ir.model import ACTIVE_VAR, Action, ActionKind, Assign, BoolType, Choice, IntType, Model, Variable
from verifier.ir.props import DeadlockFree, Invariant, Reachable, Terminates
from verifier.lang import load_model, load_properties
from verifier.lang.symmetry import SymmetryCheck
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

ROOT = Path(__file__).resolve().parent.parent
TOP = 3
TRUE_ = Const(1, is_bool=True)
FALSE_ = Const(0, is_bool=True)


def c(v: int) -> Const:
    return Const(v)


def h(i) -> Index:
    return Index("h", i)


def f(i) -> Index:
    return Index("f", i)


ACT = Var(ACTIVE_VAR)
T = Var("t")


def over_players(n: int, kind: QuantKind, body) -> Quant:
    return Quant(kind, "q", c(0), c(n - 1), body)


@st.composite
def symmetric_models(draw) -> Model:
    n = draw(st.sampled_from([2, 2, 3]))
    who = IntType(c(0), c(n - 1))
    inits = tuple(c(draw(st.integers(0, 2))) for _ in range(n))
    variables = (
        Variable(ACTIVE_VAR, who, init=(c(0),), implicit=True),
        Variable("h", IntType(c(0), c(TOP)), index=who, init=inits, by_player=True),
        Variable("f", BoolType(), index=who, init=(FALSE_,) * n, by_player=True),
        Variable("g", IntType(c(0), c(2)), init=(c(0),)),
        Variable("t", who, init=(c(draw(st.integers(0, n - 1))),), holds_player=True),    # `type: player`
        Variable("o", who, index=who, init=tuple(c(draw(st.integers(0, n - 1))) for _ in range(n)),
                 by_player=True, holds_player=True),          # `per: player, type: player`: whom each one aims at
    )
    k = draw(st.integers(0, TOP))
    extra = draw(st.sampled_from([TRUE_, App(Op.LT, (Var("g"), c(2))), f(ACT), App(Op.NOT, (f(ACT),)),
                                  over_players(n, QuantKind.EXISTS, App(Op.EQ, (h(Local("q")), c(k))))]))
    menu = [
        Action("gain", App(Op.AND, (App(Op.LT, (h(ACT), c(TOP))), extra)),
               (Assign(h(ACT), App(Op.ADD, (h(ACT), c(1)))),)),
        Action("give", App(Op.AND, (App(Op.NE, (Local("p"), ACT)), App(Op.GT, (h(ACT), c(0))))),
               (Assign(h(ACT), App(Op.SUB, (h(ACT), c(1)))),
                Assign(h(Local("p")), App(Op.MIN, (App(Op.ADD, (h(Local("p")), c(1))), c(TOP))))),
               (Choice("p", who),), actor=ACT),
        Action("steal", App(Op.GT, (h(Local("p")), h(ACT))),
               (Assign(h(Local("p")), App(Op.SUB, (h(Local("p")), c(1)))),
                Assign(h(ACT), App(Op.ADD, (h(ACT), c(1))))), (Choice("p", who),)),
        Action("flip", draw(st.sampled_from([TRUE_, App(Op.GE, (h(ACT), c(1)))])),
               (Assign(f(ACT), App(Op.NOT, (f(ACT),))),)),
        Action("clear", over_players(n, QuantKind.FORALL, f(Local("q"))),
               tuple(Assign(f(c(i)), FALSE_) for i in range(n))),
        # the player-valued `t` (who holds priority): pointed at a chosen player or the active one, passed
        # on to the next, read as an index, an actor and in comparisons
        Action("point", App(Op.NE, (Local("p"), T)), (Assign(T, Local("p")),), (Choice("p", who),)),
        Action("take", App(Op.NE, (T, ACT)), (Assign(T, ACT),)),
        Action("hand_on", draw(st.sampled_from([TRUE_, App(Op.GT, (h(T), c(0)))])),
               (Assign(T, App(Op.MOD, (App(Op.ADD, (T, c(1))), c(n)))),
                Assign(h(T), App(Op.MIN, (App(Op.ADD, (h(T), c(1))), c(TOP))))), actor=T),
        # the per-player array of players `o`: aimed at a chosen player, read as an index and compared
        Action("aim", App(Op.NE, (Local("p"), Index("o", ACT))), (Assign(Index("o", ACT), Local("p")),),
               (Choice("p", who),)),
        Action("hit", App(Op.AND, (App(Op.NE, (Index("o", ACT), ACT)), App(Op.GT, (h(Index("o", ACT)), c(0))))),
               (Assign(h(Index("o", ACT)), App(Op.SUB, (h(Index("o", ACT)), c(1)))),
                Assign(Index("o", ACT), App(Op.MOD, (App(Op.ADD, (Index("o", ACT), c(1))), c(n))))), actor=ACT),
    ]
    chosen = draw(st.lists(st.sampled_from(menu), min_size=1, max_size=6, unique_by=lambda a: a.name))
    count = draw(st.booleans())
    seat = App(Op.MOD, (App(Op.ADD, (ACT, c(1))), c(n)))
    # who plays next (`next_player:`): the next seat, the one before (written with a subtraction, which `%`
    # rounding down makes a rotation too), the same player again, or the player `t` holds
    after = draw(st.sampled_from([seat, App(Op.MOD, (App(Op.SUB, (App(Op.ADD, (ACT, c(n))), c(1))), c(n))),
                                  App(Op.MOD, (App(Op.SUB, (ACT, c(1))), c(n))), App(Op.ITE, (f(ACT), ACT, seat)),
                                  App(Op.ITE, (App(Op.LT, (Var("g"), c(2))), seat, T))]))
    passing = Action("pass", draw(st.sampled_from([TRUE_, App(Op.GE, (h(ACT), c(1))), f(ACT)])),
                     (Assign(ACT, after),)
                     + ((Assign(Var("g"), App(Op.MIN, (App(Op.ADD, (Var("g"), c(1))), c(2)))),) if count else ()),
                     kind=ActionKind.TURN_END)
    end = draw(st.sampled_from([FALSE_, over_players(n, QuantKind.EXISTS, App(Op.EQ, (h(Local("q")), c(TOP))))]))
    actions = tuple(replace(a, guard=App(Op.AND, (a.guard, App(Op.NOT, (end,))))) for a in chosen + [passing])
    return Model("sym", players=n, variables=variables, actions=actions, end=end, symmetry="players")


@st.composite
def claims(draw, n: int):
    k = draw(st.integers(0, TOP))
    return [
        Invariant(id="cap", expr=over_players(n, QuantKind.FORALL, App(Op.LE, (h(Local("q")), c(k))))),
        Invariant(id="flag", expr=App(Op.NOT, (over_players(n, QuantKind.EXISTS, App(Op.AND, (
            f(Local("q")), App(Op.EQ, (h(Local("q")), c(k)))))),))),
        Invariant(id="active-small", expr=App(Op.LE, (h(ACT), c(k)))),
        Reachable(id="total", expr=App(Op.EQ, (Quant(QuantKind.SUM, "q", c(0), c(n - 1), h(Local("q"))), c(k + 2)))),
        Reachable(id="steal", action="steal"),
        Invariant(id="holder-small", expr=App(Op.LE, (h(T), c(k)))),
        Invariant(id="nobody-aims-at-self", expr=over_players(n, QuantKind.FORALL,
                                                              App(Op.NE, (Index("o", Local("q")), Local("q"))))),
        Reachable(id="holder-is-active", expr=App(Op.AND, (App(Op.EQ, (T, ACT)), App(Op.EQ, (h(T), c(k)))))),
        DeadlockFree(id="no-deadlock"),
        Terminates(id="turns", scope="turn"),
    ]


MODELS = symmetric_models()


def rotate(state: tuple, r: int, lay) -> tuple:
    """`state` with player p's values moved to player (p + r) mod n, `active` rotated too."""
    n = lay.model.players
    out = list(state)
    for var in ("h", "f"):
        first, _lo, _size = lay.offsets[var]
        for p in range(n):
            out[first + (p + r) % n] = state[first + p]
    for holder in (ACTIVE_VAR, "t"):
        a = lay.offsets[holder][0]
        out[a] = (state[a] + r) % n
    first = lay.offsets["o"][0]
    for p in range(n):
        out[first + (p + r) % n] = (state[first + p] + r) % n
    return tuple(out)


@settings(max_examples=examples(40), deadline=None)
@given(MODELS, st.data())
def test_symmetry_keeps_verdicts_and_stores_one_state_per_orbit(model, data):
    SymmetryCheck(model).model_parts()        # the generator only builds models the check accepts
    props = data.draw(claims(model.players))
    lay = layout(model)
    full = explore(model)
    reduced = explore(model, symmetric=True)
    assert full.complete and reduced.complete
    orbits = {min(rotate(s, r, lay) for r in range(model.players)) for s in full.states}
    assert len(reduced.packed) == len(orbits)
    plain = ExplicitEngine().check(replace(model, symmetry=None), props, Budget())
    sym = ExplicitEngine().check(model, props, Budget())
    assert [r.verdict for r in sym] == [r.verdict for r in plain]
    for r in sym:
        assert r.reductions == ("symmetry",)
        if r.trace is not None:
            replay(lay, r.trace)


def test_two_player_swap_merges_mirror_states():
    """Without a turn counter, a state and its mirror image (players swapped) are one."""
    n = 2
    who = IntType(c(0), c(1))
    model = Model("mirror", players=n, variables=(
        Variable(ACTIVE_VAR, who, init=(c(0),), implicit=True),
        Variable("h", IntType(c(0), c(2)), index=who, init=(c(0), c(0)), by_player=True)),
        actions=(Action("gain", App(Op.LT, (h(ACT), c(2))), (Assign(h(ACT), App(Op.ADD, (h(ACT), c(1)))),)),
                 Action("pass", TRUE_, (Assign(ACT, App(Op.MOD, (App(Op.ADD, (ACT, c(1))), c(n)))),),
                        kind=ActionKind.TURN_END)),
        symmetry="players")
    assert len(explore(model).packed) == 18
    assert len(explore(model, symmetric=True).packed) == 9
    bad = Invariant(id="never-both-full", expr=App(Op.NOT, (App(Op.AND, (
        App(Op.EQ, (h(c(0)), c(2))), App(Op.EQ, (h(c(1)), c(2))))),)))
    [r] = ExplicitEngine().check(model, [bad], Budget())
    assert r.verdict is Verdict.VIOLATED
    replay(layout(model), r.trace)


SYMMETRIC = """\
model: duel
players: 2
symmetry: players
variables:
  hand: {type: 0..3, per: player, init: 1}
  drew: {type: bool, init: false, reset: turn}
phases:
  - name: Draw
  - name: Play
    mandatory: false
actions:
  - name: draw
    phase: Draw
    must: true
    when: "not drew and hand[active] < 3"
    do:
      hand[active]: hand[active] + 1
      drew: true
  - name: discard
    choose: {p: player}
    by: p
    phase: Play
    when: "hand[p] > 0 and p != active"
    do:
      hand[p]: hand[p] - 1
"""


def write(tmp_path: Path, text: str, name: str = "duel.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def turnproof(capsys, monkeypatch, *args: str):
    """`turnproof ARGS` from the repository's root, in this process: (exit code, out, err)."""
    monkeypatch.chdir(ROOT)
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_symmetric_model_loads_and_cli_reports_the_reduction(tmp_path, capsys, monkeypatch):
    path = write(tmp_path, SYMMETRIC)
    assert load_model(str(path)).symmetry == "players"
    props = write(tmp_path, "claims:\n  - id: cap\n    says: hands stay small\n"
                            "    invariant: \"forall p in player: hand[p] <= 3\"\n", "duel.props.yaml")
    run = ["check", str(path), "-p", str(props), "-q", "-f", "json", "--no-consistency", "--engine", "explicit"]
    _code, out, err = turnproof(capsys, monkeypatch, *run)
    assert '"reductions": [\n        "symmetry"\n      ]' in out, err
    _code, out, err = turnproof(capsys, monkeypatch, *run, "--no-reduce")
    assert '"reductions": []' in out, err


@pytest.mark.parametrize("change, where", [
    ('when: "not drew and hand[active] < 3"', 'when: "not drew and hand[0] < 3"'),
    ('when: "hand[p] > 0 and p != active"', 'when: "hand[p] > 0 and p < active"'),
    ('when: "hand[p] > 0 and p != active"', 'when: "hand[p] > 0 and active == 1"'),
    ("      hand[p]: hand[p] - 1", "      hand[p]: hand[p] - 1\n      hand[0]: 0"),
])
def test_loader_rejects_what_breaks_the_symmetry(tmp_path, capsys, monkeypatch, change, where):
    path = write(tmp_path, SYMMETRIC.replace(change, where))
    code, _out, err = turnproof(capsys, monkeypatch, "lint", str(path))
    assert code == 2
    line = next(i for i, text in enumerate(SYMMETRIC.replace(change, where).splitlines(), 1)
                if text.strip() == where.splitlines()[-1].strip())
    assert f"{path}:{line}:" in err and "symmetry" in err and "hint:" in err
    assert "Traceback" not in err


def test_round_end_is_rejected_as_such(tmp_path, capsys, monkeypatch):
    path = write(tmp_path, SYMMETRIC + "round_end:\n  drew: false\n")
    code, _out, err = turnproof(capsys, monkeypatch, "lint", str(path))
    assert code == 2 and "round_end effects tell the players apart" in err, err
    assert f"{path}:27:3:" in err


def test_claim_naming_a_player_is_rejected(tmp_path):
    path = write(tmp_path, SYMMETRIC)
    props = write(tmp_path, "claims:\n  - id: first-small\n    says: player 0 holds little\n"
                            "    invariant: \"hand[0] <= 2\"\n", "bad.props.yaml")
    with pytest.raises(PropertyError) as err:
        load_properties(str(props), load_model(str(path)))
    text = err.value.render()
    assert "bad.props.yaml:4:17" in text and "names player 0 by number" in text and "hint:" in text


PRIORITY = ROOT / "tests" / "fixtures" / "lang" / "priority_sym.yaml"
PRIORITY_CLAIMS = ROOT / "tests" / "fixtures" / "lang" / "priority_sym_props.yaml"


def test_a_player_variable_is_rotated_with_the_players():
    """`type: player` under `symmetry: players`: the variable is rotated too; the reduced search
    keeps one state per orbit and gives the verdicts of the full one, with traces that replay."""
    model = load_model(str(PRIORITY))
    assert model.var("prio").holds_player and model.symmetry == "players"
    claims = load_properties(str(PRIORITY_CLAIMS), model)
    concrete = model.instantiate()
    full = ExplicitEngine().check(replace(concrete, symmetry=None), claims, Budget())
    reduced = ExplicitEngine().check(concrete, claims, Budget())
    assert [r.verdict for r in reduced] == [r.verdict for r in full]
    assert all(r.as_expected for r in reduced)
    assert reduced[0].stats.states * 3 == full[0].stats.states      # three players: orbits of three states
    lay = layout(concrete)
    for r in reduced:
        assert r.reductions == ("symmetry",)
        if r.trace is not None:
            replay(lay, r.trace)


@pytest.mark.parametrize("old, new, message, needle", [
    ("      prio: (prio + 1) % PLAYERS", "      prio: 0", "`0` should be a player term", "prio: 0"),
    ('when: "passes < PLAYERS"', 'when: "passes < PLAYERS and prio == 0"', "compares a player with a number",
     'when: "passes < PLAYERS and'),
    ("  mana: {type: 0..2, per: player", "  owner: {type: player, per: 0..2, init: 0}\n  mana: {type: 0..2, "
     "per: player", "owner is an array of players not indexed by player", "owner:"),
    ("      passes: passes + 1", "      passes: prio", "is a player where a number or truth value is expected",
     "passes: prio"),
])
def test_a_player_variable_used_as_a_number_breaks_the_symmetry(tmp_path, old, new, message, needle):
    text = PRIORITY.read_text()
    assert old in text
    path = write(tmp_path, text.replace(old, new, 1))
    with pytest.raises(ModelError) as info:
        load_model(str(path))
    (d,) = [d for d in info.value.diagnostics if message in d.message]
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if needle in t)
    assert d.span is not None and (d.span.file, d.span.line) == (str(path), line)
