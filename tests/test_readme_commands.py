"""Every command shown in README.md, docs/ and examples/README.md (their `sh` code blocks) is true
to the code (issue #27.6): each runs for real in a temporary folder, through the real command line,
and must exit as the documents promise (0: all as expected). (docs/ shows its commands inline, as
`turnproof check MODEL`: schematic, nothing to run.)

Most run exactly as printed, on a copy of the project's inputs. Three kinds run cheaper:
- `check models/<game>.yaml` at the defaults (any output format): the run is the one
  tests/shipped_runs.py makes once per test process for the pinned verdicts (same options; the test
  sits in the game's xdist group, and for the four big games in the full tier: `shipped_runs.marks_of`),
  handed to the command instead of a second search.
- `simulate ... --games 1000`: 5 games (each game is the same; the count only steadies the statistics).
- The other lines on a shipped game (`check` at other numbers or `--printed`, `lint`, `report`,
  `diff`, `mutate`; README's first line's `report ... --gate` too) take 10 s to minutes of CPU each:
  they run with the same arguments and flags in a project whose five `models/<game>.yaml` are a small
  stand-in (tests/fixtures/readme/standin.yaml under each game's name, with the parameters and
  readings those flags name, and its claims as `properties/<game>.yaml`), kept in git with two
  commits for `diff git:HEAD~1:...`: about a second of CPU each. The shipped games themselves are
  checked by CI's determinism step (`report models/*.yaml -o reports --gate`, `diff` of each game with
  itself), `--printed` by tests/test_printed_values.py, `mutate` by tests/test_mutate.py.
The checks of the example games are run by tests/test_example_games.py (Uno, Exploding Kittens,
Love Letter, Last Standing and Lost Cities as printed, Dominion and Netrunner at a smaller size), so only parsed here.
The `pip install` and whole-suite `python -m pytest` lines are CI's own steps; the example's
`python -m pytest` line is run by tests/test_testgen.py.
"""
from __future__ import annotations

import glob
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from shipped_runs import marks_of, runs_of

from verifier import runner
from verifier.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]
INPUTS = ("models", "properties", "baselines", "examples")
NOT_TURNPROOF = ("python -m pip install", "python -m pytest")
SHIPPED_DEFAULT = re.compile(r"turnproof check models/(\w+)\.yaml( (--format|-f) \w+| (-o|--output) \S+| -q)*")
SMALLER = {"--games 1000": "--games 5"}
EXPENSIVE = ("check", "lint", "report", "diff", "mutate")
RUN_AS_PRINTED = ("examples/models/priority_steps.yaml", "--engine symbolic --variant literal --no-consistency")
SHIPPED = ("aeons_end", "alice", "alpha_clash", "shadow_era", "wtactics")
STAND_IN = ROOT / "tests" / "fixtures" / "readme"


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


def as_case(where: str, command: str):
    shipped = SHIPPED_DEFAULT.fullmatch(command)
    marks = marks_of(shipped.group(1)) if shipped else ()
    return pytest.param(where, command, marks=marks, id=where)


COMMANDS = documented_commands()


def test_the_documents_show_commands():
    assert len(COMMANDS) >= 20 and sum(c.startswith("turnproof ") for _, c in COMMANDS) >= 18


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("project")
    for name in INPUTS:
        shutil.copytree(ROOT / name, folder / name)
    return folder


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false",
                    *args], cwd=folder, check=True, capture_output=True)


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory) -> Path:
    """A project whose shipped games are the small stand-in, in git (where git is installed): the commit
    before the last differs only in a comment of models/wtactics.yaml (module docstring)."""
    folder = tmp_path_factory.mktemp("stand_ins")
    (folder / "models").mkdir()
    (folder / "properties").mkdir()
    model = (STAND_IN / "standin.yaml").read_text(encoding="utf-8")
    for game in SHIPPED:
        (folder / "models" / f"{game}.yaml").write_text(model.replace("model: standin", f"model: {game}"),
                                                         encoding="utf-8")
        shutil.copy(STAND_IN / "standin_props.yaml", folder / "properties" / f"{game}.yaml")
    if shutil.which("git") is None:
        return folder
    _git(folder, "init", "-q")
    _git(folder, "add", ".")
    _git(folder, "commit", "-q", "-m", "the stand-ins")
    with (folder / "models" / "wtactics.yaml").open("a", encoding="utf-8") as f:
        f.write("# a rule change that changes nothing\n")
    _git(folder, "commit", "-q", "-am", "a comment")
    return folder


