"""Terminal rendering of check results: verdict tables, traces and findings (rich)."""
from __future__ import annotations

import io
import json
from collections.abc import Iterable, Sequence

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from verifier.diagnostics import printable
from verifier.files import claims_places
from verifier.report import trace_view
from verifier.report.bounds import bound_traces
from verifier.report.explain import shown_why
from verifier.result import SCALE_EVERY, SCALE_PRINTED, SCALE_SCALED, CheckResult, Finding, ModelRun, Verdict
from verifier.trace import Trace

VERDICT_STYLE = {
    Verdict.PROVED: "bold green", Verdict.HOLDS: "green", Verdict.HOLDS_TO_DEPTH: "yellow",
    Verdict.UNKNOWN: "magenta", Verdict.VIOLATED: "bold red",
}


TRACES = ("unexpected", "all", "none")      # --traces: which traces `check` prints


def render_runs(runs: Sequence[ModelRun], color: bool = False, width: int = 120, traces: str = "unexpected") -> str:
    """The text report of one model's runs (one per reading): one summary table of the claims
    grouped by their verdicts across readings, the findings counted, then what needs attention
    (a verdict not as expected with its trace, an UNKNOWN with its reason, a new finding).
    `traces`: "unexpected" (the traces of verdicts not as expected), "all" (besides, each
    reading's full table, every trace and every finding), "none". The traces are bounded
    (`bounds`): what is left out is said before the last line."""
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, width=width, highlight=False)
    if not runs:
        return ""
    bounded = bound_traces(runs)
    runs = bounded.runs
    _summary(console, runs)
    if traces == "all":
        for run in runs:
            _run(console, run, tally=len(runs) > 1)
    else:
        _attention(console, runs, with_traces=traces != "none")
    _notes(console, runs)
    if bounded.omitted:
        console.print(plain(bounded.note))
    results = [r for run in runs for r in run.results]
    claims = len(dict.fromkeys(r.property.id for r in results))
    readings = f" × {len(runs)} readings = {len(results)} verdicts" if len(runs) > 1 else ""
    new = len(_unique_findings(f for run in runs for f in run.new_findings))
    console.print(f"{claims} claims{readings}, {_tally(results)}, {new} unacknowledged "
                  f"finding{'s' * (new != 1)}, {sum(run.seconds for run in runs):.2f} s")
    return buf.getvalue()


def _left_open(r: CheckResult) -> bool:
    """A verdict that decided nothing for the gate (UNKNOWN, or a bound nobody accepted; exit 3),
    unless the claim itself expects UNKNOWN: never counted as expected, whatever the claim expects."""
    return r.is_open and not r.model_error and not (r.verdict is Verdict.UNKNOWN and r.as_expected
                                                     and r.property.expected is not None)


def _tally(results: Sequence[CheckResult]) -> str:
    """'N as expected' and, when some are, 'M left open': a verdict left open is never counted as expected."""
    open_ = sum(_left_open(r) for r in results)
    done = sum(r.as_expected and not _left_open(r) for r in results)
    return f"{done} as expected" + (f", {open_} left open" if open_ else "")


def _summary(console: Console, runs: Sequence[ModelRun]) -> None:
    m = runs[0].model
    params = ", ".join(f"{k}={'*' if v is None else v}" for k, v in m.param_values)
    variants = [run.model.variant for run in runs if run.model.variant]
    console.print(plain(f"== {m.name}  ({runs[0].path}; {params or 'no parameters'})", style="bold"))
    if variants:
        console.print(plain(f"{'readings' if len(variants) > 1 else 'reading'}: {', '.join(variants)}"))
    results = [r for run in runs for r in run.results]
    if not results:
        given = runs[0].properties_path
        console.print(plain(f"no claims in {given}" if given else
                            f"no claims: none at {' or '.join(map(str, claims_places(runs[0].path)))} (properties/ "
                            "beside the model's folder, or in it); write them there, or pass -p FILE"))
    else:
        console.print(claims_summary(runs))
    findings = _unique_findings(f for run in runs for f in run.findings)
    if findings:
        kinds: dict[str, int] = {}
        for f in findings:
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
        new = sum(1 for f in findings if f.acknowledged is None)
        console.print(plain(f"findings: {len(findings)} ({new} new, {len(findings) - new} acknowledged): "
                            + ", ".join(f"{n} {k}" for k, n in kinds.items())))
    else:
        console.print("findings: none")


