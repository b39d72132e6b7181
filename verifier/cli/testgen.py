"""`turnproof testgen`: write a Hypothesis conformance test for a game engine from a model."""
from __future__ import annotations

import argparse
import json
import os

from verifier.cli.common import (
    EXIT_BUG_HELP,
    EXIT_OK,
    add_budget_options,
    concrete_model,
    model_params,
    parse_params,
    write_output,
)
from verifier.cli.config import Commands
from verifier.diagnostics import Diagnostic, UsageError, printable

EPILOG = """\
examples:
  turnproof testgen models/aeons_end.yaml -o examples/aeons_end/test_conformance.py \\
      --adapter examples.aeons_end.adapter:make_engine
  turnproof testgen models/wtactics.yaml -D DRAW_PILE=13 -o tests/test_rules.py --adapter mygame.adapter:new_game

The generated module holds a Hypothesis state machine. Each example starts a
game (the engine's reset(initial) gets the model's initial state) and takes
legal moves of the model (each step draws one of the actions legal now, each
alike, then one of its legal choices), and after every step asserts that the
engine's legal_actions() equal the model's and that observe() agrees with the
model's state. A failure is shrunk to a shortest sequence of moves and names it.

The adapter protocol (FUNCTION() returns an object with these methods):
  reset(initial: dict)      start a game in this state (slot name -> value)
  legal_actions()           the legal moves as labels: 'end Main', 'play_gem(ae=1)',
                            'cast(b=1, dmg=2)' (choices in declaration order;
                            booleans true/false, enum values by name)
  apply(label)              take one
  observe() -> dict         slot name -> value ('phase', 'hand[0]', 'marked[red]');
                            slots left out are not compared

The test needs turnproof at run time (the reference semantics evaluates the
model) and the model file, found relative to the test; it fails with 'run
turnproof testgen again' once the model file changes.

exit codes:
  0  written
  2  model or usage error
""" + EXIT_BUG_HELP


def register(sub: Commands) -> None:
    p = sub.add_parser("testgen", help="write a Hypothesis conformance test for your game engine",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Write a Hypothesis RuleBasedStateMachine test module that drives a game "
                                   "engine and the model side by side and checks, after every move, that the "
                                   "engine's legal moves and state are the model's.",
                       epilog=EPILOG)
    p.add_argument("model", help="a model file (YAML, see docs/LANGUAGE.md)")
    p.add_argument("--output", "-o", required=True, metavar="FILE", help="the test module to write (atomically)")
    p.add_argument("--adapter", default="adapter:make_engine", metavar="MODULE:FUNCTION",
                   help="the engine factory the test imports (default adapter:make_engine: adapter.py beside "
                        "the test)")
    p.add_argument("--param", "-D", action="append", default=[], metavar="NAME=VALUE",
                   help="override a parameter (repeatable); the engine must play at these values")
    p.add_argument("--printed", action="store_true",
                   help="the engine plays at the values the rules print (the model's `printed:` map)")
    p.add_argument("--variant", metavar="NAME", help="the reading the engine implements (default: the first)")
    p.add_argument("--max-examples", type=int, default=100, metavar="N", help="games per test run (default 100)")
    p.add_argument("--steps", type=int, default=50, metavar="N", help="most moves per game (default 50)")
    p.add_argument("--format", "-f", choices=("text", "json"), default="text",
                   help="the summary printed on standard output (default text)")
    p.add_argument("--quiet", "-q", action="store_true", help="no text summary (--format json still prints its own)")
    add_budget_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from verifier.testgen.writer import generate

    for name, value in (("--max-examples", args.max_examples), ("--steps", args.steps)):
        if not 1 <= value <= 1_000_000:
            raise UsageError(Diagnostic(f"{name} {value} is out of range", hint="give 1 to 1,000,000"))
    params = model_params(args.model, parse_params(args.param), args.variant, args.printed)
    model = concrete_model(args.model, params, args.variant, args.printed)
    printed = dict(model.printed or ()) if args.printed else {}
    concrete = {**printed, **{k: v for k, v in params.items() if v is not None}}      # what the test loads with
    gen = generate(model, args.model, os.path.dirname(args.output), args.adapter, concrete,
                   args.max_examples, args.steps)
    write_output(gen.source, args.output)
    if args.format == "json":
        doc = {"output": args.output, "model": model.name, "path": args.model, "variant": model.variant,
               "params": concrete, "adapter": args.adapter, "machine": gen.machine, "model_sha256": gen.digest,
               "actions": list(gen.actions)}
        print(json.dumps(doc, indent=2))
    elif not args.quiet:
        print(printable(f"wrote {args.output}: {gen.machine}, the moves of {len(gen.actions)} actions of {model.name}"
                        f"{f' (variant {model.variant})' if model.variant else ''}; "
                        f"run it with python -m pytest {args.output}"))
    return EXIT_OK
