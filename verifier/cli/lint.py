"""`turnproof lint MODEL`: only the rules-consistency analyses, no claims."""
from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from verifier.cli.common import (
    EXIT_BUG_HELP,
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNKNOWN,
    Progress,
    add_model_options,
    add_output_options,
    budget_note,
    run_backstop,
    run_options,
    warnings_note,
    write_output,
)
from verifier.cli.config import Commands
from verifier.diagnostics import TurnproofError

if TYPE_CHECKING:                  # imported where they run (a fast --help)
    from verifier.result import Finding, ModelRun
    from verifier.runner import RunOptions

FORMATS = ("text", "json", "junit", "sarif")

EXIT_HELP = """exit codes:
  0  no finding, or every finding is acknowledged in the model's `acknowledge` list
  1  a new (unacknowledged) finding
  2  model or usage error (file:line:col, the offending text and a hint), or a model error a state reaches
  3  a budget (--max-states, --timeout, --max-memory) cut an analysis short (UNKNOWN)
""" + EXIT_BUG_HELP


def register(sub: Commands) -> None:
    p = sub.add_parser(
        "lint", help="look for dead, stuck, silent, conflicting or ambiguous rules (no claims)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run the rules-consistency analyses on MODEL without any property file: rule "
                    "actions that never fire and phases never reached, states where play is stuck, "
                    "effects that leave a variable's range where the rules state no policy (gaps), "
                    "demands that a prohibition or another demand blocks (conflicts), actions whose "
                    "order matters but is not fixed (order-dependence, checked with Z3), mandatory "
                    "choices nobody is said to make, and differences between interpretation variants. "
                    "Findings are grouped by rule section, each with its evidence. When the model has a "
                    "claim file (-p FILE, else properties/<model>.yaml beside the model's folder), lint "
                    "checks none of its claims but warns about "
                    "those that would hold vacuously: a trigger, scope opener or antecedent never reached "
                    "(a warning only: it never changes the exit code).",
        epilog="examples:\n"
               "  turnproof lint models/wtactics.yaml\n"
               "  turnproof lint models/alice.yaml --variant literal --param TURNS=4\n"
               "  turnproof lint models/aeons_end.yaml --format json -o out/aeons_end.lint.json\n"
               "  turnproof lint models/alice.yaml --format sarif -o lint.sarif     # code scanning: findings on "
               "their lines\n"
               "  turnproof lint models/alice.yaml --format junit -o lint.xml       # one testcase per finding\n"
               "  turnproof lint mygame.yaml -p mygame.claims.yaml                  # warn about its vacuous claims\n\n"
               + EXIT_HELP)
    p.add_argument("model", help="a model file (YAML, see docs/LANGUAGE.md)")
    p.add_argument("-p", "--properties", metavar="FILE",
                   help="claim file to warn about vacuous claims of (default: properties/<model>.yaml beside the "
                        "model's folder); lint checks none of them")
    add_model_options(p)
    add_output_options(p, FORMATS)
    p.add_argument("--traces", choices=("unexpected", "all", "none"), default="unexpected",
                   help="text output: the findings to print with their evidence and traces: unexpected (default: "
                        "the new, unacknowledged ones; an acknowledged one is a line), all, none (the evidence "
                        "without traces)")
    p.set_defaults(handler=run, imports=("verifier.runner", "verifier.analysis.vacuity", "verifier.report.text",
                                         "verifier.report.json_out", "verifier.report.junit", "verifier.report.sarif"))


def run(args: argparse.Namespace) -> int:
    from verifier.report.json_out import runs_json
    from verifier.report.junit import runs_junit
    from verifier.report.sarif import runs_sarif
    from verifier.runner import check_model

    progress = Progress(args.quiet, run_backstop(args))
    options = replace(run_options(args, consistency=True), use_properties=False)
    try:
        runs = check_model(args.model, options, progress)
        runs, note = with_vacuity(args.model, runs, options, args.properties)
    finally:
        progress.done()
    sys.stderr.write(warnings_note(runs))
    if args.format == "json":
        text = json.dumps(runs_json(runs), indent=2) + "\n"
    elif args.format == "junit":
        text = runs_junit(runs)
    elif args.format == "sarif":
        text = json.dumps(runs_sarif(runs), indent=2) + "\n"
    else:
        text = render_lint(runs, color=args.output is None and sys.stdout.isatty(), traces=args.traces) + note
    write_output(text, args.output)
    sys.stderr.write(budget_note(runs, args.timeout))
    if any(run.new_findings for run in runs):
        return EXIT_FAILED
    if any(run.model_errors for run in runs):
        return EXIT_ERROR                 # the model itself fails where the analyses stopped: not a budget
    return EXIT_UNKNOWN if any(run.analyses_unknown for run in runs) else EXIT_OK


