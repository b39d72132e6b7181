"""Numba source for one model: the successor function, the watched predicates and the search loop.

The firings are those `actiongen` writes for the reference code (`bfsgen`), over the packed
state's 64-bit words (one for a state of at most 63 bits, held in the local `s`; else the
compact store's words, each variable whole in one, held in `s0`, `s1`, ... and the successor
built as a tuple of words), with the expressions written in the subset of Python that Numba
compiles (`NumbaWriter`): an array read with a dynamic index checks its range in a helper, a
quantifier's eager bodies are combined with `&` / `|`, a quantifier over state-dependent
bounds becomes a helper function, and a model error raises `ModelError` (no message: the
search stops with the state, and the caller replays it on the reference code for the words).

`module_source` writes the model's module: the helpers, `expand` (the successors of a state in
the reference's firing order, written from `out[n]` on, `count[0]` their end; True where it
is final; a long action's firings in a function `fire_a` of their own), `watch_all` (every
watched predicate of the state, or of row `i` of the states for several words, noting the
first state each holds in) and `watched(k, ...)` (predicate `k` alone: `graph.py`; compiled at its first use). Few
functions, because Numba spends a fixed cost on each one it compiles (bench/README.md,
"Compile cost"); those only compiled code calls have no CPython or C wrapper (`INNER`).
`loop_source` writes the model-independent search loop (one module for states of one word,
one for several). `unfit` says why a model cannot be compiled (the caller keeps another store).
"""
from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import IntEnum

from verifier.engines.actiongen import Labels, Sink, action_lines, range_may_raise
from verifier.engines.bfsgen import packing_of
from verifier.engines.codegen import UNROLL, Interval, Writer, interval, may_raise, simplify
from verifier.engines.compiled import cache
from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Param, Quant, QuantKind, Var, substitute
from verifier.ir.model import Action, IntType, Modality, Model, type_bounds
from verifier.semantics import Layout

MAGNITUDE = 1 << 62        # every value the generated code computes stays below this (int64 arithmetic)
MAX_FIRINGS = 1 << 16      # firings of one state, at most, that the search buffers
MAX_WORDS = 16             # 64-bit words of a state, at most (a search loop is compiled per count)


class NumbaWriter(Writer):
    """`Writer` whose output Numba compiles: no walrus, no `all`/`any`, helpers for quantifiers
    over state-dependent bounds (collected in `helpers`)."""

    def __init__(self, lay: Layout, packing, hoisted: frozenset[int] = frozenset(), helpers: list[str] | None = None):
        super().__init__(lay, packing, "packed", hoisted)
        self.no_walrus = 1                  # dynamic reads go through `_rd`, which checks the index
        self.helpers: list[str] = [] if helpers is None else helpers

    def within(self, hoisted: frozenset[int]) -> NumbaWriter:
        inner = NumbaWriter(self.lay, self.p, hoisted, self.helpers)
        inner.counter = self.counter
        return inner

    def word(self, k: int) -> tuple[str, int]:
        """A state of several words is held in locals `s0`, `s1`, ... (int64 each)."""
        if self.p.words == 1:
            return "s", self.p.shifts[k]
        j, sh = self.p.word(k)
        return f"s{j}", sh

    def state_words(self) -> list[str]:
        return state_words(self.p.words)

    def app(self, e: App, env: dict[str, tuple[str, Interval]]) -> str:
        """`and` / `or` / `implies` whose operands cannot raise as `&` / `|` over 0/1 values: no branch
        per operand (Numba's compile time grows with the branches)."""
        if e.op in (Op.AND, Op.OR, Op.IMPLIES) and not may_raise(e, {k: v[1] for k, v in env.items()}, self.lay):
            parts = [self.truth(x, self.expr(x, env)) for x in e.args]
            if e.op is Op.IMPLIES:
                return f"((not {parts[0]}) | {parts[1]})"
            return "(" + (" & " if e.op is Op.AND else " | ").join(parts) + ")"
        return super().app(e, env)

    def quant(self, e: Quant, env: dict[str, tuple[str, Interval]]) -> str:
        bound = {k: v[1] for k, v in env.items()}
        if isinstance(e.lo, Const) and isinstance(e.hi, Const) and e.hi.value - e.lo.value < UNROLL:
            bodies = [simplify(substitute(e.body, {e.var: Const(i)})) for i in range(e.lo.value, e.hi.value + 1)]
            parts = [self.expr(b, env) for b in bodies]
            if e.kind in (QuantKind.FORALL, QuantKind.EXISTS):
                if not parts:
                    return "True" if e.kind is QuantKind.FORALL else "False"
                parts = [f"({p} != 0)" if _is_int(b) else p for b, p in zip(bodies, parts)]
                eager = any(may_raise(b, bound, self.lay) for b in bodies)
                join = (" & " if eager else " and ") if e.kind is QuantKind.FORALL else (" | " if eager else " or ")
                return "(" + join.join(parts) + ")"
            if e.kind is QuantKind.COUNT:
                parts = [f"(1 if {p} else 0)" for p in parts]
            return "(" + " + ".join(parts) + ")" if parts else "0"
        return self._quant_helper(e, env)

    def _quant_helper(self, e: Quant, env: dict[str, tuple[str, Interval]]) -> str:
        """A quantifier over bounds known only in the state: a helper function of the state, the
        bounds and the locals in scope, evaluating every body where one might raise (as the
        reference does) and stopping early otherwise."""
        name = self.fresh("_quant")
        var = self.fresh("q")
        bound = {k: v[1] for k, v in env.items()}
        lo, hi = interval(self.lay, e.lo, bound), interval(self.lay, e.hi, bound)
        inner_env = {**env, e.var: (var, (lo[0], hi[1]) if lo and hi else None)}
        plain = self.within(frozenset())
        body = plain.expr(e.body, inner_env)
        eager = may_raise(e.body, {k: v[1] for k, v in inner_env.items()}, self.lay)
        outer = sorted({code for code, _iv in env.values()})
        state = self.state_words()
        args = ", ".join([*state, "lo_", "hi_", *outer])
        result = "types.boolean" if e.kind in (QuantKind.FORALL, QuantKind.EXISTS) else "INT"
        lines = [f"@njit({result}({', '.join(['INT'] * (len(state) + 2 + len(outer)))}), **INNER)",
                 f"def {name}({args}):"]
        if e.kind in (QuantKind.FORALL, QuantKind.EXISTS):
            want = "True" if e.kind is QuantKind.FORALL else "False"
            test = f"not ({body})" if e.kind is QuantKind.FORALL else f"({body})"
            lines += [f"    r = {want}", f"    for {var} in range(lo_, hi_ + 1):", f"        if {test}:",
                      f"            r = {'False' if e.kind is QuantKind.FORALL else 'True'}"]
            if not eager:
                lines.append("            break")
        else:
            term = f"(1 if ({body}) else 0)" if e.kind is QuantKind.COUNT else f"({body})"
            lines += ["    r = 0", f"    for {var} in range(lo_, hi_ + 1):", f"        r += {term}"]
        lines.append("    return r")
        self.helpers.append("\n".join(lines))
        call_args = ", ".join([*state, self.expr(e.lo, env), self.expr(e.hi, env), *outer])
        return f"{name}({call_args})"


