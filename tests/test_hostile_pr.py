"""A hostile pull request (issue 28) and a hostile baseline (issue 29.1, 29.8), one fixture per
case: no secret reaches the log, nothing is read or written outside the project, the
configuration cannot soften the gate, a verdict left open is not a change, and a model error is
a model error (exit 2) in every command. Names that collide (28.4) and output bounds (28.6)
are tested beside the report folder and the limits."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from verifier import baseline
from verifier.cli import main
from verifier.diffing.changes import ModelDiff
from verifier.diffing.compare import compare_checks
from verifier.diffing.versions import Version, resolve
from verifier.result import ModelRun, Verdict
from verifier.runner import RunOptions, check_model

HERE = Path(__file__).parent
GATE = HERE / "fixtures" / "gate"
HOSTILE = HERE / "fixtures" / "hostile"
SECRET = "SECRET_TOKEN=ghp_hostile_example_secret"
MODEL_ERRORS = ("pop_empty", "overreach")       # a pop of an empty sequence; an index past an array
QUICK = ["-q", "--engine", "explicit"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A pull request's checkout: models/ and properties/ of the gate fixture, the current folder;
    beside it, outside the project, a file holding a secret."""
    root = tmp_path / "project"
    (root / "models").mkdir(parents=True)
    (root / "properties").mkdir()
    shutil.copy(GATE / "gate.yaml", root / "models" / "gate.yaml")
    shutil.copy(GATE / "gate_limit.yaml", root / "models" / "gate_limit.yaml")
    shutil.copy(GATE / "gate_props.yaml", root / "properties" / "gate.yaml")
    shutil.copy(GATE / "gate_props.yaml", root / "properties" / "gate_limit.yaml")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "id_rsa").write_text(SECRET + "\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def first_environ_entry() -> str:
    entries = [e for e in Path("/proc/self/environ").read_bytes().split(b"\0") if b"=" in e]
    return entries[0].decode("utf-8", "replace") if entries else ""


# ---- 28.1 inputs are regular files inside the project

@pytest.mark.parametrize("target", ["/proc/self/environ", "../../outside/id_rsa"])
def test_a_model_linked_to_a_secret_is_refused_unread(project, capsys, target):
    (project / "models" / "leak.yaml").symlink_to(target)
    code, out, err = run(capsys, "check", "models/leak.yaml", *QUICK)
    assert code == 2 and "models/leak.yaml" in err
    assert SECRET not in out + err and "ghp_" not in out + err
    assert first_environ_entry() not in out + err
    assert "system file" in err if target.startswith("/proc") else "leads outside the project" in err


def test_a_property_file_linked_out_of_the_project_is_refused(project, capsys):
    (project / "properties" / "gate.yaml").unlink()
    (project / "properties" / "gate.yaml").symlink_to(project.parent / "outside" / "id_rsa")
    code, out, err = run(capsys, "check", "models/gate.yaml", *QUICK)
    assert code == 2 and "properties/gate.yaml" in err and "ghp_" not in out + err


def test_a_symbolic_link_out_of_the_models_folder_is_refused(project, capsys):
    (project / "models").rename(project / "real")
    (project / "models").symlink_to(project.parent / "outside")
    (project.parent / "outside" / "m.yaml").write_text((GATE / "gate.yaml").read_text(encoding="utf-8"),
                                                      encoding="utf-8")
    code, _, err = run(capsys, "check", "models/m.yaml", *QUICK)
    assert code == 2 and "leads outside the project" in err


def test_a_link_inside_the_project_is_read(project, capsys):
    (project / "models" / "alias.yaml").symlink_to("gate.yaml")
    code, _, _ = run(capsys, "lint", "models/alias.yaml", "-q")
    assert code in (0, 1)


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_fifo_a_device_or_a_folder_is_refused_without_waiting(project, capsys, kind):
    path = project / "models" / "odd.yaml"
    if kind == "fifo":
        os.mkfifo(path)                 # opened without waiting for a writer, then refused
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    code, _, err = run(capsys, "check", "models/odd.yaml", *QUICK)
    assert code == 2 and "models/odd.yaml" in err


@pytest.mark.parametrize("command", [["lint"], ["simulate", "-n", "2"], ["export", "--to", "json"],
                                     ["testgen", "-o", "t.py"], ["mutate", "--max-mutants", "1"]])
def test_every_command_refuses_a_linked_model(project, capsys, command):
    (project / "models" / "leak.yaml").symlink_to("../../outside/id_rsa")
    code, out, err = run(capsys, command[0], "models/leak.yaml", *command[1:])
    assert code == 2 and "ghp_" not in out + err and not (project / "t.py").exists()


def test_import_mermaid_and_baselines_refuse_links(project, capsys):
    (project / "chart.md").symlink_to("/proc/self/environ")
    code, out, err = run(capsys, "import-mermaid", "chart.md")
    assert code == 2 and "chart.md" in err and first_environ_entry() not in out + err
    (project / "baselines").mkdir()
    (project / "baselines" / "gate.json").symlink_to(project.parent / "outside" / "id_rsa")
    code, out, err = run(capsys, "check", "models/gate.yaml", "--baseline", "baselines/", *QUICK)
    assert code == 2 and "ghp_" not in out + err


@pytest.mark.parametrize("table", ['properties = "/proc/self/environ"', 'properties = "../outside/id_rsa"',
                                   'baseline = "/etc"'])
def test_configuration_paths_stay_inside_the_project(project, capsys, table):
    (project / "pyproject.toml").write_text(f"[tool.turnproof]\n{table}\n", encoding="utf-8")
    code, out, err = run(capsys, "check", "models/gate.yaml", *QUICK)
    assert code == 2 and "must be a path inside the project" in err and "pyproject.toml:2:" in err
    assert "ghp_" not in out + err


def test_a_pyproject_linked_to_a_secret_is_refused(project, capsys):
    (project / "pyproject.toml").symlink_to(project.parent / "outside" / "id_rsa")
    code, out, err = run(capsys, "check", "models/gate.yaml", *QUICK)
    assert code == 2 and "pyproject.toml" in err and "ghp_" not in out + err


def test_an_error_never_quotes_a_file_that_failed_the_text_checks(project, capsys):
    (project / "models" / "ctl.yaml").write_text(f"model: x\n{SECRET}\x00\n", encoding="utf-8")
    code, out, err = run(capsys, "check", "models/ctl.yaml", *QUICK)
    assert code == 2 and "control character U+0000" in err and "ghp_" not in out + err


def test_an_error_quotes_one_line_of_a_file_that_passed_them(project, capsys):
    text = (GATE / "gate.yaml").read_text(encoding="utf-8")
    (project / "models" / "typo.yaml").write_text(text.replace("model:", "modle:", 1), encoding="utf-8")
    code, _, err = run(capsys, "check", "models/typo.yaml", *QUICK)
    quoted = {line for line in err.splitlines() if " | " in line and "^" not in line}
    assert code == 2 and quoted == {"     1 | modle: gate"}          # each error quotes its own line only


def test_a_file_read_again_is_quoted_only_as_it_reads_now(project, capsys):
    path = project / "models" / "again.yaml"
    text = (GATE / "gate.yaml").read_text(encoding="utf-8")
    path.write_text(text.replace("model:", "modle:", 1), encoding="utf-8")
    assert run(capsys, "check", "models/again.yaml", *QUICK)[0] == 2
    path.write_text(text.replace("model:", "modle:", 1) + f"# {SECRET}\x1b\n", encoding="utf-8")
    code, out, err = run(capsys, "check", "models/again.yaml", *QUICK)
    assert code == 2 and "control character U+001B" in err and " | " not in err and "ghp_" not in out + err


# ---- 28.2 git:REV:path read safely

@pytest.fixture
def repo(project) -> Path:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                              cwd=project, check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "rules v1")
    return project


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@needs_git
@pytest.mark.parametrize("spec", ["git:--output=x:models/gate.yaml", "git:-p:models/gate.yaml",
                                  "git:HEAD:models/../../../../x/escaped.yaml", "git:HEAD:/etc/passwd",
                                  "git:HEAD:models/..", "git:HEAD:."])
