"""`turnproof simulate`: random playouts, their statistics, and the claims they refute."""
from __future__ import annotations

import json
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from verifier.cli import main
from verifier.diagnostics import UsageError
from verifier.lang import load_model, load_properties
from verifier.playout.play import PlayoutOptions, game_trace, simulate
from verifier.playout.policy import Policy, load_policy
from verifier.resources import ManualClock, signals
from verifier.semantics import layout
from verifier.trace import replay

COUNTER = textwrap.dedent("""\
    model: counter
    doc: "x counts up to 3; the game ends there"
    variables:
      x: {type: 0..3, init: 0}
      y: {type: 0..1, init: 0}
    end: "x == 3"
    actions:
      - {name: up, when: "x < 3", do: {x: x + 1}}
      - {name: toggle, when: "x < 3 and y == 0", do: {y: 1}}
    """)
COUNTER_PROPS = textwrap.dedent("""\
    model: counter
    claims:
      - {id: small, says: "x stays at most 1", invariant: "x <= 1"}
      - {id: top, says: "x reaches 3", reachable: "x == 3", expected: HOLDS}
      - {id: no-stuck, says: "never stuck", deadlock_free: true}
      - {id: up-by-one, says: "x grows by one at most", step: "x <= prev(x) + 1", expected: HOLDS}
      - {id: y-still, says: "y never changes", step: "y == prev(y)", expected: VIOLATED, why: "toggle"}
      - {id: toggled, says: "y never becomes 1", reachable: "y == 1", expected: VIOLATED, why: "a test of a wrong expectation"}
    """)

SEEDS = st.integers(min_value=0, max_value=2**32)


@pytest.fixture(scope="module")
def aeons():
    model = load_model("models/aeons_end.yaml").instantiate()
    return model, load_properties("properties/aeons_end.yaml", model)


@pytest.fixture()
def counter(tmp_path):
    (tmp_path / "counter.yaml").write_text(COUNTER)
    (tmp_path / "counter_props.yaml").write_text(COUNTER_PROPS)
    return tmp_path


def _stats(sim) -> dict:
    doc = sim.to_json()
    doc.pop("throughput")
    return doc


def test_same_seed_same_playouts_and_another_seed_differs(aeons):
    model, claims = aeons
    a, b = (simulate(model, claims, PlayoutOptions(games=40, seed=5)) for _ in range(2))
    c = simulate(model, claims, PlayoutOptions(games=40, seed=6))
    assert _stats(a) == _stats(b)
    assert a.game_lengths != c.game_lengths


@settings(max_examples=examples(8), deadline=None)
@given(seed=SEEDS)
def test_every_violation_trace_replays_and_violates(aeons, seed):
    model, claims = aeons
    sim = simulate(model, claims, PlayoutOptions(games=15, seed=seed))
    lay = layout(model)
    by_id = {c.id: c for c in claims}
    for tally in sim.claims:
        if tally.trace is not None:
            states = replay(lay, tally.trace)          # raises on a step the model does not allow
            claim = by_id[tally.id]
            if tally.how == "every state":
                from verifier.semantics import holds
                assert not holds(lay, model.fix_params(claim.expr), states[-1])


def test_statistics_of_a_known_game(counter):
    model = load_model(str(counter / "counter.yaml")).instantiate()
    claims = load_properties(str(counter / "counter_props.yaml"), model)
    sim = simulate(model, claims, PlayoutOptions(games=50, seed=1))
    assert sim.outcomes == {"ended": 50, "stuck": 0, "cut": 0}
    assert set(sim.game_lengths) <= {3, 4} and len(set(sim.game_lengths)) == 2   # with or without toggle
    assert sim.actions["up"] == 150
    assert sim.actions["toggle"] == sum(n == 4 for n in sim.game_lengths)
    tallies = {c.id: c for c in sim.claims}
    assert tallies["small"].violated == 50 and tallies["small"].unexpected
    assert [s.action for s in tallies["small"].trace.steps if s.action == "up"] == ["up", "up"]
    assert tallies["top"].witnessed == 50
    assert tallies["no-stuck"].violated == 0
    assert tallies["up-by-one"].how == "monitor" and tallies["up-by-one"].violated == 0
    still = tallies["y-still"]          # a step claim, through its monitor
    assert still.violated == sim.actions["toggle"] and not still.unexpected
    assert still.trace.steps[-1].action == "toggle"
    toggled = tallies["toggled"]        # claimed unreachable, reached: a refutation, with its trace
    assert toggled.unexpected and toggled.witnessed == sim.actions["toggle"] > 0
    assert toggled.trace.steps[-1].action == "toggle"
    replay(layout(model), toggled.trace)


