"""The firings of one action as generated source over packed states.

For constant choice domains with at most UNROLL_CHOICES combinations each
combination gets its own block with the choice values substituted and folded
(constant indices become constant shifts); otherwise the choices are loops whose
ranges are all evaluated first, as in `semantics.choice_values`. Each block is
the guard, then every effect in order (index, value, overflow policy: clamp in
place, forbid or gap skips the firing), then the successor, handed to a `Sink`
that says what the caller does with it (the search loop inserts it, `expand`
lists it).

What a firing's source is made from (an action specialised to its choice values, its effects
with the guard's facts folded in) depends on the model and the action only; it is kept per model
(`_prepared`) while the model lives, so that the passes that count slot reads, every search and
`expand` of one model, and the compiled store's module text prepare each action once.
"""
from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from verifier.engines.codegen import Interval, Writer, interval, may_raise, scaled, shifted_left, simplify
from verifier.ir.expr import App, Const, Expr, Index, Op, Var, free_locals, map_expr, substitute
from verifier.ir.model import Action, Assign, IntType, Overflow, type_bounds
from verifier.semantics import Layout

UNROLL_CHOICES = 64  # actions with at most this many constant choice combinations get one block each
SUM_TERMS = 64       # the most terms of one generated sum
CHAIN = 16           # the most branches of one generated `if`/`elif` chain (Python nests each `elif` in the last)


@dataclass(frozen=True)
class Sink:
    """What the generated code does with a firing. Each returns source lines at `pad`.

    `target(pad, a, label, choice, t)`: a successor `t` (a local name);
    `blocked(pad, a, label, choice)`: forbidden by an overflow policy;
    `gap(pad, a, label, choice, slot, value, lo, hi)`: a gap (slot: code of the slot index).
    `label` is the source of the label id (int) and `choice` of the choice tuple.
    """

    target: Callable[..., list[str]]
    blocked: Callable[..., list[str]]
    gap: Callable[..., list[str]]


class Labels:
    """(action index, choice tuple) <-> small int; static ones are numbered at compile time."""

    def __init__(self):
        self.items: list[tuple[int, tuple]] = []
        self.ids: dict[tuple[int, tuple], int] = {}

    def __call__(self, action: int, choice: tuple) -> int:
        key = (action, choice)
        i = self.ids.get(key)
        if i is None:
            i = self.ids[key] = len(self.items)
            self.items.append(key)
        return i


def constant_choices(action: Action) -> list[dict[str, int]] | None:
    """Every choice combination, when the domains are constant and few."""
    ranges = []
    for c in action.choices:
        if isinstance(c.type, IntType):
            if not (isinstance(c.type.lo, Const) and isinstance(c.type.hi, Const)):
                return None
            ranges.append(range(c.type.lo.value, c.type.hi.value + 1))
        else:
            lo, hi = type_bounds(c.type)
            ranges.append(range(lo, hi + 1))
    combos = list(itertools.product(*ranges))
    if len(combos) > UNROLL_CHOICES:
        return None
    return [dict(zip((c.name for c in action.choices), combo)) for combo in combos]


_memos: dict[int, dict] = {}        # id(model) -> what its actions' firings are made from; dropped with the model


def _prepared(lay: Layout) -> dict:
    """The memo of `lay`'s model: (kind, id(action), key) -> (action, value). The action is kept in
    the value, so that its id is not reused while the entry lives."""
    memo = _memos.get(id(lay.model))
    if memo is None:
        memo = _memos[id(lay.model)] = {}
        weakref.finalize(lay.model, _memos.pop, id(lay.model), None)
    return memo


def _remembered(lay: Layout, kind: str, of: object, key: tuple, make: Callable[[], object]):
    """`make()`, kept in `lay`'s model's memo under (kind, the object `of`, key)."""
    memo = _prepared(lay)
    entry = memo.get((kind, id(of), key))
    if entry is None or entry[0] is not of:
        entry = memo[kind, id(of), key] = (of, make())
    return entry[1]


