"""The shipped CI files: the pre-commit hooks run and gate, the example workflow uses real options."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from verifier.cli import build_parser

REPO = Path(__file__).parent.parent
GATE = Path(__file__).parent / "fixtures" / "gate"
HOOKS = YAML(typ="safe").load((REPO / ".pre-commit-hooks.yaml").read_text())
WORKFLOW = YAML(typ="safe").load((REPO / "docs" / "ci-example.yml").read_text())


def test_hook_manifest_shape():
    assert [h["id"] for h in HOOKS] == ["turnproof-check", "turnproof-gate"]
    for hook in HOOKS:
        assert {"id", "name", "entry", "language"} <= hook.keys()
        assert hook["language"] == "python"
        re.compile(hook["files"])
    assert re.search(HOOKS[0]["files"], "models/wtactics.yaml")
    assert re.search(HOOKS[0]["files"], "properties/wtactics.yaml")        # a claim edited: its model is checked
    assert re.search(HOOKS[1]["files"], "properties/wtactics.yaml") and HOOKS[1]["pass_filenames"] is False


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A repository laid out as the hooks expect, and a `turnproof` command on PATH."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    (tmp_path / "models").mkdir()
    (tmp_path / "properties").mkdir()
    shutil.copy(GATE / "gate.yaml", tmp_path / "models" / "gate.yaml")
    shutil.copy(GATE / "gate_props.yaml", tmp_path / "properties" / "gate.yaml")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "turnproof"
    shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m verifier \"$@\" --engine explicit "
                    f"--no-consistency\n")
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return tmp_path, env


def run_hook(hook: dict, cwd: Path, env: dict, files: list[str]) -> subprocess.CompletedProcess:
    """As pre-commit does: the entry split like a shell line, then the file names."""
    argv = shlex.split(hook["entry"]) + (files if hook.get("pass_filenames", True) else [])
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)


def test_check_hook(project):
    root, env = project
    hook = HOOKS[0]
    assert run_hook(hook, root, env, ["models/gate.yaml"]).returncode == 0
    shutil.copy(GATE / "gate_limit.yaml", root / "models" / "gate.yaml")
    done = run_hook(hook, root, env, ["models/gate.yaml"])
    assert done.returncode == 1 and "limit-at-draw" in done.stdout
    by_claims = run_hook(hook, root, env, ["properties/gate.yaml", "models/gate.yaml"])   # the model once
    assert by_claims.returncode == 1 and by_claims.stdout.count("limit-at-draw") == done.stdout.count("limit-at-draw")
    assert run_hook(hook, root, env, ["properties/no_such_model.yaml"]).returncode == 0


def test_check_hook_refuses_a_model_linked_out_of_the_repository(project):
    root, env = project
    secret = root.parent / "secret.txt"
    secret.write_text("SECRET_TOKEN=ghp_hook_example\n", encoding="utf-8")
    (root / "models" / "leak.yaml").symlink_to(secret)
    os.mkfifo(root / "models" / "fifo.yaml")
    for name in ("leak", "fifo"):
        done = run_hook(HOOKS[0], root, env, [f"models/{name}.yaml"])
        assert done.returncode == 2 and "ghp_" not in done.stdout + done.stderr and f"models/{name}.yaml" in done.stderr


def test_gate_hook(project):
    root, env = project
    hook = HOOKS[1]
    assert run_hook(hook, root, env, []).returncode == 2                 # no baseline recorded yet
    record = subprocess.run(["turnproof", "check", "models/gate.yaml", "--quiet", "--baseline", "baselines/",
                             "--update-baseline"], cwd=root, env=env, capture_output=True, text=True)
    assert record.returncode == 0 and (root / "baselines" / "gate.json").is_file()
    assert run_hook(hook, root, env, []).returncode == 0
    shutil.copy(GATE / "gate_tight.yaml", root / "models" / "gate.yaml")
    done = run_hook(hook, root, env, [])
    assert done.returncode == 1 and "game-can-end: HOLDS -> VIOLATED" in done.stdout


def _commands(script: str) -> list[list[str]]:
    """`turnproof ...` invocations of a workflow script, shell variables filled in."""
    out = []
    for line in script.splitlines():
        line = line.strip()
        start = line.find("turnproof ")
        if start == -1 or line.startswith(("echo", "#")):
            continue
        command = re.split(r"\s(?:\|\||>>|>|2>&1|&&)", line[start:])[0]
        command = re.sub(r"\$\w+|\$\{?\w+\}?|\"\$[^\"]*\"", "x.yaml", command)
        out.append(shlex.split(command)[1:])
    return out


def test_the_example_workflow_uses_real_options():
    assert set(WORKFLOW["jobs"]) == {"check", "diff"}
    steps = [s for job in WORKFLOW["jobs"].values() for s in job["steps"]]
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif") for s in steps)
    commands = [c for s in steps if "run" in s for c in _commands(s["run"])]
    assert {c[0] for c in commands} >= {"check", "diff"}
    parser = build_parser()
    for argv in commands:
        args = parser.parse_args(argv)                 # exits (fails the test) on an unknown option
        assert args.handler is not None
    assert any("--baseline" in c and "sarif" in c for c in commands)
    assert any(c[0] == "diff" and c[1].startswith("git:") for c in commands)
    header = (REPO / "docs" / "ci-example.yml").read_text()
    record = next(line for line in header.splitlines() if "--update-baseline" in line)
    assert _commands(record.lstrip("# "))
