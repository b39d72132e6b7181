"""The analyses' compiled scan (`analysis.compiled_scan`) against their scan of every state in Python:
forced on small models (`context.SCAN_STATES` at 0), the same findings word for word with the same
traces, which replay; for states of one word and of several, for searches a budget cuts short
(the questions then decided beyond them), and for random rulebooks and models. A scan Numba
cannot compile falls back to the Python scan and says why."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from test_analysis_beyond import RULEBOOKS
from test_analysis_support import analyse, assert_replay, fixture, load_all
from test_compact_store import widened
from test_compiled_store import MODELS
from tiers import examples

from verifier.analysis import analyse_model, compiled_scan, context
from verifier.analysis.compiled_scan import ScanSource
from verifier.cli import main
from verifier.lang import load_model
from verifier.resources import Budget

SETTINGS = settings(max_examples=examples(2), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _words(findings) -> list[tuple]:
    """Everything a finding says, but the Z3 witness of an order-dependence (Z3 may pick another one
    when asked again in the same process; the confirmation on reached states is compared)."""
    return sorted((f.kind, f.subject, str(f.variant), f.message, f.engine, f.scope, repr(f.traces),
                   repr({k: v for k, v in f.evidence.items() if k != "z3_state"})) for f in findings)


@pytest.fixture
def scans(monkeypatch) -> list[str]:
    """Every scan is compiled from the first state on; what each compiled scan said ("" when it scanned)."""
    said: list[str] = []
    real = compiled_scan.scan

    def spy(*args):
        said.append(real(*args))
        return said[-1]

    monkeypatch.setattr(compiled_scan, "scan", spy)
    monkeypatch.setattr(context, "SCAN_STATES", 0)
    return said


def _in_python(run):
    with pytest.MonkeyPatch.context() as python_only:
        python_only.setattr(context, "SCAN_STATES", 10**18)
        return run()


@pytest.mark.parametrize("name, budget", [
    ("gap_yes", Budget()), ("gap_ack", Budget()), ("deadlock_yes", Budget()), ("deadlock_plain", Budget()),
    ("dead_yes", Budget()), ("conflict_yes", Budget()), ("conflict_no", Budget()), ("nondet_yes", Budget()),
    ("order_yes", Budget()), ("order_mixed", Budget()), ("order_many", Budget()), ("chooser", Budget()),
    ("variants_yes", Budget()), ("gap_yes", Budget(max_states=1)), ("dead_yes", Budget(max_states=3))])
def test_the_compiled_scan_gives_the_python_findings(name, budget, scans):
    want = _in_python(lambda: analyse(name, budget=budget))
    got = analyse(name, budget=budget)            # traces replayed there
    assert scans and set(scans) == {""}
    assert _words(got) == _words(want)


def test_states_of_several_words(scans):
    model = widened(load_model(fixture("order_mixed")).instantiate(), 60, 40, steps=True)
    _ctx, want = _in_python(lambda: analyse_model(model))
    ctx, got = analyse_model(model)
    assert ctx.space.packing.words == 2 and scans == [""] and ctx.complete
    assert_replay([model], got)
    assert _words(got) == _words(want) != []


def compiled_finds_what_python_finds(scans, model):
    memo: dict = {}                 # the Z3 witnesses asked once (Z3 may pick another when asked again)
    _ctx, want = _in_python(lambda: analyse_model(model, memo=memo))
    del scans[:]
    _ctx, got = analyse_model(model, memo=memo)
    assert scans == [""]
    assert_replay([model], got)
    assert _words(got) == _words(want)


@SETTINGS
@given(RULEBOOKS)
def test_random_rulebooks(scans, model):
    compiled_finds_what_python_finds(scans, model)


@SETTINGS
@given(MODELS)
def test_random_models(scans, model):
    compiled_finds_what_python_finds(scans, model)


def test_a_scan_numba_cannot_compile_falls_back_to_python(scans, monkeypatch):
    bad = "from numba import njit, types\n\n@njit(types.int64(types.int64))\ndef scan(x):\n    return x + []\n"
    monkeypatch.setattr(compiled_scan, "_source", lambda lay, bans: ScanSource(bad, 1, 1, 1))
    monkeypatch.setattr(compiled_scan, "_digest", lambda lay, bans: None)     # no earlier run's module found
    model = load_all(fixture("gap_yes"))[0]
    _ctx, want = _in_python(lambda: analyse_model(model))
    ctx, got = analyse_model(model)
    assert scans and scans[0].startswith("Numba could not compile the scan: ")
    assert ctx.scan_fallback == scans[0] and ctx.complete
    assert _words(got) == _words(want)


def test_the_check_warns_when_the_analyses_fell_back_to_python(scans, monkeypatch, capsys):
    bad = "from numba import njit, types\n\n@njit(types.int64(types.int64))\ndef scan(x):\n    return x + []\n"
    monkeypatch.setattr(compiled_scan, "_source", lambda lay, bans: ScanSource(bad, 1, 1, 1))
    monkeypatch.setattr(compiled_scan, "_digest", lambda lay, bans: None)     # no earlier run's module found
    code = main(["check", fixture("gap_yes")])
    out = capsys.readouterr()
    assert code == 1, out.err           # the gap is a finding
    assert "the compiled scan could not (Numba could not compile the scan: " in out.out + out.err


MODEL_ERROR = """\
model: model_error
end: "deck == 0"
variables:
  hand: {type: 0..3, init: 0}
  deck: {type: 0..5, init: 5}
  spare: {type: 0..9, init: 0}
actions:
  - {name: draw, when: "deck > 0", do: {hand: hand + 1, deck: deck - 1}, rule: "Draw: take a card"}
  - {name: play, when: "hand == 1", do: {hand: hand - 2}, rule: "Play: two cards leave the hand"}
  - {name: split, when: "deck < 4", do: {spare: 6 / (deck - 2)}, rule: "Split: the spare is shared"}
"""


def test_the_states_before_a_model_error(scans, tmp_path):
    """A model error stops the search at its state: the compiled scan covers the states before it,
    as the Python scan does."""
    path = tmp_path / "model_error.yaml"
    path.write_text(MODEL_ERROR, encoding="utf-8")
    model = load_model(str(path))
    _ctx, want = _in_python(lambda: analyse_model(model))
    ctx, got = analyse_model(model)
    assert ctx.space.error is not None and 0 < ctx.space.error[0] < len(ctx.space.packed)
    assert scans == [""] and not ctx.scan_complete
    assert _words(got) == _words(want) != []
