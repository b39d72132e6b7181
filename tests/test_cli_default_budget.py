"""The default deadline of check, lint, report and diff (600 s of CPU when no --timeout is given): a
plain command ends with an answer (what the default budget leaves open is UNKNOWN, exit 3), and
'none' lifts it."""
from __future__ import annotations

from pathlib import Path

import pytest

from verifier.cli import build_parser, config, main
from verifier.cli.common import DEFAULT_TIMEOUT, is_default_deadline, run_backstop, run_options

MINI = Path(__file__).parent / "fixtures" / "core" / "mini.yaml"
PROPS = MINI.with_name("mini_props.yaml")


@pytest.mark.parametrize("command", ["check", "lint", "report", "diff"])
def test_whole_run_commands_have_a_default_deadline(command):
    extra = [str(MINI)] if command == "diff" else []
    args = build_parser().parse_args([command, str(MINI), *extra])
    assert args.timeout == DEFAULT_TIMEOUT and is_default_deadline(args.timeout)
    budget = run_options(args).budget
    assert budget.backstop is not None and budget.backstop.owner == f"the default CPU budget of {DEFAULT_TIMEOUT:g} s"


def test_none_lifts_the_default():
    args = build_parser().parse_args(["check", str(MINI), "--timeout", "none"])
    assert args.timeout is None and run_options(args).budget.backstop is None


def test_mutate_has_the_default_deadline():
    assert build_parser().parse_args(["mutate", str(MINI)]).timeout == DEFAULT_TIMEOUT


@pytest.mark.parametrize("value", ["soon", "-5", "0", "nan", "inf"])
def test_a_bad_timeout_is_a_usage_error(value, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["check", str(MINI), "--timeout", value])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--timeout" in err and "'none' for no limit" in err and "Traceback" not in err


def test_the_config_can_lift_or_set_it(tmp_path, monkeypatch):
    project = tmp_path / "pyproject.toml"
    monkeypatch.chdir(tmp_path)
    for value, expected in (('"none"', None), ("90", 90.0)):
        project.write_text(f'[project]\nname = "g"\n[tool.turnproof]\ntimeout = {value}\n', encoding="utf-8")
        parser = build_parser()
        config.apply(config.load(config.find(Path.cwd())), parser)
        args = parser.parse_args(["check", str(MINI)])
        assert args.timeout == expected and not is_default_deadline(args.timeout)   # the project's: wall clock


def test_help_teaches_the_default(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"Default: {DEFAULT_TIMEOUT:g} s" in text and "'none': no limit" in text


def test_progress_shows_what_is_left_of_the_timeout(capsys):
    from verifier.cli.common import Progress
    from verifier.engines.base import ProgressInfo

    for timeout, words in (([], "s of the default CPU budget left"), (["--timeout", "90"], "s of the --timeout left"),
                           (["--timeout", "none"], "")):
        args = build_parser().parse_args(["check", str(MINI), *timeout])
        line = Progress(quiet=False, backstop=run_backstop(args))
        line.enabled = True                       # as on a terminal
        line(ProgressInfo(states=12_345, depth=7, elapsed=2.0))
        err = capsys.readouterr().err
        assert "12,345 states  depth 7" in err and words in err
        assert (" left)" in err) == bool(words)


@pytest.mark.parametrize(("extra", "words"), [
    ([], f"the backstop: the default CPU budget of {DEFAULT_TIMEOUT:g} s)"),
    (["--timeout", "none"], "the backstop: no --timeout)")])
def test_a_run_the_budget_left_open_says_which_limit_and_how_to_give_it_more(extra, words, capsys):
    few_states = ["--engine", "explicit", "--max-states", "3"]
    assert main(["check", str(MINI), "-q", "--no-consistency", "-p", str(PROPS), *few_states, *extra]) == 3
    err = " ".join(capsys.readouterr().err.split())
    assert "left UNKNOWN (stopped by --max-states 3; " + words in err and "a larger --max-states or --rlimit" in err


def test_a_decided_run_has_no_budget_note(capsys):
    assert main(["check", str(MINI), "-q", "--no-consistency", "-p", str(PROPS)]) == 0
    assert "UNKNOWN" not in capsys.readouterr().err
