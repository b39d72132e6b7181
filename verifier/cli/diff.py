"""`turnproof diff OLD NEW`: which verdicts, findings and reachable behaviours a rule change altered."""
from __future__ import annotations

import argparse
import json
import textwrap

from verifier.cli.common import (
    EXIT_BUG_HELP,
    Progress,
    accept_bounded,
    add_gate_options,
    add_model_options,
    add_output_options,
    run_options,
    write_output,
)
from verifier.cli.config import Commands
from verifier.diagnostics import Diagnostic, UsageError, printable

FORMATS = ("text", "json", "markdown")

EXIT_HELP = """exit codes:
  0  nothing changed: same verdicts, same findings, same reachable behaviour
  1  something changed (listed in the output): a decided verdict, a finding, a behaviour, or what
     the gate counts (a claim's expected:, an acknowledgement, [tool.turnproof] at a git revision)
  2  model, property or usage error (a bad file, an unknown git revision...), or a model error
     a version meets in a reachable state
  3  nothing else changed, but a version left a claim open (UNKNOWN, or HOLDS_TO_DEPTH not
     accepted) or a budget stopped the exploration of a version
""" + EXIT_BUG_HELP


def register(sub: Commands) -> None:
    p = sub.add_parser(
        "diff", help="compare two versions of a model: verdicts, findings and reachable behaviours",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "Check OLD and NEW (two files, or git:REV:path for a file at a git revision) and report which "
            "claims changed verdict, which consistency findings appeared or disappeared, and which reachable "
            "states (projected on the state variables both versions share) one version allows and the other "
            "does not. Without -p, each version uses its own properties/<model>.yaml (for git:REV:path, the one "
            "at that revision).", 78) + "\n\n" + textwrap.fill(
            "The text and Markdown summarise: one line per changed claim, finding and behaviour, then only the "
            "shortest trace of each change (each trace once, repeated steps folded). --full lists every "
            "departure (up to --limit) with the state it reaches and its trace; JSON always holds everything.",
            78),
        epilog="examples:\n"
               "  turnproof diff git:HEAD:models/wtactics.yaml models/wtactics.yaml\n"
               "  turnproof diff old.yaml new.yaml -p properties/wtactics.yaml --format markdown\n"
               "  turnproof diff git:origin/main:models/alice.yaml models/alice.yaml -f json -o diff.json\n\n"
               + EXIT_HELP)
    p.add_argument("old", metavar="OLD", help="the earlier version: a model file or git:REV:path")
    p.add_argument("new", metavar="NEW", help="the later version: a model file or git:REV:path")
    p.add_argument("-p", "--properties", metavar="PROPS",
                   help="one property file for both versions (default: each version's properties/<model>.yaml)")
    p.add_argument("--no-properties", action="store_true", help="compare no claims")
    p.add_argument("--no-consistency", action="store_true", help="do not compare consistency findings")
    p.add_argument("--no-behaviours", action="store_true", help="do not compare reachable states")
    p.add_argument("--full", action="store_true",
                   help="list every departure (up to --limit) with its state and trace, not only the shortest")
    p.add_argument("--limit", type=int, default=10, metavar="N",
                   help="with --full or -f json: list at most N departures each way (default 10; the counts "
                        "cover all)")
    add_model_options(p)
    add_gate_options(p)
    add_output_options(p, FORMATS)
    p.set_defaults(handler=run, imports=("verifier.diffing.compare", "verifier.report.diff"))


def run(args: argparse.Namespace) -> int:
    from verifier.diffing.compare import diff_versions
    from verifier.report.diff import diff_json, render_markdown, render_text

    if args.limit < 0:
        raise UsageError(Diagnostic("--limit must be 0 or more"))
    progress = Progress(args.quiet, args.timeout)
    try:
        diff = diff_versions(args.old, args.new, run_options(args, consistency=not args.no_consistency),
                             limit=args.limit, behaviours=not args.no_behaviours, progress=progress,
                             accept_bounded=accept_bounded(args))
    finally:
        progress.done()
    if args.format == "json":
        text = json.dumps(diff_json(diff), indent=2) + "\n"
    elif args.format == "markdown":
        text = render_markdown(diff, full=args.full)
    else:
        text = printable(render_text(diff, full=args.full))
    write_output(text, args.output)
    return diff.exit_code
