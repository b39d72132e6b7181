"""A budget's backstop (the --timeout alarm, the memory watchdog, Z3's memory bound) cuts a run
short in whatever stage it hits: what was decided keeps its verdict, the rest is UNKNOWN with
the reason, in every output format, exit 3; never a traceback, exit 4 or "nothing decided"."""
from __future__ import annotations

import gc
import json
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import z3

from verifier import runner
from verifier.cli import main
from verifier.engines.explicit import ExplicitEngine
from verifier.resources import ManualClock, memory, signals

GATE = Path(__file__).parent / "fixtures" / "gate"
MODEL = str(GATE / "gate.yaml")
PROPS = str(GATE / "gate_props.yaml")
TWO_GROUPS = """\
claims:
  - id: hand-in-range
    says: "The hand holds at most three cards"
    invariant: "hand <= 3"
  - id: no-play-after-discard
    says: "No card is played after the discard"
    ordering: {pattern: absence, p: play, scope: {after: discard, until: turn-end}}
"""


@pytest.fixture
def two_groups(tmp_path) -> str:
    """A direct claim and a monitored one: the engine is asked twice."""
    path = tmp_path / "props.yaml"
    path.write_text(TWO_GROUPS, encoding="utf-8")
    return str(path)


@pytest.fixture
def z3_restored(monkeypatch):
    """Z3's memory bound (a global of the process) back to what it was and to this process's real
    headroom after the test: once the test's patches are undone (this teardown runs before the
    monkeypatch fixture's own), else later tests in the process would meet Z3's "out of memory"."""
    before = z3.get_param("memory_max_size")
    yield
    monkeypatch.undo()
    z3.set_param("memory_max_size", before)
    memory.bound_z3()


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------- Z3's memory bound

def test_z3_out_of_memory_is_unknown_with_the_reason(monkeypatch, capsys, z3_restored):
    """Z3 allowed almost nothing beyond what it holds: every claim UNKNOWN, saying so, exit 3."""
    monkeypatch.setattr(memory, "Z3_MIN_BYTES", 0)
    monkeypatch.setattr(memory, "memory_limit_bytes", lambda *_: memory.resident_bytes() + 2**16)
    code = main(["check", MODEL, "-p", PROPS, "--engine", "symbolic", "--no-consistency", "-q", "-f", "json"])
    results = _json(capsys)["results"]
    assert code == 3
    assert all(r["verdict"] == "UNKNOWN" and "Z3 ran out of memory" in r["reason"] for r in results), results


def test_z3_works_again_once_bounded_with_room(monkeypatch, z3_restored):
    """Bounded to (almost) nothing, then bounded with room: Z3 solves again. Z3 is started here,
    not left to an earlier test (before it starts, the bound asks for Z3_START_BYTES, not the
    patched Z3_MIN_BYTES); no garbage collection between the bound and the look at Z3's estimate
    (collecting earlier tests' Z3 objects shrinks it)."""
    z3.main_ctx()
    monkeypatch.setattr(memory, "Z3_MIN_BYTES", 0)
    monkeypatch.setattr(memory, "memory_limit_bytes", lambda *_: memory.resident_bytes() + 2**16)
    gc.collect()
    gc.disable()
    try:
        memory.bound_z3()
        assert int(z3.get_param("memory_max_size")) <= z3.Z3_get_estimated_alloc_size() // memory.MB + 1
    finally:
        gc.enable()
    monkeypatch.undo()
    memory.bound_z3()
    s = z3.Solver()
    s.add(z3.Int("x") == 1)
    assert s.check() == z3.sat


def test_z3_is_not_started_without_room(monkeypatch):
    """One byte short of the least Z3 needs: the resident size read once (it may shrink between two
    reads in a test worker) and no raised floor left by an earlier test's cut."""
    resident = memory.resident_bytes()
    monkeypatch.setattr(memory, "resident_bytes", lambda: resident)
    monkeypatch.setattr(memory._run, "floor", 0)
    monkeypatch.setattr(memory, "memory_limit_bytes", lambda *_: resident + memory.Z3_MIN_BYTES - 1)
    with pytest.raises(memory.OutOfMemory, match="no room left for Z3"):
        memory.bound_z3()


# ---------------------------------------------------------------- the memory watchdog

def _hog(*_args, **_kwargs):
    hog = []
    while True:                          # only the watchdog ends this
        hog.append(bytearray(2**20))


def test_the_watchdog_cuts_the_analyses_short_and_the_claims_keep_their_verdicts(monkeypatch, capsys):
    monkeypatch.setattr(memory, "safe_to_raise", lambda _frame: True)     # the hog lives in this file
    monkeypatch.setattr("verifier.analysis.analyse_model", _hog)
    z3.main_ctx()                         # started first under --max-memory: counted in what is left
    limit = int(memory.resident_bytes() / memory.SOFT_SHARE) // memory.MB + 80   # the claims' search fits
    code = main(["check", MODEL, "-p", PROPS, "--max-memory", str(limit), "-q", "-f", "json"])
    doc = _json(capsys)
    assert code == 3
    # decided either way: by the search, or by a proof where the memory this worker already held cut it
    assert [r["verdict"] in ("HOLDS", "PROVED") for r in doc["results"]] == [True] * 4
    assert f"cut short (--max-memory {limit} MB reached" in doc["analyses"][0]["reason"]
    assert memory.resident_bytes() < (limit + 200) * memory.MB      # the hog was stopped, not the test


