"""Whole-model checks run after loading: names in lists, action phases, static ranges, must guards."""
from __future__ import annotations

from typing import TYPE_CHECKING, assert_never

from verifier.diagnostics import Diagnostic, ModelError
from verifier.ir.evaluate import EvalError, Layout, State, find_initial_states, holds, layout
from verifier.ir.expr import App, Const, Expr, Index, Local, Op, Param, Quant, Var, state_vars, walk
from verifier.ir.model import ActionKind, EnumType, IntType, Modality, Model, Overflow, all_exprs, type_bounds
from verifier.lang.limits import MAX_ARRAY, MAX_CHOICES, MAX_INITIAL_CANDIDATES, MAX_INITIAL_STATES, MAX_RANGE_WIDTH, MAX_SLOTS
from verifier.lang.yaml_source import suggest

if TYPE_CHECKING:
    from verifier.lang.loader import Loader


def _action_known(name: str, names: set[str]) -> bool:
    """An action name; `end Draw` also names `end Draw -> Play` (as in claims)."""
    return name in names or any(n.split(" -> ")[0] == name for n in names)


def check_names(loader: Loader, model: Model) -> None:
    """`fairness`, `ordered` and `progress` name things that exist; actions name leaf phases."""
    declared = {a.name for a in model.actions} | set(loader.action_names)
    listed: list[tuple[str, int, str | tuple[str, str]]] = [("fairness", i, name) for i, name in enumerate(model.fairness)]
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


def check_static_ranges(loader: Loader, model: Model) -> None:
    """A constant initial or assigned value outside the variable's range (parameters fixed) is an error."""
    concrete = model.instantiate()
    for original_var, var in zip(model.variables, concrete.variables):
        for init in var.init:
            _check_value(loader, var, init, original_var.span, f"{var.name} starts at")
    for original, action in zip(model.actions, concrete.actions):
        for eff, orig in zip(action.effects, original.effects):
            var = concrete.var(eff.target.name)
            if var.overflow is Overflow.UNSPECIFIED:
                _check_value(loader, var, eff.value, orig.span, f"{action.name} sets {var.name} to")


def check_sizes(loader: Loader, model: Model) -> None:
    """Ranges that are not empty, and arrays, state slots, choices and quantifiers the search can
    hold: sizes are computed from the bounds (parameters fixed), never materialised."""
    concrete = model.instantiate()
    slots = 0
    for var in concrete.variables:
        if not _range_ok(loader, var.type, var.span, f"the type of {var.name}"):
            continue
        if var.index is None:
            slots += 1
            continue
        size = _range_size(var.index)
        if not _range_ok(loader, var.index, var.span, f"the index (per:) of {var.name}") or size is None:
            continue
        if size > MAX_ARRAY:
            loader.sink.error(f"{var.name} has {size:,} elements; at most {MAX_ARRAY:,} are allowed", var.span,
                              hint="a state holds counters, not a card list: count cards instead")
        slots += size
    if slots > MAX_SLOTS:
        loader.sink.error(f"the state has {slots:,} slots (variables and array elements); at most "
                          f"{MAX_SLOTS:,} are allowed", model.span, hint="use fewer or smaller arrays")
    for action in concrete.actions:
        ways = 1
        bound: dict[str, tuple[int, int]] = {}
        for choice in action.choices:
            if _range_ok(loader, choice.type, choice.span, f"the choice {choice.name} of {action.name}"):
                ways *= _range_size(choice.type) or _widest(concrete, choice.type, bound)
            if isinstance(choice.type, IntType):
                lo, hi = _interval(concrete, choice.type.lo, bound), _interval(concrete, choice.type.hi, bound)
                if lo is not None and hi is not None:
                    bound[choice.name] = (lo[0], hi[1])
        if ways > MAX_CHOICES:
            loader.sink.error(f"action {action.name} can choose in {ways:,} ways; at most {MAX_CHOICES:,} are "
                              "allowed", action.span, hint="narrow its choose: domains")
    for e in all_exprs(concrete):
        for q in walk(e):
            words = quantifier_too_wide(concrete, q) if isinstance(q, Quant) else None
            if words is not None:
                loader.sink.error(words, q.span, hint="quantify over players or an array index")
    _check_initial_states(loader, concrete)


