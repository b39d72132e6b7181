"""JUnit XML: one testsuite per model run (variant), one testcase per claim and per finding.

The document follows the common JUnit schema that CI servers read (the Ant
JUnit report format, `JUnit.xsd`): a `testsuites` root without attributes;
each `testsuite` with `properties`, its `testcase`s, then `system-out` and
`system-err`; each testcase holds at most one `failure`, `error` or `skipped`.

- a claim not as expected is a `failure` (type = the verdict) whose text is the
  counterexample trace; a claim left UNKNOWN by a budget is an `error`
  (type UNKNOWN, the reason as message): the claim was not decided;
- an unacknowledged consistency finding is a `failure` (type = its kind) with
  its rules, evidence and traces; an acknowledged one passes;
- consistency analyses a budget cut short are one `error` testcase (type UNKNOWN);
- known flaws (claims expected VIOLATED and violated) pass; their traces and the
  acknowledged findings are listed in the suite's `system-out`.
"""
from __future__ import annotations

import datetime as _dt
import re
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from verifier import __version__
from verifier.report import trace_view
from verifier.report.bounds import bound_traces
from verifier.report.explain import shown_why
from verifier.result import CheckResult, Finding, ModelRun, Verdict
from verifier.trace import Trace

# XML 1.0 forbids most control characters, even escaped.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: object) -> str:
    return _INVALID_XML.sub("?", str(text))


