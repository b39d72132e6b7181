"""Generated functions over packed states: the search loop, `expand`, predicates.

`compile_search` writes one flat function that runs the breadth-first search
itself: every action's firings are inlined into the loop body (one block per
choice combination when the domains are constant and small), slots read
often are hoisted into locals once per state, and new states go straight into
the visited set, the queue and the parent / label arrays. The loop reports
back through a `Search` object (see `explicit.py`).

`compile_model` and `compile_predicate` work on state tuples, the reference
semantics' states, which the differential tests compare them with: firings
(action index, choice, successor tuple or None, raw gap or None).
"""
from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from verifier.engines.actiongen import CHAIN, Labels, Sink, all_action_lines, static_slot
from verifier.engines.codecache import code_of
from verifier.engines.codegen import RUNTIME, Packing, Writer, make_packing, may_raise, simplify, source_file
from verifier.ir.expr import App, Const, Expr, Op
from verifier.ir.model import Action, Modality, Model
from verifier.semantics import Layout

TICK_STATES = 256       # the search loop calls back (progress, budgets) every this many states; a power of 2


class Full(Exception):
    """Raised by the search loop when `max_states` is reached."""


@dataclass
class GeneratedCode:
    """What was generated for one layout, kept as long as the layout lives: its packing and,
    once asked for, its expander."""

    packing: Packing
    expander: Expander | None = None


_generated: dict[int, GeneratedCode] = {}      # id(layout) -> its code; dropped with the layout


def _code_of(lay: Layout) -> GeneratedCode:
    code = _generated.get(id(lay))
    if code is None:
        code = _generated[id(lay)] = GeneratedCode(make_packing(lay))
        weakref.finalize(lay, _generated.pop, id(lay), None)
    return code


def packing_of(lay: Layout) -> Packing:
    return _code_of(lay).packing


def _exec(source: str, name: str, extra: dict) -> dict:
    ns = dict(RUNTIME)
    ns.update(extra)
    exec(code_of(source, source_file(source, name)), ns)
    return ns


def _hoist_lines(w: Writer, pad: str) -> list[str]:
    return [f"{pad}v{k} = {_field_value(w, k)}" for k in sorted(w.hoisted)]


def _field_value(w: Writer, k: int) -> str:
    lo = w.p.los[k]
    if not w.p.widths[k]:
        return str(lo)
    return f"{w.field(k)} + {lo}" if lo else w.field(k)


def _two_pass(lay: Layout, body: Callable[[Writer], list[str]]) -> tuple[Writer, list[str]]:
    """Generate once to count slot reads, then again with the slots read twice or more hoisted."""
    packing = packing_of(lay)
    probe = Writer(lay, packing, counting=True)
    body(probe)
    w = Writer(lay, packing, hoisted=frozenset(k for k, c in probe.reads.items() if c >= 2))
    return w, body(w)


def _playable(model: Model) -> list[tuple[int, Action]]:
    """The actions that fire (a `must_not` rule only forbids), with their indices."""
    return [(a, action) for a, action in enumerate(model.actions) if action.modality is not Modality.MUST_NOT]


# ---------------------------------------------------------------- the search loop

@dataclass(frozen=True)
class SearchCode:
    run: Callable            # run(search) -> status: None (done), "states", "found", a tick reason, or EvalError
    finish: Callable         # finish(search): the watches on the states stored but not expanded
    labels: Labels
    source: str


