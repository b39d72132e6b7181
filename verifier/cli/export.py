"""`turnproof export MODEL --to mermaid|dot|json`: a model's turn structure for wikis and docs."""
from __future__ import annotations

import argparse
import json

from verifier.cli.common import EXIT_BUG_HELP, add_budget_options, model_params, parse_params, write_output
from verifier.cli.config import Commands
from verifier.diagnostics import Diagnostic, UsageError

TARGETS = ("mermaid", "dot", "json")


def register(sub: Commands) -> None:
    p = sub.add_parser(
        "export", help="export a model's turn structure as Mermaid, DOT or JSON",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write MODEL's phase diagram as a Mermaid flowchart (for wikis and Markdown: each arrow "
                    "labelled with its condition, `when: ...`, each action listed in the phases its `phase:` or "
                    "its guard allows; `turnproof import-mermaid` reads it back), as Graphviz DOT (the diagram of the "
                    "reports; --graph states for the explored state graph), or its whole structure as JSON "
                    "(phases, steps, ways between them, actions and variables with their rule citations).",
        epilog="examples:\n"
               "  turnproof export models/alice.yaml --to mermaid\n"
               "  turnproof export models/wtactics.yaml --to dot -o wtactics.dot\n"
               "  turnproof export models/wtactics.yaml --to dot --graph states --param DRAW_PILE=0\n"
               "  turnproof export models/shadow_era.yaml --to json --variant literal\n\n"
               "exit codes:\n  0  written\n  2  model or usage error (file:line:col, the offending text "
               "and a hint)\n" + EXIT_BUG_HELP)
    p.add_argument("model", metavar="MODEL", help="a model file (YAML, see docs/LANGUAGE.md)")
    p.add_argument("--to", choices=TARGETS, required=True, help="the format to write")
    p.add_argument("--graph", choices=("phases", "states"), default="phases",
                   help="dot only: the phase diagram (default) or the explored state graph")
    p.add_argument("--graph-limit", type=int, default=None, metavar="N",
                   help="dot --graph states: draw every state up to N states (default 150), else group by phase")
    p.add_argument("--max-states", type=int, default=300_000, metavar="N",
                   help="dot --graph states: explore at most N states (default 300000)")
    p.add_argument("--param", "-D", action="append", default=[], metavar="NAME=VALUE",
                   help="override a parameter (repeatable)")
    p.add_argument("--variant", metavar="NAME", help="the reading to export (default: the first declared)")
    p.add_argument("--direction", choices=("TD", "LR"), default="TD", help="mermaid: layout direction")
    p.add_argument("--output", "-o", metavar="FILE", help="write to FILE (atomically) instead of standard output")
    add_budget_options(p)
    p.add_argument("--quiet", "-q", action="store_true",
                   help="accepted as by every command (export shows no progress and prints only the export)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from verifier.lang import load_model
    from verifier.report import diagrams
    from verifier.stategraph import explore_graph

    if args.graph == "states" and args.to != "dot":
        raise UsageError(Diagnostic("--graph states is only available with --to dot",
                                    hint="the state graph is too large for Mermaid; use --to dot"))
    model = load_model(args.model, model_params(args.model, parse_params(args.param), args.variant, False),
                       args.variant)
    if args.to == "mermaid":
        from verifier.report.mermaid import phase_mermaid
        text = phase_mermaid(model, args.direction)
    elif args.to == "json":
        from verifier.report.model_json import model_json
        text = json.dumps(model_json(model), indent=2, ensure_ascii=False) + "\n"
    elif args.graph == "states":
        if not model.is_concrete:
            raise UsageError(Diagnostic("the state graph needs every parameter fixed",
                                        hint="give a value with --param NAME=VALUE"))
        limit = diagrams.WHOLE_GRAPH_LIMIT if args.graph_limit is None else args.graph_limit
        sg = explore_graph(model, max_states=args.max_states, label_limit=limit)
        text = diagrams.state_dot(sg, limit, name=f"{model.name} states")
    else:
        text = diagrams.phase_dot(model, name=f"{model.name} phases")
    write_output(text, args.output)
    return 0