def _fmt(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def wrap_items(items: list[str], width: int) -> list[str]:
    """Comma-separated items in lines of at most `width` characters (an item is never split)."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 2 + len(item) <= width:
            lines[-1] += ", " + item
        else:
            if lines:
                lines[-1] += ","
            lines.append(item)
    return lines or [""]


def trace_text(trace: Trace, indent: str = "", width: int = 64) -> str:
    """A trace as an aligned plain-text table (ASCII only; `report.trace_view`): the start
    compactly, then one row per step or run of repeated steps (`x n`) with its player, the rule
    it cites (its text once, then its section) and what changed; long rules and change lists
    wrap within their columns (changes at `width` characters)."""
    rows = [("#", "action", "player", "rule", ["changes"]),
            ("0", "(initial state)", "", "", trace_view.start_items(trace))]
    for row in trace_view.rows(trace):
        rows.append((row.steps.replace("–", "-"), ("loop> " if row.loop_start else "") + row.move.replace("×", "x"),
                     "" if row.player is None else str(row.player), row.rule.replace("…", "..."),
                     [f"{k}: {c}" for k, c in _ascii_changes(row)]))
    cells = [[[r[0]], [r[1]], [r[2]], textwrap.wrap(r[3], 44) or [""], wrap_items(r[4], width)] for r in rows]
    widths = [max(len(line) for c in cells for line in c[col]) for col in range(4)]
    lines = []
    for c in cells:
        for k in range(max(len(col) for col in c)):
            parts = [(col[k] if k < len(col) else "") for col in c]
            lines.append(indent + "  ".join(p.ljust(w) for p, w in zip(parts[:4], widths)) + "  " + parts[4])
    if trace.loop_start is not None:
        lines.append(f"{indent}from step {trace.loop_start + 1} on, the loop repeats forever")
    return "\n".join(line.rstrip() for line in lines)


def _ascii_changes(row: trace_view.Row) -> list[tuple[str, str]]:
    return [(k, f"{_fmt(a)} -> " + ("... -> " if a == b and row.count > 1 else "") + _fmt(b))
            for k, (a, b) in row.changes]


def _suite_name(run: ModelRun) -> str:
    return run.model.name + (f"[{run.model.variant}]" if run.model.variant else "")


def _claim_detail(r: CheckResult) -> str:
    p = r.property
    lines = [f"claim {p.id} ({p.kind}): {p.statement}",
             f"verdict {r.verdict.value}" + (f" (expected {p.expected})" if p.expected else "")
             + f"; engine {r.engine}"
             + (f", {r.stats.states:,} states" if r.stats.states else "")
             + (f", depth {r.depth}" if r.depth is not None else "")]
    if p.rule:
        lines.append(f"rule: {p.rule}")
    if shown_why(r):
        lines.append(f"why (expected VIOLATED): {shown_why(r)}")
    if p.span is not None:
        lines.append(f"declared at {p.span}")
    if r.reason:
        lines.append(f"reason: {r.reason}")
    if r.trace is not None:
        lines += [f"trace ({len(r.trace)} steps):", trace_text(r.trace, "  ")]
    return "\n".join(lines)


def _finding_detail(f: Finding) -> str:
    lines = [f"{f.kind} {f.subject}: {f.message}"]
    lines += [f"rule: {rule}" for rule in f.rules]
    if f.span is not None:
        lines.append(f"at {f.span}")
    if f.scope:
        lines.append(f"scope: {f.scope}")
    for k, v in f.evidence.items():
        if isinstance(v, (str, int, float, bool)):
            lines.append(f"{k}: {v}")
    for i, t in enumerate(f.traces, 1):
        lines += [f"trace {i} ({len(t)} steps):", trace_text(t, "  ")]
    if f.acknowledged:
        lines.append(f"acknowledged: {f.acknowledged}")
    return "\n".join(lines)


def _claim_case(suite: ET.Element, run: ModelRun, r: CheckResult, out: list[str]) -> tuple[int, int]:
    case = ET.SubElement(suite, "testcase", name=_clean(r.property.id),
                         classname=_clean(f"{_suite_name(run)}.claims"), time=f"{r.stats.seconds:.3f}")
    undecided = r.verdict is Verdict.UNKNOWN and r.property.expected != Verdict.UNKNOWN.value
    if r.as_expected and not undecided:
        if r.verdict is Verdict.VIOLATED:
            out.append("known flaw (expected VIOLATED): " + _claim_detail(r))
        return 0, 0
    if r.verdict is Verdict.UNKNOWN:
        el = ET.SubElement(case, "error", type="UNKNOWN", message=_clean(r.reason or "undecided"))
        el.text = _clean(_claim_detail(r))
        return 0, 1
    expected = r.property.expected or "not VIOLATED"
    el = ET.SubElement(case, "failure", type=r.verdict.value,
                       message=_clean(f"{r.property.id}: {r.verdict.value}, expected {expected}"))
    el.text = _clean(_claim_detail(r))
    return 1, 0


def _finding_case(suite: ET.Element, run: ModelRun, f: Finding, out: list[str]) -> int:
    case = ET.SubElement(suite, "testcase", name=_clean(f.key), classname=_clean(f"{_suite_name(run)}.findings"),
                         time="0.000")
    if f.acknowledged is not None:
        out.append("acknowledged finding: " + _finding_detail(f))
        return 0
    el = ET.SubElement(case, "failure", type=f.kind, message=_clean(f.message))
    el.text = _clean(_finding_detail(f))
    return 1


def runs_junit(runs: Sequence[ModelRun], timestamp: _dt.datetime | None = None,
               extra_out: str = "") -> str:
    """The JUnit XML document of one check (one model, one suite per variant).

    `timestamp` (local time, no zone, as the schema wants) defaults to now;
    `extra_out` is appended to every suite's system-out (a baseline comparison), after what the
    trace bound left out (`bounds`).
    """
    bounded = bound_traces(runs)
    runs, extra_out = bounded.runs, "\n\n".join(x for x in (bounded.note, extra_out) if x)
    stamp = (timestamp or _dt.datetime.now()).strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites")
    for i, run in enumerate(runs):
        suite = ET.SubElement(root, "testsuite", name=_clean(_suite_name(run)), package=_clean(run.model.name),
                              id=str(i), timestamp=stamp, hostname="localhost")
        props = ET.SubElement(suite, "properties")
        values = [("turnproof.version", __version__), ("model.path", run.path),
                  ("model.variant", run.model.variant or ""),
                  ("properties.path", run.properties_path or "")]
        values += [(f"param.{k}", "*" if v is None else str(v)) for k, v in run.model.param_values]
        engines = sorted({r.engine for r in run.results})
        values.append(("engine", ",".join(engines)))
        for name, value in values:
            ET.SubElement(props, "property", name=name, value=_clean(value))
        out: list[str] = []
        failures = errors = 0
        for r in run.results:
            f, e = _claim_case(suite, run, r, out)
            failures, errors = failures + f, errors + e
        for finding in run.findings:
            failures += _finding_case(suite, run, finding, out)
        if run.analyses_unknown:           # a budget cut the analyses short: findings beyond it are not absent
            case = ET.SubElement(suite, "testcase", name="consistency analyses",
                                 classname=_clean(f"{_suite_name(run)}.findings"), time="0.000")
            ET.SubElement(case, "error", type="UNKNOWN", message=_clean(run.analyses_unknown)).text = \
                _clean(f"the consistency analyses did not finish: {run.analyses_unknown}")
            errors += 1
        suite.set("tests", str(len(run.results) + len(run.findings) + bool(run.analyses_unknown)))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        suite.set("skipped", "0")
        suite.set("time", f"{run.seconds:.3f}")
        summary = (f"{run.model.name}" + (f" [variant {run.model.variant}]" if run.model.variant else "")
                   + f": {len(run.results)} claims, {sum(r.as_expected for r in run.results)} as expected, "
                   f"{len(run.new_findings)} unacknowledged findings")
        parts = [summary, *out] + ([extra_out] if extra_out else [])
        ET.SubElement(suite, "system-out").text = _clean("\n\n".join(parts))
        ET.SubElement(suite, "system-err").text = ""
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
