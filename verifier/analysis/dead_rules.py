"""dead-rule: a rule action that never fires, a phase or step never reached.

Explicit (every parameter fixed): reported only when the exploration is
complete, so "never" is exhaustive for these parameter values. An action counts
as firing when some reachable state has a transition of it that leads
somewhere; an action whose guard does hold but whose every firing is blocked
by a `forbid` policy is dead too, and its message says so. One blocked by a gap
(no policy) somewhere is left to the gap finding, which carries the trace. A phase is
dead when no reachable state is in it (for a phase with steps: in none of its
steps); the actions of a dead phase and the steps of a dead phase are not
reported again (they are listed in the phase's evidence).

Symbolic (a parameter left free): the symbolic engine is asked whether each
action can fire and each phase be entered; a proof of "never" (k-induction or
PDR) holds for every parameter value and is reported as such. Prohibitions
(`must-not`) never fire by design and are not rule actions that could be dead.
"""
from __future__ import annotations

from verifier.analysis.context import Context, Visitor, own_guard, slot_index
from verifier.ir.model import PHASE_VAR, Action, ActionKind, EnumType, Modality, Model, Overflow, Phase, in_phase
from verifier.ir.props import Reachable
from verifier.resources import Budget, StopKind
from verifier.result import Finding, Verdict
from verifier.trace import expr_words

KIND = "dead-rule"
SYMBOLIC_CLAIM_UNITS = 30_000_000    # Z3 resource units per dead-rule proof (about 15 s of one core) ...
SYMBOLIC_TOTAL_UNITS = 120_000_000   # ... and for all of one model's (about a minute)
SYMBOLIC_LEAST_UNITS = 2_000_000     # a proof started with fewer units left than this would decide next to nothing