def test_stuck_games_violate_deadlock_freedom(tmp_path):
    model = load_model("tests/models/phils.yaml").instantiate()
    from verifier.ir.props import DeadlockFree
    sim = simulate(model, [DeadlockFree(id="no-deadlock")], PlayoutOptions(games=60, seed=0, max_steps=200))
    assert sim.outcomes["stuck"] > 0
    assert sim.claims[0].violated == sim.outcomes["stuck"]
    replay(layout(model), sim.claims[0].trace)


def test_max_steps_cuts_games(aeons):
    model, _ = aeons
    sim = simulate(model, [], PlayoutOptions(games=10, seed=0, max_steps=5))
    assert sim.outcomes["cut"] == 10 and set(sim.game_lengths) == {5}


def test_a_zero_weight_action_is_not_taken_while_others_are_enabled(aeons):
    model, _ = aeons
    sim = simulate(model, [], PlayoutOptions(games=30, seed=2, policy=Policy({"play_gem": 0.0}, name="w")))
    uniform = simulate(model, [], PlayoutOptions(games=30, seed=2))
    assert sim.actions["play_gem"] == 0 < uniform.actions["play_gem"]


@pytest.mark.parametrize("text, message", [
    ("weights:\n  play_gems: 2\n", "2:3: error: unknown action 'play_gems'"),
    ("weights:\n  play_gem: -1\n", "2:13: error: the weight of 'play_gem' must be between 0"),
    ("weights:\n  play_gem: lots\n", "must be a number"),
    ("weights: [1, 2]\n", "'weights' must be a mapping"),
    ("weight:\n  play_gem: 1\n", "unknown field 'weight'"),
    ("weights:\n  play_gem: .nan\n", "must be between 0"),
])
def test_bad_policy_files_are_rejected_with_their_position(tmp_path, aeons, text, message):
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises(UsageError) as err:
        load_policy(str(path), aeons[0])
    assert message in err.value.render()


