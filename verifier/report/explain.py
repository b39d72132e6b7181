"""Plain-language explanations for readers who have never seen the tool.

Shared by the Markdown and HTML reports: what each verdict means, what each kind
of claim and finding means, how to read the diagrams, and one sentence per
result that says what was shown.
"""
from __future__ import annotations

from verifier.result import CheckResult, Verdict

VERDICT_LEGEND: tuple[tuple[str, str], ...] = (
    ("PROVED", "True for every allowed value of the parameters (deck size and so on): a proof, "
               "not only a search."),
    ("HOLDS", "True in every situation that can arise with the parameter values shown: every reachable "
              "state was checked."),
    ("HOLDS_TO_DEPTH", "No counterexample within the first k moves; longer play was not checked, so nothing "
                       "more is claimed."),
    ("VIOLATED", "False: a sequence of legal moves (the trace) breaks the claim. For a claim that something "
                 "can happen, VIOLATED means it can never happen."),
    ("UNKNOWN", "Not decided: the tool ran out of time or states; the reason is given."),
)

EXPECTATION_LEGEND: tuple[tuple[str, str], ...] = (
    ("as expected", "The verdict is the one the claim file expects. A claim expected to be VIOLATED "
                    "documents a known flaw of the rules; its trace shows the flaw."),
    ("NOT as expected", "The verdict differs from what the claim file expects: a rule or the model "
                        "changed, or the claim is wrong."),
)

CLAIM_KINDS = {
    "invariant": "always true",
    "deadlock": "nobody gets stuck",
    "reachable": "can happen",
    "termination": "always ends",
    "ordering": "order of events",
    "bounded-response": "happens soon enough",
    "obligation": "never left pending forever",
    "step": "every move respects it",
}

FINDING_KINDS = {
    "dead-rule": "A rule that can never apply: an action that never fires, or a phase that is never reached.",
    "deadlock": "A situation before the end of the game in which the player has no legal move.",
    "gap": "The rules are silent: an effect would take a count past its limit and no rule says what "
           "happens then.",
    "conflict": "Two rules contradict each other: something required is also forbidden, or two required "
                "things exclude each other.",
    "order-dependence": "Two things may happen at the same moment and the outcome depends on their order, "
                        "which the rules do not fix.",
    "nondeterministic-must": "A required action leaves a choice open that the rules do not settle.",
    "variant-difference": "Two readings of an ambiguous rule lead to different outcomes.",
    "unreachable-phase": "A phase or step that no sequence of legal moves reaches.",
}

DIAGRAM_LEGEND: tuple[tuple[str, str], ...] = (
    ("rounded box", "a phase, or a step of a phase; its actions are listed inside (must = required while "
                    "possible, may = optional, must not = forbidden, one of a / b = exactly one of them, once "
                    "each visit)"),
    ("frame around boxes", "a phase made of steps, in order"),
    ("solid border", "a mandatory phase"),
    ("dashed border", "an optional phase: the turn may skip it"),
    ("solid arrow", "the way on to the next phase (every arrow waits until no required (must) action of "
                    "its phase is left)"),
    ("dashed arrow", "taken only under the condition written on it (when: ...)"),
    ("dotted grey arrow", "skipping one or more optional phases"),
    ("bold blue arrow", "the turn ends and the next player starts at the first phase; from a phase other "
                        "than the last it is an early exit; a condition it is taken under is written on it "
                        "(when: ...)"),
    ("black dot", "where a turn starts"),
    ("red (on a trace)", "the phases a trace visits and the arrows it takes, with step numbers; a loop that "
                         "repeats forever is purple and marked ↻; ■ marks where a trace stops"),
)