def specialised(action: Action, values: dict[str, int], lay: Layout) -> Action:
    """`specialise(action, values, lay)`, made once per model and action."""
    return _remembered(lay, "specialise", action, tuple(values.items()),
                       lambda: specialise(action, values, lay))


def specialise(action: Action, values: dict[str, int], lay: Layout | None = None) -> Action:
    """The action with its choices fixed: guard and effects simplified, indices made constant."""
    consts: dict[str, Expr] = {k: Const(v) for k, v in values.items()}

    def f(e: Expr) -> Expr:
        if lay is not None and not _remembered(lay, "free", e, (), lambda: free_locals(e)) & consts.keys():
            return _remembered(lay, "simplify", e, (), lambda: simplify(e, lay))   # reads no choice: one for all
        return simplify(substitute(e, consts), lay)

    effects = tuple(Assign(Index(e.target.name, f(e.target.index)) if isinstance(e.target, Index) else e.target,
                           f(e.value)) for e in action.effects)
    return Action(action.name, f(action.guard), effects, (), action.modality)


def all_action_lines(w: Writer, actions: list[tuple[int, Action]], pad: str, sink: Sink,
                     labels: Labels) -> list[str]:
    """The firings of `actions` (index in the model, action), in their order. Where every guard opens
    with `slot == c` on one slot (the phase, once the phase sugar is desugared), the actions are
    grouped under one test of the slot per value: a state's firings keep their order (one group
    at most can fire there) and the guards of the other groups are not evaluated (a guard's
    opening test cannot raise, and `and` stops at it)."""
    slot, values = _dispatch(w.lay, [action for _a, action in actions])
    if slot is None:
        return [line for a, action in actions for line in action_lines(w, a, action, pad, sink, labels)]
    groups: dict[int, list[tuple[int, Action]]] = {}
    for (a, action), value in zip(actions, values):
        groups.setdefault(value, []).append((a, action))
    lines: list[str] = []
    for n, (value, group) in enumerate(groups.items()):     # chains of CHAIN values: one matches at most
        lines.append(f"{pad}{'elif' if n % CHAIN else 'if'} {w.static(slot)} == {value}:")
        if not w.counting:          # a group counts its reads in writers of its own
            lines += _group_lines(w, group, pad + "    ", sink, labels) or [f"{pad}    pass"]
    return lines


def _group_lines(w: Writer, group: list[tuple[int, Action]], pad: str, sink: Sink, labels: Labels) -> list[str]:
    """One value's actions, the slots they read twice or more (and the caller did not hoist) read
    into locals at their start: a state decodes only what its own phase reads."""
    known = w.known | {_opening(action.guard) for _a, action in group}   # `slot == value`: true here

    def body(gw: Writer) -> list[str]:
        gw.known = known
        return [line for a, action in group for line in action_lines(gw, a, action, pad, sink, labels)]

    probe = w.within(w.hoisted)
    body(probe)
    extra = frozenset(k for k, c in probe.reads.items() if c >= 2) - w.hoisted
    lines = body(w.within(w.hoisted | extra))
    plain = w.within(frozenset())
    return [f"{pad}v{k} = {plain.static(k)}" for k in sorted(extra)] + lines if lines else []


def _opening(guard: Expr) -> Expr:
    """A guard's first conjunct (the guard where it is not a conjunction)."""
    return guard.args[0] if isinstance(guard, App) and guard.op is Op.AND else guard


def _unknown(guard: Expr, known: frozenset[Expr]) -> Expr | None:
    """What of `guard` is still to be tested where every expression in `known` holds: its conjuncts
    not in `known` (None where it holds; the others' order and errors are as in the guard)."""
    if guard in known:
        return None
    if not (isinstance(guard, App) and guard.op is Op.AND) or not known:
        return guard
    rest = tuple(c for c in guard.args if c not in known)
    return None if not rest else rest[0] if len(rest) == 1 else App(Op.AND, rest)