class DeadRules(Visitor):
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.fired: set[int] = set()
        self.tried: set[int] = set()       # the guard held for some choice (maybe blocked)
        self.gapped: set[int] = set()      # some firing was blocked by a gap
        self.phases: set[int] = set()
        self.phase_slot = slot_index(ctx.layout, PHASE_VAR) if PHASE_VAR in ctx.layout.offsets else None
        self.proved: dict[str, str] = {}   # beyond the explored states: leaf phase or action -> method
        self._phase_field: tuple[int, int, int] | None = None
        model = ctx.instance
        self._playable = {i for i, a in enumerate(model.actions)
                          if a.kind is ActionKind.RULE and a.modality is not Modality.MUST_NOT}
        phase_type = model.var(PHASE_VAR).type if self.phase_slot is not None else None
        self._leaves = len(phase_type.values) if isinstance(phase_type, EnumType) else 0

    @property
    def done(self) -> bool:
        """Every rule action fired and every leaf phase was entered: nothing is dead."""
        return self._playable <= self.fired and len(self.phases) == self._leaves

    def visit(self, i, s, firings) -> None:
        tried, fired, gapped = self.tried, self.fired, self.gapped
        for a, _choice, target, gap in firings:
            tried.add(a)
            if target is not None:
                fired.add(a)
            elif gap is not None:
                gapped.add(a)
        if self.phase_slot is not None:
            shift, mask, lo = self._phase_field or self._field()
            self.phases.add(((s >> shift) & mask) + lo)

    def _field(self) -> tuple[int, int, int]:
        """Where the phase sits in a packed state: (shift, mask, lowest value)."""
        assert self.phase_slot is not None
        packing, k = self.ctx.space.packing, self.phase_slot
        self._phase_field = (packing.shifts[k], packing.mask(k), packing.los[k])
        return self._phase_field

    def findings(self) -> list[Finding]:
        ctx = self.ctx
        if not ctx.complete and not self.proved:
            return []          # "never" needs the whole state space, or a proof beyond it
        model = ctx.instance
        out: list[Finding] = []
        dead_phases: set[str] = set()
        if self.phase_slot is not None:
            enum = model.var(PHASE_VAR).type
            assert isinstance(enum, EnumType), "the phase variable is an enum of the leaf phases"
            if ctx.complete:
                seen = {enum.values[k] for k in self.phases}
            else:
                seen = set(enum.values) - set(self.proved)
            dead_phases = _dead_phases(model, seen)
            for phase in model.phases:
                if phase.name not in dead_phases or (phase.parent in dead_phases):
                    continue
                out.append(self._phase_finding(phase))
        for i, action in enumerate(model.actions):
            if action.kind is not ActionKind.RULE or action.modality is Modality.MUST_NOT or i in self.fired:
                continue
            if action.phase_names and set(action.phase_names) <= dead_phases:
                continue
            if i in self.gapped:
                continue       # blocked by a gap: the gap finding says why, with a trace
            if not ctx.complete and action.name not in self.proved:
                continue
            out.append(self._action_finding(i, action))
        return out

    def _action_finding(self, i: int, action: Action) -> Finding:
        ctx = self.ctx
        model = ctx.instance
        guard = expr_words(model, own_guard(action, model))
        if i in self.tried:
            policy = sorted({e.target.name for e in action.effects
                             if model.var(e.target.name).overflow is Overflow.FORBID})
            message = (f"The rules never actually let anyone take {ctx.action_words(action)} "
                       f"({ctx.section(action)}): whenever its condition holds, its effect would take "
                       f"{' or '.join(policy) or 'a variable'} out of range, which the policy there forbids.")
        elif ctx.complete:
            cond = f"its condition `{guard}` holds" if guard != "true" else "it is possible"
            message = (f"Nothing in the rules ever lets anyone take {ctx.action_words(action)} "
                       f"({ctx.section(action)}): {cond} in no state play can reach.")
        else:
            message = (f"Nothing in the rules ever lets anyone take {ctx.action_words(action)} "
                       f"({ctx.section(action)}): its condition `{guard}` never holds with a legal "
                       f"outcome in a reachable state.")
        engine, scope = self._how(action.name)
        return ctx.finding(KIND, action.name, message, rules=ctx.citations(action),
                           evidence={"states_explored": len(ctx.space.states), "condition": guard,
                                     "blocked_only": i in self.tried},
                           engine=engine, scope=scope, span=action.span)

    def _how(self, *names: str) -> tuple[str, str]:
        """(engine, scope) of a dead element: the whole search, or a proof beyond the explored states."""
        ctx = self.ctx
        if ctx.complete:
            return "explicit", ctx.scope_search()
        method = next((self.proved[n] for n in names if n in self.proved), "pdr")
        explored = ctx.beyond.explored if ctx.beyond is not None else len(ctx.space.states)
        return method, ctx.scope_concrete() + f"; proved by {method} beyond the {explored:,} explored states"

    def _phase_finding(self, phase: Phase) -> Finding:
        ctx = self.ctx
        steps = [p.name for p in ctx.instance.phases if _within(ctx.instance, p.name, phase.name) and p is not phase]
        actions = [a.name for a in ctx.instance.rule_actions()
                   if a.modality is not Modality.MUST_NOT and a.phase_names
                   and all(_within(ctx.instance, p, phase.name) for p in a.phase_names)]
        what = "step" if phase.parent else "phase"
        section = phase.rule.section if phase.rule else "the turn structure"
        message = (f"Play never reaches the {phase.name} {what} ({section}): no sequence of legal moves "
                   f"leads into it, so the rules written for it never apply.")
        evidence: dict[str, object] = {"states_explored": len(ctx.space.states)}
        if steps:
            evidence["steps"] = steps
        if actions:
            evidence["actions"] = actions
        leaves = [p.name for p in ctx.instance.leaf_phases() if _within(ctx.instance, p.name, phase.name)]
        engine, scope = self._how(*leaves)
        return ctx.finding(KIND, phase.name, message, rules=ctx.phase_citation(phase), evidence=evidence,
                           engine=engine, scope=scope, span=phase.span)


