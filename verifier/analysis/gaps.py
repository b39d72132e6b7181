"""gap: a reachable state where an effect would take a variable out of its range and
the variable has no overflow policy (`overflow: unspecified`): the rules are silent.

One finding per (variable, action), subject ``variable|action`` (an
acknowledgement whose subject is just the variable covers every action that
overflows it), with the shortest trace to the first state where it happens,
the choice values, the slot, the value it would take and the range. The
firing itself is not a step of the trace: the semantics blocks it. When some
such state has no other legal move, the message says that play cannot go on
(those states are not reported again as deadlocks).
"""
from __future__ import annotations

from verifier.analysis.context import Context, Visitor
from verifier.result import Finding
from verifier.trace import choice_words

KIND = "gap"


class Gaps(Visitor):
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.first: dict[tuple[int, str], tuple[int, tuple, tuple]] = {}
        self.count: dict[tuple[int, str], int] = {}
        self.stuck: dict[tuple[int, str], int] = {}    # states where the gap leaves no legal move

    def visit(self, i, s, firings) -> None:
        stuck = None
        for a, choice, _target, gap in firings:
            if gap is None:
                continue
            key = (a, gap[0].split("[")[0])
            self.count[key] = self.count.get(key, 0) + 1
            if key not in self.first:
                self.first[key] = (i, choice, gap)
            if stuck is None:
                stuck = all(t is None for _a, _c, t, _g in firings)
            if stuck:
                self.stuck[key] = self.stuck.get(key, 0) + 1

    def findings(self) -> list[Finding]:
        ctx = self.ctx
        out = []
        for (a, var), (i, choice, gap) in sorted(self.first.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            action = ctx.action(a)
            slot, value, lo, hi = gap
            side = f"below its least value {lo}" if value < lo else f"above its greatest value {hi}"
            chose = (" with " + ", ".join(f"{k} = {str(v).lower() if isinstance(v, bool) else v}"
                                          for k, v in choice_words(action, choice))) if choice else ""
            state = ctx.space.states[i]
            message = (f"Nothing in the rules says what happens when {ctx.action_words(action)}{chose} "
                       f"({ctx.section(action)}) would take {ctx.names.slot(slot)} to {value}{ctx.where(state)}, {side}"
                       + (", and play cannot go on there." if self.stuck.get((a, var)) else "."))
            out.append(ctx.finding(
                KIND, f"{var}|{action.name}", message, rules=ctx.citations(action),
                traces=(ctx.trace_to(i),),
                evidence={"action": action.name, "choice": dict(choice), "slot": slot, "value": value,
                          "range": [lo, hi], "states_where_it_happens": self.count[(a, var)],
                          "states_left_without_a_move": self.stuck.get((a, var), 0)},
                engine="explicit", scope=ctx.scope_concrete(), span=action.span))
        return out
