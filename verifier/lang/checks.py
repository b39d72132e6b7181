"""Whole-model checks run after loading: names in lists, action phases, static ranges, must guards."""
from __future__ import annotations

from typing import TYPE_CHECKING

from verifier.ir.expr import Const, state_vars
from verifier.ir.model import ActionKind, IntType, Modality, Model, Overflow
from verifier.lang.yaml_source import suggest

if TYPE_CHECKING:
    from verifier.lang.loader import Loader


def _action_known(name: str, names: set[str]) -> bool:
    """An action name; `end Draw` also names `end Draw -> Play` (as in claims)."""
    return name in names or any(n.split(" -> ")[0] == name for n in names)


def check_names(loader: "Loader", model: Model) -> None:
    """`fairness`, `ordered` and `progress` name things that exist; actions name leaf phases."""
    declared = {a.name for a in model.actions} | set(loader.action_names)
    listed = [("fairness", i, name) for i, name in enumerate(model.fairness)]
    listed += [("ordered", i, pair) for i, pair in enumerate(model.ordered_pairs)]
    for key, i, entry in listed:
        for name in entry if isinstance(entry, tuple) else (entry,):
            if not _action_known(name, declared):
                loader.sink.error(f"{key} names an unknown action '{name}'", loader.root.child(key).child(i).span,
                                  hint=suggest(name, sorted(declared), "actions"))
    for i, name in enumerate(model.progress):
        if name not in loader.scope.variables:
            loader.sink.error(f"progress names an unknown variable '{name}'",
                              loader.root.child("progress").child(i).span,
                              hint=suggest(name, list(loader.scope.variables), "variables"))
    leaves = [p.name for p in model.leaf_phases()]
    parents = {p.parent for p in model.phases if p.parent}
    for a in model.rule_actions():
        if a.phase is None or a.phase in leaves:
            continue
        if a.phase in parents:
            steps = [p.name for p in model.phases if p.parent == a.phase]
            loader.sink.error(f"action {a.name} belongs to phase '{a.phase}', which has steps", a.span,
                              hint=f"actions belong to a step: {', '.join(steps)}")
        else:
            loader.sink.error(f"action {a.name} belongs to an unknown phase '{a.phase}'", a.span,
                              hint=f"leaf phases: {', '.join(leaves)}" if leaves else
                              "declare phases, or drop 'phase:'")


def check_static_ranges(loader: "Loader", model: Model) -> None:
    """A constant initial or assigned value outside the variable's range (parameters fixed) is an error."""
    concrete = model.instantiate()
    for original, var in zip(model.variables, concrete.variables):
        for init in var.init:
            _check_value(loader, var, init, original.span, f"{var.name} starts at")
    for original, action in zip(model.actions, concrete.actions):
        for eff, orig in zip(action.effects, original.effects):
            var = concrete.var(eff.target.name)
            if var.overflow is Overflow.UNSPECIFIED:
                _check_value(loader, var, eff.value, orig.span, f"{action.name} sets {var.name} to")


def _check_value(loader: "Loader", var, value, span, what: str) -> None:
    t = var.type
    if not isinstance(t, IntType) or not all(isinstance(x, Const) for x in (value, t.lo, t.hi)):
        return
    if not t.lo.value <= value.value <= t.hi.value:
        loader.sink.error(f"{what} {value.value}, outside its range {t.lo.value}..{t.hi.value}", span,
                          hint="widen the variable's type or fix the value")


def check_must_guards(loader: "Loader", model: Model) -> None:
    """Warn when a `must` action's guard reads nothing it changes: once enabled it stays enabled."""
    for a in model.actions:
        if a.kind is not ActionKind.RULE or a.modality is not Modality.MUST or not a.effects:
            continue
        changed = {e.target.name for e in a.effects}
        if not (state_vars(a.guard) - {"phase"}) & changed:     # the guard includes `not end`
            loader.sink.warning(f"must action {a.name} stays enabled after it fires: its guard reads nothing "
                                "it changes", a.span,
                                hint="add a condition its effects make false (e.g. 'not drawn'), "
                                     "or the phase can never be left")
