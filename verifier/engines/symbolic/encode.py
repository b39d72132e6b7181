"""The IR as a Z3 transition system: one symbol set per step (``hand[0]@3``).

Every value is a Z3 integer (booleans 0/1, enum values their index), exactly
as in `verifier.semantics`. Each IR operator has one entry in a translation
table; booleans and integers are converted into each other where the
reference interpreter does it implicitly (truthiness of ints, 0/1 of bools).

Next to its value, every expression is translated to a *definedness*
condition (index in range, positive divisor) that follows the short-circuit
order of `semantics.evaluate`, so that a model run-time error is a state
predicate like any other (`Encoding.error`).

The transition relation is the disjunction over the actions that can fire
(`must-not` prohibitions never do), each guarded by "not final", its choice
ranges, its guard and the overflow policies of its effects (clamp keeps the
nearest bound; forbid and unspecified block the transition: no successor).
Per step a selector ``act@i`` says which action fired and the choices are free
integer symbols per action and step, so that a satisfying assignment reads
back as a sequence of firings.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TypeAlias, assert_never

import z3

from verifier.engines.symbolic.units import UNITS_PER_SECOND
from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Param, Quant, QuantKind, Var, state_vars
from verifier.ir.model import ActionKind, BoolType, EnumType, IntType, Modality, Model, Overflow, Type
from verifier.resources.memory import bound_z3

# z3 ships no type information, so to mypy this alias is Any; it names what the helpers pass around.
Term: TypeAlias = z3.ExprRef
Env = dict[str, Term]

ENUMERATE_LIMIT = 256      # choice combinations expanded by enumeration (else quantifier elimination)
QUANT_LIMIT = 4096         # elements a quantifier may unroll to

ONE, ZERO = z3.IntVal(1), z3.IntVal(0)
TRUE, FALSE = z3.BoolVal(True), z3.BoolVal(False)


class Unsupported(Exception):
    """The symbolic engine cannot encode this model or claim (the reason is the message)."""


# ---------------------------------------------------------------- small term helpers

def as_int(t: Term) -> Term:
    if t is TRUE or t is FALSE:      # the constants most definedness terms are: no call into z3
        return ONE if t is TRUE else ZERO
    if z3.is_bool(t):
        if z3.is_true(t):
            return ONE
        if z3.is_false(t):
            return ZERO
        return z3.If(t, ONE, ZERO)
    return t


def as_bool(t: Term) -> Term:
    if t is TRUE or t is FALSE:
        return t
    if z3.is_bool(t):
        return t
    if z3.is_int_value(t):
        return TRUE if t.as_long() != 0 else FALSE
    return t != 0


def conj(*xs: Term) -> Term:
    return _flat(xs, z3.Z3_OP_AND, z3.Z3_OP_FALSE, z3.Z3_OP_TRUE, z3.Z3_mk_and, z3.And, TRUE, FALSE)


def disj(*xs: Term) -> Term:
    return _flat(xs, z3.Z3_OP_OR, z3.Z3_OP_TRUE, z3.Z3_OP_FALSE, z3.Z3_mk_or, z3.Or, FALSE, TRUE)


def _flat(xs: Sequence[Term], op: int, absorbing: int, neutral: int, make, fallback, skip: Term, stop: Term) -> Term:
    """`xs` joined by `op` (AND or OR), nested `op`s flattened, the neutral constant dropped and
    the absorbing one returned. Boolean terms are taken apart and joined through Z3's C API
    (one call per question; the Python helpers `is_true`, `children` and `And` go through
    several layers each, and encoding a game's transition relation makes tens of thousands
    of these calls); anything else (a Python bool) goes through `fallback`. The module's own
    `skip` (neutral) and `stop` (absorbing) constants, which most definedness terms are, are
    known without a call."""
    items: list[Term] = []
    for x in xs:
        if x is skip:
            continue
        if x is stop:
            return x
        if not isinstance(x, z3.BoolRef):
            items.append(x)
            continue
        ctx, ast = x.ctx_ref(), x.as_ast()
        if z3.Z3_get_ast_kind(ctx, ast) != z3.Z3_APP_AST:
            items.append(x)
            continue
        app = z3.Z3_to_app(ctx, ast)
        kind = z3.Z3_get_decl_kind(ctx, z3.Z3_get_app_decl(ctx, app))
        if kind == absorbing:
            return x
        if kind == neutral:
            continue
        if kind == op:
            items.extend(z3.BoolRef(z3.Z3_get_app_arg(ctx, app, i), x.ctx)
                         for i in range(z3.Z3_get_app_num_args(ctx, app)))
        else:
            items.append(x)
    if not items:
        return TRUE if neutral == z3.Z3_OP_TRUE else FALSE
    if len(items) == 1:
        return items[0]
    if not all(isinstance(x, z3.BoolRef) for x in items):
        return fallback(*items)
    first = items[0].ctx
    array = (z3.Ast * len(items))(*(x.as_ast() for x in items))
    return z3.BoolRef(make(first.ref(), len(items), array), first)


def implies(a: Term, b: Term) -> Term:
    if b is TRUE or a is FALSE:
        return TRUE
    if a is TRUE:
        return b
    if z3.is_true(b) or z3.is_false(a):
        return TRUE
    if z3.is_true(a):
        return b
    return z3.Implies(a, b)


def negate(a: Term) -> Term:
    if a is TRUE or a is FALSE:
        return FALSE if a is TRUE else TRUE
    if z3.is_true(a):
        return FALSE
    if z3.is_false(a):
        return TRUE
    return z3.Not(a)


def numeral(t: Term) -> int | None:
    """The integer value of `t` if it simplifies to a literal."""
    s = z3.simplify(as_int(t))
    return s.as_long() if z3.is_int_value(s) else None


def ite_chain(index: Term, lo: int, items: Sequence[Term]) -> Term:
    """items[index - lo]; the last element when the index is out of range (definedness says so)."""
    out = items[-1]
    for k in range(len(items) - 2, -1, -1):
        out = z3.If(index == lo + k, items[k], out)
    return out


# ---------------------------------------------------------------- layout

@dataclass(frozen=True)
class SlotInfo:
    """One scalar variable or one array element, as in `semantics.Layout.slots`."""

    var: str
    index: int | None
    name: str              # display name: hand[1], marked[red], phase
    type: Type


@dataclass(frozen=True)
class State:
    """One symbol set: a term per slot."""

    tag: str
    slots: tuple[Term, ...]


class Encoding:
    """A model (fixed parameters substituted, free ones kept as symbols) as Z3 terms."""


    def __init__(self, model: Model):
        self.source = model
        self.model = model.instantiate()
        self.free = tuple(n for n, v in self.model.param_values if v is None)
        self.params: dict[str, Term] = {n: z3.Int(n) for n in self.free}
        decls = {p.name: p for p in self.model.params}
        self.param_decls = {n: decls[n] for n in self.free if n in decls}
        slots: list[SlotInfo] = []
        self.offsets: dict[str, tuple[int, int, int]] = {}
        for v in self.model.variables:
            if v.index is None:
                self.offsets[v.name] = (len(slots), 0, 1)
                slots.append(SlotInfo(v.name, None, v.name, v.type))
                continue
            ilo, ihi = self._const_bounds(v.index, f"the index of array {v.name}")
            self.offsets[v.name] = (len(slots), ilo, ihi - ilo + 1)
            for i in range(ilo, ihi + 1):
                slots.append(SlotInfo(v.name, i, v.name + v.element_label(i), v.type))
        self.slots = tuple(slots)
        self.variables = {v.name: v for v in self.model.variables}
        self.actions = tuple(i for i, a in enumerate(self.model.actions) if a.modality is not Modality.MUST_NOT)
        self.zero = State("zero", tuple(ZERO for _ in self.slots))
        self.cur = self.state("cur")
        self.nxt = self.state("nxt")
        self._fresh = itertools.count()
        self._firing: dict[tuple, tuple] = {}     # `_memo`: an action's guard and effects per state and choices
        self._frames: dict[tuple[str, str], tuple[Term, ...]] = {}    # `_unchanged`

    # ---- symbols
    def state(self, tag: str | int) -> State:
        return State(str(tag), tuple(z3.Int(f"{s.name}@{tag}") for s in self.slots))

    def act(self, tag: str | int) -> Term:
        return z3.Int(f"act@{tag}")

    def choice(self, action: int, name: str, tag: str | int) -> Term:
        return z3.Int(f"{self.model.actions[action].name}.{name}@{tag}")

    def choices(self, action: int, tag: str | int) -> Env:
        return {c.name: self.choice(action, c.name, tag) for c in self.model.actions[action].choices}

    def rename(self, term: Term, src: State, dst: State) -> Term:
        return z3.substitute(term, *zip(src.slots, dst.slots))

    def at(self, pred: Term, st: State) -> Term:
        """A predicate built on `cur`, moved to `st`."""
        return pred if st is self.cur else self.rename(pred, self.cur, st)

    # ---- types and parameters
    def _const_bounds(self, t: Type, what: str) -> tuple[int, int]:
        if isinstance(t, BoolType):
            return 0, 1
        if isinstance(t, EnumType):
            return 0, len(t.values) - 1
        if state_vars(t.lo) or state_vars(t.hi):
            raise Unsupported(f"{what} must have constant bounds, not {t}")
        nowhere = State("const", ())
        lo, hi = numeral(self.value(t.lo, nowhere)), numeral(self.value(t.hi, nowhere))
        if lo is None or hi is None:
            raise Unsupported(f"{what} must have constant bounds, not {t}")
        return lo, hi

    def bounds(self, t: Type, st: State | None = None, env: Env | None = None) -> tuple[Term, Term]:
        if isinstance(t, BoolType):
            return ZERO, ONE
        if isinstance(t, EnumType):
            return ZERO, z3.IntVal(len(t.values) - 1)
        st = st or self.zero
        return as_int(self.value(t.lo, st, env)), as_int(self.value(t.hi, st, env))

    @cached_property
    def slot_bounds(self) -> tuple[tuple[Term, Term], ...]:
        return tuple(self.bounds(s.type) for s in self.slots)

    def param_constraints(self) -> Term:
        out = []
        for name, decl in self.param_decls.items():
            p = self.params[name]
            if decl.lo is not None:
                out.append(p >= decl.lo)
            if decl.hi is not None:
                out.append(p <= decl.hi)
        return conj(*out)

    def ranges(self, st: State) -> Term:
        return conj(*(conj(lo <= x, x <= hi) for x, (lo, hi) in zip(st.slots, self.slot_bounds)))

    # ---- expressions
    def value(self, e: Expr, st: State, env: Env | None = None) -> Term:
        return self.encode(e, st, env or {})[0]

    def defined(self, e: Expr, st: State, env: Env | None = None) -> Term:
        return self.encode(e, st, env or {})[1]

    def predicate(self, e: Expr, st: State, env: Env | None = None) -> Term:
        return as_bool(self.value(e, st, env))

    def encode(self, e: Expr, st: State, env: Env) -> tuple[Term, Term]:
        """(value, definedness) of `e` in state `st` with bound names `env`."""
        match e:
            case Const():
                return (z3.BoolVal(bool(e.value)) if e.is_bool else z3.IntVal(e.value)), TRUE
            case Var():
                first, _, _ = self._offset(e.name)
                return st.slots[first], TRUE
            case Index():
                idx, d = self.encode(e.index, st, env)
                return self.element(e.name, as_int(idx), st, d)
            case Local():
                if e.name not in env:
                    raise Unsupported(f"unbound name {e.name}")
                return env[e.name], TRUE
            case Param():
                if e.name not in self.params:
                    raise Unsupported(f"parameter {e.name} has neither a value nor a declaration")
                return self.params[e.name], TRUE
            case Quant():
                return self._quant(e, st, env)
            case App():
                return _OPS[e.op](self, e.args, st, env)
            case _:
                assert_never(e)

    def _offset(self, name: str) -> tuple[int, int, int]:
        if name not in self.offsets:
            raise Unsupported(f"unknown variable {name}")
        return self.offsets[name]

    def element(self, name: str, idx: Term, st: State, d: Term = TRUE) -> tuple[Term, Term]:
        first, lo, size = self._offset(name)
        items = st.slots[first:first + size]
        k = numeral(idx)
        if k is not None:
            if lo <= k < lo + size:
                return items[k - lo], d
            return items[-1], FALSE
        return ite_chain(idx, lo, items), conj(d, lo <= idx, idx <= lo + size - 1)

    def _quant(self, e: Quant, st: State, env: Env) -> tuple[Term, Term]:
        lo_t, dlo = self.encode(e.lo, st, env)
        hi_t, dhi = self.encode(e.hi, st, env)
        lo, hi = numeral(lo_t), numeral(hi_t)
        if lo is None or hi is None:
            raise Unsupported(f"the domain of '{e.kind.value} {e.var}' must be constant for the symbolic "
                              f"engine (it depends on the state or on a free parameter)")
        if hi - lo + 1 > QUANT_LIMIT:
            raise Unsupported(f"the domain of '{e.kind.value} {e.var}' has {hi - lo + 1} elements")
        parts = [self.encode(e.body, st, {**env, e.var: z3.IntVal(i)}) for i in range(lo, hi + 1)]
        d = conj(dlo, dhi, *(p[1] for p in parts))
        if e.kind is QuantKind.FORALL:
            return conj(*(as_bool(p[0]) for p in parts)), d
        if e.kind is QuantKind.EXISTS:
            return disj(*(as_bool(p[0]) for p in parts)), d
        if e.kind is QuantKind.COUNT:
            items = [as_int(as_bool(p[0])) for p in parts]
        else:
            items = [as_int(p[0]) for p in parts]
        return (z3.Sum(*items) if items else ZERO), d

    # ---- the model's predicates
    @cached_property
    def end(self) -> Term:
        return self.predicate(self.model.end, self.cur)

    def choice_ranges(self, action: int, st: State, env: Env) -> tuple[Term, Term]:
        """(all choices within their ranges, the ranges are defined) for the given choice terms."""
        inside: list[Term] = []
        d: list[Term] = []
        for c in self.model.actions[action].choices:
            lo, hi = self._choice_bounds(c.type, st, env, d)
            inside.append(conj(lo <= env[c.name], env[c.name] <= hi))
        return conj(*inside), conj(*d)

    def _choice_bounds(self, t: Type, st: State, env: Env, defs: list) -> tuple[Term, Term]:
        if isinstance(t, IntType):
            lo, dlo = self.encode(t.lo, st, {})
            hi, dhi = self.encode(t.hi, st, {})
            defs.extend((dlo, dhi))
            return as_int(lo), as_int(hi)
        return self.bounds(t)

    def choice_domain(self, action: int, st: State) -> list[Env] | None:
        """Every choice assignment, when the choice bounds are constants and few; else None."""
        ranges = []
        for c in self.model.actions[action].choices:
            lo, hi = self._choice_bounds(c.type, st, {}, [])
            lo_v, hi_v = numeral(lo), numeral(hi)
            if lo_v is None or hi_v is None:
                return None
            ranges.append(range(lo_v, hi_v + 1))
        total = 1
        for r in ranges:
            total *= len(r)
        if total > ENUMERATE_LIMIT:
            return None
        names = [c.name for c in self.model.actions[action].choices]
        return [{n: z3.IntVal(v) for n, v in zip(names, combo)} for combo in itertools.product(*ranges)]

    def exists_choice(self, action: int, st: State, body: Callable[[Env], Term]) -> Term:
        """``exists choices in range: body(choices)`` as a quantifier-free formula."""
        domain = self.choice_domain(action, st)
        if domain is not None:
            return disj(*(body(env) for env in domain))
        env = self.choices(action, f"q{next(self._fresh)}")
        inside, _ = self.choice_ranges(action, st, env)
        return self.eliminate(z3.Exists(list(env.values()), conj(inside, body(env))))

    @staticmethod
    def eliminate(f: Term) -> Term:
        goal = z3.Goal()
        goal.add(f)
        result = z3.Then(z3.Tactic("simplify"), z3.Tactic("qe"), z3.Tactic("simplify"))(goal)
        out = disj(*(conj(*g) for g in result))
        if any(z3.is_quantifier(n) for n in _subterms(out)):
            raise Unsupported("a choice whose range depends on the state or on a free parameter "
                              "could not be eliminated from a state predicate")
        return out

    def _memo(self, what: str, action: int, st: State, env: Env, make: Callable[[], tuple]) -> tuple:
        """`make()`, once per action, state and choice terms: the transition relation, the model-error
        predicate and the deadlock predicate each ask an action's guard and effects again, and
        building the same terms through the z3 API again costs what building them did. The key
        holds the choice terms' ids; the entry keeps the terms alive, so no id is used again."""
        key = (what, action, st.tag, tuple((n, t.get_id()) for n, t in env.items()))
        hit = self._firing.get(key)
        if hit is None:
            hit = self._firing[key] = (make(), st, env)
        return hit[0]

    def guard(self, action: int, st: State, env: Env) -> tuple[Term, Term]:
        """(value, definedness) of the action's guard."""
        return self._memo("guard", action, st, env, lambda: self.encode(self.model.actions[action].guard, st, env))

    def effects(self, action: int, st: State, env: Env) -> tuple[tuple[Term, ...], Term, Term]:
        """(successor terms, not blocked by an overflow policy, firing is defined) as in `semantics.fire`."""
        return self._memo("effects", action, st, env, lambda: self._effects(action, st, env))

    def _effects(self, action: int, st: State, env: Env) -> tuple[tuple[Term, ...], Term, Term]:
        a = self.model.actions[action]
        new = list(st.slots)
        ok: list[Term] = []
        defined: list[Term] = []
        for eff in a.effects:
            value, dv = self.encode(eff.value, st, env)
            value = as_int(value)
            var = self.variables.get(eff.target.name)
            if var is None:
                raise Unsupported(f"action {a.name} assigns the unknown variable {eff.target.name}")
            lo, hi = self.bounds(var.type)
            first, ilo, size = self._offset(var.name)
            if isinstance(eff.target, Index):
                idx, di = self.encode(eff.target.index, st, env)
                idx = as_int(idx)
                di = conj(di, ilo <= idx, idx <= ilo + size - 1)
            else:
                idx, di = None, TRUE
            defined.append(implies(conj(*ok), conj(di, dv)))
            inside = conj(lo <= value, value <= hi)
            if var.overflow is Overflow.CLAMP:
                value = z3.If(value < lo, lo, z3.If(value > hi, hi, value))
            else:
                ok.append(inside)
            if idx is None:
                new[first] = value
                continue
            k = numeral(idx)
            for j in range(size):
                if k is not None:
                    if k == ilo + j:
                        new[first + j] = value
                else:
                    new[first + j] = z3.If(idx == ilo + j, value, new[first + j])
        return tuple(new), conj(*ok), conj(*defined)

    def enabled(self, action: int, st: State, env: Env) -> Term:
        """The action fires with these choices and has a successor (guard, ranges, policies)."""
        inside, _ = self.choice_ranges(action, st, env)
        guard = as_bool(self.guard(action, st, env)[0])
        _, ok, _ = self.effects(action, st, env)
        return conj(negate(self.at(self.end, st)), inside, guard, ok)

    def can_fire(self, action: int, st: State) -> Term:
        """Some choice fires the action with a successor (quantifier-free)."""
        return self.exists_choice(action, st, lambda env: self.enabled(action, st, env))

    def step(self, action: int, src: State, dst: State, env: Env) -> Term:
        new, _, _ = self.effects(action, src, env)
        kept = self._unchanged(src, dst)
        return conj(self.enabled(action, src, env),
                    *(kept[k] if y is src.slots[k] else x == y for k, (x, y) in enumerate(zip(dst.slots, new))))

    def _unchanged(self, src: State, dst: State) -> tuple[Term, ...]:
        """``dst[k] == src[k]`` per slot, built once per pair of states: most of an action's
        successor slots are its source's, and each `==` through the z3 API costs a dozen calls."""
        key = (src.tag, dst.tag)
        if key not in self._frames:
            self._frames[key] = tuple(x == y for x, y in zip(dst.slots, src.slots))
        return self._frames[key]

    @cached_property
    def relation(self) -> Term:
        """T(cur, nxt) over the selector ``act@t`` and the choice symbols ``a.c@t``."""
        act = self.act("t")
        return disj(*(conj(act == i, self.step(i, self.cur, self.nxt, self.choices(i, "t")))
                      for i in self.actions))

    def transition(self, i: int | str, j: int | str | None = None, src: State | None = None,
                   dst: State | None = None) -> Term:
        """T(s_i, s_j) with the selector and choices of step i."""
        src = src or self.state(i)
        if dst is None:
            if j is None:
                assert isinstance(i, int), "a named step needs its successor state"
                j = i + 1
            dst = self.state(j)
        pairs = list(zip(self.cur.slots, src.slots)) + list(zip(self.nxt.slots, dst.slots))
        pairs.append((self.act("t"), self.act(i)))
        for a in self.actions:
            for c in self.model.actions[a].choices:
                pairs.append((self.choice(a, c.name, "t"), self.choice(a, c.name, i)))
        return z3.substitute(self.relation, *pairs)

    def action_relation(self, action: int) -> Term:
        """T_a(cur, nxt) for one action, choices ``a.c@t`` free."""
        return self.step(action, self.cur, self.nxt, self.choices(action, "t"))

    @cached_property
    def deadlock(self) -> Term:
        """A non-final state with no firing that has a successor."""
        return conj(negate(self.end), *(negate(self.can_fire(a, self.cur)) for a in self.actions))

    def firing_of(self, names: Sequence[int]) -> Term:
        return disj(*(self.can_fire(a, self.cur) for a in names))

    # ---- initial states
    def _init_values(self) -> list[tuple[Term | None, Term]]:
        out = []
        for v in self.model.variables:
            size = self.offsets[v.name][2]
            inits = v.init if len(v.init) == size else v.init * size
            for init in inits:
                if init is None:
                    out.append((None, TRUE))
                else:
                    val, d = self.encode(init, self.zero, {})
                    out.append((as_int(val), d))
        return out

    def candidate(self, st: State) -> Term:
        """The slots fixed by `init` have their values; the others any value in range."""
        parts = [self.param_constraints(), self.ranges(st)]
        for x, (val, _) in zip(st.slots, self._init_values()):
            if val is not None:
                parts.append(x == val)
        return conj(*parts)

    def init(self, st: State) -> Term:
        return conj(self.candidate(st), self.predicate(self.model.initially, st))

    def init_error(self, st: State) -> Term:
        """Parameter values (and a candidate state) for which computing the initial states fails."""
        bad = []
        for (val, d), (lo, hi) in zip(self._init_values(), self.slot_bounds):
            if val is not None:
                bad.append(negate(conj(d, lo <= val, val <= hi)))
        return conj(self.param_constraints(), disj(*bad, conj(self.candidate(st),
                                                             negate(self.defined(self.model.initially, st)))))

    # ---- run-time errors
    @cached_property
    def error(self) -> Term:
        """States where `semantics.transitions` raises (bad index, bad divisor): a model error."""
        return self.error_of(self.actions)

    def error_of(self, actions: Sequence[int], end: bool = True) -> Term:
        """`error` as far as `actions` raise (and the end predicate, where `end`)."""
        st = self.cur
        end_v, end_d = self.encode(self.model.end, st, {})
        parts = []
        for a in actions:
            action = self.model.actions[a]

            def body(env: Env, a=a) -> Term:
                g, gd = self.guard(a, st, env)
                _, _, fd = self.effects(a, st, env)
                return disj(negate(gd), conj(as_bool(g), negate(fd)))

            range_defs: list[Term] = []
            for c in action.choices:
                self._choice_bounds(c.type, st, {}, range_defs)
            parts.append(disj(negate(conj(*range_defs)), self._exists_unchecked(a, st, body)))
        return disj(negate(end_d) if end else FALSE, conj(negate(as_bool(end_v)), disj(*parts)))

    def _exists_unchecked(self, action: int, st: State, body: Callable[[Env], Term]) -> Term:
        try:
            return self.exists_choice(action, st, body)
        except z3.Z3Exception as err:   # pragma: no cover - defensive
            raise Unsupported(f"run-time errors of {self.model.actions[action].name}: {err}") from None

    def claim_error(self, e: Expr) -> Term:
        return negate(self.defined(e, self.cur))

    def statically_false(self, pred: Term, extra: Term = TRUE) -> bool:
        """`pred` is unsatisfiable in every in-range state (a quick check to drop trivial conditions)."""
        if z3.is_false(pred):
            return True
        bound_z3()
        s = z3.Solver()
        s.set("rlimit", 5 * UNITS_PER_SECOND)
        s.add(self.param_constraints(), self.ranges(self.cur), extra, pred)
        return s.check() == z3.unsat

    # ---- misc
    def action_indices(self, wanted: str) -> list[int]:
        """Actions matching a name as the explicit engine does (``end Draw`` matches ``end Draw -> Play``)."""
        return [i for i in self.actions
                if self.model.actions[i].name == wanted or self.model.actions[i].name.split(" -> ")[0] == wanted]

    def turn_end_actions(self) -> list[int]:
        return [i for i in self.actions if self.model.actions[i].kind is ActionKind.TURN_END]


