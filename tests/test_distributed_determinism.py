"""`--workers N` names the same witnesses, with the same traces, whatever order the partitions'
offers arrive in (issue 24: same input, same answer). A state's parent is its predecessor with the
smallest packed state in the level before (`VisitedTable.offer`), and each witness is the one with
the smallest packed state of the shallowest level that has one, so the traces depend neither on
the workers' timing nor on their number. The partitions' level loop in this process, its batches
split and delivered in a shuffled order and each level's states shuffled, on random models
(`test_explicit_differential`'s, and `test_reduce_symmetry`'s symmetric ones): the same witnesses
and traces as one partition in order (two worker processes of a loopback cluster: in
`test_distributed_symmetry`, which starts one)."""
from __future__ import annotations

import random
import time
from collections import deque

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_distributed_search import Done, InProcess, search_in_process
from test_explicit_differential import bools, models
from test_reduce_symmetry import MODELS, claims
from tiers import examples

from verifier.engines.distributed import Partition, search_partitions
from verifier.engines.visited import STAMPS, VisitedTable
from verifier.ir.props import Invariant, Reachable
from verifier.resources import Budget


class Shuffled(InProcess):
    """A partition in this process whose received batches are split, held and delivered in a
    random order at the level's end, and whose levels are shuffled (as the arrival order of a
    cluster's batches, and so each worker's next level, varies from run to run)."""

    def __init__(self, partition: Partition, rnd: random.Random):
        super().__init__(partition)
        self.rnd = rnd
        self.held: list[tuple[np.ndarray, np.ndarray]] = []

    def stage(self, succ, refs):
        cuts = sorted(self.rnd.sample(range(1, succ.shape[0]), min(3, succ.shape[0] - 1)))
        self.held += list(zip(np.split(succ, cuts), np.split(refs, cuts)))
        return Done(0)

    def commit(self):
        self.rnd.shuffle(self.held)
        for batch in self.held:
            self.partition.receive([batch])
        self.held = []
        new = self.partition.commit()
        states = np.concatenate([*self.partition.level, np.zeros(0, np.uint64)])
        self.rnd.shuffle(states)
        cuts = sorted(self.rnd.sample(range(1, max(2, states.shape[0])), min(2, max(0, states.shape[0] - 1))))
        self.partition.level = deque(np.split(states, cuts))
        return Done(new)


def shuffled_search(model, parts: int, seed: int, watch, budget: Budget = Budget(), symmetric: bool = False,
                    visited_budget=None):
    rnd = random.Random(seed)
    track = list(range(len(model.actions)))
    partitions = [Partition(model, i, parts, list(watch), track, visited_budget, symmetric=symmetric)
                  for i in range(parts)]
    return search_partitions(model, [Shuffled(p, rnd) for p in partitions], budget, None, watch, track, None,
                             time.perf_counter(), symmetric=symmetric)


def watched_of(props) -> list:
    return [p.expr for p in props if isinstance(p, (Invariant, Reachable)) and p.expr is not None]


def witnesses(space) -> dict:
    """Every witness the search names, with the chain of states leading to it."""
    named = {("watch", k): key for k, key in enumerate(space.watch) if key is not None}
    named |= {("watch error", k): key for k, (key, _message) in space.watch_errors.items()}
    named |= {("deadlock", i): key for i, key in enumerate(space.deadlocks)}
    named |= {("fired", a): f[0] for a, f in space.fired.items() if f is not None}
    if space.error is not None:
        named["error"] = space.error[0]
    chains = {what: space.chain(key) for what, key in named.items()}
    fired = {a: (f[0], space.labels.items[f[1]], f[2]) for a, f in space.fired.items() if f is not None}
    return {"chains": chains, "fired": fired, "errors": dict(space.watch_errors),
            "error": space.error, "states": len(space), "complete": space.complete}


@settings(max_examples=examples(25), deadline=None)
@given(models(), st.lists(bools(), max_size=2), st.integers(2, 3), st.integers(0, 2 ** 32),
       st.sampled_from([Budget(), Budget(max_depth=2)]))
def test_shuffled_offers_give_the_same_witnesses_and_traces(model, watched, parts, seed, budget):
    want = witnesses(search_in_process(model, 1, budget, watched)[0])
    assert witnesses(shuffled_search(model, parts, seed, watched, budget)) == want
    assert witnesses(shuffled_search(model, parts, seed + 1, watched, budget, visited_budget=256)) == want


@settings(max_examples=examples(15), deadline=None)
@given(MODELS, st.data(), st.integers(2, 3), st.integers(0, 2 ** 32))
def test_shuffled_offers_give_the_same_symmetric_traces(model, data, parts, seed):
    watched = watched_of(data.draw(claims(model.players)))
    want = witnesses(shuffled_search(model, 1, seed, watched, symmetric=True))
    assert witnesses(shuffled_search(model, parts, seed + 1, watched, symmetric=True)) == want


def test_a_state_keeps_the_smallest_parent_offered_in_its_level():
    table = VisitedTable(links="key", stamped=True)
    keys = np.asarray([10, 11, 10, 12], np.uint64)
    table.reserve(4)
    new = table.offer(keys, np.asarray([9, 5, 3, 0], np.uint64))
    assert sorted(keys[new].tolist()) == [10, 11, 12]      # one of the two offers of 10 is new
    assert table.offer(np.asarray([11], np.uint64), np.asarray([2], np.uint64)).tolist() == [False]
    assert [table.parent_of(k) for k in (10, 11, 12)] == [2, 1, None]
    table.next_level()                       # an earlier level's state keeps its (shallower) parent
    table.reserve(2)
    assert table.offer(np.asarray([10, 13], np.uint64), np.asarray([1, 7], np.uint64)).tolist() == [False, True]
    assert table.parent_of(10) == 2
    for _ in range(STAMPS):                  # the stamps wrap: counted again from a cleared table
        table.next_level()
    table.offer(np.asarray([13], np.uint64), np.asarray([1], np.uint64))
    assert table.parent_of(13) == 6


def test_a_spill_keeps_the_current_levels_states_in_memory():
    table = VisitedTable(capacity=64, links="key", budget_bytes=64 * 17, stamped=True)
    old = np.arange(100, 150, dtype=np.uint64)
    table.reserve(old.shape[0])
    table.offer(old, old)
    table.next_level()
    new = np.arange(1000, 1040, dtype=np.uint64)
    table.reserve(new.shape[0])
    table.offer(new, new)
    table.reserve(200)                       # past the budget: spills the earlier level only
    assert table.runs and len(table) == 90 and table.count == 40
    table.offer(new, np.ones(40, np.uint64))
    assert {table.parent_of(int(k)) for k in new} == {0}
    assert table.parent_of(120) == 119
