"""Terminal rendering of check results: verdict tables, traces and findings (rich)."""
from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from verifier.diagnostics import printable
from verifier.report import trace_view
from verifier.report.explain import shown_why
from verifier.result import SCALE_EVERY, SCALE_PRINTED, SCALE_SCALED, CheckResult, Finding, ModelRun, Verdict
from verifier.trace import Trace

VERDICT_STYLE = {
    Verdict.PROVED: "bold green", Verdict.HOLDS: "green", Verdict.HOLDS_TO_DEPTH: "yellow",
    Verdict.UNKNOWN: "magenta", Verdict.VIOLATED: "bold red",
}


def render_runs(runs: Sequence[ModelRun], color: bool = False, width: int = 120) -> str:
    """The whole text report of one model's runs."""
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, width=width, highlight=False)
    for run in runs:
        _run(console, run)
    return buf.getvalue()


def _run(console: Console, run: ModelRun) -> None:
    m = run.model
    params = ", ".join(f"{k}={'*' if v is None else v}" for k, v in m.param_values)
    title = f"{m.name}" + (f" [variant {m.variant}]" if m.variant else "")
    console.print(plain(f"== {title}  ({run.path}; {params or 'no parameters'})", style="bold"))
    if run.results:
        console.print(results_table(run.results))
        for r in run.results:
            if r.trace is not None and (r.verdict is Verdict.VIOLATED or not r.as_expected):
                why = shown_why(r)
                console.print(plain(f"\n{r.property.id}: {r.verdict.value}" + (f" (expected: {why})" if why else ""),
                                    style=VERDICT_STYLE[r.verdict]))
                console.print(trace_table(r.trace))
            if r.verdict is Verdict.UNKNOWN and r.reason:
                console.print(plain(f"{r.property.id}: UNKNOWN because {r.reason}", style="magenta"))
    else:
        console.print("no claims (write properties/<model>.yaml or pass -p FILE)")
    if run.findings:
        console.print(findings_text(run.findings))
    if run.analyses_beyond:
        console.print(plain(f"consistency analyses: {run.analyses_beyond}"))
    if run.analyses_unknown:
        console.print(plain(f"consistency analyses UNKNOWN: {run.analyses_unknown}", style="magenta"))
    for v in run.vacuous:
        console.print(plain(f"warning: {v.message}", style="yellow"))
    console.print(f"{len(run.results)} claims, {sum(r.as_expected for r in run.results)} as expected, "
                  f"{len(run.new_findings)} unacknowledged findings, {run.seconds:.2f} s\n")


SHORT_SCALE = {SCALE_EVERY: "all values", SCALE_PRINTED: "printed", SCALE_SCALED: "scaled"}


def results_table(results: Sequence[CheckResult]) -> Table:
    table = Table(show_lines=False, header_style="bold")
    scaled = any(r.scale for r in results)
    for col in ("claim", "kind", "verdict", "expected", "engine") + (("at",) if scaled else ()) \
            + ("states", "depth", "s"):
        table.add_column(col, justify="right" if col in ("states", "depth", "s") else "left")
    for r in results:
        ok = "" if r.as_expected else "  ✗"
        table.add_row(plain(r.property.id), plain(r.property.kind),
                      Text(r.verdict.value + ok, style=VERDICT_STYLE[r.verdict]),
                      plain(r.property.expected or "-"), plain(r.engine + "".join(f" +{x}" for x in r.reductions)),
                      *((SHORT_SCALE.get(r.scale or "", "-"),) if scaled else ()),
                      "-" if r.stats.states is None else f"{r.stats.states:,}",
                      "-" if r.depth is None else str(r.depth), f"{r.stats.seconds:.2f}")
    return table


def trace_table(trace: Trace) -> Table:
    """A trace as a table (`report.trace_view`): the start compactly, then one row per step, or per
    run of repeated steps ("times n"), with what changed; a rule's text at its first step only."""
    table = Table(header_style="bold", show_lines=False)
    for col in ("#", "action", "player", "rule", "changes"):
        table.add_column(col)
    table.add_row("0", "(initial state)", "", "", plain(trace_view.start_text(trace)))
    for row in trace_view.rows(trace):
        table.add_row(row.steps, plain(("↻ " if row.loop_start else "") + row.move),
                      "" if row.player is None else str(row.player), plain(row.rule), plain(row.changes_text()))
    if trace.loop_start is not None:
        table.caption = f"the loop from step {trace.loop_start + 1} repeats forever"
    return table


def findings_text(findings: Sequence[Finding]) -> Table:
    """Findings grouped by the rule section they concern."""
    table = Table(title="Findings", header_style="bold", title_justify="left")
    for col in ("rule", "kind", "finding", "evidence"):
        table.add_column(col)
    for f in sorted(findings, key=lambda f: (f.rules[0] if f.rules else "~", f.kind, f.subject)):
        evidence = f"trace of {len(f.traces[0])} steps" if f.traces else ", ".join(f.evidence)[:60]
        note = f" (acknowledged: {f.acknowledged})" if f.acknowledged else ""
        table.add_row(plain(f.rules[0] if f.rules else "-"), plain(f.kind), plain(f.message + note), plain(evidence))
    return table


def plain(text: object, style: str = "") -> Text:
    """Text taken literally: rich markup in it (`[/]`, `[bold]`) is shown, not interpreted, and
    control characters (ESC...) are shown as placeholders."""
    return Text(printable(str(text)), style=style)


def _v(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
