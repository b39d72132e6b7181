"""Check two versions of a model and compare them (see the package doc): claims by id,
findings by key, reachable states projected on the slots both versions share."""
from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from verifier.diagnostics import Diagnostic, UsageError
from verifier.diffing.changes import BehaviourDiff, ClaimDiff, ModelDiff, NewState, OneWay, ReadingPair
from verifier.diffing.versions import resolve, settings
from verifier.ir.model import Variable, type_bounds
from verifier.portfolio.stores import Store, cap_of
from verifier.result import ModelRun, accepting_bounded
from verifier.runner import RunOptions, check_model
from verifier.trace import Trace


@dataclass(frozen=True)
class Readings:
    """How the readings of OLD and NEW are compared: `pairs`, each reading both versions name alike,
    else a renamed one; `old_only`/`new_only`, readings nothing pairs (their claims and findings are
    listed as removed / added); `notes`, each pairing not by name in words."""

    pairs: list[ReadingPair]
    old_only: list[str | None]
    new_only: list[str | None]
    notes: list[str]


def reading_pairs(old: Mapping[str | None, Any], new: Mapping[str | None, Any]) -> Readings:
    """The readings compared, from each version's models by reading name. First by name; where the
    versions share no name and one is a model without readings (its one reading, None), that reading
    against each of the other's (a model that gains readings: each new reading against the old
    rules); else a reading only in OLD with one only in NEW that has the same rules (the models equal
    but for the readings' names) or, failing that, the same declaration (its doc and rule citation):
    a renamed reading. What is left is in one version only."""
    pairs = [ReadingPair(v, v, "name") for v in new if v in old]
    old_left, new_left = [v for v in old if v not in new], [v for v in new if v not in old]
    if not pairs and list(old) == [None]:
        return Readings([ReadingPair(None, v, "no readings") for v in new], [], [],
                        ["OLD declares no readings: its rules compared with each reading of NEW"])
    if not pairs and list(new) == [None]:
        return Readings([ReadingPair(v, None, "no readings") for v in old], [], [],
                        ["NEW declares no readings: its rules compared with each reading of OLD"])
    notes = []
    for why, same in (("the same rules", _same_rules), ("the same doc and rule citation", _same_declaration)):
        for o in list(old_left):
            n = next((n for n in new_left if same(old[o], new[n])), None)
            if n is not None:
                pairs.append(ReadingPair(o, n, why))
                old_left.remove(o)
                new_left.remove(n)
                notes.append(f"reading {o} of OLD is {n} in NEW (renamed, {why}): compared as one")
    notes += [f"reading {v} only in {side}: no reading of {other} has its name, its rules or its doc; its claims "
              f"and findings are listed as {verb}" for side, other, verb, left in
              (("OLD", "NEW", "removed", old_left), ("NEW", "OLD", "added", new_left)) for v in left]
    return Readings(pairs, old_left, new_left, notes)


def _without_reading_names(model: Any) -> Any:
    """The model but for its reading's name, its doc and where its files are."""
    return replace(model, path="", doc="", variant=None, variants=(),
                   definitions=tuple(replace(d, file="") for d in model.definitions))


def _same_rules(old: Any, new: Any) -> bool:
    return bool(_without_reading_names(old) == _without_reading_names(new))


def _same_declaration(old: Any, new: Any) -> bool:
    def declaration(model: Any) -> tuple[str, Any]:
        decl = next(d for d in model.variants if d.name == model.variant)
        return decl.description, decl.rule
    return declaration(old) == declaration(new)


