"""SARIF 2.1.0: claims and findings as code-scanning results on the model's lines.

One SARIF run for one check. The tool's rules are the claim kinds
(`claim/invariant`, `claim/ordering`, ...) and the finding kinds
(`finding/dead-rule`, `finding/deadlock`, ...). Results:

- a claim not as expected: level `error` (a budget that left it UNKNOWN:
  `warning`), located at the claim's line in the property file, with the
  counterexample as a codeFlow whose threadFlow locations point at the model
  line of each step's action;
- a claim expected VIOLATED and violated (a documented known flaw): level `note`,
  suppressed in source with the claim's `why` as justification;
- an unacknowledged finding: level `warning` at the line of the action, phase or
  variable it concerns (or `Finding.span`); an acknowledged one: `note`, suppressed
  with the model's stated reason;
- consistency analyses that a budget cut short: a warning notification of the invocation;
- a warning of the model's loader (a deprecated `next:` list, ...): level `warning`, rule
  `model/warning`, at its line and column;
- claims that hold as expected are left out unless `include_passing` (then
  kind `pass`, level `none`).

Artifact URIs are relative to `root` (default: the current directory) when the
file lies below it, so the log carries no machine paths and code review can
place the results. `baseline` (a `verifier.baseline.Comparison`) sets each
result's `baselineState`.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verifier import __version__
from verifier.diagnostics import Span
from verifier.report.bounds import bound_traces
from verifier.report.explain import shown_why
from verifier.report.json_out import model_warnings
from verifier.result import CheckResult, Finding, ModelRun, Verdict
from verifier.trace import Trace

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
WARNING_RULE = "model/warning"

CLAIM_KINDS = {
    "invariant": "An invariant: a condition that holds in every reachable state (or in every state of a phase).",
    "deadlock": "Deadlock freedom: every reachable state that is not an end of game has a legal move.",
    "reachable": "Reachability: some play reaches the state, phase or action.",
    "termination": "Termination: every turn (or every game) ends, under the stated fairness.",
    "ordering": "An ordering pattern (absence, existence, precedence, response...) within a scope.",
    "bounded-response": "Bounded response: after the trigger, the response follows within N steps.",
    "obligation": "An obligation: a pending condition is eventually discharged.",
    "step": "A step claim: a condition on every transition (the state before, the move, the state after).",
}
FINDING_KINDS = {
    "dead-rule": "An action that can never fire, or a phase that is never reached.",
    "deadlock": "A reachable state that is not an end of game and has no legal move.",
    "gap": "An effect would leave a variable's range and the rules state no policy: the rules are silent.",
    "conflict": "A mandatory action that a prohibition or another mandatory action blocks.",
    "order-dependence": "Two actions enabled together whose effects do not commute, with no order fixed.",
    "nondeterministic-must": "A mandatory action with several choices and no rule for which.",
    "variant-difference": "Two readings of a rule lead to different verdicts or reachable states.",
}


def artifact_uri(path: str, root: str | None = None) -> str:
    """`path` relative to `root` (POSIX form) when below it, else an absolute file URI."""
    base = Path(root or os.getcwd()).resolve()
    target = Path(path).resolve()
    try:
        return target.relative_to(base).as_posix()
    except ValueError:
        return target.as_uri()


def _region(span: Span) -> dict[str, int]:
    region = {"startLine": max(1, span.line), "startColumn": max(1, span.col)}
    if span.end_line is not None and span.end_line >= span.line:
        region["endLine"] = span.end_line
        if span.end_col is not None and span.end_col >= 1:
            region["endColumn"] = span.end_col
    elif span.end_col is not None and span.end_col > span.col:
        region["endColumn"] = span.end_col
    return region


class _Locator:
    """Spans of a model's elements by name, and SARIF locations for them."""

    def __init__(self, run: ModelRun, root: str | None):
        self.root = root
        model = run.model
        self.model_span = model.span or Span(run.path, 1, 1)
        self.actions = {a.name: a.span for a in model.actions if a.span is not None}
        self.phases = {p.name: p.span for p in model.phases if p.span is not None}
        self.variables = {v.name: v.span for v in model.variables if v.span is not None}

    def location(self, span: Span | None, message: str | None = None) -> dict[str, Any]:
        span = span or self.model_span
        loc: dict[str, Any] = {"physicalLocation": {
            "artifactLocation": {"uri": artifact_uri(span.file, self.root)},
            "region": _region(span)}}
        if message:
            loc["message"] = {"text": message}
        return loc

    def action_span(self, name: str) -> Span | None:
        return self.actions.get(name)

    def subject_span(self, subject: str) -> Span | None:
        for part in subject.split("|"):
            part = part.strip()
            for table in (self.actions, self.phases, self.variables):
                if part in table:
                    return table[part]
            base = part.split("[")[0]
            if base in self.variables:
                return self.variables[base]
        return None


