"""Every command shown in README.md, docs/ and examples/README.md (their `sh` code blocks) is true
to the code (issue #27.6): run in a temporary folder holding a copy of the project's inputs.

Each `turnproof` command is read by the real parser (an option renamed or dropped fails here)
and every input file it names must exist. The fast ones then run in full, as written: `--help`,
`export`, `import-mermaid` (on the chart the export wrote), `testgen`, and `simulate` with 5
games instead of 1,000 (each game is the same; the count only makes the statistics steadier).
The others check shipped games at their defaults or their printed numbers, minutes of CPU in
all; their outcome is the subject of other tests (tests/shipped_runs.py, test_report_shipped.py,
the mutation and diff tests), so here they are only parsed. The `pip install` and whole-suite
`python -m pytest` lines are CI's own steps; the example's `python -m pytest` line is run by
tests/test_testgen.py.
"""
from __future__ import annotations

import glob
import re
import shlex
import shutil
from pathlib import Path

import pytest

from verifier.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]
INPUTS = ("models", "properties", "baselines", "examples")
RUN_IN_FULL = {"--help", "export", "import-mermaid", "testgen", "simulate"}
SMALLER = {"--games 1000": "--games 5"}                 # the same command, fewer random games
NOT_TURNPROOF = ("python -m pip install", "python -m pytest")


def documented_commands() -> list[tuple[str, str]]:
    """(where, command line) for every command of every `sh` block, continuation lines joined and
    comments dropped."""
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in re.finditer(r"```(?:sh|bash|shell)\n(.*?)```", text, re.S):
            line_no = text[:block.start()].count("\n") + 2
            joined = block.group(1).replace("\\\n", " ")
            for k, line in enumerate(joined.splitlines()):
                command = shlex.split(line, comments=True)
                if command:
                    out.append((f"{doc.relative_to(ROOT)}:{line_no + k}", shlex.join(command)))
    return out


COMMANDS = documented_commands()


def test_the_documents_show_commands():
    assert len(COMMANDS) >= 20 and sum(c.startswith("turnproof ") for _, c in COMMANDS) >= 18


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("project")
    for name in INPUTS:
        shutil.copytree(ROOT / name, folder / name)
    return folder


@pytest.mark.parametrize("where, command", COMMANDS, ids=[w for w, _ in COMMANDS])
def test_a_documented_command_is_true_to_the_code(where, command, project, monkeypatch, capsys):
    if command.startswith(NOT_TURNPROOF):
        assert command.split()[:3] in (["python", "-m", "pip"], ["python", "-m", "pytest"])
        return
    assert command.startswith("turnproof "), f"{where}: an unknown command: {command}"
    monkeypatch.chdir(project)
    for long, short in SMALLER.items():
        command = command.replace(long, short)
    argv = [x for word in shlex.split(command)[1:] for x in (sorted(glob.glob(word)) if "*" in word and "/" in word else [word])]
    name = argv[0]
    if name == "import-mermaid":                 # the chart it reads: what `export --to mermaid` writes
        assert main(["export", "models/alice.yaml", "--to", "mermaid", "-o", "chart.mmd"]) == 0
        (project / argv[1]).write_text("```mermaid\n" + (project / "chart.mmd").read_text() + "```\n")
    if name == "--help":
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 0 and "check" in capsys.readouterr().out
        return
    args = build_parser().parse_args(argv)       # every option as documented
    for path in getattr(args, "models", None) or [getattr(args, "model", None)]:
        if path and not path.startswith("git:"):
            assert (project / path).is_file(), f"{where}: {path} does not exist"
    if name not in RUN_IN_FULL:
        return
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 0, f"{where}: {command} exited {code}: {err[-1500:]}"
    if "-o" in argv:
        assert (project / argv[argv.index("-o") + 1]).exists()
    if "--html" in argv:
        assert (project / argv[argv.index("--html") + 1] / "index.html").is_file()


def test_every_command_takes_quiet():
    """`-q` is accepted by every command (issue #27.4: testgen and export refused it)."""
    commands = build_parser()._subparsers._group_actions[0].choices
    for name, command in commands.items():
        assert any("-q" in a.option_strings for a in command._actions), name
