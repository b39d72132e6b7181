"""order-dependence: two actions that can be enabled together and whose effects do not commute.

Symbolic step (Z3, over *every* state within the variables' ranges, not only
reached ones, and for every value of the free parameters): for actions a and b
find a state s and choice values ca, cb such that

    a(ca) and b(cb) are both legal in s (not final, guard, no overflow block),
    b(cb) is still legal after a(ca), and a(ca) still legal after b(cb),
    and the two orders end in different states.

Pairs where one always disables the other are not order-dependent (the rules
then ask for a choice, not an order) and fail the second condition.

Candidate pairs: two different actions, not prohibitions, at least one a rule
action; when both belong to phases, the same phase; an implicit phase change
(`end P`, the turn passing) only with a rule action that has no phase (an
implicit action always leaves the phase of the actions it could race with).
Pairs declared in the model's `ordered` list (either order) are skipped, and so
are pairs that are syntactically independent (neither writes what the other
reads or writes; the end-of-game condition counts as read by both).

Who acts: when both actions are a player's (a written `by:`; without one, the
active player's), the order is that player's to pick unless two different players
may take them at the same moment, so the query also asks that the two actors
differ (and so does the confirmation on reached states). Two actions the
rules take (`chooser: rules`) stay candidates: the rules must say the order.

Explicit step (every parameter fixed): the pairs Z3 reports are confirmed on
the explored states in BFS order; the first reached state where both orders
are possible and differ is the evidence (a trace for each order, and the two
outcomes). When the exploration is complete and no reached state confirms a
pair, every reachable state where both apply gives the same result either way:
the pair is dropped for these parameter values (the Z3 witness is an
unreachable state). A state with more than MAX_COMBOS choice combinations of
the two is kept aside (UNSETTLED_KEEP of them per pair) and compared on every
combination once the scan is over; where more were set aside, or more than
CONFIRM_TRIES states were tried, the Z3 witness is reported. With free parameters, or an incomplete exploration, the
Z3 witness is reported as it is (state, choices, both outcomes).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, assert_never

from verifier.analysis.context import Context, Visitor
from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Param, Quant, Var, conjuncts, state_vars, walk
from verifier.ir.model import RULES, Action, ActionKind, BoolType, EnumType, IntType, Modality, Model, type_bounds
from verifier.resources import Budget
from verifier.result import Finding
from verifier.semantics import EvalError, actor_of
from verifier.trace import choice_words

KIND = "order-dependence"
QUERY_UNITS = 20_000_000        # Z3 resource units per pair (about 10 s of one core) ...
TOTAL_UNITS = 120_000_000       # ... and for all pairs of one model (about a minute)
CONFIRM_TRIES = 20_000          # reached states tried per pair before giving up confirming it
MAX_COMBOS = 16                 # choice combinations tried per state and pair during the scan ...
UNSETTLED_KEEP = 64             # ... states with more kept per pair, compared on all of them at the end


# ---------------------------------------------------------------- candidate pairs

def reads(a: Action, model: Model) -> set[str]:
    out = set(state_vars(a.guard)) | set(state_vars(model.end))
    for e in a.effects:
        out |= state_vars(e.value)
        if not hasattr(e.target, "index"):
            continue
        out |= state_vars(e.target.index)
    for c in a.choices:
        if isinstance(c.type, IntType):
            out |= state_vars(c.type.lo) | state_vars(c.type.hi)
    return out


def writes(a: Action) -> set[str]:
    return {e.target.name for e in a.effects}


def by_players(a: Action, b: Action) -> bool:
    """Both actions are taken by a player (a written `by:`, else the active player), not by the rules
    (`chooser: rules` on an action without choices; with choices it only says the rules fix their
    values): only a race between two players is order-dependent."""
    return all(x.actor is not None and not (x.chooser == RULES and not x.choices) for x in (a, b))


def candidate_pairs(model: Model) -> list[tuple[int, int]]:
    ordered = {frozenset(p) for p in model.ordered_pairs}
    acts = model.actions
    read = [reads(a, model) for a in acts]          # once an action, not once a pair
    written = [writes(a) for a in acts]
    out = []
    for i, a in enumerate(acts):
        for j in range(i + 1, len(acts)):
            b = acts[j]
            if Modality.MUST_NOT in (a.modality, b.modality) or a.name == b.name:
                continue
            implicit = [x for x in (a, b) if x.kind is not ActionKind.RULE]
            if len(implicit) == 2:
                continue
            if implicit:
                rule = b if implicit[0] is a else a
                if rule.phase_names:
                    continue
            elif a.phase_names and b.phase_names and not set(a.phase_names) & set(b.phase_names):
                continue
            if frozenset((a.name, b.name)) in ordered:
                continue
            wa, wb = written[i], written[j]
            if not (wa & wb or wa & read[j] or wb & read[i]):
                continue
            out.append((i, j))
    return out


# ---------------------------------------------------------------- the Z3 query

def z3_cut(said: object) -> str:
    """Why an analysis was cut short when Z3 said `said` ("" when no budget is to blame)."""
    from verifier.resources.memory import z3_out_of_memory

    reason = z3_out_of_memory(said)
    return f"cut short ({reason})" if reason else ""


class Witness:
    """A Z3 model of a non-commuting pair: the state, the choices and both outcomes (display values)."""

    def __init__(self, state: dict, ca: dict, cb: dict, ab: dict, ba: dict, params: dict):
        self.state, self.ca, self.cb, self.ab, self.ba, self.params = state, ca, cb, ab, ba, params


@dataclass(frozen=True)
class Answer:
    """What Z3 said of one pair's query within its units: `witness` where it is sat, else None;
    `left_open` says why when it is neither sat nor unsat (the analyses are then cut short with
    that reason, and the answer is never kept). `units`: the
    resource units the query spent, which a reading that uses a kept answer counts against its
    total as if it had asked (so that the total runs out at the same pair wherever the answers
    were computed)."""

    witness: Witness | None
    units: int
    left_open: str | None = None


def pairs_key(model: Model) -> tuple:
    """What every query of `model` shares (variables and their ranges, enums, parameters, the end of
    game): with the two actions, all an order-dependence query is encoded from (`Commutation`)."""
    return ("order-dependence", model.enums, model.variables, model.params, model.param_values, model.end)


def ask_ahead(models: Sequence[Model], budget: Budget, memo: dict) -> None:
    """The order-dependence queries of several readings of one rulebook, asked here once each, in
    the readings' order, into `memo` (which each reading then starts from, `runner.check_loaded`):
    readings mostly share their actions (Alpha Clash's four ask 2,700 queries, 698 of them
    different), and a query is the same formula wherever it is encoded, since its key holds all it
    is encoded from. Each answer is what the reading would have got asking itself (the same query,
    a fresh solver, the same rlimit); a reading the budget's backstop has passed is left to
    its own process, which says so."""
    for model in models:
        if budget.expired():
            return
        ctx = Context.create(model, budget, memo)
        symbolic_pairs(ctx, candidate_pairs(ctx.concrete or model.instantiate()))


def symbolic_pairs(ctx: Context, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], Witness]:
    """The pairs Z3 shows non-commuting in some in-range state (within their Z3 units).

    A query depends only on the two actions and what every action shares (`pairs_key`), so
    answers are kept in `ctx.memo`: readings of one rulebook mostly share their actions, and each
    pair is asked once (`ask_ahead`). An answer found there counts its units against this
    reading's total as if asked here, and one that spent more units than this reading has left
    for the query is left open, as it would have been here (a query Z3 left open is never kept)."""
    import z3

    from verifier.engines.symbolic.encode import Unsupported

    model = ctx.model
    answers: dict = ctx.memo.setdefault(pairs_key(model), {})
    out: dict[tuple[int, int], Witness] = {}
    asker: _Asker | None = None
    encodable = True
    spent = 0
    for n, (a, b) in enumerate(pairs):
        left = TOTAL_UNITS - spent
        if left <= 0:
            ctx.cut(f"left open: the order-dependence queries' Z3 units ({TOTAL_UNITS:,}) ran out after {n} of "
                    f"{len(pairs)} of them")
            break
        units = min(QUERY_UNITS, left)
        key = (model.actions[a], model.actions[b])
        answer = answers.get(key)
        if answer is None and exclusive(*key):
            answer = answers[key] = Answer(None, 0)     # never both legal: unsat, without Z3
        if answer is not None and answer.units > units:    # asked here, it would have run out of its units
            answer = Answer(None, units, _left_open(key, units, "max. resource limit exceeded"))
        elif answer is None and encodable:
            try:
                asker = asker or _Asker(model)
                answer = asker.ask(a, b, units)
            except (Unsupported, z3.Z3Exception) as err:
                ctx.cut(z3_cut(err))
                encodable = asker is not None       # no query of a model that cannot be encoded
                continue
            if answer.left_open is None:
                answers[key] = answer
        if answer is None:
            continue
        spent += answer.units
        if answer.left_open is not None:
            ctx.cut(answer.left_open)
        elif answer.witness is not None:
            out[(a, b)] = answer.witness
    return out


def exclusive(a: Action, b: Action) -> bool:
    """The top-level conjuncts of the two guards cannot all hold in one state, read as bounds on the
    same terms (``phase == Main`` and ``phase == End``; ``hand[active] < HAND_MAX`` and ``hand[active]
    >= HAND_MAX``; ``se_done`` and ``not se_done``; ``deck[active] > 0`` and ``deck[active] == 0``): no
    state has both actions legal, so their query is unsat and need not be asked (Alpha Clash: 379 of
    a reading's 695 pairs; Shadow Era 14 of its 42 different ones). A term is compared as written,
    and only one that reads no choice and binds no name (`_closed`): in one state it has one value,
    which each guard bounds."""
    lows: dict[tuple, int] = {}
    highs: dict[tuple, int] = {}
    unequal: dict[tuple, set[int]] = {}
    for subject, op, value in (*_bounds(a.guard), *_bounds(b.guard)):
        if op is Op.NE:
            unequal.setdefault(subject, set()).add(value)
            continue
        if op in (Op.EQ, Op.GE):
            lows[subject] = max(lows.get(subject, value), value)
        if op in (Op.EQ, Op.LE):
            highs[subject] = min(highs.get(subject, value), value)
    for subject in lows.keys() & highs.keys():
        low, high = lows[subject], highs[subject]
        if low > high or (low == high and low in unequal.get(subject, ())):
            return True
    return False


_SWAPPED = {Op.EQ: Op.EQ, Op.NE: Op.NE, Op.LT: Op.GT, Op.LE: Op.GE, Op.GT: Op.LT, Op.GE: Op.LE}
_NEGATED = {Op.EQ: Op.NE, Op.NE: Op.EQ, Op.LT: Op.GE, Op.LE: Op.GT, Op.GT: Op.LE, Op.GE: Op.LT}


def _bounds(guard: Expr) -> list[tuple[tuple, Op, int]]:
    """What a guard's top-level conjuncts say of single terms, as (subject, ==, != , <= or >=,
    integer): ``t op c`` bounds t, ``t op u`` bounds t - u (and u - t), a value read as a
    condition ``f`` is ``f != 0`` and ``not f`` is ``f == 0``; strict bounds made non-strict (the
    values are integers)."""
    out: list[tuple[tuple, Op, int]] = []
    for part in conjuncts(guard):
        negated = False
        while isinstance(part, App) and part.op is Op.NOT:
            part, negated = part.args[0], not negated
        if isinstance(part, (Var, Index)) and _closed(part):       # a value read as a condition: != 0
            out.append(((part,), Op.EQ if negated else Op.NE, 0))
            continue
        if not (isinstance(part, App) and part.op in _NEGATED):
            continue
        op = _NEGATED[part.op] if negated else part.op
        left, right = part.args
        if isinstance(left, Const) and not isinstance(right, Const):
            left, right, op = right, left, _SWAPPED[op]
        if isinstance(left, Const) or not _closed(left) or not (isinstance(right, Const) or _closed(right)):
            continue
        if isinstance(right, Const):
            out.append(_bound((left,), op, right.value))
        else:
            out += [_bound((left, right), op, 0), _bound((right, left), _SWAPPED[op], 0)]
    return out


def _bound(subject: tuple, op: Op, value: int) -> tuple[tuple, Op, int]:
    """`subject op value` with `<` and `>` made `<=` and `>=`."""
    if op is Op.LT:
        return subject, Op.LE, value - 1
    if op is Op.GT:
        return subject, Op.GE, value + 1
    return subject, op, value


def _closed(e: Expr) -> bool:
    """An integer term of the state and the parameters alone: variables, array elements,
    parameters, constants and arithmetic over them (no choice, no bound name, no condition)."""
    return all(_closed_node(n) for n in walk(e))


def _closed_node(n: Expr) -> bool:
    match n:
        case Var() | Index() | Param() | Const():
            return True
        case App():
            return n.op in _ARITHMETIC
        case Local() | Quant():
            return False
        case _:
            assert_never(n)


_ARITHMETIC = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MOD, Op.NEG, Op.MIN, Op.MAX, Op.ABS})


def _left_open(pair: tuple[Action, Action], units: int, said: str) -> str:
    """Why the analyses are left open where Z3 did not decide a pair's query: no finding is
    claimed absent that was not shown absent."""
    return (f"left open: Z3 did not decide whether {pair[0].name} and {pair[1].name} commute within "
            f"{units:,} resource units ({said})")


class _Asker:
    """One model's order-dependence queries, each to fresh solvers (the encoding shared): first a
    `z3.SimpleSolver` (no preprocessing, which these small queries do not pay for: Alpha Clash's 319
    different queries 0.95 -> 0.70 s of CPU), which decides every unsat one; where it says sat or
    runs out, the query is asked again as it always was, so a witness, or a query left open, is
    the same Z3 answer as without the first."""

    def __init__(self, model: Model):
        from verifier.engines.symbolic.encode import Encoding, conj
        from verifier.resources.memory import bound_z3

        bound_z3()
        self.enc = Encoding(model)
        self.base = conj(self.enc.param_constraints(), self.enc.ranges(self.enc.cur))
        self.commutation = Commutation(self.enc)

    def ask(self, a: int, b: int, units: int) -> Answer:
        """The answer to pair (a, b)'s query within `units`."""
        import z3

        from verifier.engines.symbolic.core import rlimit_count
        from verifier.resources.memory import bound_z3

        enc = self.enc
        query, (ca, cb), (s12, s21) = self.commutation.query(a, b)
        for make in (z3.SimpleSolver, z3.Solver):
            bound_z3()
            solver = make()
            solver.set("rlimit", units)
            solver.add(self.base, query)
            before = rlimit_count()
            answer = solver.check()
            spent = rlimit_count() - before
            if answer == z3.unsat:
                return Answer(None, spent)
        if answer != z3.sat:
            said = solver.reason_unknown()
            x, y = enc.model.actions[a], enc.model.actions[b]
            return Answer(None, spent, z3_cut(said) or _left_open((x, y), units, said))
        m = solver.model()

        def val(t) -> int:
            return m.eval(t, model_completion=True).as_long()

        def show(slots) -> dict:
            return {s.name: _display(s.type, val(x), enc.model) for s, x in zip(enc.slots, slots)}

        state = show(enc.cur.slots)
        ab, ba = show(s12), show(s21)
        diff = [k for k in ab if ab[k] != ba[k]]
        return Answer(Witness(state, {k: val(t) for k, t in ca.items()}, {k: val(t) for k, t in cb.items()},
                              {k: ab[k] for k in diff}, {k: ba[k] for k in diff},
                              {name: val(p) for name, p in enc.params.items()}), spent)


