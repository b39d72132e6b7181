"""Compile an instantiated model to Python source over packed states.

A packed state is one Python int: slot k (see `semantics.Layout.slots`) is the
bit field ``(s >> shift[k]) & mask[k]`` holding ``value - lo`` (width: the bits
of ``hi - lo``). Guards and effects read fields with shifts and masks (a
dynamic array index computes the shift); effects build the successor int by
adding ``(new - old) << shift`` for each written field.

Every firing comes out in the order of `semantics.transitions`: model action
order, then choice values lexicographically. Run-time errors (an index out of
range, division by a non-positive number) raise `semantics.EvalError` as the
reference interpreter does, including where it evaluates eagerly (quantifier
bodies, the ranges of every choice, the effects in order up to the first one
that leaves its range).

Here: the packing, simplification and range analysis, and the expression
writer. `actiongen.py` writes the firings of an action; `bfsgen.py` wraps them
into the search loop, `expand` and predicates.
"""
from __future__ import annotations

import itertools
import linecache
import os
import re
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import assert_never

from verifier.engines.codecache import code_of
from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Param, Quant, QuantKind, Var, apply_op, substitute
from verifier.semantics import EvalError, Layout

UNROLL = 32          # quantifiers over fewer values are unrolled
WORD_BITS = 63       # bits of a packed word (the compact store keeps word 0 as key + 1 in a uint64)
_BIN = {Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.EQ: "==", Op.NE: "!=", Op.LT: "<", Op.LE: "<=",
        Op.GT: ">", Op.GE: ">="}
_BOOL = frozenset({Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.AND, Op.OR, Op.NOT, Op.IMPLIES})

Interval = tuple[int, int] | None


# ---------------------------------------------------------------- generated sources

_sources = itertools.count(1)
_registered: deque[str] = deque()               # pseudo-file names in linecache, oldest first
KEEP_SOURCES = 64                               # generated sources kept for tracebacks


def source_file(source: str, name: str) -> str:
    """The file name generated code is compiled under. With `TURNPROOF_DUMP_CODE=DIR` the
    source is written to DIR (one file per generated module); otherwise it is a pseudo-file
    registered with `linecache`, so that tracebacks and debuggers show the generated lines."""
    stem = f"{os.getpid()}-{next(_sources):04d}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)[:60]}"
    folder = os.environ.get("TURNPROOF_DUMP_CODE")
    if folder:
        path = Path(folder) / f"{stem}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        return str(path)
    filename = f"<turnproof {stem}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    _registered.append(filename)
    while len(_registered) > KEEP_SOURCES:
        linecache.cache.pop(_registered.popleft(), None)
    return filename


# ---------------------------------------------------------------- packing

@dataclass(frozen=True)
class Packing:
    """Bit layout of the slots of a `Layout` inside one int.

    A state of at most WORD_BITS bits packs its slots in order from bit 0 (`words` 1). A wider
    one packs each variable whole into 64-bit words (bits 64 j up to 64 j + WORD_BITS), filled
    greedily in order, so that no slot straddles two words: the int's 64-bit words are the
    compact store's columns (`words` of them). Where a variable is wider than one word the slots
    pack in order from bit 0 (`words` 0: the compact store cannot hold such a state)."""

    names: tuple[str, ...]
    los: tuple[int, ...]
    his: tuple[int, ...]
    widths: tuple[int, ...]
    shifts: tuple[int, ...]
    pack: Callable[[tuple], int]
    unpack: Callable[[int], tuple]
    words: int = 1

    @property
    def bits(self) -> int:
        return sum(self.widths)

    def word(self, k: int) -> tuple[int, int]:
        """(word, shift within it) of slot `k`."""
        return divmod(self.shifts[k], 64)

    def mask(self, k: int) -> int:
        return (1 << self.widths[k]) - 1

    def field(self, x: int, k: int) -> int:
        """The value of slot `k` in the packed state `x`."""
        return ((x >> self.shifts[k]) & self.mask(k)) + self.los[k]


def balanced_join(terms: list[str], op: str, group: int = 32) -> str:
    """`a op b op ...` parenthesised in groups, so that thousands of terms nest a few levels deep
    (Python compiles a flat chain as one deeply nested expression)."""
    while len(terms) > group:
        terms = [f"({op.join(terms[i:i + group])})" for i in range(0, len(terms), group)]
    return op.join(terms)


