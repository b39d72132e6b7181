"""`turnproof testgen`: the generated conformance test, its worked example, and hostile model text."""
from __future__ import annotations

import ast
import importlib
import json
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from verifier.cli import main
from verifier.lang import load_model
from verifier.testgen.runtime import ConformanceError
from verifier.testgen.writer import generate, identifier

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "aeons_end" / "test_conformance.py"
ADAPTER = "examples.aeons_end.adapter:make_engine"
FAST = settings(max_examples=25, derandomize=True, deadline=None, database=None)


@pytest.fixture()
def example(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.chdir(ROOT)
    return importlib.import_module("examples.aeons_end.test_conformance")


def test_the_committed_example_is_what_testgen_writes(monkeypatch):
    monkeypatch.chdir(ROOT)
    model = load_model("models/aeons_end.yaml").instantiate()
    generated = generate(model, "models/aeons_end.yaml", "examples/aeons_end", ADAPTER, {})
    assert generated.source == EXAMPLE.read_text(encoding="utf-8"), \
        f"regenerate: turnproof testgen models/aeons_end.yaml -o {EXAMPLE.relative_to(ROOT)} --adapter {ADAPTER}"


def test_the_reference_engine_conforms(example):
    run_state_machine_as_test(example.AeonsEndConformance, settings=FAST)


def test_the_injected_hand_limit_bug_is_found_and_shrunk(example):
    from examples.aeons_end.adapter import make_buggy_engine

    class Buggy(example.AeonsEndConformance):
        engine_factory = staticmethod(make_buggy_engine)

    with pytest.raises(ConformanceError) as err:
        run_state_machine_as_test(Buggy, settings=settings(FAST, max_examples=60))
    steps = err.value.steps
    # the shortest game that shows it: play a card, then the Draw phase fills the hand one short
    assert len(steps) == 4
    assert steps[0] == "end Casting" and steps[2] == "end Main" and steps[3] == "refill"
    assert steps[1].split("(")[0] in ("play_gem", "play_relic", "prep")
    assert "hand[0]: engine 1, model 2" in str(err.value)


HOSTILE = textwrap.dedent("""\
    model: "evil\\"); __import__('sys').exit(7) #\\n x"
    variables:
      x: {type: 0..2, init: 0}
    actions:
      - {name: class, when: "x < 2", do: {x: x + 1}}
      - {name: up, choose: {k: 0..1}, when: "x < 2", do: {x: x + 1}}
    """)

COUNTER_ADAPTER = textwrap.dedent("""\
    class Engine:
        def reset(self, initial):
            self.x = initial["x"]
        def legal_actions(self):
            return ["class", "up(k=0)", "up(k=1)"] if self.x < 2 else []
        def apply(self, label):
            self.x += 1
        def observe(self):
            return {"x": self.x}
    def make():
        return Engine()
    """)


def test_hostile_model_text_stays_data(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "it's \"here\""
    folder.mkdir()
    (folder / "m'odel.yaml").write_text(HOSTILE)
    (tmp_path / "counter_adapter.py").write_text(COUNTER_ADAPTER)
    out = folder / "test_generated.py"
    assert main(["testgen", str(folder / "m'odel.yaml"), "-o", str(out), "--adapter", "counter_adapter:make",
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["actions"] == ["class", "up"]
    tree = ast.parse(out.read_text())
    for node in ast.walk(tree):                      # model text only ever inside string literals
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id != "__import__"
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(folder))
    module = importlib.import_module("test_generated")
    assert doc["machine"] == "Evil____Import__Sys___Exit_7_____XConformance"
    run_state_machine_as_test(getattr(module, doc["machine"]), settings=settings(FAST, max_examples=5))
    sys.modules.pop("test_generated", None)


@pytest.mark.parametrize("text, expected", [("end Main", "rule_end_Main"), ("x-y", "rule_x_y")])
def test_identifiers(text, expected):
    assert identifier(text, "rule_") == expected
    assert identifier("class", "") == "class_" and identifier("3x", "") == "_3x"


@pytest.mark.parametrize("argv, message", [
    (["--adapter", "os; rm:x"], "is not MODULE:FUNCTION"),
    (["--adapter", "import.x:y"], "is not MODULE:FUNCTION"),
    (["-D", "HAND=*"], "needs a value for every parameter"),
    (["--steps", "0"], "--steps 0 is out of range"),
])
def test_usage_errors_exit_2(tmp_path, argv, message, capsys):
    out = tmp_path / "t.py"
    assert main(["testgen", "models/aeons_end.yaml", "-o", str(out), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_printed_values_are_written_into_the_test(tmp_path, capsys):
    out = tmp_path / "test_printed.py"
    assert main(["testgen", "models/aeons_end.yaml", "--printed", "-D", "DECK=5", "-D", "GAINS=2",
                 "-o", str(out), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["params"] == {"HAND": 5, "CHARGES": 4, "DECK": 5, "GAINS": 2}
    assert "PARAMS = {'CHARGES': 4, 'DECK': 5, 'GAINS': 2, 'HAND': 5}" in out.read_text()


def test_a_wrong_observation_is_reported(example):
    from examples.aeons_end.adapter import Adapter

    class Chatty(Adapter):
        def observe(self):
            return {**super().observe(), "mana": 3}

    class Machine(example.AeonsEndConformance):
        engine_factory = Chatty

    with pytest.raises(ConformanceError, match=r"observe\(\) names slots the model does not have: \['mana'\]"):
        run_state_machine_as_test(Machine, settings=settings(FAST, max_examples=1))


def test_the_printed_hint_runs_as_printed_and_from_any_folder(tmp_path, monkeypatch, capsys):
    """The `python -m pytest ...` testgen prints runs as printed, and from another folder too: the
    test makes the adapter's package importable from where testgen found it (issue #27.6)."""
    import subprocess

    project = tmp_path / "project"
    (project / "mygame").mkdir(parents=True)
    (project / "models").mkdir()
    (project / "mygame" / "__init__.py").write_text("")
    (project / "mygame" / "engine.py").write_text((ROOT / "examples" / "aeons_end" / "engine.py").read_text())
    (project / "mygame" / "adapter.py").write_text((ROOT / "examples" / "aeons_end" / "adapter.py").read_text()
                                                   .replace("examples.aeons_end.engine", "mygame.engine"))
    (project / "models" / "aeons_end.yaml").write_text((ROOT / "models" / "aeons_end.yaml").read_text())
    monkeypatch.chdir(project)
    assert main(["testgen", "models/aeons_end.yaml", "-o", "checks/test_rules.py", "--adapter",
                 "mygame.adapter:make_engine", "--max-examples", "3", "--steps", "5"]) == 0
    hint = capsys.readouterr().out.rsplit("run it with ", 1)[1].split()
    assert hint == ["python", "-m", "pytest", "checks/test_rules.py"]
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT)                      # turnproof itself, as an installed package would be
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd, args in ((project, hint[1:]), (elsewhere, ["-m", "pytest", str(project / "checks" / "test_rules.py")])):
        done = subprocess.run([sys.executable, *args, "-q", "-p", "no:cacheprovider", "-p", "no:xdist"], cwd=cwd,
                              env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
