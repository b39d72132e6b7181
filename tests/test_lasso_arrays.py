"""The lasso search on arrays (`compiled/cycles.py`, from `lasso.LARGE_REGION` states or transitions
on) against the dict-of-lists search it replaced (`lasso._fair_lasso`: the cyclic core peeled in
Python, networkx's components), on random state graphs: the same components, and the same outcome
of every termination-like question, stuck state or lasso, loop start and path, with weak and strong
fairness, cut actions and pending final states, the edges in the python store's arrays or in
numpy's (the compiled store's graph); claims sharing their regions' components (`lasso.Shared`) find
what each finds alone, the walk over a region made once per region and cut."""
from __future__ import annotations

from array import array
from dataclasses import dataclass, replace
from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from verifier.engines import lasso
from verifier.engines.compiled.cycles import DONE, ArrayGraph, Paths, kernels, offsets_of
from verifier.ir.expr import Var

ACTIONS = ("act0", "act1", "act2", "act3 -> tail")
NAMES = st.lists(st.sampled_from(["act0", "act1", "act2", "act3"]), max_size=2, unique=True).map(tuple)


@dataclass
class Graph:
    """A state graph as `lasso.py` reads a store's: states 0..n-1 in BFS order, transitions by
    source with their labels (an action and a choice each), stuck states."""

    n: int
    src: list[int]
    dst: list[int]
    lab: list[int]
    items: list[tuple[int, tuple]]
    deadlocks: list[int]
    numpy: bool

    def __len__(self) -> int:
        return self.n

    @property
    def labels(self):
        return type("Labels", (), {"items": self.items})

    @property
    def model(self):
        return type("Model", (), {"actions": [type("Action", (), {"name": a}) for a in ACTIONS]})

    def edge_arrays(self):
        if self.numpy:
            return np.array(self.src, np.int32), np.array(self.dst, np.int32), np.array(self.lab, np.int32)
        return array("i", self.src), array("i", self.dst), array("I", self.lab)

    def path_to(self, i: int):
        return [("stem", i)], [("to", i)]

    def unpack(self, i: int):
        return ("state", i)

    def firing(self, x: int):
        return ("label", x)

    def trace(self, states, firings, loop_start):
        return tuple(states), tuple(firings), loop_start

    def trace_to(self, i: int):
        return ("stuck", i)


@st.composite
def graphs(draw) -> Graph:
    n = draw(st.integers(1, 14))
    items = [(a, (c,)) for a in range(len(ACTIONS)) for c in range(draw(st.integers(1, 2)))]
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(0, len(items) - 1)),
                          max_size=4 * n))
    edges.sort(key=lambda e: e[0])            # by source, each source's in the drawn (firing) order
    deadlocks = draw(st.sampled_from([[], [], [], [draw(st.integers(0, n - 1))]]))   # mostly none: lassos
    return Graph(n, [s for s, _d, _x in edges], [d for _s, d, _x in edges], [x for _s, _d, x in edges], items,
                 deadlocks, draw(st.booleans()))


SETTINGS = settings(max_examples=examples(300), deadline=None)