def _within(model: Model, name: str, ancestor: str) -> bool:
    parents = {p.name: p.parent for p in model.phases}
    node: str | None = name
    while node is not None:
        if node == ancestor:
            return True
        node = parents.get(node)
    return False


def _dead_phases(model: Model, seen_leaves: set[str]) -> set[str]:
    """Every phase none of whose leaves was seen."""
    leaves = [p.name for p in model.leaf_phases()]
    return {p.name for p in model.phases
            if not any(_within(model, leaf, p.name) and leaf in seen_leaves for leaf in leaves)}


# ---------------------------------------------------------------- symbolic, for free parameters

def symbolic_findings(ctx: Context) -> list[Finding]:
    """Actions and phases proved dead for every value of the free parameters."""
    from verifier.engines.symbolic import SymbolicEngine

    model = ctx.model
    concrete = model.instantiate()
    claims: list[tuple[Reachable, Action | Phase]] = []
    for a in concrete.actions:
        if a.kind is ActionKind.RULE and a.modality is not Modality.MUST_NOT:
            claims.append((Reachable(id=f"fires:{a.name}", action=(a.name,)), a))
    if concrete.has_phases:
        for p in concrete.phases:
            claims.append((Reachable(id=f"enters:{p.name}", expr=in_phase(concrete, p.name)), p))
    engine = SymbolicEngine("all")
    left = SYMBOLIC_TOTAL_UNITS
    out: list[Finding] = []
    dead_phases: set[str] = set()
    for n, (claim, element) in enumerate(claims):
        if left < SYMBOLIC_LEAST_UNITS:
            ctx.cut(f"left open: the dead-rule proofs' Z3 units ({SYMBOLIC_TOTAL_UNITS:,}) ran out after {n} of "
                    f"{len(claims)} of them")
            break
        budget = Budget(rlimit=min(left, SYMBOLIC_CLAIM_UNITS), max_depth=ctx.budget.max_depth)
        (result,) = engine.check(model, [claim], budget)
        left -= result.stats.z3_units or 0
        if result.stop is not None and result.stop.kind is StopKind.MEMORY:
            ctx.cut(f"cut short ({result.stop.words})")
        if result.verdict is not Verdict.VIOLATED or result.engine not in ("k-induction", "pdr"):
            continue
        scope = "for all parameter values" if not concrete.is_concrete else ctx.scope_concrete()
        evidence: dict[str, object] = {"proof": result.engine, "reason": result.reason}
        evidence.update({k: v for k, v in result.evidence.items() if isinstance(v, (str, int, float, bool))})
        if isinstance(element, Phase):
            if element.parent in dead_phases:
                dead_phases.add(element.name)
                continue
            dead_phases.add(element.name)
            section = element.rule.section if element.rule else "the turn structure"
            what = "step" if element.parent else "phase"
            message = (f"Play never reaches the {element.name} {what} ({section}), whatever the parameter "
                       f"values: no sequence of legal moves leads into it.")
            out.append(ctx.finding(KIND, element.name, message, rules=ctx.phase_citation(element),
                                   evidence=evidence, engine=result.engine, scope=scope, span=element.span))
        else:
            message = (f"Nothing in the rules ever lets anyone take {ctx.action_words(element)} "
                       f"({ctx.section(element)}), whatever the parameter values: its condition "
                       f"`{expr_words(concrete, own_guard(element, concrete))}` never holds with a legal outcome "
                       f"in a reachable state.")
            out.append(ctx.finding(KIND, element.name, message, rules=ctx.citations(element),
                                   evidence=evidence, engine=result.engine, scope=scope, span=element.span))
    # actions of a dead phase are consequences, not findings of their own
    return [f for f in out if not (f.subject in {a.name for a in concrete.actions}
                                   and concrete.action(f.subject).phase_names
                                   and set(concrete.action(f.subject).phase_names) <= dead_phases)]