def make_packing(lay: Layout) -> Packing:
    los = tuple(s.lo for s in lay.slots)
    his = tuple(s.hi for s in lay.slots)
    widths = tuple(max(0, hi - lo).bit_length() for lo, hi in zip(los, his))
    shifts = tuple(itertools.accumulate((0,) + widths[:-1])) if widths else ()
    words = 1
    if sum(widths) > WORD_BITS:
        shifts, words = _word_shifts(lay, widths) or (shifts, 0)
    pack_terms = [shifted_left(f"(t[{k}] - {lo})" if lo else f"t[{k}]", sh)
                  for k, (lo, w, sh) in enumerate(zip(los, widths, shifts)) if w]
    unpack_terms = []
    for lo, w, sh in zip(los, widths, shifts):
        field = f"((x >> {sh}) & {(1 << w) - 1})" if sh else f"(x & {(1 << w) - 1})"
        unpack_terms.append(str(lo) if not w else (f"{field} + {lo}" if lo else field))
    src = (f"def pack(t):\n    return {balanced_join(pack_terms, ' | ') or '0'}\n"
           f"def unpack(x):\n    return ({', '.join(unpack_terms)}{',' if len(unpack_terms) == 1 else ''})\n")
    ns: dict = {}
    exec(code_of(src, "<turnproof packing>"), ns)
    return Packing(tuple(s.name for s in lay.slots), los, his, widths, shifts, ns["pack"], ns["unpack"], words)


def _word_shifts(lay: Layout, widths: tuple[int, ...]) -> tuple[tuple[int, ...], int] | None:
    """Each variable's slots packed together into the first 64-bit word that still has room for
    them after the variables before it (at most WORD_BITS bits a word): (shifts, words), None
    where a variable is wider than a word."""
    shifts: list[int] = []
    word = used = 0
    for _var, group in itertools.groupby(range(len(widths)), key=lambda k: lay.slots[k].var):
        slots = list(group)
        total = sum(widths[k] for k in slots)
        if total > WORD_BITS:
            return None
        if used + total > WORD_BITS:
            word, used = word + 1, 0
        for k in slots:
            shifts.append(64 * word + used)
            used += widths[k]
    return tuple(shifts), word + 1


def shifted_left(text: str, sh: int) -> str:
    """Source of `text` shifted left by `sh` bits."""
    return f"({text} << {sh})" if sh else text


def scaled(w: int, code: str) -> str:
    """Source of `code` times the slot width `w`."""
    return code if w == 1 else f"{w} * {code}"


# ---------------------------------------------------------------- run-time helpers of generated code

def _bad_index(name: str, i: int) -> int:
    raise EvalError(f"index {i} out of range for {name}")


def _div(a: int, b: int) -> int:
    if b <= 0:
        raise EvalError(f"division by {b}")
    return a // b


def _mod(a: int, b: int) -> int:
    if b <= 0:
        raise EvalError(f"modulo by {b}")
    return a % b


def _ix(i: int, first: int, lo: int, size: int, name: str) -> int:
    if not lo <= i < lo + size:
        raise EvalError(f"index {i} out of range for {name}")
    return first + i - lo


def _rd(s: int, i: int, base: int, w: int, mask: int, vlo: int, lo: int, size: int, name: str) -> int:
    if not lo <= i < lo + size:
        raise EvalError(f"index {i} out of range for {name}")
    return ((s >> (base + w * i)) & mask) + vlo


RUNTIME = {"_rd": _rd, "_bad_index": _bad_index, "_div": _div, "_mod": _mod, "_ix": _ix, "EvalError": EvalError,
           "_product": itertools.product}


# ---------------------------------------------------------------- simplification

def simplify(e: Expr, lay: Layout | None = None) -> Expr:
    """Fold constants; drop constant operands of and/or/->/if where that cannot hide an error;
    flatten nested and/or; unroll small forall/exists whose bodies cannot raise (with `lay`)."""
    match e:
        case Const() | Var() | Param() | Local():
            return e
        case Index():
            return Index(e.name, simplify(e.index, lay))
        case Quant():
            return _simplify_quant(e, lay)
        case App():
            return _simplify_app(e, lay)
        case _:
            assert_never(e)