def test_a_hostile_git_version_is_refused(repo, capsys, tmp_path, spec):
    code, _, err = run(capsys, "diff", spec, "models/gate.yaml", *QUICK)
    assert code == 2 and err
    assert not (tmp_path / "x").exists() and not (repo / "x").exists()


@needs_git
def test_a_tree_entry_named_dot_dot_is_never_a_path_written(repo, tmp_path):
    blob = subprocess.run(["git", "hash-object", "-w", "models/gate.yaml"], cwd=repo, check=True,
                          capture_output=True, text=True).stdout.strip()
    tree = subprocess.run(["git", "mktree"], cwd=repo, input=f"100644 blob {blob}\tescaped.yaml\n", check=True,
                          capture_output=True, text=True).stdout.strip()
    outer = subprocess.run(["git", "mktree"], cwd=repo, input=f"040000 tree {tree}\t..\n", check=True,
                           capture_output=True, text=True).stdout.strip()
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(Exception, match="inside the repository"):
        resolve(f"git:{outer}:../escaped.yaml", work)
    version = resolve("git:HEAD:models/gate.yaml", work)
    written = Path(version.path).relative_to(work)
    assert written.parts[1:] == ("models", "gate.yaml") and all(c in "0123456789abcdef" for c in written.parts[0])
    assert sorted(p.name for p in work.iterdir()) == [written.parts[0]]