def _dispatch(lay: Layout, actions: list[Action]) -> tuple[int | None, list[int]]:
    """The slot every guard's first conjunct fixes (`slot == c`), and each guard's value; (None, [])
    when there is none."""
    slot: int | None = None
    values: list[int] = []
    for action in actions:
        if range_may_raise(lay, action):       # evaluated before the guard, in every state
            return None, []
        first = _opening(action.guard)
        if not (isinstance(first, App) and first.op is Op.EQ):
            return None, []
        x, y = first.args
        if isinstance(x, Const):
            x, y = y, x
        k = static_slot(lay, x)
        if not isinstance(y, Const) or k is None or slot not in (None, k):
            return None, []
        slot = k
        values.append(y.value)
    return (slot, values) if len(set(values)) > 1 else (None, [])


def range_may_raise(lay: Layout, action: Action) -> bool:
    """Whether evaluating one of the action's choice ranges might raise a model error."""
    return any(isinstance(c.type, IntType) and (may_raise(c.type.lo, {}, lay) or may_raise(c.type.hi, {}, lay))
               for c in action.choices)


def action_lines(w: Writer, a: int, action: Action, pad: str, sink: Sink, labels: Labels) -> list[str]:
    """All firings of action `a` (index in the model), in choice order; none where its guard is
    false, but its choice ranges evaluated where that might raise (`semantics.choice_values`
    evaluates them in every state, before the guard)."""
    if action.choices:
        combos = constant_choices(action)
        if combos is not None:
            lines: list[str] = []
            for values in combos:
                choice = tuple(values.items())
                lines += _firing(w, a, specialised(action, values, w.lay), pad, sink, str(labels(a, choice)),
                                 repr(choice), {})
            return lines
    lines = []
    env: dict[str, tuple[str, Interval]] = {}
    ranges = []
    for c in action.choices:        # every range first, as `semantics.choice_values`
        name = w.fresh("c")
        if isinstance(c.type, IntType):
            lo, hi = simplify(c.type.lo, w.lay), simplify(c.type.hi, w.lay)
            ilo, ihi = interval(w.lay, lo, {}), interval(w.lay, hi, {})
            lines.append(f"{pad}r{name} = range({w.expr(lo, {})}, {w.expr(hi, {})} + 1)")
            iv = (ilo[0], ihi[1]) if ilo and ihi else None
        else:
            lo_v, hi_v = type_bounds(c.type)
            lines.append(f"{pad}r{name} = range({lo_v}, {hi_v + 1})")
            iv = (lo_v, hi_v)
        ranges.append((c.name, name))
        env[c.name] = (name, iv)
    inner = pad + "    "       # one loop over every combination, in the order of nested loops
    loop = []
    if len(ranges) == 1:
        loop.append(f"{pad}for {ranges[0][1]} in r{ranges[0][1]}:")
    elif ranges:
        loop.append(f"{pad}for {', '.join(n for _, n in ranges)} in _product({', '.join(f'r{n}' for _, n in ranges)}):")
    else:
        inner = pad
    choice_code = "(" + "".join(f"({cname!r}, {name}), " for cname, name in ranges) + ")"
    label = f"_lab({a}, {choice_code})" if ranges else str(labels(a, ()))   # without choices: numbered now
    plain = specialised(action, {}, w.lay)
    body = _firing(w, a, plain, inner, sink, label, choice_code, env)
    if body:
        return lines + loop + body
    return lines if range_may_raise(w.lay, action) else []