def claims_summary(runs: Sequence[ModelRun]) -> Table:
    """The claims grouped by their verdicts across the readings: one row per group, the groups
    that need attention first (not as expected, then left open)."""
    multi = len(runs) > 1
    by_claim: dict[str, list[CheckResult]] = {}
    for run in runs:
        for r in run.results:
            by_claim.setdefault(r.property.id, []).append(r)
    groups: dict[tuple[int, str, str], list[str]] = {}
    for cid, results in by_claim.items():
        verdicts: dict[str, list[str]] = {}
        for r in results:
            verdicts.setdefault(r.verdict.value, []).append(r.variant or "")
        most = max(verdicts, key=lambda v: len(verdicts[v]))
        label = most if len(verdicts) == 1 else most + " (" + "; ".join(
            f"{v} in {', '.join(where)}" for v, where in verdicts.items() if v != most) + ")"
        wrong = [r.variant or "" for r in results if not r.as_expected and not _left_open(r)]
        if any(r.model_error for r in results):
            rank, status = 0, "model error"
        elif wrong:
            rank, status = 0, "NO" + (f" ({', '.join(wrong)})" if multi and len(wrong) < len(results) else "")
        elif any(_left_open(r) for r in results):
            rank, status = 1, "left open"
        else:
            rank, status = 2, "yes"
        groups.setdefault((rank, label, status), []).append(cid)
    table = Table(header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for col in ("verdict" + (" (the exceptions by reading)" if multi else ""), "as expected", "claims", "which"):
        table.add_column(col, justify="right" if col == "claims" else "left")
    order = {v.value: k for k, v in enumerate(Verdict)}
    for (rank, label, status), cids in sorted(groups.items(), key=lambda g: (g[0][0], order.get(g[0][1].split()[0], 9),
                                                                              g[0][1])):
        style = "bold red" if rank == 0 else "magenta" if rank == 1 else ""
        which = ", ".join(cids) if rank == 0 else _first(cids, 45)
        table.add_row(Text(label, style=VERDICT_STYLE.get(Verdict(label.split()[0]), "")) if label.split()[0] in order
                      else plain(label), plain(status, style), str(len(cids)), plain(which))
    return table


def _first(items: Sequence[str], width: int) -> str:
    """As many of `items` as fit in `width` characters, then how many more."""
    shown: list[str] = []
    for k, item in enumerate(items):
        rest = len(items) - k - 1
        if shown and len(", ".join([*shown, item])) + (len(f" and {rest} more") if rest else 0) > width:
            return ", ".join(shown) + f" and {len(items) - k} more"
        shown.append(item)
    return ", ".join(shown)


SHARED_REASON = 3      # more verdicts left open for one reason are one line


def _attention(console: Console, runs: Sequence[ModelRun], with_traces: bool) -> None:
    """The verdicts not as expected (with their traces), the ones left open (with the reason: one
    line for the verdicts a same reason left open, so that a cut run does not list every claim),
    and the new findings."""
    left_open: dict[str, list[str]] = {}
    for run in runs:
        where = f" [{run.model.variant}]" if run.model.variant and len(runs) > 1 else ""
        for r in run.results:
            if r.as_expected and r.verdict is not Verdict.UNKNOWN:
                continue
            if r.model_error:                 # not a budget: the model fails where the trace ends
                console.print(plain(f"\n{r.property.id}{where}: {r.reason}", style="bold red"))
                if with_traces and r.trace is not None:
                    console.print(trace_table(r.trace))
                continue
            if r.verdict is Verdict.UNKNOWN:
                if not r.as_expected or r.property.expected is None:
                    left_open.setdefault(r.reason or "it was left open", []).append(f"{r.property.id}{where}")
                continue
            expected = r.property.expected or "not VIOLATED"
            console.print(plain(f"\n{r.property.id}{where}: {r.verdict.value}, expected {expected}"
                                + (f" ({r.reason})" if r.reason else ""), style=VERDICT_STYLE[r.verdict]))
            if with_traces and r.trace is not None:
                console.print(trace_table(r.trace))
    for reason, which in left_open.items():
        if len(which) <= SHARED_REASON:
            for one in which:
                console.print(plain(f"{one}: UNKNOWN because {reason}", style="magenta"))
        else:
            claims = list(dict.fromkeys(one.split(" [")[0] for one in which))
            console.print(plain(f"{len(which)} verdicts UNKNOWN because {reason}: {_first(claims, 60)} "
                                "(--traces all lists each)", style="magenta"))
    new = _unique_findings(f for run in runs for f in run.new_findings)
    if new:
        console.print(findings_text(new, title="New findings (not acknowledged)"))
        console.print(plain(acknowledge_hint(new)))


def _unique_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings as a reader counts them: one per kind, subject and message, whichever readings show it."""
    return list({(f.kind, f.subject, f.message): f for f in findings}.values())


def _notes(console: Console, runs: Sequence[ModelRun]) -> None:
    """The analyses' notes and the vacuity warnings, each once however many readings share it."""
    lines: dict[tuple[str, str], None] = {}
    for run in runs:
        if run.analyses_beyond:
            lines[(f"consistency analyses: {run.analyses_beyond}", "")] = None
        if run.analyses_unknown:
            lines[(f"consistency analyses UNKNOWN: {run.analyses_unknown}", "magenta")] = None
        for v in run.vacuous:
            lines[(f"warning: {v.message}", "yellow")] = None
    for text, style in lines:
        console.print(plain(text, style=style))


def _run(console: Console, run: ModelRun, tally: bool) -> None:
    """One reading in full (--traces all): its table, every trace, every finding, and with `tally` its own
    count line (a single reading's would repeat the last line)."""
    m = run.model
    title = f"{m.name}" + (f" [variant {m.variant}]" if m.variant else "")
    console.print(plain(f"\n== {title}", style="bold"))
    if run.results:
        console.print(results_table(run.results))
        for r in run.results:
            if r.trace is not None:
                why = shown_why(r)
                console.print(plain(f"\n{r.property.id}: {r.verdict.value}" + (f" (expected: {why})" if why else ""),
                                    style=VERDICT_STYLE[r.verdict]))
                console.print(trace_table(r.trace))
            if r.verdict is Verdict.UNKNOWN and r.reason:
                console.print(plain(f"{r.property.id}: UNKNOWN because {r.reason}", style="magenta"))
    if run.findings:
        console.print(findings_text(run.findings))
    if tally:
        console.print(f"{len(run.results)} claims, {_tally(run.results)}, "
                      f"{len(run.new_findings)} unacknowledged findings, {run.seconds:.2f} s")


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


def findings_text(findings: Sequence[Finding], title: str = "Findings") -> Table:
    """Findings grouped by the rule section they concern."""
    table = Table(title=title, header_style="bold", title_justify="left")
    for col in ("rule", "kind", "finding", "evidence"):
        table.add_column(col)
    for f in sorted(findings, key=lambda f: (f.rules[0] if f.rules else "~", f.kind, f.subject)):
        evidence = f"trace of {len(f.traces[0])} step{'s' * (len(f.traces[0]) != 1)}" if f.traces else ", ".join(f.evidence)[:60]
        note = f" (acknowledged: {f.acknowledged})" if f.acknowledged else ""
        table.add_row(plain(f.rules[0] if f.rules else "-"), plain(f.kind), plain(f.message + note), plain(evidence))
    return table


def acknowledge_hint(findings: Sequence[Finding], most: int = 8) -> str:
    """How to acknowledge the new findings the rules mean: the `acknowledge:` entries to paste into
    the model, one per kind and subject, a pair `a|b` once in either order (at most `most`, then how
    many more), or ''."""
    pairs: dict[tuple[str, frozenset[str]], tuple[str, str]] = {}     # a|b and b|a: one entry covers both
    for f in findings:
        if f.acknowledged is None:
            pairs.setdefault((f.kind, frozenset(f.subject.split("|"))), (f.kind, f.subject))
    entries = list(pairs.values())
    if not entries:
        return ""
    lines = ["to acknowledge findings the rules mean, give each a reason in the model "
             "(docs/ANALYSES.md, \"Acknowledging a finding\"):", "acknowledge:"]
    lines += [f"  - {{kind: {kind}, subject: {json.dumps(subject)}, reason: \"...\"}}" for kind, subject in entries[:most]]
    if len(entries) > most:
        lines.append(f"  # and {len(entries) - most} more")
    return "\n".join(lines)


def plain(text: object, style: str = "") -> Text:
    """Text taken literally: rich markup in it (`[/]`, `[bold]`) is shown, not interpreted, and
    control characters (ESC...) are shown as placeholders."""
    return Text(printable(str(text)), style=style)


def _v(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