@needs_git
def test_a_changed_configuration_at_a_revision_is_a_change(repo, capsys):
    (repo / "pyproject.toml").write_text('[tool.turnproof]\nengine = "kind"\nmax-depth = 0\n', encoding="utf-8")
    code, out, _ = run(capsys, "diff", "git:HEAD:models/gate.yaml", "models/gate.yaml", "--no-behaviours", "-q",
                       "--no-consistency")
    assert code == 1 and "[tool.turnproof] engine: not set in OLD, 'kind' in NEW" in out


# ---- 28.3 the configuration cannot soften the gate

def test_a_configuration_that_bounds_the_search_does_not_pass_the_gate(project, capsys):
    """engine = "kind", max-depth = 0 turned a VIOLATED claim into HOLDS_TO_DEPTH at depth 0: exit 0."""
    (project / "pyproject.toml").write_text('[tool.turnproof]\nengine = "kind"\nmax-depth = 0\n', encoding="utf-8")
    code, out, err = run(capsys, "check", "models/gate_limit.yaml", "-q", "--no-consistency")
    assert "HOLDS_TO_DEPTH" in out and code == 3 and "--accept-bounded" in err
    code, _, _ = run(capsys, "check", "models/gate_limit.yaml", "-q", "--no-consistency", "--accept-bounded", "0")
    assert code in (0, 3)                   # accepted from the command line; termination stays UNKNOWN
    (project / "pyproject.toml").write_text("[tool.turnproof]\naccept-bounded = 0\n", encoding="utf-8")
    code, _, err = run(capsys, "check", "models/gate_limit.yaml", "-q")
    assert code == 2 and "unknown key 'accept-bounded'" in err


def test_a_bounded_verdict_counts_only_where_it_is_accepted():
    runs = check_model(str(GATE / "gate_limit.yaml"), RunOptions(engine="kind", properties=str(GATE / "gate_props.yaml"),
                                                                  consistency=False, budget=_depth(0)))
    bounded = next(r for r in runs[0].results if r.verdict is Verdict.HOLDS_TO_DEPTH)
    assert bounded.is_open and not bounded.as_expected
    assert replace(bounded, accept_bounded=0).as_expected and not replace(bounded, accept_bounded=1).as_expected
    expects = replace(bounded, property=replace(bounded.property, expected=Verdict.HOLDS_TO_DEPTH))
    assert expects.as_expected and not expects.is_open


def _depth(k: int):
    from verifier.engines.base import Budget
    return Budget(max_depth=k)


def test_a_changed_configuration_fails_the_baseline(project, capsys):
    code, _, _ = run(capsys, "check", "models/gate.yaml", "--baseline", "baselines/", "--update-baseline", *QUICK,
                     "--no-consistency")
    assert code == 0
    (project / "pyproject.toml").write_text('[tool.turnproof]\nengine = "kind"\nmax-depth = 0\n', encoding="utf-8")
    code, out, _ = run(capsys, "check", "models/gate.yaml", "--baseline", "baselines/", "-q", "--no-consistency")
    assert code == 1 and 'configuration changed: engine: "explicit" -> "kind"' in out
    assert "configuration changed: max-depth: (default) -> 0" in out


# ---- 25.2 a verdict left open is not a change

def test_diff_reports_a_verdict_left_unknown_as_left_open():
    runs = check_model(str(GATE / "gate.yaml"), RunOptions(engine="explicit", properties=str(GATE / "gate_props.yaml"),
                                                           consistency=False))
    cut = [replace(runs[0], results=tuple(replace(r, verdict=Verdict.UNKNOWN) if k == 0 else r
                                          for k, r in enumerate(runs[0].results)))]
    version = Version("a.yaml", "a.yaml")
    for old, new in ((runs, cut), (cut, runs)):
        diff = ModelDiff(version, version, "gate", "gate")
        compare_checks(old, new, diff)
        assert not diff.claims_changed and len(diff.claims_left_open) == 1 and diff.exit_code == 3