def _firing(w: Writer, a: int, action: Action, pad: str, sink: Sink, label: str, choice: str,
            env: dict[str, tuple[str, Interval]]) -> list[str]:
    """The guard, then each effect in order (index, value, range policy), then the successor.

    The code is flat whatever the number of effects: the range checks of effects whose code cannot
    raise are one `if`/`elif` chain in front of the successor (a value that cannot raise may be
    computed before an earlier check fails); where an effect's code may raise after a check, or
    after CHAIN checks, the checks so far end in a flag and the rest of the firing runs under
    `if flag:`, one level deep."""
    lay = w.lay
    guard = action.guard
    lines: list[str] = []
    if isinstance(guard, Const):
        if not guard.value:
            return []
    elif (test := _unknown(guard, w.known)) is not None:
        lines.append(f"{pad}if {w.expr(test, env)}:")
        pad += "    "
    base = pad
    pending: list[tuple[str, list[str]]] = []     # (failing condition, what the sink does then), unresolved
    flag = ""

    def resolve() -> str:
        """The pending checks as a chain setting the flag where all pass; the pad to go on at."""
        nonlocal flag
        flag = flag or w.fresh("ok")
        lines.append(f"{pad}{flag} = False")
        lines.extend(_chain(pad, pending, [f"{pad}    {flag} = True"]))
        pending.clear()
        lines.append(f"{base}if {flag}:")
        return base + "    "

    bound = {k: v[1] for k, v in env.items()}
    facts, effects = _remembered(lay, "effects", action, (), lambda: _given_effects(lay, action))
    writes: list[tuple[str, int | None, str | None, int, int]] = []   # (value code, slot, index local, first, ilo)
    ranges = _remembered(lay, "ranges", action, tuple(bound.items()), lambda: _effect_ranges(lay, effects, bound))
    for eff, (viv, iiv, index_raises, value_raises) in zip(effects, ranges):
        var = lay.variables[eff.target.name]
        first, ilo, size = lay.offsets[var.name]
        lo, hi = lay.slots[first].lo, lay.slots[first].hi
        if pending and (index_raises or value_raises or len(pending) == CHAIN):
            pad = resolve()
        static: int | None = None
        idx: str | None = None
        if isinstance(eff.target, Var):
            static = first
        elif isinstance(eff.target.index, Const):
            value = eff.target.index.value
            if not ilo <= value < ilo + size:
                lines.append(f"{pad}_bad_index({lay.error_name(var.name)!r}, {value})")
                return lines
            static = first + value - ilo
        else:
            idx = w.fresh("p")
            lines.append(f"{pad}{idx} = {w.expr(eff.target.index, env)}")
            if iiv is None or iiv[0] < ilo or iiv[1] >= ilo + size:
                lines.append(f"{pad}if not {ilo} <= {idx} < {ilo + size}: _bad_index({lay.error_name(var.name)!r}, {idx})")
        check = viv is None or viv[0] < lo or viv[1] > hi
        code = w.expr(eff.value, env)
        if check or value_raises:
            temp = w.fresh("n")
            lines.append(f"{pad}{temp} = {code}")
            code = temp
        if check:
            slot_code = str(static) if idx is None else f"({idx} + {first - ilo})"
            if var.overflow is Overflow.CLAMP:
                if viv is None or viv[0] < lo:
                    lines.append(f"{pad}if {code} < {lo}: {code} = {lo}")
                if viv is None or viv[1] > hi:
                    lines.append(f"{pad}if {code} > {hi}: {code} = {hi}")
            else:
                fail = sink.blocked(pad + "    ", a, label, choice) if var.overflow is Overflow.FORBID else \
                    sink.gap(pad + "    ", a, label, choice, slot_code, code, lo, hi)
                pending.append((f"not {lo} <= {code} <= {hi}", fail))
        writes.append((code, static, idx, first, ilo))
    if pending:
        tail: list[str] = []
        tail.append(f"{pad}    t = {_successor(w, writes, pad + '    ', tail, facts)}")
        tail += sink.target(pad + "    ", a, label, choice, "t")
        lines += _chain(pad, pending, tail)
    else:
        lines.append(f"{pad}t = {_successor(w, writes, pad, lines, facts)}")
        lines += sink.target(pad, a, label, choice, "t")
    return lines


def _given_effects(lay: Layout, action: Action) -> tuple[dict[int, int], tuple[Assign, ...]]:
    """The slot values `action`'s guard fixes (`guard_facts`) and its effects with them folded in
    (`_given`; a flag set to its own truth keeps its value)."""
    facts = guard_facts(lay, action.guard)
    given = _given(lay, facts)
    effects = []
    for effect in action.effects:
        target = effect.target if isinstance(effect.target, Var) else \
            Index(effect.target.name, given(effect.target.index), span=effect.target.span)
        new = given(effect.value)
        k = static_slot(lay, target)
        if new == App(Op.NE, (target, Const(0))) and k is not None and (lay.slots[k].lo, lay.slots[k].hi) == (0, 1):
            new = target
        effects.append(Assign(target, new))
    return facts, tuple(effects)