def with_vacuity(path: str, runs: list[ModelRun], options: RunOptions,
                 given: str | None = None) -> tuple[list[ModelRun], str]:
    """The runs with the claims of the claim file (`given`, else the model's own) that hold vacuously
    (`analysis.vacuity`, one search per reading); and a line saying why none were looked at when the
    model's own file does not load (a file given with -p that does not load is an error, exit 2)."""
    from verifier.analysis.vacuity import vacuous_claims
    from verifier.lang import default_properties_path, load_properties

    props_path = given or default_properties_path(path)
    if props_path is None:
        return runs, ""
    out = []
    for run in runs:
        try:
            props = load_properties(props_path, run.model)
        except TurnproofError as err:
            if given:
                raise
            first = err.diagnostics[0].message if err.diagnostics else type(err).__name__
            return runs, f"vacuity not checked: {props_path} does not load ({first}); `turnproof check` says where\n"
        out.append(replace(run, vacuous=tuple(vacuous_claims(run.model, props, options.budget))))
    return out, ""


def render_lint(runs: Sequence[ModelRun], color: bool = False, width: int = 120, traces: str = "unexpected") -> str:
    """Findings grouped by rule section: the sentence, then its evidence. `traces`: "unexpected" (the
    new findings in full, an acknowledged one a line), "all" (every finding in full), "none" (every
    finding without its traces)."""
    from rich.console import Console

    from verifier.report.text import acknowledge_hint, findings_text, plain, trace_table

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, width=width, highlight=False)
    model = runs[0].model
    params = ", ".join(f"{k}={'*' if v is None else v}" for k, v in model.param_values)
    readings = [r.model.variant for r in runs if r.model.variant]
    console.print(plain(f"== {model.name}  ({runs[0].path}; {params or 'no parameters'}"
                        + (f"; readings: {', '.join(readings)}" if readings else "") + ")", style="bold"))
    findings = [(run, f) for run in runs for f in run.findings]
    for run in runs:
        if run.analyses_unknown:
            console.print(plain(f"UNKNOWN{f' [reading {run.model.variant}]' if run.model.variant else ''}: "
                                f"{run.analyses_unknown}", style="magenta"))
        for v in run.vacuous:
            reading = f" [reading {run.model.variant}]" if run.model.variant else ""
            console.print(plain(f"warning{reading}: {v.message}", style="yellow"))
    if not findings and any(run.analyses_unknown for run in runs):
        console.print("No consistency finding in the states explored; the rest is UNKNOWN.")
        return buf.getvalue()
    if not findings:
        console.print("No consistency findings: no dead rule, stuck state, silent rule, conflict, "
                      "order dependence or unspecified choice was found.")
        return buf.getvalue()
    shown = [f for _run, f in findings if traces != "unexpected" or f.acknowledged is None]
    if shown:
        console.print(findings_text(shown, title="Findings" if len(shown) == len(findings) else "New findings"))
    groups: dict[str, list[Finding]] = {}
    for _run, f in findings:
        groups.setdefault(_section(f), []).append(f)
    for section in sorted(groups, key=lambda s: (s == "-", s)):
        console.print(plain(f"\n{section}", style="bold underline"))
        for f in sorted(groups[section], key=lambda f: (f.kind, f.subject)):
            ack = f" (acknowledged: {f.acknowledged})" if f.acknowledged else ""
            reading = f" [reading {f.variant}]" if f.variant else ""
            if f.acknowledged and traces == "unexpected":
                console.print(plain(f"{f.kind} {f.subject}{reading}: acknowledged: {f.acknowledged}", style="dim"))
                continue
            style = "dim" if f.acknowledged else "bold"
            console.print(plain(f"{f.kind} {f.subject}{reading}: {f.message}{ack}", style=style))
            console.print(plain(f"  established by {f.engine}" + (f", {f.scope}" if f.scope else "")))
            scalars = {k: v for k, v in f.evidence.items() if isinstance(v, (str, int, float, bool))}
            if scalars:
                console.print(plain("  " + "; ".join(f"{k.replace('_', ' ')}: {_v(v)}" for k, v in scalars.items())))
            for k, trace in enumerate(f.traces if traces != "none" else (), 1):
                if len(f.traces) > 1:
                    console.print(f"  trace {k} of {len(f.traces)}:")
                console.print(trace_table(trace))
    new = sum(1 for _r, f in findings if f.acknowledged is None)
    more = " (--traces all shows the acknowledged ones in full)" if traces == "unexpected" and new < len(findings) else ""
    console.print(f"\n{len(findings)} finding{'s' * (len(findings) != 1)}, {new} unacknowledged{more}")
    if new:
        console.print(plain(acknowledge_hint([f for _r, f in findings])))
    return buf.getvalue()


def _section(f: Finding) -> str:
    """The rule section a finding concerns first ("Discard" of "Discard: excess cards go")."""
    return f.rules[0].split(":")[0].strip() if f.rules else "-"


def _v(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
