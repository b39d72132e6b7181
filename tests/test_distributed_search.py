"""`--workers 2`: the compact search partitioned across two worker processes of a loopback Dask
LocalCluster gives the single-process engine's state counts, verdicts and shortest traces
(replayed)."""
from __future__ import annotations

from pathlib import Path

from verifier.engines.base import Budget
from verifier.engines.explicit import ExplicitEngine
from verifier.ir.expr import App, Const, Index, Local, Op, Quant, QuantKind
from verifier.ir.props import DeadlockFree, Invariant, Reachable
from verifier.lang import load_model
from verifier.semantics import layout
from verifier.trace import replay

PETERSON = Path(__file__).parent.parent / "bench" / "models" / "peterson4.yaml"
CS = Const(1, enum="Pc")


def in_cs(p) -> App:
    return App(Op.EQ, (Index("pc", p), CS))


CLAIMS = [
    DeadlockFree(id="deadlock-free"),
    Invariant(id="mutual-exclusion",
              expr=App(Op.LE, (Quant(QuantKind.COUNT, "p", Const(0), Const(2), in_cs(Local("p"))), Const(1)))),
    Invariant(id="process-0-never-enters", expr=App(Op.NOT, (in_cs(Const(0)),))),
    Reachable(id="process-2-enters", action="enter_cs"),
]


def test_two_workers_match_the_single_process_search(tmp_path):
    three = tmp_path / "peterson3.yaml"                    # 12,498 states (BEEM peterson.1)
    three.write_text(PETERSON.read_text().replace("  N: 4", "  N: 3"))
    model = load_model(str(three))
    want = ExplicitEngine(store="compact").check(model, CLAIMS, Budget())
    got = ExplicitEngine(workers=2).check(model, CLAIMS, Budget())
    assert want[0].stats.states == 12498
    lay = layout(model.instantiate())
    for w, g in zip(want, got):
        assert (g.verdict, g.depth, g.stats.states, g.stats.transitions) == \
            (w.verdict, w.depth, w.stats.states, w.stats.transitions)
        assert (g.trace is None) == (w.trace is None)
        if g.trace is not None:
            assert len(g.trace.steps) == len(w.trace.steps)
            replay(lay, g.trace)
