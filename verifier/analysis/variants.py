"""variant-difference: where two readings of the rules lead to different outcomes.

1. Claims: every claim that one reading shows to hold (PROVED or HOLDS) and
   another violates (VIOLATED) is one finding, subject the claim id, variant
   None (it concerns every reading). Bounded (HOLDS_TO_DEPTH) and UNKNOWN
   verdicts decide nothing and are not compared. The verdict of each reading
   is in the evidence; each reading's own counterexample or witness is on its
   claim result, and the trace of the first reading is attached when it has one.
2. Behaviours: each reading is compared with the first one (the reference)
   on the states both can name: a state is projected on the variables both
   readings declare (by slot name, display values). For readings A and B,
   the shallowest state A reaches whose projection B never reaches (B's
   exploration complete) is a finding of variant A, subject ``A|B``, with
   the shortest trace in A. The state before its last step is one both
   readings reach (BFS order), so the last step is the move that only A
   allows. Both directions are checked against the reference.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING

from verifier.analysis.context import Context
from verifier.result import CheckResult, Finding, Verdict
from verifier.trace import Trace

if TYPE_CHECKING:      # numpy is loaded only where states are compared masked (`analysis.masked`)
    from verifier.analysis.masked import MaskedStates

KIND = "variant-difference"
HOLDS = (Verdict.PROVED, Verdict.HOLDS)


def claim_findings(ctxs: Sequence[Context], results: Sequence[Sequence[CheckResult]]) -> list[Finding]:
    if len(ctxs) < 2:
        return []
    by_claim: dict[str, dict[str | None, CheckResult]] = {}
    for ctx, rs in zip(ctxs, results):
        for r in rs:
            by_claim.setdefault(r.property.id, {})[ctx.variant] = r
    ref = ctxs[0]
    out = []
    for cid, per in by_claim.items():
        holds = [v for v, r in per.items() if r.verdict in HOLDS]
        broken = [v for v, r in per.items() if r.verdict is Verdict.VIOLATED]
        if not holds or not broken:
            continue
        first = next(iter(per.values())).property
        kind_words = "is reachable" if first.kind == "reachable" else "holds"
        not_words = "is not" if first.kind == "reachable" else "does not"
        said = (first.statement or cid).strip().rstrip(".")
        message = (f"Whether \"{said}\" {kind_words} depends on how the rules are read"
                   + (f" ({first.rule})" if first.rule else "")
                   + f": it {kind_words} under {_names(holds)} but {not_words} under {_names(broken)}.")
        traces: tuple[Trace, ...] = ()
        mine = per.get(ref.variant)
        if mine is not None and mine.trace is not None:
            traces = (mine.trace,)
        evidence = {"verdicts": {str(v): r.verdict.value for v, r in per.items()},
                    "traces_in": [str(v) for v, r in per.items() if r.trace is not None]}
        if traces and mine is not None and not ref.model.instantiate().is_concrete:
            evidence["trace_at"] = dict(mine.params)      # the values a free parameter takes in the trace
        rules = tuple(dict.fromkeys(([first.rule] if first.rule else []) + _variant_rules(ctxs, holds + broken)))
        out.append(Finding(KIND, cid, message, rules=rules, traces=traces, evidence=evidence,
                           engine=", ".join(sorted({r.engine for r in per.values()})),
                           scope=ref.scope_concrete() if ref.explicit else "per the claims' verdicts",
                           variant=None, span=first.span))
    return out


def behaviour_findings(ctxs: Sequence[Context]) -> list[Finding]:
    if len(ctxs) < 2:
        return []
    ref = ctxs[0]
    masks = _Masks(ref)
    out = []
    for other in ctxs[1:]:
        back = _first_difference(ref, other, ref, masks)     # first: the other way merges with the states it masks
        there = _first_difference(other, ref, ref, masks)
        out += [f for f in (there, back) if f is not None]
        masks.done(other)
    return out


@dataclass
class _Masks:
    """The readings' states masked (`MaskedStates`), kept while they are compared: the reference's
    (one mask at a time: readings that declare the same variables share it) and the other reading's."""

    ref: Context
    kept: dict[tuple[int, int], MaskedStates] = field(default_factory=dict)    # (id of the context, mask) ->

    def of(self, ctx: Context, mask: int) -> MaskedStates:
        from verifier.analysis.masked import MaskedStates

        key = (id(ctx), mask)
        if key not in self.kept:
            if ctx is self.ref:
                self.done(ctx)
            self.kept[key] = MaskedStates(ctx.space, mask)
        return self.kept[key]

    def at_hand(self, ctx: Context, mask: int) -> MaskedStates | None:
        """`ctx`'s states masked, where they are kept."""
        return self.kept.get((id(ctx), mask))

    def done(self, ctx: Context) -> None:
        """`ctx`'s masked states dropped."""
        for key in [key for key in self.kept if key[0] == id(ctx)]:
            del self.kept[key]


