"""Mermaid export of the phase diagram, for wikis and Markdown documents.

Conventions (read back by `verifier.lang.mermaid_import`, so an export imports
to the same turn structure):

- each leaf phase is a node whose id is its name (label: the name, then its
  actions); a phase with steps is a `subgraph` with the same id;
- optional phases carry the class `optional` (drawn dashed);
- `-->` is the way on, `-.->` a conditional way or one that skips optional
  phases, `==>` the end of the turn (back to the first phase); labels as `|...|`;
  an arrow's condition (the phase's `exit_when` and the `next:` entry's `when`) is
  the label's last line, `when: ...` (`otherwise, when: ...` for an `{otherwise: P}` entry);
- the conditions as the model writes them, and the declarations of what they read (variables,
  enums, parameters: every field of their declarations) and of the phases (`rule:`, `doc:`),
  follow as comments `%% turnproof ...` (`round_trip_lines`), so that the imported skeleton keeps
  its conditional arrows, its `otherwise:` entries and its `exit_when`s, and loads. Not carried:
  the actions (a node lists their names; the skeleton has none) and the readings (the chart is
  of one reading, named in the header comment);
- an action is listed in the phases it can fire in (`report.phase_actions`: its
  `phase:`, or the phases its guard allows), "in any phase" only when none is ruled out.
"""
from __future__ import annotations

import json
import re
from typing import Any

from verifier.ir.expr import TRUE, Const, Expr, Param, fold, pretty, state_vars, walk
from verifier.ir.model import (
    ACTIVE_VAR,
    PHASE_ENUM,
    PHASE_VAR,
    BoolType,
    Citation,
    EnumType,
    IntType,
    Model,
    Overflow,
    ParamDecl,
    Phase,
    Reset,
    Type,
    Variable,
    type_bounds,
)
from verifier.lang.sequences import as_written
from verifier.report.escaping import mermaid_text
from verifier.report.phase_actions import ANY_PHASE, action_words, actions_by_phase, edge_condition
from verifier.trace import Names

ROUND_TRIP = "%% turnproof "     # a comment import-mermaid reads back (`round_trip_lines`)

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
    acts = {phase: action_words(actions_of) for phase, actions_of in actions_by_phase(model).items()}
    reading = f", reading {model.variant}" if model.variant else ""
    out = [f"flowchart {direction}",
           f"    %% {mermaid_text(model.name)}{mermaid_text(reading)}: turn structure (exported by turnproof)"]
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
    if any(e.condition != TRUE for e in model.phase_edges):
        out.append("    %% an arrow is taken when its condition (when: ...) holds and no required (must) "
                   "action of its phase is left")
    for e in model.phase_edges:
        conditional = e.guarded or e.condition != TRUE or e.label.startswith("skip ")
        arrow = "==>" if e.turn_end else ("-.->" if conditional else "-->")
        lines = [e.label or ("next turn" if e.turn_end else ""), edge_condition(model, e)]
        text = f"|{_label(*(line for line in lines if line))}|" if any(lines) else ""
        out.append(f"    {node_id(e.src)} {arrow}{text} {node_id(e.dst)}")
    out += round_trip_lines(model)
    anywhere = acts.get(ANY_PHASE, [])
    if actions and anywhere:
        out.append(f"    %% in any phase: {mermaid_text(', '.join(anywhere))}")
    if optional:
        out.append("    classDef optional stroke-dasharray: 5 5")
        out.append(f"    class {','.join(optional)} optional")
    return "\n".join(out) + "\n"


def arrow_key(src: str, dst: str, turn_end: bool) -> str:
    """How a `%% turnproof` line names an arrow: `Draw --> Main`, `Cleanup ==> Draw` (the end of the turn)."""
    return f"{node_id(src)} {'==>' if turn_end else '-->'} {node_id(dst)}"


def round_trip_lines(model: Model) -> list[str]:
    """The arrows' conditions as the model writes them, for `import-mermaid`: `declare {...}` (the
    players, enums, parameters and variables they read and the phases' citations and docs, as JSON in
    the model language's terms), `exit_when NODE: EXPR`, `when SRC --> DST: EXPR` (the entry's
    condition, earlier entries of a `next:` negated in it) and `otherwise SRC --> DST`."""
    enum_name = model.enum_value_name if model.enums else None
    written = Names.as_written(model)

    def text(e: Expr) -> str:
        return pretty(as_written(model, fold(e)), enum_name, written)

    exits = {e.src: e.exit_when for e in model.phase_edges if e.exit_when != TRUE}
    conditions = [*exits.values(), *(e.when for e in model.phase_edges if not e.otherwise)]
    out = [f"    {ROUND_TRIP}declare {json.dumps(_declarations(model, conditions), ensure_ascii=True)}"]
    out += [f"    {ROUND_TRIP}exit_when {node_id(src)}: {text(e)}" for src, e in exits.items()]
    for e in model.phase_edges:
        if e.otherwise:
            out.append(f"    {ROUND_TRIP}otherwise {arrow_key(e.src, e.dst, e.turn_end)}")
        elif e.when != TRUE:
            out.append(f"    {ROUND_TRIP}when {arrow_key(e.src, e.dst, e.turn_end)}: {text(e.when)}")
    return out


