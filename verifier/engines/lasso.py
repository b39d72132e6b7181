"""Liveness on an explored state space: termination and obligations.

Both ask "does every behaviour leave region R?": R is the non-final states
(termination, scope "game"), the non-final states with the edges that pass the
turn removed (scope "turn"), or the states where an obligation is pending.

Exact semantics. A counterexample is either
  * a stuck state in R: a reachable state of R where play stops (a deadlock:
    not final, no legal move) — the turn, the game, the obligation never
    closes; for obligations also a final state where it is still pending; or
  * a fair cycle inside R: a reachable cycle all of whose states are in R and
    all of whose transitions are kept (scope "turn": no TURN_END transition).
    With weakly fair actions F, a cycle does not count when some f in F is
    enabled in every state of the cycle (it has a transition from there, inside
    R or not) and the cycle never takes f; with strongly fair actions G, when
    some g in G is enabled in some state of the cycle and the cycle never takes g.
An SCC of the graph restricted to R holds a fair cycle iff it has a cycle (more
than one state, or a self-loop) and, for each f in F, some transition of the
SCC takes f or some state of the SCC has f disabled: the cycle through every
state and every transition of the SCC is then fair; otherwise every cycle inside
the SCC keeps f enabled and never takes it. The SCCs are searched in order of
their first state (BFS order); the first fair one gives the lasso: the shortest stem to its shallowest
state, then a loop through it that visits the fairness witnesses by shortest
paths (with none: the state's first transition inside the component, in firing
order, then the shortest way back); `loop_start` marks where the loop begins.
Strong fairness (Streett): an SCC that never takes some g in G, though g is
enabled in some of its states, has no fair cycle through those states; they
are removed and the SCCs of what is left are searched in turn.

Two searches give the same answers (tested against each other): on small graphs,
dicts of lists (the cyclic core of R peeled in Python, `_cyclic_core`, its SCCs by
networkx); from LARGE_REGION states or transitions on, numpy arrays and compiled
code (`compiled/cycles.py`: the SCCs by Pearce's variant of Tarjan's algorithm, over what sweeps in
index order and a depth-first walk up to the first cycle leave of a region (the states on no cycle
cleared), the witnesses, the shortest paths).
The claims decided on one graph share what they have in common (`Shared`): a
region's states are found once per predicate, its SCCs with a cycle (the walk over
the whole region, most of a claim's time where R has no cycle) once per predicate
and cut, those under a larger cut inside those under a smaller one; fairness is
each claim's own.

Only fully expanded states are used: on an incomplete search a counterexample
found is real, and "no counterexample" is left to the caller (UNKNOWN).
"""
from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress, repeat
from operator import and_, itemgetter
from typing import Any

from verifier.ir.expr import Expr, neg
from verifier.ir.model import ActionKind, Model
from verifier.ir.props import Obligation, Terminates
from verifier.result import Verdict
from verifier.trace import Trace

Outcome = tuple[Verdict | None, Trace | None, str]
LARGE_REGION = 20_000     # states or transitions: from here on the arrays' search (below, loading Numba costs more)


def _matches(name: str, wanted: str) -> bool:
    return name == wanted or name.split(" -> ")[0] == wanted


def region_predicates(model: Model, claim: Terminates | Obligation) -> tuple[Expr, ...]:
    """The state predicates a claim's check evaluates on every expanded state (`expanded_where`):
    a store that compiles predicates watches these."""
    if isinstance(claim, Terminates):
        return (neg(model.end),)
    return (claim.pending, model.end)


@dataclass
class Shared:
    """What the claims decided on one state graph have in common, computed for the first that asks:
    each region's states, by its predicate; each region's cyclic components (on the arrays) by its
    predicate and the actions cut. `wanted`: the (predicate, cut) of the claims to come (`of`), so
    that a region's components under a smaller cut are walked first where a claim will ask for them
    (those under a larger cut are then walked inside them only)."""

    regions: dict[Expr, Sequence[int]] = field(default_factory=dict)
    components: dict[tuple[Expr, frozenset[int]], list[Any]] = field(default_factory=dict)
    wanted: list[tuple[Expr, frozenset[int]]] = field(default_factory=list)

    @classmethod
    def of(cls, model: Model, claims: Iterable[Terminates | Obligation]) -> Shared:
        """For these claims on one graph of `model` (instantiated)."""
        return cls(wanted=[(region_predicates(model, p)[0], frozenset(_cut(model, p))) for p in claims])