def compare_checks(old_runs: Sequence[ModelRun], new_runs: Sequence[ModelRun], diff: ModelDiff) -> None:
    """Fill in the claim, finding and variant differences of two checks."""
    old_by = {r.model.variant: r for r in old_runs}
    new_by = {r.model.variant: r for r in new_runs}
    diff.variants_removed = [v for v in old_by if v not in new_by]
    diff.variants_added = [v for v in new_by if v not in old_by]
    readings = reading_pairs({v: r.model for v, r in old_by.items()}, {v: r.model for v, r in new_by.items()})
    diff.notes += readings.notes
    diff.readings_compared = readings.pairs
    for pair in readings.pairs:
        old_variant, new_variant = pair.old, pair.new
        old, new = old_by[old_variant], new_by[new_variant]
        variant = new_variant if new_variant is not None else old_variant
        old_results = {r.property.id: r for r in old.results}
        new_results = {r.property.id: r for r in new.results}
        for cid, n in new_results.items():
            o = old_results.get(cid)
            item = ClaimDiff(variant, cid, n.property.kind, n.property.statement, o, n)
            if o is None:
                diff.claims_added.append(item)
                continue
            if o.verdict is not n.verdict:
                (diff.claims_left_open if o.is_open or n.is_open else diff.claims_changed).append(item)
            if o.property.expected != n.property.expected:
                diff.gate_changes.append(f"claim {cid}{_in(variant)}: expected {o.property.expected or '(none)'} in "
                                         f"OLD, {n.property.expected or '(none)'} in NEW")
        diff.claims_removed += [ClaimDiff(variant, cid, o.property.kind, o.property.statement, o, None)
                                for cid, o in old_results.items() if cid not in new_results]
        old_keys = {f.key for f in old.findings}
        new_keys = {f.key for f in new.findings}
        diff.findings_appeared += [(variant, f) for f in new.findings if f.key not in old_keys]
        diff.findings_gone += [(variant, f) for f in old.findings if f.key not in new_keys]
        old_acks = {f.key: f.acknowledged for f in old.findings}
        diff.gate_changes += [f"finding {f.key}{_in(variant)}: acknowledged {_said(old_acks[f.key])} in OLD, "
                              f"{_said(f.acknowledged)} in NEW" for f in new.findings
                              if f.key in old_acks and old_acks[f.key] != f.acknowledged]
    for v in readings.new_only:
        run = new_by[v]
        diff.claims_added += [ClaimDiff(v, r.property.id, r.property.kind, r.property.statement, None, r)
                              for r in run.results]
        diff.findings_appeared += [(v, f) for f in run.findings]
    for v in readings.old_only:
        run = old_by[v]
        diff.claims_removed += [ClaimDiff(v, r.property.id, r.property.kind, r.property.statement, r, None)
                                for r in run.results]
        diff.findings_gone += [(v, f) for f in run.findings]


def compare_settings(old: dict[str, Any], new: dict[str, Any], diff: ModelDiff) -> None:
    """The [tool.turnproof] keys the two versions set differently: each is a change (exit 1),
    since a pull request could soften the gate through them."""
    diff.gate_changes += [f"[tool.turnproof] {key}: {_setting(old, key)} in OLD, {_setting(new, key)} in NEW"
                          for key in sorted(old.keys() | new.keys()) if old.get(key) != new.get(key)]


def _setting(table: dict[str, Any], key: str) -> str:
    return "not set" if key not in table else repr(table[key])[:80]


def _said(reason: str | None) -> str:
    return "not" if reason is None else repr(reason)[:80]


def _in(variant: str | None) -> str:
    return f" [variant {variant}]" if variant else ""


def _instantiated(model):
    if not model.is_concrete:
        free = ", ".join(k for k, v in model.param_values if v is None)
        raise UsageError(Diagnostic(f"diff compares reachable states, which needs every parameter fixed "
                                    f"({free} is free)",
                                    hint="give --param NAME=VALUE"))
    return model.instantiate()