def state_words(words: int) -> list[str]:
    """The generated code's names of a state's words: `s` for one, `s0`, `s1`, ... for several."""
    return ["s"] if words == 1 else [f"s{j}" for j in range(words)]


def _is_int(e: Expr) -> bool:
    """Whether `e` is an integer expression (not already a boolean)."""
    if isinstance(e, Quant):
        return e.kind not in (QuantKind.FORALL, QuantKind.EXISTS)
    if isinstance(e, App):
        return e.op not in (Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.AND, Op.OR, Op.NOT, Op.IMPLIES)
    if isinstance(e, Const):
        return not e.is_bool
    return True


# ---------------------------------------------------------------- what the compiled code can express

def unfit(lay: Layout) -> str:
    """Why the model's states or arithmetic do not fit the compiled code ("" where they fit)."""
    p = packing_of(lay)
    if not p.words:
        return f"the state takes {p.bits} bits with a variable wider than one 63-bit word"
    if p.words > MAX_WORDS:
        return f"the state takes {p.words} words, more than the {MAX_WORDS} the compiled store holds"
    model = lay.model
    try:
        for action in _playable(model):
            env: dict[str, int] = {}
            for c in action.choices:
                if isinstance(c.type, IntType):
                    env[c.name] = max(magnitude(lay, c.type.lo, env), magnitude(lay, c.type.hi, env))
                else:
                    env[c.name] = max(abs(x) for x in type_bounds(c.type))
            for e in (action.guard, *(x.value for x in action.effects),
                      *(x.target.index for x in action.effects if isinstance(x.target, Index))):
                magnitude(lay, e, env)
        magnitude(lay, model.end, {})
    except Unbounded as err:
        return str(err)
    if max_firings(lay) > MAX_FIRINGS:
        return f"a state may have more than {MAX_FIRINGS} firings (or a choice's range has no static bound)"
    return ""


def unbounded_predicate(lay: Layout, e: Expr) -> str:
    """Why predicate `e` cannot be compiled ("" where it can)."""
    try:
        magnitude(lay, e, {})
    except Unbounded as err:
        return str(err)
    return ""


class Unbounded(Exception):
    """Some value of an expression might not fit a 64-bit integer."""


def magnitude(lay: Layout, e: Expr, env: dict[str, int]) -> int:
    """A bound on the absolute value of `e` and of every value computed on the way (a divisor or
    modulus below 1 is a model error, so a quotient is no larger than its dividend); raises
    `Unbounded` where one reaches MAGNITUDE."""
    out = _magnitude(lay, e, env)
    if out >= MAGNITUDE:
        raise Unbounded("an arithmetic result might not fit 64 bits")
    return out


def _magnitude(lay: Layout, e: Expr, env: dict[str, int]) -> int:
    match e:
        case Const():
            return abs(e.value)
        case Var() | Index():
            if isinstance(e, Index):
                magnitude(lay, e.index, env)
            slot = lay.slots[lay.offsets[e.name][0]]
            return max(abs(slot.lo), abs(slot.hi))
        case Local():
            return env[e.name]
        case Param():
            raise Unbounded(f"the parameter {e.name} has no value")
        case Quant():
            lo, hi = magnitude(lay, e.lo, env), magnitude(lay, e.hi, env)
            body = magnitude(lay, e.body, {**env, e.var: max(lo, hi)})
            if e.kind in (QuantKind.FORALL, QuantKind.EXISTS):
                return 1
            return (lo + hi + 1) * (1 if e.kind is QuantKind.COUNT else body)
        case App():
            m = [magnitude(lay, a, env) for a in e.args]
            op = e.op
            if op in (Op.ADD, Op.SUB):
                return m[0] + m[1]
            if op is Op.MUL:
                return m[0] * m[1]
            if op in (Op.NEG, Op.ABS, Op.DIV):
                return m[0]
            if op is Op.MOD:
                return m[1]
            if op is Op.ITE:
                return max(m[1], m[2])
            if op in (Op.MIN, Op.MAX):
                return max(m)
            return 1
    raise Unbounded(f"an expression the compiled code does not know: {e}")


def _playable(model: Model) -> list[Action]:
    return [a for a in model.actions if a.modality is not Modality.MUST_NOT]


def max_firings(lay: Layout) -> int:
    """The most firings (successors, blocked or not) one state can have: the choice combinations
    of every action, by the static ranges of their domains."""
    total = 0
    for action in _playable(lay.model):
        combos = 1
        for c in action.choices:
            if isinstance(c.type, IntType):
                lo, hi = interval(lay, simplify(c.type.lo, lay), {}), interval(lay, simplify(c.type.hi, lay), {})
                if lo is None or hi is None:
                    return MAX_FIRINGS + 1
                combos *= max(0, hi[1] - lo[0] + 1)
            else:
                lo_v, hi_v = type_bounds(c.type)
                combos *= hi_v - lo_v + 1
        total += combos
    return total


# ---------------------------------------------------------------- the module