def _subterms(t: Term):
    stack = [t]
    while stack:
        n = stack.pop()
        yield n
        if z3.is_quantifier(n):
            continue
        stack.extend(n.children())


# ---------------------------------------------------------------- the operator table

def _ints(enc: Encoding, args, st, env) -> tuple[list[Term], Term]:
    parts = [enc.encode(a, st, env) for a in args]
    return [as_int(p[0]) for p in parts], conj(*(p[1] for p in parts))


def _arith(fn):
    def rule(enc, args, st, env):
        vals, d = _ints(enc, args, st, env)
        return fn(*vals), d
    return rule


def _division(is_mod: bool):
    def rule(enc, args, st, env):
        (a, b), d = _ints(enc, args, st, env)
        return (a % b if is_mod else a / b), conj(d, b > 0)
    return rule


def _compare(fn):
    def rule(enc, args, st, env):
        (a, b), d = _ints(enc, args, st, env)
        return fn(a, b), d
    return rule


def _and_or(is_and: bool):
    def rule(enc, args, st, env):
        values, defs, before = [], [], []
        for a in args:
            v, d = enc.encode(a, st, env)
            v = as_bool(v)
            # `all`/`any` stop at the first false/true: a later argument is evaluated only if
            # every earlier one was true (and) / false (or)
            defs.append(implies(conj(*before), d))
            before.append(v if is_and else negate(v))
            values.append(v)
        return (conj(*values) if is_and else disj(*values)), conj(*defs)
    return rule


