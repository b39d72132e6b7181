"""The shipped games with a parameter left free: some claim of every game is PROVED for every
value of it, and says so in the JSON output (`engine`, `verdict`, `params`)."""
from __future__ import annotations

from pathlib import Path

import pytest

from verifier.engines.symbolic import SymbolicEngine
from verifier.ir.props import Invariant
from verifier.lang import default_properties_path, load_model, load_properties
from verifier.report.json_out import result_json
from verifier.resources import Budget
from verifier.result import Verdict

ROOT = Path(__file__).resolve().parent.parent
GAMES = sorted((ROOT / "models").glob("*.yaml"))


@pytest.mark.parametrize("path", GAMES, ids=[p.stem for p in GAMES])
def test_some_claim_proved_for_every_value_of_a_parameter(path):
    base = load_model(str(path))
    props_path = default_properties_path(str(path))
    if props_path is None:
        pytest.skip("no property file")
    claims = [c for c in load_properties(props_path, base) if isinstance(c, Invariant)]
    engine = SymbolicEngine("kind")
    tried = []
    for decl in base.params:
        model = load_model(str(path), {decl.name: None})
        for claim in claims:               # one at a time, up to the first proved (all at once took 3 to 5 s a game)
            (result,) = engine.check(model, [claim], Budget(rlimit=10_000_000, max_depth=3))
            assert not result.reason.startswith("internal"), result.reason
            if result.verdict is Verdict.PROVED:
                data = result_json(result)
                assert data["verdict"] == "PROVED" and data["engine"] == "k-induction"
                assert data["params"][decl.name] is None
                assert f"every value of {decl.name}" in data["reason"]
                return
        tried.append(decl.name)
    pytest.fail(f"no invariant of {path.stem} was proved with any of {', '.join(tried)} free")