def _shared(a: Context, b: Context) -> list[str]:
    names_b = {s.name for s in b.layout.slots}
    return [s.name for s in a.layout.slots if s.name in names_b]


def _projectors(a: Context, b: Context, names: list[str]):
    """Projections of a's and b's states on the shared slots: raw values where the two readings
    give the variable the same type, display values (enum names, true/false) where they differ."""
    def picks(ctx: Context):
        pos = {s.name: k for k, s in enumerate(ctx.layout.slots)}
        return [(pos[n], ctx.layout.slots[pos[n]]) for n in names]

    pa, pb = picks(a), picks(b)
    same = [a.layout.variables[sa.var].type == b.layout.variables[sb.var].type for (_k, sa), (_j, sb) in zip(pa, pb)]

    def make(ctx: Context, chosen):
        if all(same):
            keys = [k for k, _slot in chosen]
            if len(keys) == 1:
                return lambda state: (state[keys[0]],)
            getter = itemgetter(*keys)
            return getter
        lay = ctx.layout
        plan = [(k, None if eq else slot) for (k, slot), eq in zip(chosen, same)]
        return lambda state: tuple(state[k] if slot is None else lay.display(slot, state[k]) for k, slot in plan)

    return make(a, pa), make(b, pb)


def _shared_fields(a: Context, b: Context, names: list[str]) -> list[tuple[int, int]] | None:
    """(shift, width) of each shared slot when every one has the same type and sits at the same
    bits in both readings' packings (the usual case: readings that differ in rules, not in
    variables), so that projecting is masking a packed state; else None."""
    ka = {s.name: k for k, s in enumerate(a.layout.slots)}
    kb = {s.name: k for k, s in enumerate(b.layout.slots)}
    pa, pb = a.space.packing, b.space.packing
    out = []
    for n in names:
        k, j = ka[n], kb[n]
        if a.layout.variables[a.layout.slots[k].var].type != b.layout.variables[b.layout.slots[j].var].type:
            return None
        if (pa.shifts[k], pa.widths[k], pa.los[k]) != (pb.shifts[j], pb.widths[j], pb.los[j]):
            return None
        if pa.widths[k]:
            out.append((pa.shifts[k], pa.widths[k]))
    return out


def _shown(ctx: Context, names: list[str], projected: tuple) -> dict:
    """A projection in display form (for messages)."""
    pos = {s.name: s for s in ctx.layout.slots}
    out = {}
    for n, v in zip(names, projected):
        slot = pos[n]
        out[n] = v if isinstance(v, str) else ctx.layout.display(slot, v) if isinstance(v, int) else v
    return out


