"""nondeterministic-must: a mandatory action whose choice the rules leave open.

A `must` rule action with a `choose:` is reported when, in some reachable
state, at least two of its choice values have legal firings that lead to
different states and the model marks its chooser as unstated (`chooser:
unstated`): the rules demand the step but do not say who picks the option or
how. Any other chooser (by default the player who takes the action) says who,
and is not watched. Choice values that lead to the same state are one outcome (the
choice then does not matter). Evidence: the shortest trace to the first such
state continued once with each of two different options.
"""
from __future__ import annotations

from verifier.analysis.context import Context, Visitor
from verifier.ir.model import UNSTATED, ActionKind, Modality
from verifier.result import Finding
from verifier.trace import choice_words

KIND = "nondeterministic-must"


def _word(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


class NondeterministicMust(Visitor):
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.watched = {i for i, a in enumerate(ctx.instance.actions)
                        if a.modality is Modality.MUST and a.kind is ActionKind.RULE and a.choices
                        and a.chooser == UNSTATED}
        self.first: dict[int, tuple[int, list]] = {}
        self.count: dict[int, int] = {}

    @property
    def done(self) -> bool:
        return not self.watched

    def visit(self, i, s, firings) -> None:
        if not self.watched:
            return
        outcomes: dict[int, dict] = {}
        for a, choice, target, _gap in firings:
            if a in self.watched and target is not None:
                outcomes.setdefault(a, {}).setdefault(target, choice)
        for a, by_target in outcomes.items():
            if len(by_target) < 2:
                continue
            self.count[a] = self.count.get(a, 0) + 1
            if a not in self.first:
                self.first[a] = (i, [(c, t) for t, c in by_target.items()])

    def findings(self) -> list[Finding]:
        ctx = self.ctx
        out = []
        for a, (i, options) in self.first.items():
            action = ctx.action(a)
            state = ctx.space.states[i]
            words = [", ".join(f"{k} = {_word(v)}" for k, v in choice_words(action, c)) for c, _t in options]
            listed = "; ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]
            when = ctx.state_words(state, ctx.relevant_slots([action]))
            message = (f"The rules demand {ctx.action_words(action)} ({ctx.section(action)})"
                       + (f" when {when}" if when else "") + f"{ctx.where(state)} but do not say who "
                       f"chooses between {listed}, or how.")
            (c1, t1), (c2, t2) = options[0], options[1]
            out.append(ctx.finding(
                KIND, action.name, message, rules=ctx.citations(action),
                traces=(ctx.trace_to(i, [(a, c1, t1)]), ctx.trace_to(i, [(a, c2, t2)])),
                evidence={"options": [dict(c) for c, _t in options], "state": ctx.show(state),
                          "states_where_it_happens": self.count[a]},
                engine="explicit", scope=ctx.scope_concrete(), span=action.span))
        return out