def _fmt(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def code_flow(trace: Trace, where: _Locator, message: str) -> dict[str, Any]:
    """A trace as one codeFlow: the initial state, then one location per step at its action's line."""
    said = trace.names          # the messages in the model's display names; the `state` keeps its slot names
    first = where.location(None, "initial state: " + ", ".join(f"{said.slot(k)}={_fmt(said.value(k, v))}"
                                                              for k, v in trace.initial))
    locations = [{"location": first, "executionOrder": 0,
                  "state": {k: {"text": _fmt(v)} for k, v in trace.initial}}]
    for i, step in enumerate(trace.steps, 1):
        changes = ", ".join(f"{said.slot(k)}: {_fmt(said.value(k, a))} -> {_fmt(said.value(k, b))}"
                            for k, (a, b) in step.changes)
        who = f" by player {step.player}" if step.player is not None else ""
        text = f"step {i}: {step.label}{who}" + (f" ({step.rule})" if step.rule else "") \
            + (f"; {changes}" if changes else "; nothing changes")
        item: dict[str, Any] = {"location": where.location(where.action_span(step.action), text),
                                "executionOrder": i,
                                "state": {k: {"text": _fmt(b)} for k, (_a, b) in step.changes}}
        if trace.loop_start is not None and i - 1 == trace.loop_start:
            item["kinds"] = ["loop-start"]
        locations.append(item)
    flow_message = message + (f" (a lasso: from step {trace.loop_start + 1} on, the loop repeats forever)"
                              if trace.loop_start is not None else "")
    return {"message": {"text": flow_message}, "threadFlows": [{"locations": locations}]}


def _variant(run: ModelRun) -> str:
    return f" [variant {run.model.variant}]" if run.model.variant else ""


def _claim_result(run: ModelRun, r: CheckResult, where: _Locator, rule_index: dict[str, int],
                  include_passing: bool) -> dict[str, Any] | None:
    p = r.property
    rule_id = f"claim/{p.kind}"
    expected = p.expected or "not VIOLATED"
    props = {"claim": p.id, "verdict": r.verdict.value, "expected": p.expected, "variant": run.model.variant,
             "engine": r.engine, "states": r.stats.states, "depth": r.depth, "model": run.model.name}
    result: dict[str, Any] = {"ruleId": rule_id, "ruleIndex": rule_index[rule_id]}
    undecided = r.verdict is Verdict.UNKNOWN and p.expected != Verdict.UNKNOWN.value
    if r.as_expected and r.verdict is Verdict.VIOLATED:
        result["level"] = "note"
        text = f"Known flaw: claim '{p.id}' is VIOLATED as documented{_variant(run)}: {p.statement}"
        result["suppressions"] = [{"kind": "inSource", "status": "accepted",
                                   "justification": shown_why(r) or "expected: VIOLATED in the property file"}]
    elif r.as_expected and not undecided:
        if not include_passing:
            return None
        result["kind"], result["level"] = "pass", "none"
        text = f"Claim '{p.id}' {r.verdict.value}{_variant(run)}: {p.statement}"
    elif r.verdict is Verdict.UNKNOWN:
        result["level"] = "warning"
        text = f"Claim '{p.id}' is UNKNOWN{_variant(run)}: {r.reason or 'a budget was hit'} ({p.statement})"
    else:
        result["level"] = "error"
        text = f"Claim '{p.id}' is {r.verdict.value}, expected {expected}{_variant(run)}: {p.statement}"
        if r.trace is not None:
            text += f" Counterexample of {len(r.trace)} steps."
        if shown_why(r):
            text += f" Expected VIOLATED because: {shown_why(r)}."
    if p.rule:
        text += f" Rule: {p.rule}."
    result["message"] = {"text": text}
    result["locations"] = [where.location(p.span)]
    if r.trace is not None:
        what = "counterexample" if r.verdict is Verdict.VIOLATED else "witness"
        result["codeFlows"] = [code_flow(r.trace, where, f"{what} for {p.id}")]
        last = r.trace.steps[-1].action if r.trace.steps else None
        if last and where.action_span(last) is not None:
            result["relatedLocations"] = [dict(where.location(where.action_span(last), f"last step: {last}"), id=1)]
    result["partialFingerprints"] = {"turnproofClaim/v1": f"{run.model.name}:{run.model.variant or ''}:{p.id}"}
    result["properties"] = {k: v for k, v in props.items() if v is not None}
    return result


def _finding_result(run: ModelRun, f: Finding, where: _Locator, rule_index: dict[str, int]) -> dict[str, Any]:
    rule_id = f"finding/{f.kind}"
    result: dict[str, Any] = {"ruleId": rule_id, "ruleIndex": rule_index[rule_id]}
    text = f"{f.message}{_variant(run)}" + (f" Rule: {'; '.join(f.rules)}." if f.rules else "")
    if f.acknowledged is not None:
        result["level"] = "note"
        result["suppressions"] = [{"kind": "inSource", "status": "accepted", "justification": f.acknowledged}]
    else:
        result["level"] = "warning"
    result["message"] = {"text": text}
    result["locations"] = [where.location(f.span or where.subject_span(f.subject))]
    if f.traces:
        result["codeFlows"] = [code_flow(t, where, f"{f.kind} {f.subject}: trace {i}")
                               for i, t in enumerate(f.traces, 1)]
    result["partialFingerprints"] = {"turnproofFinding/v1": f"{run.model.name}:{run.model.variant or ''}:{f.key}"}
    props = {"kind": f.kind, "subject": f.subject, "engine": f.engine, "scope": f.scope,
             "variant": run.model.variant, "model": run.model.name}
    result["properties"] = {k: v for k, v in props.items() if v not in (None, "")}
    return result


def _rules(runs: Sequence[ModelRun]) -> list[dict[str, Any]]:
    claim_kinds = dict(CLAIM_KINDS)
    finding_kinds = dict(FINDING_KINDS)
    for run in runs:
        for r in run.results:
            claim_kinds.setdefault(r.property.kind, f"A {r.property.kind} claim.")
        for f in run.findings:
            finding_kinds.setdefault(f.kind, f"A {f.kind} finding.")
    rules = []
    for kind, text in claim_kinds.items():
        rules.append({"id": f"claim/{kind}", "name": f"claim-{kind}",
                      "shortDescription": {"text": f"{kind} claim not as expected"},
                      "fullDescription": {"text": text},
                      "defaultConfiguration": {"level": "error"},
                      "properties": {"tags": ["claim", kind]}})
    if any(run.warnings for run in runs):
        rules.append({"id": WARNING_RULE, "name": "model-warning",
                      "shortDescription": {"text": "the model file loads, with a warning"},
                      "fullDescription": {"text": "A form the language reads with a warning: a deprecated "
                                                  "next: list, a next: entry read first match, a must action "
                                                  "that stays enabled (docs/LANGUAGE.md)."},
                      "defaultConfiguration": {"level": "warning"},
                      "properties": {"tags": ["model"]}})
    for kind, text in finding_kinds.items():
        rules.append({"id": f"finding/{kind}", "name": f"finding-{kind}",
                      "shortDescription": {"text": f"rules-consistency finding: {kind}"},
                      "fullDescription": {"text": text},
                      "defaultConfiguration": {"level": "warning"},
                      "properties": {"tags": ["finding", kind]}})
    return rules


def runs_sarif(runs: Sequence[ModelRun], root: str | None = None, include_passing: bool = False,
               baseline: Any = None) -> dict[str, Any]:
    """The SARIF 2.1.0 log of one check: one run, results for every variant (its traces bounded:
    `bounds`)."""
    bounded = bound_traces(runs)
    runs = bounded.runs
    rules = _rules(runs)
    rule_index = {rule["id"]: i for i, rule in enumerate(rules)}
    results: list[dict[str, Any]] = []
    artifacts: dict[str, None] = {}
    for run in runs:
        where = _Locator(run, root)
        artifacts[artifact_uri(run.path, root)] = None
        if run.properties_path:
            artifacts[artifact_uri(run.properties_path, root)] = None
        for r in run.results:
            item = _claim_result(run, r, where, rule_index, include_passing)
            if item is not None:
                if baseline is not None:
                    item["baselineState"] = baseline.claim_state(run.model.variant, r)
                results.append(item)
        for f in run.findings:
            item = _finding_result(run, f, where, rule_index)
            if baseline is not None:
                item["baselineState"] = baseline.finding_state(run.model.variant, f)
            results.append(item)
    if runs:
        where = _Locator(runs[0], root)
        for w in model_warnings(runs):
            text = w.message + (f" (hint: {w.hint})" if w.hint else "")
            results.append({"ruleId": WARNING_RULE, "ruleIndex": rule_index[WARNING_RULE], "level": "warning",
                            "message": {"text": text}, "locations": [where.location(w.span)]})
    driver = {"name": "turnproof", "version": __version__, "semanticVersion": __version__,
              "fullName": f"turnproof {__version__}",
              "shortDescription": {"text": "A model checker and rules-consistency verifier for the turn "
                                           "structures of card and tabletop games."},
              "rules": rules}
    notes = [{"level": "warning", "message": {"text": f"consistency analyses UNKNOWN{_variant(run)}: "
                                                      f"{run.analyses_unknown}"}}
             for run in runs if run.analyses_unknown]
    if bounded.omitted:
        notes.append({"level": "note", "message": {"text": bounded.note}})
    run_doc: dict[str, Any] = {
        "tool": {"driver": driver},
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notes}],
        "automationDetails": {"id": f"turnproof/{runs[0].model.name if runs else 'none'}/"},
        "artifacts": [{"location": {"uri": uri}, "roles": ["analysisTarget"]} for uri in artifacts],
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {"model": runs[0].model.name if runs else None,
                       "variants": [r.model.variant for r in runs if r.model.variant is not None],
                       "params": dict(runs[0].model.param_values) if runs else {},
                       "as_expected": all(r.as_expected for r in runs)},
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run_doc]}