def _declarations(model: Model, conditions: list[Expr]) -> dict[str, Any]:
    """The players (always: the import would otherwise assume two), the enums, variables (declared as
    in a model file) and parameters that `conditions` read (a sequence's length stands for the
    sequence, declared as one), and each phase's `rule:` and `doc:`. The model language lets
    conditions read no implicit variable but `phase` and `active` (their `once` flags, the rounds'
    flags)."""
    sequence_of = {v.seq_length: v.name for v in model.variables if v.seq_length is not None}
    read = {sequence_of.get(n, n) for c in conditions for n in state_vars(c)} - {PHASE_VAR, ACTIVE_VAR}
    variables = [v for v in model.variables if v.name in read]
    assert not any(v.implicit for v in variables), "conditions read no implicit variable but phase and active"
    enums = {c.enum for c in conditions for c in walk(c) if isinstance(c, Const) and c.enum is not None}
    for v in variables:
        enums |= {t.name for t in (v.type, v.index, *v.dims) if isinstance(t, EnumType)}
    enums.discard(PHASE_ENUM)
    declared = [*conditions, *(i for v in variables for i in v.init if i is not None),
                *(bound for v in variables for t in (v.type, v.index, *v.dims) if isinstance(t, IntType)
                  for bound in (t.lo, t.hi))]
    params = {n.name for e in declared for n in walk(e) if isinstance(n, Param)}
    out: dict[str, Any] = {"players": model.players}
    if enums:
        out["enums"] = {t.name: list(t.values) for t in model.enums if t.name in enums}
    if params & {p.name for p in model.params}:
        out["params"] = {p.name: _parameter(model, p) for p in model.params if p.name in params}
    if variables:
        out["variables"] = {v.name: _declaration(model, v) for v in variables}
    out["phases"] = {p.name: _phase(p) for p in model.phases}
    return out


def _citation(c: Citation) -> dict[str, str]:
    return {"section": c.section, "text": c.text}


def _phase(p: Phase) -> dict[str, Any]:
    """A phase's citation and doc as a model file writes them ({}: neither)."""
    return {**({"rule": _citation(p.rule)} if p.rule else {}), **({"doc": p.doc} if p.doc else {})}


def _parameter(model: Model, p: ParamDecl) -> dict[str, Any]:
    """A parameter's declaration, its default the value this chart is drawn at."""
    value = model.params_dict.get(p.name)
    out: dict[str, Any] = {"default": p.default if value is None else value}
    out |= {key: x for key, x in (("min", p.lo), ("max", p.hi), ("doc", p.doc)) if x not in (None, "")}
    return out


def _declaration(model: Model, v: Variable) -> dict[str, Any]:
    def domain(t: Type | None, players: bool = False) -> str:
        if players:
            return "player"
        if isinstance(t, EnumType):
            return t.name
        if isinstance(t, IntType):
            return f"{pretty(fold(t.lo))}..{pretty(fold(t.hi))}"
        return "bool"

    out: dict[str, Any] = {"type": "player" if v.holds_player else domain(v.type)}
    inits = [None if i is None else _value(model, v.type, i) for i in v.init]
    if v.seq_length is not None:
        length = model.var(v.seq_length).init[0]
        assert isinstance(length, Const), "a sequence's length starts at the number of its init's elements"
        capacity = type_bounds(v.dims[1])[1] + 1 if v.dims else v.size()
        out["type"] = f"seq[{out['type']}, 0..{capacity}]"
        if v.dims:                       # an array of sequences: each starts with the same elements
            out["per"] = domain(v.dims[0], v.rows_by_player)
        out["init"] = inits[:length.value]
    elif v.dims:
        out["per"] = [domain(v.dims[0], v.rows_by_player), domain(v.dims[1])]
    elif v.index is not None:
        out["per"] = domain(v.index, v.by_player)
    if v.seq_length is None and any(i is not None for i in inits):     # null: any value
        if len(set(map(str, inits))) == 1:
            out["init"] = inits[0]
        elif v.dims:
            lo, hi = type_bounds(model.instantiate().var(v.name).dims[0])
            width = len(inits) // (hi - lo + 1)
            out["init"] = [inits[k:k + width] for k in range(0, len(inits), width)]
        else:
            out["init"] = inits
    if v.reset is not Reset.NEVER:
        out["reset"] = v.reset.value
    if v.overflow is not Overflow.UNSPECIFIED:
        out["overflow"] = v.overflow.value
    if v.overflow_rule is not None:
        out["overflow_rule"] = _citation(v.overflow_rule)
    if v.label:
        out["label"] = v.label
    if v.value_names:
        out["values"] = list(v.value_names)
    if v.doc:
        out["doc"] = v.doc
    return out


def _value(model: Model, t: Type, e: Expr) -> Any:
    """An initial value as a model file writes it (an enum value by name, true/false, a number)."""
    e = fold(e)
    if isinstance(e, Const):
        if isinstance(t, BoolType) or e.is_bool:
            return bool(e.value)
        if isinstance(t, EnumType):
            return t.values[e.value]
        return e.value
    return pretty(e, model.enum_value_name if model.enums else None, Names.as_written(model))