def on_a_stand_in(argv: list[str]) -> bool:
    """A command too costly to run on the shipped games, run on the stand-ins (module docstring)."""
    return argv[0] in EXPENSIVE and not any(x in " ".join(argv) for x in RUN_AS_PRINTED) \
        and not argv[1].startswith("examples/")


def only_parsed(argv: list[str]) -> bool:
    """A check of an example game, run by tests/test_example_games.py (module docstring)."""
    return argv[0] == "check" and argv[1].startswith("examples/models/") and not any(
        x in " ".join(argv) for x in RUN_AS_PRINTED)


@pytest.mark.parametrize("where, command", [as_case(w, c) for w, c in COMMANDS])
def test_a_documented_command_runs_as_the_documents_say(where, command, project, stand_ins, monkeypatch, capsys):
    for part in command.split(" '&&' "):        # README's first line: install, then the main job
        if part.startswith(NOT_TURNPROOF):
            assert part.split()[:3] in (["python", "-m", "pip"], ["python", "-m", "pytest"])
            continue
        assert part.startswith("turnproof "), f"{where}: an unknown command: {part}"
        run_documented(where, part, project, stand_ins, monkeypatch, capsys)


def run_documented(where: str, command: str, project: Path, stand_ins: Path, monkeypatch, capsys) -> None:
    shipped = SHIPPED_DEFAULT.fullmatch(command)
    for long, short in SMALLER.items():
        command = command.replace(long, short)
    words = shlex.split(command)[1:]
    if any(w.startswith("git:") for w in words) and shutil.which("git") is None:
        pytest.skip("git is not installed: git:REV:path is read with it")
    folder = stand_ins if not shipped and on_a_stand_in(words) else project
    monkeypatch.chdir(folder)
    argv = [x for word in words for x in (sorted(glob.glob(word)) if "*" in word and "/" in word else [word])]
    name = argv[0]
    if name == "import-mermaid":                 # the chart it reads: what `export --to mermaid` writes
        assert main(["export", "models/alice.yaml", "--to", "mermaid", "-o", "chart.mmd"]) == 0
        (folder / argv[1]).write_text("```mermaid\n" + (folder / "chart.mmd").read_text() + "```\n")
    if name == "--help":
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 0 and "check" in capsys.readouterr().out
        return
    args = build_parser().parse_args(argv)       # every option as documented
    for path in getattr(args, "models", None) or [getattr(args, "model", None)]:
        if path and not path.startswith("git:"):
            assert (project / path).is_file(), f"{where}: {path} does not exist"
    if shipped:                                  # the run tests/shipped_runs.py made, at these options
        monkeypatch.setattr(runner, "check_model", lambda path, options, progress=None: list(runs_of(shipped.group(1))))
    elif only_parsed(argv):
        return
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 0, f"{where}: {shlex.join(argv)} exited {code}: {err[-1500:]}"
    for flag in ("-o", "--output", "--journal"):
        if flag in argv:
            assert (folder / argv[argv.index(flag) + 1]).exists()
    if "--html" in argv:
        assert (folder / argv[argv.index("--html") + 1] / "index.html").is_file()


def test_every_command_takes_quiet():
    """`-q` is accepted by every command (issue #27.4: testgen and export refused it)."""
    commands = build_parser()._subparsers._group_actions[0].choices
    for name, command in commands.items():
        assert any("-q" in a.option_strings for a in command._actions), name