@SETTINGS
@given(graphs(), st.data())
def test_the_array_search_finds_what_the_dict_search_finds(graph, data):
    region = sorted(set(range(graph.n)) - data.draw(st.sets(st.integers(0, graph.n - 1), max_size=graph.n // 3)))
    cut = data.draw(st.sets(st.integers(0, len(ACTIONS) - 1), max_size=2))
    finals = data.draw(st.sampled_from([[], [], [], region[-1:]]))
    fairness, strong = data.draw(NAMES), data.draw(NAMES)
    outcomes = []
    for large in (10**9, 0):               # the dicts of lists, then the arrays
        with patch.object(lasso, "LARGE_REGION", large):
            outcomes.append(lasso._find(graph, region, cut, fairness, "w", finals, strong))
    assert outcomes[0] == outcomes[1]


@SETTINGS
@given(graphs(), st.data())
def test_the_compiled_components_are_networkx_components(graph, data):
    region = sorted(data.draw(st.sets(st.integers(0, graph.n - 1))))
    cut = data.draw(st.sets(st.integers(0, len(ACTIONS) - 1), max_size=2))
    adjacency: dict[int, list[tuple[int, int]]] = {}
    for s, d, x in zip(graph.src, graph.dst, graph.lab):
        if graph.items[x][0] not in cut:
            adjacency.setdefault(s, []).append((d, x))
    want = lasso._components(set(region), adjacency)
    kept = np.array([a not in cut for a, _ in graph.items], np.uint8)
    src, dst, lab = graph.edge_arrays()
    arrays = ArrayGraph.of(offsets_of(graph.n, src), dst, lab, kept, region)
    got = arrays.components(np.array(region, np.int32), arrays.inside)
    assert [set(part.tolist()) for part in got] == want
    assert all(list(part) == sorted(part) for part in got)
    assert [p.tolist() for p in arrays.components(None, arrays.inside)] == [p.tolist() for p in got]   # by the mask
    assert arrays.walk is not None and (arrays.walk == DONE).all()      # left as found, for the next walk
    part = sorted(data.draw(st.sets(st.sampled_from(region)))) if region else []      # then inside a part of it
    inside = np.zeros(graph.n, np.uint8)
    inside[part] = 1
    again = arrays.components(np.array(part, np.int32), inside)
    assert [set(p.tolist()) for p in again] == lasso._components(set(part), adjacency)
    for component, part in zip(want, got):       # shortest paths inside a component, as the dict search's
        inside = np.zeros(graph.n, np.uint8)
        inside[part] = 1
        paths = Paths(arrays, inside)
        for a in sorted(component):
            for b in sorted(component):
                assert paths(a, b) == lasso._path(adjacency, component, a, b)


@SETTINGS
@given(graphs(), st.data())
def test_the_walk_to_the_first_cycle_clears_states_on_no_cycle_only(graph, data):
    """`met_cycle` meets a cycle where the region has one, clears no state of a cyclic component
    (networkx's), and leaves every state of the region alive (1) or cleared (0)."""
    region = sorted(data.draw(st.sets(st.integers(0, graph.n - 1))))
    cut = data.draw(st.sets(st.integers(0, len(ACTIONS) - 1), max_size=2))
    adjacency: dict[int, list[tuple[int, int]]] = {}
    for s, d, x in zip(graph.src, graph.dst, graph.lab):
        if graph.items[x][0] not in cut:
            adjacency.setdefault(s, []).append((d, x))
    cyclic = set().union(*lasso._components(set(region), adjacency))
    kept = np.array([a not in cut for a, _ in graph.items], np.uint8)
    src, dst, lab = graph.edge_arrays()
    arrays = ArrayGraph.of(offsets_of(graph.n, src), dst, lab, kept, region)
    alive = arrays.inside.copy()
    met = kernels().met_cycle(arrays.offsets, arrays.dst, arrays.lab, arrays.kept, alive,
                              np.empty(graph.n, np.int32), np.empty(graph.n, np.int64))
    assert met == bool(cyclic)
    assert set(np.flatnonzero(alive).tolist()) >= cyclic
    assert (alive <= arrays.inside).all()


@SETTINGS
@given(graphs(), st.data())
def test_claims_sharing_their_components_find_what_each_finds_alone(graph, data):
    """Claims on one graph over two regions, each with its own cut and fairness: with the components
    shared by region and cut (`lasso.Shared`; the claims' keys declared ahead or not), each outcome
    (stuck state, lasso, loop start, path) is the one it finds computing them itself. The walk over a
    whole region (`ArrayGraph.components` over the region's own mask; strong fairness walks parts of a
    component again, a larger cut is walked inside a smaller one's components) runs at most once per
    region and cut; declared ahead, once for each cut holding no other cut of its region
    (no stuck state: every claim comes to the walk)."""
    graph = replace(graph, deadlocks=[])
    regions = {name: sorted(data.draw(st.sets(st.integers(0, graph.n - 1), min_size=1))) for name in ("r0", "r1")}
    claims = data.draw(st.lists(st.tuples(st.sampled_from(sorted(regions)),
                                          st.frozensets(st.integers(0, len(ACTIONS) - 1), max_size=2), NAMES, NAMES),
                                min_size=2, max_size=6))
    keys = {(Var(name), cut) for name, cut, _f, _s in claims}
    declared = data.draw(st.booleans())
    shared = lasso.Shared(wanted=sorted(keys, key=str) if declared else [])
    whole = 0
    with patch.object(lasso, "LARGE_REGION", 0), \
            patch.object(ArrayGraph, "components", autospec=True, side_effect=ArrayGraph.components) as walks:
        for name, cut, fairness, strong in claims:
            alone = lasso._find(graph, regions[name], set(cut), fairness, "w", (), strong)
            before = len(walks.call_args_list)
            together = lasso._find(graph, regions[name], set(cut), fairness, "w", (), strong, shared=shared,
                                   of=Var(name))
            whole += sum(c.args[2] is c.args[0].inside for c in walks.call_args_list[before:])
            assert together == alone
    assert set(shared.components) == keys
    assert whole <= len(keys)
    if declared:
        assert whole == sum(not any(e == f and c < d for e, c in keys) for f, d in keys)