def test_cli_text_json_and_exit_codes(counter, capsys):
    model, props = str(counter / "counter.yaml"), str(counter / "counter_props.yaml")
    assert main(["simulate", model, "-p", props, "--games", "20", "--seed", "3"]) == 1   # 'small' is violated
    out = capsys.readouterr().out
    assert "violated in 20 of 20 playouts (NOT expected)" in out and "up" in out
    assert main(["simulate", model, "--no-properties", "--games", "20", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["games"] == 20 and doc["actions"]["up"] == 60 and doc["claims"] == []
    assert doc["game_length"]["all"]["min"] >= 3


def test_cli_replays_the_violations_not_as_expected_unless_asked_for_all(counter, capsys):
    """y-still is violated as its claim expects: its trace only with --traces all; small is not as
    expected: its trace unless --traces none."""
    model, props = str(counter / "counter.yaml"), str(counter / "counter_props.yaml")
    args = ["simulate", model, "-p", props, "--games", "20", "--seed", "3"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "small: violated in 20 of 20 playouts (NOT expected)" in out and "y-still: violated" not in out
    assert main([*args, "--traces", "all"]) == 1
    assert "y-still: violated in 19 of 20 playouts (expected)" in capsys.readouterr().out
    assert main([*args, "--traces", "none"]) == 1
    assert "replayed" not in capsys.readouterr().out


def test_cli_quiet_prints_the_summary_alone(counter, capsys):
    model, props = str(counter / "counter.yaml"), str(counter / "counter_props.yaml")
    assert main(["simulate", model, "-p", props, "--games", "20", "--seed", "3", "-q"]) == 1
    out = capsys.readouterr().out
    assert "outcomes: " in out and "game length: median" in out
    assert "claims: " in out and "2 not as expected: small, toggled" in out
    assert "replayed" not in out and "share" not in out and "lengths (steps)" not in out     # no tables, no traces
    assert len(out.splitlines()) <= 6


def test_cli_html_page_with_plots(tmp_path, capsys):
    out = tmp_path / "site"
    assert main(["simulate", "models/aeons_end.yaml", "--games", "10", "--html", str(out), "-q"]) == 0
    page = (out / "index.html").read_text()
    assert 'src="game-lengths.svg"' in page and 'loading="lazy"' in page
    assert "Playouts of aeons_end" in page and "empty-deck-means-empty-pile" in page
    assert (out / "game-lengths.png").read_bytes().startswith(b"\x89PNG")
    assert (out / "hand-sizes.svg").exists()


def test_cli_printed_values(counter, capsys):
    assert main(["simulate", "models/wtactics.yaml", "--printed", "-D", "DRAW_PILE=13", "--games", "2",
                 "--no-properties", "--format", "json"]) == 0
    params = json.loads(capsys.readouterr().out)["params"]
    assert params["HAND_LIMIT"] == 7 and params["OPENING"] == 7 and params["DRAW_PILE"] == 13
    assert main(["simulate", str(counter / "counter.yaml"), "--printed", "--games", "2"]) == 2
    assert "declares no printed values" in capsys.readouterr().err


def test_cli_printed_numbers_play(capsys):
    assert main(["simulate", "models/wtactics.yaml", "-D", "HAND_LIMIT=7", "-D", "OPENING=7", "-D", "DRAW_PILE=13",
                 "--games", "3", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["params"]["DRAW_PILE"] == 13 and doc["outcomes"]["ended"] == 3
    assert max(int(k) for k in doc["hand"]["histogram"]) >= 7


@pytest.mark.parametrize("argv, message", [
    (["--hand", "hnad"], "no variable 'hnad'"),
    (["--games", "0"], "--games 0 is out of range"),
    (["-D", "DRAW_PILE=*"], "needs a value for every parameter"),
    (["--policy", "missing.yaml"], "no such file"),
])
def test_cli_usage_errors_exit_2(argv, message, capsys):
    assert main(["simulate", "models/wtactics.yaml", "--games", "2", *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_bad_timeout_is_a_usage_error(capsys):
    """--timeout is the budget every command shares (`common.seconds`): refused by the parser."""
    with pytest.raises(SystemExit) as stop:
        main(["simulate", "models/wtactics.yaml", "--timeout", "nan"])
    assert stop.value.code == 2 and "is not a positive number of seconds" in capsys.readouterr().err


def test_model_text_is_not_markup_on_the_terminal(tmp_path, capsys):
    (tmp_path / "m.yaml").write_text(COUNTER.replace("model: counter", 'model: "[bold]evil[/bold]"'))
    assert main(["simulate", str(tmp_path / "m.yaml"), "--games", "2", "--no-properties"]) == 0
    assert "== [bold]evil[/bold]" in capsys.readouterr().out


MODELS = st.sampled_from(["aeons_end", "alice", "wtactics", "alpha_clash", "shadow_era"])


@settings(max_examples=examples(10), deadline=None)
@given(game=MODELS, seed=SEEDS, index=st.integers(0, 4))
def test_every_playout_is_a_path_of_the_reference_semantics(game, seed, index):
    """The packed generated code the playouts run on against the reference interpreter: a whole
    game, replayed step by step (`game_trace` replays it), has the length the statistics counted."""
    model = load_model(f"models/{game}.yaml").instantiate()
    options = PlayoutOptions(games=index + 1, seed=seed, max_steps=150)
    trace = game_trace(model, options, index)
    replay(layout(model), trace)
    assert len(trace) == simulate(model, [], options).game_lengths[index]


def test_cli_bad_policy_file_exit_2_with_position(tmp_path, capsys):
    policy = tmp_path / "w.yaml"
    policy.write_text("weights:\n  mulligan: 1\n  draw_card: 2\n")
    assert main(["simulate", "models/wtactics.yaml", "--policy", str(policy), "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert f"{policy}:3:3: error: unknown action 'draw_card'" in err and "hint:" in err


class Ticking(ManualClock):
    """A clock that moves a tenth of a second each time it is read: a run on it passes any --timeout."""

    def now(self) -> float:
        self.at += 0.1
        return self.at


def test_timeout_stops_between_games_and_exits_3(capsys):
    with signals.run_clock(Ticking()):
        code = main(["simulate", "models/shadow_era.yaml", "--games", "1000000", "--timeout", "3", "--no-properties",
                     "--format", "json", "-q"])
    assert code == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["stopped_by_timeout"] and 0 < doc["games"] < doc["games_requested"] == 1000000
    assert sum(doc["outcomes"].values()) == doc["games"]
