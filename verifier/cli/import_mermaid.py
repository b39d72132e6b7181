"""`turnproof import-mermaid FILE -o MODEL.yaml`: a model skeleton from Mermaid flowcharts."""
from __future__ import annotations

import argparse
import sys

from verifier.cli.common import EXIT_BUG_HELP, add_budget_options, write_output
from verifier.cli.config import Commands
from verifier.diagnostics import Diagnostic, UsageError


def register(sub: Commands) -> None:
    p = sub.add_parser(
        "import-mermaid", help="write a model skeleton from the Mermaid flowcharts of a Markdown file",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read the Mermaid graph/flowchart blocks of FILE (a Markdown file, or a bare Mermaid "
                    "file) and write a model skeleton: nodes become phases, arrows `next:` entries, decision "
                    "nodes choices between their arrows, subgraphs nested steps, and the labels rule "
                    "citations. A thick arrow (A ==> B), or an arrow to a node such as \"Next Player's "
                    "Turn\", ends the turn; a plain arrow back to an earlier phase is a loop within one turn. "
                    "The skeleton loads and checks as it is: `turnproof check` reports the "
                    "flowchart's dead ends (deadlocks) and, with the starter claims of --claims, its loops.",
        epilog="examples:\n"
               "  turnproof import-mermaid ../shared/rules/alpha-clash.md -o models/ac_skeleton.yaml\n"
               "  turnproof import-mermaid rules.md --block 1 -o turn.yaml --claims turn_claims.yaml\n"
               "  turnproof check turn.yaml -p turn_claims.yaml\n\n"
               "exit codes:\n  0  the skeleton was written\n  2  the file cannot be read or holds no "
               "flowchart (file:line, the offending text and a hint)\n" + EXIT_BUG_HELP)
    p.add_argument("file", metavar="FILE", help="Markdown file with ```mermaid blocks, or a .mmd file")
    p.add_argument("-o", "--output", metavar="MODEL.yaml", help="write the skeleton here (default: standard output)")
    p.add_argument("--claims", metavar="FILE",
                   help="also write starter claims (no dead end, every turn ends, each loop can be left)")
    p.add_argument("--block", type=int, action="append", metavar="N",
                   help="import only the N-th flowchart of FILE (1-based; repeatable; default: all, and a "
                        "variable `chart` picks one per turn)")
    p.add_argument("--name", metavar="NAME", help="the model's name (default: from the file name)")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary on standard error")
    add_budget_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from verifier.lang.mermaid_import import claims_yaml, import_mermaid, skeleton_yaml

    if args.name is not None and not args.name.replace("_", "a").isalnum():
        raise UsageError(Diagnostic(f"--name '{args.name}' is not a valid model name",
                                    hint="letters, digits and underscores"))
    sk = import_mermaid(args.file, args.name, args.block)
    write_output(skeleton_yaml(sk), args.output)
    if args.claims:
        write_output(claims_yaml(sk), args.claims)
    if not args.quiet:
        phases = sum(1 for _ in _all(sk.phases))
        lines = [f"{len(sk.charts)} flowchart(s), {phases} phases"
                 + (f" written to {args.output}" if args.output else "")]
        if sk.dead_ends:
            lines.append("dead ends: " + ", ".join(sk.dead_ends))
        for loop in sk.loops:
            lines.append("loop: " + " -> ".join(loop))
        if sk.unreached:
            lines.append("not connected: " + ", ".join(sk.unreached))
        if not sk.turn_end:
            lines.append("no arrow ends the turn, so a turn never ends: draw the end of the turn as a thick "
                         "arrow (Cleanup ==> Action) or an arrow to a node such as \"Next Player's Turn\"")
        sys.stderr.write("\n".join(lines) + "\n")
    return 0


def _all(phases):
    for ph in phases:
        yield ph
        yield from _all(ph.steps)
