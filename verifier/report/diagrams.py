"""Diagrams as DOT: the phase diagram (with a trace drawn on it) and the explored state graph.

DOT text is written here by hand, deterministically (golden tests compare it);
`render_svg` lays it out with pygraphviz, whose wheel ships the Graphviz engine.

Drawing conventions (explained to readers by `verifier.report.explain.DIAGRAM_LEGEND`):

- a phase is a rounded box; a phase with steps is a frame (cluster) around them;
- a mandatory phase has a solid border, an optional one a dashed border;
- a solid arrow is the way on; a dashed arrow is taken only under its condition, which it
  carries (`when: ...`, the words of the Mermaid export);
  a dotted grey arrow skips optional phases;
- a bold blue arrow ends the turn and goes back to the first phase (from a phase
  other than the last, it is an early exit);
- a trace is drawn in red: the phases it visits are filled, the arrows it takes
  carry the step numbers, and a lasso's loop is drawn in purple.
"""
from __future__ import annotations

import faulthandler
import html
import math
import multiprocessing
import os
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from verifier.ir.model import PHASE_VAR, Action, ActionKind, Model, Phase, PhaseEdge
from verifier.report import trace_view
from verifier.report.phase_actions import action_words, actions_by_phase, edge_condition
from verifier.resources.signals import deadline_name, past_deadline
from verifier.stategraph import DEFAULT_LABEL_LIMIT, StateGraph
from verifier.trace import Names, Trace

FONT = "Helvetica"
TURN_END_COLOR = "#1f5fbf"
TRACE_COLOR = "#c0392b"
LOOP_COLOR = "#7d3c98"
SKIP_COLOR = "#9a9a9a"
MAX_ACTIONS_IN_NODE = 6
WHOLE_GRAPH_LIMIT = DEFAULT_LABEL_LIMIT   # up to this many states a graph is drawn whole
SMALL_GRAPH_LIMIT = 50      # up to this many, each state is a box listing its values
BOX_TEXT_WIDTH = 34         # characters of a line in a state's box


# ---------------------------------------------------------------- DOT helpers