SIGNATURES = '''\
from numba import types

# No reference counting of the arrays the functions pass each other: Numba's atomic increment and
# decrement of each array at each call took half the search's time; nothing here allocates one.
OPTIONS = {"cache": True, "_nrt": False}
# a function only compiled code calls (directly, not as a first-class function): no CPython wrapper and
# no C wrapper to compile (a third of a small function's compile time)
INNER = {**OPTIONS, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}

STATES = types.int64[::1]
ROWS = types.int64[:, ::1]
EXPAND_SIGNATURE = types.boolean(types.int64, STATES, STATES, STATES, types.int64)  # (s, out, acts, count, n)
WATCH_SIGNATURE = types.void(types.int64, types.int64, STATES, STATES)      # (s, i, wfound, werr)
EXPAND_ROWS_SIGNATURE = types.boolean(ROWS, types.int64, ROWS, STATES, STATES, types.int64)  # (keys, i, ..., n)
WATCH_ROWS_SIGNATURE = types.void(ROWS, types.int64, STATES, STATES)            # (keys, i, wfound, werr)
WATCHED_SIGNATURE = types.boolean(types.int64, types.int64)                     # (k, s)
WATCHED_ROWS_SIGNATURE = types.boolean(types.int64, ROWS, types.int64)          # (k, keys, i)
'''

RUNTIME = SIGNATURES + '''\
from numba import njit

INT = types.int64


class ModelError(Exception):
    """A run-time error of the model (the caller replays the state for its words)."""


@njit(INT(INT), **OPTIONS)
def _bad_index(i):
    if i == i:
        raise ModelError()
    return 0


@njit(INT(INT, INT, INT, INT, INT, INT, INT, INT), **OPTIONS)
def _rd(s, i, base, w, mask, vlo, lo, size):
    if not lo <= i < lo + size:
        raise ModelError()
    return ((s >> (w * i + base)) & mask) + vlo


@njit(INT(INT), **OPTIONS)
def _opaque(i):
    """`i`, through a call: a local set to a literal so stays a variable to Numba's branch pruning."""
    return i


@njit(INT(INT, INT), **OPTIONS)
def _div(a, b):
    if b <= 0:
        raise ModelError()
    return a // b


@njit(INT(INT, INT), **OPTIONS)
def _mod(a, b):
    if b <= 0:
        raise ModelError()
    return a % b
'''

_LABEL = r"(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"     # a string literal: an array's name in an error
_LABELS = re.compile(rf"(?<=_bad_index\(){_LABEL}, |, {_LABEL}(?=\))")
_LITERAL_SET = re.compile(r"^(\s*n\d+) = (-?\d+)$", re.MULTILINE)


def without_labels(line: str) -> str:
    """A generated line without the array names the reference code's errors quote (the helpers
    take integers only, so Numba compiles each once: the caller replays the state for the words)."""
    return _LABELS.sub("", line)


def opaque_literals(text: str) -> str:
    """`text` with each value set to a literal (`n4 = -2`) read through `_opaque`: Numba prunes the
    branches a literal decides before typing, and a range check of a literal out of its range then
    left a later local undefined ("Unsupported assignment ... Undefined": the module did not compile)."""
    return _LITERAL_SET.sub(r"\1 = _opaque(\2)", text)


@dataclass(frozen=True)
class ModuleSource:
    """The generated module's text, and how many firings a state has at most."""

    text: str
    firings: int
    words: int = 1          # 64-bit words of a state


def module_shape(lay: Layout) -> ModuleSource:
    """`module_source`'s firings and words without its text (empty), what the search's arrays are
    sized by: known without writing the module."""
    return ModuleSource("", max(1, max_firings(lay)), packing_of(lay).words)


def module_source(lay: Layout, watches: Sequence[Expr]) -> ModuleSource:
    """The whole module for `lay.model` watching `watches` (see the module docstring)."""
    packing = packing_of(lay)
    state = state_words(packing.words)
    rows = packing.words > 1
    helpers: list[str] = []

    def target(pad, a, label, choice, t):
        stores = "; ".join(f"out[n, {j}] = {t}[{j}]" for j in range(len(state))) if rows else f"out[n] = {t}"
        return [f"{pad}{stores}; acts[n] = {a}; n += 1; count[0] = n"]

    def blocked(pad, *_args):
        return [f"{pad}pass"]

    counter = itertools.count()
    functions = expand_source(lay, Sink(target, blocked, blocked), helpers, counter)
    read = [f"    {name} = keys[i, {j}]" for j, name in enumerate(state)] if rows else []
    tests, hoisted = watch_tests(lay, watches, helpers, counter)
    read += hoisted
    block = [(WATCH_BLOCK if _RAISING.search(test) else WATCH_BLOCK_PLAIN).format(k=k, test=test)
             for k, test in enumerate(tests)]
    watch_all = ["@njit(WATCH_ROWS_SIGNATURE, **OPTIONS)" if rows else "@njit(WATCH_SIGNATURE, **OPTIONS)",
                 "def watch_all(keys, i, wfound, werr):" if rows else "def watch_all(s, i, wfound, werr):",
                 *read, *block, "    return"]
    # compiled at its first use (`graph.py`'s `where` passes it as a first-class function of the
    # type WATCHED_SIGNATURE / WATCHED_ROWS_SIGNATURE, compiled for that signature): most searches
    # never run it, and it types every watched predicate again (Alice: 1.1 of a module's 9.3 s)
    watched = ["@njit(**OPTIONS)",
               "def watched(k, keys, i):" if rows else "def watched(k, s):", *read,
               *(f"    {'elif' if k else 'if'} k == {k}:\n        return bool({test})" for k, test in enumerate(tests)),
               "    return False"]
    head = (f"from numba import njit, types\n\nfrom {cache.module_name(RUNTIME)} import (INT, INNER, OPTIONS, STATES, ROWS, "
            "EXPAND_SIGNATURE, WATCH_SIGNATURE, EXPAND_ROWS_SIGNATURE, WATCH_ROWS_SIGNATURE, _bad_index, _div, "
            "_mod, _opaque, _rd)\n")
    text = opaque_literals(without_labels("\n\n".join([head, *helpers, *functions, "\n".join(watch_all),
                                                        "\n".join(watched)]) + "\n"))
    return replace(module_shape(lay), text=text)


