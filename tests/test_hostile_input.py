"""Hostile inputs, second round (issues #28 and #29): each case a fixture, each answered with its
result or a positioned error (exit 2) or UNKNOWN within the budget (exit 3), never an internal
error (exit 4), a hang or a blow-up of memory or output.

The commands run at the default deadline, CPU seconds, and deterministic budgets (--max-states)
where the case is not about time: a --timeout of wall clock is reached earlier on a loaded machine,
and its UNKNOWN (exit 3) would fail a case that expects a verdict. A hang is the suite's hang
limit's (conftest)."""
from __future__ import annotations

import numpy as np
import pytest
from test_explicit_differential import search_matches_the_semantics

from verifier import runner
from verifier.analysis import context
from verifier.analysis.compact_states import CompiledStates
from verifier.cli import WHOLE_RUN_TIMEOUT, build_parser, main
from verifier.cli.common import DEFAULT_TIMEOUT
from verifier.engines import compact
from verifier.engines.compact import explore_compact
from verifier.engines.explicit import explore
from verifier.engines.symbolic import mined
from verifier.engines.symbolic.encode import Encoding
from verifier.lang import load_model
from verifier.lang.loader import BUILTIN_NAMES
from verifier.portfolio import stores
from verifier.resources import Budget, StopKind

# ---------------------------------------------------------------- generated code is flat (#29.3)

WIDE = 1000


def many_effects(n: int = WIDE) -> str:
    """Actions of `n` range-checked effects each: gaps, forbidden overflows, clamps, and effects
    whose code may raise (a division by a variable, a computed index) after a check."""
    return f"""\
model: wide
variables:
  a: {{type: 0..3, per: 0..{n - 1}, init: 0}}
  b: {{type: 0..3, per: 0..{n - 1}, init: 1, overflow: forbid}}
  c: {{type: 0..3, per: 0..{n - 1}, init: 2, overflow: clamp}}
  d: {{type: 0..2, init: 1}}
  done: {{type: 0..3, init: 0}}
actions:
  - name: bump
    when: "done < 3"
    do:
      done: "done + 1"
      for i in 0..{n - 1}:
        a[i]: "a[i] + 1"
  - name: grow
    when: "done < 3"
    do:
      done: "done + 1"
      for i in 0..{n - 1}:
        b[i]: "b[i] + 1"
        c[i]: "c[i] + d"
  - name: divide
    when: "done < 3"
    choose: {{k: 0..1}}
    do:
      done: "done + 1"
      d: "(d + 1) % 3"
      for i in 0..{n - 1}:
        a[(i + k) % {n}]: "a[i] / d + a[i]"
"""


def test_an_action_of_a_thousand_effects_runs_as_the_semantics_say(tmp_path):
    """1,000 range-checked effects in one action (Python used to refuse the generated code: too
    many levels of indentation): each firing and gap as the reference semantics has them, and the
    python and compact stores reach the same states."""
    path = tmp_path / "wide.yaml"
    path.write_text(many_effects(), encoding="utf-8")
    model = load_model(str(path)).instantiate()
    search_matches_the_semantics(model)


def test_a_thousand_effects_on_scalars_in_the_compact_store(tmp_path):
    """The compact store's batch code for an action of 1,000 range-checked effects (its masks were
    built by a recursion per effect): the states of the python store."""
    names = [f"v{i}" for i in range(WIDE)]
    path = tmp_path / "scalars.yaml"
    path.write_text("model: scalars\nvariables:\n" + "".join(f"  {v}: {{type: 0..2, init: 0}}\n" for v in names)
                    + '  d: {type: 0..2, init: 1}\nactions:\n  - name: bump\n    when: "v0 < 2"\n    do:\n'
                    + "".join(f'      {v}: "{v} + d"\n' for v in names), encoding="utf-8")
    model = load_model(str(path)).instantiate()
    python, compact = explore(model), explore_compact(model, Budget())
    assert compact.vectorised == ""
    assert len(python.states) == len(compact) == 3 and python.transitions == compact.transitions == 2


