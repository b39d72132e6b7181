"""The structure of a model as JSON: phases, steps, phase edges, actions and variables with
their rule citations (`turnproof export --to json`), for wikis, docs and other tools."""
from __future__ import annotations

from typing import Any

from verifier import __version__
from verifier.ir.expr import TRUE, pretty
from verifier.ir.model import EnumType, IntType, Model
from verifier.trace import Names


def _type(t: Any) -> Any:
    if isinstance(t, EnumType):
        return {"enum": t.name, "values": list(t.values)}
    if isinstance(t, IntType):
        return {"int": [pretty(t.lo), pretty(t.hi)]}
    return "bool"


def _cite(c: Any) -> Any:
    return None if c is None else {"section": c.section, "text": c.text}


def model_json(model: Model) -> dict[str, Any]:
    enum_name = model.enum_value_name if model.enums else None
    written = Names.as_written(model)       # a 2-D array's element with its two indices, as the model writes it

    def show(e: Any) -> str:
        return pretty(e, enum_name, written)

    return {
        "turnproof": __version__,
        "format": "turnproof-model-structure/1",
        "model": model.name,
        "doc": model.doc,
        "players": model.players,
        "variant": model.variant,
        "params": [{"name": p.name, "value": model.params_dict.get(p.name, p.default), "default": p.default,
                    "min": p.lo, "max": p.hi, "doc": p.doc} for p in model.params],
        "variants": [{"name": v.name, "doc": v.description, "rule": _cite(v.rule)} for v in model.variants],
        "variables": [{"name": v.name, "type": _type(v.type), "index": None if v.index is None else _type(v.index),
                       "per_player": v.by_player, "dims": [_type(d) for d in v.dims] or None,
                       "init": [None if i is None else show(i) for i in v.init],
                       "overflow": v.overflow.value, "overflow_rule": _cite(v.overflow_rule),
                       "reset": v.reset.value, "implicit": v.implicit, "doc": v.doc,
                       "label": v.label or None, "values": list(v.value_names) or None}
                      for v in model.variables],
        "names": Names.of(model).to_json(),      # how people read the variables: labels, value names, elements
        "phases": [{"name": p.name, "parent": p.parent, "mandatory": p.mandatory, "rule": _cite(p.rule),
                    "doc": p.doc} for p in model.phases],
        "phase_edges": [{"from": e.src, "to": e.dst, "label": e.label, "conditional": e.guarded,
                         "turn_end": e.turn_end, "condition": None if e.condition == TRUE else show(e.condition)}
                        for e in model.phase_edges],
        "actions": [{"name": a.name, "kind": a.kind.value, "phase": a.phase if a.phase is not None else (list(a.phases) or None),
                     "modality": a.modality.value,
                     "once_group": a.once_group or None,     # `must: {once: G}`: one action of G is due each visit
                     "choices": [{"name": c.name, "type": _type(c.type), "values": list(c.value_names) or None}
                                 for c in a.choices],
                     "guard": show(a.guard),
                     "effects": {show(x.target): show(x.value) for x in a.effects},
                     "by": None if a.actor is None else show(a.actor),
                     "rule": _cite(a.rule), "target_phase": a.target_phase, "doc": a.doc}
                    for a in model.actions],
        "initially": show(model.initially),
        "end": show(model.end),
        "acknowledged": [{"kind": k.kind, "subject": k.subject, "reason": k.reason} for k in model.acknowledged],
    }