def watch_tests(lay: Layout, watches: Sequence[Expr], helpers: list[str],
                counter: itertools.count) -> tuple[list[str], list[str]]:
    """The watched predicates' code, and the lines (at 4 spaces) reading into locals `v<slot>` the
    slots they read twice or more together: the predicates test the same few fields (the phase,
    the player) again and again, and Numba's compile time goes by the operations it types."""
    packing = packing_of(lay)
    exprs = [simplify(e, lay) for e in watches]
    probe = NumbaWriter(lay, packing, helpers=[])
    probe.counter = itertools.count()
    for e in exprs:
        probe.expr(e, {})
    w = NumbaWriter(lay, packing, frozenset(k for k, c in probe.reads.items() if c >= 2), helpers)
    w.counter = counter
    tests = [w.expr(e, {}) for e in exprs]
    return tests, [f"    v{k} = {_field_value(w, k)}" for k in sorted(w.hoisted)]


INLINE_LINES = 48   # an action whose firings take at most this many lines is written inside `expand`,
INLINE_TOTAL = 300  # while `expand` stays within this many lines of them


def expand_source(lay: Layout, sink: Sink, helpers: list[str], counter: itertools.count) -> list[str]:
    """`expand` (see the module docstring), each firing written by `sink` (its `target` appends
    the successor to `out`); quantifier helpers are added to `helpers`, fresh names drawn from
    `counter`. An action of at most INLINE_LINES lines is written in `expand` itself (up to
    INLINE_TOTAL lines in all), the others as a function `fire_a` each, called there: Numba
    spends a fixed cost on each function it compiles (its pipeline, its own LLVM module), but its
    compile time also grows faster than a function's length (bench/README.md, "Compile cost")."""
    packing = packing_of(lay)
    state = state_words(packing.words)
    rows = packing.words > 1
    end = simplify(lay.model.end, lay)
    final = not (isinstance(end, Const) and not end.value)
    fired = [(a, action) for a, action in enumerate(lay.model.actions)
             if action.modality is not Modality.MUST_NOT and _fires(lay, a, action, sink)]
    runs = _runs(lay, fired)
    functions: list[str] = []
    bodies: dict[int, list[str]] = {}
    inlined = 0
    for slot, members in runs:
        for a, _value in members:
            # what holds where the firings run: the end does not (`expand` returned before), nor
            # does another phase value than the action's (its run's test of the phase)
            known: set[Expr] = {App(Op.NOT, (end,))} if final else set()
            if slot is not None:
                known.add(_opening(lay.model.actions[a].guard))
            body = action_body(lay, a, lay.model.actions[a], sink, helpers, counter, frozenset(known))
            if len(body) <= INLINE_LINES and inlined + len(body) <= INLINE_TOTAL:
                bodies[a] = [_HOISTED.sub(rf"\1_{a}", line) for line in body]
                inlined += len(body)
            else:
                functions.append("\n".join(action_function(state, a, body)))
    w = NumbaWriter(lay, packing, helpers=helpers)
    w.counter = counter
    calls = _calls(w, runs, bodies)
    test = [f"    if {w.expr(end, {})}:", "        return True"] if final else []
    read = [f"    {name} = keys[i, {j}]" for j, name in enumerate(state)] if rows else []
    expand = ["@njit(EXPAND_ROWS_SIGNATURE, **OPTIONS)" if rows else "@njit(EXPAND_SIGNATURE, **OPTIONS)",
              "def expand(keys, i, out, acts, count, n):" if rows else "def expand(s, out, acts, count, n):",
              *read, *test, *single_assignment(calls), "    return False"]
    return [*functions, "\n".join(expand)]


def _fires(lay: Layout, a: int, action: Action, sink: Sink) -> bool:
    """Whether action `a` has firing code (`action_body` is not empty)."""
    probe = NumbaWriter(lay, packing_of(lay), helpers=[])
    probe.counter = itertools.count()
    return bool(action_lines(probe, a, action, "    ", sink, Labels()))


_HOISTED = re.compile(r"\b(v\d+)\b")    # a slot an action's code read once into a local (one per action in `expand`)


def action_body(lay: Layout, a: int, action: Action, sink: Sink, helpers: list[str],
                counter: itertools.count, known: frozenset[Expr] = frozenset()) -> list[str]:
    """The lines (at 4 spaces) appending the firings of action `a` from `out[n]` on, `n` the
    next free place after them; the slots its code reads twice or more read once at its start
    (locals `v<slot>`); the guard's conjuncts in `known` (true, and unable to raise, where the
    lines run) not tested. Empty where it has no firing code."""
    packing = packing_of(lay)
    probe = NumbaWriter(lay, packing, helpers=[])
    probe.counter = itertools.count()
    probe.known = known
    action_lines(probe, a, action, "    ", sink, Labels())
    w = NumbaWriter(lay, packing, frozenset(k for k, c in probe.reads.items() if c >= 2), helpers)
    w.counter = counter
    w.known = known
    lines = merged_checks(action_lines(w, a, action, "    ", sink, Labels()))
    if not lines:
        return []
    reads, lines = shared_reads(lines, counter, {f"v{k}" for k in w.hoisted})
    terms, lines = shared_terms(lines, counter)
    return [*(f"    v{k} = {_field_value(w, k)}" for k in sorted(w.hoisted)), *reads, *terms, *lines]


_CHECK = re.compile(r"^(\s*)(if|elif) not (-?\d+) <= (\w+) <= (-?\d+):$")


