"""Mutation analysis (`turnproof mutate`) and vacuity on a tiny game: gain a coin, spend two."""
from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from verifier.analysis.vacuity import vacuous_claims
from verifier.cli import main
from verifier.diagnostics import UsageError
from verifier.engines.ledger import Ledger
from verifier.ir.expr import pretty
from verifier.ir.model import PHASE_VAR
from verifier.lang import load_model, load_properties
from verifier.mutation import analysis
from verifier.mutation.analysis import mutate
from verifier.mutation.equivalence import behaviour
from verifier.mutation.operators import OPERATORS, apply, generate
from verifier.resources import Budget, ManualClock, signals
from verifier.runner import RunOptions, check_loaded, check_model, claims_for

HERE = Path(__file__).parent / "fixtures" / "mutation"
MODEL = str(HERE / "tally.yaml")
PROPS = str(HERE / "tally_props.yaml")
TURNS = str(HERE / "turns.yaml")
TURNS_PROPS = str(HERE / "turns_props.yaml")


pytestmark = pytest.mark.xdist_group("test_mutate")   # its module fixtures are built once, on one worker


@pytest.fixture(scope="module")
def report():
    return mutate(MODEL, RunOptions(properties=PROPS))


@pytest.fixture(scope="module")
def turns_report():
    return mutate(TURNS, RunOptions(properties=TURNS_PROPS))


def outcome(report, description: str):
    [found] = [o for o in report.outcomes if o.mutant.description == description]
    return found


def test_a_mutant_the_claims_notice_is_killed(report):
    dropped = outcome(report, "gain: effect 'bonus := true' left out")
    assert dropped.status == "killed"
    assert dropped.reason == "claim full-purse-means-bonus: HOLDS -> VIOLATED"
    assert outcome(report, "gain: guard 'coins < 3' -> 'coins <= 3'").reason == "finding gap:coins|gain appears"


def test_a_change_no_claim_notices_survives(report):
    survivor = outcome(report, "spend: may -> must")
    assert survivor.status == "survived"
    assert survivor.mutant.rule == "Spend: two coins buy a card"
    assert survivor.mutant.span.line == 21        # the action, `- name: spend`


def test_equivalent_mutants_are_proved_by_the_state_space(report):
    redundant = outcome(report, "gain: guard '(coins < 3) and (rounds < 3)' without 'rounds < 3'")
    assert redundant.status == "equivalent"
    assert "same reachable states and labelled transitions" in redundant.reason
    # and a surviving mutant really behaves differently
    mutant = next(m for m in generate(*_as_written()) if m.description == "spend: may -> must")
    assert behaviour(_load(mutant)) != behaviour(load_model(MODEL))


def test_a_mutant_that_breaks_the_model_is_invalid_not_killed(report):
    broken = outcome(report, "spend: guard 'lamp[0]' -> 'lamp[1]'")
    assert broken.status == "invalid"
    assert "out of range" in broken.reason


def test_score_excludes_invalid_and_equivalent(report, turns_report):
    counts = report.counts
    assert sum(counts.values()) == report.generated == len(report.outcomes)
    assert counts["invalid"] == 2 and counts["equivalent"] == 7 and counts["unknown"] == 0
    assert report.score == counts["killed"] / (counts["killed"] + counts["survived"])
    # every operator but choice-range and constant (no choose:, no parameter here;
    # tests/test_mutation_operators.py has them)
    assert {o.mutant.operator for o in report.outcomes + turns_report.outcomes} == \
        set(OPERATORS) - {"choice-range", "constant"}


def test_the_turn_structure_is_mutated():
    made = {m.description: m for m in generate(*_as_written(TURNS))}
    for description, operator, block in [
            ("phase Start: on_enter 'attacks := 0' -> 'attacks := 1'", "literal", "on_enter"),
            ("phase Start: on_enter 'attacks := 0' left out", "drop-effect", "on_enter"),
            ("phase Main: next to Combat when 'energy[active] >= 1' -> 'energy[active] > 1'", "relational", "next"),
            ("phase Main: next to Combat when 'energy[active] >= 1' -> 'energy[active] >= 2'", "literal", "next"),
            ("phase Main: next to Combat when 'energy[active] >= 1' without 'energy[active] >= 1'", "drop-conjunct",
             "next"),
            ("phase Main: next entry 'otherwise: Finish' left out", "drop-next", "next"),
            ("phase Combat: next_any entry 'to: TURN_END' left out", "drop-next", "next"),
            ("phase Combat: exit_when 'attacks > 0' -> 'attacks >= 0'", "relational", "exit_when"),
            ("round_end: effect 'rounds := rounds + 1' left out", "drop-effect", "round_end"),
            ("on_turn_start: effect 'energy[active] := 1' -> 'energy[active] := 2'", "literal", "on_turn_start"),
            ("bank: effect 'banked[0] := true' -> 'banked[1] := true'", "literal", "action")]:
        assert (made[description].operator, made[description].block) == (operator, block), description
    # an index moved out of the array, or onto an element the effects assign already, is not made
    assert not [d for d in made if "banked[-1]" in d]
    assert made["phase Main: next entry 'otherwise: Finish' left out"].span.line == 19