def test_a_search_accounts_for_the_growth_of_its_table_before_it_comes():
    """Just before a large set resizes, `table_growth` foresees the new table; just after, nothing."""
    table: set[int] = set()
    resizes = 0
    for k in range(300_000):
        before, foreseen = sys.getsizeof(table), memory.table_growth(table)
        table.add(k)
        if sys.getsizeof(table) > before and before > 2**20:
            resizes += 1
            assert foreseen >= 0.9 * sys.getsizeof(table)
            assert memory.table_growth(table) == 0
    assert resizes >= 2


# ---------------------------------------------------------------- the --timeout backstop

CLOCK = ManualClock(1000.0)


@pytest.fixture
def fast_backstop():
    """The run's backstop on a clock this file moves by hand: no timer, no waiting."""
    with signals.run_clock(CLOCK):
        yield


def _hang(*_args, **_kwargs):
    """A step that would run forever: its time passes, and the backstop's alarm rings in it."""
    CLOCK.advance(10**6)
    signals.fire(sys._getframe())
    raise AssertionError("the backstop raises")


def test_the_backstop_keeps_the_decided_claims(monkeypatch, capsys, fast_backstop):
    monkeypatch.setattr("verifier.analysis.analyse_model", _hang)
    code = main(["check", MODEL, "-p", PROPS, "--timeout", "60", "-q", "-f", "json"])
    doc = _json(capsys)
    assert code == 3
    assert [r["verdict"] for r in doc["results"]] == ["HOLDS", "HOLDS", "HOLDS", "HOLDS"]
    assert "cut short by --timeout (60 s)" in doc["analyses"][0]["reason"]


def test_the_backstop_makes_the_undecided_claims_unknown(monkeypatch, capsys, fast_backstop, two_groups):
    monkeypatch.setattr("verifier.runner.free_cpus", lambda: 1)    # the analyses after the claims, not beside
    original = ExplicitEngine.check

    def second_call_hangs(self, model, claims, *args, **kwargs):
        if any(c.id.startswith("no-play") for c in claims):
            _hang()
        return original(self, model, claims, *args, **kwargs)

    monkeypatch.setattr(ExplicitEngine, "check", second_call_hangs)
    code = main(["check", MODEL, "-p", two_groups, "--engine", "explicit", "--timeout", "5", "-q", "-f", "json"])
    doc = _json(capsys)
    verdicts = {r["id"]: (r["verdict"], r["reason"]) for r in doc["results"]}
    assert code == 3
    assert verdicts["hand-in-range"][0] == "HOLDS"
    assert verdicts["no-play-after-discard"] == ("UNKNOWN", "cut short by --timeout (5 s)")
    assert "cut short by --timeout" in doc["analyses"][0]["reason"]


def test_cut_short_reasons_name_the_budget():
    from verifier.engines.base import Budget

    assert runner._cut_reason(memory.OutOfMemory("--max-memory 9 MB reached"), Budget()) == \
        "cut short (--max-memory 9 MB reached)"
    assert runner._cut_reason(MemoryError(), Budget()) == "cut short (out of memory)"


# ---------------------------------------------------------------- every format says where the analyses stopped