def merged_checks(lines: list[str]) -> list[str]:
    """Each chain of range checks whose failures do nothing (`if not lo <= x <= hi: pass`, `elif`
    ..., `else:`, as a forbidding policy's in the search) written as one test of them all over
    the lines of its `else` (`if (lo <= x) & (x <= hi) & ...:`): no branch per check or
    comparison (the checks read locals only, so testing them all is harmless)."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        first = _CHECK.match(lines[i])
        pad = first.group(1) if first else ""
        tests: list[str] = []
        j = i
        while j + 1 < len(lines) and (m := _CHECK.match(lines[j])) and m.group(1) == pad \
                and (m.group(2) == "elif") == bool(tests) and lines[j + 1] == f"{pad}    pass":
            tests.append(f"({m.group(3)} <= {m.group(4)}) & ({m.group(4)} <= {m.group(5)})")
            j += 2
        if tests and j < len(lines) and lines[j] == f"{pad}else:":
            out.append(f"{pad}if {' & '.join(tests)}:")
            i = j + 1
        else:
            out.append(lines[i])
            i += 1
    return out


# a field read at an index computed from the slots read into locals (`v<slot>`) and literals alone
_DYNAMIC_READ = re.compile(r"\(\(s\d* >> \(((?:v\d+|\d+)(?: [*+-] (?:v\d+|\d+))*)\)\) & \d+\)")
_LOCAL = re.compile(r"v\d+")


def shared_reads(lines: list[str], counter: itertools.count, hoisted: set[str]) -> tuple[list[str], list[str]]:
    """Each read `((s >> (4 * v1 + 21)) & 15)` that `lines` make twice or more, read once into a
    local at their start (the lines so rewritten): an action's firings (its choices unrolled)
    read the same element of an array again and again, and Numba's compile time goes by the
    operations it types. The read cannot raise and its index reads only literals and the slots
    read before the lines (`hoisted`)."""
    seen = Counter(m.group(0) for line in lines for m in _DYNAMIC_READ.finditer(line)
                   if set(_LOCAL.findall(m.group(1))) <= hoisted)
    names = {read: f"d{next(counter)}" for read, times in seen.items() if times >= 2}
    if not names:
        return [], lines
    pattern = re.compile("|".join(re.escape(read) for read in names))
    return ([f"    {name} = {read}" for read, name in names.items()],
            [pattern.sub(lambda m: names[m.group(0)], line) for line in lines])


def action_function(state: list[str], a: int, body: list[str], name: str = "fire") -> list[str]:
    """`fire_a(s, out, acts, count, n)` (`s0, s1, ...` for a state of several words; `name` in
    place of `fire`) of an action's `body` (`action_body`): its firings appended from `n` on; the
    new `n`. Called from compiled code only: no CPython or C wrapper."""
    out = "ROWS" if len(state) > 1 else "STATES"
    return [f"@njit(INT({', '.join(['INT'] * len(state))}, {out}, STATES, STATES, INT), **INNER)",
            f"def {name}_{a}({', '.join(state)}, out, acts, count, n):", *single_assignment(body), "    return n"]


_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+|<<|>>|<=|>=|==|!=|\S")
_PURE_WORD = re.compile(r"[vd]\d+|\d+|not|if|else|min|max|<=|>=|==|!=|[-+*&|<>(),]")
_OPERATION = re.compile(r"[-+*&|<>=]|not|if|min|max")


def _pure(term: str) -> bool:
    """Whether `term` reads only the locals read at an action's start (`v<slot>`, `d<n>`) and
    literals, with no operation that might raise nor shift by an amount it computes."""
    tokens = _TOKEN.findall(term)
    for k, token in enumerate(tokens):
        if token in ("<<", ">>"):
            if k + 1 == len(tokens) or not tokens[k + 1].isdigit():
                return False
        elif not _PURE_WORD.fullmatch(token):
            return False
    return True


def shared_terms(lines: list[str], counter: itertools.count) -> tuple[list[str], list[str]]:
    """Each parenthesised term of the locals read at the action's start and literals that `lines`
    write twice or more (a guard's conjunct repeated in each unrolled choice, a monitor's update
    in each firing), computed once into a local at their start (the lines so rewritten): it
    cannot raise, so computing it where a guard would not have is harmless, and Numba's compile
    time goes by the operations it types."""
    seen = Counter(term for line in lines for term in _terms(line))
    chosen = sorted((t for t, times in seen.items() if times >= 2), key=len)
    if not chosen:
        return [], lines
    names = {term: f"e{next(counter)}" for term in chosen}
    definitions = [(names[term], f"({_rewritten(term[1:-1], names)})") for term in chosen]   # shorter ones first
    lines = [_rewritten(line, names) for line in lines]
    used = set(re.findall(r"\be\d+\b", "\n".join([*lines, *(value for _n, value in definitions)])))
    return [f"    {name} = {value}" for name, value in definitions if name in used], lines


def _terms(line: str) -> list[str]:
    """The parenthesised terms of `line` that `shared_terms` may compute apart: pure, not a call's
    arguments, no tuple, with an operation (none in a line quoting text)."""
    if "'" in line or '"' in line:
        return []
    out, opened = [], []
    for i, c in enumerate(line):
        if c == "(":
            opened.append(i)
        elif c == ")" and opened:
            j = opened.pop()
            term = line[j:i + 1]
            if not _called(line, j) and _OPERATION.search(term) and "," not in _top_level(term) and _pure(term):
                out.append(term)
    return out


def _called(code: str, i: int) -> bool:
    """Whether the parenthesis at `code[i]` opens a call's arguments."""
    return i > 0 and (code[i - 1].isalnum() or code[i - 1] == "_")


def _top_level(term: str) -> str:
    """The characters of a parenthesised term outside its inner parentheses."""
    depth, out = 0, []
    for c in term[1:-1]:
        depth += (c == "(") - (c == ")")
        if depth == 0 and c not in "()":
            out.append(c)
    return "".join(out)


def _rewritten(code: str, names: dict[str, str]) -> str:
    """`code` with each outermost parenthesised term of `names` (not a call's arguments) by its name."""
    if "'" in code or '"' in code:
        return code
    out, i = [], 0
    while i < len(code):
        if code[i] != "(":
            out.append(code[i])
            i += 1
            continue
        j, depth = i, 0
        while True:
            depth += (code[j] == "(") - (code[j] == ")")
            if depth == 0:
                break
            j += 1
        term = code[i:j + 1]
        out.append(names[term] if term in names and not _called(code, i) else f"({_rewritten(term[1:-1], names)})")
        i = j + 1
    return "".join(out)


_REDEFINED = re.compile(r"^(\s*)(u|t|uw\d+) = (.*)$")


