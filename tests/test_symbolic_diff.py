"""Differential testing: random small models and claims, explicit search against Z3.

Hypothesis builds models of a few int/bool variables and a small array, with
guards, effects (static and dynamic indices), choices, overflow policies, an
end condition and sometimes a parameter. On each:

- BMC, run one step deeper than the explicit search's deepest state, must
  agree with exhaustive explicit search: the same verdict, and counterexamples
  / witnesses of the same (shortest) length;
- a proof (k-induction, PDR) must never meet an explicit counterexample, and
  a symbolic counterexample must be one explicit search confirms;
- with the parameter left free, PROVED must hold in every instance that the
  explicit engine checks, and a counterexample's parameter value must break
  the claim explicitly too.
"""
from __future__ import annotations

import functools

from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic import SymbolicEngine
from verifier.ir.expr import FALSE, TRUE, App, Const, Expr, Index, Local, Op, Param, Var
from verifier.ir.model import Action, Assign, BoolType, Choice, IntType, Model, Overflow, ParamDecl, Variable
from verifier.ir.props import DeadlockFree, Invariant, Reachable
from verifier.resources import Budget
from verifier.result import Verdict

N_BMC = examples(150)
N_PROOF = examples(80)
N_PARAM = examples(40)
BUDGET = Budget(rlimit=40_000_000)
P_LO, P_HI = 1, 3

INTS = ("x", "y")
ARR = "a"          # a[0..1] in 0..2


# ---------------------------------------------------------------- generators

# Each builder is cached: a recursive strategy is built once per (locals, depth, param), not on
# every draw (rebuilding them made drawing dearer than many of the checks).

@functools.cache
def _int_leaves(locals_: tuple[str, ...], param: bool) -> st.SearchStrategy[Expr]:
    leaves = [st.integers(0, 3).map(Const), st.sampled_from([Var(n) for n in INTS]),
              st.sampled_from([Index(ARR, Const(0)), Index(ARR, Const(1))]), st.just(Var("flag"))]
    if locals_:
        leaves.append(st.sampled_from([Local(n) for n in locals_]))
    if param:
        leaves.append(st.just(Param("P")))
    return st.one_of(*leaves)


BIN_INT = {3: st.sampled_from([Op.ADD, Op.SUB]), 4: st.sampled_from([Op.MIN, Op.MAX]),
           6: st.sampled_from([Op.DIV, Op.MOD])}
COMPARE = st.sampled_from([Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE])
BOOL_LEAF = st.sampled_from([TRUE, Var("flag"), App(Op.NOT, (Var("flag"),))])
AND_OR = st.sampled_from([Op.AND, Op.OR])
DIVISOR = st.integers(1, 3)


@functools.cache
def int_expr(locals_: tuple[str, ...], depth: int = 2, param: bool = False) -> st.SearchStrategy[Expr]:
    leaves = _int_leaves(locals_, param)
    if depth == 0:
        return leaves
    sub = int_expr(locals_, depth - 1, param)
    cond = bool_expr(locals_, depth - 1, param)

    @st.composite
    def draw_int(draw) -> Expr:
        kind = draw(st.integers(0, 7))
        if kind <= 2:
            return draw(leaves)
        if kind in (3, 4):
            return App(draw(BIN_INT[kind]), (draw(sub), draw(sub)))
        if kind == 5:
            return App(Op.ITE, (draw(cond), draw(sub), draw(sub)))
        if kind == 6:
            return App(draw(BIN_INT[6]), (draw(sub), Const(draw(DIVISOR))))
        # a dynamic index kept in range: a[min(max(e, 0), 1)]
        idx = App(Op.MIN, (App(Op.MAX, (draw(sub), Const(0))), Const(1)))
        return Index(ARR, idx)
    return draw_int()


@functools.cache
def bool_expr(locals_: tuple[str, ...], depth: int = 2, param: bool = False) -> st.SearchStrategy[Expr]:
    sub_i = int_expr(locals_, max(depth - 1, 0), param)
    kinds = st.integers(0, 5 if depth else 1)

    @st.composite
    def draw_bool(draw) -> Expr:
        kind = draw(kinds)
        if kind == 0:
            return draw(BOOL_LEAF)
        if kind <= 2:
            return App(draw(COMPARE), (draw(sub_i), draw(sub_i)))
        sub_b = bool_expr(locals_, depth - 1, param)
        if kind == 3:
            return App(draw(AND_OR), (draw(sub_b), draw(sub_b)))
        if kind == 4:
            return App(Op.NOT, (draw(sub_b),))
        return App(Op.IMPLIES, (draw(sub_b), draw(sub_b)))
    return draw_bool()