def compile_search(lay: Layout, watches: Sequence[Expr] = (), track: Sequence[int] = (),
                   keep_edges: bool = False, stop_when_found: bool = False,
                   canon: Callable[[int], int] | None = None) -> SearchCode:
    """The BFS loop for `lay.model`; `watches` are predicates checked on every expanded state
    (the first index satisfying each is kept); `track` lists action indices whose first firing
    is kept (state, label, target). With `canon`, every successor is stored as `canon(successor)`
    (one state per symmetry orbit, `symmetry.py`)."""
    model = lay.model
    labels = Labels()
    tracked = set(track)
    end = simplify(model.end, lay)

    def target(pad, a, label, choice, t):
        out = [f"{pad}trans += 1"]
        if canon is not None:
            out.append(f"{pad}c_ = _canon({t})")
            t = "c_"
        if a in tracked:
            out.append(f"{pad}if F{a} is None: F{a} = (i, {label}, {t})")
        if keep_edges:
            out += [f"{pad}j = seen_get({t})",
                    f"{pad}if j is None:",
                    f"{pad}    if n == max_states: raise _Full",
                    f"{pad}    seen[{t}] = j = n",
                    f"{pad}    states_append({t}); parent_append(i); via_append({label}); n += 1",
                    f"{pad}esrc_append(i); edst_append(j); elab_append({label})"]
        else:
            out += [f"{pad}if {t} not in seen:",
                    f"{pad}    if n == max_states: raise _Full",
                    f"{pad}    seen_add({t}); states_append({t}); parent_append(i); via_append({label}); n += 1"]
        return out

    def blocked(pad, a, label, choice):
        return [f"{pad}pass"]

    def gap(pad, a, label, choice, slot, value, lo, hi):
        return [f"{pad}_gap({a}, {slot}, {value}, i, {label})"]

    sink = Sink(target, blocked, gap)

    watched = [simplify(e, lay) for e in watches]

    def body(w: Writer) -> list[str]:
        pad = " " * 12
        lines = watch_lines(w, watched, pad)
        if stop_when_found and watches:
            lines += [f"{pad}if {' and '.join(f'w{k} is not None' for k in range(len(watches)))}:",
                      f"{pad}    status = 'found'; break"]
        inner = pad
        if not (isinstance(end, Const) and not end.value):
            lines.append(f"{pad}if not {w.expr(end, {})}:")
            inner = pad + "    "
        lines.append(f"{inner}t0 = trans")
        w.known = frozenset({App(Op.NOT, (end,))})      # the actions fire where the end does not hold
        lines += all_action_lines(w, _playable(model), inner, sink, labels)
        w.known = frozenset()
        lines.append(f"{inner}if trans == t0: deadlocks_append(i)")
        return lines

    w, lines = _two_pass(lay, body)
    src = ["def run(ctx):",
           "    states = ctx.packed; states_append = states.append",
           "    parent_append = ctx.parent.append; via_append = ctx.via.append",
           "    seen = ctx.seen",
           "    seen_get = seen.get" if keep_edges else "    seen_add = seen.add",
           "    deadlocks_append = ctx.deadlocks.append; levels_append = ctx.levels.append",
           "    _gap = ctx.record_gap; _lab = ctx.labels; _werr = ctx.watch_errors; tick = ctx.tick",
           "    max_states = ctx.state_limit; max_depth = ctx.depth_limit",
           "    i = ctx.head; n = len(states); trans = ctx.transitions",
           "    depth = ctx.cur_depth; level_end = ctx.level_end",
           "    status = None"]
    if keep_edges:
        src.append("    esrc_append = ctx.esrc.append; edst_append = ctx.edst.append; elab_append = ctx.elab.append")
    src += [f"    w{k} = ctx.watch[{k}]" for k in range(len(watches))]
    src += [f"    F{a} = ctx.fired.get({a})" for a in sorted(tracked)]
    src += ["    try:",
            "        while i < n:",
            "            if i == level_end:",
            "                if depth + 1 >= max_depth:",
            "                    status = 'depth'; break",
            "                depth += 1; levels_append(i); level_end = n",
            f"            if not i & {TICK_STATES - 1}:",
            "                status = tick(i, n, depth)",
            "                if status is not None: break",
            "            s = states[i]"]
    src += _hoist_lines(w, " " * 12)
    src += lines
    src += ["            i += 1",
            "    except _Full:",
            "        status = 'states'",
            "    except EvalError as err:",
            "        status = err",
            "    ctx.head = i; ctx.transitions = trans; ctx.cur_depth = depth; ctx.level_end = level_end"]
    src += [f"    ctx.watch[{k}] = w{k}" for k in range(len(watches))]
    src += [f"    ctx.fired[{a}] = F{a}" for a in sorted(tracked)]
    src.append("    return status")
    src += _finish_source(lay, watched)
    source = "\n".join(src) + "\n"
    ns = _exec(source, f"search {model.name}", {"_Full": Full, "_canon": canon})
    return SearchCode(ns["run"], ns["finish"], labels, source)


