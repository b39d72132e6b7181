"""reports/FINDINGS.md: what the verifier found in each rulebook, with its evidence.

Per game: the rules broken (claims expected VIOLATED, each with its trace),
the readings that disagree (claims whose verdict differs between variants),
the consistency findings (dead rules, deadlocks, gaps, conflicts,
order-dependence, unspecified choices), and what was proved or shown to hold.
"""
from __future__ import annotations

from collections.abc import Sequence

from verifier.report import trace_view
from verifier.report.escaping import markdown_code, markdown_text
from verifier.report.explain import shown_why
from verifier.result import CheckResult, ModelRun, Verdict
from verifier.trace import Trace

_cell = markdown_text       # model text in a table cell or a sentence: escaped, one line


def trace_markdown(trace: Trace) -> list[str]:
    """The start compactly, then a row per step or run of repeated steps (`report.trace_view`)."""
    lines = ["| # | action | player | rule | changes |", "|---|---|---|---|---|",
             f"| 0 | (initial state) | | | {_cell(trace_view.start_text(trace))} |"]
    for row in trace_view.rows(trace):
        loop = "↻ " if row.loop_start else ""
        lines.append(f"| {row.steps} | {loop}{_cell(row.move)} | {'' if row.player is None else row.player} | "
                     f"{_cell(row.rule)} | {_cell(row.changes_text())} |")
    if trace.loop_start is not None:
        lines.append(f"\nFrom step {trace.loop_start + 1} on, the loop repeats forever.")
    return lines


def _where(r: CheckResult) -> str:
    params = ", ".join(f"{k}={'*' if v is None else v}" for k, v in r.params)
    variant = f"variant {r.variant}, " if r.variant else ""
    states = f", {r.stats.states:,} states" if r.stats.states else ""
    return f"{variant}{params or 'no parameters'}; {r.engine}{states}"


def game_section(runs: Sequence[ModelRun]) -> list[str]:
    model = runs[0].model
    out = [f"## {_cell(model.name)}", ""]
    if model.variants:
        out += ["Readings checked (interpretation variants):", ""]
        out += [f"- **{_cell(v.name)}**: {_cell(v.description)}" + (f" ({_cell(v.rule)})" if v.rule else "")
                for v in model.variants]
        out.append("")
    results = [r for run in runs for r in run.results]
    broken = [r for r in results if r.verdict is Verdict.VIOLATED and r.property.expected == "VIOLATED"]
    out += ["### Rules broken or left open (claims the rules violate)", ""]
    if not broken:
        out += ["None.", ""]
    for r in broken:
        out += [f"#### {_cell(r.property.id)} — {_cell(r.property.rule or 'rules')}", "",
                f"*Claim*: {_cell(r.property.statement)}  "]
        if shown_why(r):
            out.append(f"*Finding*: {_cell(shown_why(r))}  ")
        out += [f"*Evidence* ({_cell(_where(r))}):", ""]
        out += trace_markdown(r.trace) if r.trace else [_cell(r.reason or "exhaustive search: never reached")]
        out.append("")
    out += _variant_differences(runs)
    findings = [f for run in runs for f in run.findings]
    out += ["### Consistency findings", ""]
    cut = [run for run in runs if run.analyses_unknown]
    out += [f"**UNKNOWN**{_reading(run)}: {_cell(run.analyses_unknown)}  " for run in cut] + ([""] if cut else [])
    if not findings:
        out += ["None found in what was analysed." if cut else "None for these parameter values.", ""]
    for f in sorted(findings, key=lambda f: (f.kind, f.subject)):
        ack = f" *(acknowledged: {_cell(f.acknowledged)})*" if f.acknowledged else ""
        rules = "; ".join(f.rules) or "—"
        reading = f" \\[{_cell(f.variant)}\\]" if f.variant else ""
        out += [f"- **{_cell(f.kind)}** {markdown_code(f.subject, False)}{reading}: {_cell(f.message)}{ack}  ",
                f"  Rule: {_cell(rules)}. Evidence: " + _cell(f"trace of {len(f.traces[0])} steps "
                                                              f"({f.scope or f.engine})." if f.traces else
                                                              f"{f.engine} {f.scope}.")]
    out.append("")
    shown = [r for r in results if r.verdict in (Verdict.PROVED, Verdict.HOLDS)]
    out += ["### What was shown to hold", "",
            "PROVED holds for every parameter value; HOLDS in the complete state space of the stated values.", "",
            "| claim | rule | verdict | how |", "|---|---|---|---|"]
    out += [f"| {_cell(r.property.id)} | {_cell(r.property.rule or '')} | {r.verdict.value} | {_cell(_where(r))}"
            + (f"; {_cell(next(iter(r.evidence.values())))}" if r.verdict is Verdict.PROVED and r.evidence else "")
            + " |" for r in shown]
    out.append("")
    unknown = [r for r in results if r.verdict is Verdict.UNKNOWN]
    if unknown:
        out += ["### Left UNKNOWN", "", "| claim | rule | why |", "|---|---|---|"]
        out += [f"| {_cell(r.property.id)} | {_cell(r.property.rule or '')} | {_cell(r.reason)} |" for r in unknown]
        out.append("")
    return out


def _reading(run: ModelRun) -> str:
    return f" \\[{_cell(run.model.variant)}\\]" if run.model.variant else ""


def _variant_differences(runs: Sequence[ModelRun]) -> list[str]:
    if len(runs) < 2:
        return []
    by_claim: dict[str, dict[str, CheckResult]] = {}
    for run in runs:
        for r in run.results:
            by_claim.setdefault(r.property.id, {})[run.model.variant] = r
    rows = [(cid, per) for cid, per in by_claim.items() if len({r.verdict for r in per.values()}) > 1]
    out = ["### Where the readings disagree", ""]
    if not rows:
        return out + ["Every claim has the same verdict under every reading.", ""]
    variants = [run.model.variant for run in runs]
    out += ["| claim | " + " | ".join(_cell(v) for v in variants) + " |", "|---|" + "---|" * len(variants)]
    for cid, per in rows:
        verdicts = " | ".join(per[v].verdict.value if v in per else "-" for v in variants)
        out.append(f"| {_cell(cid)} | {verdicts} |")
    return out + [""]


def findings_markdown(games: Sequence[Sequence[ModelRun]]) -> str:
    out = ["# Findings", "",
           "Generated by `turnproof report` from the models in `models/` and the claims in `properties/`;",
           "do not edit by hand. Each finding names the rule it concerns and carries its evidence:",
           "a trace that replays on the model, a difference between readings, or a proof.", ""]
    for runs in games:
        out += game_section(runs)
    return "\n".join(out) + "\n"