TARGETS = st.lists(st.sampled_from(["x", "y", "flag", "a0", "a1", "adyn"]), min_size=1, max_size=2, unique=True)
NAMES = st.sampled_from("pqrstuvw")
POLICIES = st.sampled_from(list(Overflow))


@functools.cache
def actions(param: bool) -> st.SearchStrategy[Action]:
    guards = {locals_: st.one_of(st.just(TRUE), bool_expr(locals_, 2, param)) for locals_ in ((), ("c",))}

    @st.composite
    def draw_action(draw) -> Action:
        has_choice = draw(st.booleans())
        choices = (Choice("c", IntType(Const(0), Const(draw(st.integers(1, 2))))),) if has_choice else ()
        locals_ = ("c",) if has_choice else ()
        effects = []
        for t in draw(TARGETS):
            if t == "flag":
                effects.append(Assign(Var("flag"), draw(bool_expr(locals_, 1, param))))
                continue
            value = draw(int_expr(locals_, 2, param))
            if t in INTS:
                effects.append(Assign(Var(t), value))
            elif t == "adyn":
                idx = Local("c") if has_choice else Var("flag")
                idx = App(Op.MIN, (idx, Const(1)))
                effects.append(Assign(Index(ARR, idx), value))
            else:
                effects.append(Assign(Index(ARR, Const(int(t[1]))), value))
        guard = draw(guards[locals_])
        return Action(draw(NAMES), guard=guard, effects=tuple(effects), choices=choices)
    return draw_action()


@functools.cache
def _action_lists(param: bool) -> st.SearchStrategy[list[Action]]:
    return st.lists(actions(param), min_size=1, max_size=4, unique_by=lambda a: a.name)


@functools.cache
def _ends(param: bool) -> st.SearchStrategy[Expr]:
    return st.one_of(st.just(FALSE), bool_expr((), 1, param))


Y_INIT = st.one_of(st.just(None), st.integers(0, 1).map(Const))
A1_INIT = st.one_of(st.just(None), st.integers(0, 2).map(Const))


@st.composite
def models(draw, param: bool | None = None) -> Model:
    if param is None:
        param = draw(st.booleans())
    x_hi = Param("P") if param else Const(draw(st.integers(1, 4)))
    variables = (
        Variable("x", IntType(Const(0), x_hi), init=(Const(0),), overflow=draw(POLICIES)),
        Variable("y", IntType(Const(0), Const(draw(st.integers(1, 3)))),
                 init=(draw(Y_INIT),), overflow=draw(POLICIES)),
        Variable("flag", BoolType(), init=(draw(st.sampled_from([FALSE, TRUE])),)),
        Variable(ARR, IntType(Const(0), Const(2)), index=IntType(Const(0), Const(1)),
                 init=(Const(0), draw(A1_INIT)), overflow=draw(POLICIES)),
    )
    acts = draw(_action_lists(param))
    end = draw(_ends(param))
    params = (ParamDecl("P", 2, lo=P_LO, hi=P_HI),) if param else ()
    values = (("P", draw(st.integers(P_LO, P_HI))),) if param else ()
    return Model(name="random", params=params, param_values=values, variables=variables,
                 actions=tuple(acts), end=end)


@st.composite
def claims(draw, param: bool = False):
    kind = draw(st.integers(0, 4))
    if kind <= 1:
        return Invariant(id="inv", expr=draw(bool_expr((), 2, param)))
    if kind <= 3:
        return Reachable(id="reach", expr=draw(bool_expr((), 2, param)))
    return DeadlockFree(id="dl")


# ---------------------------------------------------------------- checks

BAD = {Invariant: Verdict.VIOLATED, DeadlockFree: Verdict.VIOLATED, Reachable: Verdict.HOLDS}


def explicit(model, claim):
    (r,) = ExplicitEngine().check(model, [claim], BUDGET)
    assert r.verdict in (Verdict.HOLDS, Verdict.VIOLATED), r.reason   # tiny models: always complete
    return r


def found(r) -> bool:
    """The result shows the bad state (invariant, deadlock) or the wanted one (reachability)."""
    return r.verdict is BAD[type(r.property)]