def q(text: object) -> str:
    """A DOT double-quoted string (`&` as `&amp;`: Graphviz reads `&name;` in a label as an entity)."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("&", "&amp;") + '"'


def h(text: object) -> str:
    """Text for a DOT HTML-like label."""
    return html.escape(str(text), quote=True)


def _attrs(**kw: Any) -> str:
    items = [f"{k}={v}" for k, v in kw.items() if v is not None]
    return f" [{', '.join(items)}]" if items else ""


def _wrap(text: str, width: int = 28) -> list[str]:
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    if line:
        lines.append(line)
    return lines


# ---------------------------------------------------------------- the phase diagram

@dataclass
class TracePath:
    """Where a trace goes on the phase diagram."""

    start: str | None = None
    edges: dict[tuple[str, str, bool], list[int]] = field(default_factory=dict)   # (src, dst, turn_end) -> steps
    loop_edges: set[tuple[str, str, bool]] = field(default_factory=set)
    visits: dict[str, list[int]] = field(default_factory=dict)                  # phase -> steps taken in it
    actions: dict[str, list[str]] = field(default_factory=dict)                 # phase -> "3 draw"
    end: str | None = None                                                      # where a finite trace stops


def trace_path(model: Model, trace: Trace) -> TracePath:
    """The phases a trace visits and the phase changes it makes, with step numbers (1-based)."""
    path = TracePath()
    initial = dict(trace.initial)
    here = initial.get("phase")
    if not isinstance(here, str):
        return path
    path.start = here
    path.visits.setdefault(here, [])
    kinds = {a.name: a.kind for a in model.actions}
    for i, step in enumerate(trace.steps, 1):
        changes = dict(step.changes)
        in_loop = trace.loop_start is not None and i - 1 >= trace.loop_start
        if "phase" in changes or kinds.get(step.action) in (ActionKind.ADVANCE, ActionKind.TURN_END):
            src, dst = changes.get("phase", (here, here))
            key = (str(src), str(dst), kinds.get(step.action) is ActionKind.TURN_END)
            path.edges.setdefault(key, []).append(i)
            if in_loop:
                path.loop_edges.add(key)
            here = str(dst)
            path.visits.setdefault(here, [])
        else:
            path.visits.setdefault(here, []).append(i)
            path.actions.setdefault(here, []).append(f"{i} {step.label}")
    if trace.loop_start is None:
        path.end = here
    return path


def _children(model: Model) -> dict[str | None, list[Phase]]:
    out: dict[str | None, list[Phase]] = {}
    for p in model.phases:
        out.setdefault(p.parent, []).append(p)
    return out


def _phase_actions(model: Model) -> dict[str | None, list[Action]]:
    return actions_by_phase(model)


def edge_style(model: Model, e: PhaseEdge) -> dict[str, Any]:
    """How a phase edge is drawn (without a trace). An arrow taken only under a condition (the
    `next:` entry's `when`, an `otherwise` entry's, the phase's `exit_when`) carries it, wrapped,
    below its label, as the legend says."""
    leaves = [p.name for p in model.leaf_phases()]
    label = e.label
    condition = _wrap(edge_condition(model, e), 40)
    if e.turn_end:
        early = bool(leaves) and e.src != leaves[-1]
        if early and label in ("", "next turn"):
            label = "early exit: the turn ends"
        elif early:
            label = f"early exit: {label}"
        return dict(color=q(TURN_END_COLOR), fontcolor=q(TURN_END_COLOR), penwidth="2", style="bold",
                    label=q("\n".join([label or "next turn", *condition])), constraint="false")
    if label.startswith("skip "):
        return dict(color=q(SKIP_COLOR), fontcolor=q(SKIP_COLOR), style="dotted", constraint="false",
                    tooltip=q(" ".join([label, *condition])), label=None, fontsize=None)
    lines = [x for x in [label, *condition] if x]
    return dict(style="dashed" if e.guarded or condition else "solid", label=q("\n".join(lines)) if lines else None)


def phase_dot(model: Model, trace: Trace | None = None, title: str | None = None,
              name: str = "phases") -> str:
    """The phase diagram of `model` as DOT; with `trace`, its path drawn in red."""
    path = trace_path(model, trace) if trace is not None else None
    kids = _children(model)
    acts = _phase_actions(model)
    leaves = [p.name for p in model.leaf_phases()]
    out = [f"digraph {q(name)} {{",
           f"  graph [rankdir=TB, fontname={q(FONT)}, fontsize=12, nodesep=0.35, ranksep=0.45, "
           f"labelloc=t, newrank=true{', label=' + q(title) if title else ''}];",
           f"  node [shape=box, style=\"rounded,filled\", fillcolor=\"#f7f7f7\", fontname={q(FONT)}, "
           f"fontsize=11, margin=\"0.12,0.06\"];",
           f"  edge [fontname={q(FONT)}, fontsize=9, arrowsize=0.7];"]
    if not model.phases:
        out.append(f"  none [shape=note, label={q('This model has no phases: its actions are plain guarded commands.')}];")
        out.append("}")
        return "\n".join(out) + "\n"

    def node(p: Phase, indent: str) -> None:
        lines = [f'<b>{h(p.name)}</b>' + ('' if p.mandatory else ' <i>(optional)</i>')]
        words = action_words(acts.get(p.name, []))
        shown = words[:MAX_ACTIONS_IN_NODE]
        if len(words) > MAX_ACTIONS_IN_NODE:
            shown.append(f"and {len(words) - MAX_ACTIONS_IN_NODE} more")
        for text in shown:
            lines.append(f'<font point-size="9">{h(text)}</font>')
        style = "rounded,filled" if p.mandatory else "rounded,filled,dashed"
        attrs: dict[str, Any] = dict(style=q(style), tooltip=q(str(p.rule) if p.rule else p.name))
        if path is not None and p.name in path.visits:
            steps = path.actions.get(p.name, [])
            for s in steps[:8]:
                lines.append(f'<font point-size="9" color="{TRACE_COLOR}">{h(s)}</font>')
            if len(steps) > 8:
                lines.append(f'<font point-size="9" color="{TRACE_COLOR}">{h(f"and {len(steps) - 8} more steps")}</font>')
            if path.end == p.name:
                lines.append(f'<font point-size="9" color="{TRACE_COLOR}"><b>■ the trace ends here</b></font>')
            attrs.update(color=q(TRACE_COLOR), penwidth="2.5", fillcolor=q("#fde2de"))
        attrs["label"] = "<" + "<br/>".join(lines) + ">"
        out.append(f"{indent}{q(p.name)}{_attrs(**attrs)};")

    def cluster(p: Phase, indent: str) -> None:
        style = "rounded" if p.mandatory else "rounded,dashed"
        label = p.name + ("" if p.mandatory else " (optional)")
        out.append(f"{indent}subgraph {q('cluster_' + p.name)} {{")
        out.append(f"{indent}  graph [label={q(label)}, style={q(style)}, color=\"#555555\", "
                   f"fontname={q(FONT)}, fontsize=11, tooltip={q(str(p.rule) if p.rule else p.name)}];")
        for c in kids.get(p.name, []):
            (cluster if kids.get(c.name) else node)(c, indent + "  ")
        out.append(f"{indent}}}")

    out.append(f"  start [shape=circle, style=filled, fillcolor=\"#333333\", label=\"\", width=0.18, "
               f"tooltip={q('the turn starts here')}];")
    for p in kids.get(None, []):
        (cluster if kids.get(p.name) else node)(p, "  ")
    anywhere = action_words(acts.get(None, []))
    if anywhere:
        words = "<br/>".join(h(w) for w in anywhere[:MAX_ACTIONS_IN_NODE])
        if len(anywhere) > MAX_ACTIONS_IN_NODE:
            words += f"<br/>and {len(anywhere) - MAX_ACTIONS_IN_NODE} more"
        out.append(f'  anyphase [shape=note, style=filled, fillcolor="#fffbe6", '
                   f'label=<<b>in any phase</b><br/><font point-size="9">{words}</font>>];')
    start_attrs: dict[str, Any] = {}
    if path is not None and path.start is not None:
        start_attrs = dict(color=q(TRACE_COLOR), penwidth="2.5", label=q("start"), fontcolor=q(TRACE_COLOR))
    out.append(f"  start -> {q(leaves[0])}{_attrs(**start_attrs)};")
    for e in model.phase_edges:
        attrs = edge_style(model, e)
        if path is not None:
            key = (e.src, e.dst, e.turn_end)
            steps = path.edges.get(key)
            if steps:
                color = LOOP_COLOR if key in path.loop_edges else TRACE_COLOR
                label = _steps_label(steps)
                attrs.update(color=q(color), fontcolor=q(color), penwidth="3", style="bold",
                             label=q(label + (f" ({e.label})" if e.label and not e.label.startswith("skip") else "")
                                     + (" ↻" if key in path.loop_edges else "")))
            else:
                attrs.update(color=q("#c8c8c8"), fontcolor=q("#b0b0b0"))
        out.append(f"  {q(e.src)} -> {q(e.dst)}{_attrs(**attrs)};")
    out.append("}")
    return "\n".join(out) + "\n"


def _steps_label(steps: Sequence[int]) -> str:
    if len(steps) > 6:
        return "steps " + ", ".join(map(str, steps[:5])) + f", … ({len(steps)} times)"
    return ("step " if len(steps) == 1 else "steps ") + ", ".join(map(str, steps))


# ---------------------------------------------------------------- the state graph

def state_dot(sg: StateGraph, limit: int = WHOLE_GRAPH_LIMIT, name: str = "states") -> str:
    """The whole state graph when it has at most `limit` states, else its quotient by phase
    (or by BFS depth for a model without phases)."""
    if sg.states <= limit and sg.complete:
        return _whole_dot(sg, name)
    return _quotient_dot(sg, name)


def state_graph_kind(sg: StateGraph, limit: int = WHOLE_GRAPH_LIMIT) -> str:
    """boxes (every state, each listing its values), whole (every state as a circle), or grouped
    by phase or depth."""
    if sg.states <= limit and sg.complete:
        return "boxes" if _boxed(sg) else "whole"
    return "phase" if sg.model.phases else "depth"


def _boxed(sg: StateGraph) -> bool:
    return sg.states <= SMALL_GRAPH_LIMIT and len(sg.values) == sg.states


def _state_texts(sg: StateGraph) -> tuple[dict[int, str], list[str]]:
    """Per state, the values that set it apart (the variables whose value differs between states;
    the phase is its cluster), wrapped for a box; and the values every state shares."""
    names = {_var_of(slot) for state in sg.values.values() for slot, _ in state}
    clustered = {PHASE_VAR} if sg.model.phases else set()
    varying = {v for v in names if _differs(sg, v)} - clustered
    said = Names.of(sg.model)

    def items(state, keep) -> list[str]:
        return trace_view.compact_items([(said.slot(k), said.value(k, v)) for k, v in state if keep(_var_of(k))])

    texts = {n: _wrap_items(items(state, lambda v: v in varying)) for n, state in sg.values.items()}
    first = next(iter(sg.values.values()), ())
    return texts, items(first, lambda v: v not in varying | clustered)


def _var_of(slot: str) -> str:
    return slot.partition("[")[0]


def _differs(sg: StateGraph, var: str) -> bool:
    seen = {tuple((k, v) for k, v in state if _var_of(k) == var) for state in sg.values.values()}
    return len(seen) > 1


def _wrap_items(items: list[str], width: int = BOX_TEXT_WIDTH) -> str:
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 2 + len(item) <= width:
            lines[-1] += ", " + item
        else:
            lines.append(item)
    return "\n".join(lines)


def _header(name: str, rankdir: str = "TB") -> list[str]:
    return [f"digraph {q(name)} {{",
            f"  graph [rankdir={rankdir}, fontname={q(FONT)}, fontsize=11, nodesep=0.25, ranksep=0.35, newrank=true];",
            f"  node [fontname={q(FONT)}, fontsize=9];",
            f"  edge [fontname={q(FONT)}, fontsize=8, arrowsize=0.6];"]


def _whole_dot(sg: StateGraph, name: str) -> str:
    """Every state: up to SMALL_GRAPH_LIMIT states as a box listing the values that set it apart
    (the graph's label gives those all share), beyond as a numbered circle (its values in the
    tooltip). States are numbered by depth, then by their full text, so the drawing does not
    depend on the order in which the engine happened to find them."""
    g = sg.graph
    canon = {n: k for k, n in enumerate(sorted(g.nodes, key=lambda n: (g.nodes[n].get("depth", 0),
                                                                       sg.labels.get(n, ""), n)))}
    out = _header(name)
    boxed = _boxed(sg)
    texts: dict[int, str] = {}
    if boxed:
        texts, common = _state_texts(sg)
        out.append('  node [shape=box, style="rounded,filled", fillcolor="#f2f2f2", margin="0.08,0.03"];')
        if common:
            out.append(f"  graph [label={q(_wrap_items(['in every state: ' + common[0], *common[1:]], 90))}, "
                       "labelloc=b, labeljust=l, fontsize=9];")
    else:
        out.append('  node [shape=circle, style=filled, fillcolor="#f2f2f2", width=0.3, fixedsize=false, '
                   'margin=0.02];')
    by_phase: dict[str | None, list[int]] = {}
    for n, data in g.nodes(data=True):
        by_phase.setdefault(data.get("phase"), []).append(n)
    order = [p.name for p in sg.model.leaf_phases()] if sg.model.phases else [None]
    for phase in order + [p for p in by_phase if p not in order]:
        nodes = by_phase.get(phase, [])
        if not nodes:
            continue
        indent = "  "
        if phase is not None:
            out.append(f"  subgraph {q('cluster_' + str(phase))} {{")
            out.append(f"    graph [label={q(phase)}, style=\"rounded\", color=\"#999999\"];")
            indent = "    "
        for n in sorted(nodes, key=canon.__getitem__):
            data = g.nodes[n]
            text = f"s{canon[n]}" + (f"\n{texts[n]}" if texts.get(n) else "")
            attrs: dict[str, Any] = dict(label=q(text), tooltip=q(sg.labels.get(n, f"state {canon[n]}")))
            if n in sg.deadlocks:
                attrs.update(fillcolor=q("#f5b7b1"), color=q(TRACE_COLOR), penwidth="2")
            elif n in sg.finals:
                attrs.update({"peripheries": "2"} if boxed else {"shape": "doublecircle"}, fillcolor=q("#d5f5e3"))
            if data.get("initial"):
                attrs.update(penwidth="2.5", color=q("#000000"))
            out.append(f"{indent}s{canon[n]}{_attrs(**attrs)};")
        if phase is not None:
            out.append("  }")
    initial = [n for n, d in g.nodes(data=True) if d.get("initial")]
    if initial:
        out.append('  init [shape=point, width=0.12, label=""];')
        for n in sorted(initial, key=canon.__getitem__):
            out.append(f"  init -> s{canon[n]};")
    merged: dict[tuple[int, int], list[str]] = {}
    for src, dst, data in g.edges(data=True):
        label = data.get("action", "")
        choice = data.get("choice") or ()
        if choice:
            label += "(" + ", ".join(f"{k}={v}" for k, v in choice) + ")"
        key = (canon[src], canon[dst])
        if label not in merged.setdefault(key, []):
            merged[key].append(label)
    kinds = {a.name: a.kind for a in sg.model.actions}
    for (src, dst), labels in sorted(merged.items()):
        turn = any(kinds.get(lbl.split("(")[0]) is ActionKind.TURN_END for lbl in labels)
        labels = sorted(labels)
        attrs = dict(label=q(" / ".join(labels)), tooltip=q(" / ".join(labels)))
        if turn:
            attrs.update(color=q(TURN_END_COLOR), fontcolor=q(TURN_END_COLOR), constraint="false")
        out.append(f"  s{src} -> s{dst}{_attrs(**attrs)};")
    out.append("}")
    return "\n".join(out) + "\n"


def quotient_counts(sg: StateGraph) -> tuple[dict[Any, dict[str, int]], dict[tuple[Any, Any, bool], int]]:
    """Per block (a leaf phase, or a BFS depth): states, initial, stuck and final counts;
    per (block, block, ends the turn): the number of transitions between them."""
    g = sg.graph
    by_phase = bool(sg.model.phases)

    def block(n: int) -> Any:
        data = g.nodes[n]
        return data.get("phase") if by_phase else data.get("depth", 0)

    nodes: dict[Any, dict[str, int]] = {}
    for n, data in g.nodes(data=True):
        c = nodes.setdefault(block(n), {"states": 0, "initial": 0, "stuck": 0, "final": 0})
        c["states"] += 1
        c["initial"] += bool(data.get("initial"))
        c["stuck"] += n in sg.deadlocks
        c["final"] += n in sg.finals
    turn_end = {a.name for a in sg.model.actions if a.kind is ActionKind.TURN_END}
    edges: dict[tuple[Any, Any, bool], int] = {}
    for src, dst, action in g.edges(data="action"):
        key = (block(src), block(dst), action in turn_end)
        edges[key] = edges.get(key, 0) + 1
    return nodes, edges


def _quotient_dot(sg: StateGraph, name: str) -> str:
    nodes, edges = quotient_counts(sg)
    model = sg.model
    out = _header(name)
    out.append('  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", fontsize=10];')
    if not sg.complete:
        out.append(f"  graph [label={q('partial: ' + sg.reason)}, labelloc=b, fontcolor={q(TRACE_COLOR)}];")

    def node_label(key: Any, title: str) -> str:
        c = nodes.get(key, {"states": 0, "initial": 0, "stuck": 0, "final": 0})
        lines = [f"<b>{h(title)}</b>", f"{c['states']:,} states"]
        if c["initial"]:
            lines.append(f'<font point-size="8">{c["initial"]:,} initial</font>')
        if c["final"]:
            lines.append(f'<font point-size="8" color="#1e8449">{c["final"]:,} end of game</font>')
        if c["stuck"]:
            lines.append(f'<font point-size="8" color="{TRACE_COLOR}">{c["stuck"]:,} stuck (deadlock)</font>')
        return "<" + "<br/>".join(lines) + ">"

    if model.phases:
        kids = _children(model)

        def put(p: Phase, indent: str) -> None:
            if kids.get(p.name):
                out.append(f"{indent}subgraph {q('cluster_' + p.name)} {{")
                out.append(f"{indent}  graph [label={q(p.name)}, style={q('rounded' if p.mandatory else 'rounded,dashed')}, "
                           f"color=\"#777777\"];")
                for c in kids[p.name]:
                    put(c, indent + "  ")
                out.append(f"{indent}}}")
                return
            counts = nodes.get(p.name)
            attrs: dict[str, Any] = dict(label=node_label(p.name, p.name))
            if not p.mandatory:
                attrs["style"] = q("rounded,filled,dashed")
            if counts is None:
                attrs.update(fillcolor=q("#f4f4f4"), fontcolor=q("#999999"), color=q("#bbbbbb"),
                             tooltip=q("never reached"))
            elif counts["stuck"]:
                attrs.update(color=q(TRACE_COLOR), penwidth="2")
            out.append(f"{indent}{q(p.name)}{_attrs(**attrs)};")

        for p in kids.get(None, []):
            put(p, "  ")
        taken = set()
        for (src, dst, turn), count in sorted(edges.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]), kv[0][2])):
            taken.add((src, dst, turn))
            attrs = dict(label=q(f"{count:,}"), penwidth=q(f"{min(1 + math.log10(count), 4):.1f}"),
                         tooltip=q(f"{count:,} transitions " + (f"within {src}" if src == dst and not turn
                                                                else f"from {src} to {dst}")
                                   + (" (the turn ends)" if turn else "")))
            if turn:
                attrs.update(color=q(TURN_END_COLOR), fontcolor=q(TURN_END_COLOR), constraint="false")
            out.append(f"  {q(src)} -> {q(dst)}{_attrs(**attrs)};")
        for e in model.phase_edges:
            if (e.src, e.dst, e.turn_end) not in taken:
                never = _attrs(style='dashed', color=q('#bbbbbb'), fontcolor=q('#999999'), label=q('never taken'),
                               constraint='false')
                out.append(f"  {q(e.src)} -> {q(e.dst)}{never};")
    else:
        for depth in sorted(nodes):
            out.append(f"  d{depth}{_attrs(label=node_label(depth, f'depth {depth}'))};")
        merged: dict[tuple[Any, Any], int] = {}
        for (src, dst, _), count in edges.items():
            merged[(src, dst)] = merged.get((src, dst), 0) + count
        for (src, dst), count in sorted(merged.items()):
            out.append(f"  d{src} -> d{dst}{_attrs(label=q(f'{count:,}'))};")
    out.append("}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- rendering

_PROLOG = re.compile(r"^.*?(?=<svg\b)", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)


LAYOUT_SECONDS = 120.0     # one diagram's layout; past it the diagram is drawn as a note


def render_svg(dot: str) -> str:
    """Lay out and draw DOT text as SVG (Graphviz `dot`, through pygraphviz), in a forked child
    where the platform forks: Graphviz aborts the process on some graphs (a failed assertion in
    its C code) and has no clock, so a layout that fails or takes too long costs its diagram (a
    note in its place, the DOT source kept), never the run."""
    if past_deadline():
        return _note_svg(f"Not laid out: {deadline_name()} had passed; the DOT source is beside the page.")
    if "fork" not in multiprocessing.get_all_start_methods():
        return _layout(dot)
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_layout_in_child, args=(dot, send), daemon=True)
    child.start()
    send.close()
    try:
        svg = receive.recv() if receive.poll(LAYOUT_SECONDS) else None
    except EOFError:                      # the child died: Graphviz aborted
        svg = None
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
    return svg if svg is not None else _note_svg("Graphviz could not lay out this diagram; its DOT source is "
                                                 "beside the page.")


def _layout(dot: str) -> str:
    import pygraphviz

    graph = pygraphviz.AGraph(string=dot)
    with _without_fontconfig_warnings():
        data = graph.draw(format="svg", prog="dot")
    return data.decode("utf-8") if isinstance(data, bytes) else str(data)


def _layout_in_child(dot: str, send) -> None:
    faulthandler.disable()                # an abort here is expected and handled: no dump of it
    try:
        send.send(_layout(dot))
    except Exception:                     # a Graphviz error: the parent draws the note
        send.send(None)
    finally:
        send.close()


def _note_svg(text: str) -> str:
    """A diagram that could not be drawn: one line saying why."""
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="560" height="40" viewBox="0 0 560 40">'
            f'<text x="8" y="24" font-family="Helvetica" font-size="12">{html.escape(text)}</text></svg>')


@contextmanager
def _without_fontconfig_warnings() -> Iterator[None]:
    """Graphviz's own fontconfig warns (on file descriptor 2, from C) about system font
    configuration newer than itself; those lines are dropped, anything else written is kept."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            for line in caught.read().decode("utf-8", "replace").splitlines(keepends=True):
                if not line.startswith("Fontconfig "):
                    sys.stderr.write(line)


def inline_svg(svg: str, prefix: str, label: str = "") -> str:
    """An SVG document as an element to put inside HTML: no XML prolog or comments, element
    ids prefixed (several diagrams share one page), scaled to the page width."""
    body = _COMMENT.sub("", _PROLOG.sub("", svg, count=1)).strip()
    body = re.sub(r'\bid="([^"]*)"', lambda m: f'id="{prefix}-{m.group(1)}"', body)
    body = re.sub(r'(xlink:href|href)="#([^"]*)"', lambda m: f'{m.group(1)}="#{prefix}-{m.group(2)}"', body)
    body = re.sub(r"url\(#([^)]*)\)", lambda m: f"url(#{prefix}-{m.group(1)})", body)
    return re.sub(r"<svg\b", f'<svg class="diagram" role="img" aria-label="{html.escape(label or prefix)}"',
                  body, count=1)