def _simplify_quant(e: Quant, lay: Layout | None) -> Expr:
    lo, hi = simplify(e.lo, lay), simplify(e.hi, lay)
    if lay is not None and e.kind in (QuantKind.FORALL, QuantKind.EXISTS) and isinstance(lo, Const) \
            and isinstance(hi, Const) and hi.value - lo.value < UNROLL:
        bodies = [simplify(substitute(e.body, {e.var: Const(i)}), lay) for i in range(lo.value, hi.value + 1)]
        if not any(may_raise(b, {}, lay) for b in bodies):
            if not bodies:
                return Const(int(e.kind is QuantKind.FORALL), is_bool=True)
            if len(bodies) == 1:
                return simplify(_as_bool(bodies[0]), lay)
            return simplify(App(Op.AND if e.kind is QuantKind.FORALL else Op.OR, tuple(bodies)), lay)
    return Quant(e.kind, e.var, lo, hi, simplify(e.body, lay))


def _simplify_app(e: App, lay: Layout | None) -> Expr:
    args = tuple(simplify(a, lay) for a in e.args)
    op = e.op
    consts = [a for a in args if isinstance(a, Const)]
    if len(consts) == len(args):
        try:
            return Const(apply_op(op, [a.value for a in consts]), is_bool=op in _BOOL)
        except ArithmeticError:
            return App(op, args)
    if op in (Op.AND, Op.OR):
        absorbing = 0 if op is Op.AND else 1
        kept: list[Expr] = []
        flat: list[Expr] = []
        for a in args:
            flat.extend(a.args if isinstance(a, App) and a.op is op else (a,))
        for a in flat:
            if isinstance(a, Const):
                if bool(a.value) == bool(absorbing):
                    if not any(may_raise(x, {}, lay) for x in kept):
                        return Const(absorbing, is_bool=True)
                    kept.append(Const(absorbing, is_bool=True))
                    break                       # short-circuit: the rest is never evaluated
                continue                        # the unit
            kept.append(a)
        if not kept:
            return Const(1 - absorbing, is_bool=True)
        if len(kept) == 1:
            return _as_bool(kept[0])
        if _complementary(kept) and not any(may_raise(x, {}, lay) for x in kept):
            return Const(absorbing, is_bool=True)       # `p and not p`, `p or not p`
        return App(op, tuple(kept))
    if len(args) == 2 and args[0] == args[1] and op in _REFLEXIVE and not may_raise(args[0], {}, lay):
        return Const(_REFLEXIVE[op], is_bool=True)      # `x == x`, `x < x`
    if op in (Op.ADD, Op.SUB) and len(args) == 2 and args[1] == Const(0) and not _is_bool(args[0]):
        return args[0]
    if op is Op.IMPLIES:
        a, b = args
        if isinstance(a, Const):
            return _as_bool(b) if a.value else Const(1, is_bool=True)
        if isinstance(b, Const) and b.value and not may_raise(a, {}, lay):
            return Const(1, is_bool=True)
    if op is Op.ITE and isinstance(args[0], Const):
        return args[1] if args[0].value else args[2]
    return App(op, args)


_REFLEXIVE = {Op.EQ: 1, Op.LE: 1, Op.GE: 1, Op.NE: 0, Op.LT: 0, Op.GT: 0}    # x op x, for any x


def _complementary(terms: list[Expr]) -> bool:
    """Some term is the negation of another (`not p` beside `p` or `p != 0`)."""
    present = set(terms)
    return any(isinstance(t, App) and t.op is Op.NOT and
               (t.args[0] in present or App(Op.NE, (t.args[0], Const(0))) in present) for t in terms)


def _as_bool(e: Expr) -> Expr:
    """`e` where a 0/1 value is needed (and/or return 0/1 in the semantics)."""
    if _is_bool(e):
        return e
    return App(Op.NE, (e, Const(0)))