@pytest.mark.parametrize("players", [48, 64])
def test_effects_over_every_player_and_two_arrays(tmp_path, capsys, players):
    """`for p in player` over two arrays with 48 players (96 checked effects: exit 4 before) and at
    the most players a model may have; a 100-element array stands for 100 players."""
    path = tmp_path / "players.yaml"
    path.write_text(f"""\
model: many_players
players: {players}
variables:
  x: {{type: 0..3, per: player, init: 0}}
  y: {{type: 0..3, per: player, init: 0}}
  z: {{type: 0..3, per: 0..99, init: 0}}
  n: {{type: 0..3, init: 0}}
actions:
  - name: all
    when: "n < 2"
    do:
      n: "n + 1"
      for p in player:
        x[p]: "x[p] + 1"
        y[p]: "y[p] + x[p]"
      for i in 0..99:
        z[i]: "z[i] + 1"
""", encoding="utf-8")
    for command in (["check", "--engine", "explicit"], ["lint"], ["simulate", "--games", "2"]):
        code = main([*command, str(path)])
        out = capsys.readouterr()
        assert code in (0, 1), out.err
        assert "internal error" not in out.err


def test_many_phases_and_many_choices_compile(tmp_path):
    """1,000 phases (one `elif` per phase value tested the phase) and 25 choices whose domains
    depend on the state (one nested loop each: Python allows 20 nested blocks)."""
    phases = "".join(f"  - name: P{i}\n" for i in range(WIDE))
    actions = "".join(f'  - name: act{i}\n    phase: P{i}\n    when: "n < 2"\n    do:\n      n: "n + 1"\n'
                      for i in range(0, WIDE, 7))
    (tmp_path / "phases.yaml").write_text("model: phases\nplayers: 2\nvariables:\n"
                                          "  n: {type: 0..2, init: 0, reset: turn}\nphases:\n" + phases
                                          + "actions:\n" + actions, encoding="utf-8")
    domains = ", ".join(f"c{i}: z..z" if i % 8 else f"c{i}: 0..n" for i in range(25))
    (tmp_path / "choices.yaml").write_text(f"""\
model: choices
variables:
  n: {{type: 0..1, init: 0}}
  z: {{type: 0..0, init: 0}}
  m: {{type: 0..30, init: 0}}
actions:
  - name: pick
    choose: {{{domains}}}
    when: "m < 3"
    do:
      n: "1 - n"
      m: "m + c0 + c24 + 1"
""", encoding="utf-8")
    space = explore(load_model(str(tmp_path / "phases.yaml")).instantiate())
    assert space.complete and space.error is None and len(space.states) == 2 * 3 * WIDE
    search_matches_the_semantics(load_model(str(tmp_path / "choices.yaml")).instantiate())


# ---------------------------------------------------------------- input limits (#29.4, #29.5, #29.6)

SMALL = """\
model: small
players: 2
variables:
  a: {type: 0..3, per: 0..9, init: 0}
actions:
  - name: bump
    when: "a[0] < 2"
    do:
      a[0]: "a[0] + 1"
"""