STATE_GRAPH_LEGEND = {
    "boxes": "Every situation (state) the game can reach with these parameters, as a box: its number, "
             "then the values that set it apart (what every state shares is written under the drawing); "
             "arrows are moves. States are grouped by phase. A thick black border marks a starting state, a "
             "double border an end of game, a red fill a state where the player is stuck. Hover a box to "
             "see the full state.",
    "whole": "Every situation (state) the game can reach with these parameters, as a circle; arrows are "
             "moves. States are grouped by phase. A thick black border marks a starting state, a double "
             "circle an end of game, a red fill a state where the player is stuck. Hover a circle to see "
             "the full state.",
    "phase": "The game has too many situations to draw one by one, so they are grouped by phase: each box "
             "counts the reachable states in that phase, each arrow the moves between phases (an arrow from "
             "a box to itself counts the moves within the phase). A phase arrow of the rules that no move "
             "ever uses is drawn grey and marked 'never taken'. Blue arrows end the turn; a red border marks a "
             "phase where the player can be stuck, and green counts the states where the game is over.",
    "depth": "The game has too many situations to draw one by one, so they are grouped by the number of "
             "moves needed to reach them (depth); arrows count the moves between groups.",
}


def kind_words(kind: str) -> str:
    return CLAIM_KINDS.get(kind, kind)


def finding_words(kind: str) -> str:
    return FINDING_KINDS.get(kind, "A consistency finding.")


def verdict_label(r: CheckResult) -> str:
    if r.verdict is Verdict.HOLDS_TO_DEPTH and r.depth is not None:
        return f"HOLDS_TO_DEPTH {r.depth}"
    return r.verdict.value


def explain_result(r: CheckResult) -> str:
    """One or two sentences: what this verdict means for this claim."""
    kind, v = r.property.kind, r.verdict
    if v is Verdict.UNKNOWN:
        return f"Not decided: {r.reason or 'a resource limit was reached'}."
    if v is Verdict.HOLDS_TO_DEPTH:
        depth = f"{r.depth} moves" if r.depth is not None else "the depth searched"
        return f"No counterexample within {depth}; longer play was not checked."
    proved = v is Verdict.PROVED
    scope = ("Proved for every allowed parameter value" + (f" ({r.engine})." if r.engine else ".") if proved
             else "Shown by checking every reachable state with these parameter values"
             + (f" ({r.stats.states:,} states)." if r.stats.states else "."))
    if kind == "reachable":
        if v is Verdict.VIOLATED:
            return f"It can never happen: no sequence of legal moves gets there. {scope}"
        witness = " The trace shows how." if r.trace is not None else ""
        return f"It can happen.{witness}"
    if v is Verdict.VIOLATED:
        if kind == "deadlock":
            return "Someone can get stuck: the trace reaches a situation before the end of the game with no legal move."
        if kind in ("termination", "obligation") or (r.trace is not None and r.trace.loop_start is not None):
            return ("Play can go on forever: the trace ends in a loop (marked ↻) that the players may "
                    "repeat without end.")
        if kind in ("ordering", "bounded-response"):
            return "The trace shows events in an order the claim rules out."
        if kind == "step":
            return "False: the trace's last move breaks it."
        return "False: the trace reaches a situation where it fails."
    what = {
        "invariant": "It is always true",
        "deadlock": "Nobody is ever stuck before the end of the game",
        "termination": "It always ends, whatever the players do",
        "ordering": "Events always happen in the order the claim states",
        "bounded-response": "The response always comes in time",
        "obligation": "The obligation is never left open forever",
        "step": "Every move respects it",
    }.get(kind, "It holds")
    return f"{what}. {scope}"


def expectation_short(r: CheckResult) -> str:
    """For a table cell: yes, yes (known flaw), undecided, or NO with what was expected."""
    if undecided(r):
        return "undecided"
    if r.as_expected:
        return "yes (known flaw)" if r.property.expected == "VIOLATED" else "yes"
    return f"NO: expected {r.property.expected or 'not VIOLATED'}"


def shown_why(r: CheckResult) -> str:
    """A claim's `why` (why the rules break it), under the readings where its violation is
    expected only; elsewhere "" (every output format follows this rule)."""
    return r.property.why if r.property.expected == Verdict.VIOLATED.value else ""


def undecided(r: CheckResult) -> bool:
    """UNKNOWN where the claim file did not expect it: not a failure, not a success either."""
    return r.verdict is Verdict.UNKNOWN and r.property.expected != "UNKNOWN"
