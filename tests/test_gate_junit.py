"""JUnit XML output: valid against the common JUnit schema (tests/schemas/JUnit.xsd).

The structural validator below reads the element and attribute rules from the
XSD file itself (which attributes each element takes, which are required, their
types) and checks the content model the XSD declares; it must reject each of a
list of broken documents.
"""
from __future__ import annotations

import copy
import datetime as dt
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.report.junit import runs_junit, trace_text
from verifier.result import Finding, ModelRun
from verifier.runner import RunOptions, check_model

HERE = Path(__file__).parent
XSD = HERE / "schemas" / "JUnit.xsd"
GATE = HERE / "fixtures" / "gate"
MINI = HERE / "fixtures" / "core"
XS = "{http://www.w3.org/2001/XMLSchema}"


# ---------------------------------------------------------------- a validator driven by JUnit.xsd

def _attributes(node: ET.Element) -> dict[str, tuple[str, bool]]:
    """name -> (type, required) of the xs:attribute declarations directly under `node`."""
    out = {}
    for a in node.findall(f"{XS}attribute"):
        typ = a.get("type")
        if typ is None:
            restriction = a.find(f"{XS}simpleType/{XS}restriction")
            typ = restriction.get("base") + ("+minLength1" if restriction.find(f"{XS}minLength") is not None else "")
        out[a.get("name")] = (typ, a.get("use") == "required")
    return out


def xsd_rules() -> dict[str, dict[str, tuple[str, bool]]]:
    root = ET.parse(XSD).getroot()
    suite_type = root.find(f"{XS}complexType[@name='testsuite']")
    suites_ext = root.find(f"{XS}element[@name='testsuites']//{XS}extension[@base='testsuite']")
    seq = suite_type.find(f"{XS}sequence")
    testcase = seq.find(f"{XS}element[@name='testcase']/{XS}complexType")
    prop = seq.find(f"{XS}element[@name='properties']//{XS}element[@name='property']/{XS}complexType")
    failure = testcase.find(f"{XS}choice/{XS}element[@name='failure']//{XS}extension")
    error = testcase.find(f"{XS}choice/{XS}element[@name='error']//{XS}extension")
    pattern = root.find(f"{XS}simpleType[@name='ISO8601_DATETIME_PATTERN']//{XS}pattern").get("value")
    return {
        "suite_in_suites": {**_attributes(suite_type), **_attributes(suites_ext)},
        "testcase": _attributes(testcase),
        "property": _attributes(prop),
        "failure": _attributes(failure),
        "error": _attributes(error),
        "sequence": [e.get("name") for e in seq.findall(f"{XS}element")],
        "choice": [e.get("name") for e in testcase.findall(f"{XS}choice/{XS}element")],
        "timestamp_pattern": pattern,
    }


RULES = xsd_rules()


def _check_value(typ: str, value: str) -> bool:
    if typ == "xs:int":
        return re.fullmatch(r"[+-]?\d+", value) is not None and -2**31 <= int(value) < 2**31
    if typ == "xs:decimal":
        return re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)", value) is not None
    if typ.endswith("+minLength1"):
        return len(" ".join(value.split())) >= 1
    if typ == "ISO8601_DATETIME_PATTERN":
        if re.fullmatch(RULES["timestamp_pattern"], value) is None:
            return False
        try:
            dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%S")
        except ValueError:
            return False
        return True
    return True            # xs:string, xs:token


def _check_attrs(el: ET.Element, rules: dict[str, tuple[str, bool]], where: str, errors: list[str]) -> None:
    for name, value in el.attrib.items():
        if name not in rules:
            errors.append(f"{where}: attribute '{name}' is not allowed")
        elif not _check_value(rules[name][0], value):
            errors.append(f"{where}: '{value}' is not a valid {rules[name][0]} for '{name}'")
    for name, (_typ, required) in rules.items():
        if required and name not in el.attrib:
            errors.append(f"{where}: attribute '{name}' is required")


def _no_children(el: ET.Element, where: str, errors: list[str]) -> None:
    if len(el):
        errors.append(f"{where}: element content is not allowed")