def may_raise(e: Expr, bound: dict[str, Interval] | None = None, lay: Layout | None = None) -> bool:
    """Could evaluating `e` raise EvalError? (Conservative: True when unsure.)"""
    bound = bound or {}
    match e:
        case Const() | Var() | Local():
            return False
        case Param():
            return True
        case Index():
            if may_raise(e.index, bound, lay):
                return True
            if lay is None:
                return True
            _first, lo, size = lay.offsets[e.name]
            iv = interval(lay, e.index, bound)
            return iv is None or iv[0] < lo or iv[1] >= lo + size
        case Quant():
            if may_raise(e.lo, bound, lay) or may_raise(e.hi, bound, lay):
                return True
            qlo, qhi = interval(lay, e.lo, bound) if lay else None, interval(lay, e.hi, bound) if lay else None
            inner = {**bound, e.var: (qlo[0], qhi[1]) if qlo and qhi else None}
            return may_raise(e.body, inner, lay)
        case App():
            if e.op in (Op.DIV, Op.MOD):
                d = interval(lay, e.args[1], bound) if lay else None
                if d is None or d[0] <= 0:
                    return True
            return any(may_raise(a, bound, lay) for a in e.args)
        case _:
            assert_never(e)


def interval(lay: Layout | None, e: Expr, bound: dict[str, Interval]) -> Interval:
    """Static range of the values of `e`, or None."""
    match e:
        case Const():
            return (e.value, e.value)
        case _ if lay is None:
            return None
        case Var() | Index():
            first = lay.offsets[e.name][0]
            return lay.slots[first].lo, lay.slots[first].hi
        case Local():
            return bound.get(e.name)
        case Param():
            return None
        case Quant():
            return _quant_interval(lay, e, bound)
        case App():
            return _app_interval(lay, e, bound)
        case _:
            assert_never(e)


def _quant_interval(lay: Layout, e: Quant, bound: dict[str, Interval]) -> Interval:
    if e.kind in (QuantKind.FORALL, QuantKind.EXISTS):
        return (0, 1)
    lo, hi = interval(lay, e.lo, bound), interval(lay, e.hi, bound)
    if lo is None or hi is None:
        return None
    count = max(0, hi[1] - lo[0] + 1)
    if e.kind is QuantKind.COUNT:
        return (0, count)
    body = interval(lay, e.body, {**bound, e.var: (lo[0], hi[1])})
    if body is None:
        return None
    return (min(0, count * body[0]), max(0, count * body[1]))