def _effects_of(model, action: str) -> dict[str, str]:
    [a] = [a for a in model.actions if a.name == action]
    return {pretty(e.target): pretty(e.value) for e in a.effects}


def _edges(model) -> dict[tuple[str, str], str]:
    return {(e.src, e.dst): pretty(e.condition) for e in model.phase_edges}


def test_turn_structure_mutants_change_the_desugared_model():
    original = load_model(TURNS)
    mutants = {m.description: m for m in generate(*_as_written(TURNS))}

    def mutant(description):
        return load_model(TURNS, edit=partial(apply, mutants[description]))

    assert _effects_of(original, "pass turn from Finish")["attacks"] == "0"
    assert "attacks" not in _effects_of(mutant("phase Start: on_enter 'attacks := 0' left out"),
                                        "pass turn from Finish")
    assert ("Main", "Finish") in _edges(original)
    assert ("Main", "Finish") not in _edges(mutant("phase Main: next entry 'otherwise: Finish' left out"))
    relational = "phase Main: next to Combat when 'energy[active] >= 1' -> 'energy[active] > 1'"
    assert _edges(mutant(relational))[("Main", "Combat")] == "energy[active] > 1"
    assert _edges(mutant("phase Combat: exit_when 'attacks > 0' -> 'attacks >= 0'"))[("Combat", "Finish")] == \
        "attacks >= 0"
    assert "rounds" in _effects_of(original, "pass turn from Finish")
    assert "rounds" not in _effects_of(mutant("round_end: effect 'rounds := rounds + 1' left out"),
                                       "pass turn from Finish")
    started = _effects_of(mutant("on_turn_start: effect 'energy[active] := 1' -> 'energy[active] := 2'"),
                          "pass turn from Finish")
    assert started["energy[(active + 1) % 2]"] == "2"
    assert _effects_of(mutant("bank: effect 'banked[0] := true' -> 'banked[1] := true'"), "bank") == \
        {"banked[1]": "true"}


def test_turn_structure_mutants_are_killed_by_claims_and_findings(turns_report):
    def status(description):
        return outcome(turns_report, description)

    assert status("phase Start: on_enter 'attacks := 0' left out").reason == \
        "claim main-without-attacks: HOLDS -> VIOLATED"
    assert status("phase Main: next to Combat when 'energy[active] >= 1' -> 'energy[active] > 1'").reason == \
        "finding dead-rule:Combat appears"
    assert status("phase Combat: exit_when 'attacks > 0' without 'attacks > 0'").status == "equivalent"
    assert "can never be entered" in status("phase Main: next entry 'to: Combat when energy[active] >= 1' "
                                            "left out").reason
    assert status("round_end: effect 'rounds := rounds + 1' left out").status == "survived"


def test_one_job_in_this_process_decides_alike(report):
    alone = mutate(MODEL, RunOptions(properties=PROPS), jobs=1)
    assert [(o.mutant.id, o.status, o.reason) for o in alone.outcomes] == \
        [(o.mutant.id, o.status, o.reason) for o in report.outcomes]


def test_the_claims_search_is_reused_for_the_equivalence_digest():
    model = load_model(MODEL)
    concrete = model.instantiate()
    fresh = behaviour(model, Budget())
    options = RunOptions(properties=PROPS, engine="explicit", consistency=False, vacuity=False)
    ledger = Ledger.keeping([concrete])
    check_loaded(MODEL, [model], [claims_for(MODEL, model, options)], options, ledger=ledger)
    assert ledger.search_of(concrete) is not None          # the reading's ledger kept the claims' search
    assert behaviour(model, ledger=ledger) == fresh
    assert Ledger().search_of(concrete) is None            # nothing kept anywhere else


def test_swapped_phases_start_play_in_the_second():
    swap = next(m for m in generate(*_as_written()) if m.operator == "swap-phases")
    model = _load(swap)
    phase = model.var(PHASE_VAR)
    assert phase.type.values[phase.init[0].value] == "Spend"       # the enum keeps its order
    assert [e.src for e in model.phase_edges] == ["Spend", "Gain"]