def single_assignment(lines: list[str]) -> list[str]:
    """The successor locals `u`, `uw0`, `uw1`, ... and `t`, assigned once per firing block and
    again in the next, renamed at each assignment (`u_0`, `u_1`, ...): Numba rebuilds the SSA
    form of a local assigned more than once by a walk over the whole function, for each such local."""
    current: dict[str, str] = {}
    fresh = itertools.count()
    out = []
    for line in lines:
        m = _REDEFINED.match(line)
        if m:
            pad, name, value = m.groups()
            value = _renamed(value, current)
            current[name] = f"{name}_{next(fresh)}"
            out.append(f"{pad}{current[name]} = {value}")
        else:
            out.append(_renamed(line, current))
    return out


def _renamed(code: str, current: dict[str, str]) -> str:
    for name, now in current.items():
        code = re.sub(rf"\b{name}\b", now, code)
    return code


def _runs(lay: Layout, fired: list[tuple[int, Action]]) -> list[tuple[int | None, list[tuple[int, int]]]]:
    """The actions of `fired` in model order, as runs `(slot, [(action, value), ...])`: each run of
    consecutive actions whose guards open with `slot == value` on one slot (the phase), with two
    values or more, is written under one test of the slot per value (at most one value's firings
    can happen in a state, and the others' guards would stop at that test; an action whose choice
    range, evaluated before the guard, might raise is never in one); the other actions are runs of
    slot None (value 0), written as they are."""
    tests = [None if range_may_raise(lay, action) else _opening_test(lay, action.guard) for _a, action in fired]
    runs: list[tuple[int | None, list[tuple[int, int]]]] = []
    start = 0
    while start < len(fired):
        test = tests[start]
        end = start + 1
        while test is not None and end < len(fired) and (after := tests[end]) is not None and after[0] == test[0]:
            end += 1
        run = list(zip(fired[start:end], tests[start:end]))
        if test is None or len({t[1] for _f, t in run if t is not None}) < 2:
            runs += [(None, [(a, 0)]) for (a, _action), _t in run]
        else:
            runs.append((test[0], [(a, t[1]) for (a, _action), t in run if t is not None]))
        start = end
    return runs


def _calls(w: Writer, runs: list[tuple[int | None, list[tuple[int, int]]]], bodies: dict[int, list[str]]) -> list[str]:
    """`expand`'s firings of the actions, in model order (`_runs`): the body of each action in
    `bodies`, a call of its function for the others."""
    call = "n = fire_{}(" + ", ".join(w.state_words()) + ", out, acts, count, n)"

    def firing(a: int, pad: str) -> list[str]:
        if a in bodies:
            return [pad + line[4:] for line in bodies[a]]
        return [pad + call.format(a)]

    lines: list[str] = []
    for slot, members in runs:
        if slot is None:
            lines += [line for a, _value in members for line in firing(a, "    ")]
            continue
        groups: dict[int, list[int]] = {}
        for a, value in members:
            groups.setdefault(value, []).append(a)
        lines.append(f"    v = {_field_value(w, slot)}")
        for i, (value, group) in enumerate(groups.items()):
            lines.append(f"    {'elif' if i else 'if'} v == {value}:")
            lines += [line for a in group for line in firing(a, "        ")]
    return lines


def _opening(guard: Expr) -> Expr:
    """A guard's first conjunct (the guard where it is not a conjunction)."""
    return guard.args[0] if isinstance(guard, App) and guard.op is Op.AND else guard


def _opening_test(lay: Layout, guard: Expr) -> tuple[int, int] | None:
    """(slot, value) where the guard's first conjunct is `slot == value`."""
    first = _opening(guard)
    if not (isinstance(first, App) and first.op is Op.EQ):
        return None
    x, y = first.args
    if isinstance(x, Const):
        x, y = y, x
    if not isinstance(y, Const):
        return None
    if isinstance(x, Var):
        return lay.offsets[x.name][0], y.value
    if isinstance(x, Index) and isinstance(x.index, Const):
        first_slot, lo, size = lay.offsets[x.name]
        if lo <= x.index.value < lo + size:
            return first_slot + x.index.value - lo, y.value
    return None


def _field_value(w: Writer, k: int) -> str:
    lo = w.p.los[k]
    if not w.p.widths[k]:
        return str(lo)
    return f"{w.field(k)} + {lo}" if lo else w.field(k)


WATCH_BLOCK = """\
    if wfound[{k}] < 0 and werr[{k}] < 0:
        try:
            if bool({test}):
                wfound[{k}] = i
        except Exception:
            werr[{k}] = i"""
WATCH_BLOCK_PLAIN = """\
    if wfound[{k}] < 0:
        if {test}:
            wfound[{k}] = i"""
# a call that may raise a model error (a checked read, a division, a quantifier's helper; any helper but
# `_opaque`): a watched predicate's test without one cannot raise, so `watch_all` tests it without a
# `try` (Numba's compile time grows fast with them: 23 s of 38 for a product watching 41 predicates)
_RAISING = re.compile(r"\b_(?!opaque\()\w+\(")