def _effect_ranges(lay: Layout, effects: tuple[Assign, ...], bound: dict[str, Interval]) -> list[tuple]:
    """Per effect, with the choices in `bound`: the value's static range, the index's, whether the
    index may raise or leave the array, whether the value may raise."""
    out = []
    for eff in effects:
        _first, ilo, size = lay.offsets[eff.target.name]
        iiv = None if isinstance(eff.target, Var) else interval(lay, eff.target.index, bound)
        index_raises = isinstance(eff.target, Index) and (
            may_raise(eff.target.index, bound, lay) or iiv is None or iiv[0] < ilo or iiv[1] >= ilo + size)
        out.append((interval(lay, eff.value, bound), iiv, index_raises, may_raise(eff.value, bound, lay)))
    return out


def _chain(pad: str, checks: list[tuple[str, list[str]]], otherwise: list[str]) -> list[str]:
    """`if c1: ... elif c2: ... else: otherwise` at `pad` (the branches' lines are at pad + 4)."""
    lines: list[str] = []
    for n, (condition, then) in enumerate(checks):
        lines.append(f"{pad}{'elif' if n else 'if'} {condition}:")
        lines += then
    return lines + [f"{pad}else:"] + otherwise


def guard_facts(lay: Layout, guard: Expr) -> dict[int, int]:
    """Slot values a guard fixes: conjuncts ``slot == c`` (and a boolean slot alone, or negated)."""
    facts: dict[int, int] = {}
    conjuncts = guard.args if isinstance(guard, App) and guard.op is Op.AND else (guard,)
    for c in conjuncts:
        if isinstance(c, App) and c.op is Op.NE and isinstance(c.args[1], Const) and c.args[1].value == 0:
            c = c.args[0]
        value = 1
        if isinstance(c, App) and c.op is Op.NOT:
            c, value = c.args[0], 0
        if isinstance(c, App) and c.op is Op.EQ:
            if not value:       # `not (x == c)` fixes nothing
                continue
            x, y = c.args
            if isinstance(x, Const):
                x, y = y, x
            slot = static_slot(lay, x)
            if isinstance(y, Const) and slot is not None:
                facts[slot] = y.value
            continue
        k = static_slot(lay, c)
        if k is not None and (lay.slots[k].lo, lay.slots[k].hi) == (0, 1):
            facts[k] = value
    return facts


def _given(lay: Layout, facts: dict[int, int]) -> Callable[[Expr], Expr]:
    """An effect's expression with the slots its guard fixes read as their values, folded (effects
    read the state before the firing, where the guard holds: monitors' updates mostly fold away)."""
    if not facts:
        return lambda e: e

    def read(node: Expr) -> Expr | None:
        k = static_slot(lay, node) if isinstance(node, (Var, Index)) else None
        return Const(facts[k]) if k is not None and k in facts else None

    return lambda e: simplify(map_expr(e, read), lay)


def static_slot(lay: Layout, e: Expr) -> int | None:
    """The slot `e` reads where it is a scalar or an element at a constant index in range, else None."""
    if isinstance(e, Var):
        return lay.offsets[e.name][0]
    if isinstance(e, Index) and isinstance(e.index, Const):
        first, ilo, size = lay.offsets[e.name]
        if ilo <= e.index.value < ilo + size:
            return first + e.index.value - ilo
    return None


def _is_literal(code: str) -> bool:
    return code.lstrip("-").isdigit()


def _sum(base: str, terms: list[str]) -> str:
    return base + "".join(f" - {t[1:]}" if t.startswith("-") else f" + {t}" for t in terms)


