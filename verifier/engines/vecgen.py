"""Numpy code over a whole batch of packed states, generated from the same IR as `bfsgen`.

`compile_batch(lay)` writes one straight-line function ``expand(S)`` over a
uint64 array of packed states (see `codegen.Packing`; a packing of several
words takes rows of words, `words.py`, and reads each slot from its word's
column): one block per firing
(action, then choice combination, in the order of `semantics.transitions`),
each computing its guard as a boolean mask over the batch, the effects as
int64 arrays (clamped where the variable clamps, masked off where it forbids
or leaves a gap) and the successors of the lanes where it fires. It returns
``(final, firings)``, `firings` a list of (block, lanes, successors), or None
when some state of the batch *might* meet a model run-time error (an index
out of range, division by a non-positive number) where the reference code
would evaluate it: the caller then expands that batch state by state with the
generated-Python reference (`bfsgen.compile_expander`), which raises the
error exactly where `semantics` does. The check is conservative, never lax:
an operand of ``and``/``or``/``->``/``if`` is checked only on the lanes where
the reference evaluates it, quantifier bodies on every lane of the quantifier.

Models the batch code cannot express (choice domains or quantifier bounds that
depend on the state, more than MAX_BLOCKS choice combinations, arithmetic that
might leave int64, a variable wider than a word) get `NotVectorisable`; the
compact store then expands every state with the reference code.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import assert_never

import numpy as np

from verifier.engines.actiongen import Labels, specialise
from verifier.engines.codecache import code_of
from verifier.engines.codegen import Packing, interval, may_raise, simplify, source_file
from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Param, Quant, QuantKind, Var, substitute
from verifier.ir.model import Action, IntType, Modality, Overflow, type_bounds
from verifier.semantics import Layout

MAX_BLOCKS = 4096         # firing blocks (action x choice combination) of one model
MAX_UNROLL = 64           # quantifiers over more values are not vectorised
INT_LIMIT = 1 << 62       # intermediate values must stay within +-INT_LIMIT
MAX_BITS = 63             # packed states wider than this take several words (`codegen.Packing.words`)

_CMP = {Op.EQ: "==", Op.NE: "!=", Op.LT: "<", Op.LE: "<=", Op.GT: ">", Op.GE: ">="}
_ARITH = {Op.ADD: "+", Op.SUB: "-", Op.MUL: "*"}


class NotVectorisable(Exception):
    """The model (or predicate) uses something the batch code does not express."""


@dataclass(frozen=True)
class BatchCode:
    """`expand(S)` (see the module docstring); `block_labels[b]` is the label of block b
    (`labels.items[label]` = (action index, choice)); `block_action[b]` its action index."""

    expand: Callable[[np.ndarray], tuple[np.ndarray, list] | None]
    block_labels: tuple[int, ...]
    block_action: tuple[int, ...]
    source: str


@dataclass(frozen=True)
class BatchPredicate:
    """`holds(S)`: a boolean mask, or None when a lane might raise a model error."""

    holds: Callable[[np.ndarray], np.ndarray | None]
    source: str


class _Writer:
    """Straight-line numpy statements; expressions are cached by value when they cannot raise."""

    def __init__(self, lay: Layout, packing: Packing):
        self.lay, self.p = lay, packing
        self.lines: list[str] = []
        self.consts: dict[str, object] = {}
        self.cache: dict[tuple[str, Expr], str] = {}
        self.masks: dict[tuple[str, ...], str] = {}
        self.counter = itertools.count()
        if packing.words > 1:
            self.lines.append("    " + "; ".join(f"S{j} = S[:, {j}]" for j in range(packing.words)))

    def column(self, k: int, states: str = "S") -> str:
        """The batch's word holding slot `k` (of `states`, a batch of the packing's rows)."""
        if self.p.words == 1:
            return states
        return f"{states}{self.p.word(k)[0]}" if states == "S" else f"{states}[:, {self.p.word(k)[0]}]"

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self.counter)}"

    def emit(self, prefix: str, code: str) -> str:
        name = self.fresh(prefix)
        self.lines.append(f"    {name} = {code}")
        return name

    def u64(self, value: int) -> str:
        name = f"_k{value}"
        self.consts[name] = np.uint64(value)
        return name

    # ---- evaluation contexts: the conjunction of masks under which the reference evaluates
    def mask(self, ctx: tuple[str, ...]) -> str | None:
        if not ctx:
            return None
        known = len(ctx)        # the longest prefix with a mask (a loop: one context per effect can be long)
        while known > 1 and ctx[:known] not in self.masks:
            known -= 1
        mask = ctx[0] if known == 1 else self.masks[ctx[:known]]
        for end in range(known + 1, len(ctx) + 1):
            mask = self.masks[ctx[:end]] = self.emit("m", f"{mask} & {ctx[end - 1]}")
        return mask

    def bail_if(self, ctx: tuple[str, ...], bad: str) -> None:
        m = self.mask(ctx)
        cond = bad if m is None else f"({m} & {bad})"
        self.lines.append(f"    if _any({cond}): return None")

    # ---- slots
    def slot(self, k: int) -> str:
        key = ("slot", Const(k))
        if key not in self.cache:
            w, sh, lo = self.p.widths[k], self.p.word(k)[1], self.p.los[k]
            if not w:
                return str(lo)
            code = f"(({self.column(k)} >> {self.u64(sh)}) & {self.u64((1 << w) - 1)}).astype(_i64)"
            self.cache[key] = self.emit("v", f"{code} + {lo}" if lo else code)
        return self.cache[key]

    def read(self, name: str, index: Expr | None, ctx: tuple[str, ...]) -> str:
        first, lo, size = self.lay.offsets[name]
        if index is None:
            return self.slot(first)
        if isinstance(index, Const):
            if not lo <= index.value < lo + size:
                self.bail_if(ctx, "_ones")
                return "0"
            return self.slot(first + index.value - lo)
        i = self.clipped_index(index, lo, size, ctx)
        w, vlo = self.p.widths[first], self.p.los[first]
        if not w:
            return str(vlo)
        base = self.p.word(first)[1] - w * lo           # a variable's slots share a word
        sh = self.emit("h", f"_u64_of({i} * {w} + {base})")
        code = f"(({self.column(first)} >> {sh}) & {self.u64((1 << w) - 1)}).astype(_i64)"
        return self.emit("r", f"{code} + {vlo}" if vlo else code)

    def clipped_index(self, index: Expr, lo: int, size: int, ctx: tuple[str, ...]) -> str:
        i = self.num(index, ctx)
        iv = interval(self.lay, index, {})
        if iv is not None and lo <= iv[0] and iv[1] < lo + size:
            return i
        self.bail_if(ctx, f"(({i} < {lo}) | ({i} >= {lo + size}))")
        return self.emit("x", f"_clip({i}, {lo}, {lo + size - 1})")

    # ---- expressions
    def truth(self, e: Expr, ctx: tuple[str, ...]) -> str:
        """`e` as a boolean mask (or numpy bool scalar)."""
        if isinstance(e, Const):
            return "_T" if e.value else "_F"
        return self.cached("truth", e, ctx, self._truth)

    def cached(self, kind: str, e: Expr, ctx: tuple[str, ...], make: Callable[[Expr, tuple[str, ...]], str]) -> str:
        """Expressions that cannot raise are computed once per batch (their lanes do not matter)."""
        if may_raise(e, {}, self.lay):
            return make(e, ctx)
        key = (kind, e)
        if key not in self.cache:
            self.cache[key] = make(e, ())
        return self.cache[key]

    def _truth(self, e: Expr, ctx: tuple[str, ...]) -> str:
        if isinstance(e, App) and e.op in _CMP:
            a, b = self.num(e.args[0], ctx), self.num(e.args[1], ctx)
            return self.emit("b", f"{a} {_CMP[e.op]} {b}")
        if isinstance(e, App) and e.op in (Op.AND, Op.OR):
            parts, inner = [], ctx
            for x in e.args:
                part = self.truth(x, inner)
                parts.append(part)
                inner = inner + ((part,) if e.op is Op.AND else (self.emit("n", f"~{part}"),))
            return self.emit("b", (" & " if e.op is Op.AND else " | ").join(parts))
        if isinstance(e, App) and e.op is Op.NOT:
            return self.emit("b", f"~{self.truth(e.args[0], ctx)}")
        if isinstance(e, App) and e.op is Op.IMPLIES:
            a = self.truth(e.args[0], ctx)
            b = self.truth(e.args[1], ctx + (a,))
            return self.emit("b", f"~{a} | {b}")
        if isinstance(e, Quant) and e.kind in (QuantKind.FORALL, QuantKind.EXISTS):
            parts = [self.truth(b, ctx) for b in self.bodies(e)]
            if not parts:
                return "_T" if e.kind is QuantKind.FORALL else "_F"
            return self.emit("b", (" & " if e.kind is QuantKind.FORALL else " | ").join(parts))
        return self.emit("b", f"{self.num(e, ctx)} != 0")

    def num(self, e: Expr, ctx: tuple[str, ...]) -> str:
        """`e` as int64 values (or an int literal)."""
        match e:
            case Const():
                return str(e.value)
            case Var() | Index(index=Const()):
                return self._num(e, ctx)
            case _:
                return self.cached("num", e, ctx, self._num)

    def _num(self, e: Expr, ctx: tuple[str, ...]) -> str:
        match e:
            case Const():
                return str(e.value)
            case Var():
                return self.read(e.name, None, ctx)
            case Index():
                return self.read(e.name, e.index, ctx)
            case Param() | Local():
                raise NotVectorisable(f"free name {e.name}")
            case Quant():
                self.check_range(e)
                if e.kind in (QuantKind.FORALL, QuantKind.EXISTS):
                    return self.emit("i", f"_as_int({self.truth(e, ctx)})")
                parts = [f"_as_int({self.truth(b, ctx)})" if e.kind is QuantKind.COUNT else self.num(b, ctx)
                         for b in self.bodies(e)]
                return self.emit("i", " + ".join(parts)) if parts else "0"
            case App():
                self.check_range(e)
                return self.app_num(e, ctx)
            case _:
                assert_never(e)

    def check_range(self, e: Expr) -> None:
        iv = interval(self.lay, e, {})
        if iv is None or max(abs(iv[0]), abs(iv[1])) > INT_LIMIT:
            raise NotVectorisable("arithmetic without a static range")

    def app_num(self, e: App, ctx: tuple[str, ...]) -> str:
        op = e.op
        if op in _CMP or op in (Op.AND, Op.OR, Op.NOT, Op.IMPLIES):
            return self.emit("i", f"_as_int({self.truth(e, ctx)})")
        if op is Op.ITE:
            c = self.truth(e.args[0], ctx)
            a = self.num(e.args[1], ctx + (c,))
            b = self.num(e.args[2], ctx + (self.emit("n", f"~{c}"),))
            return self.emit("i", f"_where({c}, {a}, {b})")
        args = [self.num(x, ctx) for x in e.args]
        if op in _ARITH:
            return self.emit("i", f"{args[0]} {_ARITH[op]} {args[1]}")
        if op is Op.NEG:
            return self.emit("i", f"-{args[0]}")
        if op is Op.ABS:
            return self.emit("i", f"_abs({args[0]})")
        if op in (Op.MIN, Op.MAX):
            fn = "_min" if op is Op.MIN else "_max"
            out = args[0]
            for a in args[1:]:
                out = self.emit("i", f"{fn}({out}, {a})")
            return out
        if op in (Op.DIV, Op.MOD):
            d = e.args[1]
            sym = "//" if op is Op.DIV else "%"
            if isinstance(d, Const) and d.value > 0:
                return self.emit("i", f"{args[0]} {sym} {d.value}")
            div = interval(self.lay, d, {})
            if div is None or div[0] <= 0:
                self.bail_if(ctx, f"({args[1]} <= 0)")
                safe = self.emit("i", f"_where({args[1]} > 0, {args[1]}, 1)")
            else:
                safe = args[1]
            return self.emit("i", f"{args[0]} {sym} {safe}")
        raise NotVectorisable(f"operator {op.name}")

    def bodies(self, e: Quant) -> list[Expr]:
        lo, hi = simplify(e.lo, self.lay), simplify(e.hi, self.lay)
        if not (isinstance(lo, Const) and isinstance(hi, Const)) or hi.value - lo.value >= MAX_UNROLL:
            raise NotVectorisable("a quantifier with state-dependent or wide bounds")
        return [simplify(substitute(e.body, {e.var: Const(i)}), self.lay) for i in range(lo.value, hi.value + 1)]


_RUNTIME = {"np": np, "_any": np.any, "_take": np.take, "_i64": np.int64, "_u64": np.uint64, "_T": np.True_, "_F": np.False_,
            "_clip": np.clip, "_where": np.where, "_abs": np.abs, "_min": np.minimum, "_max": np.maximum}


def _as_int(b) -> np.ndarray:
    return np.asarray(b).astype(np.int64)


def _exec(w: _Writer, source: str, name: str) -> dict:
    ns = dict(_RUNTIME)
    ns.update(w.consts)
    ns["_as_int"] = _as_int
    exec(code_of(source, source_file(source, name)), ns)
    return ns


def _combos(action: Action) -> list[dict[str, int]]:
    ranges = []
    for c in action.choices:
        if isinstance(c.type, IntType):
            if not (isinstance(c.type.lo, Const) and isinstance(c.type.hi, Const)):
                raise NotVectorisable(f"action {action.name}: a choice domain that depends on the state")
            ranges.append(range(c.type.lo.value, c.type.hi.value + 1))
        else:
            lo, hi = type_bounds(c.type)
            ranges.append(range(lo, hi + 1))
    combos = list(itertools.product(*ranges))
    return [dict(zip((c.name for c in action.choices), combo)) for combo in combos]


def compile_batch(lay: Layout, packing: Packing, labels: Labels) -> BatchCode:
    """The batch expansion of `lay.model` (labels registered in `labels`); NotVectorisable
    when the model uses something the batch code does not express."""
    _check_words(packing)
    model = lay.model
    w = _Writer(lay, packing)
    w.lines.append("    n = S.shape[0]; _ones = np.ones(n, bool); out = []")
    end = simplify(model.end, lay)
    final = w.truth(end, ())
    alive = w.emit("a", f"~{final} & _ones")
    block_labels: list[int] = []
    block_action: list[int] = []
    for a, action in enumerate(model.actions):
        if action.modality is Modality.MUST_NOT:
            continue
        for values in _combos(action):
            if len(block_labels) >= MAX_BLOCKS:
                raise NotVectorisable(f"more than {MAX_BLOCKS} firings per state")
            _block(w, len(block_labels), specialise(action, values, lay), alive)
            block_labels.append(labels(a, tuple(values.items())))
            block_action.append(a)
    w.lines.append(f"    return {final} & _ones, out")
    source = "def expand(S):\n" + "\n".join(w.lines) + "\n"
    ns = _exec(w, source, f"batch {model.name}")
    return BatchCode(ns["expand"], tuple(block_labels), tuple(block_action), source)


def _check_words(packing: Packing) -> None:
    if not packing.words:
        raise NotVectorisable(f"{packing.bits} bits of state with a variable wider than a {MAX_BITS}-bit word")


def _block(w: _Writer, b: int, action: Action, alive: str) -> None:
    """Guard, effects in order (index, value, range policy), then the successors of the lanes."""
    lay, p = w.lay, w.p
    if isinstance(action.guard, Const) and not action.guard.value:
        return
    fires = alive if isinstance(action.guard, Const) else w.emit("g", f"{w.truth(action.guard, (alive,))} & {alive}")
    ctx: tuple[str, ...] = (fires,)
    writes: list[tuple[str, int, str | None, int]] = []     # (value, first slot, shift code or None, static slot)
    for eff in action.effects:
        var = lay.variables[eff.target.name]
        first, ilo, size = lay.offsets[var.name]
        lo, hi = lay.slots[first].lo, lay.slots[first].hi
        static, shift = first, None
        if isinstance(eff.target, Index):
            if isinstance(eff.target.index, Const):
                if not ilo <= eff.target.index.value < ilo + size:
                    w.bail_if(ctx, "_ones")
                    return
                static = first + eff.target.index.value - ilo
            else:
                shift = w.clipped_index(eff.target.index, ilo, size, ctx)
        value = w.num(eff.value, ctx)
        viv = interval(lay, eff.value, {})
        if viv is None or viv[0] < lo or viv[1] > hi:
            if var.overflow is Overflow.CLAMP:
                value = w.emit("c", f"_clip({value}, {lo}, {hi})")
            else:
                inside = w.emit("o", f"({value} >= {lo}) & ({value} <= {hi})")
                ctx = ctx + (inside,)
        writes.append((value, first, shift, static))
    m = w.mask(ctx)
    lanes = w.emit("l", f"np.flatnonzero({m})")
    succ = w.emit("t", f"S[{lanes}]" if p.words == 1 else f"_take(S, {lanes}, axis=0)")
    for value, first, shift, static in writes:
        width, lo = p.widths[first], p.los[first]
        if not width:
            continue
        sel = value if value.lstrip("-").isdigit() else f"_at({value}, {lanes})"
        stored = f"({sel} - {lo})" if lo else sel
        mask = (1 << width) - 1
        word = w.column(first, succ)
        if shift is None:
            sh = p.word(static)[1]
            w.lines.append(f"    {word} = ({word} & {w.u64(~(mask << sh) & (2**64 - 1))}) | "
                           f"(_u64_of({stored}) << {w.u64(sh)})")
        else:
            base = p.word(first)[1] - width * lay.offsets[lay.slots[first].var][1]
            sh_code = w.emit("h", f"_u64_of(_at({shift}, {lanes}) * {width} + {base})")
            w.lines.append(f"    {word} = ({word} & ~({w.u64(mask)} << {sh_code})) | (_u64_of({stored}) << {sh_code})")
    w.lines.append(f"    out.append(({b}, {lanes}, {succ}))")


def _u64_of(x) -> np.ndarray:
    return np.asarray(x).astype(np.uint64)


def _at(x, lanes: np.ndarray):
    """The values of `x` on `lanes` (a value that is the same on every lane stays as it is)."""
    return x[lanes] if np.ndim(x) else x


_RUNTIME["_u64_of"] = _u64_of
_RUNTIME["_at"] = _at


def compile_batch_predicate(lay: Layout, packing: Packing, e: Expr) -> BatchPredicate:
    """`e` as a mask over a batch of packed states; NotVectorisable as for `compile_batch`."""
    _check_words(packing)
    w = _Writer(lay, packing)
    w.lines.append("    n = S.shape[0]; _ones = np.ones(n, bool)")
    result = w.truth(simplify(e, lay), ())
    w.lines.append(f"    return {result} & _ones")
    source = "def holds(S):\n" + "\n".join(w.lines) + "\n"
    return BatchPredicate(_exec(w, source, "batch predicate")["holds"], source)