def quantifier_too_wide(model: Model, q: Quant) -> str | None:
    """What is wrong with a quantifier of `model` (parameters fixed) that ranges over more than
    MAX_ARRAY values, its bounds counted at their widest over the variables' types where they
    read the state (None: within the limit, or bounds that cannot be bounded so)."""
    lo, hi = _interval(model, q.lo, {}), _interval(model, q.hi, {})
    if lo is None or hi is None or hi[1] - lo[0] < MAX_ARRAY:
        return None
    up_to = "" if isinstance(q.lo, Const) and isinstance(q.hi, Const) else "up to "
    return f"a quantifier ranges over {up_to}{hi[1] - lo[0] + 1:,} values; at most {MAX_ARRAY:,} are allowed"


def _check_initial_states(loader: Loader, model: Model) -> None:
    """Variables left open by `init` start at every value of their type that `initially` allows:
    both the candidates tested to find the initial states and the states kept are bounded (found
    once per variables and `initially`: the engines and a mutant's load reuse them)."""
    if not model.is_concrete or loader.sink.errors:     # sizes reported wrong: no enumeration
        return
    lay = layout(model)
    try:
        census = find_initial_states(lay, MAX_INITIAL_CANDIDATES, MAX_INITIAL_STATES)
    except EvalError:          # an init: value out of range (check_static_ranges reports it), or a model
        return                 # error in initially (the engines report it with its trace)
    if census.passed == "candidates":
        var = model.var(lay.slots[census.slot].var)
        if census.at_once:
            loader.sink.error(f"{var.name} starts at any value of its type (no init:), which gives more than "
                              f"{MAX_INITIAL_CANDIDATES:,} candidate initial states before initially: filters "
                              "them", var.span,
                              hint=f"give {var.name} or a variable declared before it an init: value, narrow its "
                                   "type, or let initially: rule out a deal earlier: a part of it is tested as "
                                   "soon as the variables it reads are dealt, in the order they are declared "
                                   f"(this limit counts the candidates tried; the initial states kept, at most "
                                   f"{MAX_INITIAL_STATES:,}, have their own)")
            return
        span = model.initially.span if model.initially.span is not None else var.span
        loader.sink.error(f"finding the initial states tests more than {MAX_INITIAL_CANDIDATES:,} candidates "
                          f"(still dealing {lay.slots[census.slot].name}): initially: rules out too few of "
                          "them early", span,
                          hint="a part of initially: is tested as soon as the variables it reads are dealt, in "
                               "the order they are declared: declare first the variables it constrains most, "
                               "write it as parts joined by and, or give more variables an init: value (this "
                               "limit counts the candidates tried; the initial states kept, at most "
                               f"{MAX_INITIAL_STATES:,}, have their own)")
    elif not census.passed:
        _warn_final_initial_states(loader, model, lay, census.states)
    elif census.passed == "states":
        span = model.initially.span if model.initially.span is not None else model.span
        loader.sink.error(f"initially: keeps more than {MAX_INITIAL_STATES:,} initial states; at most "
                          f"{MAX_INITIAL_STATES:,} are allowed", span,
                          hint="constrain initially: further or give more variables an init: value (this limit "
                               f"counts the initial states kept; the candidates tried, up to "
                               f"{MAX_INITIAL_CANDIDATES:,}, have their own)")


def require_initial_state(model: Model) -> None:
    """Raise a ModelError at `initially:` where `model` (every parameter fixed) has no initial state
    at all: every claim would hold of no game (what `check`, `lint` and `report` load; the loader
    itself accepts such a model, as a mutant or a generated test model may be one)."""
    if not model.is_concrete:
        return
    try:
        census = find_initial_states(layout(model.instantiate()), MAX_INITIAL_CANDIDATES, MAX_INITIAL_STATES)
    except EvalError:          # a model error in initially: the engines report it with its trace
        return
    if census.passed or census.states:
        return
    values = ", ".join(f"{k}={v}" for k, v in model.param_values)
    raise ModelError([Diagnostic(
        "no initial state: init: and initially: together admit none" + (f" at {values}" if values else ""),
        model.initially.span if model.initially.span is not None else model.span,
        hint="every claim would hold of no game at all: check the parameter values (a hand larger than "
             "the cards dealt, say) against the init: values and initially:")])


FINAL_TRIED = 2_000     # initial states `end:` is evaluated on for the warning