def _cut(model: Model, claim: Terminates | Obligation) -> set[int]:
    """The actions whose transitions a claim's cycles may not take (scope "turn": those ending the turn)."""
    if isinstance(claim, Terminates) and claim.scope == "turn":
        return {a for a, action in enumerate(model.actions) if action.kind is ActionKind.TURN_END}
    return set()


def check_termination(space, claim: Terminates, shared: Shared | None = None) -> Outcome:
    """`claim`'s verdict on the graph `space`; `shared`: what other claims on it computed."""
    model = space.model
    cut = _cut(model, claim)
    what = "the turn never ends" if claim.scope == "turn" else "the game never ends"
    (unfinished,) = region_predicates(model, claim)
    region = _region(space, unfinished, shared)
    return _find(space, region, cut, claim.fairness or model.fairness, what, pending_final=(),
                 strong=claim.strong_fairness, shared=shared, of=unfinished)


def check_obligation(space, claim: Obligation, shared: Shared | None = None) -> Outcome:
    """`claim`'s verdict on the graph `space`; `shared`: what other claims on it computed."""
    pending, final = region_predicates(space.model, claim)
    region = _region(space, pending, shared)
    finals = _expanded_where(space, final, among=region)
    return _find(space, region, set(), claim.fairness or space.model.fairness,
                 "the obligation stays open forever", pending_final=finals, strong=claim.strong_fairness,
                 shared=shared, of=pending)


def _region(space, e: Expr, shared: Shared | None) -> Sequence[int]:
    """The expanded states where `e` holds, found once where `shared` keeps them."""
    if shared is None:
        return _expanded_where(space, e)
    if e not in shared.regions:
        shared.regions[e] = _expanded_where(space, e)
    return shared.regions[e]


def _expanded_where(space, e: Expr, among: Sequence[int] | None = None) -> Sequence[int]:
    """The space's `expanded_where`, as a numpy array where the store answers in one (the compiled
    store's graph: no list of millions of ints)."""
    by_array = getattr(space, "expanded_array", None)
    return space.expanded_where(e, among) if by_array is None else by_array(e, among)


def _marks(n: int, nodes: Iterable[int]) -> bytearray:
    """A byte per state, 1 for `nodes`."""
    out = bytearray(n)
    for i in nodes:
        out[i] = 1
    return out


def _find(space, region: Sequence[int], cut: set[int], fairness: Iterable[str], what: str,
          pending_final: Iterable[int], strong: Iterable[str] = (), shared: Shared | None = None,
          of: Expr | None = None) -> Outcome:
    """A stuck state (or pending final one) in `region`, else the lasso of a fair cycle inside it
    (module docstring); `of`: the region's predicate, under which `shared` keeps its components."""
    items = space.labels.items
    by_source = getattr(space, "edge_csr", None)      # the compiled store's graph: its offsets, no sources
    offsets, dst, lab = by_source() if by_source is not None else (None, *space.edge_arrays()[1:])
    graph = None
    inside: Any
    if max(len(region), len(dst)) >= LARGE_REGION:
        import numpy as np

        from verifier.engines.compiled.cycles import ArrayGraph, offsets_of
        kept = np.array([a not in cut for a, _ in items], dtype=np.uint8)
        if offsets is None:
            offsets = offsets_of(len(space), space.edge_arrays()[0])
        graph = ArrayGraph.of(offsets, dst, lab, kept, region)
        inside = graph.inside
    else:
        inside = _marks(len(space), region)
    stuck = set(space.deadlocks)
    first = min((i for i in stuck.union(pending_final) if inside[i]), default=None)
    if first is not None:       # BFS order: the least index is the shallowest
        how = "play stops here" if first in stuck else "the game ends here"
        return Verdict.VIOLATED, space.trace_to(int(first)), f"{what}: {how}"
    fair_actions = [{a for a, action in enumerate(space.model.actions) if _matches(action.name, f)} for f in fairness]
    strong_actions = [{a for a, action in enumerate(space.model.actions) if _matches(action.name, g)}
                      for g in strong]
    if graph is None:
        trace = _fair_lasso(space, list(map(int, region)), cut, fair_actions, strong_actions)
    else:
        parts = (graph.components(None, graph.inside) if shared is None or of is None
                 else _cyclic_parts(graph, items, (of, frozenset(cut)), shared))
        trace = _fair_lasso_in_arrays(space, graph, parts, fair_actions, strong_actions)
    if trace is None:
        return None, None, ""
    return Verdict.VIOLATED, trace, f"{what}: the loop can repeat forever"


