"""`turnproof mutate --journal`: decided mutants are kept as they are decided, and a run started
again (after a kill, a timeout, a lost machine) checks only the rest, with the same outcomes."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.diagnostics import UsageError
from verifier.mutation import analysis
from verifier.mutation.analysis import mutate
from verifier.runner import RunOptions

HERE = Path(__file__).parent / "fixtures" / "mutation"


@pytest.fixture()
def files(tmp_path):
    """The tiny game and its claims, copied (one test edits the claims)."""
    model, props = tmp_path / "tally.yaml", tmp_path / "tally_props.yaml"
    shutil.copy(HERE / "tally.yaml", model)
    shutil.copy(HERE / "tally_props.yaml", props)
    return str(model), str(props), str(tmp_path / "run.journal")


def statuses(report):
    return {o.mutant.id: (o.status, o.reason) for o in report.outcomes}


def counting_checks(monkeypatch) -> list[str]:
    """The ids of the mutants actually checked from now on (one job, in this process)."""
    checked: list[str] = []
    real = analysis._check_mutant

    def spy(mutant, **kwargs):
        checked.append(mutant.id)
        return real(mutant, **kwargs)

    monkeypatch.setattr(analysis, "_check_mutant", spy)
    return checked


def test_a_journal_keeps_each_outcome_and_a_second_run_checks_nothing_again(files, monkeypatch):
    model, props, journal = files
    first = mutate(model, RunOptions(properties=props), jobs=1, journal_path=journal)
    lines = Path(journal).read_text().splitlines()
    assert json.loads(lines[0])["format"] == "turnproof-mutation-journal/1"
    assert len(lines) == 1 + len(first.outcomes)          # the tiny game leaves nothing UNKNOWN
    checked = counting_checks(monkeypatch)
    again = mutate(model, RunOptions(properties=props), jobs=1, journal_path=journal)
    assert checked == []
    assert statuses(again) == statuses(first)
    assert [o.mutant.id for o in again.outcomes] == [o.mutant.id for o in first.outcomes]


def test_an_interrupted_run_resumes_with_the_mutants_it_had_not_decided(files, monkeypatch):
    model, props, journal = files
    full = mutate(model, RunOptions(properties=props), jobs=1, journal_path=journal)
    lines = Path(journal).read_text().splitlines()
    kept, lost = lines[:-3], lines[-3:]
    Path(journal).write_text("\n".join(kept) + "\n" + lost[0][:17])    # killed in the middle of a line
    checked = counting_checks(monkeypatch)
    resumed = mutate(model, RunOptions(properties=props), jobs=1, journal_path=journal)
    assert checked == [json.loads(line)["id"] for line in lost]
    assert statuses(resumed) == statuses(full)


def test_unknown_outcomes_are_checked_again(files):
    model, props, journal = files
    cut = mutate(model, RunOptions(properties=props), jobs=1, journal_path=journal, max_mutants=4)
    assert len(Path(journal).read_text().splitlines()) == 1 + len(cut.outcomes)
    records = [json.loads(line) for line in Path(journal).read_text().splitlines()[1:]]
    assert all(r["status"] != "unknown" for r in records)


def test_a_journal_of_other_claims_is_refused(files):
    model, props, journal = files
    mutate(model, RunOptions(properties=props), jobs=1, journal_path=journal, max_mutants=2)
    Path(props).write_text(Path(props).read_text() + "\n")
    with pytest.raises(UsageError, match="written for another model, claim file"):
        mutate(model, RunOptions(properties=props), jobs=1, journal_path=journal)


def test_a_damaged_journal_names_its_line(files):
    model, props, journal = files
    mutate(model, RunOptions(properties=props), jobs=1, journal_path=journal, max_mutants=3)
    lines = Path(journal).read_text().splitlines()
    lines[2] = '{"id": "m9999", "status": "killed", "reason": "", "seconds": 0}'
    Path(journal).write_text("\n".join(lines) + "\n")
    with pytest.raises(UsageError) as caught:
        mutate(model, RunOptions(properties=props), jobs=1, journal_path=journal)
    assert caught.value.diagnostics[0].span.line == 3
    lines[2] = "<not json>"
    Path(journal).write_text("\n".join(lines) + "\n")
    with pytest.raises(UsageError, match="not a JSON line"):
        mutate(model, RunOptions(properties=props), jobs=1, journal_path=journal)


def test_cli_journal(files, tmp_path, capsys):
    model, props, journal = files
    assert main(["mutate", model, "-p", props, "--max-mutants", "3", "--journal", journal, "-q"]) == 0
    made = tmp_path / "out" / "j"                         # README's journal line names out/, as -o does
    assert main(["mutate", model, "-p", props, "--max-mutants", "1", "--journal", str(made), "-q"]) == 0
    assert made.is_file()
    assert main(["mutate", model, "-p", props, "--journal", str(made / "under-a-file"), "-q"]) == 2
    Path(journal).write_text("garbage\n")
    assert main(["mutate", model, "-p", props, "--journal", journal, "-q"]) == 2
    err = capsys.readouterr().err
    assert "journal" in err and "Traceback" not in err


def test_a_file_that_is_no_journal_is_refused_and_left_as_it_was(files):
    model, props, _ = files
    text = Path(model).read_text().rstrip("\n")          # no final newline: it looks cut off
    Path(props).with_name("other").write_text(text)
    other = Path(props).with_name("other")
    for content, message in ((text, "not a JSON line"), ("name: tally", "not a journal of turnproof mutate")):
        other.write_text(content)
        with pytest.raises(UsageError, match=message):
            mutate(model, RunOptions(properties=props), jobs=1, journal_path=str(other))
        assert other.read_text() == content
