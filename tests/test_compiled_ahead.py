"""The compiled store's model-independent code loaded in the parent before the readings fork
(`portfolio.ahead` decides, `engines.compiled.ahead` loads): only where some reading is expected
to search in the compiled store, and a reading forked after it finds what it finds without it."""
from __future__ import annotations

import gc
import json
import multiprocessing
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from verifier import runner
from verifier.engines.compiled import ahead as loading
from verifier.engines.compiled import cache, cycles
from verifier.engines.lasso import LARGE_REGION
from verifier.ir.model import Model
from verifier.lang import check_model as load_model
from verifier.lang import load_properties
from verifier.portfolio.ahead import CompiledAhead, compiled_ahead
from verifier.portfolio.stores import SWITCH_STATES, above_defaults, states_bound
from verifier.resources import Budget
from verifier.runner import RunOptions

ROOT = Path(__file__).resolve().parent.parent

MODEL = """\
model: ahead
params:
  N: {default: 2, min: 1, max: 9}
variants:
  strict: {doc: "count to N", rule: "Count: to N"}
  loose: {doc: "count one past N", rule: "Count: to N and one more"}
end: "x == 10"
variables:
  x: {type: 0..10, init: 0}
  y: {type: 0..10, init: 0}
actions:
  - name: inc
    when: {strict: "x < N", loose: "x < N + 1"}
    do: {x: x + 1}
  - {name: up, when: "y < N", do: {y: y + 1}}
  - {name: reset, when: "x > 0 and y > 0", do: {x: 0, y: 0}}
"""

WIDE = MODEL.replace("y: {type: 0..10,", "y: {type: 0..100000,")    # more states possible than the switch

CLAIMS = """\
model: ahead
claims:
  - {id: x-bounded, says: "x stays at most ten", invariant: "x <= 10"}
"""

