"""The traces one output carries, bounded, so that its size follows what was asked for.

Each of N claims may carry a trace of up to N steps: 1,000 claims of a few kilobytes asked for
125 MB of JSON and 403 MB of SARIF. Every format takes its runs through `bound_traces`: the
traces of the verdicts not as expected come first, then those of new findings, then the rest, in
their order, and they are kept while their items (the start's values, and per step the move, its
choices and its changes) fit TRACE_ITEMS together. A trace that does not fit is left out whole
(never cut: every trace an output holds replays), its claim or finding marked with the steps it
had (`evidence["trace_omitted"]`), and the output says how many it left out and how to see one.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from verifier.result import CheckResult, Finding, ModelRun
from verifier.trace import Trace

TRACE_ITEMS = 20_000        # the items of every trace of one output together
OMITTED = "trace_omitted"   # evidence key: the steps of a trace the output left out


def trace_items(trace: Trace) -> int:
    """A trace's size in items: the start's values, and per step the move, its choices and changes."""
    return len(trace.initial) + sum(1 + len(s.choice) + len(s.changes) for s in trace.steps)


@dataclass(frozen=True)
class Bounded:
    runs: list[ModelRun]
    omitted: int            # traces left out

    @property
    def note(self) -> str:
        """What the output left out, in words ("" when nothing)."""
        if not self.omitted:
            return ""
        return (f"{self.omitted} trace{'s' * (self.omitted != 1)} left out: the traces of one output hold at most "
                f"{TRACE_ITEMS:,} values and moves together (those of verdicts not as expected first); "
                "check fewer claims at a time (a property file of their own) to see the others")


def bound_traces(runs: Sequence[ModelRun], items: int = TRACE_ITEMS) -> Bounded:
    """`runs` with the traces that do not fit `items` left out (see the module docstring)."""
    wanted: list[tuple[int, int, int, int, Trace]] = []    # (rank, run, 0 claim / 1 finding, index, trace)
    for i, run in enumerate(runs):
        for j, r in enumerate(run.results):
            if r.trace is not None:
                wanted.append((0 if not r.as_expected else 2, i, 0, j, r.trace))
        new = {f.key for f in run.new_findings}
        for j, f in enumerate(run.findings):
            wanted += [(1 if f.key in new else 2, i, 1, j, t) for t in f.traces]
    left, dropped = items, set()
    for _rank, i, kind, j, trace in sorted(wanted, key=lambda w: w[:4]):
        size = trace_items(trace)
        if size <= left:
            left -= size
        else:
            dropped.add((i, kind, j, id(trace)))
    if not dropped:
        return Bounded(list(runs), 0)
    out = []
    for i, run in enumerate(runs):
        results = tuple(_without(r) if (i, 0, j, id(r.trace)) in dropped else r for j, r in enumerate(run.results))
        findings = tuple(_finding_without(f, {id(t) for t in f.traces if (i, 1, j, id(t)) in dropped})
                         for j, f in enumerate(run.findings))
        out.append(replace(run, results=results, findings=findings))
    return Bounded(out, len(dropped))


def _without(r: CheckResult) -> CheckResult:
    assert r.trace is not None
    return replace(r, trace=None, evidence={**r.evidence, OMITTED: len(r.trace)})


def _finding_without(f: Finding, gone: set[int]) -> Finding:
    if not gone:
        return f
    return replace(f, traces=tuple(t for t in f.traces if id(t) not in gone),
                   evidence={**f.evidence, OMITTED: [len(t) for t in f.traces if id(t) in gone]})
