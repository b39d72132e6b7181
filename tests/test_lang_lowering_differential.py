"""The lowered constructs (bounded sequences, 2-D arrays, until-next-turn durations) on random models
written in the model language: the explicit search and Z3 (BMC one step deeper than the explicit
search's deepest state; k-induction/PDR) agree, and every counterexample replays."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from verifier.engines.explicit import ExplicitEngine
from verifier.engines.symbolic import SymbolicEngine
from verifier.ir.props import Invariant, Reachable
from verifier.lang import load_model
from verifier.lang.expressions import parse_expression
from verifier.lang.properties import model_scope
from verifier.resources import Budget
from verifier.result import Verdict
from verifier.semantics import layout
from verifier.trace import replay

TEMPLATE = """\
model: lowered
players: 2
enums:
  Card: [a, b, c]
variables:
  s: {{type: "seq[Card, 0..{cap}]"}}
  who: {{type: "seq[player, 0..{cap}]"}}
  g: {{type: 0..2, per: [player, Card], init: 0, overflow: clamp}}
  x: {{type: bool, per: player, init: false}}
phases:
  - name: Main
  - name: End
actions:
  - name: put
    phase: Main
    choose: {{k: Card}}
    when: "len(s) < {cap} and ({put})"
    do:
      s: push(k)
      who: push(active)
      g[active][k]: g[active][k] + 1
  - name: take
    phase: {take_phase}
    when: "len(s) > 0 and ({take})"
    do:
      s: pop
      who: pop
      x[{target}]: {{value: true, until: "next_turn_of({until})"}}
  - name: clear
    phase: End
    when: "x[active] and ({clear})"
    do:
      x[active]: false
"""
PUT = ["true", "g[active][k] < 1", "len(s) == 0 or top(s) != k", "not x[active]"]
TAKE = ["true", "top(s) == a", "top(who) == active", "s[0] != c"]
CLEAR = ["true", "len(s) == 0", "g[active][b] > 0"]
CLAIMS = ["len(s) == len(who)", "not (x[0] and x[1])", "g[0][a] + g[1][a] <= 1", "len(s) < 2 or s[0] != s[1]",
          "x_until[0] == 2 or x[0]", "len(s) == 0 or top(who) == 0", "x[1] -> x_until[1] != 2"]


@st.composite
def cases(draw):
    text = TEMPLATE.format(cap=draw(st.integers(1, 3)), put=draw(st.sampled_from(PUT)),
                           take=draw(st.sampled_from(TAKE)), take_phase=draw(st.sampled_from(["Main", "End"])),
                           target=draw(st.sampled_from(["active", "1 - active", "top(who)"])),
                           until=draw(st.sampled_from(["active", "1 - active"])), clear=draw(st.sampled_from(CLEAR)))
    return text, draw(st.sampled_from(CLAIMS)), draw(st.booleans())


def load(tmp_path_factory, text: str, claim: str, reach: bool):
    path = tmp_path_factory.mktemp("lowered") / "model.yaml"
    path.write_text(text)
    model = load_model(str(path)).instantiate()
    expr = parse_expression(claim, model_scope(model), "bool")
    prop = Reachable(id="reach", expr=expr) if reach else Invariant(id="inv", expr=expr)
    return model, prop


SETTINGS = settings(max_examples=examples(8), deadline=None)
BAD = {Invariant: Verdict.VIOLATED, Reachable: Verdict.HOLDS}
DEPTH = 8           # BMC's unrolling: every counterexample or witness of these models seen in 150 random
                    # draws was at most 7 steps long (the explicit search itself goes up to about 30 steps)


@SETTINGS
@given(cases())
def test_bmc_and_proofs_agree_with_the_explicit_search(tmp_path_factory, case):
    model, prop = load(tmp_path_factory, *case)
    (ref,) = ExplicitEngine().check(model, [prop], Budget(rlimit=40_000_000))
    assert ref.verdict in (Verdict.HOLDS, Verdict.VIOLATED), ref.reason       # no model errors in these
    found = ref.verdict is BAD[type(prop)]
    depth = min(ref.depth + 1, DEPTH)
    (bmc,) = SymbolicEngine("bmc").check(model, [prop], Budget(rlimit=40_000_000, max_depth=depth))
    bmc_found = bmc.verdict is BAD[type(prop)]
    assert not bmc_found or found, (bmc.verdict, bmc.reason, ref.verdict)
    if found and len(ref.trace) <= depth:          # within BMC's reach: it finds one, as short
        assert bmc_found, (bmc.verdict, bmc.reason)
    for r in (ref, bmc):
        if r.verdict is BAD[type(prop)]:
            replay(layout(model), r.trace)
    if bmc_found:
        assert len(bmc.trace) == len(ref.trace), "both search shortest-first"
    if isinstance(prop, Invariant):
        (proof,) = SymbolicEngine("kind").check(model, [prop], Budget(rlimit=40_000_000, max_depth=6))
        assert proof.verdict is not (Verdict.PROVED if found else Verdict.VIOLATED), (proof.verdict, proof.reason)