def _finish_source(lay: Layout, watched: list[Expr]) -> list[str]:
    """`finish(ctx)`: the watched predicates on the states the loop stored but did not expand, in
    order, each still unseen one up to the first state where it holds or raises (as the loop does)."""
    w, lines = _two_pass(lay, lambda w: watch_lines(w, watched, " " * 8))
    src = ["", "def finish(ctx):", "    states = ctx.packed; _werr = ctx.watch_errors"]
    src += [f"    w{k} = ctx.watch[{k}]" for k in range(len(watched))]
    if watched:
        src += ["    for i in range(ctx.head, len(states)):",
                f"        if {' and '.join(f'w{k} is not None' for k in range(len(watched)))}: break",
                "        s = states[i]"]
        src += _hoist_lines(w, " " * 8) + lines
    src += [f"    ctx.watch[{k}] = w{k}" for k in range(len(watched))]
    return src


def watch_lines(w: Writer, watched: Sequence[Expr], pad: str) -> list[str]:
    """Each watched predicate `k` on state `s` (index `i`), while `w<k>` is None: `w<k> = i` where it
    holds, -1 and the error in `_werr[k]` where it raises. The predicates that are false, without
    raising, wherever one slot holds another value than theirs (`only_where`) are tested under one
    test of that slot per value, where two or more share the slot."""
    where = [only_where(w.lay, e) for e in watched]
    common = Counter(at[0] for at in where if at is not None).most_common(1)
    slot = common[0][0] if common and common[0][1] >= 2 else None
    lines: list[str] = []
    groups: dict[int, list[int]] = {}
    for k, (e, at) in enumerate(zip(watched, where)):
        if at is not None and at[0] == slot:
            groups.setdefault(at[1], []).append(k)
        else:
            lines += _watch_block(w, k, e, pad)
    for n, (value, ks) in enumerate(groups.items()):     # chains of CHAIN values: one matches at most
        assert slot is not None, "a group's predicates share the slot"
        lines.append(f"{pad}{'elif' if n % CHAIN else 'if'} {w.static(slot)} == {value}:")
        lines += [line for k in ks for line in _watch_block(w, k, watched[k], pad + "    ")]
    return lines


def _watch_block(w: Writer, k: int, e: Expr, pad: str) -> list[str]:
    return [f"{pad}if w{k} is None:",
            f"{pad}    try:",
            f"{pad}        if {w.expr(e, {})}: w{k} = i",
            f"{pad}    except EvalError as err:",
            f"{pad}        w{k} = -1; _werr[{k}] = (i, str(err))"]


def only_where(lay: Layout, e: Expr) -> tuple[int, int] | None:
    """(slot, value) such that `e`, as generated, is false without raising in every state where the
    slot holds another value; None where no such slot is found. Only the operands of and/or/->
    that are evaluated before it are looked at, and only where none of them may raise."""
    return _where(lay, e, False)


def _where(lay: Layout, e: Expr, negated: bool) -> tuple[int, int] | None:
    """`only_where` (`negated` False), or (slot, value) such that `e` is true without raising in
    every state where the slot holds another value (`negated` True)."""
    if not isinstance(e, App):
        return None
    op, args = e.op, e.args
    if op is Op.NOT:
        return _where(lay, args[0], not negated)
    if op is (Op.NE if negated else Op.EQ):
        x, y = args if isinstance(args[1], Const) else (args[1], args[0])
        k = static_slot(lay, x)
        return (k, y.value) if k is not None and isinstance(y, Const) else None
    if op is Op.IMPLIES and negated:            # `a -> b`: true where `a` is false, `b` not evaluated
        return _where(lay, args[0], False)
    if op is (Op.OR if negated else Op.AND):    # the first operand that decides, after operands that cannot raise
        for a in args:
            at = _where(lay, a, negated)
            if at is not None:
                return at
            if may_raise(a, {}, lay):
                return None
    return None