class Commutation:
    """The Z3 conditions on `enc.cur` (choice symbols free) under which two actions are both
    legal, stay legal after each other, and the two orders end in different states; each
    action is encoded once, whatever the number of pairs it is in."""

    def __init__(self, enc):
        self.enc = enc
        self._encoded: dict[int, tuple] = {}

    def noncommuting(self, a: int, b: int):
        return self.query(a, b)[0]

    def query(self, a: int, b: int) -> tuple:
        """(the condition of `noncommuting`, the two choice environments, the two outcomes' slot terms)."""
        from verifier.engines.symbolic.encode import conj, disj

        enc, cur = self.enc, self.enc.cur
        la, na, ca = self._encode(a)
        lb, nb, cb = self._encode(b)
        s12 = [self._after(y, na) if y is not x else z for x, y, z in zip(cur.slots, nb, na)]
        s21 = [self._after(z, nb) if z is not x else y for x, y, z in zip(cur.slots, nb, na)]
        differ = disj(*(x != y for x, y in zip(s12, s21)))
        parts = [la, lb, self._after(lb, na), self._after(la, nb), differ]
        x, y = enc.model.actions[a], enc.model.actions[b]
        if by_players(x, y):
            assert x.actor is not None and y.actor is not None, "by_players: both name their player"
            parts.append(enc.value(x.actor, cur, ca) != enc.value(y.actor, cur, cb))
        return conj(*parts), (ca, cb), (s12, s21)

    def _encode(self, k: int) -> tuple:
        """(legal in cur, successor terms, choice symbols) of action k."""
        from verifier.engines.symbolic.encode import conj

        if k not in self._encoded:
            enc, cur = self.enc, self.enc.cur
            env = enc.choices(k, "X")
            new, _ok, defined = enc.effects(k, cur, env)
            legal = conj(enc.enabled(k, cur, env), enc.defined(enc.model.actions[k].guard, cur, env), defined)
            self._encoded[k] = (legal, new, env)
        return self._encoded[k]

    def _after(self, term, new):
        """`term` (over cur) in the state `new`; only the slots the action changes are replaced."""
        import z3

        pairs = [(x, y) for x, y in zip(self.enc.cur.slots, new) if y is not x]
        return z3.substitute(term, *pairs) if pairs else term


