"""`--workers N --store compiled`: the distributed search's partitions expand by the model's
compiled code (`compiled/chunks.py`). Run in this process on random models (one to three
partitions, with and without spilling, under a depth budget) against the single-process compact
search: the same states, transitions, levels, deadlock levels, first witnesses and firings, traces
replayed. On two worker processes of a loopback cluster (the single-process verdicts and state
counts, decided by the compiled store): test_distributed_symmetry's
`test_two_compiled_workers_match_the_single_process_search`, on that module's cluster."""
from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st
from test_distributed_search import InProcess
from test_explicit_differential import bools, models
from tiers import examples

from verifier.engines.compact import explore_compact
from verifier.engines.compiled.chunks import prepare
from verifier.engines.distributed import Partition, search_partitions
from verifier.resources import Budget
from verifier.semantics import layout
from verifier.trace import replay


@settings(max_examples=examples(4), deadline=None)
@given(models(), st.lists(bools(), max_size=2), st.integers(1, 3), st.sampled_from([None, 256]),
       st.sampled_from([Budget(), Budget(max_depth=2)]))
def test_compiled_partitions_store_the_states_of_the_single_process_search(model, watched, parts, visited_budget,
                                                                          budget):
    track = range(len(model.actions))
    want = explore_compact(model, budget, watch=watched, track=track)
    prepare(layout(model))
    partitions = [Partition(model, i, parts, list(watched), list(track), visited_budget, compiled=True)
                  for i in range(parts)]
    got = search_partitions(model, [InProcess(p) for p in partitions], budget, None, watched, track, None,
                            time.perf_counter())
    assert (got.error is None) == (want.error is None)
    if want.error is not None:
        assert got.depth_of(got.error[0]) == want.depth_of(want.error[0])
        assert got.error[1] == want.error[1]
        return
    assert (len(got), got.transitions, got.levels, got.complete) == \
        (len(want), want.transitions, want.levels, want.complete)
    assert [got.depth_of(g) for g in got.deadlocks] == [want.depth_of(w) for w in want.deadlocks]
    for k in range(len(watched)):
        if got.watch[k] is not None:
            assert want.watch[k] is not None and got.depth_of(got.watch[k]) == want.depth_of(want.watch[k])
            replay(layout(model), got.trace_to(got.watch[k]))
    for a, w in want.fired.items():
        assert (got.fired[a] is None) == (w is None)
        if w is not None:
            replay(layout(model), got.trace_through(*got.fired[a]))
