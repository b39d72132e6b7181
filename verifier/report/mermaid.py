"""Mermaid export of the phase diagram, for wikis and Markdown documents.

Conventions (read back by `verifier.lang.mermaid_import`, so an export imports
to the same turn structure):

- each leaf phase is a node whose id is its name (label: the name, then its
  actions); a phase with steps is a `subgraph` with the same id;
- optional phases carry the class `optional` (drawn dashed);
- `-->` is the way on, `-.->` a conditional way or one that skips optional
  phases, `==>` the end of the turn (back to the first phase); labels as `|...|`.
"""
from __future__ import annotations

import re

from verifier.ir.model import Modality, Model, Phase
from verifier.report.escaping import mermaid_text

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
    acts: dict[str | None, list[str]] = {}
    for a in model.rule_actions():
        mod = {Modality.MUST: "must", Modality.MAY: "may", Modality.MUST_NOT: "must not"}[a.modality]
        for phase in a.phase_names or (None,):
            acts.setdefault(phase, []).append(f"{mod} {a.name}")
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
    for e in model.phase_edges:
        arrow = "==>" if e.turn_end else ("-.->" if e.guarded or e.label.startswith("skip ") else "-->")
        label = e.label or ("next turn" if e.turn_end else "")
        text = f"|{_label(label)}|" if label else ""
        out.append(f"    {node_id(e.src)} {arrow}{text} {node_id(e.dst)}")
    anywhere = acts.get(None, [])
    if actions and anywhere:
        out.append(f"    %% in any phase: {mermaid_text(', '.join(anywhere))}")
    if optional:
        out.append("    classDef optional stroke-dasharray: 5 5")
        out.append(f"    class {','.join(optional)} optional")
    return "\n".join(out) + "\n"
