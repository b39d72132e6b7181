"""Mutation analysis results as text (a summary, then the survivors by rule) and as JSON."""
from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.table import Table

from verifier.mutation.results import STATUSES, MutationReport, Outcome
from verifier.report.text import plain


def render_mutation(report: MutationReport, color: bool = False, width: int = 120, all_mutants: bool = False) -> str:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, width=width, highlight=False)
    params = ", ".join(f"{k}={'*' if v is None else v}" for k, v in report.params)
    reading = f" [variant {report.variant}]" if report.variant else ""
    console.print(plain(f"== {report.model}{reading}  ({report.path}; {params or 'no parameters'})", style="bold"))
    checked = len(report.outcomes)
    console.print(plain(f"{report.generated} mutants made, {checked} checked against {report.claims} claims "
                       f"({report.properties_path or 'no property file'}) and the consistency findings "
                       f"in {report.seconds:.1f} s"))
    console.print(_counts_table(report))
    console.print(plain(f"kill score: {score_words(report)}", style="bold"))
    console.print(plain(f"equivalence: {report.equivalence_method}", style="dim"))
    shown = report.outcomes if all_mutants else report.survivors
    if shown:
        console.print(plain("\nall mutants:" if all_mutants else
                           "\nsurvivors (rule changes no claim or finding notices):", style="bold"))
        console.print(_outcomes_table(shown, all_mutants))
    for status, title in (("invalid", "invalid mutants (not a well-formed model)"),
                          ("unknown", "undecided (a budget cut them short)")):
        items = [o for o in report.outcomes if o.status == status]
        if items and not all_mutants:
            console.print(plain(f"\n{title}: {len(items)}", style="bold"))
            for o in items[:10]:
                console.print(plain(f"  {o.mutant.id} {o.mutant.description}: {o.reason}"))
            if len(items) > 10:
                console.print(plain(f"  ... and {len(items) - 10} more (--format json lists them all)"))
    return buf.getvalue()


def score_words(report: MutationReport) -> str:
    if report.score is None:
        return "- (no decided non-equivalent mutant)"
    killed, survived = report.count("killed"), report.count("survived")
    return f"{100 * report.score:.1f} % ({killed} killed of {killed + survived} valid, non-equivalent, decided mutants)"


def _counts_table(report: MutationReport) -> Table:
    table = Table(show_header=True, header_style="bold")
    for status in STATUSES:
        table.add_column(status, justify="right")
    table.add_row(*(str(report.count(s)) for s in STATUSES))
    return table


def _outcomes_table(outcomes: tuple[Outcome, ...], with_status: bool) -> Table:
    table = Table(show_header=True, header_style="bold")
    table.add_column("id")
    if with_status:
        table.add_column("status")
    for name in ("rule", "change", "line:col"):
        table.add_column(name)
    for o in sorted(outcomes, key=lambda o: (o.mutant.rule, o.mutant.number)):
        m = o.mutant
        row = [plain(m.id)] + ([plain(o.status)] if with_status else []) + \
            [plain(m.rule or "-"), plain(m.description), plain(f"{m.span.line}:{m.span.col}" if m.span else "-")]
        table.add_row(*row)
    return table


def mutation_json(report: MutationReport) -> dict[str, Any]:
    return {
        "model": report.model, "path": report.path, "variant": report.variant,
        "params": dict(report.params), "properties": report.properties_path, "claims": report.claims,
        "generated": report.generated, "checked": len(report.outcomes),
        "counts": report.counts, "score": report.score,
        "equivalence_method": report.equivalence_method, "seconds": round(report.seconds, 3),
        "mutants": [_outcome_json(o) for o in report.outcomes],
    }


def _outcome_json(o: Outcome) -> dict[str, Any]:
    m = o.mutant
    return {"id": m.id, "operator": m.operator, "subject": m.subject, "description": m.description,
            "rule": m.rule or None,
            "where": None if m.span is None else {"file": m.span.file, "line": m.span.line, "col": m.span.col},
            "define": None if not m.define else {"name": m.define, "file": m.define_at.file if m.define_at else None,
                                                 "line": m.define_at.line if m.define_at else None},
            "status": o.status, "reason": o.reason, "seconds": round(o.seconds, 3)}