@pytest.mark.parametrize("fmt", ["text", "json", "junit", "sarif"])
def test_every_format_says_the_analyses_were_cut_short(deep, capsys, fmt):
    code = main(["check", deep, "--no-properties", "--max-states", "1000", "-q", "-f", fmt])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 3
    assert "the search stopped at 1,000 states (--max-states 1000)" in out
    if fmt == "junit":
        assert ET.fromstring(out).find(".//error[@type='UNKNOWN']") is not None
    if fmt == "sarif":
        notes = json.loads(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        assert any("1,000 states" in n["message"]["text"] for n in notes)


def test_findings_md_says_what_was_left_unknown(deep):
    from verifier.engines.base import Budget
    from verifier.report.findings_md import findings_markdown
    from verifier.runner import RunOptions, check_model

    runs = check_model(deep, RunOptions(budget=Budget(max_states=1000), use_properties=False))
    text = findings_markdown([runs])
    assert "**UNKNOWN**: the consistency analyses stopped after 1,000 states" in text
    assert "None found in what was analysed." in text and "None for these parameter values." not in text


# ---------------------------------------------------------------- what is written after a cut

def test_report_after_the_backstop_writes_the_pages_and_says_unknown(monkeypatch, capsys, fast_backstop, tmp_path):
    monkeypatch.setattr("verifier.runner.free_cpus", lambda: 1)    # the analyses here (the clock moves here)
    monkeypatch.setattr("verifier.analysis.analyse_model", _hang)
    out = tmp_path / "site"
    code = main(["report", MODEL, "-p", PROPS, "-o", str(out), "--timeout", "5", "-q"])
    assert code == 3, capsys.readouterr().err
    findings = (out / "FINDINGS.md").read_text(encoding="utf-8")
    assert "cut short by --timeout (5 s)" in findings
    assert "Not laid out: the --timeout had passed" in (out / "gate" / "index.html").read_text(encoding="utf-8")


GRAPHVIZ_ABORTS = "digraph g {\n" + "".join(     # Graphviz 'dot' fails an assertion on this graph (abort)
    f'  "{a}" -> "{b}" [label="never taken", constraint=false];\n' for a, b in (
        ("Draw", "Play2"), ("Draw", "MoveAttack2"), ("Play1", "Entrance"), ("Play1", "Discard"),
        ("MoveAttack1", "Discard"), ("Play2", "MoveAttack2"), ("Play2", "Entrance"), ("Play2", "Discard"),
        ("MoveAttack2", "Entrance"), ("MoveAttack2", "Discard"), ("Entrance", "Discard"),
        ("Discard", "Mulligan"))) + "}\n"


def test_a_graphviz_abort_costs_its_diagram_not_the_run(monkeypatch):
    from verifier.report import diagrams

    assert "<svg" in diagrams.render_svg(GRAPHVIZ_ABORTS)              # a note or, once fixed, the drawing
    monkeypatch.setattr(diagrams, "_layout", lambda _dot: os.abort())
    assert "could not lay out" in diagrams.render_svg("digraph g { a -> b }")


def test_forked_readings_are_cut_short_by_their_own_backstop(monkeypatch, capsys, fast_backstop, tmp_path):
    """Each reading in its forked worker gets the backstop again (interval timers are not
    inherited), before the parent's: its decided claims come back with it."""
    monkeypatch.setattr("verifier.forking.free_cpus", lambda: 2)
    monkeypatch.setattr("verifier.analysis.analyse_model", _hang)
    props = tmp_path / "mini_props.yaml"
    props.write_text('claims:\n  - id: anything\n    says: "Always"\n    invariant: "true"\n', encoding="utf-8")
    mini = str(Path(__file__).parent / "fixtures" / "lang" / "mini.yaml")
    code = main(["check", mini, "-p", str(props), "--timeout", "5", "-q", "-f", "json"])
    doc = _json(capsys)
    assert code == 3, doc
    assert [r["verdict"] for r in doc["results"]] == ["HOLDS", "HOLDS"], [r["reason"] for r in doc["results"]]
    assert [("cut short by --timeout" in a["reason"]) for a in doc["analyses"]] == [True, True]


def test_the_backstop_in_the_comparison_of_readings_leaves_the_findings_unknown(monkeypatch, capsys, fast_backstop):
    """The backstop fires in the comparison of the readings, after the claims and the analyses."""
    monkeypatch.setattr("verifier.analysis.across_readings", _hang)
    code = main(["check", MODEL, "-p", PROPS, "--timeout", "60", "-q", "-f", "json"])
    doc = _json(capsys)
    assert code == 3
    assert [r["verdict"] for r in doc["results"]] == ["HOLDS", "HOLDS", "HOLDS", "HOLDS"]
    assert doc["findings"] == [] and "comparison and replay" in doc["analyses"][0]["reason"]


def test_diff_after_the_backstop_compares_what_was_decided(monkeypatch, capsys, fast_backstop):
    monkeypatch.setattr("verifier.runner.free_cpus", lambda: 1)    # the analyses here (the clock moves here)
    monkeypatch.setattr("verifier.analysis.analyse_model", _hang)
    code = main(["diff", MODEL, MODEL, "--timeout", "5", "-q"])
    out = capsys.readouterr().out
    assert code == 3, out
    assert "not compared: exploration incomplete (cut short by --timeout)" in out


def test_asynchronous_exceptions_wait_for_turnproof_own_code():
    """Raised by a signal handler only in the package's own frames or its generated code, never
    half-way through a library's (a z3 Context half built printed 'Exception ignored' at exit)."""
    generated = eval(compile("sys._getframe()", "<turnproof generated>", "eval"), {"sys": sys})
    assert signals.safe_to_raise(generated)
    assert not signals.safe_to_raise(sys._getframe())            # this test file: a library to the run
    own = runner._cut_reason.__code__.co_filename
    assert any(own.startswith(p) for p in signals.PACKAGE)


def test_report_without_the_gate_exits_3_when_a_state_budget_cut_the_analyses(deep, capsys, tmp_path):
    """Not only --timeout: whatever budget left something UNKNOWN, the report says so with exit 3."""
    out = tmp_path / "site"
    code = main(["report", deep, "--no-properties", "--max-states", "1000", "-o", str(out), "-q",
                 "--playouts", "0", "--no-graph"])
    assert code == 3, capsys.readouterr().err
    assert "stopped after 1,000 states" in (out / "FINDINGS.md").read_text(encoding="utf-8")