def junit_errors(text: str) -> list[str]:
    """Every violation of JUnit.xsd's rules in a `testsuites` document."""
    errors: list[str] = []
    root = ET.fromstring(text)
    if root.tag != "testsuites":
        return [f"root element is {root.tag}, not testsuites"]
    _check_attrs(root, {}, "testsuites", errors)
    sequence = RULES["sequence"]                   # properties, testcase*, system-out, system-err
    for i, suite in enumerate(root):
        where = f"testsuite #{i}"
        if suite.tag != "testsuite":
            errors.append(f"{where}: unexpected element {suite.tag}")
            continue
        _check_attrs(suite, RULES["suite_in_suites"], where, errors)
        tags = [c.tag for c in suite]
        pattern = rf"{sequence[0]} (?:{sequence[1]} )*{sequence[2]} {sequence[3]} "
        if re.fullmatch(pattern, "".join(t + " " for t in tags)) is None:
            errors.append(f"{where}: children {tags} do not follow the sequence {sequence} (testcase repeats)")
        for child in suite:
            if child.tag == "properties":
                _check_attrs(child, {}, f"{where}/properties", errors)
                for prop in child:
                    if prop.tag != "property":
                        errors.append(f"{where}/properties: unexpected element {prop.tag}")
                        continue
                    _check_attrs(prop, RULES["property"], f"{where}/property", errors)
                    _no_children(prop, f"{where}/property", errors)
            elif child.tag == "testcase":
                cw = f"{where}/testcase {child.get('name')}"
                _check_attrs(child, RULES["testcase"], cw, errors)
                inner = list(child)
                if len(inner) > 1:
                    errors.append(f"{cw}: at most one of {RULES['choice']}, found {[c.tag for c in inner]}")
                for c in inner:
                    if c.tag not in RULES["choice"]:
                        errors.append(f"{cw}: unexpected element {c.tag}")
                    elif c.tag in ("failure", "error"):
                        _check_attrs(c, RULES[c.tag], f"{cw}/{c.tag}", errors)
                        _no_children(c, f"{cw}/{c.tag}", errors)
            elif child.tag in ("system-out", "system-err"):
                _check_attrs(child, {}, f"{where}/{child.tag}", errors)
                _no_children(child, f"{where}/{child.tag}", errors)
    return errors


# ---------------------------------------------------------------- documents

def gate_runs(model: str = "gate_limit") -> list[ModelRun]:
    return check_model(str(GATE / f"{model}.yaml"),
                       RunOptions(engine="explicit", properties=str(GATE / "gate_props.yaml"), consistency=False))


def with_findings(runs: list[ModelRun]) -> list[ModelRun]:
    """Hand-made findings (one acknowledged) on a real run, traces included."""
    from dataclasses import replace
    trace = next(r.trace for r in runs[0].results if r.trace is not None)
    model = runs[0].model
    found = (Finding("dead-rule", "discard", "Discard never happens: no hand exceeds the limit",
                     ("Discard: cards above the limit go",), span=model.action("discard").span),
             Finding("deadlock", "state", "A <weird> & \"quoted\" state \x07 with no move", traces=(trace,)),
             Finding("gap", "hand", "Hand may overflow", acknowledged="the rules cap the hand elsewhere"))
    return [replace(runs[0], findings=found)] + list(runs[1:])


def test_the_validator_reads_the_schema():
    assert RULES["sequence"] == ["properties", "testcase", "system-out", "system-err"]
    assert RULES["choice"] == ["skipped", "error", "failure"]
    assert {k for k, (_t, req) in RULES["suite_in_suites"].items() if req} == \
        {"name", "timestamp", "hostname", "tests", "failures", "errors", "time", "package", "id"}
    assert RULES["testcase"] == {"name": ("xs:token", True), "classname": ("xs:token", True),
                                 "time": ("xs:decimal", True)}
    assert RULES["failure"]["type"] == ("xs:string", True)


@pytest.mark.parametrize("case", ["violated", "variants", "findings", "unknown"])
def test_output_is_valid(case, tmp_path, monkeypatch):
    if case == "violated":
        runs = gate_runs("gate_limit")
    elif case == "variants":
        runs = check_model(str(MINI / "mini.yaml"), RunOptions(engine="explicit", consistency=False,
                                                               properties=str(MINI / "mini_props.yaml")))
    elif case == "findings":
        runs = with_findings(gate_runs("gate"))
    else:
        from verifier.engines.base import Budget
        runs = check_model(str(GATE / "gate.yaml"), RunOptions(engine="explicit", consistency=False,
                                                               properties=str(GATE / "gate_props.yaml"),
                                                               budget=Budget(max_states=1)))
    text = runs_junit(runs)
    assert junit_errors(text) == []
    root = ET.fromstring(text)
    assert len(root) == len(runs)                      # one testsuite per model run (variant)
    for suite, run in zip(root, runs):
        cases = suite.findall("testcase")
        assert len(cases) == len(run.results) + len(run.findings)    # one per claim and per finding
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == len(suite.findall("testcase/failure"))
        assert int(suite.get("errors")) == len(suite.findall("testcase/error"))