# ---- 28.5, 29.8 a model error is a model error in every command

@pytest.mark.parametrize("model", MODEL_ERRORS)
@pytest.mark.parametrize("command", [["check", *QUICK], ["check", *QUICK, "-f", "json"],
                                     ["lint", *QUICK], ["report", "-o", "{tmp}/site", *QUICK, "--playouts", "5"],
                                     ["report", "-o", "{tmp}/site", *QUICK, "--no-properties", "--no-consistency"],
                                     ["simulate", "-n", "5", "-q"], ["mutate", "--max-mutants", "2", *QUICK],
                                     ["diff", "{model}", *QUICK]])
def test_a_model_error_is_exit_2_named_as_one(tmp_path, capsys, model, command):
    path = str(HOSTILE / "models" / f"{model}.yaml")
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{model}", path) for a in command]
    code, out, err = run(capsys, argv[0], path, *argv[1:])
    assert code == 2, err
    assert "model error" in out + err
    assert "by the budget" not in out + err and "a larger --timeout" not in err


def test_a_model_error_beside_a_failed_claim_names_the_exit_it_gives(tmp_path, capsys):
    """A claim not as expected outranks the model error (exit 1); the closing line says so, never
    'exit 2' on a run that exits 1."""
    (tmp_path / "claims.yaml").write_text("claims:\n"
                                          "  - {id: starts-at-one, says: n starts at one, invariant: n == 1}\n"
                                          "  - {id: bounded, says: n stays in range, invariant: n <= 3}\n",
                                          encoding="utf-8")
    code, _, err = run(capsys, "check", str(HOSTILE / "models" / "pop_empty.yaml"), "-p", str(tmp_path / "claims.yaml"),
                       *QUICK, "--no-consistency")
    assert code == 1 and "model error" in err and "(exit 1: a claim or finding is not as expected as well)" in err
    code, _, err = run(capsys, "check", str(HOSTILE / "models" / "pop_empty.yaml"), *QUICK, "--no-consistency")
    assert code == 2 and "(exit 2)" in err
    for gate in ("--gate", "--no-gate"):     # report exits 2 on a model error (with --gate, its playouts meet it)
        code, _, err = run(capsys, "report", str(HOSTILE / "models" / "pop_empty.yaml"), "-p",
                           str(tmp_path / "claims.yaml"), "-o", str(tmp_path / gate), *QUICK, "--no-consistency")
        assert code == 2 and "(exit 2)" in err, (gate, err)


def test_mutate_without_claims_or_analyses_names_a_model_error(tmp_path, capsys):
    """The equivalence search alone meets it: the original is refused (exit 2), never 'a budget cut'."""
    (tmp_path / "none.yaml").write_text("claims: []\n", encoding="utf-8")
    code, out, err = run(capsys, "mutate", str(HOSTILE / "models" / "overreach.yaml"), "-p", str(tmp_path / "none.yaml"),
                         "--no-consistency", "--max-mutants", "2", "-q")
    assert code == 2 and "model error: index 3 out of range for slots" in err and "budget" not in out + err


def test_the_auto_engine_names_a_model_error_too(capsys):
    code, out, err = run(capsys, "check", str(HOSTILE / "models" / "pop_empty.yaml"), "-q", "--no-consistency")
    assert code == 2 and "model error" in err and "by the budget" not in out + err


def test_a_baseline_never_records_or_vouches_for_a_model_error(tmp_path, capsys):
    path = str(HOSTILE / "models" / "overreach.yaml")
    target = str(tmp_path / "overreach.json")
    assert run(capsys, "check", path, *QUICK, "--baseline", target, "--update-baseline")[0] == 2
    code, out, err = run(capsys, "check", path, *QUICK, "--baseline", target)     # recorded UNKNOWN: unchanged
    assert code == 2 and "no change" in out and "model error" in err


@pytest.mark.parametrize("model", MODEL_ERRORS)
def test_commands_that_do_not_run_the_model_write_it_out(tmp_path, capsys, model):
    path = str(HOSTILE / "models" / f"{model}.yaml")
    assert run(capsys, "export", path, "--to", "json")[0] == 0
    assert run(capsys, "testgen", path, "-o", str(tmp_path / "test_it.py"))[0] == 0