def test_cli_json_max_mutants_and_budget(capsys, tmp_path):
    out = tmp_path / "m.json"
    assert main(["mutate", MODEL, "-p", PROPS, "--max-mutants", "5", "-f", "json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["generated"] == 44 and doc["checked"] == len(doc["mutants"]) == 5
    assert {"id", "operator", "rule", "where", "status", "reason"} <= set(doc["mutants"][0])
    with signals.run_clock(ManualClock(100.0)):        # a run that started before its --timeout
        assert main(["mutate", MODEL, "-p", PROPS, "--timeout", "1", "-q"], started=0.0) == 3
    assert "unknown" in capsys.readouterr().out
    assert main(["mutate", MODEL, "-p", PROPS, "--max-mutants", "0"]) == 2
    assert main(["mutate", MODEL, "-p", PROPS, "--jobs", "0"]) == 2
    assert main(["mutate", MODEL, "-p", PROPS, "--only", "m99"]) == 2
    assert main(["mutate", MODEL, "-p", PROPS, "--only", "m12,m26", "--jobs", "1", "-f", "json", "-o", str(out)]) == 0
    assert [m["id"] for m in json.loads(out.read_text())["mutants"]] == ["m12", "m26"]


def test_without_the_analyses_only_claims_kill():
    report = mutate(MODEL, RunOptions(properties=PROPS, consistency=False))
    # the gap finding noticed it before; no claim does
    assert outcome(report, "gain: guard 'coins < 3' -> 'coins <= 3'").status == "survived"
    assert outcome(report, "gain: effect 'bonus := true' left out").status == "killed"


def test_vacuous_trigger_and_antecedent_are_flagged():
    model = load_model(MODEL)
    found = {(v.claim, v.part) for v in vacuous_claims(model, load_properties(PROPS, model))}
    assert found == {("debt-answered", "trigger"), ("full-purse-means-bonus", "antecedent")}
    # coin-means-bonus (antecedent reached) and spend-answered (trigger reached) are not flagged


def test_vacuity_is_a_warning_of_check():
    [run] = check_model(MODEL, RunOptions(properties=PROPS))
    assert [v.claim for v in run.vacuous] == ["full-purse-means-bonus", "debt-answered"]
    assert run.as_expected


def _as_written(path=MODEL):
    captured = []
    load_model(path, edit=lambda m, s, b: captured.append((m, s, b)) or (m, s, b))
    return captured[0]


def _load(mutant):
    return load_model(MODEL, edit=partial(apply, mutant))


def test_the_lowered_bookkeeping_is_not_mutated():
    """A sequence's length (an array of sequences' length array too), the first value a pop puts back at
    the top and a duration's record are written by the loader, not the designer."""
    fixtures = Path(__file__).parent / "fixtures" / "lang"
    made = [m.description for name in ("stack.yaml", "until.yaml", "piles.yaml")
            for m in generate(*_as_written(str(fixtures / name)))]
    assert not [d for d in made if "_len :=" in d or "_len[c] :=" in d or "_until" in d]
    assert not [d for d in made if "stack[stack_len - 1] :=" in d or "ctrl[ctrl_len - 1] :=" in d
                or "piles[c][piles_len[c] - 1] :=" in d]                       # `stack: pop`, `piles[c]: pop`
    assert any("'stack[stack_len] := c'" in d for d in made) and any("'shield[q] := true'" in d for d in made)
    assert any("'piles[c][piles_len[c]] := r' left out" in d for d in made)


def test_the_backstop_keeps_the_mutants_decided_before_it(monkeypatch, capsys, tmp_path):
    """When the backstop cuts a mutation run, the mutants decided by then keep their outcomes and the
    rest are UNKNOWN, not checked (the run used to end with "nothing was decided"); exit 3. The
    run's clock is moved by hand: the alarm rings in the third mutant's check."""
    clock, calls = ManualClock(), []
    decide = analysis._decide

    def third_is_cut(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            clock.advance(100.0)
            signals.fire(None)
        return decide(*args, **kwargs)

    monkeypatch.setattr(analysis, "_decide", third_is_cut)
    out = tmp_path / "m.json"
    with signals.run_clock(clock):
        code = main(["mutate", MODEL, "-p", PROPS, "--max-mutants", "6", "--jobs", "1", "--timeout", "30",
                     "-f", "json", "-o", str(out)])
    assert code == 3, capsys.readouterr().err
    mutants = json.loads(out.read_text())["mutants"]
    assert len(mutants) == 6 and all(m["status"] != "unknown" for m in mutants[:2])
    assert all(m["status"] == "unknown" and m["reason"] == "not checked: cut short by --timeout (30 s)"
               for m in mutants[2:]), mutants


def test_a_model_file_changed_during_the_run_stops_it(tmp_path, monkeypatch):
    """Each mutant is the model file read again: a file edited mid-run (a rebase, an editor) is a
    usage error naming it, never a run of mutants marked invalid against the new text."""
    monkeypatch.chdir(tmp_path)
    Path("tally.yaml").write_text(Path(MODEL).read_text(encoding="utf-8"), encoding="utf-8")
    Path("tally_props.yaml").write_text(Path(PROPS).read_text(encoding="utf-8"), encoding="utf-8")

    def edit_once(_outcome, done: int, _total: int) -> None:
        if done == 1:
            with open("tally.yaml", "a", encoding="utf-8") as model:
                model.write("\n# edited while mutate ran\n")

    with pytest.raises(UsageError, match=r"tally\.yaml changed while mutate ran"):
        mutate("tally.yaml", RunOptions(properties="tally_props.yaml"), jobs=1, progress=edit_once)
