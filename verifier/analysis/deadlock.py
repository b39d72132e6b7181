"""deadlock: a reachable state that is not an end of game and has no legal move.

One finding per phase where play gets stuck (per model when it has no
phases), with the shortest trace to the first such state. A state whose only
would-be moves are blocked by a gap (an effect leaving a range with no policy)
is not reported here: the gap finding for that action and variable is the
cause, and reporting it twice would blame the turn structure for what the
rules' silence on a value does. A move blocked by a `forbid` policy is a
stated rule, so such a state is a deadlock.
"""
from __future__ import annotations

from verifier.analysis.context import Context, Visitor
from verifier.ir.model import ActionKind, Modality, Overflow
from verifier.result import Finding

KIND = "deadlock"


class Deadlocks(Visitor):
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.first: dict[str, int] = {}        # subject -> first (shallowest) stuck state
        self.count: dict[str, int] = {}
        self.forbidden: dict[str, list[int]] = {}   # actions whose guard holds but a `forbid` policy blocks

    def visit(self, i, s, firings) -> None:
        for _a, _c, target, gap in firings:
            if target is not None or gap is not None:    # play moves on, or a gap is reported
                return
        if self.ctx.is_final(s):
            return
        subject = self.ctx.phase_of(self.ctx.unpack(s)) or "play"
        self.count[subject] = self.count.get(subject, 0) + 1
        if subject not in self.first:
            self.first[subject] = i
            self.forbidden[subject] = list(dict.fromkeys(a for a, _c, _t, _g in firings))

    def findings(self) -> list[Finding]:
        ctx = self.ctx
        model = ctx.instance
        out = []
        for subject, i in self.first.items():
            state = ctx.space.states[i]
            phase = ctx.phase(subject)
            actions = [a for a in model.actions if a.modality is not Modality.MUST_NOT and
                       (phase is None or subject in a.phase_names or
                        (not a.phase_names and a.kind is ActionKind.RULE))]
            blocked = [ctx.action(a) for a in self.forbidden[subject]]
            slots = ctx.relevant_slots(actions)
            slots += [x for x in ctx.slots_of(_forbidding(ctx, blocked)) if x not in slots]
            when = ctx.state_words(state, slots)
            section = phase.rule.section if phase is not None and phase.rule is not None else None
            where = f" in {subject}" if phase is not None else ""
            why = ""
            if blocked:
                why = "; " + " and ".join(ctx.action_words(a) for a in blocked) + \
                    (" is" if len(blocked) == 1 else " are") + " forbidden by the policy on " + \
                    ", ".join(_forbidding(ctx, blocked)) + " there"
            message = (f"Nothing in the rules lets {ctx.who(state)} act{where}"
                       + (f" when {when}" if when else "")
                       + ", yet the game is not over" + (f" ({section})" if section else "")
                       + why + ".")
            rules = ctx.phase_citation(phase) if phase is not None else ()
            out.append(ctx.finding(
                KIND, subject, message, rules=rules, traces=(ctx.trace_to(i),),
                evidence={"state": ctx.show(state), "stuck_states": self.count[subject],
                          "forbidden_moves": [a.name for a in blocked]},
                engine="explicit", scope=ctx.scope_concrete(),
                span=phase.span if phase is not None else model.span))
        return out


def _forbidding(ctx: Context, blocked) -> list[str]:
    """The variables with a `forbid` policy that the blocked actions write."""
    names = {e.target.name for a in blocked for e in a.effects}
    return sorted(n for n in names if ctx.instance.var(n).overflow is Overflow.FORBID)