# ---------------------------------------------------------------- single states

@dataclass(frozen=True)
class Expander:
    """`expand(s)`: firings of packed state `s` (action index, choice, successor int or None,
    raw gap (slot name, value, lo, hi) or None); `is_final(s)`. `expand(s, out)` appends them to
    the list `out`, which keeps the firings before a model error."""

    expand: Callable[..., list]      # (s) or (s, out)
    is_final: Callable[[int], bool]
    source: str


def compile_expander(lay: Layout) -> Expander:
    code = _code_of(lay)
    if code.expander is None:
        code.expander = _compile_expander(lay)
    return code.expander


def generated_expander(lay: Layout) -> Expander | None:
    """The layout's expander if it has been generated already, else None (generating it is not free)."""
    return _code_of(lay).expander


def _compile_expander(lay: Layout) -> Expander:
    model = lay.model
    labels = Labels()
    end = simplify(model.end, lay)
    sink = Sink(lambda pad, a, label, choice, t: [f"{pad}out_append(({a}, {choice}, {t}, None))"],
                lambda pad, a, label, choice: [f"{pad}out_append(({a}, {choice}, None, None))"],
                lambda pad, a, label, choice, slot, value, lo, hi:
                [f"{pad}out_append(({a}, {choice}, None, (_names[{slot}], int({value}), {lo}, {hi})))"])

    def body(w: Writer) -> list[str]:
        lines = [f"    if {w.expr(end, {})}:", "        return out"]
        w.known = frozenset({App(Op.NOT, (end,))})      # the actions fire where the end does not hold
        return lines + all_action_lines(w, _playable(model), "    ", sink, labels)

    w, lines = _two_pass(lay, body)
    src = ["def expand(s, out=None):", "    if out is None: out = []",
           "    out_append = out.append"] + _hoist_lines(w, "    ") + lines
    src += ["    return out", "", "def is_final(s):",
            f"    return bool({Writer(lay, packing_of(lay)).expr(end, {})})"]
    source = "\n".join(src) + "\n"
    ns = _exec(source, f"expand {model.name}", {"_names": packing_of(lay).names, "_lab": labels})
    return Expander(ns["expand"], ns["is_final"], source)


def packed_predicate(lay: Layout, e: Expr) -> Callable[[int], bool]:
    """`e` as a function of a packed state."""
    w = Writer(lay, packing_of(lay))
    source = f"def pred(s):\n    return bool({w.expr(simplify(e, lay), {})})\n"
    return _exec(source, "predicate", {})["pred"]


# ---------------------------------------------------------------- tuple interface

@dataclass(frozen=True)
class Compiled:
    """Firings and finality over state tuples (the layout of `semantics`)."""

    expand: Callable[[tuple], list]
    is_final: Callable[[tuple], bool]
    source: str


def compile_model(lay: Layout) -> Compiled:
    """`expand(state)` -> [(action index, choice, successor tuple or None, raw gap or None)], in
    the order of `semantics.transitions`; `is_final(state)`."""
    ex = compile_expander(lay)
    p = packing_of(lay)
    pack, unpack, expand, final = p.pack, p.unpack, ex.expand, ex.is_final

    def expand_tuple(state: tuple) -> list:
        return [(a, c, None if t is None else unpack(t), g) for a, c, t, g in expand(pack(state))]

    def is_final(state: tuple) -> bool:
        return final(pack(state))

    return Compiled(expand_tuple, is_final, ex.source)


def compile_predicate(lay: Layout, e: Expr) -> Callable[[tuple], bool]:
    """A state predicate over state tuples."""
    w = Writer(lay, packing_of(lay), mode="tuple")
    source = f"def pred(s):\n    return bool({w.expr(simplify(e, lay), {})})\n"
    return _exec(source, "predicate", {})["pred"]