def _app_interval(lay: Layout, e: App, bound: dict[str, Interval]) -> Interval:
    if e.op in _BOOL:
        return (0, 1)
    maybe = [interval(lay, a, bound) for a in e.args]
    if e.op is Op.ITE:
        a, b = maybe[1], maybe[2]
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    ivs = [iv for iv in maybe if iv is not None]
    if len(ivs) < len(maybe):
        return None
    op = e.op
    if op is Op.ADD:
        return (ivs[0][0] + ivs[1][0], ivs[0][1] + ivs[1][1])
    if op is Op.SUB:
        return (ivs[0][0] - ivs[1][1], ivs[0][1] - ivs[1][0])
    if op is Op.MUL:
        p = [x * y for x in ivs[0] for y in ivs[1]]
        return (min(p), max(p))
    if op is Op.NEG:
        return (-ivs[0][1], -ivs[0][0])
    if op is Op.ABS:
        a_lo, a_hi = ivs[0]
        return (0 if a_lo <= 0 <= a_hi else min(abs(a_lo), abs(a_hi)), max(abs(a_lo), abs(a_hi)))
    if op is Op.MIN:
        return (min(iv[0] for iv in ivs), min(iv[1] for iv in ivs))
    if op is Op.MAX:
        return (max(iv[0] for iv in ivs), max(iv[1] for iv in ivs))
    if op is Op.DIV and ivs[1][0] > 0:
        q = [x // y for x in ivs[0] for y in ivs[1]]
        return (min(q), max(q))
    if op is Op.MOD and ivs[1][0] > 0:
        return (0, ivs[1][1] - 1)
    return None


# ---------------------------------------------------------------- expressions

class Writer:
    """Python source of expressions over state `s`.

    `mode` "packed": `s` is a packed int; "tuple": `s` is a state tuple. Slots in
    `hoisted` are read from locals ``v<k>`` (set up by the caller). `reads`
    counts the static slot reads written, for deciding what to hoist. A `counting` writer's
    source is only counted, never run: blocks that count their reads in writers of their own
    (`within`) may leave themselves out of it. `known`: expressions true, and evaluated without
    an error, wherever the code written runs (a guard's conjunct among them is not tested again).
    """

    def __init__(self, lay: Layout, packing: Packing, mode: str = "packed", hoisted: frozenset[int] = frozenset(),
                 counting: bool = False):
        self.lay = lay
        self.p = packing
        self.mode = mode
        self.hoisted = hoisted
        self.counting = counting
        self.known: frozenset[Expr] = frozenset()
        self.reads: Counter[int] = Counter()
        self.counter = itertools.count()
        self.no_walrus = 0

    def within(self, hoisted: frozenset[int]) -> Writer:
        """A writer for a nested block whose slots in `hoisted` are read from locals; its fresh
        names go on from this one's."""
        inner = Writer(self.lay, self.p, self.mode, hoisted)
        inner.counter, inner.known = self.counter, self.known
        return inner

    def truth(self, e: Expr, code: str) -> str:
        """`code` as a 0/1 value (`and`/`or` operands that are not already booleans)."""
        if _is_bool(e):
            return code
        if isinstance(e, (Var, Index)):
            first = self.lay.offsets[e.name][0]
            if (self.lay.slots[first].lo, self.lay.slots[first].hi) == (0, 1):
                return code
        return f"({code} != 0)"

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self.counter)}"

    # ---- slots
    def word(self, k: int) -> tuple[str, int]:
        """(the name of the state's word holding slot k, the slot's shift within it): here the
        whole packed int `s`; a writer over separate 64-bit words (`numbagen`) names each."""
        return "s", self.p.shifts[k]

    def state_words(self) -> list[str]:
        """The names of the state's words, in order."""
        return ["s"]

    def field(self, k: int) -> str:
        """The stored bits of slot k (value - lo)."""
        w = self.p.widths[k]
        s, sh = self.word(k)
        if not w:
            return "0"
        return f"(({s} >> {sh}) & {(1 << w) - 1})" if sh else f"({s} & {(1 << w) - 1})"

    def static(self, k: int) -> str:
        self.reads[k] += 1
        if k in self.hoisted:
            return f"v{k}"
        if self.mode == "tuple":
            return f"s[{k}]"
        lo = self.p.los[k]
        if not self.p.widths[k]:
            return str(lo)
        return f"({self.field(k)} + {lo})" if lo else self.field(k)

    def read(self, name: str, index: Expr | None, env: dict[str, tuple[str, Interval]]) -> str:
        first, lo, size = self.lay.offsets[name]
        label = self.lay.error_name(name)      # how an index error names the array
        if index is None:
            return self.static(first)
        if isinstance(index, Const):
            if not lo <= index.value < lo + size:
                return f"_bad_index({label!r}, {index.value})"
            return self.static(first + index.value - lo)
        code = self.expr(index, env)
        iv = interval(self.lay, index, {k: v[1] for k, v in env.items()})
        safe = iv is not None and lo <= iv[0] and iv[1] < lo + size
        if self.mode == "tuple":
            if safe:
                return f"s[{code} + {first - lo}]"
            return f"s[_ix({code}, {first}, {lo}, {size}, {label!r})]"
        w, vlo = self.p.widths[first], self.p.los[first]
        mask = (1 << w) - 1
        s, shift = self.word(first)             # a variable's slots share a word
        base = shift - w * lo
        if not w:
            return str(vlo) if safe else f"({vlo} if {lo} <= {code} < {lo + size} else _bad_index({label!r}, {code}))"
        plus = f" + {vlo}" if vlo else ""
        if safe:
            return f"((({s} >> ({scaled(w, code)} + {base})) & {mask}){plus})"
        if self.no_walrus:
            return f"_rd({s}, {code}, {base}, {w}, {mask}, {vlo}, {lo}, {size}, {label!r})"
        q = self.fresh("_q")
        return (f"(((({s} >> ({scaled(w, q)} + {base})) & {mask}){plus}) if {lo} <= ({q} := {code}) < {lo + size}"
                f" else _bad_index({label!r}, {q}))")

    # ---- expressions
    def expr(self, e: Expr, env: dict[str, tuple[str, Interval]]) -> str:
        match e:
            case Const():
                return str(e.value)
            case Var():
                return self.read(e.name, None, env)
            case Index():
                return self.read(e.name, e.index, env)
            case Local():
                return env[e.name][0]
            case Param():
                raise EvalError(f"parameter {e.name} has no value")
            case Quant():
                return self.quant(e, env)
            case App():
                return self.app(e, env)
            case _:
                assert_never(e)

    def app(self, e: App, env: dict[str, tuple[str, Interval]]) -> str:
        a = [self.expr(x, env) for x in e.args]
        op = e.op
        if op in _BIN:
            return f"({a[0]} {_BIN[op]} {a[1]})"
        if op is Op.AND:
            return "(" + " and ".join(self.truth(x, c) for x, c in zip(e.args, a)) + ")"
        if op is Op.OR:
            return "(" + " or ".join(self.truth(x, c) for x, c in zip(e.args, a)) + ")"
        if op is Op.NOT:
            return f"(not {a[0]})"
        if op is Op.IMPLIES:
            return f"((not {a[0]}) or {self.truth(e.args[1], a[1])})"
        if op is Op.ITE:
            return f"({a[1]} if {a[0]} else {a[2]})"
        if op is Op.NEG:
            return f"(-{a[0]})"
        if op in (Op.DIV, Op.MOD):
            d = e.args[1]
            if isinstance(d, Const) and d.value > 0:
                return f"({a[0]} {'//' if op is Op.DIV else '%'} {d.value})"
            return f"{'_div' if op is Op.DIV else '_mod'}({a[0]}, {a[1]})"
        if op is Op.ABS:
            return f"abs({a[0]})"
        return f"{'min' if op is Op.MIN else 'max'}({', '.join(a)})"

    def quant(self, e: Quant, env: dict[str, tuple[str, Interval]]) -> str:
        bound = {k: v[1] for k, v in env.items()}
        if isinstance(e.lo, Const) and isinstance(e.hi, Const) and e.hi.value - e.lo.value < UNROLL:
            bodies = [simplify(substitute(e.body, {e.var: Const(i)})) for i in range(e.lo.value, e.hi.value + 1)]
            parts = [self.expr(b, env) for b in bodies]
            eager = any(may_raise(b, bound, self.lay) for b in bodies)
            if e.kind in (QuantKind.FORALL, QuantKind.EXISTS):
                if not parts:
                    return "True" if e.kind is QuantKind.FORALL else "False"
                if eager:
                    return f"{'all' if e.kind is QuantKind.FORALL else 'any'}(({', '.join(parts)},))"
                parts = [self.truth(b, p) for b, p in zip(bodies, parts)]
                return "(" + (" and " if e.kind is QuantKind.FORALL else " or ").join(parts) + ")"
            if e.kind is QuantKind.COUNT:
                parts = [p if _is_bool(b) else f"({p} != 0)" for p, b in zip(parts, bodies)]
            return "(" + " + ".join(parts) + ")" if parts else "0"
        var = self.fresh("q")
        lo, hi = interval(self.lay, e.lo, bound), interval(self.lay, e.hi, bound)
        inner = {**env, e.var: (var, (lo[0], hi[1]) if lo and hi else None)}
        body = self.expr(e.body, inner)
        self.no_walrus += 1             # no `:=` in a comprehension's iterable
        rng = f"range({self.expr(e.lo, env)}, {self.expr(e.hi, env)} + 1)"
        self.no_walrus -= 1
        eager = may_raise(e.body, {k: v[1] for k, v in inner.items()}, self.lay)
        gen = f"[{{}} for {var} in {rng}]" if eager else f"({{}} for {var} in {rng})"
        if e.kind is QuantKind.FORALL:
            return "all(" + gen.format(body) + ")"
        if e.kind is QuantKind.EXISTS:
            return "any(" + gen.format(body) + ")"
        if e.kind is QuantKind.COUNT:
            return "sum(" + gen.format(f"(1 if {body} else 0)") + ")"
        return "sum(" + gen.format(body) + ")"


def _is_bool(e: Expr) -> bool:
    match e:
        case Quant():
            return e.kind in (QuantKind.FORALL, QuantKind.EXISTS)
        case App():
            return e.op in _BOOL
        case Const():
            return e.is_bool
        case Var() | Index() | Param() | Local():
            return False
        case _:
            assert_never(e)