def _successor(w: Writer, writes: list, pad: str, lines: list[str], facts: dict[int, int]) -> str:
    """Source of the successor state (packed); may append preparatory lines.

    Without aliasing (no two writes can hit one slot) the successor is ``s`` plus
    ``(new - old) << shift`` per write, with the constant parts summed at compile
    time (a field set to a constant over an unknown value is cleared by one mask for
    all of them; a write of the field's own value is left out); otherwise the fields
    are overwritten one after the other (the last wins). Over a writer's separate words
    (`Writer.state_words`) each word is built so, and the successor is the tuple of them.
    """
    assert w.mode == "packed"
    p = w.p
    names = w.state_words()
    per_var: dict[int, list] = {}
    for x in writes:
        per_var.setdefault(x[3], []).append(x)
    aliasing = any(len(ws) > 1 and (any(x[1] is None for x in ws) or len({x[1] for x in ws}) < len(ws))
                   for ws in per_var.values())
    if not aliasing:
        terms: dict[str, list[str]] = {s: [] for s in names}
        delta = dict.fromkeys(names, 0)
        clear = dict.fromkeys(names, 0)     # the fields set to a constant over a value not known here: cleared at once
        for code, k, idx, first, ilo in writes:
            width, lo = p.widths[first], p.los[first]
            if not width:
                continue
            if k is not None:
                s, sh = w.word(k)
                old = facts.get(k)
                if _is_literal(code):
                    if old is None:
                        clear[s] |= ((1 << width) - 1) << sh
                        delta[s] += (int(code) - lo) << sh
                    else:
                        delta[s] += (int(code) - old) << sh
                    continue
                old_code = str(old) if old is not None else w.static(k)
                if code == old_code:
                    continue            # the field keeps its value
                terms[s].append(shifted_left(f"({code} - {old_code})", sh))
            else:
                s, shift = w.word(first)
                sh_name = w.fresh("sh")
                lines.append(f"{pad}{sh_name} = {scaled(width, idx)} + {shift - width * ilo}")
                old_code = f"(({s} >> {sh_name}) & {(1 << width) - 1})"
                terms[s].append(f"(({code} - {lo} - {old_code}) << {sh_name})" if lo else
                                f"(({code} - {old_code}) << {sh_name})")
        built = [_word_sum(w, s, terms[s], delta[s], clear[s], pad, lines) for s in names]
        return built[0] if len(names) == 1 else f"({', '.join(built)})"
    built = ["u" if len(names) == 1 else f"uw{j}" for j in range(len(names))]
    into = dict(zip(names, built))
    lines += [f"{pad}{u} = {s}" for s, u in into.items()]
    for code, k, idx, first, ilo in writes:
        width, lo = p.widths[first], p.los[first]
        if not width:
            continue
        mask = (1 << width) - 1
        stored = f"({code} - {lo})" if lo else code
        if k is not None:
            s, sh = w.word(k)
            lines.append(f"{pad}{into[s]} = ({into[s]} & {~(mask << sh)}) | {shifted_left(stored, sh)}")
        else:
            s, shift = w.word(first)
            sh_name = w.fresh("sh")
            lines.append(f"{pad}{sh_name} = {scaled(width, idx)} + {shift - width * ilo}")
            lines.append(f"{pad}{into[s]} = ({into[s]} & ~({mask} << {sh_name})) | ({stored} << {sh_name})")
    return built[0] if len(names) == 1 else f"({', '.join(built)})"


def _word_sum(w: Writer, s: str, terms: list[str], delta: int, clear: int, pad: str, lines: list[str]) -> str:
    """Source of word `s` of the successor: its fields in `clear` cleared, plus `delta` and the terms."""
    if delta:
        terms = [*terms, str(delta)]
    base = f"({s} & {~clear})" if clear else s
    if len(terms) > SUM_TERMS:      # a sum of thousands of terms nests too deep for Python's compiler
        total = w.fresh("u")
        lines.append(f"{pad}{total} = {base}")
        chunks = [terms[at:at + SUM_TERMS] for at in range(0, len(terms), SUM_TERMS)]
        lines += [f"{pad}{total} = {_sum(total, chunk)}" for chunk in chunks[:-1]]
        return _sum(total, chunks[-1])
    return _sum(base, terms)
