"""conflict: the rules demand something and forbid it, or demand two things and allow one.

1. A `must` action M has a legal firing in a reachable state where a `must-not`
   prohibition P that forbids M applies (P's guard holds for some choice). A
   prohibition forbids M when both can be in the same phase (same phase, or one
   of them has none) and M writes a variable the prohibition is about: the
   variables P's own effects would write when it has any, else the state
   variables its guard reads as written (without the `phase == P` and
   `not end` conditions the phase sugar adds, and other than the implicit
   `phase` and `active`).
   (Matching by name would be fragile; a prohibition names no action.)
   Subject ``M|P``.
2. Two different `must` actions both have legal firings in a reachable state,
   and taking either (any of its choices) leaves the other with no legal firing
   in the state it leads to. Firings that end the game are left out (once the
   game is over nothing more is demanded); at least one firing of each must
   lead to a state that is not final. Subject ``M1|M2`` in model order.

Evidence: the shortest trace to the first such state, and a trace that goes on
with the mandatory action (for 2, one per action).
"""
from __future__ import annotations

from verifier.analysis.context import Context, Visitor, own_guard
from verifier.ir.expr import state_vars
from verifier.ir.model import ACTIVE_VAR, PHASE_VAR, Action, ActionKind, Modality, Model
from verifier.result import Finding
from verifier.semantics import EvalError, choice_values, holds
from verifier.trace import expr_words

KIND = "conflict"


def prohibited_vars(p: Action, model: Model) -> set[str]:
    """What a prohibition is about (see the module doc)."""
    if p.effects:
        return {e.target.name for e in p.effects}
    return set(state_vars(own_guard(p, model))) - {PHASE_VAR, ACTIVE_VAR}


def written_vars(a: Action) -> set[str]:
    return {e.target.name for e in a.effects}


def forbids(p: Action, m: Action, model: Model) -> bool:
    if p.phase_names and m.phase_names and not set(p.phase_names) & set(m.phase_names):
        return False
    return bool(prohibited_vars(p, model) & written_vars(m))


class Conflicts(Visitor):
    def __init__(self, ctx: Context):
        self.ctx = ctx
        model = ctx.instance
        self.musts = {i for i, a in enumerate(model.actions)
                      if a.modality is Modality.MUST and a.kind is ActionKind.RULE}
        bans = [i for i, a in enumerate(model.actions) if a.modality is Modality.MUST_NOT]
        self.banned_by = {m: [p for p in bans if forbids(model.actions[p], model.actions[m], model)] for m in self.musts}
        self.prohibited: dict[tuple[int, int], tuple[int, tuple, int]] = {}   # (M, P) -> (state, choice, target)
        self.exclusive: dict[tuple[int, int], tuple[int, list, list]] = {}      # (M1, M2) -> (state, firings...)

    def _applies(self, p: int, state) -> bool:
        lay = self.ctx.layout
        action = self.ctx.instance.actions[p]
        try:
            return any(holds(lay, action.guard, state, env) for env in choice_values(lay, action, state))
        except EvalError:
            return False

    @property
    def done(self) -> bool:
        return not self.musts

    def visit(self, i, s, firings) -> None:
        enabled: dict[int, list] = {}
        for a, choice, target, _gap in firings:
            if a in self.musts and target is not None:
                enabled.setdefault(a, []).append((choice, target))
        if not enabled:
            return
        state = None
        for m, options in enabled.items():
            for p in self.banned_by[m]:
                if (m, p) in self.prohibited:
                    continue
                state = state or self.ctx.unpack(s)
                if self._applies(p, state):
                    choice, target = options[0]
                    self.prohibited[(m, p)] = (i, choice, target)
        if len(enabled) < 2:
            return
        musts = sorted(enabled)
        for x in range(len(musts)):
            for y in range(x + 1, len(musts)):
                m1, m2 = musts[x], musts[y]
                if (m1, m2) in self.exclusive:
                    continue
                if self._exclusive(enabled[m1], m2) and self._exclusive(enabled[m2], m1):
                    self.exclusive[(m1, m2)] = (i, enabled[m1], enabled[m2])

    def _exclusive(self, options: list, other: int) -> bool:
        """Every non-final outcome of `options` leaves `other` with no legal firing (and one exists)."""
        live = 0
        for _choice, target in options:
            if self.ctx.is_final(target):
                continue
            live += 1
            try:
                firings = self.ctx.expand(target)
            except EvalError:           # a model error there (the claims report it): nothing shown
                return False
            if any(a == other and t is not None for a, _c, t, _g in firings):
                return False
        return live > 0

    def findings(self) -> list[Finding]:
        ctx = self.ctx
        model = ctx.instance
        out = []
        for (m, p), (i, choice, target) in self.prohibited.items():
            must, ban = model.actions[m], model.actions[p]
            state = ctx.space.states[i]
            when = ctx.state_words(state, ctx.relevant_slots([must, ban]))
            message = (f"The rules demand {ctx.action_words(must)} ({ctx.section(must)})"
                       + (f" when {when}" if when else "") + f"{ctx.where(state)}, but "
                       f"{ctx.action_words(ban)} ({ctx.section(ban)}) forbids it in that same situation.")
            out.append(ctx.finding(
                KIND, f"{must.name}|{ban.name}", message, rules=ctx.citations(must, ban),
                traces=(ctx.trace_to(i), ctx.trace_to(i, [(m, choice, target)])),
                evidence={"demanded": must.name, "forbidden_by": ban.name,
                          "prohibition": expr_words(model, own_guard(ban, model)), "state": ctx.show(state)},
                engine="explicit", scope=ctx.scope_concrete(), span=must.span))
        for (m1, m2), (i, opts1, opts2) in self.exclusive.items():
            a1, a2 = model.actions[m1], model.actions[m2]
            state = ctx.space.states[i]
            when = ctx.state_words(state, ctx.relevant_slots([a1, a2]))
            c1, t1 = next((c, t) for c, t in opts1 if not ctx.is_final(t))
            c2, t2 = next((c, t) for c, t in opts2 if not ctx.is_final(t))
            message = (f"The rules demand both {ctx.action_words(a1)} ({ctx.section(a1)}) and "
                       f"{ctx.action_words(a2)} ({ctx.section(a2)})"
                       + (f" when {when}" if when else "") + f"{ctx.where(state)}, "
                       f"yet taking either one rules out the other.")
            out.append(ctx.finding(
                KIND, f"{a1.name}|{a2.name}", message, rules=ctx.citations(a1, a2),
                traces=(ctx.trace_to(i, [(m1, c1, t1)]), ctx.trace_to(i, [(m2, c2, t2)])),
                evidence={"demanded": [a1.name, a2.name], "state": ctx.show(state)},
                engine="explicit", scope=ctx.scope_concrete(), span=a1.span))
        return out
