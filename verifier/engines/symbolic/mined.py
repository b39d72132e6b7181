"""Safety claims proved by induction strengthened with lemmas mined from reachable states.

Where an explicit search stopped at its cap, it has still seen many reachable states. The
candidate lemmas are short facts true in every one of them and in the states of seeded
random runs (`strengthen.random_states`, which reach deeper than a breadth-first search):

- clauses over interval literals (``x == v``, ``x <= v``, ``x >= v``): ``not l`` where no
  state satisfies `l`, and ``not (l1 and l2)`` over two slots where no state satisfies both,
  only the strongest of each family (the literals' intervals as large as the states allow);
- linear equalities ``c1*x1 + ... + cn*xn == b`` that every such state satisfies (a basis of
  their affine hull's equations, with integer coefficients);
- context lemmas ``l1 and ... and ln -> a*u + b*w == c`` over a pair of small counters
  (`context_lemmas`): a fact that holds only where a few control literals do (the phase, the
  active player, a flag), beyond what two-literal clauses can say.

With free parameters the states come from a search at their default values (the engine's
`_free_states`): what holds there only, Houdini drops, so what it keeps holds for every value.

Mining only proposes: nothing is believed because states satisfied it. Houdini
(`strengthen.houdini`) keeps the subset that holds initially and that every action preserves
from the states where all of it holds (the context lemmas in a second step, for the claims
that need more than the others), with the claim as one more candidate, so that lemmas
that need the claim survive with it. A claim that survives is proved (1-inductive with the
lemmas); otherwise k-induction is tried with the lemmas assumed in every state of the step
case (they hold in every reachable state, so this only removes unreachable paths). Before a
proof is reported, the lemmas (with the claim, when it is one of them) are proved inductive
again by fresh solvers (`strengthen.recheck`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations, product
from math import gcd, lcm

import numpy as np
import z3

from verifier.engines.symbolic.core import Effort, Outcome, Safety
from verifier.engines.symbolic.encode import Encoding, Term, conj, negate, numeral
from verifier.engines.symbolic.kinduction import kinduction
from verifier.engines.symbolic.pdr import pdr
from verifier.engines.symbolic.strengthen import Clause, Literal, deep_runs, houdini, lemma_term, recheck
from verifier.ir.expr import App, Const, Expr, Index, Op, Var, walk
from verifier.ir.model import BoolType, EnumType

MINED = "mined-lemmas"   # the method's name in results
EQ_DOMAIN = 8            # an integer slot with at most this many values also gets literals x == v
THRESHOLDS = 24          # literals x <= v and x >= v per integer slot, at most about this many values v each
MAX_K = 2                # k-induction relative to the lemmas, up to this k
WIDEN_SHARE = 0.25       # of a claim's Z3 units, for adding the context lemmas to the lemmas kept (once per model; resumable)
EQUATION_ROWS = 400      # states the linear equalities are found from (then checked on all)
CONTROLS = 4             # context slots per pair of counters, at most (see `context_lemmas`)
CONTEXT_LEMMAS = 300     # context lemmas per model, at most (the shortest contexts first)


@dataclass(frozen=True)
class Linear:
    """``sum(c * x[slot]) op bound``, op one of ==, <=, >=."""

    coeffs: tuple[tuple[int, int], ...]      # (slot, coefficient), coefficient != 0
    op: str
    bound: int

    def value(self, values) -> int:
        return sum(c * values[k] for k, c in self.coeffs)

    def holds(self, values) -> bool:
        return _compare(self.value(values), self.op, self.bound)

    def column(self, table: np.ndarray) -> np.ndarray:
        return _compare(table[:, [k for k, _ in self.coeffs]] @ np.array([c for _, c in self.coeffs]),
                        self.op, self.bound)

    def term(self, xs) -> Term:
        return _compare(z3.Sum([c * xs[k] for k, c in self.coeffs]), self.op, self.bound)


def _compare(x, op: str, bound: int):
    return x == bound if op == "==" else x <= bound if op == "<=" else x >= bound


@dataclass(frozen=True)
class Implied:
    """``l1 and ... and ln -> fact``: a linear fact over two slots that holds where the context
    literals do (``fleft[0] >= 1 and active == 0 and phase == Action -> fturns[0] + fleft[0] == 3``)."""

    context: tuple[Literal, ...]
    fact: Linear

    def holds(self, values) -> bool:
        return not all(lit.holds(values) for lit in self.context) or self.fact.holds(values)

    def column(self, table: np.ndarray) -> np.ndarray:
        return ~np.logical_and.reduce([lit.column(table) for lit in self.context]) | self.fact.column(table)

    def term(self, xs) -> Term:
        return z3.Implies(conj(*(lit.term(xs) for lit in self.context)), self.fact.term(xs))


@dataclass(frozen=True)
class Goal:
    """The claim's good states as a Houdini candidate (its term over `enc.cur`)."""

    good: Term
    cur: tuple[Term, ...]

    def term(self, xs) -> Term:
        return self.good if tuple(xs) == self.cur else z3.substitute(self.good, *zip(self.cur, xs))

    def holds(self, values) -> bool:
        """Whether the state with these slot values satisfies it: the term with the values put in
        through Z3's C API, simplified (z3.substitute's checks of each pair cost ten times more:
        0.5 ms for a WTactics guard over 27 slots)."""
        ctx = self.good.ctx
        n = len(self.cur)
        put = (z3.Ast * n)(*(_int(v).as_ast() for v in values))
        src = (z3.Ast * n)(*(x.as_ast() for x in self.cur))
        return z3.is_true(z3.simplify(z3.BoolRef(z3.Z3_substitute(ctx.ref(), self.good.as_ast(), n, src, put), ctx)))

    def __hash__(self) -> int:
        return self.good.hash()

    def __eq__(self, other) -> bool:
        return isinstance(other, Goal) and self.good.eq(other.good)


