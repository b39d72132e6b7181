"""`turnproof mutate MODEL`: which single-point rule changes the model's claims notice."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from verifier.cli.common import (
    EXIT_BUG_HELP,
    EXIT_OK,
    EXIT_UNKNOWN,
    StatusLine,
    add_model_options,
    add_output_options,
    model_params,
    run_options,
    write_output,
)
from verifier.cli.config import Commands
from verifier.diagnostics import Diagnostic, UsageError

if TYPE_CHECKING:
    from verifier.mutation.results import Outcome

FORMATS = ("text", "json")

EXIT_HELP = """exit codes:
  0  every mutant checked was decided (killed, survived, equivalent or invalid)
  2  model, property or usage error (file:line:col, the offending text and a hint)
  3  a budget (--timeout, --max-states) left some mutants undecided (UNKNOWN)
""" + EXIT_BUG_HELP


def register(sub: Commands) -> None:
    p = sub.add_parser(
        "mutate", help="mutation analysis: which rule changes would the claims notice?",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Make every single-point mutant of MODEL's rules (a comparison changed, an "
                    "integer literal or a literal index plus or minus one, a condition, an effect or a "
                    "next: entry left out, must and may swapped, a phase made optional or mandatory, two "
                    "adjacent phases swapped, an action removed, a rule number (a parameter or a constant of "
                    "parameters) plus or minus one at one of its uses; in the actions, the phases' on_enter, "
                    "exit_when and next:/next_any:, and turn_end, round_end and on_turn_start; and the rule "
                    "moves: an action moved to a neighbouring phase, an initial value, a reset or a choose: "
                    "range changed, two next: targets exchanged), check "
                    "each against the model's own claims and consistency findings with the model's "
                    "parameters, and report the kill score and the surviving mutants "
                    "with the rule they touch: the rule changes no claim notices, i.e. the claims the "
                    "rulebook still needs. A mutant is killed when a claim's verdict (VIOLATED versus "
                    "HOLDS/PROVED) or the set of findings differs from the original's; invalid when it is "
                    "not a well-formed model; equivalent when its reachable states and labelled transitions "
                    "are the original's (checked by explicit search, not guessed). "
                    "Kill score = killed / (killed + survived). One reading is mutated: --variant, else the "
                    "model's first. On a concrete model --engine auto means explicit search for the original and "
                    "every mutant (exact at these values). A mutant's search stops at ten times the original's states "
                    "(at least 100,000; --max-states sets it): such a mutant is UNKNOWN.",
        epilog="examples:\n"
               "  turnproof mutate models/aeons_end.yaml\n"
               "  turnproof mutate models/alice.yaml --variant refine_all --param TURNS=2 --max-mutants 50\n"
               "  turnproof mutate models/wtactics.yaml --format json -o out/wtactics.mutants.json\n"
               "  turnproof mutate models/shadow_era.yaml --timeout 600 --all\n"
               "  turnproof mutate models/aeons_end.yaml --only m12,m40   # re-check survivors after adding claims\n"
               "  turnproof mutate models/alpha_clash.yaml --journal out/ac.journal   # resumable after a stop\n\n"
               + EXIT_HELP)
    p.add_argument("model", help="a model file (YAML, see docs/LANGUAGE.md)")
    p.add_argument("-p", "--properties", metavar="FILE", help="property file (default: properties/<model>.yaml)")
    p.add_argument("--no-consistency", action="store_true",
                   help="kill mutants by the claims alone, without the consistency analyses (faster)")
    add_model_options(p)
    add_output_options(p, FORMATS)
    p.add_argument("--max-mutants", type=int, metavar="N",
                   help="check only N mutants, spread evenly over all of them (a quick estimate)")
    p.add_argument("--only", metavar="IDS",
                   help="check only these mutants, e.g. m3,m17 (ids of an earlier run; after adding claims, "
                        "re-checking the survivors is enough: a killed mutant stays killed)")
    p.add_argument("--jobs", "-j", type=int, metavar="N",
                   help="check N mutants at once, each in a forked worker (default: one per free CPU; "
                        "1 checks them one after the other in this process)")
    p.add_argument("--journal", metavar="FILE",
                   help="append each decided mutant to FILE (JSON lines) as it is decided; run the same command "
                        "again after an interruption and only the mutants not yet in FILE are checked (a journal "
                        "of another model, claim file, reading or parameters is refused)")
    p.add_argument("--all", action="store_true", help="list every mutant in the text output, not only survivors")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from verifier.mutation.analysis import mutate
    from verifier.report.mutation import mutation_json, render_mutation

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(Diagnostic(f"--jobs {args.jobs}: need at least 1",
                                    hint="leave it out for one worker per free CPU"))
    if args.max_mutants is not None and args.max_mutants < 1:
        raise UsageError(Diagnostic(f"--max-mutants {args.max_mutants}: need at least 1",
                                    hint="leave it out to check every mutant"))
    bar = _Bar(args.quiet)
    try:
        only = None if args.only is None else frozenset(x.strip() for x in args.only.split(",") if x.strip())
        options = run_options(args, consistency=not args.no_consistency)
        options = replace(options, params=model_params(args.model, options.params, options.variant, options.printed))
        report = mutate(args.model, options, args.max_mutants, bar, only, args.jobs, args.journal)
    finally:
        bar.done()
    if args.format == "json":
        text = json.dumps(mutation_json(report), indent=2) + "\n"
    else:
        text = render_mutation(report, color=args.output is None and sys.stdout.isatty(), all_mutants=args.all)
    write_output(text, args.output)
    return EXIT_UNKNOWN if report.count("unknown") else EXIT_OK


class _Bar(StatusLine):
    """Mutants done, killed, survived."""

    CLEAR_WIDTH = 100

    def __init__(self, quiet: bool):
        super().__init__(quiet)
        self.tally: dict[str, int] = {}

    def __call__(self, outcome: Outcome, done: int, total: int) -> None:
        self.tally[outcome.status] = self.tally.get(outcome.status, 0) + 1
        width = 30
        filled = width * done // max(total, 1)
        counts = "  ".join(f"{k} {v}" for k, v in sorted(self.tally.items()))
        self.show(f"  [{'#' * filled}{'.' * (width - filled)}] {done}/{total}  {counts}   ")
