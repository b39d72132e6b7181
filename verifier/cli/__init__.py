"""The `turnproof` command: subcommands are the modules of this package that define `register`."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from verifier import __version__
from verifier.cli.common import EXIT_CODES_HELP, EXIT_ERROR
from verifier.diagnostics import TurnproofError

DESCRIPTION = """\
turnproof checks the turn structure of a card or tabletop game.

Write the turn structure as a model (models/<game>.yaml: phases, actions with
guards and effects, each citing its rule) and the claims about it as a property
file (properties/<game>.yaml). turnproof explores every reachable state, proves
or refutes each claim, prints counterexample traces that cite the rules they
broke, and finds where the rulebook is ambiguous, contradictory or silent.

start with:
  turnproof check models/wtactics.yaml     verdicts, traces and findings
  turnproof check MODEL --help             every option of a subcommand
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="turnproof", description=DESCRIPTION, epilog=EXIT_CODES_HELP,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"turnproof {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except TurnproofError as err:
        print(err.render(), file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