_INTS: dict[int, Term] = {}


def _int(v: int) -> Term:
    """Z3's integer `v`, made once."""
    term = _INTS.get(v)
    if term is None:
        term = _INTS[v] = z3.IntVal(v)
    return term


@dataclass
class Mined:
    """The candidates of one model, and their inductive subset once Houdini has run on them alone:
    first without the context lemmas (as cheap as before them, for the claims that need none),
    then with them added to that subset."""

    every: list                       # every candidate mined (a claim may keep some alive)
    explored: int                     # states they were mined from
    candidates: list = field(default_factory=list)   # those Houdini has not dropped without a claim
    alone: list | None = None         # Houdini's survivors without a claim, once it finished
    contexts: list = field(default_factory=list)     # context lemmas not yet added to `alone`
    terms: dict = field(default_factory=dict)        # lemma -> its term over the current state, built once
    rechecked: list = field(default_factory=list)    # the last lemmas fresh solvers showed inductive alone ...
    rechecked_on: tuple = ()          # ... and what of the encoding they read (`_read_by_recheck`)

    def __post_init__(self) -> None:
        if not self.candidates:
            self.candidates = [c for c in self.every if not isinstance(c, Implied)]
            self.contexts = [c for c in self.every if isinstance(c, Implied)]


def mine(enc: Encoding, explored: np.ndarray, params: dict[str, int] | None = None) -> Mined:
    """Candidate lemmas true in every row of `explored` (reachable states, one column per slot of a
    concrete model) and in the states of seeded random runs from its deepest rows (`strengthen.deep_runs`,
    at these values of the free parameters; from the initial states when nothing was explored)."""
    n = len(enc.slots)
    rows = [explored[:, :n]] if len(explored) else []
    runs = deep_runs(enc, params or {}, explored)
    if runs:
        rows.append(np.array(sorted(runs), dtype=np.int64))
    if not rows:
        return Mined([], 0)
    table = np.concatenate(rows)
    candidates: list = _equations(table) + _bounds(enc, table) + context_lemmas(enc, table) + _clauses(enc, table)
    return Mined(_unbroken(candidates, table), len(table))


def _unbroken(candidates: list, table: np.ndarray) -> list:
    """The candidates no row of `table` breaks (those mined from a sample are checked on all); each
    literal's column computed once (WTactics: 1,784 columns of 50,887 rows were 326 literals')."""
    columns: dict[Literal, np.ndarray] = {}

    def column(lit: Literal) -> np.ndarray:
        if lit not in columns:
            columns[lit] = lit.column(table)
        return columns[lit]

    out = []
    for c in candidates:
        if isinstance(c, tuple):
            holds = ~np.logical_and.reduce([column(lit) for lit in c])
        elif isinstance(c, Implied):
            holds = ~np.logical_and.reduce([column(lit) for lit in c.context]) | c.fact.column(table)
        else:
            holds = c.column(table)
        if np.all(holds):
            out.append(c)
    return out