def test_json_marks_a_model_error(capsys):
    code, out, _ = run(capsys, "check", str(HOSTILE / "models" / "overreach.yaml"), *QUICK, "-f", "json")
    result = json.loads(out)["results"][0]
    assert code == 2 and result["model_error"] is True and result["trace"] and not result["as_expected"]


def test_a_model_error_comes_with_its_trace(capsys):
    code, out, err = run(capsys, "check", str(HOSTILE / "models" / "overreach.yaml"), *QUICK)
    assert code == 2 and "after 3 steps" in err and out.count("fill") >= 3
    code, _, err = run(capsys, "simulate", str(HOSTILE / "models" / "overreach.yaml"), "-n", "1", "-q")
    assert code == 2 and "model error in playout game 0 after" in err and ": fill" in err


# ---- 29.1 a hostile baseline

def recorded() -> dict:
    return baseline.record(check_model(str(GATE / "gate.yaml"), RunOptions(
        engine="explicit", properties=str(GATE / "gate_props.yaml"), consistency=False)))


def hostile_baselines() -> dict[str, str]:
    good = recorded()
    claims, findings, variant = (json.loads(json.dumps(good)) for _ in range(3))
    claims["variants"][0]["claims"] = {"small": 7}
    findings["variants"][0]["findings"] = 3
    variant["variants"][0] = ["not", "a", "mapping"]
    escapes = json.loads(json.dumps(good))
    escapes["variants"][0]["claims"]["gone\x1b[1A\x1b[2K\x1b[32mall claims as expected\x1b[0m\x1b[8m"] = "HOLDS"
    title = json.loads(json.dumps(good))
    title["model"] = "gate\x1b]0;title\x07\x1b[2J"
    return {"deep": "[" * 100_000 + "]" * 100_000, "claims": json.dumps(claims), "findings": json.dumps(findings),
            "variant": json.dumps(variant), "escapes": json.dumps(escapes), "title": json.dumps(title),
            "not-json": "{", "not-utf8": "\udcff"}


@pytest.mark.parametrize("case", sorted(hostile_baselines()))
def test_a_hostile_baseline_is_exit_2_and_prints_no_escape(tmp_path, capsys, case):
    target = tmp_path / "gate.json"
    text = hostile_baselines()[case]
    target.write_bytes(text.encode("utf-8", "surrogateescape"))
    code, out, err = run(capsys, "check", str(GATE / "gate.yaml"), "-p", str(GATE / "gate_props.yaml"),
                         "--baseline", str(target), *QUICK, "--no-consistency")
    assert code == 2 and str(target) in err
    assert "\x1b" not in out + err and "\x07" not in out + err


def test_update_baseline_replaces_a_hostile_baseline_never_writing_through_a_link(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours\n", encoding="utf-8")
    target = tmp_path / "gate.json"
    target.symlink_to(victim)
    code, _, _ = run(capsys, "check", str(GATE / "gate.yaml"), "-p", str(GATE / "gate_props.yaml"),
                     "--baseline", str(target), "--update-baseline", *QUICK, "--no-consistency")
    assert code == 0 and not target.is_symlink() and victim.read_text(encoding="utf-8") == "not yours\n"
    assert baseline.load(target)["model"] == "gate"


def test_a_baseline_error_names_the_place():
    doc = json.loads(hostile_baselines()["claims"])
    assert baseline.check_shape(doc) == ("variants[0].claims.small", "must be a verdict (PROVED, HOLDS, "
                                         "HOLDS_TO_DEPTH, UNKNOWN, VIOLATED), not the number 7")


def test_what_a_baseline_brings_is_printed_through_printable():
    runs = check_model(str(GATE / "gate.yaml"), RunOptions(engine="explicit", properties=str(GATE / "gate_props.yaml"),
                                                           consistency=False))
    comparison = baseline.compare(runs, recorded())
    comparison.removed.append(baseline.ClaimChange(None, "gone\x1b[2J", "HOLDS", None))
    assert "\x1b" not in comparison.text() and "gone\u241b[2J" in comparison.text()


def test_a_model_error_is_a_typed_stop_not_a_reason_string():
    """ModelRun.model_errors reads typed stops only: a reason that merely says 'model error' is none."""
    runs = check_model(str(GATE / "gate.yaml"), RunOptions(engine="explicit", properties=str(GATE / "gate_props.yaml"),
                                                           consistency=False))
    worded = replace(runs[0], results=(replace(runs[0].results[0], verdict=Verdict.UNKNOWN,
                                               reason="model error: said, not stopped"),))
    assert isinstance(worded, ModelRun) and worded.model_errors == ()
