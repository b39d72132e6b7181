"""Plain-words renderings of ordering claims, for reports ("Heal never happens before Reap within Step 2")."""
from __future__ import annotations

from verifier.ir.props import BoundedResponse, Event, Ordering, Property


def event_words(e: Event | None) -> str:
    if e is None:
        return "?"
    if e.text:
        return e.text
    if e.action is not None:
        return e.action
    if e.enter is not None:
        return f"entering {e.enter}"
    if e.leave is not None:
        return f"leaving {e.leave}"
    if e.turn_end:
        return "the end of the turn"
    if e.round_end:
        return "the end of the round"
    return "the condition"


def scope_words(c: Ordering) -> str:
    q, r = event_words(c.q), event_words(c.r)
    phase = c.q.enter if c.q and c.q.enter else (c.r.leave if c.r else "")
    return {"globally": "", "before": f" before {r}", "after": f" after {q}",
            "between": f" between {q} and {r}", "after-until": f" after {q} until {r}",
            "turn": " within each turn", "round": " within each round",
            "phase": f" within {phase}"}[c.scope]


def describe(claim: Property) -> str:
    """The claim's formal statement in plain words."""
    if isinstance(claim, BoundedResponse):
        return (f"after {event_words(claim.trigger)}, {event_words(claim.response)} follows "
                f"within {claim.within} steps")
    if not isinstance(claim, Ordering):
        return claim.statement
    p, s, scope = event_words(claim.p), event_words(claim.s), scope_words(claim)
    text = {
        "absence": f"{p} never happens{scope}",
        "existence": f"{p} happens{scope}",
        "universality": f"{p} holds throughout{scope}",
        "precedence": f"{p} never happens before {s}{scope}",
        "response": f"every {p} is eventually followed by {s}{scope}",
        "bounded-existence": f"{p} happens at most {claim.bound} times{scope}",
    }[claim.pattern]
    return text[0].upper() + text[1:]
