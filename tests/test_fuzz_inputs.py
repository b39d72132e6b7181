"""Fuzzing the command line with hostile model, property and Mermaid files.

Hypothesis mutates the text of real inputs (byte, line and token mutations; deep nesting,
aliases, control characters, huge numbers, bad tags) and runs `turnproof check` in-process
under small budgets. Whatever the input, the run ends with 0, 1, 2 or 3, without a
traceback or an internal error. The budgets count effort (states, depth, Z3 units, mutants,
games and steps), so a case takes the same paths at any load; the wall-clock --timeout is only
a backstop against hangs, far above any case's cost, and a case it cuts fails with the case's
output: its budgets did not bound it (a test that hangs in a call that never returns is cut by
the suite's hang limit, conftest, which names it and prints its stacks). The small gate fixture
gets most of the cases (it checks in milliseconds); the shipped models with their first
claims a few each run; every other command (lint, simulate, testgen, export, mutate, diff,
import-mermaid) a few cases on seeds with the newer constructs (2-D arrays, sequences,
durations, symmetry, printed values, definitions) and on a Mermaid chart. With --slow: thousands.
"""
from __future__ import annotations

import contextlib
import io
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from verifier.cli import main

REPO = Path(__file__).parent.parent
GATE = (REPO / "tests/fixtures/gate/gate.yaml").read_text(encoding="utf-8"), \
    (REPO / "tests/fixtures/gate/gate_props.yaml").read_text(encoding="utf-8")
FUZZ = REPO / "tests/fixtures/fuzz"
SEEDS = [GATE, ((FUZZ / "features.yaml").read_text(encoding="utf-8"),
                (FUZZ / "features_props.yaml").read_text(encoding="utf-8")),
         ((REPO / "tests/fixtures/lang/turn_change.yaml").read_text(encoding="utf-8"),
          (REPO / "tests/fixtures/lang/turn_change_props.yaml").read_text(encoding="utf-8"))]
CHART = (REPO / "tests/fixtures/mermaid/three_charts.md").read_text(encoding="utf-8")
SHIPPED_CLAIMS = 12      # a shipped model's first claims (its whole claim file: 4-15 s of CPU a case, at 300 states)
CLAIM = re.compile(r"^  - id:", re.MULTILINE)


def _first_claims(text: str) -> str:
    """A shipped claim file's text up to its SHIPPED_CLAIMS + 1-th claim, as it is written."""
    starts = [m.start() for m in CLAIM.finditer(text)]
    return text[:starts[SHIPPED_CLAIMS]] if len(starts) > SHIPPED_CLAIMS else text


SHIPPED = [(p.read_text(encoding="utf-8"), _first_claims((REPO / "properties" / p.name).read_text(encoding="utf-8")))
           for p in sorted((REPO / "models").glob("*.yaml")) if (REPO / "properties" / p.name).is_file()]
EXITS = {0, 1, 2, 3}
# The budgets (every search, the Z3 units of each proof, mutants, games and steps) bound each case: the
# costliest, a shipped model and its first claims, takes about 2 s of CPU. The backstop only catches
# a case they do not bound (at load 20 on two cores a 2 s case takes 20 s of wall clock).
BUDGETS = ["--max-states", "300", "--max-depth", "40", "--rlimit", "2000000"]
BACKSTOP = 120
CUT = re.compile(r"cut short by --timeout|the --timeout of [\d.]+ s ran out|stopped by the backstop")   # its words

PIECES = ["\x00", "\x0c", "\x1b[2J", "\u202e", "\t", "[/]", "[bold]x[/bold]", "<script>", "(" * 60, "not " * 80,
          "-" * 90, "[" * 120, "&a [1, 2]", "*a", "*nope", "!!omap [{a: 1}]", "!!python/object/apply:os.system [x]",
          "9" * 30, "-1", "1000000000", "0..1000000000", "5..2", "..", ":", ": ", "\n  - ", "\n", "'", '"', "{", "}",
          "per: 5..2", "players: 100000", "forall i in 0..100000000: true", "if true then 1 else", "#", "- name: x",
          "\\e[31m", "%", "@", "`", "|", ">-", "within: 99999999999", "at_most: 99999999999",
          "sum(x in 0..99999999999: x) >= 0", "exists x in -999999999..999999999: true",
          "for i in 0..99999999999:", "PLAYERS", "len", "define:\n  PLAYERS: 7\n", "per: [player, player]",
          "seq[player, 0..99999]", "until: next_turn_of(99)", "subgraph A\n", "end\n", " & ", " --> ",
          "A[x] --> B[y]\n", "subgraph A\nsubgraph A\n"]
NUMBER = re.compile(r"\b\d+\b")


