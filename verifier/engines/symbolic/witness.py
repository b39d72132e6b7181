"""From a Z3 answer to a replayed `Trace`.

A symbolic counterexample is first made concrete: the free parameters take
their values from the Z3 model, the model is instantiated with them, and the
firings are re-run on the reference semantics (`verifier.semantics`). The
states Z3 claimed must be exactly the states the semantics produces, and the
finished trace must pass `trace.replay`; anything else is an engine bug,
raised as `InternalError` and reported as UNKNOWN ("internal: ..."), never as
a verdict.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import z3

from verifier.engines.symbolic.encode import Encoding
from verifier.ir.model import Model
from verifier.semantics import EvalError, Layout, State, layout, successors, transitions
from verifier.trace import ReplayError, Trace, build_trace, replay


class InternalError(Exception):
    """The symbolic answer does not hold on the concrete semantics."""


@dataclass
class Path:
    """A concrete run as read from Z3: parameter values, states, and the firings between
    them (None when only the states are known, as from a PDR derivation)."""

    params: dict[str, int]
    states: list[State]
    firings: list[tuple[int, tuple[tuple[str, int], ...]]] | None = None
    extra: list[int] = field(default_factory=list)   # one more step: the first firing of one of these


def read_params(enc: Encoding, m: z3.ModelRef) -> dict[str, int]:
    return {n: m.eval(p, model_completion=True).as_long() for n, p in enc.params.items()}


def read_path(enc: Encoding, m: z3.ModelRef, depth: int, extra: list[int] | None = None) -> Path:
    """States s_0..s_depth and the firings act@i / choices of a BMC-style model."""
    states = [tuple(m.eval(x, model_completion=True).as_long() for x in enc.state(i).slots)
              for i in range(depth + 1)]
    firings = []
    for i in range(depth):
        a = m.eval(enc.act(i), model_completion=True).as_long()
        if a not in enc.actions:
            raise InternalError(f"step {i + 1} selects no action (act={a})")
        choice = tuple((c.name, m.eval(enc.choice(a, c.name, i), model_completion=True).as_long())
                       for c in enc.model.actions[a].choices)
        firings.append((a, choice))
    return Path(read_params(enc, m), states, firings, list(extra or []))


@dataclass
class Concrete:
    model: Model
    lay: Layout
    states: list[State]
    trace: Trace


def concretise(enc: Encoding, path: Path) -> Concrete:
    """Instantiate the model with the path's parameters, re-run it, build and replay the trace."""
    model = enc.source.instantiate(dict(path.params))
    lay = layout(model)
    if len(lay.slots) != len(enc.slots):
        raise InternalError("the concrete layout differs from the symbolic one")
    states = [path.states[0]]
    firings = []
    try:
        steps = len(path.states) - 1
        for i in range(steps):
            here, wanted = states[-1], path.states[i + 1]
            if path.firings is not None:
                a, choice = path.firings[i]
                options = [t for t in successors(lay, here)
                           if t.action is model.actions[a] and t.choice == choice]
                if not options:
                    raise InternalError(f"step {i + 1} ({model.actions[a].name} {dict(choice)}) is not enabled "
                                        f"in the concrete semantics")
                if options[0].target != wanted:
                    raise InternalError(f"step {i + 1} ({model.actions[a].name}) leads to a different state "
                                        f"than Z3 claimed")
                t = options[0]
            else:
                options = [t for t in successors(lay, here) if t.target == wanted]
                if not options:
                    raise InternalError(f"no action leads from state {i} to state {i + 1} of the derivation")
                t = options[0]
            assert t.target is not None, "successors() has a target on every transition"
            firings.append((t.action, t.choice))
            states.append(t.target)
        if path.extra:
            names = {model.actions[a].name for a in path.extra}
            options = [t for t in successors(lay, states[-1]) if t.action.name in names]
            if not options:
                raise InternalError("the witnessed action cannot fire at the end of the path")
            last = options[0]
            assert last.target is not None, "successors() has a target on every transition"
            firings.append((last.action, last.choice))
            states.append(last.target)
    except EvalError as err:
        raise InternalError(f"model error while re-running the path: {err}") from None
    trace = build_trace(lay, states, firings)
    try:
        replayed = replay(lay, trace)
    except ReplayError as err:
        raise InternalError(f"the trace does not replay: {err}") from None
    if list(replayed) != states:
        raise InternalError("the replayed states differ from the trace's")
    return Concrete(model, lay, states, trace)


def stuck(lay: Layout, state: State) -> bool:
    """A state of the concrete semantics with no successor."""
    return not successors(lay, state)


def raises(lay: Layout, state: State) -> str | None:
    """The model error computing the transitions of `state`, if any."""
    try:
        transitions(lay, state)
    except EvalError as err:
        return str(err)
    return None