class _Projection:
    """Display values of the shared slots of one explored state space."""

    def __init__(self, space, names: Sequence[str]):
        lay = space.lay
        where = {s.name: i for i, s in enumerate(lay.slots)}
        self.space = space
        self.idx = [where[n] for n in names]
        self.slots = [lay.slots[i] for i in self.idx]
        self.lay = lay
        self.shown: dict[tuple[int, int], Any] = {}
        self.first: dict[tuple, int] = {}
        for k, state in enumerate(space.states):       # BFS order: the first occurrence is the shallowest
            p = self(state)
            if p not in self.first:
                self.first[p] = k
        self.values: list[set[Any]] = [set() for _ in names]
        for p in self.first:
            for j, value in enumerate(p):
                self.values[j].add(value)

    def __call__(self, state) -> tuple:
        return tuple(self._display(k, state[i]) for k, i in enumerate(self.idx))

    def _display(self, k: int, value: int) -> Any:
        """A slot's value as displayed: computed once per value met, never per value of the slot's type."""
        key = (k, value)
        if key not in self.shown:
            self.shown[key] = self.lay.display(self.slots[k], value)
        return self.shown[key]


def _one_way(mine: _Projection, other: _Projection, names: Sequence[str], limit: int,
             me: str, them: str) -> OneWay:
    space = mine.space
    only = [p for p in mine.first if p not in other.first]
    only.sort(key=lambda p: (space.depth[mine.first[p]], mine.first[p]))
    departures = []
    for p in only:
        i = mine.first[p]
        parent = space.parent[i]
        if parent == -1 or mine(space.states[parent]) in other.first:
            departures.append(p)
    listed = []
    for p in departures[:limit]:
        i = mine.first[p]
        novel = tuple((n, value) for j, (n, value) in enumerate(zip(names, p)) if value not in other.values[j])
        trace = space.trace_to(i)
        listed.append(NewState(tuple(zip(names, p)), novel, space.depth[i], trace,
                               _why(mine, other, i, p, names, trace, me, them)))
    return OneWay(len(only), len(departures), tuple(listed))


def _why(mine: _Projection, other: _Projection, i: int, p: tuple, names: Sequence[str], trace: Trace,
         me: str, them: str) -> str:
    """Why `them` does not reach the departure state `i` of `me`: the last step, taken in a state
    both versions allow, is not allowed there in `them`, or leads elsewhere."""
    from verifier.semantics import successors

    parent = mine.space.parent[i]
    if parent == -1:
        return f"an initial state {them} does not have"
    step = trace.steps[-1]
    j = other.first[mine(mine.space.states[parent])]
    moves = successors(other.space.lay, other.space.states[j])
    labels = sorted({_label(t.action.name, t.choice) for t in moves})
    same = [t for t in moves if t.action.name == step.action and tuple(t.choice) == tuple(step.choice)]
    if not same:
        allowed = f"{them} allows only {', '.join(labels)}" if labels else f"{them} has no move there"
        return f"{them} does not allow {step.label} in the state before it ({allowed})"
    diffs = []
    for t in same[:1]:
        q = other(t.target)
        diffs = [f"{n}={_value(b)} instead of {_value(a)}" for n, a, b in zip(names, p, q) if a != b]
    return f"in {them}, {step.label} from the state before it leads to " + ", ".join(diffs)


def _value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _label(action: str, choice) -> str:
    return action if not choice else f"{action}({', '.join(f'{k}={v}' for k, v in choice)})"