_LOOP = """\
import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils
from numba.extending import intrinsic

FINAL, FAILED = 1, 2          # a state expanded ahead: final (no successors needed), or a model error
MARK_BITS = 16                # the place of every 2^MARK_BITS-th one of the links is noted (`marks`)

TABLE = types.uint32[::1]     # the visited table: a slot holds tag << bits | (index + 1) of a stored state (0: empty)
LINKS = types.uint64[::1]     # the parent links, a bit string (see `loop_source`)
EDGES = types.int32[::1]      # the recorded transitions' targets and actions (`arrays.EdgeArrays`)
KEYS = {keys}
EXPAND = types.FunctionType({expand})
WATCH = types.FunctionType({watch})


@njit(types.uint64(types.uint64), **OPTIONS)
def _mix(h):
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xff51afd7ed558ccd)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xc4ceb9fe1a85ec53)
    h ^= h >> np.uint64(33)
    return h


@njit(types.uint64(types.int64), **OPTIONS)
def _hash(x):
    return _mix(np.uint64(x))


@njit(types.int64(types.uint64, types.int64), **OPTIONS)
def _home(h, size):
    # the slot a hash starts probing at: its high 32 bits scaled to the table (any size, the hash's order kept)
    return np.int64(((h >> np.uint64(32)) * np.uint64(size)) >> np.uint64(32))


@njit(types.int64(types.uint64, types.int64), **OPTIONS)
def _tag(h, bits):
    # the low bits of a hash that its slot keeps above the index: most slots that hold another state are
    # passed over without reading that state
    return np.int64(h & np.uint64((1 << (32 - bits)) - 1))


@njit(types.void(TABLE, types.uint64, types.int64, types.int64), **OPTIONS)
def _place(table, h, bits, j):
    # state j, of hash h, into the first free slot from its home (linear probing)
    size = table.shape[0]
    p = _home(h, size)
    while table[p] != 0:
        p += 1
        if p == size:
            p = 0
    table[p] = (_tag(h, bits) << bits) | (j + 1)


@intrinsic
def _prefetch(typingctx, array, index):
    # a hint to the processor to fetch array[index] into its caches (LLVM's prefetch)
    def codegen(context, builder, signature, args):
        kind = signature.args[0]
        view = context.make_array(kind)(context, builder, args[0])
        at = cgutils.get_item_pointer(context, builder, kind, view, [args[1]], wraparound=False)
        byte = ir.IntType(8).as_pointer()
        hint = ir.FunctionType(ir.VoidType(), [byte, ir.IntType(32), ir.IntType(32), ir.IntType(32)])
        function = cgutils.get_or_insert_function(builder.module, hint, "llvm.prefetch.p0")
        read, keep, data = (ir.Constant(ir.IntType(32), v) for v in (0, 3, 1))
        builder.call(function, [builder.bitcast(at, byte), read, keep, data])
        return context.get_dummy_value()
    return types.void(array, index), codegen
{helpers}

@njit(types.void(KEYS, types.int64, types.int64, TABLE, types.int64), **OPTIONS)
def fill(keys, lo, hi, table, bits):
    # stored states lo..hi into the table (read in order; their slots fetched ahead)
    size = table.shape[0]
    ahead = 16
    for j in range(lo, min(hi, lo + ahead)):
        _prefetch(table, _home({hash_of_j}, size))
    for j0 in range(lo, hi):
        if j0 + ahead < hi:
            j = j0 + ahead
            _prefetch(table, _home({hash_of_j}, size))
        j = j0
        h = {hash_of_j}
        _place(table, h, bits, j)


@njit(types.int64(KEYS, TABLE, types.int64, KEYS, types.int64), **OPTIONS)
def find(keys, table, bits, out, j):
    # the index of state out[j] among the stored states, -1 where it is not stored
    size = table.shape[0]
    h = {hash_out}
    p = _home(h, size)
    t = _tag(h, bits)
    low = (1 << bits) - 1
    while True:
        e = np.int64(table[p])
        if e == 0:
            return -1
        if (e >> bits) == t and {same}:
            return (e & low) - 1
        p += 1
        if p == size:
            p = 0


@njit(types.int64(LINKS, STATES, types.int64, types.int64), **OPTIONS)
def parent_of(links, marks, inits, i):
    # the parent of state i: the zeros before its one (see `loop_source`), from the nearest noted one on
    if i < inits:
        return -1
    c = i - inits
    q = marks[c >> MARK_BITS]
    left = c & ((1 << MARK_BITS) - 1)
    w = q >> 6
    word = links[w] & (~np.uint64(0) << np.uint64(q & 63))
    while True:
        ones = 0
        x = word
        while x != 0:
            x &= x - np.uint64(1)
            ones += 1
        if left < ones:
            break
        left -= ones
        w += 1
        word = links[w]
    for _ in range(left):
        word &= word - np.uint64(1)
    b = 0
    while (word >> np.uint64(b)) & np.uint64(1) == 0:
        b += 1
    return w * 64 + b - c


@njit(types.void(LINKS, types.int64, types.int64, types.int32[::1]), **OPTIONS)
def parents(links, nlinks, inits, out):
    # every state's parent (-1 for an initial state) from the links
    for i in range(inits):
        out[i] = -1
    zeros = 0
    c = inits
    for q in range(nlinks):
        if (links[q >> 6] >> np.uint64(q & 63)) & np.uint64(1):
            out[c] = zeros
            c += 1
        else:
            zeros += 1


@njit(types.void(WATCH, KEYS, types.int64, types.int64, STATES, STATES), **OPTIONS)
def scan(watch, keys, lo, hi, wfound, werr):
    for i in range(lo, hi):
        watch({watch_args}, wfound, werr)


@njit(types.int64(EXPAND, WATCH, KEYS, LINKS, STATES, TABLE, STATES, STATES, STATES, STATES, types.uint8[::1],
                  STATES, KEYS, STATES, STATES, STATES, STATES, STATES, STATES, STATES, EDGES, EDGES, types.uint8[::1]),
      **OPTIONS)
def search(expand, watch, keys, links, marks, table, levels, ctl, wfound, werr, track, fired, out, acts, count,
           homes, tags, ends, flags, offsets, dst, lab, stuck):
    i = ctl[0]
    n = ctl[1]
    trans = ctl[2]
    depth = ctl[3]
    level_end = ctl[4]
    nlevels = ctl[5]
    max_states = ctl[6]
    max_depth = ctl[7]
    deadlock = ctl[8]
    stop = i + ctl[9]
    watching = ctl[10]
    nlinks = ctl[11]
    inits = ctl[12]
    bits = ctl[13]
    room = ctl[14]
    recording = ctl[15]
    edge_room = dst.shape[0]
    cap = keys.shape[0]
    link_room = 64 * links.shape[0]
    mark_room = marks.shape[0] << MARK_BITS
    size = table.shape[0]
    low = (1 << bits) - 1
    mark_mask = (1 << MARK_BITS) - 1
    batch = ends.shape[0]
    firings = out.shape[0] // batch
    status = 0
    while i < n and status == 0:
        ahead = min(n, i + batch) - i
        for b in range(ahead):
            lo = b * firings
            count[0] = lo
            flags[b] = 0
            try:
                if expand({state_ahead}, out, acts, count, lo):
                    flags[b] = FINAL
            except Exception:
                flags[b] = FAILED
            ends[b] = count[0]
            for j in range(lo, ends[b]):
                h = {hash_out}
                p = _home(h, size)
                homes[j] = p
                tags[j] = _tag(h, bits)
                _prefetch(table, p)
            if flags[b] == FAILED:
                ahead = b + 1
                break
        for b in range(ahead):
            if i == level_end:
                if depth + 1 >= max_depth:
                    status = 4
                    break
                if nlevels == levels.shape[0]:
                    status = 2
                    break
                depth += 1
                levels[nlevels] = i
                nlevels += 1
                level_end = n
            if i >= stop:
                status = 1
                break
            if n + firings > cap or n + firings > room or nlinks + firings + 1 > link_room \\
                    or n - inits + firings >= mark_room:
                status = 2
                break
            edge = 0
            if recording:
                edge = offsets[i]
                if edge + firings > edge_room:
                    status = 2
                    break
            if watching:
                watch({watch_args}, wfound, werr)
            full = False
            lo = b * firings
            for j in range(lo, ends[b]):
                a = acts[j]
                if track[a] and fired[a] < 0:
                    fired[a] = i
                trans += 1
                p = homes[j]
                t = tags[j]
                while True:
                    e = np.int64(table[p])
                    if e == 0:
                        if n == max_states:
                            full = True
                        else:
                            table[p] = (t << bits) | (n + 1)
                            {store}
                            links[nlinks >> 6] |= np.uint64(1) << np.uint64(nlinks & 63)
                            if (n - inits) & mark_mask == 0:
                                marks[(n - inits) >> MARK_BITS] = nlinks
                            nlinks += 1
                            e = (t << bits) | (n + 1)
                            n += 1
                        break
                    if (e >> bits) == t and {same}:
                        break
                    p += 1
                    if p == size:
                        p = 0
                if full:
                    break
                if recording:
                    dst[edge] = (e & low) - 1
                    lab[edge] = a
                    edge += 1
            if full:
                status = 3
                break
            if flags[b] == FAILED:
                status = 5
                break
            if ends[b] == lo and flags[b] != FINAL:
                if deadlock < 0:
                    deadlock = i
                if recording:
                    stuck[i] = 1
            if recording:
                offsets[i + 1] = edge
            nlinks += 1
            i += 1
    ctl[0] = i
    ctl[1] = n
    ctl[2] = trans
    ctl[3] = depth
    ctl[4] = level_end
    ctl[5] = nlevels
    ctl[8] = deadlock
    ctl[11] = nlinks
    return status
"""

