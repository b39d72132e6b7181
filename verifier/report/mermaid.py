"""Mermaid export of the phase diagram, for wikis and Markdown documents.

Conventions (read back by `verifier.lang.mermaid_import`, so an export imports
to the same turn structure):

- each leaf phase is a node whose id is its name (label: the name, then its
  actions); a phase with steps is a `subgraph` with the same id;
- optional phases carry the class `optional` (drawn dashed);
- `-->` is the way on, `-.->` a conditional way or one that skips optional
  phases, `==>` the end of the turn (back to the first phase); labels as `|...|`;
  an arrow's condition (the phase's `exit_when` and the `next:` entry's `when`) is
  the label's last line, `when: ...` (the importer drops it: a skeleton has no variables);
- an action is listed in the phases it can fire in (`report.phase_actions`: its
  `phase:`, or the phases its guard allows), "in any phase" only when none is ruled out.
"""
from __future__ import annotations

import re

from verifier.ir.expr import TRUE, pretty
from verifier.ir.model import Modality, Model, Phase
from verifier.report.escaping import mermaid_text
from verifier.report.phase_actions import ANY_PHASE, actions_by_phase
from verifier.trace import Names

GUARD_PREFIX = "when: "      # the last line of an arrow's label: its condition

RESERVED = {"end", "graph", "flowchart", "subgraph", "style", "class", "classdef", "click", "linkstyle",
            "direction", "default"}


def node_id(name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return f"p_{safe}" if safe.lower() in RESERVED or not safe else safe


def _label(*lines: str) -> str:
    """A quoted label: each line escaped (no quote, newline or HTML of the model's text), joined
    by line breaks."""
    return '"' + "<br/>".join(mermaid_text(line) for line in lines) + '"'


def phase_mermaid(model: Model, direction: str = "TD", actions: bool = True) -> str:
    """The phase diagram of `model` as a Mermaid flowchart."""
    kids: dict[str | None, list[Phase]] = {}
    for p in model.phases:
        kids.setdefault(p.parent, []).append(p)
    words = {Modality.MUST: "must", Modality.MAY: "may", Modality.MUST_NOT: "must not"}
    acts = {phase: [f"{words[a.modality]} {a.name}" for a in actions_of]
            for phase, actions_of in actions_by_phase(model).items()}
    out = [f"flowchart {direction}", f"    %% {mermaid_text(model.name)}: turn structure (exported by turnproof)"]
    if not model.phases:
        out.append(f"    none[{_label('no phases: plain guarded commands')}]")
        return "\n".join(out) + "\n"
    optional: list[str] = []

    def put(p: Phase, indent: str) -> None:
        if not p.mandatory:
            optional.append(node_id(p.name))
        if kids.get(p.name):
            out.append(f"{indent}subgraph {node_id(p.name)}[{_label(p.name)}]")
            for c in kids[p.name]:
                put(c, indent + "    ")
            out.append(f"{indent}end")
            return
        lines = [p.name]
        if actions and acts.get(p.name):
            lines.append(", ".join(acts[p.name][:6]) + (", ..." if len(acts[p.name]) > 6 else ""))
        out.append(f"{indent}{node_id(p.name)}[{_label(*lines)}]")

    for p in kids.get(None, []):
        put(p, "    ")
    enum_name = model.enum_value_name if model.enums else None
    written = Names.as_written(model)       # a 2-D array's element with its two indices
    if any(e.condition != TRUE for e in model.phase_edges):
        out.append("    %% an arrow is taken when its condition (when: ...) holds and no required (must) "
                   "action of its phase is left")
    for e in model.phase_edges:
        conditional = e.guarded or e.condition != TRUE or e.label.startswith("skip ")
        arrow = "==>" if e.turn_end else ("-.->" if conditional else "-->")
        lines = [e.label or ("next turn" if e.turn_end else "")]
        if e.condition != TRUE:
            lines.append(f"{GUARD_PREFIX}{pretty(e.condition, enum_name, written)}")
        text = f"|{_label(*(line for line in lines if line))}|" if any(lines) else ""
        out.append(f"    {node_id(e.src)} {arrow}{text} {node_id(e.dst)}")
    anywhere = acts.get(ANY_PHASE, [])
    if actions and anywhere:
        out.append(f"    %% in any phase: {mermaid_text(', '.join(anywhere))}")
    if optional:
        out.append("    classDef optional stroke-dasharray: 5 5")
        out.append(f"    class {','.join(optional)} optional")
    return "\n".join(out) + "\n"