# ---------------------------------------------------------------- clauses

def _literals(enc: Encoding, table: np.ndarray) -> list[tuple[Literal, int, int]]:
    """Per slot, interval literals with their intervals [lo, hi] (not the whole domain)."""
    out = []
    for k, (slot, (lo_t, hi_t)) in enumerate(zip(enc.slots, enc.slot_bounds)):
        lo, hi = numeral(lo_t), numeral(hi_t)
        if lo is None or hi is None or hi <= lo:
            continue
        small = isinstance(slot.type, (BoolType, EnumType)) or hi - lo + 1 <= EQ_DOMAIN
        if small:
            out += [(Literal(k, "==", v), v, v) for v in range(lo, hi + 1)]
        if isinstance(slot.type, (BoolType, EnumType)):
            continue
        seen = np.unique(table[:, k])
        points = sorted({int(v) for v in np.quantile(seen, np.linspace(0, 1, THRESHOLDS), method="nearest")} |
                        {int(seen.min()) - 1, int(seen.max()) + 1}) if hi - lo >= THRESHOLDS else list(range(lo, hi + 1))
        out += [(Literal(k, "<=", v), lo, v) for v in points if lo <= v < hi and not (small and v == lo)]
        out += [(Literal(k, ">=", v), v, hi) for v in points if lo < v <= hi and not (small and v == hi)]
    return out


def _clauses(enc: Encoding, table: np.ndarray) -> list[Clause]:
    """`not l` and `not (l1 and l2)` that no row breaks, the strongest of each family: a clause
    is dropped when another one's literals have intervals containing its own. Per pair of slots,
    the pairs of cells (`_cells`) the rows take (a grid) decide which literal pairs some row satisfies."""
    groups: dict[int, list[tuple[Literal, int, int]]] = {}
    for lit in _literals(enc, table):
        groups.setdefault(lit[0].slot, []).append(lit)
    slots = sorted(groups)
    cells = {k: _cells(groups[k]) for k in slots}
    size = {k: len(cells[k]) for k in slots}
    member = {k: np.array([[lo <= start <= hi for start in cells[k]] for _, lo, hi in groups[k]],
                          dtype=np.int64) for k in slots}            # literal x cell
    within = {k: np.array([[lo2 <= lo and hi <= hi2 for _, lo2, hi2 in groups[k]] for _, lo, hi in groups[k]],
                          dtype=np.int64) for k in slots}            # literal a inside literal a'
    column = {k: np.searchsorted(np.array(cells[k], dtype=np.int64), table[:, k], side="right") - 1 for k in slots}
    seen = {k: np.bincount(column[k], minlength=size[k]) > 0 for k in slots}
    occurs = {k: member[k] @ seen[k] > 0 for k in slots}
    out: list[Clause] = []
    for k in slots:
        never = ~occurs[k]
        widest = never & (within[k] @ never == 1)
        out += [(groups[k][a][0],) for a in np.flatnonzero(widest)]
    for i, k in enumerate(slots):
        for j in slots[i + 1:]:
            grid = (np.bincount(column[k] * size[j] + column[j], minlength=size[k] * size[j]) > 0)
            together = member[k] @ grid.reshape(size[k], size[j]).astype(np.int64) @ member[j].T
            pair = ((together == 0) & occurs[k][:, None] & occurs[j][None, :]).astype(np.int64)
            best = (pair == 1) & (within[k] @ pair @ within[j].T == 1)
            out += [(groups[k][a][0], groups[j][b][0]) for a, b in zip(*np.nonzero(best))]
    return out


def _cells(literals: list[tuple[Literal, int, int]]) -> list[int]:
    """Where the cells begin that the intervals of a slot's `literals` cut its values into: each
    interval is a run of whole cells, so the clauses are found over the cells (at most two per
    literal) and never over the values, however wide the slot's type."""
    return sorted({lo for _, lo, _ in literals} | {hi + 1 for _, _, hi in literals})[:-1]