def _cyclic_parts(graph, items, key: tuple[Expr, frozenset[int]], shared: Shared) -> list[Any]:
    """The components with a cycle of `graph`'s region under the cut of `key` (its predicate, its cut),
    found once for the claims `shared` serves. Where a smaller cut of the same region is known or
    wanted, they are walked inside its components only (their mask, walked as a region is: what
    lies on no cycle cleared first): a cycle that keeps fewer actions keeps those of the smaller
    cut, so each component under the larger cut lies inside one under the smaller (and is one of
    the graph restricted to them: the same components, in the same order)."""
    import numpy as np

    known = shared.components
    if key in known:
        return known[key]
    inner = [k for k in (*known, *shared.wanted) if k[0] == key[0] and k[1] < key[1]]
    if inner:
        smaller = min(inner, key=lambda k: len(k[1]))
        if smaller not in known:
            kept = np.array([a not in smaller[1] for a, _ in items], dtype=np.uint8)
            known[smaller] = graph.cutting(kept).components(None, graph.inside)
        inside = np.zeros(len(graph), np.uint8)
        for part in known[smaller]:
            inside[part] = 1
        known[key] = graph.components(None, inside) if known[smaller] else []
    else:
        known[key] = graph.components(None, graph.inside)
    return known[key]


def _fair_lasso(space, region: list[int], cut: set[int], fair_actions: list[set[int]],
                strong_actions: list[set[int]]) -> Trace | None:
    """The lasso of the first component with a fair cycle (module docstring), by dicts of lists:
    the cyclic core peeled in Python, its components by networkx."""
    items = space.labels.items
    core, edges = _cyclic_core(space, region, cut)
    adjacency: dict[int, list[tuple[int, int]]] = {}
    for s, d, x in edges:
        adjacency.setdefault(s, []).append((d, x))
    todo = _components(core, adjacency)
    if not todo:
        return None
    enabled: dict[int, set[int]] = {}        # state -> actions with a transition there
    if fair_actions or strong_actions:
        src, _dst, lab = space.edge_arrays()
        for s, x in compress(zip(src, lab), map(adjacency.__contains__, src)):
            enabled.setdefault(s, set()).add(items[x][0])
    todo.reverse()                           # popped in order of their first state
    while todo:
        component = todo.pop()
        unfair = _strongly_unfair(component, adjacency, enabled, strong_actions, items)
        if unfair:
            todo += _components(component - unfair, adjacency)[::-1]
            todo.sort(key=min, reverse=True)
            continue
        witnesses = _fairness_witnesses(component, adjacency, enabled, fair_actions + strong_actions, items)
        if witnesses is None:
            continue

        def path(a: int, b: int, component=component) -> list[tuple[int, int]]:
            return _path(adjacency, component, a, b)

        def first_move(s: int, component=component) -> tuple[int, int]:
            return next((d, x) for d, x in adjacency[s] if d in component)

        return _lasso(space, min(component), witnesses, path, first_move)
    return None