def test_failures_carry_the_trace():
    runs = gate_runs("gate_limit")
    root = ET.fromstring(runs_junit(runs))
    (failure,) = root.findall(".//failure")
    case = root.find(".//testcase[failure]")
    assert case.get("name") == "limit-at-draw" and failure.get("type") == "VIOLATED"
    result = next(r for r in runs[0].results if r.property.id == "limit-at-draw")
    assert trace_text(result.trace, "  ") in failure.text
    assert "9 steps" in failure.text and "pass turn" in failure.text and "hand: 2 -> 3" in failure.text


def test_findings_and_unknown_claims():
    root = ET.fromstring(runs_junit(with_findings(gate_runs("gate"))))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["dead-rule:discard"].find("failure").get("type") == "dead-rule"
    assert cases["deadlock:state"].find("failure") is not None
    assert "trace 1" in cases["deadlock:state"].find("failure").text
    assert len(cases["gap:hand"]) == 0                                        # acknowledged: passes
    assert "acknowledged finding" in root.find(".//system-out").text
    from verifier.engines.base import Budget
    runs = check_model(str(GATE / "gate.yaml"), RunOptions(engine="explicit", consistency=False,
                                                           properties=str(GATE / "gate_props.yaml"),
                                                           budget=Budget(max_states=1)))
    root = ET.fromstring(runs_junit(runs))
    errors = root.findall(".//testcase/error")
    assert errors and all(e.get("type") == "UNKNOWN" and "max-states" in e.get("message") for e in errors)


def test_known_flaws_pass_and_are_listed():
    runs = check_model(str(MINI / "mini.yaml"), RunOptions(engine="explicit", consistency=False,
                                                           properties=str(MINI / "mini_props.yaml")))
    root = ET.fromstring(runs_junit(runs, timestamp=dt.datetime(2026, 1, 2, 3, 4, 5)))
    assert root.findall(".//failure") == []
    assert all(s.get("timestamp") == "2026-01-02T03:04:05" for s in root)
    assert [s.get("name") for s in root] == ["mini[strict]", "mini[loose]"]
    assert "known flaw (expected VIOLATED): claim hand-never-three" in root[1].find("system-out").text


BREAKAGES = [
    ("attribute on testsuites", lambda r: r.set("name", "x")),
    ("missing hostname", lambda r: r[0].attrib.pop("hostname")),
    ("timestamp with a zone", lambda r: r[0].set("timestamp", "2026-01-02T03:04:05Z")),
    ("tests not an int", lambda r: r[0].set("tests", "many")),
    ("system-out before testcases", lambda r: (r[0].remove(so := r[0].find("system-out")), r[0].insert(1, so))),
    ("no properties", lambda r: r[0].remove(r[0].find("properties"))),
    ("two failures", lambda r: r[0].find("testcase[failure]").append(copy.deepcopy(r[0].find(".//failure")))),
    ("failure without type", lambda r: r[0].find(".//failure").attrib.pop("type")),
    ("testcase without classname", lambda r: r[0].find("testcase").attrib.pop("classname")),
    ("unknown attribute on testcase", lambda r: r[0].find("testcase").set("file", "x.yaml")),
    ("missing package in aggregate", lambda r: r[0].attrib.pop("package")),
]


@pytest.mark.parametrize("what,breakage", BREAKAGES, ids=[b[0] for b in BREAKAGES])
def test_validators_reject_broken_documents(what, breakage):
    root = ET.fromstring(runs_junit(gate_runs("gate_limit")))
    breakage(root)
    text = ET.tostring(root, encoding="unicode")
    assert junit_errors(text), what


def test_check_writes_junit(tmp_path, capsys):
    out = tmp_path / "reports" / "gate.xml"
    code = main(["check", str(GATE / "gate_limit.yaml"), "-p", str(GATE / "gate_props.yaml"), "--engine",
                 "explicit", "--no-consistency", "-q", "--format", "junit", "-o", str(out)])
    assert code == 1
    text = out.read_text(encoding="utf-8")
    assert junit_errors(text) == []
    assert capsys.readouterr().out == ""


def test_plain_trace_of_a_lasso():
    from verifier.trace import Step, Trace
    t = Trace((("hand", 0),), (Step("draw", (), 0, "Draw: x", (("hand", (0, 1)),)),
                              Step("play", (), 0, "Play: y", (("hand", (1, 0)),))), loop_start=0)
    text = trace_text(t)
    assert "loop> draw" in text and "from step 1 on, the loop repeats forever" in text
    assert text.isascii()


def test_real_findings_are_valid():
    runs = check_model(str(GATE / "gate_limit.yaml"),
                       RunOptions(engine="explicit", properties=str(GATE / "gate_props.yaml")))
    text = runs_junit(runs)
    assert junit_errors(text) == []
    cases = {c.get("name"): c for c in ET.fromstring(text).iter("testcase")}
    assert cases["dead-rule:discard"].find("failure").get("type") == "dead-rule"
