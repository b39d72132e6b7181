"""`[tool.turnproof]` in pyproject.toml: defaults for options, the command line overriding them,
and positioned errors (exit 2) for unknown keys, wrong types and broken TOML."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from verifier.cli import build_parser, config, main

MINI = Path(__file__).parent / "fixtures" / "core" / "mini.yaml"
TOO_FEW = 3          # states: the budget leaves the claims of mini UNKNOWN (exit 3)


def _project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "game"\n\n[tool.turnproof]\n{table}',
                                             encoding="utf-8")
    sub = tmp_path / "rules" / "deep"
    sub.mkdir(parents=True)
    return sub


def test_defaults_are_found_upward_and_the_command_line_wins(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_project(tmp_path, f"max-states = {TOO_FEW}\nengine = \"explicit\"\nproperties = \"claims.yaml\"\n"))
    (tmp_path / "claims.yaml").write_text('claims:\n  - id: small\n    says: "small hands"\n'
                                          '    invariant: "hand[0] <= 4"\n', encoding="utf-8")
    assert main(["check", str(MINI), "--no-consistency", "-q", "-f", "json"]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert "--max-states 3" in json.dumps(doc) and {r["engine"] for r in doc["results"]} == {"explicit/python"}
    assert main(["check", str(MINI), "--no-consistency", "-q", "--max-states", "100000"]) == 0


def test_paths_are_relative_to_the_pyproject(tmp_path, monkeypatch):
    monkeypatch.chdir(_project(tmp_path, 'output-dir = "site"\nbaseline = "baselines/"\n'))
    args = build_parser_with(Path.cwd()).parse_args(["report", str(MINI)])
    assert Path(args.output).resolve() == (tmp_path / "site").resolve()
    check = build_parser_with(Path.cwd()).parse_args(["check", str(MINI)])
    assert Path(check.baseline).resolve() == (tmp_path / "baselines").resolve()
    assert check.output is None                          # output-dir is report's folder, not check's -o FILE


def build_parser_with(cwd: Path):
    parser = build_parser()
    config.apply(config.load(config.find(cwd)), parser)
    return parser


def test_gate_and_its_override(tmp_path, monkeypatch):
    monkeypatch.chdir(_project(tmp_path, "gate = true\n"))
    parser = build_parser_with(Path.cwd())
    assert parser.parse_args(["report", str(MINI), "-o", "x"]).gate is True
    assert parser.parse_args(["report", str(MINI), "-o", "x", "--no-gate"]).gate is False


@pytest.mark.parametrize(("table", "line", "col", "words", "hint"), [
    ("timeout = 60\nmax_states = 10\n", 6, 1, "unknown key 'max_states'", "did you mean 'max-states'"),
    ("colour = \"red\"\n", 5, 1, "unknown key 'colour'", "the keys are: timeout"),
    ("max-states = \"lots\"\n", 5, 14, "max-states must be a whole number", "e.g. max-states = 100"),
    ("  timeout = -1\n", 5, 13, "timeout must be a positive number", "e.g. timeout = 60"),
    ("gate = 1\n", 5, 8, "gate must be true or false", "e.g. gate = true"),
    ("engine = \"fast\"\n", 5, 10, "engine must be one of auto", "e.g. engine = \"auto\""),
    ("max-depth = true\n", 5, 13, "max-depth must be a whole number", "max-depth"),
    ("timeout = \n", 5, 11, "not valid TOML", "fix the file"),
])
def test_bad_config_is_a_positioned_error(tmp_path, monkeypatch, capsys, table, line, col, words, hint):
    monkeypatch.chdir(_project(tmp_path, table))
    assert main(["check", str(MINI), "-q"]) == 2
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert re.match(rf".*pyproject\.toml:{line}:{col}: error: ", first), first
    assert words in first and hint in err and "Traceback" not in err


def test_a_sub_table_is_an_unknown_key(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_project(tmp_path, "timeout = 5\n\n[tool.turnproof.check]\ntimeout = 9\n"))
    assert main(["check", str(MINI), "-q"]) == 2
    assert re.match(r".*pyproject\.toml:7:\d+: error: unknown key 'check'", capsys.readouterr().err)


def test_no_table_no_effect(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.other]\ntimeout = "bad"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert config.find(tmp_path) is None
    assert main(["check", str(MINI), "--no-properties", "--no-consistency", "-q"]) == 0


def test_help_names_the_keys():
    text = build_parser()._subparsers._group_actions[0].choices["report"].format_help()
    assert "[tool.turnproof]" in text and "output-dir" in text and "gate" in text
