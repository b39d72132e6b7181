"""The explored state graph of one model, for reports to draw.

The runner's layer explores; `report/diagrams.py` only draws a `StateGraph` it is
given. `game_graph` is what `turnproof report` asks for: the graph of a model's
first reading, or the sentence a page shows instead when it cannot be drawn.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from verifier.engines.explicit import explore
from verifier.ir.model import Model
from verifier.resources import Budget
from verifier.semantics import EvalError
from verifier.trace import Names

DEFAULT_LABEL_LIMIT = 150      # states up to which each state's full text is kept (a whole-graph drawing)


@dataclass
class StateGraph:
    """The explored state space of one instantiated model, as much as a report needs."""

    model: Model                       # instantiated
    graph: Any                         # networkx.MultiDiGraph: nodes carry depth, initial, phase
    deadlocks: frozenset[int] = frozenset()
    finals: frozenset[int] = frozenset()
    complete: bool = True
    reason: str = ""
    labels: dict[int, str] = field(default_factory=dict)   # full state text, for small graphs
    values: dict[int, tuple[tuple[str, object], ...]] = field(default_factory=dict)   # (slot, value), same states

    @property
    def states(self) -> int:
        return self.graph.number_of_nodes()

    @property
    def transitions(self) -> int:
        return self.graph.number_of_edges()


def explore_graph(model: Model, max_states: int | None = 300_000, label_limit: int = DEFAULT_LABEL_LIMIT,
                  owner: str = "--max-states") -> StateGraph:
    """Explore `model` (instantiated here) with the explicit engine and keep the graph; each
    state's full text is kept when there are at most `label_limit` states."""
    concrete = model.instantiate()
    said = Names.of(concrete)           # the full state text in the model's display names
    space = explore(concrete, Budget(max_states=max_states, owner=owner), keep_edges=True)
    g = space.to_networkx()
    deadlocks = frozenset(space.deadlocks)
    # a state with no successor is final unless it is stuck; a partial search leaves unexpanded
    # states without successors too, so it claims no final states
    finals = frozenset(n for n in g.nodes if g.out_degree(n) == 0 and n not in deadlocks) \
        if space.complete else frozenset()
    labels, values = {}, {}
    if g.number_of_nodes() <= label_limit:
        for n in g.nodes:
            trace = space.trace_to(n)
            values[n] = tuple(trace.states[-1] if trace.states else trace.initial)
            labels[n] = ", ".join(f"{said.slot(k)}={_fmt(said.value(k, v))}" for k, v in values[n])
    return StateGraph(concrete, g, deadlocks, finals, space.complete, space.reason, labels, values)


def game_graph(model: Model, label_limit: int = DEFAULT_LABEL_LIMIT, max_states: int | None = 300_000) \
        -> StateGraph | str:
    """The state graph of `model`, or why a page cannot show one."""
    if not model.is_concrete:
        free = ", ".join(k for k, v in model.param_values if v is None)
        return f"Not drawn: the parameters {free} are left free, so the states cannot be listed."
    try:
        sg = explore_graph(model, max_states=max_states, label_limit=label_limit, owner="--graph-states")
    except EvalError as err:   # a model run-time error: the claims report it; the page says why no graph
        return f"Not drawn: exploring the states failed ({err})."
    return sg


def _fmt(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)
