"""Each exit code of `turnproof check` provoked on a tiny fixture model, as a CI job sees it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from verifier.cli import main

HERE = Path(__file__).parent
REPO = HERE.parent
GATE = HERE / "fixtures" / "gate"
PROPS = str(GATE / "gate_props.yaml")
BASE = ["--engine", "explicit", "--no-consistency", "-q"]


def check(capsys, model: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["check", str(model), "-p", PROPS, *BASE, *extra])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def test_0_every_claim_as_expected(capsys):
    code, out, _ = check(capsys, GATE / "gate.yaml")
    assert code == 0 and "4 claims, 4 as expected" in out


def test_1_a_claim_violated(capsys):
    code, out, _ = check(capsys, GATE / "gate_limit.yaml")
    assert code == 1 and "limit-at-draw" in out and "VIOLATED" in out


def test_1_a_claim_not_as_expected(tmp_path, capsys):
    props = tmp_path / "props.yaml"
    props.write_text(Path(PROPS).read_text().replace("    terminates: turn\n",
                                                      "    terminates: turn\n    expected: VIOLATED\n"
                                                      "    why: \"a wrong expectation\"\n"))
    code = main(["check", str(GATE / "gate.yaml"), "-p", str(props), *BASE])
    assert code == 1 and "turn-ends" in capsys.readouterr().out


@pytest.mark.parametrize("what,old,new", [
    ("model error", 'when: "hand > 0"', 'when: "hand >> 0"'),
    ("unknown name", 'when: "hand > 0"', 'when: "hnad > 0"'),
])
def test_2_model_error(tmp_path, capsys, what, old, new):
    broken = tmp_path / "gate.yaml"
    broken.write_text((GATE / "gate.yaml").read_text().replace(old, new))
    code, out, err = check(capsys, broken)
    assert code == 2 and f"{broken}:" in err and "error:" in err and out == ""


def test_2_usage_error(capsys):
    code, out, err = check(capsys, GATE / "absent.yaml")
    assert code == 2 and "error:" in err
    code, out, err = check(capsys, GATE / "gate.yaml", "--param", "NOPE")
    assert code == 2 and "NAME=VALUE" in err


def test_2_nothing_is_written_on_error(tmp_path, capsys):
    out = tmp_path / "report.sarif"
    code, _, _ = check(capsys, GATE / "absent.yaml", "-f", "sarif", "-o", str(out))
    assert code == 2 and not out.exists()


def test_3_a_budget_left_a_claim_unknown(capsys):
    code, out, _ = check(capsys, GATE / "gate.yaml", "--max-states", "1")
    assert code == 3 and "UNKNOWN" in out


def test_1_wins_over_3(capsys):
    code, _, _ = check(capsys, GATE / "gate_limit.yaml", "--max-states", "30")
    assert code == 1


@pytest.mark.parametrize("fmt", ["json", "junit", "sarif"])
def test_the_format_does_not_change_the_exit_code(capsys, fmt):
    assert check(capsys, GATE / "gate.yaml", "-f", fmt)[0] == 0
    assert check(capsys, GATE / "gate_limit.yaml", "-f", fmt)[0] == 1
    assert check(capsys, GATE / "gate.yaml", "-f", fmt, "--max-states", "1")[0] == 3


def test_exit_codes_of_the_process():
    """The codes reach the shell (python -m verifier)."""
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "verifier", *args], cwd=REPO, capture_output=True,
                              text=True)

    common = ["-p", "tests/fixtures/gate/gate_props.yaml", *BASE]
    assert run("check", "tests/fixtures/gate/gate.yaml", *common).returncode == 0
    assert run("check", "tests/fixtures/gate/gate_limit.yaml", *common).returncode == 1
    assert run("check", "tests/fixtures/gate/absent.yaml", *common).returncode == 2
    assert run("check", "tests/fixtures/gate/gate.yaml", *common, "--max-states", "1").returncode == 3
    assert run("diff", "tests/fixtures/gate/gate.yaml", "tests/fixtures/gate/gate_tight.yaml",
               *common).returncode == 1


@pytest.mark.parametrize("command", ["check", "diff"])
def test_help_documents_the_codes(capsys, command):
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    help_text = capsys.readouterr().out
    assert done.value.code == 0
    assert all(f"  {code}  " in help_text for code in "0123"), command