def compare_behaviours(old_model, new_model, options: RunOptions, limit: int = 10) -> BehaviourDiff:
    """Reachable states of two versions (one variant), projected on the slots both share."""
    from verifier.engines.explicit import explore
    from verifier.resources.signals import past_deadline
    from verifier.semantics import layout

    old_m, new_m = _instantiated(old_model), _instantiated(new_model)
    old_slots = [s.name for s in layout(old_m).slots]
    new_slot_set = {s.name for s in layout(new_m).slots}
    shared = tuple(n for n in old_slots if n in new_slot_set)
    old_vars = {v.name: v for v in old_m.variables}
    new_vars = {v.name: v for v in new_m.variables}
    notes = []
    for name in old_vars.keys() & new_vars.keys():
        a, b = old_vars[name], new_vars[name]
        if str(a.type) != str(b.type) or a.size() != b.size():
            notes.append(f"variable {name} changed type: {a.type}{_size(a)} -> {b.type}{_size(b)}")
    base = BehaviourDiff(new_model.variant if new_model.variant is not None else old_model.variant, shared,
                         tuple(sorted(old_vars.keys() - new_vars.keys())),
                         tuple(sorted(new_vars.keys() - old_vars.keys())), notes=tuple(sorted(notes)))
    if past_deadline():                   # the --timeout cut the checks short: no new searches
        return replace(base, complete=False, reason="cut short by --timeout")
    budget = options.budget       # the python store's cap (the one store policy), never past --max-states
    if budget.max_states is None:
        budget = replace(budget, max_states=cap_of(Store.PYTHON, budget), owner="the python store's cap")
    old_space = explore(old_m, budget)
    new_space = explore(new_m, budget)
    base = replace(base, old_states=len(old_space.states), new_states=len(new_space.states))
    reasons = [f"{which}: {s.reason}" for which, s in (("OLD", old_space), ("NEW", new_space)) if not s.complete]
    if reasons:
        return replace(base, complete=False, reason="; ".join(reasons))
    old_p, new_p = _Projection(old_space, shared), _Projection(new_space, shared)
    return replace(base, new_only=_one_way(new_p, old_p, shared, limit, "NEW", "OLD"),
                   old_only=_one_way(old_p, new_p, shared, limit, "OLD", "NEW"))


def _size(v: Variable) -> str:
    """How a variable's shape reads in a note: a sequence by its capacity (an array of sequences also by
    its index domain), an array by its index domain(s) and elements."""
    if v.seq_length is not None and v.dims:
        return f" (sequences of at most {type_bounds(v.dims[1])[1] + 1}, per {v.dims[0]})"
    if v.seq_length is not None:
        return f" (a sequence of at most {v.size()})"
    if v.dims:
        return f" (per [{v.dims[0]}, {v.dims[1]}], {v.size()} elements)"
    return f" (per {v.index}, {v.size()} elements)" if v.index is not None else ""


def diff_versions(old_spec: str, new_spec: str, options: RunOptions = RunOptions(), limit: int = 10,
                  behaviours: bool = True, progress=None, accept_bounded: int | None = None) -> ModelDiff:
    """Check both versions and compare them (see the module doc); `accept_bounded`: the
    --accept-bounded depth (`result.accepting_bounded`)."""
    with tempfile.TemporaryDirectory(prefix="turnproof-diff-") as tmp:
        old, new = resolve(old_spec, Path(tmp)), resolve(new_spec, Path(tmp))
        old_runs = accepting_bounded(check_model(old.path, options, progress), accept_bounded)
        new_runs = accepting_bounded(check_model(new.path, options, progress), accept_bounded)
        diff = ModelDiff(old, new, old_runs[0].model.name, new_runs[0].model.name, limit=limit)
        if diff.model_old != diff.model_new:
            diff.notes.append(f"the model is named {diff.model_old} in OLD and {diff.model_new} in NEW")
        old_params, new_params = dict(old_runs[0].model.param_values), dict(new_runs[0].model.param_values)
        if old_params != new_params:
            diff.notes.append(f"parameters differ: OLD {old_params}, NEW {new_params}")
        compare_checks(old_runs, new_runs, diff)
        diff.model_errors = [f"{side} {error}" for side, runs in (("OLD", old_runs), ("NEW", new_runs))
                             for run in runs for error in run.model_errors]
        if old.rev is not None or new.rev is not None:      # two files share the working tree's settings
            compare_settings(settings(old), settings(new), diff)
        if behaviours:
            old_models = {r.model.variant: r.model for r in old_runs}
            new_models = {r.model.variant: r.model for r in new_runs}
            for pair in diff.readings_compared:
                diff.behaviours.append(compare_behaviours(old_models[pair.old], new_models[pair.new], options, limit))
    return diff