def _first_difference(a: Context, b: Context, ref: Context, masks: _Masks) -> Finding | None:
    """The shallowest state of `a` whose projection `b` never reaches (`masks`: the readings' states masked)."""
    if a.space is None or b.space is None or not b.complete:
        return None
    names = _shared(a, b)
    if not names:
        return None
    found = _unmatched(a, b, names, masks)
    if found is None:
        return None
    i, target, near, diff = found
    state = a.space.states[i]
    trace = a.trace_to(i)
    if not trace.steps:
        what = "starts play in a position"
        last_rule: tuple[str, ...] = ()
        changed = ", ".join(f"{trace.names.slot(k)} = {_w(trace.names.value(k, v))}" for k, v in trace.initial
                            if k in names)
    else:
        step = trace.steps[-1]
        what = f"lets '{step.label}'" + (f" ({step.rule.split(':')[0]})" if step.rule else "") \
            + " lead from a position both readings reach to one"
        last_rule = (step.rule,) if step.rule else ()
        moved = [f"{trace.names.slot(k)} = {_w(trace.names.value(k, new))}" for k, (_old, new) in step.changes
                 if k in names]
        changed = ", ".join(moved[:4]) + (", ..." if len(moved) > 4 else "") \
            or "a different combination of values"
    here, there = _shown(a, names, target), _shown(b, names, near)
    if diff:
        contrast = "; the closest position it reaches differs in " + ", ".join(
            f"{trace.names.slot(k)} ({_w(trace.names.value(k, here[k]))} here, "
            f"{_w(trace.names.value(k, there[k]))} there)" for k in diff[:4])
    else:
        contrast = ""
    message = (f"The reading '{a.variant}' {what} that the reading '{b.variant}' never allows "
               f"({changed}){contrast}.")
    reading = b.variant if a is ref else a.variant      # the reading compared with the reference
    rules = tuple(dict.fromkeys(_variant_rules([ref], [reading]) + list(last_rule)))
    decl = {v.name: v for v in a.model.variants}.get(a.variant or "")
    return Finding(KIND, f"{a.variant}|{b.variant}", message, rules=rules, traces=(trace,),
                   evidence={"allowed_by": a.variant, "never_in": b.variant, "differs_in": diff,
                             "state": {k: v for k, v in a.show(state).items() if k in names},
                             "compared_variables": len(names),
                             "states": {str(a.variant): len(a.space.states), str(b.variant): len(b.space.states)}},
                   engine="explicit", scope=a.scope_concrete() + "; exhaustive search of the other reading",
                   variant=a.variant, span=decl.span if decl is not None else a.model.span)


def _unmatched(a: Context, b: Context, names: list[str], masks: _Masks):
    """(index of the shallowest state of `a` whose projection `b` never reaches, that projection,
    the closest projection `b` reaches, the names where they differ), or None. Where the shared
    variables sit at the same bits in both packings, `b`'s states masked to them (`masks`), and
    `a`'s where kept."""
    pa, pb = _projectors(a, b, names)
    limit = len(a.space.states) if a.space.error is None else a.space.error[0]
    fields = _shared_fields(a, b, names)
    if fields is not None:      # same bits in both packings: compare packed states, masked
        mask = sum(((1 << w) - 1) << sh for sh, w in fields)
        theirs = masks.of(b, mask)
        i = theirs.first_outside(a.space, limit, masks.at_hand(a, mask))
        if i is None:
            return None
        target = pa(a.space.states[i])
        near = pb(b.space.packing.unpack(theirs.nearest(a.space.packed[i] & mask, fields)))
        return i, target, near, [n for n, x, y in zip(names, near, target) if x != y]
    seen_projected = {pb(s) for s in b.space.states}
    i = next((i for i in range(limit) if pa(a.space.states[i]) not in seen_projected), None)
    if i is None:
        return None
    target = pa(a.space.states[i])
    return (i, target, *_nearest(target, b.space.states, pb, names))


def _variant_rules(ctxs: Sequence[Context], names: Sequence[str | None]) -> list[str]:
    out = []
    decls = {v.name: v for v in ctxs[0].model.variants}
    for n in names:
        d = decls.get(n) if n is not None else None
        if d is not None and d.rule is not None and str(d.rule) not in out:
            out.append(str(d.rule))
    return out


def _names(variants: Sequence[str | None]) -> str:
    quoted = [f"'{v}'" for v in variants]
    if len(quoted) == 1:
        return "the reading " + quoted[0]
    return "the readings " + ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _w(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _nearest(target: tuple, states, project, names: list[str]) -> tuple[tuple, list[str]]:
    """The projected state of `states` closest to `target` (fewest differing slots) and those slots."""
    best, best_n = None, len(target) + 1
    for s in states:
        p = project(s)
        n = sum(1 for x, y in zip(p, target) if x != y)
        if n < best_n:
            best, best_n = p, n
            if n == 1:
                break
    if best is None:
        return target, []
    return best, [names[k] for k, (x, y) in enumerate(zip(best, target)) if x != y]