def _fair_lasso_in_arrays(space, graph, parts: list[Any], fair_actions: list[set[int]],
                          strong_actions: list[set[int]]) -> Trace | None:
    """`_fair_lasso` on the graph's arrays (`compiled/cycles.py`): `parts` its components with a cycle
    inside the region (`ArrayGraph.components`: compiled, Pearce's Tarjan), each searched as `_fair_lasso`
    searches it, in the same order."""
    import heapq

    import numpy as np

    from verifier.engines.compiled.cycles import Paths

    items = space.labels.items

    def labels_of(wanted: set[int]) -> np.ndarray:
        return np.array([a in wanted for a, _ in items], dtype=np.uint8)

    fair_labels = [labels_of(w) for w in fair_actions + strong_actions]
    strong_labels = [labels_of(w) for w in strong_actions]
    todo = [(int(part[0]), part) for part in parts]
    inside = np.zeros(len(graph), np.uint8)      # the component's states
    while todo:                                  # a heap: popped in order of their first state
        _first, part = heapq.heappop(todo)
        inside[part] = 1
        unfair = np.zeros(len(part), np.uint8)   # states where a strongly fair action is enabled, never taken
        for wanted in strong_labels:
            if graph.first_transition(inside, wanted, part) < 0:
                unfair |= graph.with_any(wanted, part)
        if unfair.any():
            inside[part[unfair == 1]] = 0
            for sub in graph.components(part[unfair == 0], inside):
                heapq.heappush(todo, (int(sub[0]), sub))
            inside[part] = 0
            continue
        witnesses = _witnesses_in_arrays(graph, inside, part, fair_labels)
        if witnesses is None:
            inside[part] = 0
            continue

        def first_move(s: int) -> tuple[int, int]:
            e = graph.first_transition(inside, np.ones(len(items), np.uint8), np.array([s], np.int32))
            return int(graph.dst[e]), int(graph.lab[e])

        return _lasso(space, int(part[0]), witnesses, Paths(graph, inside), first_move)
    return None


def _witnesses_in_arrays(graph, inside, part, fair_labels) -> list[tuple[str, Any]] | None:
    """`_fairness_witnesses` on the graph's arrays: the component's states are `part`, ascending
    (`inside` marks them); `fair_labels` a byte per label for each fair action."""
    out: list[tuple[str, Any]] = []
    for wanted in fair_labels:
        e = graph.first_transition(inside, wanted, part)
        if e >= 0:
            out.append(("edge", (graph.source(e), int(graph.dst[e]), int(graph.lab[e]))))
            continue
        s = graph.first_without(wanted, part)
        if s < 0:
            return None
        out.append(("state", s))
    return out


def _strongly_unfair(component: set[int], adjacency, enabled, strong_actions, items) -> set[int]:
    """The states of the component where a strongly fair action that no edge of the component takes
    is enabled: no fair cycle passes through them."""
    out: set[int] = set()
    for wanted in strong_actions:
        taken = any(d in component and items[x][0] in wanted for s in component for d, x in adjacency.get(s, ()))
        if not taken:
            out |= {i for i in component if enabled.get(i, set()) & wanted}
    return out


def _components(nodes: set[int], adjacency) -> list[set[int]]:
    """The components with a cycle of `adjacency` restricted to `nodes`, in order of their first state
    (networkx is imported only when there are some: its import costs a quarter second)."""
    if not nodes:
        return []
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(nodes))
    graph.add_edges_from((s, d) for s in sorted(nodes) for d, _x in adjacency.get(s, ()) if d in nodes)
    return sorted((c for c in nx.strongly_connected_components(graph)
                   if len(c) > 1 or graph.has_edge(next(iter(c)), next(iter(c)))), key=min)


def _cyclic_core(space, region: list[int], cut: set[int]) -> tuple[set[int], list[tuple[int, int, int]]]:
    """The states of `region` left after repeatedly removing those with no kept edge in, then
    those with none out (kept: inside the region, not taking a `cut` action), and the kept
    edges among them (source, target, label; by source). Every state of a cycle stays, so the
    strongly connected components with a cycle are exactly those of the core, which is usually
    empty (no cycle) or small: the whole graph is never built. (Edges are filtered with C-level
    `map`/`compress`; the search stores them by source.)"""
    n = len(space)
    alive = _marks(n, region)
    kept_label = bytes(a not in cut for a, _ in space.labels.items)
    src, dst, lab = space.edge_arrays()
    keep = map(and_, map(and_, map(alive.__getitem__, src), map(alive.__getitem__, dst)),
               map(kept_label.__getitem__, lab))
    edges = list(compress(zip(src, dst, lab), keep))          # sorted by source
    survivors = _peel(region, list(map(itemgetter(0, 1), edges)))   # no edge in
    if not survivors:
        return set(), []
    inside = _marks(n, survivors)
    back = sorted((d, s) for s, d, _x in edges if inside[s])   # a survivor's successors survive
    core = _peel(survivors, back)                               # no edge out
    inside = _marks(n, core)
    firsts = map(inside.__getitem__, map(itemgetter(0), edges))
    seconds = map(inside.__getitem__, map(itemgetter(1), edges))
    return set(core), list(compress(edges, map(and_, firsts, seconds)))