def refused(tmp_path, capsys, text: str, line: int, *words: str) -> str:
    """`check` refuses the model with a positioned error (exit 2) that says `words`."""
    path = tmp_path / "hostile.yaml"
    path.write_text(text, encoding="utf-8")
    code = main(["check", str(path), "-q"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"{path}:{line}:"), err
    assert "Traceback" not in err and all(w in err for w in words), err
    return err


@pytest.mark.parametrize("name", sorted(BUILTIN_NAMES))
def test_a_definition_or_variable_never_takes_a_built_in_name(tmp_path, capsys, name):
    """`define: {PLAYERS: "7"}` replaced the built-in silently (a claim PLAYERS == 2 was then
    VIOLATED); every built-in name is refused for a definition and for a variable."""
    keyword = name in ("forall", "exists")          # the expression grammar's own keywords: not a name at all
    refused(tmp_path, capsys, SMALL.replace("variables:", f'define:\n  {name}: "7"\nvariables:'), 4,
            *(["a definition is named"] if keyword else [f"'{name}' is a built-in name", "definition"]))
    refused(tmp_path, capsys, SMALL.replace("actions:", f"  {name}: {{type: 0..1, init: 0}}\nactions:"), 5,
            f"'{name}' is a built-in name", "variable")


@pytest.mark.parametrize(("what", "old", "new", "line"), [
    ("action", "name: bump", "name: pop", 6),
    ("choice", '    when: "a[0] < 2"', '    choose: {len: 0..1}\n    when: "a[0] < 2"', 7),
    ("loop variable", '      a[0]: "a[0] + 1"', '      for player in 0..1:\n        a[player]: 1', 9),
    ("definition parameter", "variables:", 'define:\n  f(max): "max + 1"\nvariables:', 4),
    ("phase", "actions:", "phases:\n  - name: TURN_END\nactions:", 6),
])
def test_no_user_name_takes_a_built_in_name(tmp_path, capsys, what, old, new, line):
    refused(tmp_path, capsys, SMALL.replace(old, new), line, "is a built-in name", what)


def test_a_loop_is_refused_before_it_unrolls(tmp_path, capsys):
    """`for i in 0..100000000000000000` took 6.8 GB in 60 s; nested loops multiply."""
    loop = SMALL.replace('      a[0]: "a[0] + 1"', '      for i in 0..100000000000000000:\n        a[i]: 1')
    refused(tmp_path, capsys, loop, 9, "a for loop over 100,000,000,000,000,001 values")
    nested = SMALL.replace('      a[0]: "a[0] + 1"', '      for j in 0..9999:\n        for i in 0..9999:\n'
                                                     '          a[i]: "j"')
    refused(tmp_path, capsys, nested, 9, "unrolls into 100,000,000 assignments")


def test_an_alias_counts_the_text_it_repeats(tmp_path, capsys):
    """One 480 KB rule text aliased 300 times (a 505 KB file) took 55.6 s and 486 MB: refused at
    the alias that takes the expanded text past the file size limit."""
    aliases = "".join("  - *rule\n" for _ in range(300))
    text = SMALL.replace("variables:", f'rules: &rule "{"x" * 480_000}"\nvariables:') + "extra:\n" + aliases
    refused(tmp_path, capsys, text, 14, "expands to more than 1 MB of text")



@pytest.mark.parametrize(("shelf", "line"), [("x-a: &a {doc: x, <<: *a}", 1),        # a merge of itself: exit 4
                                             ("x-a: &a {steps: [{b: *a}]}", 1)])     # a value holding itself
def test_an_alias_inside_its_own_anchor_is_refused(tmp_path, capsys, shelf, line):
    """`x-a: &a {on_enter: {x: 1}, <<: *a}` ended in an internal error (ruamel's AttributeError,
    exit 4); a phase listing itself among its steps was 'a phase must be a mapping'."""
    refused(tmp_path, capsys, f"{shelf}\n{SMALL}", line, "the alias *a is used inside the value of its own anchor")

# ---------------------------------------------------------------- output bounded (#28.6, #29.4)

COUNTER = """\
model: counter
variables:
  x: {type: 0..200, init: 0}
actions:
  - name: inc
    when: "x < 200"
    do:
      x: "x + 1"
"""


FORMATS = (("text", 400_000), ("json", 4_000_000), ("sarif", 12_000_000), ("junit", 1_000_000))   # (format, most bytes)


def test_a_thousand_claims_write_a_bounded_output(tmp_path, capsys, monkeypatch):
    """1,000 claims, each violated with a trace of up to 200 steps (67 KB of claims asked for 125 MB
    of JSON and 403 MB of SARIF): the traces of one output are bounded together, and the output
    says how many it left out. Each format through the command; the claims are loaded and checked
    once, by the first command (1.5 s of CPU), the others writing the same runs (`check_model`
    answers them from the first)."""
    model, props = tmp_path / "counter.yaml", tmp_path / "claims.yaml"
    model.write_text(COUNTER, encoding="utf-8")
    props.write_text("claims:\n" + "".join(f'  - id: c{k}\n    says: "x stays below {k % 200 + 1}"\n'
                                           f'    invariant: "x < {k % 200 + 1}"\n' for k in range(1000)),
                     encoding="utf-8")
    checked: list = []
    real = runner.check_model

    def once(*args, **kwargs):
        if not checked:
            checked.extend(real(*args, **kwargs))
        return list(checked)

    monkeypatch.setattr(runner, "check_model", once)
    for fmt, most in FORMATS:
        out = tmp_path / f"out.{fmt}"
        code = main(["check", str(model), "-p", str(props), "-q", "--no-consistency", "-f", fmt, "-o", str(out)])
        assert code == 1, (fmt, capsys.readouterr().err)
        text = out.read_text(encoding="utf-8")
        assert len(text.encode()) < most, fmt
        assert "traces left out" in text, fmt
    assert len(checked) == 1 and len(checked[0].results) == 1000


# ---------------------------------------------------------------- import-mermaid with the loader's limits (#29.4)

def _nested(depth: int) -> str:
    return "flowchart TD\n" + "".join(f"subgraph S{i}\n" for i in range(depth)) + "A --> B\n" + "end\n" * depth


def _pairs(nodes: int) -> str:
    ids = " & ".join(f"n{i}" for i in range(nodes))
    return f"flowchart TD\n{ids} --> {ids}\n"


MERMAID = {   # name -> (chart, line of the error, words of the message)
    "600 nested subgraphs": (_nested(600), 18, "nested more than 16 deep"),      # was RecursionError, exit 4
    "all pairs of 3,000 nodes": (_pairs(3000), 2, "more than 1,000 nodes"),      # was 102 s, 4.6 GB, exit 0
    "all pairs of 500 nodes": (_pairs(500), 2, "this line alone 250,000"),
    "ESC in a label": ("flowchart TD\nA[Draw \x1b[2J] --> B\n", 2, "U+001B"),
    "right-to-left override": ("flowchart TD\nA[Draw \u202e] --> B\n", 2, "U+202E"),
    "self-nested subgraph": ("flowchart TD\nsubgraph A\nX --> Y\nsubgraph A\nZ --> W\nend\nend\n", 4,
                             "subgraph 'A' is declared twice"),                # its nodes were lost, exit 0
}


@pytest.mark.parametrize("name", list(MERMAID))
def test_a_hostile_chart_is_a_positioned_error(tmp_path, capsys, name):
    chart, line, words = MERMAID[name]
    path, out = tmp_path / "chart.mmd", tmp_path / "skeleton.yaml"
    path.write_text(chart, encoding="utf-8")
    code = main(["import-mermaid", str(path), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"{path}:{line}:") and words in err, err
    assert "\x1b" not in err and "\u202e" not in err and not out.exists()


def test_subgraphs_at_the_nesting_limit_import_and_check(tmp_path, capsys):
    path, out = tmp_path / "chart.mmd", tmp_path / "skeleton.yaml"
    path.write_text(_nested(16), encoding="utf-8")
    assert main(["import-mermaid", str(path), "-o", str(out)]) == 0, capsys.readouterr().err
    assert main(["check", str(out), "-q"]) in (0, 1), capsys.readouterr().err


# ---------------------------------------------------------------- one budget in every command (#29.5)

@pytest.mark.parametrize("command", ["export", "testgen", "import-mermaid", "simulate", "mutate"])
def test_every_command_runs_under_the_backstop(command, tmp_path):
    """export, testgen and import-mermaid had no deadline, and mutate's --timeout no backstop (a
    mutation run of a 1,000-effect model given --timeout 30 went on past 200 s; now 24 s, exit 3)."""
    extra = {"export": ["--to", "json"], "testgen": ["-o", str(tmp_path / "t.py")]}.get(command, [])
    args = build_parser().parse_args([command, "model.yaml", *extra, "--max-memory", "500"])
    assert args.handler.__module__.rsplit(".", 1)[-1] in WHOLE_RUN_TIMEOUT and args.max_memory == 500
    assert args.timeout == DEFAULT_TIMEOUT
    assert build_parser().parse_args([command, "model.yaml", *extra, "--timeout", "none"]).timeout is None


def test_choices_over_state_dependent_domains_are_counted(tmp_path, capsys):
    """25 choices `0..n` (n a 0..1 variable) fire 2^25 ways in a state where n is 1: a hang
    the limit on the ways to choose missed, as it counted such a domain as one value."""
    domains = ", ".join(f"c{i}: 0..n" for i in range(25))
    refused(tmp_path, capsys, SMALL.replace('  - name: bump\n', f"  - name: bump\n    choose: {{{domains}}}\n")
            .replace("variables:\n", "variables:\n  n: {type: 0..1, init: 0}\n"), 7, "can choose in 33,554,432 ways")


# ---------------------------------------------------------------- a variable over a huge range (#29.5)

HUGE = """\
model: huge
variables:
  x: {type: "0..100000000000000000", init: 0}
actions:
  - name: bump
    do:
      x: "x + 1"
"""
HUGE_CLAIM = """\
claims:
  - id: small
    says: x is never negative
    invariant: "x >= 0"
    expected: PROVED
"""


def huge_model(tmp_path, text: str = HUGE):
    path = tmp_path / "huge.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_huge_range_is_proved_without_enumerating_it(tmp_path, capsys):
    """One variable over 0..10^17 counting up: a level of the search per value. The default run
    went on in the compact store (a level at a time, however narrow) and mined lemmas over every
    value of the range: still running at the 600 s backstop. Now the search stays in the python
    store, stops at its cap, and Z3 proves the claim."""
    path = huge_model(tmp_path)
    (tmp_path / "huge_props.yaml").write_text(HUGE_CLAIM, encoding="utf-8")
    code = main(["check", str(path), "-p", str(tmp_path / "huge_props.yaml"), "--max-states", "3000",
                 "--no-consistency", "-q", "-f", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert '"verdict": "PROVED"' in out.out


def test_the_compact_store_pays_off_only_on_wide_levels(tmp_path, monkeypatch):
    """A deep, narrow search (a level per value) stays in the python store: the compact store
    costs about LEVEL_COST states a level; on its own it stops at its level cap."""
    assert not compact.pays_off(250_000, 250_000) and compact.pays_off(250_000, 250_000 // compact.LEVEL_COST)
    monkeypatch.setattr(compact, "LEVELS", 300)
    space = explore_compact(load_model(str(huge_model(tmp_path))).instantiate(), Budget())
    assert not space.complete and len(space) == 301
    assert space.stop is not None and space.stop.kind is StopKind.DEPTH and space.stop.owner == compact.LEVEL_CAP
    capped = explore_compact(load_model(str(huge_model(tmp_path))).instantiate(), Budget(max_depth=50))
    assert len(capped) == 51 and capped.stop is not None and capped.stop.owner == "--max-depth 50"


def test_the_analyses_send_a_narrow_search_to_the_compiled_store(tmp_path, monkeypatch):
    """The analyses' own exploration of a deep, narrow model goes on past the switch in the compiled
    store, as the claims' search (`stores.choose_store`; their scan of a million states is compiled
    too), up to its cap."""
    monkeypatch.setattr(context, "choose_store", lambda model, budget, **kw: stores.choose_store(
        model, budget, caps=stores.Caps(switch=200, compiled=1000), **kw))
    model = load_model(str(huge_model(tmp_path)))
    ctx = context.Context.create(model, Budget(), {})
    ctx.explore()
    assert isinstance(ctx.space, CompiledStates) and len(ctx.space.packed) == 1000 and not ctx.space.complete


def test_lemmas_are_mined_over_cells_not_values(tmp_path):
    """Mining clauses cut a slot's values into cells of its literals' intervals; it enumerated every
    value of the type (10^17 of them) before."""
    model = load_model(str(huge_model(tmp_path))).instantiate()
    seen = np.arange(0, 1000, dtype=np.int64)[:, None]
    clauses = mined._clauses(Encoding(model), seen)
    assert clauses and all(lit.slot == 0 for clause in clauses for lit in clause)
    assert all(not any(all(lit.column(seen)) for lit in clause) for clause in clauses)


@pytest.mark.parametrize(("change", "line", "words"), [
    (('x: {type: "0..100000000000000000", init: 0}', 'x: {type: "0..100000000000000000"}'), 3,
     "x starts at any value of its type (no init:), which gives more than 1,000,000 candidate initial states"),
    (('    do:\n', '    when: "forall i in 0..x: i >= 0"\n    do:\n'), 6,
     "a quantifier ranges over up to 100,000,000,000,000,001 values"),
])
def test_a_huge_range_that_would_be_enumerated_is_refused(tmp_path, capsys, change, line, words):
    """A variable left without `init:` starts at every value of its type, and a quantifier up to a
    variable evaluates its body for every value the variable can take: both enumerated, refused."""
    refused(tmp_path, capsys, HUGE.replace(*change), line, words)


def test_diff_shows_values_of_a_huge_range_as_it_meets_them(tmp_path, capsys):
    """`diff` built a table of every value of each slot to show states with (10^17 entries)."""
    path = huge_model(tmp_path, HUGE.replace("    do:\n", '    when: "x < 5"\n    do:\n'))
    code = main(["diff", str(path), str(path), "--no-properties", "-q"])
    assert code == 0, capsys.readouterr().err


def test_a_claim_quantifying_up_to_a_huge_variable_is_refused(tmp_path, capsys):
    """The claims' quantifiers are bounded as the model's: at their widest over the types."""
    path = huge_model(tmp_path)
    props = tmp_path / "props.yaml"
    props.write_text(HUGE_CLAIM.replace('invariant: "x >= 0"', 'invariant: "forall i in 0..x: i >= 0"'),
                     encoding="utf-8")
    assert main(["check", str(path), "-p", str(props), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{props}:4:17:") and "a quantifier ranges over up to 100,000,000,000,000,001 values" in err, err