# ---------------------------------------------------------------- context lemmas

def context_lemmas(enc: Encoding, table: np.ndarray) -> list[Implied]:
    """Facts over a pair of small counters that hold in one context only. The pairs are two
    scalars, or the same element of two arrays over one index (``fleft[p]``, ``fturns[p]``),
    that some action writes together or writes one of from the other. Per pair, the states
    are split by the values of its control slots (the small scalars read by the actions that
    assign it: ``phase``, ``active``, ...) and by whether each counter is at its least value,
    or not; where the pair's values in a part are constant or on one line, the fact is kept
    with the fewest of the part's literals under which no state breaks it. At most
    CONTEXT_LEMMAS, the facts over two slots first, then the shortest contexts."""
    small = _small_slots(enc)
    reads, writes = _access(enc)
    out: set[Implied] = set()
    for ku, kw in _pairs(enc, small, reads, writes):
        cols = [*_controls(enc, (ku, kw), small, reads, writes), ku, kw]
        out |= _pair_lemmas(cols, _distinct(table, cols, small), small)
    return sorted(out, key=lambda c: (len(c.fact.coeffs) == 1, len(c.context), repr(c)))[:CONTEXT_LEMMAS]


def _distinct(table: np.ndarray, cols: list[int], small: dict) -> np.ndarray:
    """The distinct rows of `table` restricted to the small slots `cols` (one integer code per row)."""
    lows = np.array([small[k][0] for k in cols])
    sizes = np.array([small[k][1] - small[k][0] + 1 for k in cols])
    radix = np.concatenate([np.cumprod(sizes[::-1])[::-1][1:], [1]])
    codes = np.unique((table[:, cols] - lows) @ radix)
    return (codes[:, None] // radix) % sizes + lows


def _small_slots(enc: Encoding) -> dict[int, tuple[int, int]]:
    """The slots with known bounds and at most EQ_DOMAIN values, with their bounds."""
    out = {}
    for k, (lo_t, hi_t) in enumerate(enc.slot_bounds):
        lo, hi = numeral(lo_t), numeral(hi_t)
        if lo is not None and hi is not None and 0 < hi - lo < EQ_DOMAIN:
            out[k] = (lo, hi)
    return out


def _access(enc: Encoding) -> tuple[list[set[str]], list[set[str]]]:
    """Per action, the variables its guard, values and written indices read, and those it writes;
    the reads of the guard and written indices alone come first in `_controls`."""
    reads, writes = [], []
    for a in enc.model.actions:
        exprs = [a.guard, *(x.value for x in a.effects), *(x.target.index for x in a.effects
                                                        if isinstance(x.target, Index))]
        reads.append({v.name for e in exprs for v in walk(e) if isinstance(v, (Var, Index))})
        writes.append({x.target.name for x in a.effects})
    return reads, writes


def _pairs(enc: Encoding, small: dict, reads: list[set[str]], writes: list[set[str]]) -> list[tuple[int, int]]:
    """Pairs of small slots that are integers or flags (enum values are only controls), at least
    one of them an integer: two scalars, or element i of two arrays over the same index; of two
    variables that one action writes together, or one action writes one of while reading the other."""
    def related(a: str, b: str) -> bool:
        return any((a in w and b in w | r) or (b in w and a in w | r) for r, w in zip(reads, writes))

    def counter(k: int) -> bool:
        return not isinstance(enc.slots[k].type, (BoolType, EnumType))

    groups: dict[tuple[int, int], list[str]] = {}       # (index low, size) -> variables, scalars: (0, 0)
    for name, (start, lo, size) in enc.offsets.items():
        if all(start + i in small for i in range(size)) and not isinstance(enc.slots[start].type, EnumType):
            groups.setdefault((lo, size) if enc.slots[start].index is not None else (0, 0), []).append(name)
    out = []
    for names in groups.values():
        for a, b in combinations(names, 2):
            if related(a, b):
                out += [(enc.offsets[a][0] + i, enc.offsets[b][0] + i) for i in range(enc.offsets[a][2])
                        if counter(enc.offsets[a][0] + i) or counter(enc.offsets[b][0] + i)]
    return out


def _controls(enc: Encoding, pair: tuple[int, int], small: dict, reads: list[set[str]],
              writes: list[set[str]]) -> list[int]:
    """The small scalar slots (not the pair's) read by the actions that write the pair's
    variables, in slot order, at most CONTROLS."""
    names = {enc.slots[k].var for k in pair}
    read = set().union(*(r for r, w in zip(reads, writes) if w & names))
    return [k for k in sorted(small) if enc.slots[k].index is None and enc.slots[k].var in read
            and k not in pair][:CONTROLS]


def _pair_lemmas(cols: list[int], rows: np.ndarray, small: dict) -> set[Implied]:
    """The context lemmas of one pair (the last two of `cols`) from the distinct `rows` (one
    column per slot of `cols`), with the parts split by both counters' least values, by one
    of them or by neither."""
    ku, kw = cols[-2:]
    least = rows[:, -2:] == np.array([small[ku][0], small[kw][0]])
    controls = np.unique(rows[:, :-2], axis=0, return_inverse=True)[1].ravel() * 4
    out: set[Implied] = set()
    for split in ((True, True), (True, False), (False, True), (False, False)):
        keys = controls + split[0] * 2 * least[:, 0] + split[1] * least[:, 1]
        order = np.argsort(keys, kind="stable")
        starts = np.flatnonzero(np.diff(keys[order], prepend=-1))
        for part in np.split(order, starts[1:]):
            first = rows[part[0]]
            fixed = [bool(s and z) for s, z in zip(split, least[part[0]])]
            facts = _facts(ku, kw, rows[part][:, -2:], fixed, small)
            if not facts:
                continue
            lits = [Literal(k, "==", int(v)) for k, v in zip(cols[:-2], first[:-2])]
            lits += [_least(k, bool(z), small[k]) for k, s, z in zip((ku, kw), split, least[part[0]]) if s]
            for fact in facts:
                context = _weakest(lits, fact, cols, rows)
                if len(context) > 1 or (context and len(fact.coeffs) > 1):   # one literal, x == c: two clauses
                    out.add(Implied(tuple(context), fact))
    return out


def _least(k: int, at_least: bool, bounds: tuple[int, int]) -> Literal:
    """``x == lo`` or the literal for every other value (``x == hi`` for a flag)."""
    lo, hi = bounds
    return Literal(k, "==", lo) if at_least else Literal(k, "==", hi) if hi == lo + 1 else Literal(k, ">=", lo + 1)


def _facts(ku: int, kw: int, points: np.ndarray, fixed: list[bool], small: dict) -> list[Linear]:
    """``u == c`` and ``w == c`` where constant (and not fixed by the part already), or
    ``a*u + b*w == c`` where the points (u, w) of a part lie on one line."""
    us, ws = {int(v) for v in points[:, 0]}, {int(v) for v in points[:, 1]}
    out = [Linear(((k, 1),), "==", next(iter(vs))) for k, vs, known in ((ku, us, fixed[0]), (kw, ws, fixed[1]))
           if len(vs) == 1 and not known and small[k][1] > small[k][0] + 1]
    if len(us) > 1 and len(ws) > 1:
        (u0, w0), (u1, w1) = points[0].tolist(), points[1].tolist()
        a, b = w1 - w0, u0 - u1
        g = gcd(a, b) * (1 if a > 0 or (a == 0 and b > 0) else -1)
        a, b = a // g, b // g
        c = a * u0 + b * w0
        if np.all(points @ np.array([a, b]) == c):
            out.append(Linear(((ku, a), (kw, b)), "==", c))
    return out


def _weakest(lits: list[Literal], fact: Linear, cols: list[int], rows: np.ndarray) -> list[Literal]:
    """`lits` less each literal (in turn) without which no row still breaks `fact` where the
    remaining literals hold."""
    at = {k: i for i, k in enumerate(cols)}
    broken = rows[:, [at[k] for k, _ in fact.coeffs]] @ np.array([c for _, c in fact.coeffs]) != fact.bound
    truth = {lit: Literal(at[lit.slot], lit.op, lit.value).column(rows) for lit in lits}
    keep = list(lits)
    for lit in lits:
        trial = [x for x in keep if x != lit]
        where = np.logical_and.reduce([truth[x] for x in trial]) if trial else np.ones(len(rows), dtype=bool)
        if not np.any(where & broken):
            keep = trial
    return keep


# ---------------------------------------------------------------- linear equalities

def _equations(table: np.ndarray) -> list[Linear]:
    """A basis of the linear equalities every row of a sample satisfies, with integer
    coefficients (the caller checks them on every row)."""
    if len(table) < 2:
        return []
    rng = np.random.default_rng(1)
    rows = table[rng.choice(len(table), min(EQUATION_ROWS, len(table)), replace=False)]
    base = [int(v) for v in rows[0]]
    n = table.shape[1]
    reduced: dict[int, list[Fraction]] = {}        # pivot column -> row, reduced row echelon form
    for r in _spanning(rows[1:] - rows[0]):
        v = [Fraction(int(x)) for x in r]
        for p, row in reduced.items():
            if v[p]:
                f = v[p]
                v = [x - f * y for x, y in zip(v, row)]
        pivot = next((k for k, x in enumerate(v) if x), None)
        if pivot is None:
            continue
        v = [x / v[pivot] for x in v]
        for p, row in reduced.items():
            if row[pivot]:
                f = row[pivot]
                reduced[p] = [x - f * y for x, y in zip(row, v)]
        reduced[pivot] = v
    out = []
    for free in range(n):
        if free in reduced:
            continue
        vec = [Fraction(0)] * n
        vec[free] = Fraction(1)
        for p, row in reduced.items():
            vec[p] = -row[free]
        scale = lcm(*(x.denominator for x in vec))
        coeffs = tuple((k, int(x * scale)) for k, x in enumerate(vec) if x)
        if len(coeffs) > 1:                        # one slot alone: a constant, which the clauses say
            out.append(Linear(coeffs, "==", sum(c * base[k] for k, c in coeffs)))
    return out


def _bounds(enc: Encoding, table: np.ndarray) -> list[Linear]:
    """`form <= most` and `form >= least` over the states, for the linear forms the model's own
    guards and effects add up (``deck[p] + disc[p] + hand[p]``, per value of an index such as
    `active`), where the ranges alone do not imply them."""
    ranges = [(numeral(lo), numeral(hi)) for lo, hi in enc.slot_bounds]
    out = []
    for coeffs in sorted(_model_forms(enc)):
        known = [(c, lo, hi) for k, c in coeffs for lo, hi in [ranges[k]] if lo is not None and hi is not None]
        if len(known) < len(coeffs):
            continue
        values = table[:, [k for k, _ in coeffs]] @ np.array([c for _, c in coeffs])
        most = sum(c * (hi if c > 0 else lo) for c, lo, hi in known)
        least = sum(c * (lo if c > 0 else hi) for c, lo, hi in known)
        if int(values.max()) < most:
            out.append(Linear(coeffs, "<=", int(values.max())))
        if int(values.min()) > least:
            out.append(Linear(coeffs, ">=", int(values.min())))
    return out


def _model_forms(enc: Encoding) -> set[tuple[tuple[int, int], ...]]:
    """The linear forms over two slots or more of the sums and differences in the model's guards
    and effects (constants dropped), one per value of the state variables their indices read."""
    exprs = [e for a in enc.model.actions for e in (a.guard, *(x.value for x in a.effects))]
    forms = set()
    for e in exprs:
        for node in walk(e):
            if not (isinstance(node, App) and node.op in (Op.ADD, Op.SUB)):
                continue
            indices = sorted({v.name for x in walk(node) if isinstance(x, Index)
                              for v in walk(x.index) if isinstance(v, Var)})
            domains = [range(*_domain(enc, name)) for name in indices]
            for values in product(*domains):
                form = _linear(enc, node, dict(zip(indices, values)))
                if form is not None:
                    coeffs = tuple(sorted((k, c) for k, c in form[0].items() if c))
                    if len(coeffs) > 1:
                        forms.add(coeffs)
    return forms


def _domain(enc: Encoding, name: str) -> tuple[int, int]:
    """range() arguments of a scalar variable's values."""
    lo, hi = enc.slot_bounds[enc.offsets[name][0]]
    return (numeral(lo) or 0), (numeral(hi) or 0) + 1


def _linear(enc: Encoding, e: Expr, env: dict[str, int]) -> tuple[dict[int, int], int] | None:
    """`e` as (slot -> coefficient, constant) with the scalar variables of `env` at their values;
    None when it is not linear in the slots."""
    match e:
        case Const():
            return {}, e.value
        case Var() if e.name in env:
            return {}, env[e.name]
        case Var() if e.name in enc.offsets:
            return {enc.offsets[e.name][0]: 1}, 0
        case Index() if e.name in enc.offsets:
            index = _linear(enc, e.index, env)
            start, lo, size = enc.offsets[e.name]
            if index is None or index[0] or not lo <= index[1] < lo + size:
                return None
            return {start + index[1] - lo: 1}, 0
        case App(op=Op.ADD | Op.SUB, args=(a, b)):
            x, y = _linear(enc, a, env), _linear(enc, b, env)
            if x is None or y is None:
                return None
            sign = 1 if e.op is Op.ADD else -1
            coeffs = dict(x[0])
            for k, c in y[0].items():
                coeffs[k] = coeffs.get(k, 0) + sign * c
            return coeffs, x[1] + sign * y[1]
        case App(op=Op.ITE, args=(cond, Const(value=1), Const(value=0))) | \
                App(op=Op.ITE, args=(cond, Const(value=0), Const(value=1))):
            flag = _linear(enc, cond, env)          # a flag read as 0/1 (or its complement)
            if flag is None or len(flag[0]) != 1 or flag[1] or next(iter(flag[0].values())) != 1:
                return None
            k = next(iter(flag[0]))
            if not isinstance(enc.slots[k].type, BoolType):
                return None
            then = e.args[1]
            return ({k: 1}, 0) if isinstance(then, Const) and then.value == 1 else ({k: -1}, 1)
        case _:
            return None


def _spanning(diffs: np.ndarray) -> list[np.ndarray]:
    """Rows of `diffs` that span the same space (floating point, to pick them; exact arithmetic
    follows on these few)."""
    basis: list[np.ndarray] = []
    out = []
    for r in diffs:
        v = r.astype(np.float64)
        for b in basis:
            v = v - (v @ b) * b
        norm = float(np.linalg.norm(v))
        if norm > 1e-6 * max(1.0, float(np.linalg.norm(r))):
            basis.append(v / norm)
            out.append(r)
            if len(basis) == diffs.shape[1]:
                break
    return out


# ---------------------------------------------------------------- the proof

def prove(problem: Safety, mined: Mined, effort: Effort) -> Outcome:
    """The claim `not problem.bad` proved with the mined lemmas (status "safe"), a path to a bad
    state found by the base case of k-induction ("reached"), or why neither ("unknown"). In
    turn: k-induction with the lemmas, again with the context lemmas added (once per model),
    PDR with them (every state of its rules satisfies them), then Houdini again with the claim
    among the candidates. What Houdini drops is dropped from `mined` for good (it belongs to
    no inductive subset), so a claim cut short leaves the next one less to do."""
    enc = problem.enc
    support = enc.ranges(enc.cur)
    if mined.alone is None:
        narrowed: list = []
        alone = houdini(enc, support, mined.candidates, effort.share(0.5), "the mined lemmas", narrowed)
        if isinstance(alone, str):
            mined.candidates = narrowed or mined.candidates
            return Outcome("unknown", MINED, reason=alone)
        mined.alone = mined.candidates = alone
    k = _kinduction(problem, mined, effort)
    if k.status not in ("reached", "safe") and mined.contexts and _widen(enc, support, mined, effort.share(WIDEN_SHARE)):
        k = _kinduction(problem, mined, effort)
    if k.status == "reached":          # the base case: a path from an initial state, no lemma assumed
        return k
    lemmas = mined.alone
    if k.status == "safe":
        return _checked(problem, mined, lemmas, None, effort, f"{_count(lemmas, mined)}; {k.reason}", k.depth)
    assume = conj(*_terms(mined, lemmas, enc.cur.slots))
    seeded = pdr(problem, effort.share(0.7), assume)
    if seeded.status == "reached":
        return seeded
    if seeded.status == "safe":
        return _checked(problem, mined, lemmas, None, effort, f"{_count(lemmas, mined)} and PDR", None)
    goal = Goal(negate(problem.bad), enc.cur.slots)
    with_goal = houdini(enc, support, [goal, *mined.every], effort, "the mined lemmas")
    if isinstance(with_goal, str):
        return Outcome("unknown", MINED, reason=f"with {_count(lemmas, mined)}: k-induction: {k.reason}; "
                                                f"PDR: {seeded.reason}; with the claim: {with_goal}")
    if goal in with_goal:
        rest = [c for c in with_goal if c != goal]
        return _checked(problem, mined, rest, goal, effort, f"{_count(rest, mined)}; inductive together with them", 1)
    return Outcome("unknown", MINED, reason=f"with {_count(lemmas, mined)}: k-induction: {k.reason}; "
                                            f"PDR: {seeded.reason}; not inductive together with them")


def _kinduction(problem: Safety, mined: Mined, effort: Effort) -> Outcome:
    """k-induction (k <= MAX_K) with the lemmas Houdini kept assumed in every state."""
    assume = conj(*_terms(mined, mined.alone or [], problem.enc.cur.slots))
    return kinduction(problem, MAX_K, effort.share(0.3), assume)


def _widen(enc: Encoding, support: Term, mined: Mined, effort: Effort) -> bool:
    """Houdini over the lemmas kept so far and the context lemmas: True when some context
    lemma joins them (`mined.alone`). The kept lemmas being inductive already, only context
    lemmas can be dropped; when cut short, those not dropped wait for the next claim."""
    narrowed: list = []
    widened = houdini(enc, support, [*(mined.alone or []), *mined.contexts], effort, "the mined lemmas", narrowed)
    if isinstance(widened, str):
        mined.contexts = [c for c in narrowed if isinstance(c, Implied)] or mined.contexts
        return False
    mined.contexts = []
    mined.alone = mined.candidates = widened
    return any(isinstance(c, Implied) for c in widened)


def _count(lemmas: list, mined: Mined) -> str:
    clauses = sum(isinstance(c, tuple) for c in lemmas)
    contexts = sum(isinstance(c, Implied) for c in lemmas)
    return (f"{_many(len(lemmas), 'mined lemma')} ({_many(clauses, 'clause')}, {len(lemmas) - clauses - contexts} linear, "
            f"{contexts} in a context) "
            f"of {_many(len(mined.every), 'candidate')} true in {mined.explored:,} reachable states")


def _many(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _terms(mined: Mined, lemmas: list, xs) -> list[Term]:
    """The lemmas' terms over the current state's slots `xs` (the same names in every encoding of
    the model), each built once (`mined.terms`)."""
    out = []
    for c in lemmas:
        term = mined.terms.get(c)
        if term is None:
            term = mined.terms[c] = lemma_term(c, xs)
        out.append(term)
    return out


def _checked(problem: Safety, mined: Mined, lemmas: list, goal: Goal | None, effort: Effort, how: str,
             depth: int | None) -> Outcome:
    """"safe" once fresh solvers show the lemmas (and the goal, if given) inductive and, with a
    goal, that they exclude the bad states. Lemmas alone that fresh solvers showed inductive
    before (`mined.rechecked`: the same lemmas, on an encoding whose initial states, transitions and
    ranges are the same terms: a memo is shared by the models of one shape) are not checked again."""
    enc = problem.enc
    parts = _terms(mined, lemmas, enc.cur.slots) + ([goal.good] if goal is not None else [])
    invariant = conj(*parts)
    read = _read_by_recheck(enc)
    if goal is None and lemmas == mined.rechecked and _same(read, mined.rechecked_on):
        return Outcome("safe", MINED, depth, invariant=invariant, reason=how)
    failed = recheck(enc, enc.ranges(enc.cur), invariant, effort, "the mined lemmas")
    if failed:
        return Outcome("unknown", MINED, reason=failed)
    if goal is None:
        mined.rechecked, mined.rechecked_on = list(lemmas), read
    return Outcome("safe", MINED, depth, invariant=invariant, reason=how)


def _read_by_recheck(enc: Encoding) -> tuple[Term, ...]:
    """What `recheck` reads of `enc`: its initial states, transitions and ranges."""
    return enc.init(enc.cur), enc.relation, enc.ranges(enc.cur), enc.ranges(enc.nxt)


def _same(terms: tuple[Term, ...], others: tuple[Term, ...]) -> bool:
    """Whether these are the same Z3 terms (equal terms share one AST)."""
    return len(terms) == len(others) and all(t.eq(o) for t, o in zip(terms, others))