def _peel(nodes: list[int], pairs: list[tuple[int, int]]) -> list[int]:
    """`nodes` left after repeatedly removing those no pair (u, v) leads into; `pairs` sorted by u."""
    if not pairs:
        return []
    tails = list(map(itemgetter(1), pairs))
    count = Counter(tails)
    out_degree = Counter(map(itemgetter(0), pairs))
    # first[u]: where u's pairs start (they are contiguous); first[u + 1] where they end
    first = [0, *accumulate(map(out_degree.get, range(pairs[-1][0] + 1), repeat(0)))]
    last = len(first) - 1
    stack = [i for i in nodes if not count[i]]
    removed = set(stack)
    while stack:
        i = stack.pop()
        if i >= last:
            continue
        for j in tails[first[i]:first[i + 1]]:
            count[j] -= 1
            if not count[j]:
                stack.append(j)
                removed.add(j)
    return [i for i in nodes if i not in removed]


def _fairness_witnesses(component: set[int], adjacency, enabled, fair_actions, items):
    """Per fair action: an edge of the component taking it, or a state disabling it;
    None when one is enabled throughout and never taken (no fair cycle here)."""
    out: list[tuple[str, Any]] = []     # ("edge", (state, target, label)) or ("state", state)
    order = sorted(component)
    for wanted in fair_actions:
        edge = next(((s, d, x) for s in order for d, x in adjacency.get(s, ())
                     if d in component and items[x][0] in wanted), None)
        if edge is not None:
            out.append(("edge", edge))
            continue
        disabled = next((i for i in order if not enabled.get(i, set()) & wanted), None)
        if disabled is None:
            return None
        out.append(("state", disabled))
    return out


def _path(adjacency, component: set[int], a: int, b: int) -> list[tuple[int, int]]:
    """Shortest path a -> b inside the component as [(state, label)]; [] when a == b."""
    if a == b:
        return []
    back: dict[int, tuple[int, int] | None] = {a: None}
    queue = deque([a])
    while queue:
        u = queue.popleft()
        for v, x in adjacency.get(u, ()):
            if v in component and v not in back:
                back[v] = (u, x)
                if v == b:
                    steps = []
                    while (step := back[v]) is not None:
                        u0, x0 = step
                        steps.append((v, x0))
                        v = u0
                    return steps[::-1]
                queue.append(v)
    raise AssertionError("a strongly connected component is strongly connected")


def _lasso(space, entry: int, witnesses, path: Callable[[int, int], list[tuple[int, int]]],
           first_move: Callable[[int], tuple[int, int]]) -> Trace:
    """The lasso through the component's shallowest state `entry` (BFS order) and its fairness
    witnesses: `path(a, b)` a shortest path inside the component, `first_move(s)` the first
    transition from s inside it."""
    loop: list[tuple[int, int]] = []
    here = entry
    for kind, w in witnesses:
        if kind == "edge":
            s, d, x = w
            loop += path(here, s) + [(d, x)]
            here = d
        else:
            loop += path(here, w)
            here = w
    loop += path(here, entry)
    if not loop:    # the entry alone meets the witnesses: its first move inside, then back
        d, x = first_move(entry)
        loop = [(d, x)] + path(d, entry)
    states, firings = space.path_to(entry)
    loop_start = len(firings)
    for d, x in loop:
        states.append(space.unpack(d))
        firings.append(space.firing(x))
    return space.trace(states, firings, loop_start)