_ROW_HELPERS = """

@njit(types.uint64(ROWS, types.int64), **OPTIONS)
def _hash_row(a, j):
    h = np.uint64(0)
    for w in range(a.shape[1]):
        h = _mix(h ^ np.uint64(a[j, w]))
    return h


@njit(types.void(ROWS, types.int64, ROWS, types.int64), **OPTIONS)
def _copy_row(a, i, b, j):
    for w in range(a.shape[1]):
        a[i, w] = b[j, w]


@njit(types.boolean(ROWS, types.int64, ROWS, types.int64), **OPTIONS)
def _same_row(a, i, b, j):
    for w in range(a.shape[1]):
        if a[i, w] != b[j, w]:
            return False
    return True
"""


def loop_source(words: int) -> str:
    """The model-independent search loop for states of `words` words (one module for one word,
    another for several: compiled once per machine each): `search`, `fill` (stored states into
    the visited table: a new table, or a larger one when it grows), `find` (a state's index
    through the table: `graph.py`), `parent_of` and `parents` (the parent links read back) and
    `scan` (a watch over stored states).

    The states are stored in BFS order in `keys`; the visited table holds, per stored state,
    its index + 1 in the low `bits` bits of a 32-bit slot and some other bits of its hash (the
    tag) above them, so that a lookup reads the state itself only where the tag matches. The
    table's size is any number (a hash's high bits scaled to it: `_home`), linear probing.
    A state's parent is the state being expanded when it was first stored, so parents never
    decrease along BFS order: the links are a bit string, a one for each stored state (initial
    states apart) and a zero after each expanded state; a state's parent is the number of zeros
    before its one (2 bits a state at most; `marks` notes where every 2^MARK_BITS-th one lies).
    The search expands a batch of states ahead (`ends.shape[0]` of them) and has the processor
    fetch the table slots of all their successors before it looks any up in BFS order: the
    lookups' cache misses overlap. What it stores, and in which order, is as one state at a time:
    a state expanded ahead counts only when its turn comes (a budget or a level's end may stop
    the search first; a model error met ahead stops it at that state). With `ctl`'s `recording`
    set it also keeps the state graph as it goes (`arrays.EdgeArrays`, for `graph.py`): each
    expanded state's transitions (target index, action) in firing order from `offsets[i]` on,
    `offsets[i + 1]` their end, `stuck[i]` 1 where it is stuck (not final, no successor)."""
    if words == 1:
        fill = {"keys": "STATES", "expand": "EXPAND_SIGNATURE", "watch": "WATCH_SIGNATURE", "helpers": "",
                "hash_of_j": "_hash(keys[j])", "state_ahead": "keys[i + b]", "watch_args": "keys[i], i",
                "hash_out": "_hash(out[j])", "store": "keys[n] = out[j]", "same": "keys[(e & low) - 1] == out[j]"}
    else:
        fill = {"keys": "ROWS", "expand": "EXPAND_ROWS_SIGNATURE", "watch": "WATCH_ROWS_SIGNATURE",
                "helpers": _ROW_HELPERS, "hash_of_j": "_hash_row(keys, j)", "state_ahead": "keys, i + b",
                "watch_args": "keys, i", "hash_out": "_hash_row(out, j)", "store": "_copy_row(keys, n, out, j)",
                "same": "_same_row(keys, (e & low) - 1, out, j)"}
    return SIGNATURES + _LOOP.format(**fill)


class Status(IntEnum):
    """What `search` returns."""

    DONE = 0            # every stored state expanded
    TICK = 1            # a slice expanded: the caller checks its budgets and calls again
    GROW = 2            # the arrays are full: the caller grows them and calls again
    STATES = 3          # the state cap reached
    DEPTH = 4           # the depth cap reached
    ERROR = 5           # a model error in the state at the head


CTL = ("head", "stored", "transitions", "depth", "level_end", "levels", "max_states", "max_depth",
       "deadlock", "slice", "watching", "links", "inits", "bits", "room", "recording")    # the slots of its `ctl` array