GRAPH_CLAIM = """\
  - {id: game-ends, says: "every game ends", terminates: game, expected: VIOLATED, why: "reset starts again"}
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    model = tmp_path / "ahead.yaml"
    model.write_text(MODEL)
    claims = tmp_path / "ahead_props.yaml"
    claims.write_text(CLAIMS)
    return str(model), str(claims)


def readings(path: str, **params: int) -> list[Model]:
    return [load_model(path, params, variant)[0] for variant in ("strict", "loose")]


def test_not_expected_at_the_defaults(files):
    """At its defaults a model's searches end in the python store (what defaults are sized for):
    nothing is loaded ahead, also where the plan has a compiled stage after it."""
    path, props = files
    models = readings(path)
    assert not any(above_defaults(m) for m in models)
    assert compiled_ahead(models, [load_properties(props, m) for m in models], Budget()) is None


def test_expected_above_the_defaults_with_the_states_words(files):
    """Above its defaults, a model whose slots allow more states than the switch (y's range) is
    searched in the compiled store from the start (`stores.passes_switch`)."""
    path, props = files
    Path(path).write_text(WIDE)
    models = readings(path, N=3)
    assert all(above_defaults(m) for m in models)
    assert compiled_ahead(models, [load_properties(props, m) for m in models], Budget()) == CompiledAhead((1,), False)
    assert not above_defaults(readings(path, N=1)[0]), "a value below the default is no larger search"


def test_not_expected_above_the_defaults_where_the_states_cannot_pass_the_switch(files):
    path, props = files
    models = readings(path, N=3)
    assert all(above_defaults(m) for m in models)
    assert compiled_ahead(models, [load_properties(props, m) for m in models], Budget()) is None


def test_expected_where_the_compiled_store_is_named(files):
    path, props = files
    models = readings(path)
    claims = [load_properties(props, m) for m in models]
    assert compiled_ahead(models, claims, Budget(), store="compiled") == CompiledAhead((1,), False)
    assert compiled_ahead(models, claims, Budget(), store="python", consistency=False) is None


def test_not_expected_where_no_search_can_reach_the_compiled_store(files):
    """A state cap at the switch keeps every search in the python store; an engine that does not
    search explicitly, without the analyses, searches in no store; free parameters go to Z3."""
    path, props = files
    Path(path).write_text(WIDE)
    models = readings(path, N=3)
    claims = [load_properties(props, m) for m in models]
    assert compiled_ahead(models, claims, Budget(max_states=SWITCH_STATES)) is None
    assert compiled_ahead(models, claims, Budget(), engine="symbolic", consistency=False) is None
    assert compiled_ahead(models, claims, Budget(), engine="symbolic") is not None, "the analyses explore"
    free = [load_model(path, {"N": None}, v)[0] for v in ("strict", "loose")]
    assert compiled_ahead(free, claims, Budget()) is None


def test_the_graph_code_only_for_termination_and_obligation_claims(files):
    path, props = files
    Path(path).write_text(WIDE)
    Path(props).write_text(CLAIMS + GRAPH_CLAIM)
    models = readings(path, N=3)
    assert compiled_ahead(models, [load_properties(props, m) for m in models], Budget()).graphs


def test_the_lasso_kernels_where_a_graph_claim_may_be_decided_on_a_large_graph(files):
    """The lasso kernels serve every store's graphs from `LARGE_REGION` states or transitions on: they
    are loaded for a termination claim where the slots allow that many, also at the defaults, where
    no search is expected in the compiled store; not where the slots cannot hold a large graph, nor
    for claims no explicit search decides."""
    path, props = files
    Path(props).write_text(CLAIMS + GRAPH_CLAIM)
    small = readings(path)
    assert states_bound(small[0].instantiate(), LARGE_REGION) * len(small[0].actions) < LARGE_REGION
    assert compiled_ahead(small, [load_properties(props, m) for m in small], Budget()) is None
    Path(path).write_text(WIDE)
    models = readings(path)
    claims = [load_properties(props, m) for m in models]
    assert compiled_ahead(models, claims, Budget()) == CompiledAhead((), False, True)
    assert compiled_ahead(models, claims, Budget(), engine="symbolic") is None
    Path(props).write_text(CLAIMS)
    assert compiled_ahead(models, [load_properties(props, m) for m in models], Budget()) is None


def test_the_lasso_kernels_alone_load_no_search_code(monkeypatch):
    """Without words to search, only the lasso kernels' module is loaded (not the runtime)."""
    texts: list[str] = []
    monkeypatch.setattr(cache, "load", lambda text: (texts.append(text), (None, True))[1])
    assert loading.load_ahead((), False, True)
    assert texts == [cycles.SOURCE]


def test_the_runner_loads_ahead_only_where_expected_and_before_the_readings(files, monkeypatch):
    """`check_model` loads ahead once, before any reading starts, for readings above the defaults,
    and not at the defaults; the lasso kernels at the defaults too where a termination claim may be
    decided on a large graph."""
    path, props = files
    Path(path).write_text(WIDE)
    events: list = []
    monkeypatch.setattr(loading, "load_ahead", lambda words, graphs, lasso: events.append(
        ("ahead", tuple(words), graphs, lasso, gc.isenabled())))
    reading = runner._reading
    monkeypatch.setattr(runner, "_reading", lambda path, model, *rest: (events.append(("reading", model.variant)),
                                                                        reading(path, model, *rest))[1])
    monkeypatch.setattr(runner, "fork_map", lambda fn, items, fresh=False: [fn(k) for k in items])
    options = RunOptions(properties=props, consistency=False, vacuity=False)
    runner.check_model(path, options)
    assert [e for e in events if e[0] == "ahead"] == []
    events.clear()
    runner.check_model(path, RunOptions(params={"N": 3}, properties=props, consistency=False, vacuity=False))
    assert events == [("ahead", (1,), False, False, False), ("reading", "strict"), ("reading", "loose")]   # no collection
    assert gc.isenabled()                                   # while loading ahead; as before it after
    events.clear()
    Path(props).write_text(CLAIMS + GRAPH_CLAIM)
    runner.check_model(path, options)
    assert events == [("ahead", (), False, True, False), ("reading", "strict"), ("reading", "loose")]


SCRIPT = """\
import json, os, sys
from verifier import runner
from verifier.engines.base import SearchOptions
from verifier.engines.compiled import ahead
from verifier.report.json_out import runs_json

def run():
    runs = runner.check_model({model!r}, runner.RunOptions(properties={props!r}, search=SearchOptions(store="compiled")))
    return json.dumps(runs_json(runs), sort_keys=True, default=str)

def threads():  # this process's threads, native ones included (None where /proc cannot tell)
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None

load = ahead.load_ahead
ahead.load_ahead = lambda *args: False
without = run()
numba_without = "numba" in sys.modules
ahead.load_ahead = load
before = threads()
with_ = run()
print(json.dumps({{"without": without, "with": with_, "numba_without": numba_without,
                  "numba_with": "numba" in sys.modules, "threads": [before, threads()]}}))
"""


def _no_seconds(text: str):
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "seconds"}
        return [strip(v) for v in x] if isinstance(x, list) else x
    return strip(json.loads(text))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="no fork on this platform: the readings run in the parent, nothing is loaded ahead")
def test_a_reading_forked_after_the_load_finds_what_it_finds_without_it(files):
    """In a fresh process: the readings checked in the compiled store with nothing loaded ahead (the
    parent never imports Numba, each forked reading loads it itself), then with the code loaded in
    the parent first: the same verdicts, engines, traces, findings and statistics; and the load
    left no thread running in the parent (a thread holding a lock at a fork would leave it held
    in the child)."""
    path, props = files
    Path(props).write_text(CLAIMS + GRAPH_CLAIM + "  - {id: y-never-two, says: \"y stays below two\", "
                                                   "invariant: \"y < 2\", expected: VIOLATED, why: \"up counts\"}\n")
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT.format(model=path, props=props))],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout)
    assert not seen["numba_without"] and seen["numba_with"]
    assert seen["threads"][0] == seen["threads"][1], "loading Numba's code ahead started no thread to fork beside"
    without, with_ = _no_seconds(seen["without"]), _no_seconds(seen["with"])
    assert without == with_
    results = with_["results"]
    assert len(results) == 6 and {r["engine"] for r in results} == {"explicit/compiled"}
    assert any(r["trace"] for r in results), "a trace rebuilt in a forked reading"
