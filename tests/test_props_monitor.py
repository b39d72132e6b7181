"""Pattern monitors against a direct check of the pattern on random event sequences."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from verifier.ir.expr import Const
from verifier.ir.model import Action, IntType, Model, Variable
from verifier.ir.props import Event, Ordering
from verifier.props.describe import describe
from verifier.props.monitor import MONITOR_PREFIX, compile_ordering
from verifier.semantics import holds, layout, successors

EVENTS = "abqr"   # P = a, S = b, Q = q, R = r
MODEL = Model(name="events", variables=(Variable("x", IntType(Const(0), Const(0)), init=(Const(0),)),),
              actions=tuple(Action(name) for name in EVENTS), param_values=())


def claim(pattern: str, scope: str, bound: int | None = None) -> Ordering:
    return Ordering(id="c", pattern=pattern, scope=scope, bound=bound, p=Event(action="a"),
                    s=Event(action="b"), q=Event(action="q"), r=Event(action="r"))


def run_monitor(c: Ordering, word: str) -> tuple[bool, bool]:
    """(error, obligation pending) of the monitor after the event sequence."""
    compiled = compile_ordering(MODEL, c)
    lay = layout(compiled.model)
    from verifier.semantics import initial_states
    (state,) = initial_states(lay)
    for letter in word:
        (t,) = [t for t in successors(lay, state) if t.action.name == letter]
        state = t.target
    err = holds(lay, compiled.claims[0].expr.args[0], state)   # claims[0] is "not err"
    pending = len(compiled.claims) > 1 and holds(lay, compiled.claims[1].pending, state)
    return err, pending


def intervals(scope: str, word: str) -> list[tuple[list[str], bool]]:
    """The scope's intervals: (events inside, closed?) — written independently of the monitor."""
    if scope == "globally":
        return [(list(word), False)]
    if scope == "before":
        return [(list(word[:word.index("r")]), True)] if "r" in word else [(list(word), False)]
    if scope == "after":
        return [(list(word[word.index("q") + 1:]), False)] if "q" in word else []
    out, current, is_open = [], [], False
    for letter in word:
        if is_open and letter == "r":
            out.append((current, True))
            current, is_open = [], False
            if letter == "q":
                is_open = True
        elif not is_open and letter == "q":
            current, is_open = [], True
        elif is_open:
            current.append(letter)
    if is_open:
        out.append((current, False))
    return out


def direct(c: Ordering, word: str) -> tuple[bool, bool]:
    deferred = c.scope in ("before", "between")
    err = pending = False
    for events, closed in intervals(c.scope, word):
        if c.pattern == "absence":
            bad = "a" in events
        elif c.pattern == "precedence":
            bad = "a" in events and ("b" not in events or events.index("a") < events.index("b"))
        elif c.pattern == "bounded-existence":
            bad = events.count("a") > c.bound
        else:
            bad = False
        if c.pattern == "existence":
            open_obligation = "a" not in events
        elif c.pattern == "response":
            last_p = max((i for i, e in enumerate(events) if e == "a"), default=-1)
            last_s = max((i for i, e in enumerate(events) if e == "b"), default=-1)
            open_obligation = last_p > last_s
        else:
            open_obligation = False
        if closed and (open_obligation or (deferred and bad)):
            err = True
        if bad and not deferred:
            err = True
        if not closed and c.scope in ("globally", "after", "after-until"):
            pending = pending or open_obligation
    return err, pending


PATTERNS = st.sampled_from(["absence", "existence", "precedence", "response", "bounded-existence"])
SCOPES = st.sampled_from(["globally", "before", "after", "between", "after-until"])


@settings(max_examples=examples(300), deadline=None)
@given(PATTERNS, SCOPES, st.text(alphabet=EVENTS, max_size=12), st.integers(0, 2))
def test_monitor_agrees_with_direct_check(pattern, scope, word, bound):
    c = claim(pattern, scope, bound if pattern == "bounded-existence" else None)
    assert run_monitor(c, word) == direct(c, word)


def test_monitor_adds_only_its_own_variables():
    compiled = compile_ordering(MODEL, claim("precedence", "between"))
    added = [v.name for v in compiled.model.variables[len(MODEL.variables):]]
    assert added == [MONITOR_PREFIX + n for n in ("open", "err", "bad", "seen")]


def test_plain_words():
    c = Ordering(id="h", pattern="precedence", scope="phase", p=Event(action="heal"),
                 s=Event(action="reap"), q=Event(enter="Step2"), r=Event(leave="Step2"))
    assert describe(c) == "Heal never happens before reap within Step2"
    assert describe(claim("bounded-existence", "globally", 1)) == "A happens at most 1 times"