def _warn_final_initial_states(loader: Loader, model: Model, lay: Layout, states: tuple[State, ...]) -> None:
    """A warning where `end:` holds in initial states: no move is made from them (a deal that leaves
    the deck empty, a counter that starts at its last value), which is rarely what the page means."""
    tried = states[:FINAL_TRIED]       # a bounded cost on every load (each mutant of mutate loads)
    try:
        over = sum(1 for s in tried if holds(lay, model.end, s))
    except EvalError:          # a model error in end: (the engines report it with its trace)
        return
    if not over:
        return
    reading = f" (in reading {model.variant})" if model.variant else ""
    of = f"the {len(states):,}" if len(tried) == len(states) else f"the first {len(tried):,} of {len(states):,}"
    loader.sink.warning(f"end: holds in {over:,} of {of} initial state{'s' * (len(states) != 1)}"
                        f"{reading}: the game is over before any move there", model.end.span or model.span,
                        hint="where the game cannot be over at the start, constrain initially: or give the "
                             "variables end: reads an init: value")


def _widest(model: Model, t, bound: dict[str, tuple[int, int]]) -> int:
    """The most values a choice domain whose bounds depend on the state can take (1 where its
    bounds cannot be bounded: the search counts those as it goes)."""
    lo, hi = _interval(model, t.lo, bound), _interval(model, t.hi, bound)
    return 1 if lo is None or hi is None else max(1, hi[1] - lo[0] + 1)


def _interval(model: Model, e: Expr, bound: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    """The values `e` can take over the variables' types (None when not bounded so simply)."""
    match e:
        case Const():
            return e.value, e.value
        case Var() | Index():
            return type_bounds(model.var(e.name).type)
        case Local():
            return bound.get(e.name)
        case Param() | Quant():
            return None
        case App():
            return _app_interval(model, e, bound)
        case _:
            assert_never(e)


def _app_interval(model: Model, e: App, bound: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    """The values an operator application can take, from its arguments' (None when not bounded so simply)."""
    args = [_interval(model, a, bound) for a in e.args]
    if any(a is None for a in args):
        return None
    ivs = [a for a in args if a is not None]
    if e.op is Op.ADD:
        return ivs[0][0] + ivs[1][0], ivs[0][1] + ivs[1][1]
    if e.op is Op.SUB:
        return ivs[0][0] - ivs[1][1], ivs[0][1] - ivs[1][0]
    if e.op is Op.NEG:
        return -ivs[0][1], -ivs[0][0]
    if e.op is Op.MUL:
        products = [a * b for a in ivs[0] for b in ivs[1]]
        return min(products), max(products)
    if e.op in (Op.MIN, Op.MAX):
        pick = min if e.op is Op.MIN else max
        return pick(a[0] for a in ivs), pick(a[1] for a in ivs)
    if e.op is Op.ITE:
        return min(ivs[1][0], ivs[2][0]), max(ivs[1][1], ivs[2][1])
    return None


def _range_size(t) -> int | None:
    if isinstance(t, EnumType):
        return len(t.values)
    if isinstance(t, IntType) and isinstance(t.lo, Const) and isinstance(t.hi, Const):
        return t.hi.value - t.lo.value + 1
    return 1 if not isinstance(t, IntType) else None


def _range_ok(loader: Loader, t, span, what: str) -> bool:
    """An integer range with fixed bounds is not empty and not wider than the engines take."""
    if not isinstance(t, IntType) or not isinstance(t.lo, Const) or not isinstance(t.hi, Const):
        return True
    lo, hi = t.lo.value, t.hi.value
    if hi < lo:
        loader.sink.error(f"{what} is the empty range {lo}..{hi}", span,
                          hint="a range is lo..hi with lo <= hi; did you swap the bounds?")
        return False
    if hi - lo > MAX_RANGE_WIDTH:
        loader.sink.error(f"{what} spans {hi - lo + 1} values; at most 2^62 are allowed", span,
                          hint="use a smaller range")
        return False
    return True


def _check_value(loader: Loader, var, value, span, what: str) -> None:
    t = var.type
    if not (isinstance(t, IntType) and isinstance(value, Const) and isinstance(t.lo, Const) and isinstance(t.hi, Const)):
        return
    if not t.lo.value <= value.value <= t.hi.value:
        loader.sink.error(f"{what} {value.value}, outside its range {t.lo.value}..{t.hi.value}", span,
                          hint="widen the variable's type or fix the value")


def check_must_guards(loader: Loader, model: Model) -> None:
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