def _not(enc, args, st, env):
    v, d = enc.encode(args[0], st, env)
    return negate(as_bool(v)), d


def _implies(enc, args, st, env):
    a, da = enc.encode(args[0], st, env)
    b, db = enc.encode(args[1], st, env)
    a = as_bool(a)
    return implies(a, as_bool(b)), conj(da, implies(a, db))


def _ite(enc, args, st, env):
    c, dc = enc.encode(args[0], st, env)
    x, dx = enc.encode(args[1], st, env)
    y, dy = enc.encode(args[2], st, env)
    c = as_bool(c)
    if not (z3.is_bool(x) and z3.is_bool(y)):
        x, y = as_int(x), as_int(y)
    return z3.If(c, x, y), conj(dc, implies(c, dx), implies(negate(c), dy))


def _minmax(is_min: bool):
    def rule(enc, args, st, env):
        vals, d = _ints(enc, args, st, env)
        out = vals[0]
        for v in vals[1:]:
            out = z3.If(v < out, v, out) if is_min else z3.If(v > out, v, out)
        return out, d
    return rule


_OPS: dict[Op, Callable] = {
    Op.ADD: _arith(lambda a, b: a + b),
    Op.SUB: _arith(lambda a, b: a - b),
    Op.MUL: _arith(lambda a, b: a * b),
    Op.DIV: _division(False),
    Op.MOD: _division(True),
    Op.NEG: _arith(lambda a: -a),
    Op.ABS: _arith(lambda a: z3.If(a < 0, -a, a)),
    Op.EQ: _compare(lambda a, b: a == b),
    Op.NE: _compare(lambda a, b: a != b),
    Op.LT: _compare(lambda a, b: a < b),
    Op.LE: _compare(lambda a, b: a <= b),
    Op.GT: _compare(lambda a, b: a > b),
    Op.GE: _compare(lambda a, b: a >= b),
    Op.AND: _and_or(True),
    Op.OR: _and_or(False),
    Op.NOT: _not,
    Op.IMPLIES: _implies,
    Op.ITE: _ite,
    Op.MIN: _minmax(True),
    Op.MAX: _minmax(False),
}
assert set(_OPS) == set(Op), "every IR operator has a Z3 translation"