@settings(max_examples=N_BMC, deadline=None)
@given(models(), claims())
def test_bmc_agrees_with_explicit(model, claim):
    ref = explicit(model, claim)
    (r,) = SymbolicEngine("bmc").check(model, [claim], Budget(rlimit=40_000_000, max_depth=ref.depth + 1))
    assert not r.reason.startswith("internal"), r.reason
    assert found(r) == found(ref), (r.verdict, r.reason, ref.verdict)
    if found(ref):
        assert len(r.trace) == len(ref.trace), "both search shortest-first"
    elif isinstance(claim, Reachable):
        assert r.verdict in (Verdict.UNKNOWN, Verdict.VIOLATED)
    else:
        assert r.verdict in (Verdict.HOLDS_TO_DEPTH, Verdict.HOLDS, Verdict.PROVED)


@settings(max_examples=N_PROOF, deadline=None)
@given(models(param=False), claims(), st.sampled_from(["kind", "pdr", "all"]))
def test_proofs_never_meet_a_counterexample(model, claim, strategy):
    ref = explicit(model, claim)
    (r,) = SymbolicEngine(strategy).check(model, [claim], Budget(rlimit=40_000_000, max_depth=12))
    assert not r.reason.startswith("internal"), r.reason
    if r.verdict is Verdict.UNKNOWN or r.verdict is Verdict.HOLDS_TO_DEPTH:
        return
    assert found(r) == found(ref), (strategy, r.verdict, r.engine, r.reason, ref.verdict)


@settings(max_examples=N_PARAM, deadline=None)
@given(models(param=True), claims(param=True))
def test_free_parameter(model, claim):
    free = model.instantiate({"P": None})
    (r,) = SymbolicEngine("all").check(free, [claim], Budget(rlimit=40_000_000, max_depth=10))
    assert not r.reason.startswith("internal"), r.reason
    if r.verdict is Verdict.UNKNOWN or r.verdict is Verdict.HOLDS_TO_DEPTH:
        return
    if found(r):
        value = dict(r.params)["P"]
        assert P_LO <= value <= P_HI
        assert found(explicit(model.instantiate({"P": value}), claim))
        return
    # a proof for every P: no instance may contradict it
    assert r.verdict in (Verdict.PROVED, Verdict.VIOLATED)
    for value in range(P_LO, P_HI + 1):
        assert not found(explicit(model.instantiate({"P": value}), claim)), (value, r.engine, r.reason)


# ---------------------------------------------------------------- one step, exactly

def _all_solutions(solver, terms, limit=500):
    """Every assignment of `terms` the solver allows (blocking clauses inside a push/pop, so the
    solver can be asked again)."""
    import z3
    out = set()
    solver.push()
    while solver.check() == z3.sat and len(out) < limit:
        m = solver.model()
        values = tuple(m.eval(t, model_completion=True).as_long() for t in terms)
        out.add(values)
        solver.add(z3.Or(*(t != v for t, v in zip(terms, values))))
    solver.pop()
    return out


@settings(max_examples=N_BMC, deadline=None)
@given(models(), st.randoms(use_true_random=False))
def test_initial_states_and_successors_agree(model, rnd):
    """Z3's initial states are the semantics' initial states; from sampled reachable states, Z3's
    successors (all solutions of T(s, s')) are exactly `semantics.successors`, and Z3's deadlock
    predicate holds exactly where the semantics has no successor in a non-final state."""
    import z3

    from verifier.engines.explicit import explore
    from verifier.engines.symbolic.encode import Encoding
    from verifier.semantics import holds, initial_states, layout, successors

    concrete = model.instantiate()
    lay = layout(concrete)
    enc = Encoding(model)
    s = z3.Solver()
    s.add(enc.init(enc.cur))
    assert _all_solutions(s, enc.cur.slots) == set(initial_states(lay))
    space = explore(concrete)
    step, stuck_at = z3.Solver(), z3.Solver()      # one solver each, asked state by state
    step.add(enc.relation)
    stuck_at.add(enc.deadlock)
    for state in rnd.sample(space.states, min(4, len(space.states))):
        fixed = [x == v for x, v in zip(enc.cur.slots, state)]
        step.push()
        step.add(*fixed)
        expected = {t.target for t in successors(lay, state)}
        assert _all_solutions(step, enc.nxt.slots) == expected, state
        step.pop()
        stuck = not expected and not holds(lay, concrete.end, state)
        assert (stuck_at.check(*fixed) == z3.sat) == stuck
