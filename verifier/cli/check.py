"""`turnproof check`: verify a model's claims and its rules' consistency."""
from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from verifier.cli.common import (
    EXIT_CODES_HELP,
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNKNOWN,
    Progress,
    accept_bounded,
    add_gate_options,
    add_model_options,
    add_output_options,
    budget_note,
    exit_code,
    gate_config,
    run_backstop,
    run_options,
    warnings_note,
    write_output,
)
from verifier.cli.config import Commands
from verifier.diagnostics import Diagnostic, UsageError

if TYPE_CHECKING:                  # imported where they run (a fast --help)
    from verifier.baseline import Outcome
    from verifier.result import ModelRun

FORMATS = ("text", "json", "junit", "sarif")


def register(sub: Commands) -> None:
    p = sub.add_parser(
        "check", help="verify a model's claims and look for inconsistent rules",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Explore every reachable state of MODEL, decide each claim of its property "
                    "file (properties/<model>.yaml unless -p is given), and report where the rules "
                    "are dead, stuck, silent or ambiguous.",
        epilog="examples:\n"
               "  turnproof check models/wtactics.yaml\n"
               "  turnproof check models/wtactics.yaml --param DRAW_PILE=10 --variant strict\n"
               "  turnproof check models/alice.yaml --format json -o out/alice.json\n"
               "  turnproof check models/alice.yaml --format sarif -o turnproof.sarif --baseline baselines/\n\n"
               + EXIT_CODES_HELP + "\n  with --baseline: 1 only on a decided verdict that differs from the baseline, a "
               "new finding\n  (acknowledged or not) or a changed option (engine, depths, budgets) or "
               "acknowledgement;\n  3 on a verdict left open (UNKNOWN, or HOLDS_TO_DEPTH not accepted)")
    p.add_argument("model", help="a model file (YAML, see docs/LANGUAGE.md)")
    p.add_argument("-p", "--properties", metavar="FILE", help="property file (default: properties/<model>.yaml)")
    p.add_argument("--no-properties", action="store_true", help="check no claims, only consistency")
    p.add_argument("--no-consistency", action="store_true", help="skip the rules-consistency analyses")
    add_model_options(p)
    add_gate_options(p)
    add_output_options(p, FORMATS)
    p.add_argument("--traces", choices=("unexpected", "all", "none"), default="unexpected",
                   help="text output: the traces to print after the summary table: unexpected (default: those of "
                        "verdicts not as expected), all (every trace, with each reading's full table and every "
                        "finding), none")
    p.add_argument("--baseline", metavar="FILE",
                   help="compare with recorded verdicts, findings and options (FILE, or DIR/<model>.json) and fail "
                        "only on changes: exit 1 on a changed verdict, a new finding or a changed option")
    p.add_argument("--update-baseline", action="store_true", help="(re)write the --baseline file from this run")
    p.add_argument("--no-baseline", action="store_true",
                   help="compare with no baseline, even one set by baseline = ... in [tool.turnproof]")
    p.set_defaults(handler=run, imports=("verifier.baseline", "verifier.runner", "verifier.report.text",
                                         "verifier.report.json_out", "verifier.report.junit", "verifier.report.sarif"))


def run(args: argparse.Namespace) -> int:
    from verifier import baseline
    from verifier.report.json_out import runs_json
    from verifier.report.junit import runs_junit
    from verifier.report.sarif import runs_sarif
    from verifier.report.text import render_runs
    from verifier.result import accepting_bounded
    from verifier.runner import check_model

    depth = accept_bounded(args)
    if args.no_baseline:
        args.baseline = None
    if args.update_baseline and not args.baseline:
        raise UsageError(Diagnostic("--update-baseline needs --baseline FILE", hint="e.g. --baseline baselines/"))
    if args.baseline:
        baseline.preflight(args.baseline, args.model, args.update_baseline)
    progress = Progress(args.quiet, run_backstop(args))
    try:
        runs = accepting_bounded(check_model(args.model, run_options(args, consistency=not args.no_consistency),
                                             progress), depth)
    finally:
        progress.done()
    sys.stderr.write(warnings_note(runs))
    gate = baseline.apply(runs, args.baseline, args.update_baseline, gate_config(args)) if args.baseline else None
    if args.format == "json":
        doc = runs_json(runs)
        if gate is not None:
            doc["baseline"] = gate.to_json()
        text = json.dumps(doc, indent=2) + "\n"
    elif args.format == "junit":
        text = runs_junit(runs, extra_out=gate.text() if gate else "")
    elif args.format == "sarif":
        text = json.dumps(runs_sarif(runs, baseline=gate.comparison if gate else None), indent=2) + "\n"
    else:
        text = render_runs(runs, color=args.output is None and sys.stdout.isatty(), traces=args.traces)
        if gate is not None:
            text += gate.text()
    write_output(text, args.output)
    if gate is not None and (args.format != "text" or args.output is not None):
        sys.stderr.write(gate.text())
    code = _exit(runs, gate)
    sys.stderr.write(budget_note(runs, args.timeout, code))
    return code


def _exit(runs: list[ModelRun], gate: Outcome | None) -> int:
    """The exit of a check of `runs`: `exit_code`, or with a baseline its `gate`'s."""
    if gate is None:
        return exit_code(runs)
    if gate.exit_code != EXIT_FAILED and any(run.model_errors for run in runs):
        return EXIT_ERROR                 # a model error is no verdict a baseline can record or vouch for
    if gate.exit_code == EXIT_OK and any(run.analyses_unknown for run in runs):
        return EXIT_UNKNOWN               # the gate cannot vouch for findings the analyses never reached
    return gate.exit_code