def _mutate(text: str, op: str, at: int, piece: str) -> str:
    lines = text.split("\n")
    i = at % max(1, len(lines))
    pos = at % max(1, len(text))
    if op == "insert":
        return text[:pos] + piece + text[pos:]
    if op == "replace":
        return text[:pos] + piece + text[pos + 1 + at % 7:]
    if op == "delete_line":
        return "\n".join(lines[:i] + lines[i + 1:])
    if op == "duplicate_line":
        return "\n".join(lines[:i + 1] + lines[i:])
    if op == "swap_lines":
        j = (at // 7) % max(1, len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines)
    if op == "number":
        numbers = list(NUMBER.finditer(text))
        if not numbers:
            return text
        m = numbers[at % len(numbers)]
        return text[:m.start()] + ["0", "-1", "99999999999", "9" * 25, "2147483648"][at % 5] + text[m.end():]
    if op == "truncate":
        return text[:pos]
    raise AssertionError(op)


MUTATIONS = st.lists(st.tuples(st.sampled_from(["insert", "replace", "delete_line", "duplicate_line", "swap_lines",
                                                 "number", "truncate"]),
                               st.integers(0, 10**6), st.sampled_from(PIECES)), min_size=1, max_size=3)
WHICH = st.sampled_from(["model", "properties"])


def _run(model: str, props: str, *extra: str, command: str = "check") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        m, p = Path(tmp) / "m.yaml", Path(tmp) / "p.yaml"
        m.write_text(model, encoding="utf-8", errors="surrogatepass")
        p.write_text(props, encoding="utf-8", errors="surrogatepass")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(_argv(command, m, p, Path(tmp)) + list(extra))
    assert code in EXITS, err.getvalue()[-3000:]
    assert not CUT.search(out.getvalue() + err.getvalue()), \
        f"the {BACKSTOP} s backstop cut a case its budgets should bound:\n{(out.getvalue() + err.getvalue())[-3000:]}"
    assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue(), err.getvalue()[-3000:]
    assert "\x1b" not in err.getvalue()


def _argv(command: str, m: Path, p: Path, tmp: Path) -> list[str]:
    """The command line of `command` on model `m` (for import-mermaid: the chart) and claims `p`,
    under small budgets (testgen, export and import-mermaid: the input's size) and the backstop."""
    backstop = ["--timeout", str(BACKSTOP)]
    return {"check": ["check", str(m), "-p", str(p), "-q", *backstop, *BUDGETS],
            "lint": ["lint", str(m), *backstop, *BUDGETS],
            "simulate": ["simulate", str(m), "-p", str(p), "--games", "3", "--max-steps", "40", *backstop],
            "testgen": ["testgen", str(m), "-o", str(tmp / "test_engine.py"), *backstop],
            "export": ["export", str(m), "--to", "json", "-o", str(tmp / "out.json"), *backstop],
            "mutate": ["mutate", str(m), "-p", str(p), "--no-consistency", "--max-mutants", "3", "--jobs", "1",
                       *backstop, *BUDGETS],
            "diff": ["diff", str(SEED_FILE), str(m), "--no-consistency", "--no-properties", *backstop, *BUDGETS],
            "import-mermaid": ["import-mermaid", str(m), "-o", str(tmp / "skeleton.yaml"), *backstop]}[command]


SEED_FILE = REPO / "tests/fixtures/gate/gate.yaml"     # diff's other version


def _mutated(pair: tuple[str, str], which: str, mutations) -> tuple[str, str]:
    model, props = pair
    for op, at, piece in mutations:
        if which == "model":
            model = _mutate(model, op, at, piece)
        else:
            props = _mutate(props, op, at, piece)
    return model, props


@settings(max_examples=examples(150), deadline=None)
@given(which=WHICH, mutations=MUTATIONS)
def test_fuzzed_gate_model_and_claims(which, mutations):
    _run(*_mutated(GATE, which, mutations))


@settings(max_examples=examples(8), deadline=None)
@given(pair=st.sampled_from(SHIPPED), which=WHICH, mutations=MUTATIONS)
def test_fuzzed_shipped_models_and_claims(pair, which, mutations):
    _run(*_mutated(pair, which, mutations), "--engine", "explicit", "--no-consistency")


@pytest.mark.parametrize("command", ["lint", "simulate", "testgen", "export", "mutate", "diff"])
@settings(max_examples=examples(3), deadline=None)
@given(seed=st.sampled_from(SEEDS), which=WHICH, mutations=MUTATIONS)
def test_fuzzed_inputs_in_every_command(command, seed, which, mutations):
    _run(*_mutated(seed, which, mutations), command=command)


@settings(max_examples=examples(40), deadline=None)
@given(mutations=MUTATIONS)
def test_fuzzed_mermaid_charts(mutations):
    _run(_mutated((CHART, ""), "model", mutations)[0], "", command="import-mermaid")