def _display(t, value: int, model: Model) -> Any:
    if isinstance(t, BoolType):
        return bool(value)
    if isinstance(t, EnumType):
        return t.values[value] if 0 <= value < len(t.values) else value
    return value


# ---------------------------------------------------------------- confirmation on reached states

class OrderDependence(Visitor):
    def __init__(self, ctx: Context):
        self.ctx = ctx
        model = ctx.concrete or ctx.model.instantiate()
        self.pairs = candidate_pairs(model)
        self.witness = symbolic_pairs(ctx, self.pairs)
        self.watched = {x for pair in self.witness for x in pair}
        self.confirmed: dict[tuple[int, int], tuple] = {}
        self.tries: dict[tuple[int, int], int] = {}
        self.excluded: set[tuple[int, int]] = set()    # shown unreachable beyond the explored states
        self.unsettled: dict[tuple[int, int], list | None] = {}   # states whose combinations were not all compared:
        # (index, packed state, options), at most UNSETTLED_KEEP; None once more were met

    @property
    def done(self) -> bool:
        return all(p in self.confirmed or self.tries.get(p, 0) >= CONFIRM_TRIES for p in self.witness)

    def visit(self, i, s, firings) -> None:
        if not self.watched:
            return
        options: dict[int, list] = {}
        for a, choice, target, _gap in firings:
            if a in self.watched and target is not None:
                options.setdefault(a, []).append((choice, target))
        if len(options) < 2:
            return
        for pair in self.witness:
            if pair in self.confirmed or pair[0] not in options or pair[1] not in options:
                continue
            tries = self.tries.get(pair, 0)
            if tries >= CONFIRM_TRIES:
                continue
            self.tries[pair] = tries + 1
            hit = self._differ(pair, options, s, MAX_COMBOS)
            if hit is None and len(options[pair[0]]) * len(options[pair[1]]) > MAX_COMBOS:
                self._set_aside(pair, i, s, options)
            if hit is not None:
                self.confirmed[pair] = (i,) + hit

    def _set_aside(self, pair, i: int, s: int, options) -> None:
        kept: list | None = self.unsettled.setdefault(pair, [])
        if kept is not None and len(kept) < UNSETTLED_KEEP:
            kept.append((i, s, {a: options[a] for a in pair}))
        else:
            self.unsettled[pair] = None

    def _settle(self, pair) -> bool:
        """Compare the states set aside for `pair` on every choice combination: True when none
        differs (and none was left out), after recording the first that does in `confirmed`."""
        kept = self.unsettled.get(pair, [])
        for i, s, options in kept or ():
            hit = self._differ(pair, options, s, None)
            if hit is not None:
                self.confirmed[pair] = (i,) + hit
                return False
        return kept is not None

    def _differ(self, pair, options, s: int, limit: int | None):
        a, b = pair
        x, y = self.ctx.action(a), self.ctx.action(b)
        state = self.ctx.unpack(s) if by_players(x, y) else None
        combos = 0
        for ca, ta in options[a]:
            for cb, tb in options[b]:
                combos += 1
                if limit is not None and combos > limit:
                    return None         # set aside by `visit`, compared on every combination at the end
                if state is not None and \
                        actor_of(self.ctx.layout, x, state, dict(ca)) == actor_of(self.ctx.layout, y, state, dict(cb)):
                    continue            # one player takes both: the order is theirs to pick
                tab = self._after(ta, b, cb)
                tba = self._after(tb, a, ca)
                if tab is not None and tba is not None and tab != tba:
                    return ca, cb, ta, tb, tab, tba
        return None

    def _after(self, s: int, action: int, choice):
        """The state `action` with `choice` leads to from `s`; None when it cannot be taken there, or when
        expanding `s` meets a model error (the claims report that; no order can be compared there)."""
        try:
            firings = self.ctx.expand(s)
        except EvalError:
            return None
        for a, c, t, _g in firings:
            if a == action and c == choice and t is not None:
                return t
        return None

    def findings(self) -> list[Finding]:
        ctx = self.ctx
        model = ctx.concrete or ctx.model.instantiate()
        exhaustive = ctx.explicit and ctx.complete
        free = not model.is_concrete
        out = []
        for (a, b), w in self.witness.items():
            x, y = model.actions[a], model.actions[b]
            subject = f"{x.name}|{y.name}"
            settled = (a, b) not in self.unsettled or (exhaustive and (a, b) not in self.confirmed
                                                       and self._settle((a, b)))
            hit = self.confirmed.get((a, b))
            if hit is not None:
                i, ca, cb, ta, tb, pab, pba = hit      # packed states
                state = ctx.space.states[i]
                tab, tba = ctx.unpack(pab), ctx.unpack(pba)
                diff = [s.name for s, u, v in zip(ctx.layout.slots, tab, tba) if u != v]
                before = ctx.state_words(state, _unique(ctx.relevant_slots([x, y], effects=True) + diff))
                ab, ba = ctx.show(tab, diff), ctx.show(tba, diff)
                message = (_sentence(ctx, x, y, ca, cb) + (f" when {before}" if before else "")
                           + f"{ctx.where(state)} gives different results ({_outcome(ctx, x, y, ab)}; "
                           f"{_outcome(ctx, y, x, ba)}), and the rules do not say which comes first.")
                traces = (ctx.trace_to(i, [(a, ca, ta), (b, cb, pab)]), ctx.trace_to(i, [(b, cb, tb), (a, ca, pba)]))
                found: dict[str, Any] = {"state": ctx.show(state), "choices": {x.name: dict(ca), y.name: dict(cb)},
                            f"{x.name} then {y.name}": ab, f"{y.name} then {x.name}": ba,
                            "confirmed_on_reached_state": True,
                            "z3_state": w.state}
                out.append(ctx.finding(KIND, subject, message, rules=ctx.citations(x, y), traces=traces,
                                       evidence=found, engine="z3", scope=ctx.scope_concrete(), span=x.span))
                continue
            if exhaustive and self.tries.get((a, b), 0) < CONFIRM_TRIES and settled:
                continue        # every reachable state where both apply commutes: the witness is unreachable
            if (a, b) in self.excluded:
                continue        # proved: no reachable state has both orders legal and different
            ca, cb = tuple(w.ca.items()), tuple(w.cb.items())
            names = _unique(_names(model, [x, y]) + list(w.ab))
            said = ctx.names
            when = ", ".join(f"{said.slot(k)} = {_word(said.value(k, v))}" for k, v in w.state.items() if k in names)
            params = ", ".join(f"{k} = {v}" for k, v in w.params.items())
            message = (_sentence(ctx, x, y, ca, cb)
                       + f" can give different results ({_outcome(ctx, x, y, w.ab)}; {_outcome(ctx, y, x, w.ba)})"
                       + (f" when {when}" if when else "") + (f" with {params}" if params else "")
                       + ", a state the variables' ranges allow, and the rules do not say which comes first.")
            evidence: dict[str, Any] = {"z3_state": w.state, "choices": {x.name: w.ca, y.name: w.cb},
                                        f"{x.name} then {y.name}": w.ab, f"{y.name} then {x.name}": w.ba,
                                        "confirmed_on_reached_state": False}
            if w.params:
                evidence["parameters"] = w.params
            scope = "searched over all parameter values" if free else ctx.scope_concrete()
            scope += "; over every state within the variables' ranges (not shown reachable)"
            out.append(ctx.finding(KIND, subject, message, rules=ctx.citations(x, y), evidence=evidence,
                                   engine="z3", scope=scope, span=x.span))
        return out


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _sentence(ctx: Context, x: Action, y: Action, cx, cy) -> str:
    def name(a: Action, c) -> str:
        words = ctx.action_words(a)
        return words + (" with " + ", ".join(f"{k} = {_word(v)}" for k, v in choice_words(a, c)) if c else "")
    return f"Taking {name(x, cx)} ({ctx.section(x)}) and {name(y, cy)} ({ctx.section(y)}) in the two orders"


def _outcome(ctx: Context, first: Action, second: Action, values: dict) -> str:
    said = ctx.names
    shown = ", ".join(f"{said.slot(k)} = {_word(said.value(k, v))}" for k, v in values.items())
    return f"{first.name} then {second.name}: {shown}"


def _names(model: Model, actions: list[Action]) -> list[str]:
    """Slot names (``x``, ``hand[0]``) of the variables the actions' guards and effects read."""
    from verifier.analysis.context import own_guard
    used: list[str] = []
    for a in actions:
        for v in sorted(set(state_vars(own_guard(a, model))) | {n for e in a.effects for n in state_vars(e.value)}):
            if v not in used and v not in ("phase", "active"):
                used.append(v)
    out = []
    for v in used:
        var = model.var(v)
        if var.index is None:
            out.append(v)
        else:
            lo, hi = type_bounds(var.index)
            out += [f"{v}[{var.index.values[i] if isinstance(var.index, EnumType) else i}]" for i in range(lo, hi + 1)]
    return out


def _word(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)
